"""Root causes of SR/FF frames: shares of the critical path spent in binder, I/O (uninterruptible sleep), runnable
(scheduling delay), sleeping, on saturated LITTLE cores while a big core idles, and in GC; each compared with the
same share over the trace's normal frames. Causes that stand out are ranked by their excess; when none does, the
cause is the app's own work and the slices (UI components) that took the time are named. The `io` cause carries the
block requests behind the D-state time (block_io.py); frames whose compositor was late get the `surfaceflinger`
cause, from SurfaceFlinger's main thread over the composition window (compositor.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from droidlag.frames.block_io import BlockIndex, block_baseline
from droidlag.frames.compositor import Compositor, compositor_baseline
from droidlag.frames.config import FramesConfig
from droidlag.frames.critical_path import (
    RUNNABLE,
    RUNNING,
    SLEEPING,
    UNINTERRUPTIBLE,
    CpuBusy,
    CriticalPathFinder,
    Segment,
    SliceTree,
    state_class,
)
from droidlag.frames.placement import CpuPlacement, placement_evidence
from droidlag.frames.results import (
    BlockBaseline,
    BlockEvidence,
    CauseEvidence,
    Components,
    PlacementCpu,
    SfBaseline,
    SfMeasure,
)
from droidlag.models.causes import CAUSE_LABELS
from droidlag.models.trace import Trace

SYSTEM_FACTORS = ("binder", "io", "runnable", "sleeping", "little_saturated", "cpu_placement", "gc")
GC_SLICE_RE = re.compile(r"(\bGC\b|WaitForGcToComplete|concurrent copying|mark sweep|mark compact|"
                         r"CollectorTransition|Heap trim|semispace|young gen)", re.IGNORECASE)
GC_THREADS = ("HeapTaskDaemon",)


@dataclass
class PathEvidence:
    """What a frame's critical path was made of, behind its shares (ns): binder servers, kernel functions blocked
    in, threads, badly placed CPU time, block requests."""

    servers_ns: dict[str, int] = field(default_factory=dict)            # "name (tid)" -> ns serving binder calls
    blocked_functions_ns: dict[str, int] = field(default_factory=dict)
    io_wait_intervals: int = 0
    threads_ns: dict[str, int] = field(default_factory=dict)            # "name (tid)" -> ns on the path
    placement: dict[int, PlacementCpu] | None = None
    block: BlockEvidence | None = None


@dataclass
class FrameShares:
    """Critical-path shares (fractions of the path time) and the evidence behind them for one frame."""

    path_ns: int
    shares: dict[str, float | None]
    evidence: PathEvidence
    path: list[Segment]
    sf: SfMeasure | None = None     # SurfaceFlinger measure over the frame's composition window (Compositor.measure)
    coverage: float | None = None   # fraction of the path with sched data (None: the trace has no sched at all)


class Ranked(NamedTuple):
    """One cause of a frame before its rank and frame are set: name, shares, evidence."""

    name: str
    share: float | None
    normal_share: float | None
    evidence: CauseEvidence


class CauseAnalyzer:
    """Computes critical paths and shares for frames of one trace. What the trace lacks is listed in `missing`."""

    def __init__(self, trace: Trace, frames: pl.DataFrame, config: FramesConfig, vsync_period_ns: int | None = None):
        self.trace = trace
        self.config = config
        self.finder = CriticalPathFinder(trace, config.wakeup_depth)
        tids = set(frames["ui_tid"].drop_nulls().to_list()) | set(frames["render_tid"].drop_nulls().to_list())
        self.tree = SliceTree(trace.slices, tids)
        self.missing: dict[str, str] = {}
        if not trace.has_sched:
            for k in ("binder", "io", "runnable", "sleeping", "little_saturated", "cpu_placement"):
                self.missing[k] = "no sched_switch data in the trace"
        else:
            if not trace.binder.height:
                self.missing["binder"] = "no binder_transaction events in the trace"
            if not trace.cpu_class:
                for k in ("little_saturated", "cpu_placement"):
                    self.missing[k] = "CPU big/LITTLE classes unknown (no cpu_frequency data)"
        self.busy = CpuBusy(trace.thread_states) if "little_saturated" not in self.missing else None
        self.placement = (CpuPlacement(trace, self.busy, config.big_idle_fraction, config.low_freq_fraction)
                          if self.busy is not None else None)
        self.little = [c for c, k in trace.cpu_class.items() if k == "little"]
        self.big = [c for c, k in trace.cpu_class.items() if k == "big"]
        self.gc = self._gc_intervals(trace)
        self.gc_tids = {t.tid for t in trace.threads.values() if t.name in GC_THREADS}
        self.block = BlockIndex(trace.block) if trace.block.height else None
        self._slices_by_tid: dict[int, tuple[Any, ...] | None] = {}
        self.normal_block: list[BlockEvidence] = []     # block evidence of the sampled normal frames (all processes)
        self.comp = Compositor(trace, frames, self.finder, vsync_period_ns, config.sr_threshold_ns)

    @staticmethod
    def _gc_intervals(trace: Trace) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        s = trace.slices
        if not s.height:
            return {}
        g = s.filter(pl.col("name").str.contains("(?i)" + GC_SLICE_RE.pattern))
        out = {}
        for key, part in (g.partition_by("tid", as_dict=True).items() if g.height else ()):
            part = part.sort("ts")
            s_ = part["ts"].to_numpy()
            out[int(key[0])] = (s_, s_ + part["dur"].to_numpy())
        return out

    def _gc_overlap(self, tid: int, a: int, b: int) -> int:
        if tid in self.gc_tids:
            return b - a
        got = self.gc.get(tid)
        if got is None:
            return 0
        s, e = got
        j = int(np.searchsorted(s, b, side="left"))
        best = 0
        for k in range(max(0, j - 8), j):   # GC slices nest rarely and are few; a short look-back suffices
            best = max(best, min(b, int(e[k])) - max(a, int(s[k])))
        return max(0, best)

    def _little_saturated(self, cpu: int | None, a: int, b: int) -> bool:
        if self.busy is None or cpu is None or cpu not in self.little or not self.big or b <= a:
            return False
        little = np.mean([self.busy.busy_fraction(c, a, b) for c in self.little])
        big_min = min(self.busy.busy_fraction(c, a, b) for c in self.big)
        return bool(little >= self.config.little_busy_fraction and big_min <= 1 - self.config.big_idle_fraction)

    def pieces(self, row: dict[str, Any]) -> list[tuple[int, int, int]]:
        """The frame's threads in time order: main thread from the frame start to the RenderThread hand-off,
        then the RenderThread to the frame end."""
        start, end = row["start_ns"], row["end_ns"]
        ui, rt = row["ui_tid"], row["render_tid"]
        dts = row.get("draw_frame_ts")
        if rt is None or dts is None:
            return [(ui, start, end)]
        split = min(max(dts, start), end)
        return [(ui, start, split), (rt, split, end)]

    def shares(self, row: dict[str, Any]) -> FrameShares:
        path = self.finder.path(self.pieces(row)) if self.trace.has_sched else []
        total = sum(s.dur for s in path) or max(1, row["end_ns"] - row["start_ns"])
        acc = {k: 0 for k in SYSTEM_FACTORS} | {"running": 0, "app_running": 0, "unknown": 0}
        fns: dict[str, int] = {}
        io_waits = 0
        threads: dict[int, int] = {}
        binder_servers: dict[int, int] = {}
        little = self.busy is not None and bool(self.little) and bool(self.big)   # else never saturated
        placement = self.placement if self.placement is not None and self.placement.usable else None
        placed: list[tuple[int, dict[str, Any]]] = []
        gc_tids, gc = self.gc_tids, self.gc
        for tid, ts, dur, state, cpu, via, in_binder, blocked_fn, io_wait in path:
            cls = state_class(state)
            threads[tid] = threads.get(tid, 0) + dur
            if in_binder:
                acc["binder"] += dur
                if via == "binder":
                    binder_servers[tid] = binder_servers.get(tid, 0) + dur
            saturated = little and cls in (RUNNING, RUNNABLE) and self._little_saturated(cpu, ts, ts + dur)
            if saturated:
                acc["little_saturated"] += dur
            if cls == RUNNING:
                self._running(acc, placed, placement, saturated, in_binder, cpu, ts, dur)
            elif cls == RUNNABLE:
                acc["runnable"] += dur
            elif cls == UNINTERRUPTIBLE:
                acc["io"] += dur
                if blocked_fn:
                    fns[blocked_fn] = fns.get(blocked_fn, 0) + dur
                io_waits += bool(io_wait)
            elif cls == SLEEPING:
                acc["sleeping"] += dur
            else:
                acc["unknown"] += dur
            if tid in gc_tids or tid in gc:    # else no GC overlap
                acc["gc"] += self._gc_overlap(tid, ts, ts + dur)
        if not path:   # no sched: GC is still visible from slices on the frame's threads
            for tid, a, b in self.pieces(row):
                acc["gc"] += self._gc_overlap(tid, a, b)
        shares: dict[str, float | None] = {k: (None if k in self.missing else acc[k] / total) for k in SYSTEM_FACTORS}
        shares["running"] = acc["running"] / total if path else None
        shares["app_running"] = acc["app_running"] / total if path else None   # running outside binder calls
        name = self.trace.thread_name
        evidence = PathEvidence(
            servers_ns={f"{name(t) or t} ({t})": v for t, v in sorted(binder_servers.items(), key=lambda kv: -kv[1])[:3]},
            blocked_functions_ns=dict(sorted(fns.items(), key=lambda kv: -kv[1])[:3]), io_wait_intervals=io_waits,
            threads_ns={f"{name(t) or t} ({t})": v for t, v in sorted(threads.items(), key=lambda kv: -kv[1])[:4]})
        if placed:
            evidence.placement = placement_evidence(placed)
        if self.block is not None:
            pieces = self.pieces(row)
            evidence.block = self.block.evidence(path, set(threads) or {p[0] for p in pieces},
                                                 (row["start_ns"], row["end_ns"]))
        coverage = (1.0 - acc["unknown"] / total) if path else None
        return FrameShares(total, shares, evidence, path, self.comp.measure(row["frame_id"], total), coverage)

    @staticmethod
    def _running(acc: dict[str, Any], placed: list[Any], placement: CpuPlacement | None, saturated: bool, in_binder: bool,
                 cpu: int | None, ts: int, dur: int) -> None:
        """Each running ns on the path is the app's own work, or lost to where it ran (a saturated LITTLE core,
        a slow placement) or spent serving a binder call."""
        acc["running"] += dur
        hit = None if saturated or placement is None else placement.check(cpu, ts, ts + dur)
        if hit is not None:
            acc["cpu_placement"] += dur
            placed.append((dur, hit))
        elif not saturated and not in_binder:
            acc["app_running"] += dur

    def compositor_only(self, row: dict[str, Any]) -> FrameShares:
        """The path length and SurfaceFlinger measure alone (no walk): for frames whose only cause is the
        compositor. The walked path always covers its pieces, so its length is theirs."""
        total = sum(max(0, b - a) for _, a, b in self.pieces(row)) or max(1, row["end_ns"] - row["start_ns"])
        return FrameShares(total, {}, PathEvidence(), [], self.comp.measure(row["frame_id"], total))

    def compositor_cause(self, row: dict[str, Any], fs: FrameShares, normal: Baseline) -> Ranked | None:
        """The `surfaceflinger` cause when the frame's compositor was late: always when FrameTimeline names an
        SF/display jank type (ground truth), else only when the composition window's share of the extended
        critical path (app path + window) stands out against normal frames. share = window / (app path +
        window); normal_share: the same over normal frames whose compositor was not late."""
        w = self.comp.window(row["frame_id"])
        if w is None or not w["late"] or fs.sf is None:
            return None
        base_d = normal.surfaceflinger
        base = base_d.share if base_d else 0.0
        share = fs.sf.share
        cfg = self.config
        # Without FrameTimeline the share must stand out: its excess, and the share or the window itself at least
        # cause_min_ratio times normal (a long app path dilutes the share of even a very late composition).
        base_win = base_d.window_ns if base_d else 0.0
        ratio_ok = share >= cfg.cause_min_ratio * base or fs.sf.window_ns >= cfg.cause_min_ratio * base_win
        if not w["ft_named"] and not (share - base >= cfg.cause_min_excess and ratio_ok):
            return None
        ev = self.comp.evidence(row["frame_id"], fs.sf, base_d)
        ev.app_path_ns = fs.path_ns
        if w["app_on_time"]:
            ev.verdict_note = ("FrameTimeline: the app finished on time and the display frame janked: the "
                               "compositor was late; the verdict counts app-side jank only")
        return Ranked("surfaceflinger", share, base if base_d else None,
                      CauseEvidence(CAUSE_LABELS["surfaceflinger"], compositor=ev))

    def app_components(self, row: dict[str, Any], top: int = 3) -> Components:
        """The critical call path of each frame thread and the slices with the most self time."""
        if row.get("do_frame_id") is None and row.get("draw_frame_id") is None:
            return self._components_in_window(row, top)
        ui_path = self.tree.critical_call_path(row.get("do_frame_id"))
        rt_path = self.tree.critical_call_path(row.get("draw_frame_id"))
        selft: dict[str, int] = {}
        for root in (row.get("do_frame_id"), row.get("draw_frame_id")):
            for k, v in self.tree.self_times(root).items():
                selft[k] = selft.get(k, 0) + v
        comps = sorted(selft.items(), key=lambda kv: -kv[1])[:top]
        return Components({"main": ui_path, "render_thread": rt_path}, dict(comps))

    def _components_in_window(self, row: dict[str, Any], top: int) -> Components:
        """Frames without doFrame/DrawFrame roots (FrameTimeline-only): slices on the main thread inside the frame."""
        a, b = row["start_ns"], row["end_ns"]
        got = self._thread_slices(row["ui_tid"])
        hits: list[int] = []
        if got is not None:
            ts, ends, ids, names, durs, depths, parents = got
            hits = np.flatnonzero((ts < b) & (ends > a)).tolist()
        if not hits:
            return Components({"main": [], "render_thread": []}, {})
        d0 = min((depths[i] for i in hits if depths[i] is not None), default=None)
        roots = [i for i in hits if d0 is not None and depths[i] == d0]
        path: list[str] = []
        cur = self._longest(roots, durs)
        while cur is not None:    # down the longest child (among the slices inside the frame) at each level
            path.append(names[cur])
            if len(path) >= 12:
                break
            cur = self._longest([i for i in hits if parents[i] is not None and parents[i] == ids[cur]], durs)
        by_name: dict[str, Any] = {}
        for i in hits:
            by_name[names[i]] = by_name.get(names[i], 0) + durs[i]
        comps = sorted(by_name.items(), key=lambda kv: -kv[1])[:top]
        return Components({"main": path, "render_thread": []}, dict(comps))

    @staticmethod
    def _longest(idx: list[int], durs: list[int]) -> int | None:
        """The first of the longest slices, or None."""
        best = None
        for i in idx:
            if best is None or durs[i] > durs[best]:
                best = i
        return best

    def _thread_slices(self, tid: int | None) -> tuple[Any, ...] | None:
        """A thread's (complete) thread-kind slices in table order: ts and ends as numpy arrays (for window masks),
        ids, names, durs, depths and parent ids as lists; cached per thread across frames."""
        if tid is None:
            return None
        if tid not in self._slices_by_tid:
            s = self.trace.slices
            s = s.filter((pl.col("tid") == tid) & (pl.col("kind") == "thread") & pl.col("ts").is_not_null()
                         & pl.col("dur").is_not_null()) if s.height else s
            if not s.height:
                self._slices_by_tid[tid] = None
            else:
                ts = s["ts"].to_numpy()
                self._slices_by_tid[tid] = (ts, ts + s["dur"].to_numpy(), s["id"].to_list(), s["name"].to_list(),
                                            s["dur"].to_list(), s["depth"].to_list(), s["parent_id"].to_list())
        return self._slices_by_tid[tid]


@dataclass
class Baseline:
    """An app's normal frames, sampled: the mean share of each factor (and of `running`, `app_running`; None where
    not computable), their block measure and SurfaceFlinger measure."""

    shares: dict[str, float | None]
    block: BlockBaseline | None = None
    surfaceflinger: SfBaseline | None = None


def baseline(analyzer: CauseAnalyzer, normal_rows: list[dict[str, Any]], max_frames: int) -> Baseline:
    """Mean share of each factor over (an even sample of) the normal frames; None where not computable."""
    if not normal_rows:
        return Baseline({k: None for k in SYSTEM_FACTORS + ("running", "app_running")})
    step = max(1, len(normal_rows) // max_frames)
    sample = normal_rows[::step][:max_frames]
    acc: dict[str, list[float]] = {}
    blocks: list[BlockEvidence] = []
    sfs: list[SfMeasure] = []
    for r in sample:
        fs = analyzer.shares(r)
        for k, v in fs.shares.items():
            if v is not None:
                acc.setdefault(k, []).append(v)
        if fs.evidence.block is not None:
            blocks.append(fs.evidence.block)
        w = analyzer.comp.window(r["frame_id"])
        if fs.sf is not None and w is not None and not w["late"]:
            sfs.append(fs.sf)     # a frame whose compositor was late is not normal for SurfaceFlinger
    analyzer.normal_block.extend(blocks)
    shares = {k: (float(np.mean(acc[k])) if k in acc else None) for k in SYSTEM_FACTORS + ("running", "app_running")}
    return Baseline(shares, block_baseline(blocks), compositor_baseline(sfs))


def rank_causes(fs: FrameShares, normal: Baseline, config: FramesConfig, components: Components,
                extra: Ranked | None = None, over_budget_ns: int | None = None) -> list[Ranked]:
    """Every factor that took at least `cause_min_share` of the frame's critical path, ranked by the time it cost
    the frame over its budget (its time on the path, up to the frame's overrun); its share over normal frames is
    evidence (`stands_out`), not a gate. The app's own work (running on the path) is ranked with them; when no
    factor reaches the share, the app's own work is the cause. Then `extra` (the surfaceflinger cause)."""
    over = over_budget_ns if over_budget_ns is not None else fs.path_ns
    out = []
    factors = [(k, fs.shares.get(k)) for k in SYSTEM_FACTORS] + [("app_work", fs.shares.get("app_running"))]
    for k, share in factors:
        if share is None or share < config.cause_min_share:
            continue
        base = normal.shares.get("app_running" if k == "app_work" else k)
        ns = share * fs.path_ns
        out.append(_cause(k, share, base, ns, min(ns, over), fs, normal, config, components))
    out.sort(key=lambda c: (-(c.evidence.cost_over_budget_ns or 0.0), -(c.share or 0.0), c.name))
    if not out:
        out.append(Ranked("app_work", fs.shares.get("running"), normal.shares.get("running"),
                          CauseEvidence(CAUSE_LABELS["app_work"], path_ns=fs.path_ns, components=components)))
    if extra:   # the compositor's part comes after the app-side causes: the verdict is about the app's lateness
        out.append(extra)
    return out


def _cause(k: str, share: float, base: float | None, ns: float, cost: float, fs: FrameShares, normal: Baseline,
           config: FramesConfig, components: Components) -> Ranked:
    b = base or 0.0
    ev = CauseEvidence(CAUSE_LABELS[k], path_ns=fs.path_ns, ns=ns, cost_over_budget_ns=cost,
                       stands_out=bool(share - b >= config.cause_min_excess and share >= config.cause_min_ratio * b),
                       times_normal=share / b if b > 0 else None, threads_ns=fs.evidence.threads_ns,
                       critical_call_path=components.critical_call_path)
    if k == "binder":
        ev.servers_ns = fs.evidence.servers_ns
    elif k == "io":
        ev.blocked_functions_ns = fs.evidence.blocked_functions_ns
        ev.io_wait_intervals = fs.evidence.io_wait_intervals
        if fs.evidence.block is not None:
            ev.block = fs.evidence.block
            ev.block.normal = normal.block
    elif k == "cpu_placement":
        ev.placement = fs.evidence.placement
    elif k == "app_work":
        ev.components = components
    return Ranked(k, share, base, ev)
