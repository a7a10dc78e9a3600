"""The critical path of a frame across threads, and the critical call path inside each thread.

Across threads: walk the frame's threads (main thread up to the RenderThread hand-off, then the RenderThread) backward
in time through their scheduling states; where a thread slept, follow the thread it waited on: the binder server
while a transaction was outstanding, else the thread that woke it (wakeup edge), up to `depth` hops. Inside a thread:
from the root slice, descend into the longest child at each level (doFrame > traversal > measure > ...).
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from droidlag.models.trace import Trace

RUNNING, RUNNABLE, SLEEPING, UNINTERRUPTIBLE, UNKNOWN = "Running", "R", "S", "D", "unknown"


class Segment(NamedTuple):
    """One piece of the critical path: thread `tid` was in `state` on `cpu` during [ts, ts + dur) (ns); `via` is
    how the path reached this thread ("frame", "wakeup" or "binder"); in_binder when any hop on the way was one.
    (A NamedTuple, immutable like a frozen dataclass: a walk makes thousands and these are much cheaper to build.)"""

    tid: int
    ts: int
    dur: int
    state: str
    cpu: int | None
    via: str
    in_binder: bool
    blocked_function: str | None = None
    io_wait: bool | None = None


def _state_class(state: str) -> str:
    if state == "Running":
        return RUNNING
    if state.startswith("R"):
        return RUNNABLE
    if state.startswith("D"):
        return UNINTERRUPTIBLE
    if state == UNKNOWN:
        return UNKNOWN
    return SLEEPING


_CLASS: dict[str, str] = {}


def state_class(state: str) -> str:
    """RUNNING, RUNNABLE, UNINTERRUPTIBLE, SLEEPING or UNKNOWN (memoized: the states are a few distinct strings)."""
    cls = _CLASS.get(state)
    if cls is None:
        cls = _CLASS[state] = _state_class(state)
    return cls


class ThreadStates:
    """Per-thread scheduling intervals, built lazily per thread, for fast windowed lookups.

    The table is ordered by tid once (a stable argsort); a thread's rows are then a zero-copy slice, converted to
    Python lists on first use (bisect on lists beats numpy searchsorted on scalars in the per-frame walk)."""

    _COLS = ("ts", "dur", "state", "cpu", "waker_tid", "blocked_function", "io_wait")

    def __init__(self, states: pl.DataFrame):
        self._by_tid: dict[int, tuple[Any, ...]] = {}
        self._span: dict[int, tuple[int, int]] = {}
        self._df: pl.DataFrame | None = None
        if states.height:
            states = states.filter(pl.col("tid").is_not_null())
            tid = states["tid"].to_numpy()
            order = np.argsort(tid, kind="stable")
            self._df = states.select(self._COLS)[order]
            tids, starts = np.unique(tid[order], return_index=True)
            bounds = np.append(starts, len(tid)).tolist()
            self._span = {t: (bounds[k], bounds[k + 1]) for k, t in enumerate(tids.tolist())}

    def get(self, tid: int) -> tuple[Any, ...] | None:
        """(ts, ends, states, cpus, wakers, blocked_functions, io_waits, ends_array) of `tid` sorted by ts, as
        lists; ends_array is the numpy ends when they are not monotonic (bisect then does not apply), else None."""
        got = self._by_tid.get(tid)
        if got is None:
            span = self._span.get(tid)
            if span is None:
                return None
            assert self._df is not None   # spans index the table
            part = self._df.slice(span[0], span[1] - span[0])
            ts = part["ts"].to_numpy()
            if len(ts) > 1 and not bool((ts[1:] >= ts[:-1]).all()):
                order = np.argsort(ts, kind="stable")
                part, ts = part[order], ts[order]
            ends = ts + part["dur"].to_numpy()
            mono = len(ends) < 2 or bool((ends[1:] >= ends[:-1]).all())
            got = (ts.tolist(), ends.tolist(), part["state"].to_list(), part["cpu"].to_list(),
                   part["waker_tid"].to_list(), part["blocked_function"].to_list(), part["io_wait"].to_list(),
                   None if mono else ends)
            self._by_tid[tid] = got
        return got

    def __contains__(self, tid: int) -> bool:
        return tid in self._span


class BinderIndex:
    """Synchronous binder calls by client thread: (ts, end, server_tid, received_ts, reply_ts)."""

    def __init__(self, binder: pl.DataFrame):
        self._by_client: dict[int, list[tuple[Any, ...]]] = {}
        if binder.height:
            b = binder.filter(~pl.col("oneway").fill_null(False) & pl.col("server_tid").is_not_null())
            for row in b.select("client_tid", "ts", "dur", "server_tid", "received_ts", "reply_ts").iter_rows():
                c, ts, dur, srv, rx, rp = row
                end = ts + dur if dur is not None else (rp if rp is not None else None)
                if end is None:
                    continue
                self._by_client.setdefault(c, []).append((ts, end, srv, rx if rx is not None else ts,
                                                          rp if rp is not None else end))

    def during(self, tid: int, a: int, b: int) -> tuple[Any, ...] | None:
        """The call by `tid` outstanding for the longest part of [a, b), or None."""
        best, best_ov = None, 0
        for call in self._by_client.get(tid, ()):
            ov = min(b, call[1]) - max(a, call[0])
            if ov > best_ov:
                best, best_ov = call, ov
        return best

    def time_in_calls(self, tid: int, a: int, b: int) -> int:
        """Time of [a, b) during which `tid` had a synchronous call outstanding."""
        iv = sorted((max(a, c[0]), min(b, c[1])) for c in self._by_client.get(tid, ()) if c[0] < b and c[1] > a)
        total, cur = 0, a
        for s, e in iv:
            s = max(s, cur)
            if e > s:
                total += e - s
                cur = e
        return total


class CriticalPathFinder:
    """Walks critical paths on one trace; build once per trace, then call `path` per frame."""

    def __init__(self, trace: Trace, depth: int = 3):
        self.trace = trace
        self.depth = depth
        self.states = ThreadStates(trace.thread_states)
        self.binder = BinderIndex(trace.binder)

    def path(self, pieces: list[tuple[int, int, int]]) -> list[Segment]:
        """Critical path over consecutive (tid, start, end) pieces of a frame (e.g. main thread then
        RenderThread), in time order."""
        out: list[Segment] = []
        for tid, a, b in pieces:
            if b > a:
                out.extend(self._walk(tid, a, b, 0, "frame", False, {tid}))
        return out

    def own_states(self, tid: int, a: int, b: int) -> list[Segment]:
        """The states of `tid` itself over [a, b), without following wakeups or binder."""
        return self._walk(tid, a, b, self.depth, "frame", False, {tid}) if b > a else []

    def _walk(self, tid: int, a: int, b: int, depth: int, via: str, in_binder: bool, seen: set[Any]) -> list[Segment]:
        st = self.states.get(tid)
        if st is None:
            return [Segment(tid, a, b - a, UNKNOWN, None, via, in_binder)]
        ts, ends, states, cpus, wakers, fns, ios, ends_arr = st
        i0 = bisect_right(ends, a) if ends_arr is None else int(np.searchsorted(ends_arr, a, side="right"))
        i1 = bisect_left(ts, b)
        out: list[Segment] = []
        cursor = a
        can_hop = depth < self.depth
        for i in range(i0, i1):
            s, e = ts[i], ends[i]
            s = a if s < a else s
            e = b if e > b else e
            if e <= s:
                continue
            if s > cursor:
                out.append(Segment(tid, cursor, s - cursor, UNKNOWN, None, via, in_binder))
            cursor = e
            state = states[i]
            if can_hop:
                cls = _CLASS.get(state) or state_class(state)
                if cls is SLEEPING or cls is UNINTERRUPTIBLE:
                    hop = self._hop(tid, s, e, i, st, depth, in_binder, seen)
                    if hop is not None:
                        out.extend(hop)
                        continue
            out.append(Segment(tid, s, e - s, state, cpus[i], via, in_binder, fns[i], ios[i]))
        if cursor < b:
            out.append(Segment(tid, cursor, b - cursor, UNKNOWN, None, via, in_binder))
        return out

    def _hop(self, tid: int, s: int, e: int, i: int, st: tuple[Any, ...], depth: int, in_binder: bool,
             seen: set[Any]) -> list[Segment] | None:
        ts, ends, states, cpus, wakers, fns, ios, _ = st
        call = self.binder.during(tid, s, e)
        if call is not None and call[2] not in seen:
            _, _, server, rx, rp = call
            lo, hi = max(s, rx), min(e, rp)
            if hi > lo:
                segs = []
                if lo > s:
                    segs.append(Segment(tid, s, lo - s, states[i], None, "binder", True, fns[i], ios[i]))
                segs.extend(self._walk(server, lo, hi, depth + 1, "binder", True, seen | {server}))
                if e > hi:
                    segs.append(Segment(tid, hi, e - hi, states[i], None, "binder", True, fns[i], ios[i]))
                return segs
        # The interval after the sleep names the waker.
        waker = wakers[i + 1] if i + 1 < len(wakers) and ts[i + 1] == ends[i] else None
        if waker and waker != tid and waker not in seen and waker in self.states and states[i] == "S":
            return self._walk(int(waker), s, e, depth + 1, "wakeup", in_binder, seen | {int(waker)})
        return None


class SliceTree:
    """Children of each slice on a set of threads, for critical call paths and self times."""

    def __init__(self, slices: pl.DataFrame, tids: set[int]):
        s = slices.filter(pl.col("tid").is_in(list(tids)) & (pl.col("kind") == "thread"))
        self.name: dict[int, str] = dict(zip(s["id"].to_list(), s["name"].to_list()))
        self.dur: dict[int, int] = dict(zip(s["id"].to_list(), s["dur"].to_list()))
        self.children: dict[int, list[int]] = {}
        for sid, pid in zip(s["id"].to_list(), s["parent_id"].to_list()):
            if pid is not None:
                self.children.setdefault(pid, []).append(sid)

    def critical_call_path(self, root: int | None, max_len: int = 12) -> list[str]:
        """Names from the root down the longest child at each level."""
        out: list[str] = []
        cur = root
        while cur is not None and cur in self.name and len(out) < max_len:
            out.append(self.name[cur])
            kids = self.children.get(cur)
            cur = max(kids, key=lambda k: self.dur[k]) if kids else None
        return out

    def self_times(self, root: int | None) -> dict[str, int]:
        """Self time (ns) per slice name in the subtree of root (the root excluded)."""
        acc: dict[str, int] = {}
        if root is None or root not in self.name:
            return acc
        stack = list(self.children.get(root, ()))
        while stack:
            sid = stack.pop()
            kids = self.children.get(sid, ())
            own = self.dur[sid] - sum(self.dur[k] for k in kids)
            acc[self.name[sid]] = acc.get(self.name[sid], 0) + max(0, own)
            stack.extend(kids)
        return acc


class CpuBusy:
    """Per-CPU busy time (some thread Running) over any window, from the thread-state table."""

    def __init__(self, states: pl.DataFrame):
        self._cpu: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        if not states.height:
            return
        run = states.filter((pl.col("state") == "Running") & pl.col("cpu").is_not_null() & (pl.col("tid") != 0))
        for key, part in run.partition_by("cpu", as_dict=True).items():
            part = part.sort("ts")
            s = part["ts"].to_numpy()
            e = s + part["dur"].to_numpy()
            cum = np.concatenate([[0], np.cumsum(e - s)])
            self._cpu[int(key[0])] = (s, e, cum)

    def busy_fraction(self, cpu: int, a: int, b: int) -> float:
        got = self._cpu.get(cpu)
        if got is None or b <= a:
            return 0.0
        s, e, cum = got
        i = int(np.searchsorted(e, a, side="right"))
        j = int(np.searchsorted(s, b, side="left"))
        if j <= i:
            return 0.0
        total = cum[j] - cum[i]
        total -= max(0, a - s[i])
        total -= max(0, e[j - 1] - b)
        return max(0.0, min(1.0, float(total) / (b - a)))
