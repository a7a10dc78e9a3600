"""The panel's refresh rate over the trace: 60, 90, 120 Hz panels, and the changes a phone makes while it runs
(a 120 Hz panel drops to 60 Hz when idle, or for a video). The period in effect when a frame starts is that frame's
budget for the second naive verdict line and for the charts' budget lines.

Ticks come from FrameTimeline's expected display frames or SurfaceFlinger's VSYNC counters (one toggle per vsync).
Some vsyncs have no tick (SurfaceFlinger skips idle ones), so each window's period is the median of its shortest
gaps, and a period within 3% of a common rate is snapped to it.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from droidlag.models.trace import Trace

COMMON_HZ = (24, 30, 48, 50, 60, 72, 90, 96, 120, 144, 165, 240)
WINDOW_NS = 500_000_000
SNAP = 0.03
VSYNC_COUNTERS = ("VSYNC-app", "VSYNC-sf", "HW_VSYNC_0", "VSYNC-appSf", "VSYNC")


def robust_period(ts: np.ndarray) -> int | None:
    """The vsync period from tick times that fall on vsyncs (some skipped): the median of the shortest gaps."""
    if ts.size < 4:
        return None
    d = np.diff(np.unique(ts))
    d = d[d > 2_000_000]          # no panel runs faster than 500 Hz
    if d.size < 3:
        return None
    low = np.percentile(d, 10)
    near = d[d <= low * 1.3]
    return int(np.median(near)) if near.size else None


def snap(period_ns: int) -> int:
    """The period of the nearest common refresh rate when within 3%, else the period as measured."""
    hz = 1e9 / period_ns
    best = min(COMMON_HZ, key=lambda r: abs(r - hz))
    return round(1e9 / best) if abs(best - hz) <= SNAP * best else period_ns


def vsync_ticks(trace: Trace) -> tuple[np.ndarray | None, str | None]:
    """Times (ns) that fall on vsyncs, and where they came from."""
    ft = trace.frame_timeline
    if ft.height:
        exp = ft.filter((pl.col("kind") == "expected") & (pl.col("scope") == "display"))
        if exp.height >= 4:
            return exp["ts"].to_numpy(), "frametimeline"
    c = trace.counters
    if c.height:
        for name in VSYNC_COUNTERS:
            v = c.filter(pl.col("name") == name)
            if v.height >= 4:
                return v["ts"].to_numpy(), f"counter {name}"
    return None, None


def refresh_segments(ticks: np.ndarray) -> list[dict[str, Any]]:
    """Stretches of one refresh rate: [{start_ns, end_ns, period_ns, hz}], in time order. Windows of 500 ms
    with too few ticks take the rate before them."""
    ticks = np.sort(ticks)
    if ticks.size < 4:
        return []
    segs: list[dict[str, Any]] = []
    start = int(ticks[0])
    while start <= ticks[-1]:
        end = start + WINDOW_NS
        w = ticks[np.searchsorted(ticks, start):np.searchsorted(ticks, end)]
        p = robust_period(w)
        if p is None and not segs:
            p = robust_period(ticks)
        if p is not None:
            p = snap(p)
            if segs and abs(p - segs[-1]["period_ns"]) <= SNAP * segs[-1]["period_ns"]:   # jitter, same rate
                segs[-1]["end_ns"] = min(end, int(ticks[-1]))
            else:
                segs.append({"start_ns": start, "end_ns": min(end, int(ticks[-1])), "period_ns": p,
                             "hz": round(1e9 / p, 1)})
        elif segs:
            segs[-1]["end_ns"] = min(end, int(ticks[-1]))
        # skip windows with no tick at all in one step (a long idle stretch)
        nxt = np.searchsorted(ticks, end)
        start = end if nxt >= ticks.size else max(end, end + ((int(ticks[nxt]) - end) // WINDOW_NS) * WINDOW_NS)
    return segs


def period_at(segs: list[dict[str, Any]], times: np.ndarray, default: int | None) -> np.ndarray:
    """The period in effect at each time (the first stretch before the trace's first tick; the last after it)."""
    out = np.full(times.shape, default if default else 0, dtype=np.int64)
    if not segs:
        return out
    starts = np.array([s["start_ns"] for s in segs])
    periods = np.array([s["period_ns"] for s in segs], dtype=np.int64)
    idx = np.clip(np.searchsorted(starts, times, side="right") - 1, 0, len(segs) - 1)
    return periods[idx]


def main_period(segs: list[dict[str, Any]]) -> int | None:
    """The period of the longest stretch (the trace's usual rate)."""
    if not segs:
        return None
    period: int = max(segs, key=lambda s: (s["end_ns"] - s["start_ns"], -s["start_ns"]))["period_ns"]
    return period


def estimate_vsync_period(trace: Trace) -> tuple[int | None, str | None]:
    """The panel's usual vsync period (ns) over the whole trace and where it came from: FrameTimeline display
    frames, else the VSYNC counters SurfaceFlinger emits on every vsync; (None, None) if neither exists."""
    ticks, source = vsync_ticks(trace)
    p = robust_period(ticks) if ticks is not None else None
    return (p, source) if p else (None, None)
