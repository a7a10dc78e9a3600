"""The native core's tables and column buffers as polars tables and numpy arrays, without a per-row Python step: a
native `Table` imported whole through the Arrow C stream interface (`table`), int64/int32 buffers viewed by numpy."""
from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

# Stands for None in the native integer columns; no real tid, cpu, cookie or timestamp takes it.
NONE = np.iinfo(np.int64).min


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


_EMPTY: dict[tuple[tuple[str, Any], ...], pl.DataFrame] = {}


def empty(schema: dict[str, Any]) -> pl.DataFrame:
    """A table of no rows with this schema (a cached frame's `clear()`: a new frame each time, in a microsecond
    where constructing one from the schema costs a tenth of a millisecond, several times per trace)."""
    key = tuple(schema.items())
    frame = _EMPTY.get(key)
    if frame is None:
        frame = _EMPTY[key] = pl.DataFrame(schema=schema)
    return frame.clear()


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
