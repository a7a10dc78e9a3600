"""SurfaceFlinger FrameTimeline events (TracePacket field 76): the native decoder reads their bytes, names the jank,
present, prediction and severity values with Perfetto trace processor's strings and hands the start rows over as one
native table (native/src/frametimeline.rs); this module makes it the frame TraceBuilder.frame_timeline_many takes.
"""
from __future__ import annotations

from typing import Any

import polars as pl

from droidlag.models import columns


def frame_timeline_frame(starts: Any) -> pl.DataFrame:
    """The decoder's FrameTimeline start rows (a native table: the FrameTimeline table's columns but dur and ended,
    plus the cookie; in table order) as a polars frame, in one call."""
    return columns.table(starts)
