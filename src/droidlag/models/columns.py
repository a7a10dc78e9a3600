"""The native core's tables and column buffers as polars tables and Series, without a per-row Python step: a native
`Table` imported whole through the Arrow C stream interface (`table`), int64 buffers (null as NONE) viewed by numpy,
and dictionary-coded strings (distinct values gathered by int64 codes)."""
from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

# Stands for None in the native integer columns; no real tid, cpu, cookie or timestamp takes it.
NONE = np.iinfo(np.int64).min
NONE32 = np.iinfo(np.int32).min     # the same in the native int32 columns (CPU numbers)


def table(native: Any, schema: dict[str, Any]) -> pl.DataFrame:
    """A polars table from a native `Table` (`droidlag._native.Table`) in one call through the Arrow C stream
    interface: its buffers are taken without a copy (integers, floats, booleans, string views), nulls come from its
    validity bitmaps, a dictionary column becomes Categorical. The native side builds the columns in the schema's
    order and types (models/trace.py; tests compare them); a table of no rows is the schema's cached empty frame."""
    return pl.DataFrame(native) if len(native) else empty(schema)


def int64(buf: Any) -> np.ndarray:
    """An int64 column from a native buffer (`_native.Column` or bytes): a read-only numpy view, no copy."""
    return np.frombuffer(buf, dtype=np.int64)


def int32(buf: Any) -> np.ndarray:
    """An int32 column from a native buffer, viewed without a copy."""
    return np.frombuffer(buf, dtype=np.int32)


def nullable32(buf: Any) -> pl.Series:
    """An Int32 column from a native int32 buffer with the int32 minimum as null."""
    arr = int32(buf)
    missing = arr == NONE32
    return pl.Series(np.ma.masked_array(arr, mask=missing)) if missing.any() else pl.Series(arr)


def float64(buf: Any) -> np.ndarray:
    """A float64 column from a native buffer, viewed without a copy."""
    return np.frombuffer(buf, dtype=np.float64)


def nullable(values: Any, dtype: pl.DataType | type[pl.DataType] = pl.Int64) -> pl.Series:
    """An int column (numpy array, or a native buffer) with NONE as null, cast to dtype."""
    arr = values if isinstance(values, np.ndarray) else int64(values)
    missing = arr == NONE
    # a masked array becomes a column with nulls in one pass (several times faster than scattering them in)
    s = pl.Series(np.ma.masked_array(arr, mask=missing)) if missing.any() else pl.Series(arr)
    return s.cast(dtype)


def strings(coded: tuple[list[str | None], Any]) -> pl.Series:
    """A string column from (distinct values, int64 codes): each distinct string is converted once."""
    distinct, codes = coded
    return take(pl.Series(distinct, dtype=pl.Utf8), int64(codes))


_EMPTY: dict[tuple[tuple[str, Any], ...], pl.DataFrame] = {}


def empty(schema: dict[str, Any]) -> pl.DataFrame:
    """A table of no rows with this schema (a cached frame's `clear()`: a new frame each time, in a microsecond
    where constructing one from the schema costs a tenth of a millisecond, several times per trace)."""
    key = tuple(schema.items())
    frame = _EMPTY.get(key)
    if frame is None:
        frame = _EMPTY[key] = pl.DataFrame(schema=schema)
    return frame.clear()


def nulls(name: str, dtype: pl.DataType | type[pl.DataType], n: int) -> pl.Series:
    """A column of n nulls (repeating one null directly: `extend_constant` plans a query, hundreds of times
    slower on the sizes of a trace's tables)."""
    return pl.Series(name, [None], dtype=dtype).new_from_index(0, n)


def frame(cols: dict[str, Any], schema: dict[str, Any] | None = None) -> pl.DataFrame:
    """A table from columns (numpy arrays or Series) in the schema's order and types (or as they are, without one).
    A column of the schema's type is taken as it is and only the others are cast: `pl.DataFrame(dict, schema=...)`
    checks and converts every column, several times the cost of the table itself on a trace's sizes."""
    out = []
    for name, dtype in (schema or dict.fromkeys(cols)).items():
        c = cols[name]
        s = c if isinstance(c, pl.Series) else pl.Series(name, c)
        if dtype is not None and s.dtype != dtype:
            s = s.cast(dtype)
        out.append(s if s.name == name else s.alias(name))
    return pl.DataFrame(out)


def has_repeats(values: np.ndarray) -> bool:
    """Whether an int column holds a value twice (a sort and a neighbour compare: numpy's hash-based unique costs
    several times more on the short columns of a small trace)."""
    s = np.sort(values)
    return bool((s[1:] == s[:-1]).any())


def take(values: pl.Series, index: np.ndarray) -> pl.Series:
    """values[index] for a numpy index array: a direct take (Series.gather goes through the lazy engine, which costs
    a query plan per call, far more than the take itself on the small tables of a short trace)."""
    return values[index]
