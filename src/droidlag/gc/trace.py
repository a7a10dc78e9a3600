"""What garbage collection cost each process in a trace, from ART's atrace slices and the sched data.

The slices ART emits (art/runtime/gc): every collector run is `<cause> <collector> GC` (GarbageCollector::Run, e.g.
`Background young concurrent copying GC`); phases done with the world stopped are `(Paused)<phase>`, and the
concurrent copying flip is `ThreadListFlip`; a stop-the-world suspension is `Suspending mutator threads` followed by
`Mutator threads suspended for <cause>`; a thread that waits for a running collection is in `GC: Wait For
Completion [<cause>]`; heap tasks are named after their `art::gc::` functions (trims). GC CPU time is the Running time
of the collecting thread inside its run slices; HeapTaskDaemon's Running time over the whole trace is given too.

Pauses are the connected stretches of pause slices on a thread (nested phases are one pause). Blocking GC on a
thread is a wait slice, a run slice on a thread that is not HeapTaskDaemon (an Alloc or Explicit GC the thread ran
itself), or `Lock contention on GC thread flip lock`."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import polars as pl

from droidlag.gc.device import GcConfig, ProcessGc, ThreadStall, percentiles_ns
from droidlag.models.gc import generation_of
from droidlag.models.trace import Trace

RUN_RE = re.compile(r"^(?P<cause>[A-Z][A-Za-z]+) (?P<collector>[a-z][a-z +]*(?:copying|sweep|compact|semispace))"
                    r"(?: \(sampled\))? GC$")
WAIT_RE = re.compile(r"^(?:GC: Wait For Completion(?: (?P<cause>\w+))?|WaitForGcToComplete.*|"
                     r"Lock contention on GC thread flip lock.*)$")
PAUSE_RE = re.compile(r"^(?:\(Paused\).*|ThreadListFlip|Mutator threads suspended for .*)$")
SUSPEND_RE = re.compile(r"^Mutator threads suspended for (?P<why>.*)$")
HEAP_TASK_RE = re.compile(r"art::gc::")
GC_DAEMON = "HeapTaskDaemon"
HEAP_COUNTER = "Heap size (KB)"
RUNNING = "Running"
# One pass of the slices table with a cheap filter first: every GC slice name has one of these words.
_ANY = r"GC|Paused|ThreadListFlip|Mutator threads suspended|art::gc::"


@dataclass
class TraceGcReport:
    """Per-process GC summaries of one trace, worst first (as GcLogReport), plus which GC data the trace holds."""

    source: str
    processes: list[ProcessGc]
    has_sched: bool
    slices: dict[str, int]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"source": self.source, "kind": "trace", "slices": self.slices, "has_sched": self.has_sched,
                "processes": [p.to_dict() for p in self.processes], "notes": self.notes}


def _classify(trace: Trace) -> pl.DataFrame:
    """GC slices with a `gc_kind` column: run, wait, pause, heap_task; pid filled from the thread table."""
    s = trace.slices
    if not s.height:
        return s.with_columns(pl.lit(None, dtype=pl.Utf8).alias("gc_kind"))
    s = s.filter(pl.col("name").str.contains(_ANY) & (pl.col("kind") == "thread"))
    kind = (pl.when(pl.col("name").str.contains(RUN_RE.pattern)).then(pl.lit("run"))
            .when(pl.col("name").str.contains(WAIT_RE.pattern)).then(pl.lit("wait"))
            .when(pl.col("name").str.contains(PAUSE_RE.pattern)).then(pl.lit("pause"))
            .when(pl.col("name").str.contains(HEAP_TASK_RE.pattern)).then(pl.lit("heap_task"))
            .otherwise(None))
    s = s.with_columns(kind.alias("gc_kind")).filter(pl.col("gc_kind").is_not_null())
    pids = {tid: t.pid for tid, t in trace.threads.items() if t.pid is not None}
    return s.with_columns(pl.coalesce(pl.col("pid"), pl.col("tid").replace_strict(pids, default=None,
                                                                                  return_dtype=pl.Int64)).alias("pid"))


class _Running:
    """Running intervals per thread, for CPU time inside a window."""

    def __init__(self, states: pl.DataFrame, tids: set[int]):
        self.by_tid: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        if not states.height or not tids:
            return
        run = states.filter((pl.col("state") == RUNNING) & pl.col("tid").is_in(list(tids))).sort("ts")
        for (tid,), part in (run.partition_by("tid", as_dict=True).items() if run.height else ()):
            s = part["ts"].to_numpy()
            self.by_tid[int(tid)] = (s, s + part["dur"].to_numpy())

    def total_ns(self, tid: int) -> int:
        """All of a thread's Running time in the trace."""
        got = self.by_tid.get(tid)
        return int((got[1] - got[0]).sum()) if got is not None else 0

    def cpu_ns(self, tid: int, a: int, b: int) -> int:
        """A thread's Running time inside [a, b)."""
        got = self.by_tid.get(tid)
        if got is None:
            return 0
        s, e = got
        i, j = int(np.searchsorted(e, a, side="right")), int(np.searchsorted(s, b, side="left"))
        if j <= i:
            return 0
        return int(np.maximum(0, np.minimum(e[i:j], b) - np.maximum(s[i:j], a)).sum())


def _pauses(rows: pl.DataFrame) -> list[int]:
    """Lengths (ns) of the connected stretches of pause slices, per thread."""
    out: list[int] = []
    for (_tid,), part in rows.partition_by("tid", as_dict=True).items():
        cur_s = cur_e = None
        for s, d in part.sort("ts").select("ts", "dur").iter_rows():
            e = s + max(0, d or 0)
            if cur_e is not None and s <= cur_e:
                cur_e = max(cur_e, e)
                continue
            if cur_e is not None:
                out.append(cur_e - cur_s)
            cur_s, cur_e = s, e
        if cur_e is not None:
            out.append(cur_e - cur_s)
    return out


def _stalls(trace: Trace, pid: int, waits: pl.DataFrame, runs: pl.DataFrame, daemons: set[int]) -> list[ThreadStall]:
    stalls: dict[int, ThreadStall] = {}
    for tid, name, dur in waits.select("tid", "name", "dur").iter_rows():
        st = stalls.setdefault(tid, ThreadStall(tid, tid == pid))
        m = WAIT_RE.match(name)
        cause = (m.group("cause") if m else None) or ("flip lock" if name.startswith("Lock") else "GC")
        st.causes[cause] = st.causes.get(cause, 0) + 1
        st.waits += 1
        st.completed += 1
        st.waited_ns += dur or 0
        st.max_wait_ns = max(st.max_wait_ns, dur or 0)
    for tid, name, dur in runs.filter(~pl.col("tid").is_in(list(daemons))).select("tid", "name", "dur").iter_rows():
        st = stalls.setdefault(tid, ThreadStall(tid, tid == pid))
        m = RUN_RE.match(name)
        cause = m.group("cause") if m else "GC"
        st.causes[cause] = st.causes.get(cause, 0) + 1
        st.started += 1
        st.waited_ns += dur or 0
        st.max_wait_ns = max(st.max_wait_ns, dur or 0)
    return sorted(stalls.values(), key=lambda s: (not s.main, -s.waited_ns))


def _process(trace: Trace, pid: int, rows: pl.DataFrame, running: _Running, config: GcConfig) -> ProcessGc:
    p = ProcessGc(pid=pid, process=trace.process_name(pid))
    runs = rows.filter(pl.col("gc_kind") == "run")
    daemons = {t.tid for t in trace.threads.values() if t.pid == pid and t.name == GC_DAEMON}
    for name, tid, ts, dur in runs.select("name", "tid", "ts", "dur").iter_rows():
        m = RUN_RE.match(name)
        if m is None:   # classified as a run by the same pattern; kept for the type checker
            continue
        kind = f"{m.group('cause')} {m.group('collector')}"
        gen = generation_of(m.group("collector"))
        p.collections += 1
        p.by_kind[kind] = p.by_kind.get(kind, 0) + 1
        p.by_generation[gen] = p.by_generation.get(gen, 0) + 1
        p.gc_wall_ns += dur or 0
        if trace.has_sched:
            p.gc_cpu_ns = (p.gc_cpu_ns or 0) + running.cpu_ns(tid, ts, ts + (dur or 0))
    pause_rows = rows.filter(pl.col("gc_kind") == "pause")
    pauses = _pauses(pause_rows) if pause_rows.height else []
    p.pauses, p.pause_total_ns, p.pause_max_ns = len(pauses), sum(pauses), max(pauses, default=0)
    p.pause_percentiles_ns = percentiles_ns(pauses, config.percentiles)
    for name, dur in pause_rows.select("name", "dur").iter_rows():
        if SUSPEND_RE.match(name):
            p.suspend_all += 1
            p.suspend_all_ns += dur or 0
    for name, dur in rows.filter(pl.col("gc_kind") == "heap_task").select("name", "dur").iter_rows():
        p.heap_tasks[name] = p.heap_tasks.get(name, 0) + (dur or 0)
    p.threads = _stalls(trace, pid, rows.filter(pl.col("gc_kind") == "wait"), runs, daemons)
    for st in p.threads:
        p.blocking_waits += st.waits
        p.blocking_started += st.started
        p.blocked_ns += st.waited_ns
        if st.main:
            p.main_thread_blocked_ns += st.waited_ns
            p.main_thread_waits += st.waits + st.started
    if trace.has_sched and daemons:
        p.heap_task_daemon_cpu_ns = sum(running.total_ns(t) for t in daemons)
    if rows.height:
        ends = rows["ts"] + rows["dur"].fill_null(0)
        p.first_ns, p.last_ns = int(cast(int, rows["ts"].min())), int(cast(int, ends.max()))
    p.lines = rows.height
    return p


def _heap_counter(trace: Trace, procs: dict[int, ProcessGc]) -> None:
    c = trace.counters
    if not c.height:
        return
    heap = c.filter((pl.col("name") == HEAP_COUNTER) & pl.col("pid").is_not_null())
    for (pid,), part in (heap.partition_by("pid", as_dict=True).items() if heap.height else ()):
        p = procs.get(int(pid))
        if p is not None:
            vals = part.sort("ts")["value"]
            p.heap.used_max_bytes = int(cast(float, vals.max()) * 1024)
            p.heap.used_last_bytes = int(cast(float, vals[-1]) * 1024)


def analyze_trace_gc(trace: Trace, config: GcConfig | None = None) -> TraceGcReport:
    """Per-process GC summaries of a trace: runs by kind, pauses, GC wall and CPU time, blocking waits by thread,
    heap size where the `Heap size (KB)` counter is traced."""
    config = config or GcConfig()
    rows = _classify(trace)
    counts = {k: int(n) for k, n in rows.group_by("gc_kind").len().sort("gc_kind").iter_rows()} if rows.height else {}
    pids = sorted({int(p) for p in rows["pid"].drop_nulls().to_list()}) if rows.height else []
    gc_tids = set(rows.filter(pl.col("gc_kind") == "run")["tid"].to_list()) if rows.height else set()
    gc_tids |= {t.tid for t in trace.threads.values() if t.name == GC_DAEMON and t.pid in pids}
    running = _Running(trace.thread_states, gc_tids) if trace.has_sched else _Running(pl.DataFrame(), set())
    procs = {pid: _process(trace, pid, rows.filter(pl.col("pid") == pid), running, config) for pid in pids}
    _heap_counter(trace, procs)
    notes = []
    if not rows.height:
        notes.append("no ART GC slices in the trace (atrace category `dalvik` was not recorded, or no GC ran)")
    if rows.height and not trace.has_sched:
        notes.append("no sched data: GC CPU time not possible")
    out = sorted(procs.values(), key=lambda p: (-p.main_thread_blocked_ns, -p.blocked_ns, -p.gc_wall_ns,
                                                 p.pid or 0))
    return TraceGcReport(trace.path, out, trace.has_sched, counts, notes)


def blocking_slices(trace: Trace) -> dict[int, tuple[np.ndarray, np.ndarray, list[str]]]:
    """Per thread, the intervals (ns, sorted by start) where it was blocked by GC: wait slices and collections it ran
    itself (not on HeapTaskDaemon), with their names."""
    rows = _classify(trace)
    if not rows.height:
        return {}
    daemons = [t.tid for t in trace.threads.values() if t.name == GC_DAEMON]
    b = rows.filter((pl.col("gc_kind") == "wait") | ((pl.col("gc_kind") == "run") & ~pl.col("tid").is_in(daemons)))
    out = {}
    for (tid,), part in (b.partition_by("tid", as_dict=True).items() if b.height else ()):
        part = part.sort("ts")
        s = part["ts"].to_numpy()
        out[int(tid)] = (s, s + part["dur"].fill_null(0).to_numpy(), part["name"].to_list())
    return out
