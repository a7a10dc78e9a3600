"""The format-free Trace model: processes, threads and bulk columnar tables (polars), time in integer nanoseconds.

Every reader fills a `TraceBuilder` (builder.py); the builder owns nesting, pairing and state derivation, so each
table has exactly one producer. The schemas below are the contract the analyses read.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import polars as pl

# A process (pid, name, ppid) and a thread (tid, pid, name: pid None when the trace does not say) as the trace names
# them: immutable records made natively (native/src/records.rs), thousands per trace. They read as the named tuples
# they were: attributes, equality and hash by value, iteration and unpacking, indexing, repr, pickling (not ordering,
# slicing or equality with a plain tuple: sort them with a key, compare tuple(record)).
from droidlag._native import Process as Process
from droidlag._native import Thread as Thread
from droidlag.errors import ReadWarning

# A name that reads as an Android process (a package, `pkg:service`), so that a thread of that name can name a
# process the trace otherwise leaves unnamed (Trace.process_name): dotted, no spaces, not the kernel's `<...>`.
_PROCESS_NAME = re.compile(r"^[A-Za-z][\w-]*(?:\.[\w-]+)+(?::[\w.-]+)?\.?$")
# Dotted names of threads that are not an app's main thread: system_server's (android.anim, android.ui, android.bg,
# android.io, android.display, android.fg), and runtime and library threads (kotlinx.coroutines' workers cut to 15
# characters, java.util.Timer-like names). A thread so named never names its process.
_NOT_A_PROCESS_NAME = re.compile(r"^(?:android|androidx|java|javax|kotlin|kotlinx|dalvik|okhttp3?)\.")

# One schema per table; columns documented with their units.
SLICE_SCHEMA = {
    "id": pl.Int64,          # unique within the trace
    "ts": pl.Int64,          # start, ns
    "dur": pl.Int64,         # ns; slices never closed run to the trace end and have closed=False
    "tid": pl.Int64,         # thread (thread slices) or the emitting thread (async slices)
    "pid": pl.Int64,         # process, null when unknown
    "name": pl.Utf8,
    "depth": pl.Int32,       # 0 for a root slice on its track
    "parent_id": pl.Int64,   # enclosing slice on the same track, null at depth 0
    "kind": pl.Utf8,         # "thread" | "async" | "instant"
    "cookie": pl.Int64,      # async cookie, null for thread slices
    "track": pl.Utf8,        # async track name (G/H atrace), null otherwise
    "closed": pl.Boolean,    # False when the end was not in the trace
}

THREAD_STATE_SCHEMA = {
    "ts": pl.Int64,               # ns
    "dur": pl.Int64,              # ns
    "tid": pl.Int64,
    # "Running", "R" (runnable), "R+" (runnable, preempted), "S", "D", "T", "Z", "X", "I", ...: categorical (4 bytes a
    # row, not a 16-byte string view; compares with plain strings as a string column does)
    "state": pl.Categorical,
    "cpu": pl.Int32,              # CPU the thread ran on (Running) or was woken onto (R); null otherwise
    "blocked_function": pl.Utf8,  # kernel function a D-state thread blocked in (sched_blocked_reason), else null
    "io_wait": pl.Boolean,        # from sched_blocked_reason, else null
    "waker_tid": pl.Int64,        # thread that woke it (start of an R interval after sleeping), else null
}

COUNTER_SCHEMA = {
    "ts": pl.Int64,      # ns
    "name": pl.Utf8,     # "cpufreq" (kHz, with cpu), "cpuidle" (state, with cpu), or the atrace counter name
    "value": pl.Float64,
    "cpu": pl.Int32,     # for per-CPU counters
    "pid": pl.Int64,     # for process counters (atrace C|pid|name|value)
}

BINDER_SCHEMA = {
    "ts": pl.Int64,            # client sends the transaction, ns
    "dur": pl.Int64,           # until the client received the reply, ns; null for one-way or unanswered
    "client_tid": pl.Int64,
    "client_pid": pl.Int64,
    "server_tid": pl.Int64,    # thread that received it; null if never received in the trace
    "server_pid": pl.Int64,
    "received_ts": pl.Int64,   # server thread got it, ns
    "reply_ts": pl.Int64,      # server thread sent the reply, ns
    "oneway": pl.Boolean,
    "code": pl.Int64,
    "flags": pl.Int64,
    "debug_id": pl.Int64,
}

BLOCK_SCHEMA = {
    "ts": pl.Int64,         # issued to the device driver, ns
    "dur": pl.Int64,        # until completion, ns; null if not completed in the trace
    "dev": pl.Int64,        # (major << 20) | minor, as the kernel's dev_t
    "sector": pl.Int64,
    "nr_sectors": pl.Int64,
    "bytes": pl.Int64,
    "rwbs": pl.Utf8,        # kernel rwbs flags, e.g. "WS", "R", "FWS", "DS"
    "direction": pl.Utf8,   # "read" | "write" | "discard" | "flush" | "other"
    "tid": pl.Int64,        # issuing thread, null if unknown
    "comm": pl.Utf8,
}

FRAME_TIMELINE_SCHEMA = {
    "ts": pl.Int64,                  # ns
    "dur": pl.Int64,                 # ns
    "kind": pl.Utf8,                 # "expected" | "actual"
    "scope": pl.Utf8,                # "display" (SurfaceFlinger) | "surface" (an app layer)
    "pid": pl.Int64,
    "layer_name": pl.Utf8,           # surface frames only
    "token": pl.Int64,               # surface frame token (app vsync id) or display frame token
    "display_frame_token": pl.Int64, # surface frames: the display frame that presented it
    "jank_type": pl.Utf8,            # actual only: "None", "App Deadline Missed, Buffer Stuffing", ...
    "present_type": pl.Utf8,         # actual only: "On-time Present", "Late Present", "Early Present", "Dropped Frame", ...
    "on_time_finish": pl.Boolean,
    "gpu_composition": pl.Boolean,
    "prediction_type": pl.Utf8,
    "jank_severity": pl.Utf8,
    "ended": pl.Boolean,             # False when the trace has no end event for it (dur then runs to the trace end)
}

# FrameTimeline start rows as the native decoder hands them over when a builder also holds single events
# (FrameTimelineEvents.start_rows): the table's columns but dur and ended, the start event's cookie second.
FRAME_TIMELINE_START_SCHEMA = {"ts": pl.Int64, "cookie": pl.Int64,
                               **{k: v for k, v in FRAME_TIMELINE_SCHEMA.items() if k not in ("ts", "dur", "ended")}}



@dataclass
class Trace:
    """A whole trace, normalized. Bulk data in polars tables (schemas above); ns timestamps on the trace's clock."""

    format: str
    path: str
    start_ns: int
    end_ns: int
    processes: dict[int, Process]
    threads: dict[int, Thread]
    slices: pl.DataFrame
    thread_states: pl.DataFrame
    counters: pl.DataFrame
    binder: pl.DataFrame
    block: pl.DataFrame
    frame_timeline: pl.DataFrame
    cpu_max_freq_khz: dict[int, int] = field(default_factory=dict)
    cpu_class: dict[int, str] = field(default_factory=dict)   # cpu -> "little" | "mid" | "big" (guessed)
    metadata: dict[str, str] = field(default_factory=dict)     # device, build, kernel, ... where the trace says
    warnings: list[ReadWarning] = field(default_factory=list)
    has_sched: bool = False
    has_waking: bool = False
    has_blocked_reason: bool = False

    @property
    def duration_ns(self) -> int:
        return max(0, self.end_ns - self.start_ns)

    def thread_name(self, tid: int) -> str | None:
        t = self.threads.get(tid)
        return t.name if t else None

    def process_of(self, tid: int) -> int | None:
        t = self.threads.get(tid)
        return t.pid if t else None

    def process_name(self, pid: int | None) -> str | None:
        """The process's name; else its main thread's (tid = pid); else, when the trace knows neither, the name its
        threads share if they all have one and it reads as an Android process name (dotted: `com.example`, a
        kernel comm cut to 15 characters such as `droid.launcher3`; not a framework or library thread's name such as
        system_server's `android.anim`). An atrace capture can name an app only so:
        `com.example-123456 (-----) ... B|2507|Choreographer#doFrame` gives thread 123456 of pid 2507 and nothing
        else about 2507."""
        if pid is None:
            return None
        p = self.processes.get(pid)
        if p and p.name:
            return p.name
        t = self.threads.get(pid)
        if t is not None:
            return t.name
        names = {t.name for t in self.threads.values() if t.pid == pid}
        if len(names) == 1:
            (name,) = names
            if name and _PROCESS_NAME.match(name) and not _NOT_A_PROCESS_NAME.match(name):
                return name
        return None

    def summary(self) -> dict[str, Any]:
        """What the trace holds, as counts (the `droidlag info` JSON)."""
        ft = self.frame_timeline
        counter_names = self.counters.get_column("name") if self.counters.height else pl.Series([], dtype=pl.Utf8)
        jank_counts: dict[str, int] = {}
        if ft.height:
            app_actual = ft.filter((pl.col("kind") == "actual") & (pl.col("scope") == "surface"))
            for jt, n in app_actual.group_by("jank_type").len().iter_rows():
                jank_counts[str(jt)] = int(n)
        states = self.thread_states
        return {
            "format": self.format,
            "path": self.path,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
            "duration_ns": self.duration_ns,
            "processes": len(self.processes),
            "threads": len(self.threads),
            "slices": self.slices.height,
            "sched_intervals": states.height,
            "has_sched": self.has_sched,
            "has_waking": self.has_waking,
            "has_blocked_reason": self.has_blocked_reason,
            "blocked_reason_intervals": int(states.get_column("blocked_function").is_not_null().sum()) if states.height else 0,
            "counters": self.counters.height,
            "cpu_frequency_samples": int((counter_names == "cpufreq").sum()) if self.counters.height else 0,
            "binder_transactions": self.binder.height,
            "binder_replies": int(self.binder.get_column("dur").is_not_null().sum()) if self.binder.height else 0,
            "block_requests": self.block.height,
            "frame_timeline": {
                "rows": ft.height,
                "display_actual": int(((ft["kind"] == "actual") & (ft["scope"] == "display")).sum()) if ft.height else 0,
                "surface_actual": int(((ft["kind"] == "actual") & (ft["scope"] == "surface")).sum()) if ft.height else 0,
                "surface_jank_types": dict(sorted(jank_counts.items(), key=lambda kv: (-kv[1], kv[0]))),
            },
            "cpus": {str(c): {"max_freq_khz": self.cpu_max_freq_khz.get(c), "class": self.cpu_class.get(c)}
                     for c in sorted(set(self.cpu_max_freq_khz) | set(self.cpu_class))},
            "metadata": self.metadata,
            "warnings": [w.to_dict() for w in self.warnings],
        }
