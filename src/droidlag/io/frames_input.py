"""A frames input by content: a trace (Perfetto, systrace) or `dumpsys gfxinfo` text, read into its model. The
frames analysis takes the model (`droidlag.frames.frames_report`)."""
from __future__ import annotations

from pathlib import Path

from droidlag.models.gfxinfo import GfxinfoDump
from droidlag.models.trace import Trace


def read_frames_input(path: str | Path) -> Trace | GfxinfoDump:
    """The trace or gfxinfo dump in `path`, chosen by content. InputError for files that are neither."""
    from droidlag.io import read_trace
    from droidlag.io.detect import GFXINFO, load, sniff_path

    if sniff_path(path) == GFXINFO:   # traces are read once, by read_trace (streamed where it can)
        kind, data, warnings = load(path)
        from droidlag.io.gfxinfo import read_gfxinfo
        dump = read_gfxinfo(data, str(path))
        del data   # the analysis needs the dump only (memory at scale)
        dump.warnings[:0] = warnings
        return dump
    return read_trace(path)
