"""SurfaceFlinger FrameTimeline events (TracePacket field 76): the native decoder reads their bytes, names the jank,
present, prediction and severity values with Perfetto trace processor's strings and hands the start rows over as one
native table (native/src/frametimeline.rs); this module makes it the frame TraceBuilder.frame_timeline_many takes.
"""
from __future__ import annotations

from typing import Any

import polars as pl

from droidlag.models import columns
from droidlag.models.trace import FRAME_TIMELINE_SCHEMA

# the start rows' columns as the decoder orders them: the FrameTimeline table's but dur and ended, the cookie second
START_SCHEMA = {"ts": pl.Int64, "cookie": pl.Int64,
                **{k: v for k, v in FRAME_TIMELINE_SCHEMA.items() if k not in ("ts", "dur", "ended")}}


def frame_timeline_frame(starts: Any) -> pl.DataFrame:
    """The decoder's FrameTimeline start rows (a native table: the FrameTimeline table's columns but dur and ended,
    plus the cookie; in table order) as a polars frame, in one call."""
    return columns.table(starts, START_SCHEMA)
