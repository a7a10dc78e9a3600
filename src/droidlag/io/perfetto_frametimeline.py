"""SurfaceFlinger FrameTimeline events (TracePacket field 76): the native decoder reads their bytes; this module
names jank, present, prediction and severity values with Perfetto trace processor's strings.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

from droidlag.models import columns
from droidlag.models.columns import NONE

# FrameTimelineEvent oneof members (field number -> (kind, scope)); 5 is FrameEnd.
_EXPECTED_DISPLAY, _ACTUAL_DISPLAY, _EXPECTED_SURFACE, _ACTUAL_SURFACE = 1, 2, 3, 4
_KIND_SCOPE = {
    _EXPECTED_DISPLAY: ("expected", "display"),
    _ACTUAL_DISPLAY: ("actual", "display"),
    _EXPECTED_SURFACE: ("expected", "surface"),
    _ACTUAL_SURFACE: ("actual", "surface"),
}

# JankType bits in the order trace processor lists them when several are set.
JANK_TYPE_NAMES: tuple[tuple[int, str], ...] = (
    (2, "SurfaceFlinger Scheduling"),
    (4, "Prediction Error"),
    (8, "Display HAL"),
    (16, "SurfaceFlinger CPU Deadline Missed"),
    (32, "SurfaceFlinger GPU Deadline Missed"),
    (64, "App Deadline Missed"),
    (4096, "App Resynced Jitter"),
    (128, "Buffer Stuffing"),
    (256, "Unknown Jank"),
    (512, "SurfaceFlinger Stuffing"),
    (1024, "Dropped Frame"),
    (2048, "Non Animating"),
    (8192, "Display not ON"),
    (16384, "ModeChange in progress"),
    (32768, "PowerModeChange in progress"),
)
PRESENT_TYPE_NAMES = ("Unspecified Present", "On-time Present", "Late Present", "Early Present", "Dropped Frame",
                      "Unknown Present")
PREDICTION_TYPE_NAMES = ("Unspecified Prediction", "Valid Prediction", "Expired Prediction", "Unknown Prediction")
JANK_SEVERITY_NAMES = ("Unknown", "None", "Partial", "Full")

_JANK_NONE = 1
_jank_cache: dict[int, str] = {}


def jank_type_name(bits: int) -> str:
    """The trace-processor name of a JankType bitmask: "None", "Unspecified", or reasons joined by ", "."""
    name = _jank_cache.get(bits)
    if name is None:
        if bits == 0:
            name = "Unspecified"
        elif bits == _JANK_NONE:
            name = "None"
        else:
            parts = [label for bit, label in JANK_TYPE_NAMES if bits & bit]
            known = sum(bit for bit, _ in JANK_TYPE_NAMES) | _JANK_NONE
            if bits & ~known:
                parts.append(f"Unknown Jank Bits 0x{bits & ~known:x}")
            name = ", ".join(parts)
        _jank_cache[bits] = name
    return name


def _enum_name(names: tuple[str, ...], value: int | None) -> str | None:
    if value is None:
        return None
    return names[value] if 0 <= value < len(names) else names[0]


def _distinct_codes(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, code of each row): the small non-negative enums and bitmasks of FrameTimeline through a
    direct lookup table (a sort per column cost more than the rest of a small trace's table); negative values (NONE,
    the absent field, and the severity stand-in) are few distinct ones, coded after the others."""
    neg = raw < 0
    present = raw[~neg]
    if len(present) and present.max() >= 1 << 16:
        distinct, inverse = np.unique(raw, return_inverse=True)
        return distinct, inverse.reshape(-1)
    seen = np.bincount(present, minlength=1)
    distinct = np.flatnonzero(seen)
    lut = np.zeros(len(seen), dtype=np.int64)
    lut[distinct] = np.arange(len(distinct))
    codes = np.empty(len(raw), dtype=np.int64)
    codes[~neg] = lut[present]
    if neg.any():
        below = raw[neg]
        if (below == below[0]).all():    # the usual case: only NONE (expected frames have no jank fields)
            codes[neg] = len(distinct)
            return np.append(distinct, below[0]), codes
        others, inverse = np.unique(below, return_inverse=True)
        codes[neg] = inverse.reshape(-1) + len(distinct)
        distinct = np.concatenate([distinct, others])
    return distinct, codes


def _named(raw: np.ndarray, actual: np.ndarray, name: Callable[[int | None], str | None]) -> pl.Series:
    """An enum column named per distinct raw value (NONE: the field was absent), null on expected frames: each
    distinct value is named once and the names gathered by code (expected rows take the null at the end)."""
    distinct, codes = _distinct_codes(raw)
    codes[~actual] = len(distinct)
    names = [name(None if v == NONE else int(v)) for v in distinct.tolist()]
    return columns.take(pl.Series([*names, None], dtype=pl.Utf8), codes)


# Older traces lack the severity field: trace processor calls JANK_NONE frames "None", others "Unknown".
_NO_SEVERITY_JANK_NONE = NONE + 1


def _severity_name(v: int | None) -> str | None:
    if v is None:
        return "Unknown"
    return "None" if v == _NO_SEVERITY_JANK_NONE else _enum_name(JANK_SEVERITY_NAMES, v)


_INT_FIELDS = ("ts", "cookie", "member", "pid", "token", "display_frame_token", "jank_type", "present_type",
               "on_time_finish", "gpu_composition", "prediction_type", "jank_severity")


def frame_timeline_frame(cols: dict[str, Any]) -> pl.DataFrame:
    """The decoder's FrameTimeline start columns (member 1-4, raw enum values, int64 buffers with NONE for null) as
    a frame of TraceBuilder.frame_timeline_many's columns, with trace processor's names."""
    raw = {k: columns.int64(cols[k]) for k in _INT_FIELDS}
    ts, cookie = raw["ts"], raw["cookie"]
    if len(ts) > 1 and (np.diff(ts) < 0).any() and not columns.has_repeats(cookie):
        # in time order already (the table's order), permuting int codes rather than the built table; only with
        # distinct cookies, as a repeated cookie's later start replaces its earlier one
        order = np.argsort(ts, kind="stable")
        raw = {k: v[order] for k, v in raw.items()}
        layer_distinct, layer_codes = cols["layer_name"]
        layer = (layer_distinct, columns.int64(layer_codes)[order])
    else:
        layer = (cols["layer_name"][0], columns.int64(cols["layer_name"][1]))
    member = raw["member"]
    actual = (member == _ACTUAL_DISPLAY) | (member == _ACTUAL_SURFACE)
    kind = columns.take(pl.Series(["", "expected", "actual", "expected", "actual"], dtype=pl.Utf8), member)
    scope = columns.take(pl.Series(["", "display", "display", "surface", "surface"], dtype=pl.Utf8), member)
    bits = raw["jank_type"]
    severity = raw["jank_severity"]
    severity = np.where((severity == NONE) & (bits == _JANK_NONE), _NO_SEVERITY_JANK_NONE, severity)
    return columns.frame({
        "ts": raw["ts"], "cookie": raw["cookie"],
        "kind": kind, "scope": scope, "pid": columns.nullable(raw["pid"]),
        "layer_name": columns.take(pl.Series(layer[0], dtype=pl.Utf8), layer[1]),
        "token": columns.nullable(raw["token"]),
        "display_frame_token": columns.nullable(raw["display_frame_token"]),
        "jank_type": _named(bits, actual, lambda v: jank_type_name(v) if v is not None else None),
        "present_type": _named(raw["present_type"], actual,
                               lambda v: _enum_name(PRESENT_TYPE_NAMES, v)),
        "on_time_finish": columns.nullable(raw["on_time_finish"], pl.Boolean),
        "gpu_composition": columns.nullable(raw["gpu_composition"], pl.Boolean),
        "prediction_type": _named(raw["prediction_type"], actual,
                                  lambda v: _enum_name(PREDICTION_TYPE_NAMES, v)),
        "jank_severity": _named(severity, actual, _severity_name),
    })
