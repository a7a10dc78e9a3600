"""Decoding ftrace text lines (`TASK-TID (TGID) [CPU] FLAGS TS: event: args`) into TraceBuilder calls.

One compiled regex splits each line, a dict picks the handler by event name, and each handler parses its own
arguments. Container formats (HTML, zlib, JS strings) are undone before this module sees the text.
"""
from __future__ import annotations

import re

from droidlag.models.trace_builder import TraceBuilder, check_i64

# TASK-TID, optional (TGID) which may be (-----), [CPU], optional flags (absent on 2012-era kernels), TS: event: args.
# The lazy task group plus the required `-digits whitespace` splits on the last dash before the tid, so task names
# may hold spaces and dashes.
# Group 1 (the whole task prefix) keys a cache, so per-thread work is done once per thread, not once per line.
LINE_RE = re.compile(
    r"(\s*(.+?)-(\d+)\s+(?:\(\s*(\d+|-+)\s*\)\s+)?)\[(\d+)\]\s+(?:[^\s:\[]{1,8}\s+)?(\d+)\.(\d+):\s+(\w+):\s?(.*)")

_SWITCH_RE = re.compile(
    r"prev_comm=(.*) prev_pid=(-?\d+) prev_prio=-?\d+ prev_state=(\S+) ==> next_comm=(.*) next_pid=(-?\d+)")
_WAKE_RE = re.compile(r"comm=(.*) pid=(\d+) prio=-?\d+(?: success=\d+)?(?: target_cpu=(\d+))?")
_BLOCKED_RE = re.compile(r"pid=(\d+) iowait=(\d+) caller=([^+\s]*)")
_STATE_CPU_RE = re.compile(r"state=(\d+) cpu_id=(\d+)")
_BINDER_TX_RE = re.compile(
    r"transaction=(\d+) dest_node=\d+ dest_proc=(\d+) dest_thread=(\d+) reply=(\d+) flags=0x([0-9a-fA-F]+)"
    r" code=0x([0-9a-fA-F]+)")
_BINDER_RX_RE = re.compile(r"transaction=(\d+)")
_BLOCK_ISSUE_RE = re.compile(r"(\d+),(\d+) (\S*) (\d+) \(.*?\) (\d+) \+ (\d+) \[(.*)\]")
_BLOCK_COMPLETE_RE = re.compile(r"(\d+),(\d+) (\S*) \(.*?\) (\d+) \+ (\d+) \[(-?\d+)\]")
_RENAME_RE = re.compile(r"pid=(\d+) oldcomm=(.*) newcomm=(.*) oom_score_adj=")
_NEWTASK_RE = re.compile(r"pid=(\d+) comm=(.*) clone_flags=([0-9a-fA-F]+)")
_EXIT_RE = re.compile(r"comm=(.*) pid=(\d+)")
_PROCFS_RE = re.compile(r"/?proc/(\d+)/task/(\d+)\s*$")
_LOST_RE = re.compile(r"CPU:\s*\d+ \[LOST (\d+) EVENTS\]")

NS_PER_S = 1_000_000_000
_FRAC_SCALE = [10 ** (9 - n) if n <= 9 else 0 for n in range(20)]
CLONE_THREAD = 0x10000
CPUIDLE_EXIT = 4294967295        # cpu_idle state printed when a CPU leaves idle ((u32)-1)
SECTOR_UNKNOWN = (1 << 64) - 1   # block requests without a sector (flushes) print (u64)-1
MAX_DETAILED_WARNINGS = 5


def timestamp_ns(secs: str, frac: str) -> int:
    """ftrace `SECONDS.FRACTION` (as two digit strings) to integer ns, without going through float."""
    if len(frac) > 9:
        frac = frac[:9]
    return int(secs) * NS_PER_S + int(frac) * _FRAC_SCALE[len(frac)]


class FtraceTextParser:
    """Feeds ftrace text lines into a TraceBuilder; keeps counts for the reader's metadata and warnings.

    `skip_wakeup`: ignore sched_wakeup because the trace also has sched_waking (the earlier, better-placed event)."""

    def __init__(self, builder: TraceBuilder, skip_wakeup: bool = False):
        self.b = builder
        self.skip_wakeup = skip_wakeup
        self.events = 0                        # lines that parsed as ftrace events
        self.unhandled: dict[str, int] = {}    # event name -> lines ignored
        self.malformed = 0
        self.lost_events = 0
        self.min_ts: int | None = None
        self.max_ts: int | None = None
        self.first_bad_line: int | None = None
        self._task_tids: dict[str, int] = {}    # `TASK-TID (TGID) ` prefix -> tid
        self._tgid_known: set[int] = set()
        self._named: set[int] = set()
        self._tgid_of: dict[int, int] = {}
        self.handlers = {
            "sched_switch": self._sched_switch,
            "sched_waking": self._sched_waking,
            "sched_wakeup": self._sched_wakeup,
            "sched_wakeup_new": self._sched_waking,
            "sched_blocked_reason": self._sched_blocked_reason,
            "tracing_mark_write": self._atrace,
            "0": self._atrace,
            "print": self._print,
            "cpu_frequency": self._cpu_frequency,
            "cpu_idle": self._cpu_idle,
            "binder_transaction": self._binder_transaction,
            "binder_transaction_received": self._binder_received,
            "block_rq_issue": self._block_issue,
            "block_rq_complete": self._block_complete,
            "task_rename": self._task_rename,
            "task_newtask": self._task_newtask,
            "sched_process_exit": self._process_exit,
        }

    # ---- the line loop ------------------------------------------------------------------------------------
    def parse(self, text: str, first_line: int | None = 1) -> None:
        """Parse every line of `text`; `first_line` is the file line of text's first line (None: no file lines,
        e.g. decompressed data, where warnings name the line of the decompressed text)."""
        match = LINE_RE.match
        handlers = self.handlers
        unhandled = self.unhandled
        task_tids = self._task_tids
        scale = _FRAC_SCALE
        lo = self.min_ts if self.min_ts is not None else 1 << 62
        hi = self.max_ts if self.max_ts is not None else -1
        events = 0
        first_ignored = last_ignored = None
        if "\r" in text:   # CRLF (adb of old, Windows) and CR-only captures: a CR left would end up in slice names
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        for lineno, line in enumerate(text.split("\n"), first_line or 1):
            m = match(line)
            if m is None:
                self._not_an_event(line, lineno)
                continue
            prefix, task, tid_s, tgid_s, cpu_s, secs, frac, event, args = m.groups()
            tid = task_tids.get(prefix)
            if tid is None or len(secs) > 9:
                tid = self._checked_task(prefix, task, tid_s, tgid_s, secs, line, lineno)
                if tid is None:
                    continue
            events += 1
            handler = handlers.get(event)
            if handler is None:
                # Ignored events only matter for the time range; ftrace text is in time order, so the first and
                # the last one are enough.
                unhandled[event] = unhandled.get(event, 0) + 1
                if first_ignored is None:
                    first_ignored = (secs, frac)
                last_ignored = (secs, frac)
                continue
            ts = int(secs) * NS_PER_S + int(frac) * scale[len(frac)] if len(frac) <= 9 else timestamp_ns(secs, frac)
            try:
                if handler(ts, tid, int(cpu_s), args, lineno) is False:
                    continue
            except (ValueError, OverflowError):
                self._bad(line, lineno)
                continue
            if ts < lo:
                lo = ts
            if ts > hi:
                hi = ts
        for stamp in (first_ignored, last_ignored):
            if stamp is not None:
                ts = timestamp_ns(*stamp)
                lo, hi = min(lo, ts), max(hi, ts)
        self.events += events
        if hi >= 0:
            self.min_ts, self.max_ts = lo, hi

    def _checked_task(self, prefix: str, task: str, tid_s: str, tgid_s: str | None, secs: str, line: str,
                      lineno: int) -> int | None:
        """The line's tid, or None (the line reported as skipped) when its numbers are damage: seconds past 31
        years of uptime (and past 64-bit nanoseconds further on), a tid or tgid beyond 64 bits."""
        try:
            if len(secs) > 9:
                raise OverflowError(secs)
            tid = self._task_tids.get(prefix)
            return tid if tid is not None else self._new_task(prefix, task, tid_s, tgid_s)
        except OverflowError:
            self._bad(line, lineno)
            return None

    def _new_task(self, prefix: str, task: str, tid_s: str, tgid_s: str | None) -> int:
        """First line of a `TASK-TID (TGID)` prefix: declare the thread's process and name."""
        tid = int(tid_s)
        check_i64(tid, int(tgid_s) if tgid_s is not None and tgid_s[0] != "-" else None)
        self._task_tids[prefix] = tid
        if tgid_s is not None and tgid_s[0] != "-" and tid not in self._tgid_known:
            self.set_tgid(tid, int(tgid_s))
        task = task.strip()
        if tid and task != "<...>" and tid not in self._named:
            self._named.add(tid)
            self.b.thread(tid, name=task)
        return tid

    def finish(self) -> None:
        """Report the aggregated problems as warnings and widen the builder's time range to every event seen."""
        b = self.b
        if self.min_ts is not None:
            b.see_time(self.min_ts)
            b.see_time(self.max_ts)
        if self.malformed > MAX_DETAILED_WARNINGS:
            b.warn(f"{self.malformed - MAX_DETAILED_WARNINGS} more malformed line(s) skipped "
                   f"({self.malformed} in all)")
        if self.lost_events:
            b.warn(f"ftrace reported {self.lost_events} lost event(s) (buffer overrun); states around them may be "
                   "wrong")

    def set_tgid(self, tid: int, tgid: int) -> None:
        """tid belongs to process tgid (TGID column, process or procfs dump, new thread)."""
        self._tgid_known.add(tid)
        self._tgid_of[tid] = tgid
        self.b.thread(tid, pid=tgid)

    def _not_an_event(self, line: str, lineno: int) -> None:
        s = line.strip()
        if not s or s[0] == "#":
            return
        m = _PROCFS_RE.match(s)
        if m:   # catapult's `echo /proc/[0-9]*/task/[0-9]*` dump: tid -> tgid
            try:
                self.set_tgid(int(m.group(2)), int(m.group(1)))
                return
            except OverflowError:
                pass
        m = _LOST_RE.search(s)
        if m:
            self.lost_events += int(m.group(1))
            return
        self._bad(line, lineno)

    def _bad(self, line: str, lineno: int) -> None:
        self.malformed += 1
        if self.first_bad_line is None:
            self.first_bad_line = lineno
        if self.malformed <= MAX_DETAILED_WARNINGS:
            self.b.warn(f"line skipped, not an ftrace event this reader understands: {line.strip()[:120]!r}",
                        line=lineno)

    def _malformed(self, event: str, args: str, lineno: int) -> bool:
        self._bad(f"{event}: {args}", lineno)
        return False

    # ---- scheduling ---------------------------------------------------------------------------------------
    def _sched_switch(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        m = _SWITCH_RE.match(args)
        if m is None:
            return self._malformed("sched_switch", args, lineno)
        prev_comm, prev, state, next_comm, nxt = m.groups()
        self.b.sched_switch(ts, cpu, int(prev), state, int(nxt), prev_comm, next_comm)
        return None

    def _sched_waking(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        """The woken thread is in the arguments; the line's own task is the waker (tid 0: idle/interrupt)."""
        m = _WAKE_RE.match(args)
        if m is None:
            return self._malformed("sched_waking", args, lineno)
        comm, pid, target = m.groups()
        self.b.sched_waking(ts, int(pid), int(target) if target is not None else None, waker_tid=tid, comm=comm)
        return None

    def _sched_wakeup(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        if self.skip_wakeup:
            return None
        return self._sched_waking(ts, tid, cpu, args, lineno)

    def _sched_blocked_reason(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        m = _BLOCKED_RE.match(args)
        if m is None:
            return self._malformed("sched_blocked_reason", args, lineno)
        pid, iowait, caller = m.groups()
        self.b.sched_blocked_reason(ts, int(pid), caller or None, io_wait=iowait != "0")
        return None

    # ---- atrace -------------------------------------------------------------------------------------------
    def _atrace(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        """tracing_mark_write (and the 2012 kernels' `0:`) carry an atrace payload: B|pid|name, E, C|..., ..."""
        if len(args) > 1 and args[1] != "|":
            if args.startswith("trace_event_clock_sync:"):
                self._clock_sync(args)
                return False if ts == 0 else None   # the 2012 reports end with a dummy line at time 0.0
            return None               # a plain-text print: no slice semantics
        if args and args[0] in "BESFCGHNI":
            self.b.atrace(ts, tid, args, line=lineno)
        return None

    def _print(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        """ftrace `print` events put the writer's ip before the payload: `tracing_mark_write: B|..` or `0x..: B|..`."""
        if args.startswith("tracing_mark_write: "):
            args = args[20:]
        elif args.startswith("0x"):
            i = args.find(": ")
            if i > 0:
                args = args[i + 2:]
        return self._atrace(ts, tid, cpu, args, lineno)

    def _clock_sync(self, args: str) -> None:
        for part in args.split(":", 1)[1].split():
            key, _, value = part.partition("=")
            if value:
                self.b.metadata[f"clock_sync_{key}"] = value

    # ---- CPU frequency and idle ---------------------------------------------------------------------------
    def _cpu_frequency(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        m = _STATE_CPU_RE.match(args)
        if m is None:
            return self._malformed("cpu_frequency", args, lineno)
        self.b.cpu_frequency(ts, int(m.group(2)), float(m.group(1)))
        return None

    def _cpu_idle(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        """Counter "cpuidle": the idle state entered, -1 when the CPU leaves idle (the kernel prints (u32)-1)."""
        m = _STATE_CPU_RE.match(args)
        if m is None:
            return self._malformed("cpu_idle", args, lineno)
        state = int(m.group(1))
        self.b.counter(ts, "cpuidle", -1.0 if state == CPUIDLE_EXIT else float(state), cpu=int(m.group(2)))
        return None

    # ---- binder -------------------------------------------------------------------------------------------
    def _binder_transaction(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        m = _BINDER_TX_RE.match(args)
        if m is None:
            return self._malformed("binder_transaction", args, lineno)
        did, to_proc, to_thread, reply, flags, code = m.groups()
        self.b.binder_transaction(ts, tid, int(did), reply != "0", flags=int(flags, 16), code=int(code, 16),
                                  to_proc=int(to_proc) or None, to_thread=int(to_thread) or None)
        return None

    def _binder_received(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        m = _BINDER_RX_RE.match(args)
        if m is None:
            return self._malformed("binder_transaction_received", args, lineno)
        self.b.binder_transaction_received(ts, tid, int(m.group(1)))
        return None

    # ---- block I/O ----------------------------------------------------------------------------------------
    def _block_issue(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        """`maj,min rwbs bytes (cmd) sector + nr [comm]`. Older kernels print 0 bytes for file-system requests;
        then bytes come from nr_sectors. A request without a sector ((u64)-1) gets sector -1."""
        m = _BLOCK_ISSUE_RE.match(args)
        if m is None:
            return self._malformed("block_rq_issue", args, lineno)
        major, minor, rwbs, nbytes, sector, nr, comm = m.groups()
        nr_sectors = int(nr)
        size = int(nbytes) or nr_sectors * 512
        self.b.block_issue(ts, (int(major) << 20) | int(minor), _sector(sector), nr_sectors, rwbs, size,
                           tid=tid or None, comm=comm)
        return None

    def _block_complete(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        m = _BLOCK_COMPLETE_RE.match(args)
        if m is None:
            return self._malformed("block_rq_complete", args, lineno)
        major, minor, rwbs, sector, nr, error = m.groups()
        self.b.block_complete(ts, (int(major) << 20) | int(minor), _sector(sector), int(nr), rwbs, int(error))
        return None

    # ---- thread names -------------------------------------------------------------------------------------
    def _task_rename(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        """The new name wins: threads are usually renamed right after creation (pool thread -> its role)."""
        m = _RENAME_RE.match(args)
        if m is None:
            return self._malformed("task_rename", args, lineno)
        pid = int(m.group(1))
        self._named.add(pid)
        self.b.thread(pid, name=m.group(3), overwrite_name=True)
        return None

    def _task_newtask(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        """A new thread joins its creator's process (CLONE_THREAD); otherwise it starts a process of its own."""
        m = _NEWTASK_RE.match(args)
        if m is None:
            return self._malformed("task_newtask", args, lineno)
        new, comm, flags = int(m.group(1)), m.group(2), int(m.group(3), 16)
        if flags & CLONE_THREAD:
            tgid = self._tgid_of.get(tid)
            self.b.thread(new, pid=tgid, name=comm)
            if tgid is not None:
                self._tgid_known.add(new)
                self._tgid_of[new] = tgid
        else:
            self.b.process(new)
            self.set_tgid(new, new)
            self.b.thread(new, name=comm)
        return None

    def _process_exit(self, ts: int, tid: int, cpu: int, args: str, lineno: int) -> bool | None:
        m = _EXIT_RE.match(args)
        if m is None:
            return self._malformed("sched_process_exit", args, lineno)
        self.b.thread(int(m.group(2)), name=m.group(1))
        return None


def _sector(text: str) -> int:
    value = int(text)
    return -1 if value >= SECTOR_UNKNOWN else value
