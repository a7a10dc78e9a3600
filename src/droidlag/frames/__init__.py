"""Slow rendering (SR) and frozen frames (FF): segmentation, naive and buffer-aware verdicts, root causes.

Notebook API: `analyze_frames(trace)` / `analyze_gfxinfo(dump)` (or `frames_report(model)` for either) return a
FramesReport whose `frames` and `causes` are polars tables. Reading files is the findings layer's:
`droidlag.findings.frames_from_file(path)`.
"""
from __future__ import annotations

from droidlag.frames.analyze import FramesReport, analyze_frames, analyze_gfxinfo
from droidlag.frames.config import FramesConfig
from droidlag.models.gfxinfo import GfxinfoDump
from droidlag.models.trace import Trace


def frames_report(source: Trace | GfxinfoDump, config: FramesConfig | None = None) -> FramesReport:
    """The frames of a trace or of a `dumpsys gfxinfo` dump."""
    if isinstance(source, GfxinfoDump):
        return analyze_gfxinfo(source, config)
    return analyze_frames(source, config)


__all__ = ["FramesConfig", "FramesReport", "analyze_frames", "analyze_gfxinfo", "frames_report"]
