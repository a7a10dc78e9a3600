"""The format-free view of ART's garbage-collection log lines (logcat, bugreports): one `GcLogEvent` per line, in
a `GcLog`. Sizes are bytes, times integer nanoseconds; a logcat time without a year is placed in `GcLog.year`."""
from __future__ import annotations

from dataclasses import dataclass, field

from droidlag.errors import ReadWarning

# Event kinds, one per family of ART log statement (art/runtime/gc/heap.cc, thread_list.cc).
COLLECTION = "collection"            # "<cause> <collector> GC freed ..., paused ..., total ..."
WAITING_BLOCKING = "waiting_blocking"  # "Waiting for a blocking GC <cause>": a thread starts waiting for a running GC
STARTING_BLOCKING = "starting_blocking"  # "Starting a blocking GC <cause>": a thread runs a GC itself and waits
WAIT_DONE = "wait_done"              # "WaitForGcToComplete blocked <cause> on <running> for <duration>"
CLAMP = "clamp"                      # "Clamp target GC heap from <size> to <size>": the heap hit its growth limit
SOFT_REFS = "soft_refs"              # "Forcing collection of SoftReferences for <size> allocation"
OOM = "oom"                          # "Throwing OutOfMemoryError \"Failed to allocate ...\""
SUSPEND_ALL = "suspend_all"          # "Suspending all threads took: <duration>"
KINDS = (COLLECTION, WAITING_BLOCKING, STARTING_BLOCKING, WAIT_DONE, CLAMP, SOFT_REFS, OOM, SUSPEND_ALL)


@dataclass(frozen=True, slots=True)
class GcLogEvent:
    """One ART GC log line. Fields a line does not carry are None.

    ts_ns: the line's time on `GcLog.clock` (ns); pid/tid: from the logcat prefix; tag: the log tag (ART logs under
    the process name, truncated to its last 15 characters, or `art`/`zygote` on older builds); package: the full
    process name where the format has one (Android Studio). cause: the GC cause (`Alloc`, `Background`,
    `Explicit`, ...); collector: the collector's name as logged (`young concurrent copying`, `concurrent mark
    compact`, ...); generation: `young`, `partial` or `full`. duration_ns: a collection's total time, a wait's time,
    a suspend-all's time. blocked_on: the cause of the GC a `wait_done` waited for. size_bytes: the allocation of a
    soft-reference or OOM line; heap_from/heap_to: a clamp's old and new target; heap_limit_bytes: the growth limit
    where the line states it (clamp target, OOM's growth limit)."""

    kind: str
    line: int
    ts_ns: int | None = None
    pid: int | None = None
    tid: int | None = None
    tag: str | None = None
    package: str | None = None
    cause: str | None = None
    collector: str | None = None
    generation: str | None = None
    freed_objects: int | None = None
    freed_bytes: int | None = None
    freed_los_objects: int | None = None
    freed_los_bytes: int | None = None
    free_percent: int | None = None
    heap_used_bytes: int | None = None
    heap_footprint_bytes: int | None = None
    pauses_ns: tuple[int, ...] = ()
    duration_ns: int | None = None
    blocked_on: str | None = None
    size_bytes: int | None = None
    heap_from_bytes: int | None = None
    heap_to_bytes: int | None = None
    heap_limit_bytes: int | None = None

    @property
    def process(self) -> str | None:
        """The best name of the logging process: the full package name where known, else the tag unless it is a
        generic ART tag."""
        if self.package:
            return self.package
        if self.tag and self.tag not in GENERIC_TAGS:
            return self.tag
        return None

    @property
    def main_thread(self) -> bool | None:
        """The line came from the process's main thread (tid == pid); None when either is unknown."""
        if self.pid is None or self.tid is None:
            return None
        return self.pid == self.tid

    def to_dict(self) -> dict[str, object]:
        d = {k: getattr(self, k) for k in self.__slots__}
        d["pauses_ns"] = list(self.pauses_ns)
        return {k: v for k, v in d.items() if v not in (None, [])}


def generation_of(collector: str) -> str:
    """`young` for young/sticky collectors, `partial` for partial ones (all but the zygote space), else `full`."""
    words = collector.split()
    if "young" in words or "sticky" in words:
        return "young"
    return "partial" if "partial" in words else "full"


# Tags that name the runtime rather than the process (Android 5-7 `art`, Dalvik, Oreo's `zygote` for apps).
GENERIC_TAGS = frozenset({"art", "dalvikvm", "zygote", "zygote64"})


@dataclass
class GcLog:
    """The GC lines of one input. clock: "wall" (logcat date/time, local time of the device), "epoch" (-v epoch),
    "monotonic" (-v monotonic, seconds since boot) or None when lines carry no time. year: the year given to
    dates without one (from the bugreport's header when there is one; `year_known` says so)."""

    source: str
    events: list[GcLogEvent] = field(default_factory=list)
    clock: str | None = None
    year: int | None = None
    year_known: bool = False
    lines_scanned: int = 0
    warnings: list[ReadWarning] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Events per kind."""
        out: dict[str, int] = {}
        for e in self.events:
            out[e.kind] = out.get(e.kind, 0) + 1
        return out


@dataclass(frozen=True, slots=True)
class CollectorStats:
    """One collector's cumulative figures from a SIGQUIT dump (`Dumping cumulative Gc timings`): iterations,
    paused time (sum and longest), total time, objects and bytes freed."""

    name: str
    iterations: int | None = None
    paused_ns: int | None = None
    paused_max_ns: int | None = None
    total_ns: int | None = None
    freed_objects: int | None = None
    freed_bytes: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass
class ArtGcDump:
    """The GC part of one process's ART SIGQUIT dump (thread dump in /data/anr, a bugreport's VM TRACES): counts
    and times since the process started, so complete rather than a log's slow-only sample. Times ns, sizes bytes.
    heap_task_daemon_cpu_ns: HeapTaskDaemon's CPU time (schedstat run time, else utm+stm ticks at HZ).
    threads_waiting_for_gc: threads caught in `WaitingForGcToComplete` / `WaitingPerformingGc` when dumped.
    pid and time are None for a dump read without its `----- pid N at TIME -----` header (pasted without it): they
    are unknown, never guessed."""

    source: str
    line: int
    pid: int | None
    process: str | None = None
    time: str | None = None
    collectors: list[CollectorStats] = field(default_factory=list)
    gc_count: int | None = None
    gc_time_ns: int | None = None
    blocking_gc_count: int | None = None
    blocking_gc_time_ns: int | None = None
    wait_for_gc_ns: int | None = None
    mutator_paused_ns: int | None = None
    heap_free_percent: int | None = None
    heap_used_bytes: int | None = None
    heap_total_bytes: int | None = None
    max_memory_bytes: int | None = None
    bytes_allocated: int | None = None
    bytes_freed: int | None = None
    heap_task_daemon_cpu_ns: int | None = None
    threads_waiting_for_gc: list[tuple[str, bool, str]] = field(default_factory=list)  # (name, main, VM state)

# Dalvik's GC lines (Android 4.4 and older, dalvik/vm/alloc/Heap.cpp), as the log reader records them: the first word
# of a Dalvik collection's collector name, and what a Dalvik wait waits for (its concurrent collection).
DALVIK_COLLECTOR = "dalvik"
DALVIK_WAITED_ON = "GC_CONCURRENT"
