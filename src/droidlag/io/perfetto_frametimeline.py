"""SurfaceFlinger FrameTimeline events (TracePacket field 76): the native decoder reads their bytes and names the
jank, present, prediction and severity values with Perfetto trace processor's strings (native/src/frametimeline.rs);
this module makes its columns the start rows that TraceBuilder.frame_timeline_many takes.
"""
from __future__ import annotations

from typing import Any

import polars as pl

from droidlag.models import columns

_INTS = ("ts", "cookie")
_NULLABLE_INTS = ("pid", "token", "display_frame_token")
_FLAGS = ("on_time_finish", "gpu_composition")
_STRINGS = ("kind", "scope", "layer_name", "jank_type", "present_type", "prediction_type", "jank_severity")
_ORDER = ("ts", "cookie", "kind", "scope", "pid", "layer_name", "token", "display_frame_token", "jank_type",
          "present_type", "on_time_finish", "gpu_composition", "prediction_type", "jank_severity")


def frame_timeline_frame(cols: dict[str, Any]) -> pl.DataFrame:
    """The decoder's FrameTimeline start columns (int64 buffers with NONE for null, flags 0/1, strings as (distinct
    values, codes)) as a frame of TraceBuilder.frame_timeline_many's columns."""
    out: dict[str, Any] = {k: columns.int64(cols[k]) for k in _INTS}
    out.update({k: columns.nullable(cols[k]) for k in _NULLABLE_INTS})
    out.update({k: columns.nullable(cols[k], pl.Boolean) for k in _FLAGS})
    out.update({k: columns.strings(cols[k]) for k in _STRINGS})
    return columns.frame({k: out[k] for k in _ORDER})
