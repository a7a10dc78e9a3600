"""The `dumpsys gfxinfo` model: processes, their windows, each window's summary, its framestats rows and its legacy
`Draw Prepare Process Execute` rows (times in ns)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from droidlag.errors import ReadWarning

# A summary line's value as the reader parsed it, by key: an int or float (`Total frames rendered: 1234`), a count with
# its percent ({"count": 12, "percent": 3.5} for `Janky frames: 12 (3.50%)`), the frame-time histogram ({ms: frames}),
# or the raw text. Consumers test the shape they expect (isinstance), so the values stay Any here.
GfxSummary = dict[str, Any]


def rendered_frames(summary: GfxSummary) -> tuple[int | None, bool]:
    """(frames rendered, whether they were counted from the histogram): Android's `Total frames rendered`, or, when
    the reader could not read it (warned and left out), the sum of the frame-time histogram, which counts every frame
    rendered; (None, False) when neither is there."""
    total = summary.get("total_frames_rendered")
    hist = summary.get("histogram")
    if total is None and isinstance(hist, dict) and hist:
        return sum(int(n) for n in hist.values()), True
    return total, False


# The legacy per-frame table `dumpsys gfxinfo` prints when GPU profiling is on (`Profile GPU rendering: In adb shell
# dumpsys gfxinfo`, debug.hwui.profile=true): one row per frame, each stage's time in ms with 2 decimals. Android 5+
# print these four columns (libhwui DrawProfiler / FrameInfoVisualizer::dumpData); Android 4.x printed three (no
# Prepare). The reader keeps them as integer ns under the header's names.
LEGACY_STAGES = ("Draw", "Prepare", "Process", "Execute")


@dataclass
class GfxWindow:
    """One window (ViewRootImpl) of a process: its summary, its framestats rows (one per frame) and its legacy
    `Draw Prepare Process Execute` rows (one per frame, ns, no timestamps)."""

    name: str
    summary: GfxSummary = field(default_factory=dict)
    framestats: pl.DataFrame = field(default_factory=pl.DataFrame)
    legacy: pl.DataFrame = field(default_factory=pl.DataFrame)


@dataclass
class GfxProcess:
    pid: int
    name: str
    summary: GfxSummary = field(default_factory=dict)
    windows: list[GfxWindow] = field(default_factory=list)


@dataclass
class GfxinfoDump:
    """A whole `dumpsys gfxinfo` output."""

    path: str
    processes: list[GfxProcess]
    warnings: list[ReadWarning] = field(default_factory=list)
    uptime_ms: int | None = None

    def framestats(self) -> pl.DataFrame:
        """Every framestats row with pid, process and window, in file order (columns: the union of headers)."""
        parts = []
        for p in self.processes:
            for w in p.windows:
                if w.framestats.height:
                    parts.append(w.framestats.with_columns(pl.lit(p.pid, pl.Int64).alias("pid"),
                                                           pl.lit(p.name).alias("process"),
                                                           pl.lit(w.name).alias("window")))
        if not parts:
            return pl.DataFrame(schema={"pid": pl.Int64, "process": pl.Utf8, "window": pl.Utf8})
        return pl.concat(parts, how="diagonal")

    def legacy_rows(self) -> pl.DataFrame:
        """Every legacy `Draw Prepare Process Execute` row with pid, process, window and whether its process printed
        a JankTracker summary (`Total frames rendered`: Android 6+), in file order; stage columns in ns."""
        parts = []
        for p in self.processes:
            android6 = "total_frames_rendered" in p.summary or "stats_since" in p.summary
            for w in p.windows:
                if w.legacy.height:
                    parts.append(w.legacy.with_columns(pl.lit(p.pid, pl.Int64).alias("pid"),
                                                       pl.lit(p.name).alias("process"), pl.lit(w.name).alias("window"),
                                                       pl.lit(android6).alias("android6")))
        if not parts:
            return pl.DataFrame(schema={"pid": pl.Int64, "process": pl.Utf8, "window": pl.Utf8,
                                        "android6": pl.Boolean})
        return pl.concat(parts, how="diagonal")
