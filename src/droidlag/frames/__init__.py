"""Slow rendering (SR) and frozen frames (FF): segmentation, naive and buffer-aware verdicts, root causes.

Notebook API: `analyze_frames(trace)` / `analyze_gfxinfo(dump)` return a FramesReport whose `frames` and `causes`
are polars tables; `frames_table(path)` reads any supported file and returns the frame table directly.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from droidlag.frames.analyze import FramesReport, analyze_frames, analyze_gfxinfo
from droidlag.frames.config import FramesConfig


def frames_from_file(path: str | Path, config: FramesConfig | None = None) -> FramesReport:
    """Read a trace or `dumpsys gfxinfo` text (chosen by content) and analyze its frames. InputError for files
    that are neither."""
    from droidlag.io import read_trace
    from droidlag.io.detect import GFXINFO, sniff_path

    if sniff_path(path) == GFXINFO:   # traces are read once, by read_trace (streamed where it can)
        from droidlag.io.gfxinfo import read_gfxinfo_file
        # streamed (never the file's text whole), and the dump's tables handed over to the analysis
        return analyze_gfxinfo(read_gfxinfo_file(path), config, release_tables=True)
    return analyze_frames(read_trace(path), config)


def frames_table(path: str | Path, config: FramesConfig | None = None) -> pl.DataFrame:
    """One row per frame (ns times, stages, verdicts) for a trace or gfxinfo file."""
    return frames_from_file(path, config).frames


def causes_table(path: str | Path, config: FramesConfig | None = None) -> pl.DataFrame:
    """One row per (SR/FF frame, cause), ranked, with shares against normal frames."""
    return frames_from_file(path, config).causes


__all__ = ["FramesConfig", "FramesReport", "analyze_frames", "analyze_gfxinfo", "frames_from_file",
           "frames_table", "causes_table"]
