"""SurfaceFlinger on the critical path: for frames whose FrameTimeline (or composition timing) says the compositor
was late, SurfaceFlinger's main thread over the frame's composition window, with its state shares, CPUs and slices,
as the `surfaceflinger` cause compared with normal frames.

Composition window: the FrameTimeline display frame that presented the app's surface frame (SurfaceFlinger's
wakeup to present), else the SurfaceFlinger composition slice matched to the frame (segment.py). Compositor-late
signal: an SF/display jank type on the surface or the display frame (ground truth), else, without FrameTimeline,
the matched composition took longer than a vsync period (a timing hint only: the cause must then also stand out
against normal frames). The BufferQueue counter tells whether a buffer was ready, not whether SurfaceFlinger was
slow to take it, so it gives no compositor signal of its own.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from droidlag.frames.critical_path import (
    RUNNABLE,
    RUNNING,
    SLEEPING,
    UNINTERRUPTIBLE,
    CriticalPathFinder,
    SliceTree,
    state_class,
)
from droidlag.frames.results import CompositorEvidence, SfBaseline, SfMeasure
from droidlag.frames.segment import surfaceflinger_pids
from droidlag.models.trace import Trace

SF_JANK_TYPES = ("SurfaceFlinger CPU Deadline Missed", "SurfaceFlinger GPU Deadline Missed",
                 "SurfaceFlinger Scheduling", "SurfaceFlinger Stuffing", "Prediction Error", "Display HAL")
LATE_PRESENTS = ("Late Present", "Dropped Frame")
SF_STATES = ("running", "runnable", "sleeping", "io", "binder", "unknown")
_STATE_KEY = {RUNNING: "running", RUNNABLE: "runnable", SLEEPING: "sleeping", UNINTERRUPTIBLE: "io"}


def sf_jank_types(*jank: str | None) -> list[str]:
    """The SurfaceFlinger/display jank types named in FrameTimeline jank_type strings, in SF_JANK_TYPES order."""
    text = ", ".join(j for j in jank if j)
    return [t for t in SF_JANK_TYPES if t in text]


def sf_main_thread(trace: Trace) -> int | None:
    """SurfaceFlinger's main thread (tid = pid); with several SF processes, the one with the most sched data.
    FrameTimeline display frames carry SurfaceFlinger's pid even when the trace names no processes."""
    best, best_n = None, -1
    states = trace.thread_states
    ft = trace.frame_timeline
    ft_pids = set(ft.filter(pl.col("scope") == "display")["pid"].drop_nulls().to_list()) if ft.height else set()
    for pid in sorted(surfaceflinger_pids(trace) | ft_pids):
        if pid not in trace.threads and pid not in ft_pids and not (states.height and (states["tid"] == pid).any()):
            continue
        n = int((states["tid"] == pid).sum()) if states.height else 0
        if n > best_n:
            best, best_n = pid, n
    return best


class Compositor:
    """Composition windows and SurfaceFlinger measures for the frames of one trace."""

    def __init__(self, trace: Trace, frames: pl.DataFrame, finder: CriticalPathFinder, period_ns: int | None,
                 sr_ns: int):
        self.trace = trace
        self.finder = finder
        self.period = period_ns or sr_ns
        self.tid = sf_main_thread(trace)
        self.windows: dict[int, dict[str, Any]] = {}
        self._tree: SliceTree | None = None
        self._slices: tuple[Any, ...] | None = None
        self._own: dict[tuple[int, int], tuple[dict[str, int], dict[int, int]]] = {}   # window -> SF states, CPUs
        self._threads: dict[tuple[int, int], dict[int, int]] = {}    # window -> critical-path threads (evidence)
        if self.tid is None or not frames.height:
            return
        self._frametimeline_windows(frames)
        self._composition_windows(frames)

    def _frametimeline_windows(self, frames: pl.DataFrame) -> None:
        ft = self.trace.frame_timeline
        if not ft.height or "vsync_id" not in frames.columns:
            return
        act = ft.filter(pl.col("kind") == "actual")
        surf = act.filter(pl.col("scope") == "surface").with_columns(
            (pl.col("jank_type").fill_null("None") != "None").alias("_jank")).sort(
            ["_jank", "ts"], descending=[True, False]).unique(["pid", "token"], keep="first").select(
            "pid", pl.col("token").alias("vsync_id"), "display_frame_token", pl.col("jank_type").alias("s_jank"))
        disp = act.filter(pl.col("scope") == "display").sort("ts").unique("token", keep="first").select(
            pl.col("token").alias("display_frame_token"), pl.col("ts").alias("d_ts"),
            (pl.col("ts") + pl.col("dur")).alias("d_end"), pl.col("jank_type").alias("d_jank"),
            pl.col("present_type").alias("d_present"), pl.col("on_time_finish").alias("d_on_time"))
        j = frames.select("frame_id", "pid", "vsync_id").join(surf, on=["pid", "vsync_id"], how="inner").join(
            disp, on="display_frame_token", how="left")
        for fid, s_jank, tok, d_ts, d_end, d_jank, d_present, d_on_time in j.select(
                "frame_id", "s_jank", "display_frame_token", "d_ts", "d_end", "d_jank", "d_present",
                "d_on_time").iter_rows():
            if d_ts is None or d_end is None or d_end <= d_ts:
                continue
            # An SF/display jank type blames the compositor only when the display frame was actually late: a
            # "Prediction Error" frame that presented early (on_time_finish) was not held up by SurfaceFlinger.
            late_display = d_present in LATE_PRESENTS or d_on_time is False or (d_present is None and d_on_time is None)
            types = sf_jank_types(s_jank, d_jank) if late_display else []
            self.windows[fid] = {"a": d_ts, "b": d_end, "source": "frametimeline display frame",
                                 "display_frame_token": tok, "display_jank_type": d_jank,
                                 "display_present_type": d_present, "late": bool(types), "ft_named": bool(types),
                                 "signal": ("FrameTimeline: " + ", ".join(types)) if types else None,
                                 "app_on_time": "App Deadline Missed" not in (s_jank or "")}

    def _composition_windows(self, frames: pl.DataFrame) -> None:
        if "compose_end_ns" not in frames.columns:
            return
        rows = frames.filter(pl.col("compose_end_ns").is_not_null() & pl.col("composition").is_not_null()).select(
            "frame_id", "end_ns", "composition", "compose_end_ns")
        p = self.period
        for fid, _end, comp, cend in rows.iter_rows():
            if fid in self.windows or comp <= 0:
                continue
            # A buffer waiting behind another (stuffing) is late without SurfaceFlinger being slow: only a
            # composition longer than a vsync period says SurfaceFlinger itself missed the frame.
            slow = comp > p
            self.windows[fid] = {"a": cend - comp, "b": cend, "source": "composition slice", "late": slow,
                                 "ft_named": False, "signal": None, "app_on_time": None,
                                 "slow_composition": (comp, p) if slow else None}

    def window(self, frame_id: int) -> dict[str, Any] | None:
        return self.windows.get(frame_id)

    def measure(self, frame_id: int, app_path_ns: int) -> SfMeasure | None:
        """SurfaceFlinger main thread's own states over the frame's composition window, and the window's share of
        the extended critical path (app path + composition window)."""
        w = self.windows.get(frame_id)
        if w is None or self.tid is None:   # windows are only made once SurfaceFlinger's main thread is known
            return None
        a, b = w["a"], w["b"]
        win = b - a
        acc: dict[str, int] = dict.fromkeys(SF_STATES, 0)
        cpu_ns: dict[int, int] = {}
        if self.trace.has_sched:
            if (a, b) not in self._own:    # frames presented by the same display frame share the window
                for seg in self.finder.own_states(self.tid, a, b):
                    cls = state_class(seg.state)
                    key = _STATE_KEY.get(cls, "unknown")
                    acc[key] += seg.dur
                    if cls == RUNNING and seg.cpu is not None:
                        cpu_ns[seg.cpu] = cpu_ns.get(seg.cpu, 0) + seg.dur
                acc["binder"] = self.finder.binder.time_in_calls(self.tid, a, b)
                self._own[(a, b)] = (acc, cpu_ns)
            own_acc, own_cpu = self._own[(a, b)]
            acc, cpu_ns = dict(own_acc), dict(own_cpu)
        # state shares as findings.json v1 shows them (4 decimals): normal frames average these
        states = {k: round(v / win, 4) for k, v in acc.items()} if self.trace.has_sched else None
        return SfMeasure(win / (app_path_ns + win), win, states, cpu_ns)

    # ---- evidence (only for reported causes: slices are looked up per frame) ------------------------------
    def _slice_arrays(self) -> tuple[Any, ...]:
        assert self.tid is not None   # only reported causes ask, and they need SurfaceFlinger's main thread
        if self._slices is None:
            s = self.trace.slices
            s = s.filter((pl.col("tid") == self.tid) & (pl.col("kind") == "thread")).sort("ts") if s.height else s
            if not s.height:
                self._slices = (np.array([], dtype=np.int64),) * 2 + ([], [], [], 0)
            else:
                ts = s["ts"].to_numpy()
                self._slices = (ts, ts + s["dur"].to_numpy(), s["id"].to_list(), s["name"].to_list(),
                                s["depth"].to_list(), int(s["dur"].max()))   # type: ignore[arg-type]
                self._tree = SliceTree(self.trace.slices, {self.tid})
        return self._slices

    def slices_in(self, a: int, b: int, top: int = 5) -> tuple[dict[str, int], list[str]]:
        """SurfaceFlinger main-thread slices in [a, b): ns per name of the outermost ones (top `top`), and the
        critical call path of the longest."""
        ts, ends, ids, names, depths, max_dur = self._slice_arrays()
        lo = int(np.searchsorted(ts, a - max_dur, side="left"))
        hi = int(np.searchsorted(ts, b, side="left"))
        hits = [i for i in range(lo, hi) if ends[i] > a]
        if not hits:
            return {}, []
        d0 = min(depths[i] for i in hits)
        roots = [i for i in hits if depths[i] == d0]
        by_name: dict[str, int] = {}
        for i in roots:
            by_name[names[i]] = by_name.get(names[i], 0) + int(min(b, ends[i]) - max(a, ts[i]))
        longest = max(roots, key=lambda i: min(b, ends[i]) - max(a, ts[i]))
        path = self._tree.critical_call_path(ids[longest]) if self._tree else [names[longest]]
        return dict(sorted(by_name.items(), key=lambda kv: -kv[1])[:top]), path

    def evidence(self, frame_id: int, m: SfMeasure, normal: SfBaseline | None) -> CompositorEvidence:
        """SurfaceFlinger over the frame's composition window: the late signal, states, CPUs, the threads of its
        critical path and its slices, the FrameTimeline display frame, the normal frames' measure."""
        w = self.windows[frame_id]
        a, b = w["a"], w["b"]
        assert self.tid is not None   # windows are only made once SurfaceFlinger's main thread is known
        name = self.trace.thread_name
        threads: dict[int, int] = self._threads.get((a, b), {})
        if self.trace.has_sched and (a, b) not in self._threads:
            for seg in self.finder.path([(self.tid, a, b)]):
                threads[seg.tid] = threads.get(seg.tid, 0) + seg.dur
            self._threads[(a, b)] = threads
        cls = self.trace.cpu_class
        slices_ns, call_path = self.slices_in(a, b)
        display = ({"token": w["display_frame_token"], "jank_type": w["display_jank_type"],
                    "present_type": w["display_present_type"]} if w.get("display_jank_type") is not None else None)
        return CompositorEvidence(
            compositor_late=w["signal"], slow_composition=w.get("slow_composition"), window_source=w["source"],
            window_ns=m.window_ns, window_start_ns=a,
            thread=f"{name(self.tid) or self.tid} ({self.tid})", states=m.states,
            cpu_ns={f"cpu{c}" + (f" ({cls[c]})" if c in cls else ""): v
                    for c, v in sorted(m.cpu_ns.items(), key=lambda kv: -kv[1])},
            threads_ns={f"{name(t) or t} ({t})": v for t, v in sorted(threads.items(), key=lambda kv: -kv[1])[:4]},
            slices_ns=slices_ns, critical_call_path=call_path, display_frame=display, normal=normal)


def compositor_baseline(measures: list[SfMeasure]) -> SfBaseline | None:
    """Mean SurfaceFlinger measures over (sampled) normal frames that have a composition window."""
    if not measures:
        return None
    n = len(measures)
    out = SfBaseline(n, sum(m.share for m in measures) / n, sum(m.window_ns for m in measures) / n)
    st = [m.states for m in measures if m.states]
    if st:
        out.states = {k: sum(s[k] for s in st) / len(st) for k in SF_STATES}
    return out
