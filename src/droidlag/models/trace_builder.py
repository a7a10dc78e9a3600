"""TraceBuilder: the one place where raw events become a Trace.

Readers decode their format and call the methods below in any order (events need not be time-sorted); `build()`
sorts, nests slices per thread, derives thread-state intervals from sched events, pairs binder transactions with
their replies and block requests with their completions, and guesses the CPU topology.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeAlias, cast

import numpy as np
import polars as pl

from droidlag._native import (
    Column,
    FrameTimelineEvents,
    SliceEvents,
    ThreadPids,
    add_main_threads,
    processes_of,
    threads_of,
)
from droidlag._native import binder_calls as _binder_calls
from droidlag._native import block_requests as _block_requests
from droidlag._native import frame_timeline_pairing as _frame_timeline_pairing
from droidlag.errors import ReadWarning
from droidlag.models import columns
from droidlag.models.thread_states import BLOCKED as _BLOCKED
from droidlag.models.thread_states import NONE as _NONE
from droidlag.models.thread_states import RUNNING as _RUNNING
from droidlag.models.thread_states import SWITCH as _SWITCH
from droidlag.models.thread_states import WAKING as _WAKING
from droidlag.models.thread_states import derive_thread_states
from droidlag.models.trace import (
    BINDER_SCHEMA,
    BLOCK_SCHEMA,
    COUNTER_SCHEMA,
    FRAME_TIMELINE_SCHEMA,
    FRAME_TIMELINE_START_SCHEMA,
    SLICE_SCHEMA,
    THREAD_STATE_SCHEMA,
    Process,
    Thread,
    Trace,
)

# binder_transaction flags
TF_ONE_WAY = 0x01



# An int column as the readers hand it over: numpy array, list, array('q'), a native buffer
IntColumn: TypeAlias = "np.ndarray | Sequence[int] | Column"
# block_rq_issue (ts, dev, sector, nr_sectors, bytes, rwbs, tid, comm) and block_rq_complete (ts, dev, sector,
# nr_sectors, rwbs, error) rows
BlockIssue: TypeAlias = tuple[int, int, int, int, int, str, "int | None", "str | None"]
BlockComplete: TypeAlias = tuple[int, int, int, int, str, int]

_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
MAX_CPU = (1 << 16) - 1   # far above any device; the thread-state cpu column is 32-bit
_NONE_I32 = np.iinfo(np.int32).min     # None in the narrow (int32) sched cpu column


def check_i64(*values: int | None) -> None:
    """OverflowError for a value that does not fit the tables' signed 64-bit columns (a text reader's damaged line
    can hold any number of digits); readers catch it and skip that event with a warning naming the line."""
    for v in values:
        if v is not None and not _I64_MIN <= v <= _I64_MAX:
            raise OverflowError(f"{v} does not fit in 64 bits")


def _int64(values: IntColumn) -> np.ndarray:
    """A sequence of ints (list, array('q'), protobuf repeated field, numpy array) as an int64 numpy array."""
    if isinstance(values, np.ndarray):
        return values.astype(np.int64, copy=False)
    if isinstance(values, Column):
        return columns.int64(values)
    return np.fromiter(values, dtype=np.int64, count=len(values)) if not isinstance(values, list) \
        else np.array(values, dtype=np.int64)


def _column(value: IntColumn | int | None, n: int) -> np.ndarray:
    """A scalar (None -> _NONE) broadcast to n rows, or a per-row sequence (None entries -> _NONE)."""
    if value is None:
        return np.full(n, _NONE, dtype=np.int64)
    if isinstance(value, (int, np.integer)):
        return np.full(n, int(value), dtype=np.int64)
    if isinstance(value, list) and None in value:
        value = [_NONE if v is None else v for v in value]
    arr = _int64(value)
    if len(arr) != n:
        raise ValueError(f"column of {len(arr)} values for {n} events")
    return arr


class TraceBuilder:
    """Collects raw events from one file; `build()` returns the Trace."""

    def __init__(self, fmt: str, path: str):
        self.format = fmt
        self.path = str(path)
        self.warnings: list[ReadWarning] = []
        self.metadata: dict[str, str] = {}
        self._processes: dict[int, Process] = {}
        self._threads: dict[int, Thread] = {}
        self._min_ts: int | None = None
        self._max_ts: int | None = None
        # atrace/slice events, gathered natively in arrival order (the tie-break at equal timestamps)
        self._slice_ev = SliceEvents()
        # sched events as columns (ts, kind, cpu, a, b, aux): per-event calls append to the lists, bulk calls add
        # numpy chunks (the lists are flushed first, so insertion order -- the tie-break at equal (ts, kind) --
        # is kept). Switch: a=prev, b=next, aux=prev_state code; waking: a=tid, b=waker, aux=0; blocked reason:
        # a=tid, aux=index into _blocked. None is _NONE.
        self._sched_lists: tuple[list[int], ...] = ([], [], [], [], [], [])
        self._sched_chunks: list[tuple[np.ndarray, ...]] = []
        self._bad_cpu_events = 0
        self._state_codes: dict[str, int] = {_RUNNING: 0, "R": 1}
        self._blocked: list[tuple[str | None, bool | None]] = []
        self._has_switch = False
        self._states_built: tuple[int, pl.DataFrame] | None = None    # (trace end, table) once derived
        self._slices_built: tuple[int, pl.DataFrame] | None = None    # (trace end, table) once nested
        self._has_waking = False
        self._has_blocked = False
        # counter samples: per-event ones gather natively with atrace's, bulk calls add frames (in arrival order)
        self._counter_chunks: list[pl.DataFrame] = []
        self._counters_sorted = False     # the one chunk is in time order
        self._binder_tx: list[tuple[int, int, int, int | None, int | None, bool, int, int]] = []        # (ts, tid, debug_id, to_proc, to_thread, reply, flags, code)
        self._binder_rx: list[tuple[int, int, int]] = []        # (ts, tid, debug_id)
        self._binder_tx_chunks: list[list[np.ndarray]] = []   # bulk events (binder_many), as columns
        self._binder_rx_chunks: list[list[np.ndarray]] = []
        self._block_issue: list[BlockIssue] = []      # (ts, dev, sector, nr_sectors, bytes, rwbs, tid, comm)
        self._block_complete: list[BlockComplete] = []   # (ts, dev, sector, nr_sectors, rwbs, error)
        self._ft_start: dict[int, tuple[Any, ...]] = {}   # cookie -> row in FRAME_TIMELINE_SCHEMA order, dur left out
        self._ft_end: dict[int, int] = {}
        self._ft_chunks: list[pl.DataFrame] = []        # a decoder's start rows, beside single events (after them)
        self._ft_end_chunks: list[tuple[np.ndarray, np.ndarray]] = []     # bulk ends as (cookie, ts) columns
        self._ft_native: list[FrameTimelineEvents] = []    # a decoder's events, made into the table natively
        self._cpu_max_freq: dict[int, int] = {}
        self._cpufreq_max: dict[int, int] = {}     # each CPU's highest cpufreq sample (kHz): _see_cpufreq
        self._known_pids: ThreadPids | None = None    # the threads' pids, natively (for slices and binder)
        # slices whose name holds U+FFFD (undecodable bytes replaced), counted when the slices are built
        self.replaced_slice_names = 0

    # ---- time range ---------------------------------------------------------------------------------------
    def _see(self, ts: int) -> None:
        if self._min_ts is None or ts < self._min_ts:
            self._min_ts = ts
        if self._max_ts is None or ts > self._max_ts:
            self._max_ts = ts

    def see_time(self, ts: int) -> None:
        """Widen the trace's time range to include ts (ns) without adding an event."""
        self._see(ts)

    def warn(self, message: str, line: int | None = None, offset: int | None = None) -> None:
        self.warnings.append(ReadWarning(self.path, message, line=line, offset=offset))

    # ---- processes and threads ----------------------------------------------------------------------------
    def process(self, pid: int, name: str | None = None, ppid: int | None = None) -> None:
        """Declare a process; a later declaration's name and ppid replace the earlier ones (an empty name or a
        None ppid leaves them), as trace processor's process table takes each process-tree listing: an Android app
        process is listed under its zygote's name, or `<pre-initialized>`, until it takes its package name."""
        check_i64(pid, ppid)
        old = self._processes.get(pid)
        if old is None:
            self._processes[pid] = Process(pid, name or None, ppid)
        elif (name and name != old.name) or (ppid is not None and ppid != old.ppid):
            self._processes[pid] = Process(pid, name or old.name, ppid if ppid is not None else old.ppid)

    def processes_many(self, rows: Iterable[tuple[int, str | None, int | None]]) -> None:
        """Declare many processes (pid, name, ppid) as `process` would, one by one; a process not seen before is
        added directly (the common case of a process tree; as in threads_many, the numbers are a decoder's 64-bit
        ones, not checked again). The first declarations (a list, each id once) are made natively in one call."""
        processes = self._processes
        if not processes and isinstance(rows, list) and (made := processes_of(rows)) is not None:
            self._processes = made
            return
        for pid, name, ppid in rows:
            if pid in processes:
                self.process(pid, name, ppid)
            else:
                processes[pid] = Process(pid, name or None, ppid)

    def thread(self, tid: int, pid: int | None = None, name: str | None = None, overwrite_name: bool = False) -> None:
        """Declare a thread; fills in pid or name when they were unknown (or replaces the name if asked)."""
        check_i64(tid, pid)
        old = self._threads.get(tid)
        if old is None:
            self._threads[tid] = Thread(tid, pid, name)
            return
        new_pid = old.pid if old.pid is not None else pid
        new_name = name if (name and (overwrite_name or not old.name)) else old.name
        if new_pid != old.pid or new_name != old.name:
            self._threads[tid] = Thread(tid, new_pid, new_name)

    def threads_many(self, rows: Iterable[tuple[int, int | None, str | None]]) -> None:
        """Declare many threads (tid, pid, name) as `thread` would, one by one; a thread not seen before is added
        directly (the common case of a process tree). The first declarations (a list, each id once) are made
        natively in one call."""
        threads = self._threads
        if not threads and isinstance(rows, list) and (made := threads_of(rows)) is not None:
            self._threads = made
            return
        for tid, pid, name in rows:
            if tid in threads:
                self.thread(tid, pid, name)
            else:
                threads[tid] = Thread(tid, pid, name)

    def adopt_records(self, processes: dict[int, Process], threads: dict[int, Thread]) -> None:
        """Take a decoder's records (`{pid: Process}`, `{tid: Thread}`, each id once, its declarations already folded
        by the rules of `process` and `thread`) as this trace's first ones; with records already declared, they are
        declared one by one instead."""
        if self._processes or self._threads:
            self.processes_many([(p.pid, p.name, p.ppid) for p in processes.values()])
            self.threads_many([(t.tid, t.pid, t.name) for t in threads.values()])
            return
        self._processes, self._threads = processes, threads

    # ---- slices -------------------------------------------------------------------------------------------
    def atrace(self, ts: int, tid: int, payload: str, line: int | None = None) -> None:
        """One atrace/tracing_mark_write payload: B|pid|name, E[|pid], S/F|pid|name|cookie, C|pid|name|value,
        G/H|pid|track|name|cookie (async on a named track), N|pid|track|name and I|pid|name (instants). Parsed by
        the native core; the thread pids, counters and warnings it implies are applied by `build()`."""
        self._slice_ev.atrace(ts, tid, payload, line)

    def adopt_slice_events(self, events: SliceEvents) -> None:
        """Take a reader's natively gathered slice events (atrace parsed in the decoder) as this trace's first ones,
        and apply what they imply at once (thread pids, counters, warnings)."""
        if len(self._slice_ev):
            raise ValueError("slice events already gathered")
        self._slice_ev = events
        self._apply_atrace_effects()

    def _apply_atrace_effects(self) -> None:
        threads, counters, warnings, (lo, hi), bad_cpus, cpufreq_max = self._slice_ev.take_effects()
        self._see_cpufreq(cpufreq_max)
        if bad_cpus:    # damaged input: a CPU number no device has (the column is 32-bit)
            self.warn(f"{bad_cpus} counter sample(s) with a CPU number outside 32 bits; their cpu is left empty")
        if lo is not None and hi is not None:
            self._see(lo)
            self._see(hi)
        known = self._threads
        for tid, pid in threads:    # (a thread whose pid is known already keeps it: `thread` would change nothing)
            t = known.get(tid)
            if t is None or t.pid is None:
                self.thread(tid, pid)
        if len(counters):
            # the native samples come in time order (ties in arrival order): one chunk alone needs no sort
            self._counter_chunks.append(columns.table(counters, COUNTER_SCHEMA))
            self._counters_sorted = len(self._counter_chunks) == 1
        for what, head, line in warnings:
            text = "atrace payload too short" if what == "too short" else f"atrace payload with {what}"
            self.warn(f"{text}: {head!r}", line=line)

    def slice_begin(self, ts: int, tid: int, name: str, pid: int | None = None) -> None:
        """A thread slice begins (track events and other sources that are not atrace text)."""
        self._see(ts)
        self._slice_ev.begin(ts, tid, name, pid)

    def slice_end(self, ts: int, tid: int) -> None:
        self._see(ts)
        self._slice_ev.end(ts, tid)

    def slice_instant(self, ts: int, tid: int, name: str, pid: int | None = None) -> None:
        """An instant on a thread (a slice of duration 0, kind "instant", nested in the thread's open slices)."""
        self._see(ts)
        self._slice_ev.instant(ts, tid, name, pid)

    # ---- scheduling ---------------------------------------------------------------------------------------
    def sched_switch(self, ts: int, cpu: int, prev_tid: int, prev_state: str, next_tid: int,
                     prev_comm: str | None = None, next_comm: str | None = None) -> None:
        """prev_tid leaves cpu in prev_state ("R", "R+", "S", "D", "D|K", ...); next_tid starts running.
        tid 0 is the idle task and gets no intervals."""
        check_i64(ts, cpu, prev_tid, next_tid)
        self._see(ts)
        ts_, kind, cpus, a, b, aux = self._sched_lists
        ts_.append(ts)
        kind.append(_SWITCH)
        cpus.append(_NONE if cpu is None else cpu)
        a.append(prev_tid)
        b.append(next_tid)
        aux.append(self._state_code(prev_state or "R"))
        self._has_switch = True
        if prev_comm and prev_tid:
            self._name_from_comm(prev_tid, prev_comm)
        if next_comm and next_tid:
            self._name_from_comm(next_tid, next_comm)

    def _state_code(self, state: str) -> int:
        code = self._state_codes.get(state)
        if code is None:
            code = self._state_codes[state] = len(self._state_codes)
        return code

    def _name_from_comm(self, tid: int, comm: str) -> None:
        t = self._threads.get(tid)
        if t is None:
            self._threads[tid] = Thread(tid, None, comm)
        elif not t.name:
            self._threads[tid] = Thread(tid, t.pid, comm)

    def sched_waking(self, ts: int, tid: int, target_cpu: int | None = None, waker_tid: int | None = None,
                     comm: str | None = None) -> None:
        """tid is woken (sched_waking or sched_wakeup) by waker_tid, to run on target_cpu."""
        check_i64(ts, tid, target_cpu, waker_tid)
        self._see(ts)
        self._has_waking = True
        ts_, kind, cpus, a, b, aux = self._sched_lists
        ts_.append(ts)
        kind.append(_WAKING)
        cpus.append(_NONE if target_cpu is None else target_cpu)
        a.append(tid)
        b.append(_NONE if waker_tid is None else waker_tid)
        aux.append(0)
        if comm and tid:
            self._name_from_comm(tid, comm)

    def sched_blocked_reason(self, ts: int, tid: int, function: str | None, io_wait: bool | None = None) -> None:
        """The kernel function a thread blocked in, reported when the D-state thread is woken."""
        check_i64(ts, tid)
        self._see(ts)
        self._has_blocked = True
        ts_, kind, cpus, a, b, aux = self._sched_lists
        ts_.append(ts)
        kind.append(_BLOCKED)
        cpus.append(_NONE)
        a.append(tid)
        b.append(_NONE)
        aux.append(len(self._blocked))
        self._blocked.append((function, io_wait))

    # ---- bulk scheduling (array-shaped sources: Perfetto compact_sched, per-bundle columns) ----------------
    def sched_switch_many(self, ts: IntColumn, cpu: IntColumn | int | None, prev_tid: IntColumn,
                          prev_state: IntColumn | Sequence[str | None], next_tid: IntColumn,
                          decode_state: Callable[[int], str] | None = None) -> None:
        """Many sched_switch events at once, each as `sched_switch` would take it (no comms: name threads with
        `thread`). ts (ns), prev_tid, next_tid: int sequences of one length; cpu: one int for all or a sequence;
        prev_state: state strings, or ints that `decode_state` turns into state strings (looked up once per
        distinct value)."""
        ts = _int64(ts)
        n = len(ts)
        if not n:
            return
        if decode_state is None:
            states = cast("Sequence[str | None]", prev_state)
            codes = np.fromiter((self._state_code(s or "R") for s in states), dtype=np.int64, count=n)
        else:
            codes = self._decoded_state_codes(_int64(cast(IntColumn, prev_state)), decode_state)
        self._add_sched_chunk(ts, _SWITCH, _column(cpu, n), _column(prev_tid, n), _column(next_tid, n), codes)
        self._has_switch = True

    def _decoded_state_codes(self, raw: np.ndarray, decode_state: Callable[[int], str]) -> np.ndarray:
        """The state code of each raw prev_state value, `decode_state` called once per distinct value."""
        if not len(raw):
            return np.zeros(0, dtype=np.int64)
        lo, hi = int(raw.min()), int(raw.max())
        if 0 <= lo and hi < 1 << 20:     # kernel state bits and code tables: a direct lookup, no sort
            present = np.flatnonzero(np.bincount(raw, minlength=hi + 1))
            lut = np.zeros(hi + 1, dtype=np.int64)
            lut[present] = [self._state_code(decode_state(int(v)) or "R") for v in present]
            codes: np.ndarray = lut[raw]
            return codes
        distinct, inverse = np.unique(raw, return_inverse=True)
        lut = np.array([self._state_code(decode_state(int(v)) or "R") for v in distinct], dtype=np.int64)
        return lut[inverse.reshape(-1)]

    def sched_stream(self, cols: dict[str, Any], decode_state: Callable[[int], str],
                     blocked_payloads: list[tuple[str | None, bool | None]]) -> None:
        """A decoder's whole sched stream at once, already in the thread-state pass's narrow columns (ts int64, kind
        uint8, cpu int32 with its minimum for none, a and b int64, as buffers): its switches, then wakings, then
        blocked reasons, each group in file order, events on a CPU number no device has left out ("bad_cpu" of
        them). "switch_state" holds each switch's raw prev_state, which decode_state names; "blocked_index" each
        blocked reason's index into blocked_payloads [(function, io_wait)] (each distinct payload once: many reasons
        name one); "range" the (first, last) time of every event, those left out included; "counts" the (switches,
        wakings, blocked reasons) there were. The same events through sched_switch_many, sched_waking_many and
        sched_blocked_reason_many make the same table."""
        n_switch, n_waking, n_blocked = cols["counts"]
        if cols["range"] is not None:
            self._see(cols["range"][0])
            self._see(cols["range"][1])
        self._has_switch |= n_switch > 0
        self._has_waking |= n_waking > 0
        self._has_blocked |= n_blocked > 0
        self._bad_cpu_events += cols["bad_cpu"]
        kind = np.frombuffer(cols["kind"], dtype=np.uint8)
        if not len(kind):
            return
        blocked = columns.int32(cols["blocked_index"])
        if len(blocked) != n_blocked:
            raise ValueError(f"{len(blocked)} payload indices for {n_blocked} blocked reasons")
        if n_blocked and not (0 <= int(blocked.min()) and int(blocked.max()) < len(blocked_payloads)):
            raise ValueError(f"blocked reasons name payloads outside the {len(blocked_payloads)} given")
        first = len(self._blocked)
        self._blocked.extend(blocked_payloads)
        codes = self._decoded_state_codes(columns.int64(cols["switch_state"]), decode_state)
        aux = np.zeros(len(kind), dtype=np.int32)
        aux[:len(codes)] = codes
        if len(blocked):
            aux[len(kind) - len(blocked):] = blocked + first
        self._flush_sched_lists()
        self._sched_chunks.append((columns.int64(cols["ts"]), kind, columns.int32(cols["cpu"]), columns.int64(cols["a"]),
                                   columns.int64(cols["b"]), aux))

    def sched_waking_many(self, ts: IntColumn, tid: IntColumn, target_cpu: IntColumn | int | None = None,
                          waker_tid: IntColumn | int | None = None) -> None:
        """Many sched_waking events at once (no comms). ts (ns), tid: int sequences; target_cpu and waker_tid:
        None, one int for all, or a sequence (None entries allowed in lists)."""
        ts = _int64(ts)
        n = len(ts)
        if not n:
            return
        self._add_sched_chunk(ts, _WAKING, _column(target_cpu, n), _column(tid, n), _column(waker_tid, n),
                              np.zeros(n, dtype=np.int64))
        self._has_waking = True

    def sched_blocked_reason_many(self, ts: IntColumn, tid: IntColumn, payloads: list[tuple[str | None, bool | None]]) -> None:
        """Many sched_blocked_reason events at once: ts (ns) and tid int sequences, payloads [(function, io_wait)]
        of the same length."""
        ts = _int64(ts)
        n = len(ts)
        if not n:
            return
        if len(payloads) != n:
            raise ValueError(f"{len(payloads)} payloads for {n} events")
        first = len(self._blocked)
        self._blocked.extend(payloads)
        self._add_sched_chunk(ts, _BLOCKED, np.full(n, _NONE, dtype=np.int64), _column(tid, n),
                              np.full(n, _NONE, dtype=np.int64), np.arange(first, first + n, dtype=np.int64))
        self._has_blocked = True

    def _add_sched_chunk(self, ts: np.ndarray, kind: int, cpu: np.ndarray, a: np.ndarray, b: np.ndarray,
                         aux: np.ndarray) -> None:
        self._flush_sched_lists()
        self._see(int(ts.min()))
        self._see(int(ts.max()))
        self._keep_sched_chunk(ts, np.full(len(ts), kind, dtype=np.uint8), cpu, a, b, aux)

    def _flush_sched_lists(self) -> None:
        lists = self._sched_lists
        if lists[0]:
            cols = [np.array(col, dtype=np.int64) for col in lists]
            for col in lists:
                col.clear()
            self._keep_sched_chunk(cols[0], cols[1].astype(np.uint8), cols[2], cols[3], cols[4], cols[5])

    def _keep_sched_chunk(self, ts: np.ndarray, kind: np.ndarray, cpu: np.ndarray, a: np.ndarray, b: np.ndarray,
                          aux: np.ndarray) -> None:
        """Keep a chunk of the sched stream in the native pass's narrow columns (_SCHED_DTYPES: 33 bytes an event,
        the largest thing a long trace holds before its states are derived). Events on a CPU number no device has
        (damaged input; the thread-state cpu column is 32-bit) are dropped here and counted for a warning."""
        bad = (cpu != _NONE) & ((cpu < 0) | (cpu > MAX_CPU))
        if bad.any():
            self._bad_cpu_events += int(bad.sum())
            keep = ~bad
            ts, kind, cpu, a, b, aux = (x[keep] for x in (ts, kind, cpu, a, b, aux))
        cpu32 = np.where(cpu == _NONE, _NONE_I32, cpu).astype(np.int32)
        self._sched_chunks.append((_int64(ts), kind, cpu32, _int64(a), _int64(b), aux.astype(np.int32)))

    # ---- counters -----------------------------------------------------------------------------------------
    def counter(self, ts: int, name: str, value: float, cpu: int | None = None, pid: int | None = None) -> None:
        """One counter sample (ts ns), kept in arrival order with the atrace counters (C|pid|name|value)."""
        self._slice_ev.counter(ts, name, float(value), cpu, pid)

    def counter_many(self, ts: IntColumn, name: str, values: Sequence[float] | np.ndarray,
                     cpu: IntColumn | int | None = None, pid: IntColumn | int | None = None) -> None:
        """Many samples of one counter at once: ts (ns) and values sequences of one length; cpu and pid None, one
        value for all, or a sequence."""
        ts = _int64(ts)
        n = len(ts)
        if not n:
            return
        values = np.asarray(values, dtype=np.float64)
        cols: dict[str, np.ndarray | pl.Series] = {"ts": ts, "name": pl.Series([name], dtype=pl.Utf8).new_from_index(0, n), "value": values}
        for key, v in (("cpu", cpu), ("pid", pid)):
            if v is None or isinstance(v, (int, np.integer)):
                one = pl.Series([None if v is None else int(v)], dtype=COUNTER_SCHEMA[key])
                cols[key] = one.new_from_index(0, n)
            else:
                per_row = columns.int64(v) if isinstance(v, Column) else v
                cols[key] = pl.Series(key, per_row, dtype=COUNTER_SCHEMA[key], strict=False)
        for key, col in cols.items():
            if len(col) != n:
                raise ValueError(f"{key}: {len(col)} values for {n} samples")
        self._see(int(ts.min()))
        self._see(int(ts.max()))
        self._apply_atrace_effects()     # samples before these keep their place
        chunk = columns.frame(cols, COUNTER_SCHEMA)
        self._counter_chunks.append(chunk)
        self._counters_sorted = False
        if name == "cpufreq":
            self._see_cpufreq(self._highest_per_cpu(chunk).items())

    def _see_cpufreq(self, highest: Iterable[tuple[int, int]]) -> None:
        """Keep each CPU's highest cpufreq sample (kHz) of a batch of counter samples: the maximum the trace implies
        where it states none (computed natively for the samples gathered natively, by _highest_per_cpu for
        counter_many's)."""
        seen = self._cpufreq_max
        for cpu, khz in highest:
            if khz > seen.get(cpu, khz - 1):
                seen[cpu] = khz

    def cpu_frequency(self, ts: int, cpu: int, khz: float) -> None:
        self.counter(ts, "cpufreq", khz, cpu=cpu)

    def cpu_max_frequency(self, cpu: int, khz: int) -> None:
        """The CPU's maximum frequency where the trace states it (cpu_info, sysfs dumps)."""
        check_i64(cpu, int(khz))
        self._cpu_max_freq[cpu] = int(khz)

    # ---- binder -------------------------------------------------------------------------------------------
    def binder_transaction(self, ts: int, tid: int, debug_id: int, reply: bool, flags: int = 0, code: int = 0,
                           to_proc: int | None = None, to_thread: int | None = None) -> None:
        """binder_transaction ftrace event on the sending thread (a call, or a reply when reply=True)."""
        check_i64(ts, tid, debug_id, flags, code, to_proc, to_thread)
        self._see(ts)
        self._binder_tx.append((ts, tid, debug_id, to_proc, to_thread, bool(reply), flags, code))

    def binder_transaction_received(self, ts: int, tid: int, debug_id: int) -> None:
        check_i64(ts, tid, debug_id)
        self._see(ts)
        self._binder_rx.append((ts, tid, debug_id))

    def binder_many(self, transactions: Sequence[IntColumn], received: Sequence[IntColumn]) -> None:
        """Many binder events at once: transactions as 8 int sequences (ts, tid, debug_id, to_proc, to_thread,
        reply 0/1, flags, code; NONE for an unknown to_proc/to_thread), received as 3 (ts, tid, debug_id)."""
        tx = [_int64(c) for c in transactions]
        rx = [_int64(c) for c in received]
        for ts in (tx[0], rx[0]):
            if len(ts):
                self._see(int(ts.min()))
                self._see(int(ts.max()))
        self._binder_tx_chunks.append(tx)
        self._binder_rx_chunks.append(rx)

    # ---- block I/O ----------------------------------------------------------------------------------------
    def block_issue(self, ts: int, dev: int, sector: int, nr_sectors: int, rwbs: str, nbytes: int | None = None,
                    tid: int | None = None, comm: str | None = None) -> None:
        check_i64(ts, dev, sector, nr_sectors, nbytes, tid)
        self._see(ts)
        self._block_issue.append((ts, dev, sector, nr_sectors,
                                  nbytes if nbytes is not None else nr_sectors * 512, rwbs, tid, comm))

    def block_complete(self, ts: int, dev: int, sector: int, nr_sectors: int, rwbs: str, error: int = 0) -> None:
        check_i64(ts, dev, sector, nr_sectors, error)
        self._see(ts)
        self._block_complete.append((ts, dev, sector, nr_sectors, rwbs, error))

    def block_many(self, issues: list[BlockIssue], completes: list[BlockComplete]) -> None:
        """Many block requests at once: issues as rows (ts, dev, sector, nr_sectors, bytes, rwbs, tid, comm),
        completions as rows (ts, dev, sector, nr_sectors, rwbs, error)."""
        for rows in (issues, completes):
            if rows:
                self._see(min(r[0] for r in rows))
                self._see(max(r[0] for r in rows))
        self._block_issue.extend(issues)
        self._block_complete.extend(completes)

    # ---- FrameTimeline ------------------------------------------------------------------------------------
    def frame_timeline_start(self, ts: int, cookie: int, kind: str, scope: str, pid: int | None, token: int | None,
                             display_frame_token: int | None = None, layer_name: str | None = None,
                             jank_type: str | None = None, present_type: str | None = None,
                             on_time_finish: bool | None = None, gpu_composition: bool | None = None,
                             prediction_type: str | None = None, jank_severity: str | None = None) -> None:
        """An expected/actual display or surface frame starts; its end comes by cookie in frame_timeline_end."""
        self._see(ts)
        self._ft_start[cookie] = (ts, kind, scope, pid, layer_name, token, display_frame_token, jank_type,
                                  present_type, on_time_finish, gpu_composition, prediction_type, jank_severity)

    def frame_timeline_end(self, ts: int, cookie: int) -> None:
        self._see(ts)
        self._ft_end[cookie] = ts

    def frame_timeline_events(self, events: FrameTimelineEvents) -> None:
        """A decoder's FrameTimeline events, gathered natively: the table is made natively when the trace's end is
        known, by the same rules as the events given one by one (a later start or end of a cookie replaces an
        earlier one; frames without an end run to the trace's end)."""
        span = events.range      # (computed natively over every event: asked once)
        if span is not None:
            self._see(span[0])
            self._see(span[1])
        if len(events):
            self._ft_native.append(events)

    # ---- build --------------------------------------------------------------------------------------------
    def build(self) -> Trace:
        self._apply_atrace_effects()
        start = self._min_ts if self._min_ts is not None else 0
        end = self._max_ts if self._max_ts is not None else start
        self._end = end
        # Threads seen only as pids of processes are that process's main thread: added before the tables, whose
        # threads' pids (slices without one, a binder call's server) come from the records
        add_main_threads(self._processes, self._threads)
        self._known_pids = None
        slices = self._build_slices()
        states = self._build_thread_states()
        counters = self._build_counters()
        binder = self._build_binder()
        block = self._build_block()
        ft = self._build_frame_timeline()
        cpu_max = dict(self._cpu_max_freq)
        for cpu, khz in sorted(self._cpufreq_max.items()):
            cpu_max.setdefault(cpu, khz)
        return Trace(
            format=self.format, path=self.path, start_ns=start, end_ns=end,
            processes=dict(self._processes), threads=dict(self._threads),
            slices=slices, thread_states=states, counters=counters, binder=binder, block=block,
            frame_timeline=ft, cpu_max_freq_khz=cpu_max, cpu_class=guess_cpu_classes(cpu_max),
            metadata=dict(self.metadata), warnings=list(self.warnings),
            has_sched=self._has_switch,
            has_waking=self._has_waking, has_blocked_reason=self._has_blocked,
        )

    def _thread_pids(self) -> ThreadPids:
        """Every thread's pid (where known) as a native map, made once per build for both the slice nesting and the
        binder pairing (the records read natively)."""
        if self._known_pids is None:
            self._known_pids = ThreadPids(self._threads)
        return self._known_pids

    def _build_counters(self) -> pl.DataFrame:
        """Every sample in time order, ties in arrival order (a stable numpy sort and a take: no query plan)."""
        if not self._counter_chunks:
            return columns.empty(COUNTER_SCHEMA)
        counters = pl.concat(self._counter_chunks) if len(self._counter_chunks) > 1 else self._counter_chunks[0]
        if not self._counters_sorted:
            ts = counters.get_column("ts").to_numpy()
            if len(ts) > 1 and (np.diff(ts) < 0).any():
                counters = counters[np.argsort(ts, kind="stable")]
        self._counter_chunks = [counters]     # the table itself: a second build() finds it sorted
        self._counters_sorted = True
        return counters

    @staticmethod
    def _highest_per_cpu(samples: pl.DataFrame) -> dict[int, int]:
        """Each CPU's highest value (kHz) among counter samples all of one frequency counter (counter_many's of
        "cpufreq"; the natively gathered samples have theirs computed natively)."""
        cpu = samples.get_column("cpu").to_numpy()
        value = samples.get_column("value").to_numpy()
        # samples without a CPU (nulls came as NaN) or with a value that is not a number of kHz (NaN, inf, 2^63 or
        # more in magnitude: damage, past an int64) say nothing, as in the native pass (atrace.rs cpufreq_max)
        known = (np.abs(value) < 2.0**63) & (~np.isnan(cpu) if cpu.dtype.kind == "f" else True)
        cpu, value = cpu[known].astype(np.int64), value[known]
        if not len(cpu):
            return {}
        if cpu.min() >= 0 and cpu.max() <= MAX_CPU:
            # by CPU number directly: np.unique's sort took a megabyte of memory the first time in a process
            top = np.full(int(cpu.max()) + 1, -np.inf)
            np.maximum.at(top, cpu, value)
            seen = np.flatnonzero(np.bincount(cpu))
            return {int(c): int(top[c]) for c in seen.tolist()}
        return {int(c): int(value[cpu == c].max()) for c in sorted(set(cpu.tolist()))}

    def _build_slices(self) -> pl.DataFrame:
        """Slice events nested per thread natively (B/E stacks, S/F pairs by (pid, track, name, cookie), instants);
        slices still open at the end run to the trace end. The events are let go once nested (memory: the tables
        built after reuse theirs); a second build() reuses the table."""
        if self._slices_built is not None:
            end, table = self._slices_built
            if len(self._slice_ev) or end != self._end:
                raise RuntimeError("TraceBuilder.build() after adding events to a built trace: build once")
            return table
        s = self._slice_ev.nest(self._thread_pids(), self._end)
        self._slice_ev = SliceEvents()
        self.replaced_slice_names = s["replaced_names"]
        slices = columns.table(s["table"], SLICE_SCHEMA)
        self._slices_built = (self._end, slices)
        if s["unmatched_ends"]:
            self.warn(f"{s['unmatched_ends']} slice end(s) without a begin on their thread, ignored: the begin was "
                      "before the trace started, or was written by another thread (kernel display and driver "
                      "threads end slices they did not begin)")
        if s["unclosed"]:
            self.warn(f"{s['unclosed']} slice(s) still open at the end of the trace; they run to the trace end")
        return slices

    def _build_thread_states(self) -> pl.DataFrame:
        """Thread-state intervals from the sched stream, per thread as a small state machine: a switch closes the
        open interval of prev (which goes to prev_state) and of next (which goes Running); a waking closes a
        sleeping interval (anything but Running/R/R+) and opens R; a blocked reason closes a D interval, opens R,
        and names the function of the thread's latest closed D interval (derive_thread_states, natively)."""
        self._flush_sched_lists()
        if self._states_built is not None:
            # the events were let go when the table was derived (memory): a second build() reuses the table
            end, table = self._states_built
            if self._sched_chunks or end != self._end:
                raise RuntimeError("TraceBuilder.build() after adding events to a built trace: build once")
            return table
        if not self._sched_chunks:
            return columns.empty(THREAD_STATE_SCHEMA)
        chunks: list[list[np.ndarray | None]] = [list(c) for c in self._sched_chunks]
        self._sched_chunks = []
        merged: list[np.ndarray] = []
        for i in range(6):    # column by column, each chunk's column let go once merged: one copy held at a time
            parts = [c[i] for c in chunks]
            merged.append(np.concatenate(parts) if len(parts) > 1 else np.asarray(parts[0]))  # type: ignore[arg-type]
            del parts
            for c in chunks:
                c[i] = None
        del chunks
        if self._bad_cpu_events:   # damaged input: a CPU number no device has (the column is 32-bit)
            self.warn(f"{self._bad_cpu_events} scheduling event(s) with a CPU number outside 0..{MAX_CPU} skipped")
        table = derive_thread_states(merged, self._state_codes, self._blocked, self._end)
        self._states_built = (self._end, table)
        return table

    def _build_binder(self) -> pl.DataFrame:
        """One row per call (not per reply), paired natively with its receipt (the first binder_transaction_received
        of its debug id) and its reply (the receiving thread's next reply closes its latest open call)."""
        tx = [np.array([_NONE if v is None else v for v in col], dtype=np.int64) for col in zip(*self._binder_tx)] \
            if self._binder_tx else None
        rx = [np.array(col, dtype=np.int64) for col in zip(*self._binder_rx)] if self._binder_rx else None
        tx_cols = [c for c in [tx, *self._binder_tx_chunks] if c is not None and len(c[0])]
        if not tx_cols:
            return columns.empty(BINDER_SCHEMA)
        rx_cols = [c for c in [rx, *self._binder_rx_chunks] if c is not None and len(c[0])] or \
            [[np.zeros(0, dtype=np.int64)] * 3]
        r = _binder_calls([np.concatenate(c) if len(c) > 1 else c[0] for c in zip(*tx_cols)],
                          [np.concatenate(c) if len(c) > 1 else c[0] for c in zip(*rx_cols)], self._thread_pids())
        if r["unmatched_replies"]:
            self.warn(f"{r['unmatched_replies']} binder repl(ies) whose transaction began before the trace")
        return columns.table(r["table"], BINDER_SCHEMA)

    def _build_block(self) -> pl.DataFrame:
        """One row per issue in time order, paired natively with its completion: a completion closes the latest
        open issue of the same (dev, sector) before it; a request requeued and issued again completes once, for its
        last issue, and the earlier issue stays open (dur null)."""
        if not self._block_issue:
            return columns.empty(BLOCK_SCHEMA)
        return columns.table(_block_requests(self._block_issue, self._block_complete), BLOCK_SCHEMA)

    def _warn_unended(self, unended: int) -> None:
        if unended:
            self.warn(f"{unended} FrameTimeline frame(s) without an end event; marked incomplete (their duration "
                      "runs to the trace end and is not counted)")

    def _build_frame_timeline(self) -> pl.DataFrame:
        """Starts and ends paired by cookie natively (a cookie's row keeps its first place and takes its last values;
        it ends at its cookie's last end event; rows in time order); frames without an end run to the trace end."""
        if len(self._ft_native) == 1 and not (self._ft_start or self._ft_end or self._ft_chunks or self._ft_end_chunks):
            native, unended = self._ft_native[0].table(self._end)     # a decoder's alone: the table made natively
            self._warn_unended(unended)
            return columns.table(native, FRAME_TIMELINE_SCHEMA)
        for events in self._ft_native:     # with events from elsewhere: as start rows and end columns
            native_rows, native_end_ts, native_end_cookie = events.start_rows()
            self._ft_chunks.append(columns.table(native_rows, FRAME_TIMELINE_START_SCHEMA))
            self._ft_end_chunks.append((columns.int64(native_end_cookie), columns.int64(native_end_ts)))
        self._ft_native = []
        starts = list(self._ft_chunks)
        if self._ft_start:
            names = ["cookie", *(k for k in FRAME_TIMELINE_SCHEMA if k not in ("dur", "ended"))]
            schema = pl.Schema({k: pl.Int64 if k == "cookie" else FRAME_TIMELINE_SCHEMA[k] for k in names})
            rows = [(cookie, *row) for cookie, row in self._ft_start.items()]
            starts.insert(0, pl.DataFrame(rows, schema=schema, orient="row"))
        if not starts:
            return columns.empty(FRAME_TIMELINE_SCHEMA)
        ends = list(self._ft_end_chunks)
        if self._ft_end:
            ends.insert(0, (np.fromiter(self._ft_end, dtype=np.int64, count=len(self._ft_end)),
                            np.fromiter(self._ft_end.values(), dtype=np.int64, count=len(self._ft_end))))
        if len(starts) > 1:     # columns picked by name into one order, not through select (each plans a query)
            order = starts[0].columns
            start = pl.concat([pl.DataFrame([s.get_column(k) for k in order]) for s in starts])
        else:
            start = starts[0]
        end_cookie = np.concatenate([c for c, _ in ends]) if ends else np.zeros(0, dtype=np.int64)
        end_ts = np.concatenate([t for _, t in ends]) if ends else end_cookie
        take, dur, found = _frame_timeline_pairing(start.get_column("cookie").to_numpy(),
                                                   start.get_column("ts").to_numpy(), end_cookie, end_ts, self._end)
        if take is not None:
            start = start[columns.int64(take)]
        ended = np.frombuffer(found, dtype=np.bool_)
        self._warn_unended(len(ended) - int(np.count_nonzero(ended)))
        computed = {"dur": pl.Series("dur", columns.int64(dur)), "ended": pl.Series("ended", ended)}
        return pl.DataFrame([computed[k] if k in computed else start.get_column(k) for k in FRAME_TIMELINE_SCHEMA])


def guess_cpu_classes(max_freq_khz: dict[int, int]) -> dict[int, str]:
    """Guess big.LITTLE classes from per-CPU maximum frequencies: the lowest cluster is "little", the highest
    "big", any in between "mid". With one cluster (or none), nothing is guessed."""
    distinct = sorted(set(max_freq_khz.values()))
    if len(distinct) < 2:
        return {}
    lo, hi = distinct[0], distinct[-1]
    return {cpu: ("little" if f == lo else "big" if f == hi else "mid") for cpu, f in max_freq_khz.items()}
