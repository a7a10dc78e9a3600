"""Frame pacing for apps that draw without the Choreographer (games, GL/Vulkan, SurfaceView, Flutter, Unity):
the intervals between the buffers each producer thread hands to SurfaceFlinger.

One swap per buffer: `eglSwapBuffers*` wraps the `queueBuffer` it causes, so a swap-named slice inside another on
the same thread is the same buffer and is counted once. The target rate is the median interval rounded to a
whole number of vsync periods (a 60 Hz panel paces a game at 60, 30 or 20 fps); intervals over 1.5x and 2x the
target are the hitches a player sees, and consecutive ones make a stutter run (the measures of Android's Frame
Pacing library and of game benchmarks, which count frames over 1.5x/2x the target frame time).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from droidlag.frames.results import ProducerPacing
from droidlag.models.trace import Trace

SWAP_RE = r"^(eglSwapBuffers\w*|queueBuffer|vkQueuePresentKHR|QueuePresent|swapBuffers|SwapBuffers)$"
MIN_BUFFERS = 10   # fewer buffers than this say nothing about pacing


@dataclass(frozen=True)
class PacingConfig:
    """over_factors: intervals longer than these multiples of the target count as hitches (1.5x: a repeated frame
    at the target rate is visible; 2x: a whole frame missed). pause_ns: longer gaps are pauses (the app stopped
    drawing), reported apart and not counted as hitches."""

    over_factors: tuple[float, float] = (1.5, 2.0)
    pause_ns: int = 700_000_000


def outer_swaps(slices: pl.DataFrame, pids: list[int]) -> pl.DataFrame:
    """Swap slices of these processes that lie inside no other swap slice of the same thread: one per buffer.
    Columns: pid, tid, ts, end."""
    s = slices.filter(pl.col("pid").is_in(pids) & (pl.col("kind") == "thread")
                      & pl.col("name").str.contains(SWAP_RE)).select("pid", "tid", "ts", (pl.col("ts") + pl.col("dur"))
                                                                     .alias("end")).sort(["tid", "ts"])
    if not s.height:
        return s
    # a swap starting before the running maximum end of the earlier swaps on its thread is nested in one of them
    prev_end = pl.col("end").cum_max().shift(1).over("tid")
    return s.filter(prev_end.is_null() | (pl.col("ts") >= prev_end))


def _target(median: float, vsync_period_ns: int | None) -> int:
    if vsync_period_ns:
        return int(vsync_period_ns * max(1, round(median / vsync_period_ns)))
    return int(median)


def _runs(long_: np.ndarray) -> tuple[int, int]:
    """(number of runs of 2+ consecutive hitches, longest run)."""
    runs, longest, cur = 0, 0, 0
    for x in list(long_) + [False]:
        if x:
            cur += 1
        else:
            if cur >= 2:
                runs += 1
            longest = max(longest, cur)
            cur = 0
    return runs, longest


def pace(times: np.ndarray, vsync_period_ns: int | None,
         config: PacingConfig | None = None) -> dict[str, Any] | None:
    """Pacing of one producer from its buffer hand-over times (ns): target, hitches, stutter runs, percentiles (the
    ProducerPacing fields after `producer`)."""
    config = config or PacingConfig()
    if times.size < MIN_BUFFERS:
        return None
    d = np.diff(np.sort(times))
    pauses = d > config.pause_ns
    live = d[~pauses]
    if live.size < MIN_BUFFERS - 1:
        return None
    target = _target(float(np.median(live)), vsync_period_ns)
    over = {f: live > f * target for f in config.over_factors}
    runs, longest = _runs(over[config.over_factors[0]])
    return {"buffers": int(times.size), "intervals": int(live.size), "target_ns": target,
            "target_source": "median interval rounded to whole vsync periods" if vsync_period_ns else "median interval",
            "over": {f: int(o.sum()) for f, o in over.items()}, "over_pct": {f: 100.0 * o.mean() for f, o in over.items()},
            "stutter_runs": runs, "longest_stutter_run": longest,
            "interval_ns": {f"p{q}": float(np.percentile(live, q)) for q in (50, 90, 99)} | {"max": float(live.max())},
            "pauses": int(pauses.sum())}


def frame_pacing(trace: Trace, apps: list[dict[str, Any]], vsync_period_ns: int | None,
                 config: PacingConfig | None = None,
                 unpaced: dict[int, tuple[int, int]] | None = None) -> list[ProducerPacing]:
    """Pacing per producer thread of each non-Choreographer app (`apps`: the segmentation's non_hwui entries). Each
    app none of whose threads queued enough buffers to be paced goes in `unpaced`, when given: pid -> (buffers
    queued, the most from one thread)."""
    if not apps or not trace.slices.height:
        if unpaced is not None:
            unpaced.update({a["pid"]: (0, 0) for a in apps})
        return []
    pids = [a["pid"] for a in apps]
    swaps = outer_swaps(trace.slices, pids)
    out = []
    for a in apps:
        mine = swaps.filter(pl.col("pid") == a["pid"])
        paced, counts = False, []
        for (tid,), part in sorted(mine.partition_by("tid", as_dict=True).items()) if mine.height else ():
            if a.get("beside_hwui") and trace.thread_name(tid) == "RenderThread":
                continue     # the app's HWUI frames, counted as frames
            counts.append(part.height)
            got = pace(part["end"].to_numpy(), vsync_period_ns, config)
            if got is None:
                continue
            paced = True
            out.append(ProducerPacing(a["pid"], a.get("process"), a.get("renderer"), tid, trace.thread_name(tid),
                                      **got))
        if not paced and unpaced is not None:
            unpaced[a["pid"]] = (sum(counts), max(counts, default=0))
    return sorted(out, key=lambda p: (-p.buffers, p.pid, p.producer_tid))
