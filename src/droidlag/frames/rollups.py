"""The paper's roll-ups over a trace's slow and frozen frames (Lin et al., TMC 2023, III), beside its figures:
which class of cause led (UI work / I/O and binder / scheduling: 61/28/11% in the paper), which rendering stage
dominated (measure/layout in the paper), and how busy the CPUs were during SR and FF frames against normal ones
(~60% during SR, ~100% during FF in the paper).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from droidlag.frames.critical_path import CpuBusy
from droidlag.frames.verdicts import FF, OK, SR
from droidlag.models.causes import CAUSE_CLASSES, STAGE_PREFIX
from droidlag.models.trace import Trace

PAPER_CAUSE_CLASSES_PCT = {"ui_work": 61, "io_binder": 28, "scheduling": 11}
# disjoint parts of a frame, for "which stage dominated": stage columns summed per group
STAGE_GROUPS = {
    "input": ("input",), "animation": ("animation",),
    "measure/layout": ("measure", "layout", "recompose"), "draw (record)": ("draw",),
    "RenderThread": ("render_thread",), "composition": ("composition",),
}
MAX_NORMAL = 300


def cause_classes(causes: pl.DataFrame, bad_ids: list[int]) -> dict[str, Any]:
    """Each SR/FF frame's leading cause (rank 1) by class, as counts and % of the frames that have a cause."""
    lead = causes.filter((pl.col("rank") == 1) & pl.col("frame_id").is_in(bad_ids)) if causes.height else causes
    counts: dict[str, int] = {}
    for name in (lead["name"].to_list() if lead.height else []):
        cls = CAUSE_CLASSES.get(name, "stage" if name.startswith(STAGE_PREFIX) else "other")
        counts[cls] = counts.get(cls, 0) + 1
    n = sum(counts.values())
    return {"frames_with_a_cause": n, "counts": counts,
            "pct": {k: round(100 * v / n, 1) for k, v in counts.items()} if n else {},
            "paper_pct": PAPER_CAUSE_CLASSES_PCT}


def dominant_stages(bad: pl.DataFrame) -> dict[str, Any]:
    """For SR/FF frames: the stage group with the most time in each frame, counted."""
    counts: dict[str, int] = {}
    for r in bad.iter_rows(named=True):
        best, best_v = None, 0
        for g, cols in STAGE_GROUPS.items():
            v = sum(r.get(c) or 0 for c in cols)
            if v > best_v:
                best, best_v = g, v
        if best is not None:
            counts[best] = counts.get(best, 0) + 1
    n = sum(counts.values())
    top = max(counts, key=lambda k: counts[k]) if counts else None
    return {"frames_with_stages": n, "counts": counts, "dominant": top, "paper": "measure/layout"}


def cpu_utilisation(trace: Trace, frames: pl.DataFrame) -> dict[str, Any] | None:
    """Mean busy fraction of all CPUs over SR frames, FF frames and (a sample of) normal frames, in %."""
    if not trace.has_sched or not frames.height:
        return None
    busy = CpuBusy(trace.thread_states)
    cpus = sorted(set(trace.thread_states["cpu"].drop_nulls().unique().to_list()))
    if not cpus:
        return None

    def mean_busy(rows: pl.DataFrame) -> float | None:
        vals = [np.mean([busy.busy_fraction(c, a, b) for c in cpus])
                for a, b in rows.select("start_ns", "end_ns").iter_rows() if b > a]
        return round(100 * float(np.mean(vals)), 1) if vals else None

    normal = frames.filter((pl.col("verdict") == OK) & (pl.col("naive_verdict") == OK))
    step = max(1, normal.height // MAX_NORMAL)
    return {"sr_pct": mean_busy(frames.filter(pl.col("verdict") == SR)),
            "ff_pct": mean_busy(frames.filter(pl.col("verdict") == FF)),
            "normal_pct": mean_busy(normal.gather_every(step)) if normal.height else None,
            "cpus": len(cpus), "paper": "about 60% during SR, about 100% during FF"}


def paper_rollups(trace: Trace, frames: pl.DataFrame, causes: pl.DataFrame) -> dict[str, Any]:
    """The three roll-ups over the trace's complete frames (SR/FF by the buffer-aware verdict, else by the
    threshold where the buffer-aware one was not possible)."""
    if "complete" in frames.columns:
        frames = frames.filter(pl.col("complete").fill_null(True))
    bad = frames.filter(pl.col("verdict").is_in([SR, FF]) | ((pl.col("verdict") == "not possible")
                                                             & pl.col("naive_verdict").is_in([SR, FF])))
    ids = bad["frame_id"].to_list()
    return {"sr_ff_frames": bad.height, "cause_classes": cause_classes(causes, ids),
            "dominant_stage": dominant_stages(bad), "cpu_utilisation": cpu_utilisation(trace, frames)}
