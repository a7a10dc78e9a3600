"""Perfetto ftrace bundles (compact_sched arrays and FtraceEvent messages) fed to a TraceBuilder.

Also the kernel-version-dependent mapping of sched_switch `prev_state` integers to the letters ftrace prints.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

from droidlag.models.trace_builder import TraceBuilder

# prev_state letter bits, as each kernel's sched_switch format prints them (see corpus/ftrace_formats).
# Kernels >= 4.14 report TASK_REPORT states; the "+" (preempted) bit is TASK_REPORT_MAX.
_BITS_4_14 = ((1, "S"), (2, "D"), (4, "T"), (8, "t"), (16, "X"), (32, "Z"), (64, "P"), (128, "I"))
# Kernels < 4.14 print raw task->state bits; 4.8 added TASK_NEW (2048), moving TASK_STATE_MAX to 4096.
_BITS_4_4 = ((1, "S"), (2, "D"), (4, "T"), (8, "t"), (16, "Z"), (32, "X"), (64, "x"), (128, "K"), (256, "W"),
             (512, "P"), (1024, "N"))
_BITS_4_8 = _BITS_4_4 + ((2048, "n"),)


class PrevStateEncoding:
    """How one kernel encodes sched_switch prev_state: its letter bits and its preempted ("+") bit."""

    def __init__(self, name: str, bits: tuple[tuple[int, str], ...], preempt_bit: int):
        self.name = name
        self.bits = bits
        self.preempt_bit = preempt_bit
        self._cache: dict[int, str] = {}

    def state(self, value: int) -> str:
        """The state string for a prev_state integer: "R", "R+", "S", "D", "D|K", "S+" ..."""
        s = self._cache.get(value)
        if s is None:
            letters = [c for bit, c in self.bits if value & bit]
            s = "|".join(letters) if letters else "R"
            if value & self.preempt_bit:
                s += "+"
            self._cache[value] = s
        return s


ENCODING_4_14 = PrevStateEncoding(">=4.14", _BITS_4_14, 256)
ENCODING_4_8 = PrevStateEncoding("4.8-4.13", _BITS_4_8, 4096)
ENCODING_4_4 = PrevStateEncoding("<4.8", _BITS_4_4, 2048)


def kernel_version(release: str | None) -> tuple[int, int] | None:
    """(major, minor) from a uname release such as "5.10.107-android13-4-..."; None if it does not say."""
    m = re.match(r"\s*(\d+)\.(\d+)", release or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def prev_state_encoding(release: str | None) -> PrevStateEncoding:
    """The prev_state encoding of the kernel with this uname release (>= 4.14 when unknown)."""
    v = kernel_version(release)
    if v is None or v >= (4, 14):
        return ENCODING_4_14
    if v >= (4, 8):
        return ENCODING_4_8
    return ENCODING_4_4


def prev_state_string(value: int, release: str | None = None) -> str:
    """sched_switch prev_state integer -> state string for the kernel with uname release `release`."""
    return prev_state_encoding(release).state(value)


_IDLE_EXIT = 0xFFFFFFFF   # cpu_idle state when a CPU leaves idle (PWR_EVENT_EXIT, -1 as u32)


class FtraceDecoder:
    """Decodes ftrace bundles into builder calls, keeping the per-CPU state compact_sched needs across bundles.

    Thread names from comms are remembered (first seen) rather than set at once, so that process_tree names and
    task_rename can take precedence; `names_from_comms()` hands them over at the end."""

    def __init__(self, builder: TraceBuilder, encoding: PrevStateEncoding):
        self.b = builder
        self.encoding = encoding
        self.running: dict[int, int] = {}            # cpu -> tid last switched in (compact_sched has no prev_pid)
        self.comms: dict[int, str] = {}              # tid -> first comm seen
        self.renames: list[tuple[int, int, str]] = []  # (ts, tid, new comm) from task_rename / task_newtask
        self.wakeups: list[tuple] = []               # sched_wakeup, used only if the trace has no sched_waking
        self.saw_waking = False
        self.lost_bundles = 0
        self.unresolved_callers = 0
        # Bulk kinds (compact_sched arrays and FtraceEvent messages), gathered as columns across bundles (bundles
        # are often small, and a bulk call per bundle costs more than it saves); flush_columns() hands them over.
        self._sw: tuple[list, ...] = ([], [], [], [], [])     # ts, cpu, prev, prev_state (int), next
        self._wk: tuple[list, ...] = ([], [], [], [])         # ts, tid, target cpu, waker
        self._idle: tuple[list, ...] = ([], [], [])           # ts, state, cpu
        self._freq: tuple[list, ...] = ([], [], [])           # ts, kHz, cpu

    def flush_columns(self) -> None:
        """Hand the gathered columns to the builder (at the end)."""
        b = self.b
        sw_ts, sw_cpu, sw_prev, sw_state, sw_next = self._sw
        if sw_ts:
            b.sched_switch_many(sw_ts, sw_cpu, sw_prev, sw_state, sw_next, decode_state=self.encoding.state)
        wk_ts, wk_tid, wk_cpu, wk_waker = self._wk
        if wk_ts:
            b.sched_waking_many(wk_ts, wk_tid, wk_cpu, wk_waker)
        idle_ts, idle_state, idle_cpu = self._idle
        if idle_ts:
            b.counter_many(idle_ts, "cpuidle", [-1.0 if v == _IDLE_EXIT else float(v) for v in idle_state],
                           cpu=idle_cpu)
        freq_ts, freq_khz, freq_cpu = self._freq
        if freq_ts:
            b.counter_many(freq_ts, "cpufreq", freq_khz, cpu=freq_cpu)
        for cols in (self._sw, self._wk, self._idle, self._freq):
            for col in cols:
                col.clear()

    # ---- compact_sched ------------------------------------------------------------------------------------
    def compact_sched(self, cpu: int, cs, shift: int = 0) -> None:
        """The compact_sched arrays of one bundle: delta-encoded timestamps (the first absolute), comms interned
        in the bundle's intern_table. prev_pid is implicit: the thread the previous switch on this CPU ran.
        The arrays are appended to the decoder's columns with C-speed list operations (accumulate, extend); the
        builder gets them in one bulk call at the end. Arrays of unequal length (a damaged bundle) give as many
        events as the shortest holds."""
        comms = list(cs.intern_table)
        n_comms = len(comms)
        names = self.comms
        prev_in = self.running.get(cpu, 0)
        sw_ts = list(accumulate(cs.switch_timestamp, initial=shift))[1:] if shift else \
            list(accumulate(cs.switch_timestamp))
        sw_next = list(cs.switch_next_pid)
        if sw_ts:
            states = cs.switch_prev_state
            comm_idx = cs.switch_next_comm_index
            n = min(len(sw_ts), len(states), len(sw_next), len(comm_idx))
            if n:
                c_ts, c_cpu, c_prev, c_state, c_next = self._sw
                c_ts.extend(sw_ts[:n] if n < len(sw_ts) else sw_ts)
                c_cpu.extend([cpu] * n)
                c_prev.append(prev_in)
                c_prev.extend(sw_next[:n - 1])
                c_state.extend(states[:n] if n < len(states) else states)
                c_next.extend(sw_next[:n] if n < len(sw_next) else sw_next)
            for nxt, ci in zip(sw_next[:n], comm_idx):
                if nxt not in names and ci < n_comms and nxt:
                    names[nxt] = comms[ci]
            if sw_next:
                self.running[cpu] = sw_next[-1]
        if len(cs.waking_timestamp):
            # Compact wakings carry no waker: it is the thread running on the bundle's CPU at that instant.
            self.saw_waking = True
            wk_ts = list(accumulate(cs.waking_timestamp, initial=shift))[1:] if shift else \
                list(accumulate(cs.waking_timestamp))
            tids, targets, comm_idx = cs.waking_pid, cs.waking_target_cpu, cs.waking_comm_index
            n = min(len(wk_ts), len(tids), len(targets), len(comm_idx))
            c_ts, c_tid, c_cpu, c_waker = self._wk
            for ts in wk_ts[:n]:
                i = bisect_right(sw_ts, ts)
                c_waker.append(sw_next[i - 1] if i else prev_in)
            c_ts.extend(wk_ts[:n])
            c_tid.extend(tids[:n])
            c_cpu.extend(targets[:n])
            for tid, ci in zip(tids[:n], comm_idx):
                if tid not in names and ci < n_comms and tid:
                    names[tid] = comms[ci]

    # ---- FtraceEvent messages -----------------------------------------------------------------------------
    def events(self, cpu: int, events, ksyms: dict[int, str] | None, shift: int = 0) -> None:
        """The FtraceEvent messages of one bundle (per-event fields; each has its own timestamp, ns)."""
        b = self.b
        names = self.comms
        atrace = b.atrace
        # The bulk kinds go to columns (order within a kind is kept); see flush_columns.
        sw_ts, sw_cpu, sw_prev, sw_state, sw_next = self._sw
        wk_ts, wk_tid, wk_cpu, wk_waker = self._wk
        idle_ts, idle_state, idle_cpu = self._idle
        freq_ts, freq_khz, freq_cpu = self._freq
        n_sw = len(sw_ts)
        for e in events:
            kind = e.WhichOneof("event")
            if kind is None:
                continue
            ts = e.timestamp + shift
            if kind == "sched_switch":
                s = e.sched_switch
                prev, nxt = s.prev_pid, s.next_pid
                sw_ts.append(ts)
                sw_prev.append(prev)
                sw_state.append(s.prev_state)
                sw_next.append(nxt)
                if prev and prev not in names:
                    names[prev] = s.prev_comm
                if nxt and nxt not in names:
                    names[nxt] = s.next_comm
            elif kind == "print":
                atrace(ts, e.pid, e.print.buf)
            elif kind == "cpu_idle":
                s = e.cpu_idle
                idle_ts.append(ts)
                idle_state.append(s.state)
                idle_cpu.append(s.cpu_id)
            elif kind == "sched_waking" or kind == "sched_wakeup_new":
                s = e.sched_waking if kind == "sched_waking" else e.sched_wakeup_new
                if kind == "sched_waking":
                    self.saw_waking = True
                pid = s.pid
                wk_ts.append(ts)
                wk_tid.append(pid)
                wk_cpu.append(s.target_cpu)
                wk_waker.append(e.pid)
                if pid and pid not in names:
                    names[pid] = s.comm
            elif kind == "sched_wakeup":
                if not self.saw_waking:      # once sched_waking is seen, finish() drops every sched_wakeup
                    s = e.sched_wakeup
                    self.wakeups.append((ts, s.pid, s.target_cpu, e.pid, s.comm))
            elif kind == "cpu_frequency":
                s = e.cpu_frequency
                freq_ts.append(ts)
                freq_khz.append(s.state)
                freq_cpu.append(s.cpu_id)
            elif kind == "binder_transaction":
                s = e.binder_transaction
                b.binder_transaction(ts, e.pid, s.debug_id, bool(s.reply), s.flags, s.code,
                                     s.to_proc or None, s.to_thread or None)
            elif kind == "binder_transaction_received":
                b.binder_transaction_received(ts, e.pid, e.binder_transaction_received.debug_id)
            elif kind == "sched_blocked_reason":
                s = e.sched_blocked_reason
                b.sched_blocked_reason(ts, s.pid, self._caller(s.caller, ksyms), bool(s.io_wait))
            elif kind == "block_rq_issue":
                s = e.block_rq_issue
                b.block_issue(ts, s.dev, s.sector, s.nr_sector, s.rwbs, s.bytes if s.HasField("bytes") else None,
                              e.pid, s.comm or None)
            elif kind == "block_rq_complete":
                s = e.block_rq_complete
                b.block_complete(ts, s.dev, s.sector, s.nr_sector, s.rwbs, s.error or s.errors)
            elif kind == "task_rename":
                s = e.task_rename
                self.renames.append((ts, s.pid, s.newcomm))
            elif kind == "task_newtask":
                s = e.task_newtask
                if s.pid and s.pid not in names:
                    names[s.pid] = s.comm
        if len(sw_ts) > n_sw:
            sw_cpu.extend([cpu] * (len(sw_ts) - n_sw))

    def _caller(self, caller: int, ksyms: dict[int, str] | None) -> str | None:
        """sched_blocked_reason.caller is an interned kernel-symbol id when the trace symbolized it; otherwise
        (symbols absent) a raw address shown as hex, or an unresolved id shown as "ksym#<id>"."""
        if not caller:
            return None
        if ksyms:
            name = ksyms.get(caller)
            if name:
                return name
        self.unresolved_callers += 1
        return f"0x{caller:x}" if caller >= 1 << 32 else f"ksym#{caller}"

    # ---- end ----------------------------------------------------------------------------------------------
    def finish(self) -> None:
        """Flush sched_wakeup when the trace had no sched_waking (otherwise they duplicate it) and warn once."""
        self.flush_columns()
        if not self.saw_waking:
            waking = self.b.sched_waking
            names = self.comms
            for ts, tid, target, waker, comm in self.wakeups:
                waking(ts, tid, target, waker)
                if tid and tid not in names:
                    names[tid] = comm
        self.wakeups = []
        if self.lost_bundles:
            self.b.warn(f"{self.lost_bundles} ftrace bundle(s) report lost events (kernel buffer overrun); "
                        "scheduling data has gaps")
        if self.unresolved_callers:
            self.b.warn(f"{self.unresolved_callers} sched_blocked_reason caller(s) without kernel symbols in the "
                        "trace; kept as hex address or ksym#<id>")
