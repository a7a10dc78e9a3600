"""What garbage collection cost each process, from ART's GC log lines (`GcLog`): collections by kind, pauses (total
and percentiles), GC wall time, blocking waits and the threads they stalled (the main thread first), bytes freed,
heap use against the growth limit.

ART logs a collection only when it was explicit or slow (heap.cc LogGC: total over 100 ms, any pause of 5 ms or
more, or an Alloc GC over 5 ms, where the process cares about pause times), so counts and sums from logs are lower
bounds on what ran; blocking waits are logged when they last over 5 ms. The summaries say so in `notes`."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from droidlag.models.gc import (
    CLAMP,
    COLLECTION,
    DALVIK_COLLECTOR,
    DALVIK_WAITED_ON,
    OOM,
    SOFT_REFS,
    STARTING_BLOCKING,
    SUSPEND_ALL,
    WAIT_DONE,
    WAITING_BLOCKING,
    ArtGcDump,
    GcLog,
    GcLogEvent,
    generation_of,
)

LOG_NOTE = ("ART logs only explicit collections and slow ones (total over 100 ms or a pause of 5 ms or more), and "
            "blocking waits over 5 ms: counts and times from logs are lower bounds")
DALVIK_NOTE = ("Dalvik lines (Android 4.4 and older) are read as Dalvik logs them: every collection, in whole ms "
               "and KB (`<1K` freed counted as 0), and waits for its concurrent collection of 1 ms or more")
BLOCKING_KINDS = (WAITING_BLOCKING, STARTING_BLOCKING, WAIT_DONE)


@dataclass(frozen=True)
class GcConfig:
    """percentiles: of individual GC pauses. hang_window_ns: how long before a thread dump a blocking GC on the
    blocked thread counts as part of the hang (an ANR is declared 5 s after input, and the dump follows)."""

    percentiles: tuple[int, ...] = (50, 90, 99)
    hang_window_ns: int = 20_000_000_000
    timeline_buckets: int = 120      # at most this many time buckets in a process's GC timeline


@dataclass
class ThreadStall:
    """One thread's blocking GC waits. waits: `Waiting for a blocking GC` lines, and the waits whose end was logged
    (`WaitForGcToComplete blocked ...`) with no such line open before it on the thread (Android 5-6 log only the
    end; ART logs the start only for some waits; Dalvik's `WAIT_FOR_CONCURRENT_GC blocked`); started: `Starting a
    blocking GC` (the thread ran the GC itself, stalled for all of it); completed: waits with a logged length,
    summing to waited_ns. main: tid == pid."""

    tid: int | None
    main: bool | None
    waits: int = 0
    started: int = 0
    completed: int = 0
    waited_ns: int = 0
    max_wait_ns: int = 0
    causes: dict[str, int] = field(default_factory=dict)
    name: str | None = None
    open_waits: int = field(default=0, repr=False)   # `Waiting for` lines whose end is not logged yet

    def to_dict(self) -> dict:
        return {"tid": self.tid, "name": self.name, "main_thread": self.main, "waits": self.waits, "started": self.started,
                "completed": self.completed, "waited_ns": self.waited_ns, "max_wait_ns": self.max_wait_ns,
                "causes": dict(self.causes)}


@dataclass
class HeapUse:
    """Heap after each logged collection: used and footprint (bytes), the lowest % free, and the growth limit where
    a clamp or OOM line states it. used_of_limit: the highest used / limit."""

    used_last_bytes: int | None = None
    used_max_bytes: int | None = None
    footprint_max_bytes: int | None = None
    min_free_percent: int | None = None
    limit_bytes: int | None = None
    used_of_limit: float | None = None
    clamps: int = 0
    soft_reference_collections: int = 0
    out_of_memory: int = 0

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class ProcessGc:
    """GC cost of one process from its log lines or a trace's slices (times ns, sizes bytes). Fields a source
    cannot give stay None or 0 (logs give no CPU time; traces give no freed bytes)."""

    pid: int | None
    process: str | None
    collections: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)          # "<cause> <collector>" -> count
    by_generation: dict[str, int] = field(default_factory=dict)    # young / partial / full
    pauses: int = 0
    pause_total_ns: int = 0
    pause_max_ns: int = 0
    pause_percentiles_ns: dict[str, int] = field(default_factory=dict)
    gc_wall_ns: int = 0
    gc_cpu_ns: int | None = None                 # traces with sched: Running time of the collecting threads in runs
    heap_task_daemon_cpu_ns: int | None = None   # traces with sched: HeapTaskDaemon's Running time, whole trace
    heap_tasks: dict[str, int] = field(default_factory=dict)   # traces: art::gc:: task slice -> total ns
    freed_bytes: int = 0
    freed_objects: int = 0
    blocking_waits: int = 0
    blocking_started: int = 0
    blocked_ns: int = 0
    blocking_gc_ns: int | None = None    # dumps: time of the blocking collections (Total blocking GC time)
    main_thread_blocked_ns: int = 0
    main_thread_waits: int = 0
    threads: list[ThreadStall] = field(default_factory=list)
    suspend_all: int = 0
    suspend_all_ns: int = 0
    heap: HeapUse = field(default_factory=HeapUse)
    first_ns: int | None = None
    last_ns: int | None = None
    lines: int = 0
    dump_time: str | None = None          # dumps: when the process was dumped
    timeline: dict | None = None          # logs with times: GC time per bucket (see gc_timeline)
    pid_unknown: bool = False             # dumps: read without their `----- pid` header, so pid and time unknown

    def to_dict(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if k not in ("threads", "heap", "pid_unknown")}
        if self.pid_unknown:   # only then, so that every other process's dict keeps its keys
            d["pid_unknown"] = True
        d["threads"] = [t.to_dict() for t in self.threads]
        d["heap"] = self.heap.to_dict()
        return d


@dataclass
class GcLogReport:
    """Per-process GC summaries of one input's log, worst first (main-thread blocking, then all blocking, then GC
    wall time). events: lines read per kind."""

    source: str
    processes: list[ProcessGc]
    events: dict[str, int]
    lines_scanned: int
    clock: str | None
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"source": self.source, "kind": "log", "events": self.events, "lines_scanned": self.lines_scanned,
                "clock": self.clock, "processes": [p.to_dict() for p in self.processes], "notes": self.notes,
                "warnings": self.warnings}


def percentiles_ns(values: list[int], ps: tuple[int, ...]) -> dict[str, int]:
    """Percentiles (linear interpolation between order statistics) of ns values, keyed `p50`, ...; {} when empty."""
    if not values:
        return {}
    got = np.percentile(np.asarray(values, dtype=np.float64), ps)
    return {f"p{p}": int(round(v)) for p, v in zip(ps, got, strict=True)}


def _is_dalvik(e: GcLogEvent) -> bool:
    if e.kind == COLLECTION:
        return (e.collector or "").split(" ", 1)[0] == DALVIK_COLLECTOR
    return e.kind == WAIT_DONE and e.cause is None and e.blocked_on == DALVIK_WAITED_ON


def _key(e: GcLogEvent) -> tuple:
    return ("pid", e.pid) if e.pid is not None else ("name", e.process or e.tag or "?")


def _stall(stalls: dict, e: GcLogEvent) -> ThreadStall:
    st = stalls.get(e.tid)
    if st is None:
        st = stalls[e.tid] = ThreadStall(e.tid, e.main_thread)
    return st


def _add_blocking(p: ProcessGc, stalls: dict, e: GcLogEvent) -> None:
    st = _stall(stalls, e)
    if e.cause:
        st.causes[e.cause] = st.causes.get(e.cause, 0) + 1
    if e.kind == WAITING_BLOCKING or (e.kind == WAIT_DONE and not st.open_waits):
        st.waits += 1
        st.open_waits += e.kind == WAITING_BLOCKING
        p.blocking_waits += 1
        if e.main_thread:
            p.main_thread_waits += 1
    elif e.kind == STARTING_BLOCKING:
        st.started += 1
        p.blocking_started += 1
    else:
        st.open_waits -= 1   # this line ends the wait a `Waiting for` line began
    if e.kind == WAIT_DONE:
        d = e.duration_ns or 0
        st.completed += 1
        st.waited_ns += d
        st.max_wait_ns = max(st.max_wait_ns, d)
        p.blocked_ns += d
        if e.main_thread:
            p.main_thread_blocked_ns += d


def _add_collection(p: ProcessGc, pauses: list[int], e: GcLogEvent) -> None:
    p.collections += 1
    kind = f"{e.cause} {e.collector}"
    p.by_kind[kind] = p.by_kind.get(kind, 0) + 1
    gen = e.generation or "full"
    p.by_generation[gen] = p.by_generation.get(gen, 0) + 1
    pauses.extend(e.pauses_ns)
    p.gc_wall_ns += e.duration_ns or 0
    p.freed_bytes += (e.freed_bytes or 0) + (e.freed_los_bytes or 0)
    p.freed_objects += (e.freed_objects or 0) + (e.freed_los_objects or 0)
    h = p.heap
    if e.heap_used_bytes is not None:
        h.used_last_bytes = e.heap_used_bytes
        h.used_max_bytes = max(h.used_max_bytes or 0, e.heap_used_bytes)
    if e.heap_footprint_bytes is not None:
        h.footprint_max_bytes = max(h.footprint_max_bytes or 0, e.heap_footprint_bytes)
    if e.free_percent is not None:
        h.min_free_percent = e.free_percent if h.min_free_percent is None else min(h.min_free_percent, e.free_percent)


def _add_other(p: ProcessGc, e: GcLogEvent) -> None:
    h = p.heap
    if e.heap_limit_bytes:
        h.limit_bytes = e.heap_limit_bytes   # the latest statement of the limit wins
    if e.kind == CLAMP:
        h.clamps += 1
    elif e.kind == SOFT_REFS:
        h.soft_reference_collections += 1
    elif e.kind == OOM:
        h.out_of_memory += 1
    elif e.kind == SUSPEND_ALL:
        p.suspend_all += 1
        p.suspend_all_ns += e.duration_ns or 0


def _process(events: list[GcLogEvent], config: GcConfig) -> ProcessGc:
    first = events[0]
    names = [e.process for e in events if e.process]
    tags = [e.tag for e in events if e.tag]
    # the most frequent name; ties go to the first seen (sets have no stable order)
    p = ProcessGc(pid=first.pid, process=max(dict.fromkeys(names), key=names.count) if names else
                  (tags[0] if tags else None))
    pauses: list[int] = []
    stalls: dict[int | None, ThreadStall] = {}
    for e in events:
        p.lines += 1
        if e.ts_ns is not None:
            p.first_ns = e.ts_ns if p.first_ns is None else min(p.first_ns, e.ts_ns)
            p.last_ns = e.ts_ns if p.last_ns is None else max(p.last_ns, e.ts_ns)
        if e.kind == COLLECTION:
            _add_collection(p, pauses, e)
        elif e.kind in BLOCKING_KINDS:
            _add_blocking(p, stalls, e)
        else:
            _add_other(p, e)
    p.pauses = len(pauses)
    p.pause_total_ns = sum(pauses)
    p.pause_max_ns = max(pauses, default=0)
    p.pause_percentiles_ns = percentiles_ns(pauses, config.percentiles)
    if p.heap.limit_bytes and p.heap.used_max_bytes is not None:
        p.heap.used_of_limit = round(p.heap.used_max_bytes / p.heap.limit_bytes, 4)
    p.threads = sorted(stalls.values(), key=lambda s: (not s.main, -s.waited_ns, -(s.waits + s.started)))
    p.timeline = gc_timeline(events, config.timeline_buckets)
    return p


def _spread(acc: list[int], t0: int, width: int, a: int, b: int) -> None:
    """Add the interval [a, b) (ns) to the buckets it covers, each its own share."""
    i = max(0, (a - t0) // width)
    while i < len(acc) and t0 + i * width < b:
        lo, hi = t0 + i * width, t0 + (i + 1) * width
        acc[i] += max(0, min(b, hi) - max(a, lo))
        i += 1


def gc_timeline(events: list[GcLogEvent], buckets: int = 120) -> dict | None:
    """One process's GC over time: per bucket, the logged collection time (`gc_wall_ns`), the logged blocking waits
    of all threads (`blocked_ns`) and of the main thread (`main_blocked_ns`); each interval is [logged end - its
    length, logged end]. Bucket width: whole seconds, at most `buckets` buckets. None without times or under 1 s."""
    timed = [e for e in events if e.ts_ns is not None and e.kind in (COLLECTION, WAIT_DONE)]
    if not timed:
        return None
    t0 = min(e.ts_ns - (e.duration_ns or 0) for e in timed if e.ts_ns is not None)
    t1 = max(e.ts_ns for e in timed if e.ts_ns is not None)
    if t1 - t0 < 1_000_000_000:
        return None
    width = max(1, -(-(t1 - t0) // (buckets * 1_000_000_000))) * 1_000_000_000
    n = (t1 - t0) // width + 1
    gc, blocked, main = [0] * n, [0] * n, [0] * n
    for e in timed:
        end = e.ts_ns or 0
        a = end - (e.duration_ns or 0)
        if e.kind == COLLECTION:
            _spread(gc, t0, width, a, end)
        else:
            _spread(blocked, t0, width, a, end)
            if e.main_thread:
                _spread(main, t0, width, a, end)
    return {"start_ns": t0, "width_ns": width, "gc_wall_ns": gc, "blocked_ns": blocked, "main_blocked_ns": main}


def summarize_gc_log(log: GcLog, config: GcConfig | None = None) -> GcLogReport:
    """Per-process GC summaries of one log, worst first."""
    config = config or GcConfig()
    groups: dict[tuple, list[GcLogEvent]] = {}
    for e in log.events:
        groups.setdefault(_key(e), []).append(e)
    procs = [_process(evs, config) for evs in groups.values()]
    procs.sort(key=lambda p: (-p.main_thread_blocked_ns, -p.main_thread_waits, -p.blocked_ns,
                              -(p.blocking_waits + p.blocking_started), -p.gc_wall_ns, p.pid or 0))
    dalvik = sum(map(_is_dalvik, log.events))
    notes = [LOG_NOTE] if len(log.events) > dalvik else []
    if dalvik:
        notes.append(DALVIK_NOTE)
    if any(e.pid is not None and e.tid is None for e in log.events):
        notes.append("the log format gives no thread ids: blocking waits cannot be put on threads")
    if log.events and not log.year_known and log.clock == "wall":
        notes.append(f"logcat dates carry no year; {log.year} assumed")
    return GcLogReport(log.source, procs, log.counts(), log.lines_scanned, log.clock, notes,
                       [str(w) for w in log.warnings[:50]])


def blocking_events(log: GcLog, pid: int, tid: int | None, start_ns: int, end_ns: int) -> list[GcLogEvent]:
    """The blocking-GC lines (waits, waits' ends, blocking GCs started) of thread `tid` (any thread when None) of
    `pid` whose time falls in [start_ns, end_ns] on the log's clock; a completed wait counts when the wait (its
    logged end minus its length) overlaps the window."""
    out = []
    for e in log.events:
        if e.kind not in BLOCKING_KINDS or e.pid != pid or e.ts_ns is None:
            continue
        if tid is not None and e.tid is not None and e.tid != tid:
            continue
        begin = e.ts_ns - (e.duration_ns or 0)
        if e.ts_ns >= start_ns and begin <= end_ns:
            out.append(e)
    return out


DUMP_NOTE = ("from ART's SIGQUIT dumps: counts and times since each process started (complete, not a log sample); "
             "pauses are given as a sum and a longest per collector, without percentiles")
NO_PID_NOTE = ("{n} dump(s) without their `----- pid N at TIME -----` header (pasted without it, or cut off): pid "
               "and dump time unknown; each is shown on its own, named by its `Cmd line` where it has one")


@dataclass
class GcDumpReport:
    """Per-process GC totals from the process dumps of one input, worst first."""

    source: str
    processes: list[ProcessGc]
    dumps: int
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"source": self.source, "kind": "dump", "dumps": self.dumps,
                "processes": [p.to_dict() for p in self.processes], "notes": self.notes}


def _from_dump(d: ArtGcDump) -> ProcessGc:
    p = ProcessGc(pid=d.pid, process=d.process, dump_time=d.time, pid_unknown=d.pid is None)
    for c in d.collectors:
        if c.iterations:
            p.by_kind[c.name] = c.iterations
            gen = generation_of(c.name)
            p.by_generation[gen] = p.by_generation.get(gen, 0) + c.iterations
    p.collections = d.gc_count if d.gc_count is not None else sum(p.by_kind.values())
    paused = [c.paused_ns for c in d.collectors if c.paused_ns is not None]
    p.pause_total_ns = d.mutator_paused_ns if d.mutator_paused_ns is not None else sum(paused)
    p.pause_max_ns = max((c.paused_max_ns for c in d.collectors if c.paused_max_ns is not None), default=0)
    p.gc_wall_ns = d.gc_time_ns if d.gc_time_ns is not None else sum(c.total_ns or 0 for c in d.collectors)
    p.heap_task_daemon_cpu_ns = d.heap_task_daemon_cpu_ns
    p.freed_bytes = d.bytes_freed if d.bytes_freed is not None else sum(c.freed_bytes or 0 for c in d.collectors)
    p.freed_objects = sum(c.freed_objects or 0 for c in d.collectors)
    p.blocking_started = d.blocking_gc_count or 0
    p.blocking_gc_ns = d.blocking_gc_time_ns
    p.blocked_ns = d.wait_for_gc_ns or 0
    for name, main, state in d.threads_waiting_for_gc:
        st = ThreadStall(None, main, waits=1, causes={state: 1}, name=name)
        p.threads.append(st)
        p.blocking_waits += 1
        p.main_thread_waits += int(main)
    p.threads.sort(key=lambda t: not t.main)
    h = p.heap
    h.used_last_bytes = h.used_max_bytes = d.heap_used_bytes
    h.footprint_max_bytes, h.min_free_percent, h.limit_bytes = d.heap_total_bytes, d.heap_free_percent, \
        d.max_memory_bytes
    if h.limit_bytes and h.used_max_bytes is not None:
        h.used_of_limit = round(h.used_max_bytes / h.limit_bytes, 4)
    return p


def summarize_gc_dumps(dumps: list[ArtGcDump], source: str) -> GcDumpReport:
    """Per-process GC totals from process dumps; a process dumped more than once is taken from its last dump (the
    counters only grow). Worst first: main thread caught waiting for GC, blocking GC time, GC time. A dump without
    a pid (read without its header) is never taken for another dump of the same process: each stands alone."""
    last: dict[tuple, ArtGcDump] = {}
    for d in dumps:
        last[("pid", d.pid) if d.pid is not None else ("dump", d.source, d.line)] = d
    procs = [_from_dump(d) for d in last.values()]
    procs.sort(key=lambda p: (-p.main_thread_waits, -(p.blocking_gc_ns or 0), -p.blocked_ns, -p.gc_wall_ns,
                              p.pid or 0))
    no_pid = sum(d.pid is None for d in dumps)
    notes = ([DUMP_NOTE] if procs else []) + ([NO_PID_NOTE.format(n=no_pid)] if no_pid else [])
    return GcDumpReport(source, procs, len(dumps), notes)
