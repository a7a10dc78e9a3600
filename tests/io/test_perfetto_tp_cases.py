"""droidlag's Perfetto reader against trace processor, on cases of Perfetto's own diff tests.

Each test rebuilds the trace of one diff test of google/perfetto (Apache-2.0; path named at the test) in our own
compact form (TracePackets made here with the `perfetto` package's classes, FrameTimeline packets as wire bytes, since
that package leaves field 76 out), and asserts the values the diff test's expected output gives for the same facts:
state names and times of thread states, slice names, times and depths, jank and present type names, thread names and
pids. Where droidlag differs on purpose the test asserts droidlag's value and says why; the differences that were bugs
are fixed (docs/validation-perfetto.md lists every case tried, its result and what was fixed).
"""
from __future__ import annotations

import polars as pl
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from perfetto_wire import field

from droidlag.io.perfetto import read_perfetto
from droidlag.models.trace import Trace

CLONE_THREAD = 0x10000


# ---- trace building -------------------------------------------------------------------------------------------
def _read(*packets: pb.TracePacket | bytes) -> Trace:
    data = b"".join(_record(p.SerializeToString() if isinstance(p, pb.TracePacket) else p) for p in packets)
    return read_perfetto(data, "tp-case")


def _record(packet: bytes) -> bytes:
    return field(1, packet)


def _bundle(cpu: int, *events: pb.FtraceEvent, **packet: object) -> pb.TracePacket:
    p = pb.TracePacket(**packet)  # type: ignore[arg-type]
    p.ftrace_events.cpu = cpu
    p.ftrace_events.event.extend(events)
    return p


def _switch(ts: int, prev: int, nxt: int, state: int = 0, prev_comm: str = "", next_comm: str = "") -> pb.FtraceEvent:
    e = pb.FtraceEvent(timestamp=ts, pid=prev)
    e.sched_switch.CopyFrom(pb.SchedSwitchFtraceEvent(prev_pid=prev, next_pid=nxt, prev_state=state,
                                                      prev_comm=prev_comm or str(prev), next_comm=next_comm or str(nxt)))
    return e


def _blocked(ts: int, tid: int, io_wait: int, caller: int = 0, by: int = 0) -> pb.FtraceEvent:
    e = pb.FtraceEvent(timestamp=ts, pid=by)
    e.sched_blocked_reason.CopyFrom(pb.SchedBlockedReasonFtraceEvent(pid=tid, caller=caller, io_wait=io_wait))
    return e


def _print(ts: int, tid: int, buf: str) -> pb.FtraceEvent:
    e = pb.FtraceEvent(timestamp=ts, pid=tid)
    e.print.buf = buf + "\n"
    return e


def _newtask(ts: int, parent: int, tid: int, comm: str, flags: int) -> pb.FtraceEvent:
    e = pb.FtraceEvent(timestamp=ts, pid=parent)
    e.task_newtask.CopyFrom(pb.TaskNewtaskFtraceEvent(pid=tid, comm=comm, clone_flags=flags))
    return e


def _rename(ts: int, tid: int, old: str, new: str) -> pb.FtraceEvent:
    e = pb.FtraceEvent(timestamp=ts, pid=tid)
    e.task_rename.CopyFrom(pb.TaskRenameFtraceEvent(pid=tid, oldcomm=old, newcomm=new))
    return e


def _tree(ts: int, processes: tuple[tuple[int, int, str], ...] = (),
          threads: tuple[tuple[int, int, str | None], ...] = ()) -> pb.TracePacket:
    p = pb.TracePacket(timestamp=ts)
    for pid, ppid, cmdline in processes:
        p.process_tree.processes.add(pid=pid, ppid=ppid, cmdline=[cmdline])
    for tid, tgid, name in threads:
        t = p.process_tree.threads.add(tid=tid, tgid=tgid)
        if name:
            t.name = name
    return p


def _d_states(t: Trace) -> list[tuple[object, ...]]:
    return t.thread_states.filter(pl.col("state") == "D").sort("ts", "tid") \
        .select("ts", "tid", "blocked_function", "io_wait").rows()


# ---- scheduling -------------------------------------------------------------------------------------------------
def test_sched_blocked_reason_names_the_function_of_each_d_state():
    """Mirrors test/trace_processor/diff_tests/parser/parsing/sched_blocked_reason_symbolized.textproto with
    parsing/tests.py test_sched_blocked_reason_symbolized_sched_blocked_reason_function: kernel symbols interned per
    sequence (sequence_flags=1 clears them, so iid 1 is first filemap_fault, later some_other_fn). Trace processor's
    D states: (999000, 105, some_fn), (999000, 102, filemap_fault), (1000000, 100, filemap_fault), (1001000, 101,
    NULL), (1002000, 103, NULL), (1003000, 100, some_other_fn), (1005000, 104, filemap_fault). The two NULLs are
    callers with no interned symbol (iid 2): droidlag keeps them as "ksym#2" and warns, on purpose (the id is
    evidence; docs/validation-perfetto.md)."""
    syms1, syms3, syms4 = pb.InternedData(), pb.InternedData(), pb.InternedData()
    syms1.kernel_symbols.add(iid=1, str=b"filemap_fault")
    syms3.kernel_symbols.add(iid=3, str=b"some_fn")
    syms4.kernel_symbols.add(iid=1, str=b"some_other_fn")
    d = 2   # prev_state D
    t = _read(
        _bundle(1, _switch(50, 0, 100, d), _switch(1000000, 100, 101, d), _blocked(1000010, 100, 0, caller=1),
                _switch(1001000, 101, 100, d), _blocked(1001010, 101, 0, caller=2),
                trusted_packet_sequence_id=2, sequence_flags=1, interned_data=syms1),
        _bundle(2, _switch(60, 0, 102, d), _switch(999000, 102, 103, d), _blocked(999010, 102, 1, caller=1),
                _switch(1002000, 103, 104, d), _blocked(1002010, 103, 1, caller=2), _switch(1005000, 104, 0, d),
                _blocked(1005010, 104, 1, caller=1), trusted_packet_sequence_id=2),
        _bundle(3, _switch(60, 0, 105, d), _switch(999000, 105, 0, d), _blocked(999000, 105, 1, caller=3),
                trusted_packet_sequence_id=2, interned_data=syms3),
        _bundle(1, _switch(1003000, 100, 0, d), _blocked(1003010, 100, 1, caller=1),
                trusted_packet_sequence_id=2, sequence_flags=1, interned_data=syms4))
    assert [(ts, tid, f) for ts, tid, f, _io in _d_states(t)] == [
        (999000, 102, "filemap_fault"), (999000, 105, "some_fn"), (1000000, 100, "filemap_fault"),
        (1001000, 101, "ksym#2"), (1002000, 103, "ksym#2"), (1003000, 100, "some_other_fn"),
        (1005000, 104, "filemap_fault")]
    assert any("without kernel symbols" in w.message for w in t.warnings)


def test_sched_blocked_reason_io_wait():
    """Mirrors parser/parsing/sched_blocked_proto.py with parsing/tests.py
    test_sched_blocked_proto_sched_blocked_reason: trace processor's D states (ts, tid, io_wait) are (100, 1, 0) and
    (110, 2, 1)."""
    t = _read(_tree(0, ((1, 0, "init"), (2, 0, "init2"), (3, 0, "unblocker"))),
              _bundle(0, _switch(10, 0, 1, 0, "swapper", "foo"), _switch(100, 1, 2, 2, "foo", "bar"),
                      _blocked(101, 1, 0, by=3), _switch(110, 2, 0, 2, "bar", "swapper"), _blocked(111, 2, 1, by=3)))
    assert [(ts, tid, io) for ts, tid, _f, io in _d_states(t)] == [(100, 1, False), (110, 2, True)]


def _binder_tx(ts: int, tid: int, debug_id: int, to_proc: int, to_thread: int, reply: int) -> pb.FtraceEvent:
    e = pb.FtraceEvent(timestamp=ts, pid=tid)
    e.binder_transaction.CopyFrom(pb.BinderTransactionFtraceEvent(debug_id=debug_id, to_proc=to_proc,
                                                                  to_thread=to_thread, reply=reply))
    return e


def _binder_rx(ts: int, tid: int, debug_id: int) -> pb.FtraceEvent:
    e = pb.FtraceEvent(timestamp=ts, pid=tid)
    e.binder_transaction_received.CopyFrom(pb.BinderTransactionReceivedFtraceEvent(debug_id=debug_id))
    return e


def _binder_trace() -> Trace:
    """parser/parsing/android_binder.py, step for step: thread 7 of test_process_a (pid 1) calls test_process_b's and
    test_process_c's main threads (tids 2 and 3, listed in the process tree as processes only). The diff test's
    times put each reply's receipt before the reply (ts_end < reply_ts_end), as written there."""
    tree = _tree(0, ((1, 4, "test_process_a"), (2, 5, "test_process_b"), (3, 6, "test_process_c")), ((7, 1, None),))
    return _read(tree, _bundle(0, _binder_tx(1, 7, 1, 2, 2, 0), _binder_rx(3, 2, 1), _binder_tx(4, 2, 2, 1, 7, 1),
                               _binder_rx(2, 7, 2), _binder_tx(5, 7, 3, 3, 3, 0), _binder_rx(7, 3, 3),
                               _binder_tx(8, 3, 4, 1, 7, 1), _binder_rx(6, 7, 4)))


def test_binder_calls_and_their_servers():
    """Mirrors parser/parsing/android_binder.py with parsing/tests.py test_android_binder (metric android_binder):
    test_process_a (pid 1) makes 2 binder transactions, answered ("binder reply") once by test_process_b's thread 2
    and once by test_process_c's thread 3."""
    b = _binder_trace().binder.sort("ts")
    assert b.select("ts", "client_tid", "client_pid", "server_tid", "received_ts", "reply_ts", "oneway").rows() == \
        [(1, 7, 1, 2, 3, 4, False), (5, 7, 1, 3, 7, 8, False)]


def test_binder_server_process_of_a_main_thread():
    """The same diff test: the replies are test_process_b's (pid 2) and test_process_c's (pid 3)."""
    assert _binder_trace().binder.sort("ts")["server_pid"].to_list() == [2, 3]


# ---- clocks -------------------------------------------------------------------------------------------------------
def test_track_event_timestamps_on_another_clock_go_through_the_clock_snapshot():
    """Mirrors parser/track_event/tests.py test_track_event_monotonic_trace_clock_slices (with a thread descriptor for
    track 1, so that droidlag reads the events; it reads thread tracks only): a snapshot says MONOTONIC 1000 is
    BOOTTIME 11000; one instant at MONOTONIC 1000, one at BOOTTIME 12000. Trace processor, told by the snapshot that
    the trace clock is MONOTONIC, shows them at 1000 and 2000; droidlag keeps every trace on the boot clock (the clock
    of Android's ftrace data), on purpose: 11000 and 12000, the same instants 1000 apart."""
    snap = pb.TracePacket(trusted_packet_sequence_id=1, timestamp=0)
    snap.clock_snapshot.primary_trace_clock = 3
    snap.clock_snapshot.clocks.add(clock_id=3, timestamp=1000)
    snap.clock_snapshot.clocks.add(clock_id=6, timestamp=11000)
    track = _thread_track(1, 0, 1, 5, 1, "t1", default=False)
    t = _read(snap, track, _track_event(1, 1000, 3, "name1", track=1, timestamp_clock_id=3),
              _track_event(1, 12000, 3, "name2", track=1, timestamp_clock_id=6))
    assert _slices(t, "ts", "dur", "name") == [(11000, 0, "name1"), (12000, 0, "name2")]
    assert not t.warnings


def test_cpu_frequency_and_idle_counters():
    """Trace processor's ftrace parser (src/trace_processor/importers/ftrace/ftrace_parser.cc, ParseCpuFreq and
    ParseCpuIdle; no text-format diff test of these was found, theirs read binary traces) makes one sample per event on
    per-CPU tracks "cpufreq" (value: the event's state, kHz) and "cpuidle" (value: the state as it is, 4294967295 when
    the CPU leaves idle). droidlag's counters agree, but for that exit value, which droidlag gives as -1 on purpose
    (PWR_EVENT_EXIT, see native/src/perfetto.rs cpu_counters)."""
    freq = pb.FtraceEvent(timestamp=1000, pid=0)
    freq.cpu_frequency.CopyFrom(pb.CpuFrequencyFtraceEvent(state=1800000, cpu_id=4))
    idle = [pb.FtraceEvent(timestamp=ts, pid=0) for ts in (1100, 1200)]
    idle[0].cpu_idle.CopyFrom(pb.CpuIdleFtraceEvent(state=1, cpu_id=2))
    idle[1].cpu_idle.CopyFrom(pb.CpuIdleFtraceEvent(state=4294967295, cpu_id=2))
    t = _read(_bundle(4, freq), _bundle(2, *idle))
    assert t.counters.sort("ts").select("ts", "name", "value", "cpu").rows() == [
        (1000, "cpufreq", 1800000.0, 4), (1100, "cpuidle", 1.0, 2), (1200, "cpuidle", -1.0, 2)]


def test_runnable_and_running_threads_over_time():
    """Mirrors test/trace_processor/common/synth_1.py with stdlib/sched/tests.py test_runnable_thread_count and
    test_active_cpu_count (trace processor's thread_state, counted by its standard library): at 1, 50, 100, 115, 120,
    170, 250, 390 the runnable threads number 1, 1, 2, 2, 2, 3, 2, 2 and the threads running (one per busy CPU) 1, 2,
    2, 2, 2, 1, 2, 2. Every switch here leaves prev runnable (prev_state 0); the last states run to the trace's end
    (400, its last cpufreq sample)."""
    freq = [pb.FtraceEvent(timestamp=ts, pid=0) for ts in (50, 400)]
    freq[0].cpu_frequency.CopyFrom(pb.CpuFrequencyFtraceEvent(state=50, cpu_id=0))
    freq[1].cpu_frequency.CopyFrom(pb.CpuFrequencyFtraceEvent(state=100, cpu_id=0))
    t = _read(_tree(0, ((1, 0, "init"), (2, 1, "two_thread_process"), (4, 1, "single_thread_process")), ((3, 2, None),)),
              _bundle(0, _switch(1, 1, 3), freq[0], _switch(100, 3, 2), _switch(115, 2, 3)),
              _bundle(1, _switch(50, 4, 1), _switch(120, 1, 2), _switch(170, 2, 0), _switch(250, 0, 2),
                      _switch(390, 2, 4), freq[1]))
    states = t.thread_states.with_columns(pl.col("state").cast(pl.Utf8), end=pl.col("ts") + pl.col("dur"))

    def count(at: int, state: str) -> int:
        return states.filter((pl.col("state") == state) & (pl.col("ts") <= at) & (pl.col("end") > at)).height
    times = [1, 50, 100, 115, 120, 170, 250, 390]
    assert [count(at, "R") for at in times] == [1, 1, 2, 2, 2, 3, 2, 2]
    assert [count(at, "Running") for at in times] == [1, 2, 2, 2, 2, 1, 2, 2]


# ---- atrace -------------------------------------------------------------------------------------------------------
def _slices(t: Trace, *cols: str) -> list[tuple[object, ...]]:
    return t.slices.sort("ts", "id").select(*cols).rows()


def test_atrace_async_slice_across_threads():
    """Mirrors parser/atrace/tests.py test_process_track_slices_android_async_slice: an S on one thread and its F on
    another make one slice of process 1204 from 74289018336 to 74662603008 (dur 373584672) named
    "launching: com.android.chrome"."""
    t = _read(_bundle(3, _print(74289018336, 4064, "S|1204|launching: com.android.chrome|0")),
              _bundle(2, _print(74662603008, 1257, "F|1204|launching: com.android.chrome|0")))
    assert _slices(t, "ts", "dur", "pid", "name") == [(74289018336, 373584672, 1204, "launching: com.android.chrome")]


def test_atrace_back_to_back_async_begins_keep_the_first():
    """Mirrors parser/atrace/android_b2b_async_begin.textproto with atrace/tests.py
    test_android_b2b_async_begin_list_slices: trace processor's slices (ts, dur) are (1000, 30), (1015, 45),
    (1030, 20)."""
    prints = [(1000, 4064, "S|1204|multistart|0"), (1010, 1257, "S|1204|multistart|0"),
              (1015, 1257, "S|1204|multistart|10"), (1020, 1240, "S|1204|multistart|0"),
              (1030, 4293, "F|1204|multistart|0"), (1030, 1240, "S|1204|multistart|0"),
              (1050, 4293, "F|1204|multistart|0"), (1060, 4009, "F|1204|multistart|10")]
    t = _read(_bundle(3, *(_print(ts, tid, buf) for ts, tid, buf in prints)))
    assert _slices(t, "ts", "dur", "name") == [(1000, 30, "multistart"), (1015, 45, "multistart"),
                                               (1030, 20, "multistart")]


def test_atrace_async_for_track_slices():
    """Mirrors parser/atrace/async_track_atrace.py with atrace/tests.py test_async_track_atrace_process_track_slices:
    trace processor's slices (ts, dur, pid, name, track) are (50, 25, 1, ev, track), (55, 15, 1, ev, track),
    (60, 5, 2, ev, track)."""
    t = _read(_tree(0, ((1, 0, "p1"), (2, 1, "p2")), ((1, 1, "p1"), (2, 2, "p2"))),
              _bundle(0, _print(50, 1, "G|1|track|ev|1024"), _print(55, 1, "G|1|track|ev|2048"),
                      _print(60, 2, "G|2|track|ev|1024"), _print(65, 2, "H|2|track|ev|1024"),
                      _print(70, 1, "H|1|track|2048"), _print(75, 1, "H|1|track|ev|1024")))
    assert _slices(t, "ts", "dur", "pid", "name", "track") == [
        (50, 25, 1, "ev", "track"), (55, 15, 1, "ev", "track"), (60, 5, 2, "ev", "track")]


def test_atrace_prints_that_are_not_atrace_make_no_slice():
    """Mirrors parser/atrace/bad_print.textproto with atrace/tests_error_handling.py
    test_bad_print_textproto_list_slices: only (74662603048, 2, "valid_print") is a slice."""
    t = _read(_bundle(3, _print(74289018336, 1, "event: abc xyz =0x34 clk id = 019")),
              _bundle(2, _print(74662603008, 1, "another random print message")),
              _bundle(2, _print(74662603048, 2, "B|2|valid_print")), _bundle(2, _print(74662603050, 2, "E|2")))
    assert _slices(t, "ts", "dur", "name") == [(74662603048, 2, "valid_print")]
    assert not t.warnings


def test_atrace_instants_on_their_threads():
    """Mirrors parser/atrace/instant_atrace.py with atrace/tests_error_handling.py
    test_instant_atrace_instant_with_thread: instants (thread name, name, ts) ("t2", "t2_event", 51) and
    ("t1", "t1_event", 53), of duration 0, thread names from sched_switch comms."""
    t = _read(_bundle(0, _switch(50, 1, 2, 0, "t1", "t2"), _print(51, 2, "I|2|t2_event"),
                      _switch(52, 2, 1, 0, "t2", "t1"), _print(53, 1, "I|1|t1_event")))
    assert [(t.thread_name(tid), name, ts, dur) for ts, dur, tid, name in _slices(t, "ts", "dur", "tid", "name")] == \
        [("t2", "t2_event", 51, 0), ("t1", "t1_event", 53, 0)]


def test_atrace_counter_print():
    """Mirrors parser/parsing/tests.py test_initial_display_state (its print part): "C|5678|ScreenState|0" at 1000 is
    a sample of counter ScreenState, value 0, at 1000 (the initial_display_state packet is not read by droidlag)."""
    t = _read(_bundle(0, _print(1000, 1234, "C|5678|ScreenState|0")))
    assert t.counters.select("ts", "name", "value", "pid").rows() == [(1000, "ScreenState", 0.0, 5678)]


# ---- processes and threads --------------------------------------------------------------------------------------
def _process_tracking_trace() -> Trace:
    """parser/process_tracking/synth_process_tracking.py, step for step."""
    return _read(
        _bundle(0, _switch(1, 0, 10, next_comm="p1-t0"), _switch(2, 10, 11, 0, "p1-t0", "p1-t1"),
                _switch(3, 11, 12, 0, "p1-t1", "p1-t2"), _switch(4, 12, 0, 0, "p1-t2", "swapper")),
        _tree(5, ((10, 0, "process1"),), ((12, 10, None),)),
        _bundle(0, _switch(10, 0, 20, next_comm="p2-t0"), _switch(11, 20, 21, 0, "p2-t0", "p2-t1"),
                _newtask(12, 21, 22, "p2-t2", CLONE_THREAD), _switch(13, 21, 22, 0, "p2-t1", "p2-t2"),
                _switch(14, 22, 0, 0, "p2-t2", "swapper")),
        _tree(15, ((20, 0, "process_2"),), ((21, 20, None),)),
        _bundle(0, _switch(20, 0, 30, next_comm="p3-t0"), _switch(21, 30, 31, 0, "p3-t0", "p3-t1"),
                _newtask(22, 31, 32, "p3-t2", CLONE_THREAD), _newtask(23, 31, 33, "p3-t3", CLONE_THREAD),
                _switch(24, 31, 32, 0, "p3-t1", "p3-t2"), _newtask(25, 32, 34, "p3-t4", CLONE_THREAD)),
        _tree(26, ((30, 0, "process_3"),), ((31, 30, None),)),
        _bundle(0, _newtask(27, 32, 40, "p4-t0", 0), _switch(28, 32, 40, 0, "p3-t2", "p4-t0")),
        _tree(29, ((40, 30, "process_4"),)),
        _bundle(0, _newtask(30, 40, 31, "p4-t1", CLONE_THREAD), _switch(31, 40, 31, 0, "p4-t0", "p4-t1")))


def _tid_pid_names(t: Trace, tids: list[int]) -> list[tuple[object, ...]]:
    return [(tid, t.process_of(tid), t.process_name(t.process_of(tid)), t.thread_name(tid)) for tid in tids]


def test_process_tracking_threads_of_the_process_tree():
    """Mirrors parser/process_tracking/synth_process_tracking.py with process_tracking/tests.py
    test_process_tracking, for the threads whose process the process tree or their own pid says: trace processor's
    (tid, pid, process name, thread name) rows 10,10,process1,p1-t0; 11,NULL,NULL,p1-t1; 12,10,process1,p1-t2;
    20,20,process_2,p2-t0; 21,20,process_2,p2-t1; 30,30,process_3,p3-t0; 40,40,process_4,p4-t0. (Its two rows for
    tid 31, p3-t1 then p4-t1 after the tid was reused, are not comparable: droidlag keeps one record per tid, the
    first one: 31, 30, process_3, p3-t1.)"""
    t = _process_tracking_trace()
    assert _tid_pid_names(t, [10, 11, 12, 20, 21, 30, 40, 31]) == [
        (10, 10, "process1", "p1-t0"), (11, None, None, "p1-t1"), (12, 10, "process1", "p1-t2"),
        (20, 20, "process_2", "p2-t0"), (21, 20, "process_2", "p2-t1"), (30, 30, "process_3", "p3-t0"),
        (40, 40, "process_4", "p4-t0"), (31, 30, "process_3", "p3-t1")]


def test_process_tracking_threads_created_during_the_trace():
    """Mirrors the same diff test's rows for threads created by task_newtask with CLONE_THREAD: 22,20,process_2,p2-t2;
    32,30,process_3,p3-t2; 33,30,process_3,p3-t3; 34,30,process_3,p3-t4 (34 made by 32, itself made by 31)."""
    t = _process_tracking_trace()
    assert _tid_pid_names(t, [22, 32, 33, 34]) == [
        (22, 20, "process_2", "p2-t2"), (32, 30, "process_3", "p3-t2"), (33, 30, "process_3", "p3-t3"),
        (34, 30, "process_3", "p3-t4")]


def _exec_trace() -> Trace:
    """parser/process_tracking/process_tracking_exec.py, step for step: a fork, a rename, the process listed twice."""
    return _read(_tree(1, ((10, 0, "parent"),)),
                 _bundle(0, _newtask(15, 10, 11, "child", 0), _switch(16, 10, 11, 0, "parent", "child")),
                 _tree(20, ((11, 0, "child_process"),)),
                 _bundle(0, _rename(25, 11, "child", "true_name")),
                 _tree(30, ((11, 10, "true_process_name"),)))


def test_process_tracking_exec_renames_the_thread():
    """Mirrors parser/process_tracking/process_tracking_exec.py with process_tracking/tests.py
    test_process_tracking_process_tracking_exec: rows 10,10,parent,parent (tid 10's name: droidlag has it from the
    sched_switch comm "parent") and 11,11,...,true_name (task_rename's new name)."""
    t = _exec_trace()
    assert [(tid, t.process_of(tid), t.thread_name(tid)) for tid in (10, 11)] == \
        [(10, 10, "parent"), (11, 11, "true_name")]


def test_process_tracking_exec_later_process_name_wins():
    """The same diff test's process name for pid 11: "true_process_name" (its process_tree at ts 30), not
    "child_process" (ts 20)."""
    assert _exec_trace().process_name(11) == "true_process_name"


# ---- track events -------------------------------------------------------------------------------------------------
def _track_event(seq: int, ts: int, typ: int, name: str | None = None, track: int | None = None,
                 **packet: object) -> pb.TracePacket:
    p = pb.TracePacket(trusted_packet_sequence_id=seq, timestamp=ts, **packet)  # type: ignore[arg-type]
    p.track_event.type = typ
    if name is not None:
        p.track_event.name = name
    if track is not None:
        p.track_event.track_uuid = track
    return p


def _thread_track(seq: int, ts: int, uuid: int, pid: int, tid: int, name: str, default: bool = True,
                  **packet: object) -> pb.TracePacket:
    p = pb.TracePacket(trusted_packet_sequence_id=seq, timestamp=ts, **packet)  # type: ignore[arg-type]
    p.track_descriptor.uuid = uuid
    p.track_descriptor.parent_uuid = 3
    p.track_descriptor.thread.pid, p.track_descriptor.thread.tid = pid, tid
    p.track_descriptor.thread.thread_name = name
    if default:
        p.trace_packet_defaults.track_event_defaults.track_uuid = uuid
    return p


def test_track_event_slices_and_instants_on_thread_tracks():
    """Mirrors parser/track_event/track_event_counters.textproto with track_event/tests.py
    test_track_event_counters_slices (its slices; the counter tracks are not read by droidlag): trace processor's
    (thread, process, ts, dur, name) rows t1,Browser,1000,100,event1_on_t1; t1,2000,200,event2_on_t1;
    t1,2000,200,event3_on_t1 (nested: depth 1); t1,4000,0,event4_on_t1 (an instant); t4,4000,100,event1_on_t3;
    t1,4500,0,float_counter_on_t1 (an instant). Events name their track by the sequence's default track; the
    sequence's incremental state is cleared half-way and the descriptors sent again."""
    proc = pb.TracePacket(trusted_packet_sequence_id=1, timestamp=0)
    proc.track_descriptor.uuid = 3
    proc.track_descriptor.process.pid, proc.track_descriptor.process.process_name = 5, "Browser"
    t = _read(
        _thread_track(1, 0, 1, 5, 1, "t1", incremental_state_cleared=True), proc,
        _track_event(1, 1000, 1, "event1_on_t1"), _track_event(1, 1100, 2),
        _thread_track(1, 2000, 1, 5, 1, "t1", incremental_state_cleared=True), proc,
        _track_event(1, 2000, 1, "event2_on_t1"), _track_event(1, 2000, 1, "event3_on_t1"),
        _track_event(1, 2200, 2), _track_event(1, 2200, 2),
        _track_event(1, 4000, 3, "event4_on_t1"),
        _thread_track(3, 0, 4, 5, 4, "t4", incremental_state_cleared=True),
        _track_event(3, 4000, 1, "event1_on_t3"), _track_event(3, 4100, 2, "event1_on_t3"),
        _track_event(1, 4500, 3, "float_counter_on_t1"))
    rows = [(t.thread_name(tid), t.process_name(pid), ts, dur, name, depth)
            for ts, dur, tid, pid, name, depth in _slices(t, "ts", "dur", "tid", "pid", "name", "depth")]
    assert sorted(rows, key=lambda r: (r[2], r[0], r[5])) == [
        ("t1", "Browser", 1000, 100, "event1_on_t1", 0), ("t1", "Browser", 2000, 200, "event2_on_t1", 0),
        ("t1", "Browser", 2000, 200, "event3_on_t1", 1), ("t1", "Browser", 4000, 0, "event4_on_t1", 0),
        ("t4", "Browser", 4000, 100, "event1_on_t3", 0), ("t1", "Browser", 4500, 0, "float_counter_on_t1", 0)]
    assert not any("skipped" in w.message for w in t.warnings)


# ---- FrameTimeline ------------------------------------------------------------------------------------------------
def _ft(ts: int, member: int, *fields: int | bytes | None) -> bytes:
    """A TracePacket {timestamp, sequence 3, 76: FrameTimelineEvent {member: fields 1, 2, ... in order}}."""
    body = b"".join(field(n, v) for n, v in enumerate(fields, start=1) if v is not None)
    return pb.TracePacket(timestamp=ts, trusted_packet_sequence_id=3).SerializeToString() + field(76, field(member, body))


def _frame_timeline_events_trace() -> Trace:
    """parser/graphics/frame_timeline_events.py, step for step (its newest version, with jank severities)."""
    out: list[bytes] = []

    def expected_display(ts: int, cookie: int, token: int) -> None:
        out.append(_ft(ts, 1, cookie, token, 666))

    def actual_display(ts: int, cookie: int, token: int, present: int, on_time: int, jank: int, prediction: int) -> None:
        out.append(_ft(ts, 2, cookie, token, 666, present, on_time, 0, jank, prediction))

    def expected_surface(ts: int, cookie: int, token: int, display: int, layer: str) -> None:
        out.append(_ft(ts, 3, cookie, token, display, 1000, layer.encode()))

    def actual_surface(ts: int, cookie: int, token: int, display: int, layer: str, present: int, on_time: int,
                       jank: int, prediction: int, severity: int | None = None) -> None:
        severity = (1 if jank == 1 else 0) if severity is None else severity
        out.append(_ft(ts, 4, cookie, token, display, 1000, layer.encode(), present, on_time, 0, jank, prediction,
                       None, severity))

    def end(ts: int, cookie: int) -> None:
        out.append(_ft(ts, 5, cookie))

    make = {"ed": expected_display, "ad": actual_display, "es": expected_surface, "as": actual_surface, "end": end}
    events: list[tuple[object, ...]] = [
        ("ed", 20, 1, 2), ("end", 26, 1), ("ad", 20, 2, 2, 1, 1, 1, 1), ("end", 26, 2),
        ("ed", 40, 3, 4), ("end", 46, 3), ("ad", 42, 4, 4, 1, 1, 1, 1), ("end", 47, 4),
        ("es", 21, 5, 1, 4, "Layer1"), ("end", 36, 5), ("as", 21, 6, 1, 4, "Layer1", 1, 1, 1, 1), ("end", 37, 6),
        ("ed", 80, 7, 6), ("end", 86, 7), ("ad", 81, 8, 6, 1, 1, 1, 1), ("end", 88, 8),
        ("es", 41, 9, 5, 6, "Layer1"), ("end", 56, 9), ("as", 41, 10, 5, 6, "Layer1", 2, 0, 64, 1, 3), ("end", 74, 10),
        ("ed", 120, 11, 8), ("end", 126, 11), ("ad", 108, 12, 8, 3, 1, 2, 1), ("end", 112, 12),
        ("es", 90, 13, 7, 8, "Layer1"), ("end", 106, 13), ("as", 90, 14, 7, 8, "Layer1", 3, 1, 2, 1), ("end", 106, 14),
        ("ed", 140, 15, 12), ("end", 146, 15), ("ad", 148, 16, 12, 2, 0, 16 | 2, 1), ("end", 156, 16),
        ("ed", 170, 17, 15), ("end", 176, 17), ("ad", 170, 18, 15, 1, 1, 1, 1), ("end", 176, 18),
        ("es", 150, 19, 14, 15, "Layer1"), ("end", 170, 19),
        ("as", 150, 20, 14, 15, "Layer1", 1, 1, 1, 1), ("end", 167, 20),
        ("es", 150, 21, 14, 15, "Layer2"), ("end", 170, 21),
        ("as", 150, 22, 14, 15, "Layer2", 1, 1, 1, 1), ("end", 167, 22),
        ("ed", 200, 23, 17), ("end", 206, 23), ("ad", 200, 24, 17, 1, 1, 1, 1), ("end", 206, 24),
        ("as", 80, 25, 16, 17, "Layer1", 5, 0, 256, 2, 2), ("end", 190, 25),   # no expected frame: prediction expired
        ("ed", 220, 26, 18), ("end", 230, 26), ("ad", 245, 27, 18, 2, 0, 512, 1), ("end", 260, 27),
        ("ed", 220, 26, 18), ("end", 230, 26), ("ad", 245, 27, 18, 4, 0, 1024, 0), ("end", 260, 27),
    ]
    for what, *args in events:
        make[str(what)](*args)  # type: ignore[operator]
    return _read(*out)


def test_frame_timeline_actual_frames():
    """Mirrors parser/graphics/frame_timeline_events.py with graphics/tests.py test_actual_frame_timeline_events:
    trace processor's actual rows (ts, dur, pid, display_frame_token, surface_frame_token, layer_name, present_type,
    on_time_finish, jank_type, prediction_type, jank_severity_type). Its last two rows come from one cookie (27)
    started twice before either end (the diff test repeats a display frame): trace processor keeps both starts, the
    first never ended (245, -1, "Late Present", "SurfaceFlinger Stuffing"); droidlag keeps one frame per cookie with
    the values of its last start and its end (frametimeline.rs pairing; docs/validation-perfetto.md), so that row is
    absent here. droidlag's display frames carry their own token in `token` (display_frame_token is for surface
    frames)."""
    ft = _frame_timeline_events_trace().frame_timeline.filter(pl.col("kind") == "actual").sort("ts", "layer_name")
    rows = ft.select("ts", "dur", "pid", "token", "display_frame_token", "layer_name", "present_type",
                     "on_time_finish", "jank_type", "prediction_type", "jank_severity").rows()
    valid, none = "Valid Prediction", "None"
    assert rows == [
        (20, 6, 666, 2, None, None, "On-time Present", True, none, valid, none),
        (21, 16, 1000, 1, 4, "Layer1", "On-time Present", True, none, valid, none),
        (41, 33, 1000, 5, 6, "Layer1", "Late Present", False, "App Deadline Missed", valid, "Full"),
        (42, 5, 666, 4, None, None, "On-time Present", True, none, valid, none),
        (80, 110, 1000, 16, 17, "Layer1", "Unknown Present", False, "Unknown Jank", "Expired Prediction", "Partial"),
        (81, 7, 666, 6, None, None, "On-time Present", True, none, valid, none),
        (90, 16, 1000, 7, 8, "Layer1", "Early Present", True, "SurfaceFlinger Scheduling", valid, "Unknown"),
        (108, 4, 666, 8, None, None, "Early Present", True, "SurfaceFlinger Scheduling", valid, "Unknown"),
        (148, 8, 666, 12, None, None, "Late Present", False,
         "SurfaceFlinger Scheduling, SurfaceFlinger CPU Deadline Missed", valid, "Unknown"),
        (150, 17, 1000, 14, 15, "Layer1", "On-time Present", True, none, valid, none),
        (150, 17, 1000, 14, 15, "Layer2", "On-time Present", True, none, valid, none),
        (170, 6, 666, 15, None, None, "On-time Present", True, none, valid, none),
        (200, 6, 666, 17, None, None, "On-time Present", True, none, valid, none),
        (245, 15, 666, 18, None, None, "Dropped Frame", False, "Dropped Frame", "Unspecified Prediction", "Unknown"),
    ]


def test_frame_timeline_expected_frames():
    """Mirrors the same trace with graphics/tests.py test_expected_frame_timeline_events: trace processor's expected
    rows (ts, dur, pid, display_frame_token, surface_frame_token, layer_name) 20,6,666,2; 21,15,1000,4,1,Layer1;
    40,6; 41,15,1000,6,5,Layer1; 80,6; 90,16,1000,8,7,Layer1; 120,6; 140,6; 150,20,1000,15,14,Layer1; 170,6; 200,6;
    220,-1 and 220,10 (the repeated cookie 26, as above: droidlag has the one frame, 220,10). Trace processor lists
    one expected surface frame per token and process (150: Layer1 only); droidlag keeps each layer's (150: Layer1 and
    Layer2), as the actual frames it pairs them with."""
    ft = _frame_timeline_events_trace().frame_timeline.filter(pl.col("kind") == "expected").sort("ts", "layer_name")
    assert ft.select("ts", "dur", "pid", "token", "display_frame_token", "layer_name").rows() == [
        (20, 6, 666, 2, None, None), (21, 15, 1000, 1, 4, "Layer1"), (40, 6, 666, 4, None, None),
        (41, 15, 1000, 5, 6, "Layer1"), (80, 6, 666, 6, None, None), (90, 16, 1000, 7, 8, "Layer1"),
        (120, 6, 666, 8, None, None), (140, 6, 666, 12, None, None), (150, 20, 1000, 14, 15, "Layer1"),
        (150, 20, 1000, 14, 15, "Layer2"), (170, 6, 666, 15, None, None), (200, 6, 666, 17, None, None),
        (220, 10, 666, 18, None, None)]


def test_frame_timeline_android_17_jank_types():
    """Mirrors parser/graphics/frame_timeline_power_mode.py (its tests.py entry is newer than the copy read): jank bits
    2048, 8192 and 32768. Names as trace processor's frame_timeline_event_parser.cc JankTypeBitmaskToStringId gives
    them ("Non Animating", "Display not ON") and as the Perfetto UI's jank descriptions key them by trace processor's
    jank_type ("PowerModeChange in progress"); the severity of frames without one is "Unknown" (jank type not None),
    by the same parser's rule."""
    t = _read(_ft(100, 1, 1, 1, 666), _ft(110, 5, 1), _ft(100, 2, 2, 1, 666, 1, 1, 0, 32768, 1), _ft(110, 5, 2),
              _ft(120, 3, 3, 2, 1, 1000, b"Layer1"), _ft(130, 5, 3),
              _ft(120, 4, 4, 2, 1, 1000, b"Layer1", 1, 1, 0, 32768, 1), _ft(135, 5, 4),
              _ft(140, 1, 5, 3, 666), _ft(150, 5, 5), _ft(140, 2, 6, 3, 666, 1, 1, 0, 2048, 1), _ft(150, 5, 6),
              _ft(160, 1, 7, 4, 666), _ft(170, 5, 7), _ft(160, 2, 8, 4, 666, 1, 1, 0, 8192, 1), _ft(170, 5, 8))
    actual = t.frame_timeline.filter(pl.col("kind") == "actual").sort("ts")
    assert actual.select("ts", "dur", "scope", "jank_type", "present_type", "jank_severity").rows() == [
        (100, 10, "display", "PowerModeChange in progress", "On-time Present", "Unknown"),
        (120, 15, "surface", "PowerModeChange in progress", "On-time Present", "Unknown"),
        (140, 10, "display", "Non Animating", "On-time Present", "Unknown"),
        (160, 10, "display", "Display not ON", "On-time Present", "Unknown")]


# ---- ftrace data before every CPU's buffer is whole ---------------------------------------------------------------
def _first_bundle(cpu: int, valid_from: int, *events: pb.FtraceEvent, field: str = "last_read_event_timestamp"
                  ) -> pb.TracePacket:
    p = _bundle(cpu, *events)
    setattr(p.ftrace_events, field, valid_from)
    return p


def test_atrace_before_every_cpu_is_whole_is_left_out():
    """Mirrors parser/ftrace/ftrace_crop_tests.py test_crop_atrace_slice: CPU 1's first bundle says its data is whole
    from 1000, CPU 0's from 2000; the B of "FilteredOut" at 1500 is before 2000, "Kept" begins at 2200 and the E at
    2700 ends it. Trace processor's only slice is (2200, 500, "Kept")."""
    t = _read(_first_bundle(1, 1000, _print(1500, 42, "B|42|FilteredOut"), _print(2700, 42, "E|42")),
              _first_bundle(0, 2000, _print(2200, 42, "B|42|Kept")))
    assert _slices(t, "ts", "dur", "name") == [(2200, 500, "Kept")]
    assert any("1 ftrace event(s) before 2000 ns left out" in w.message for w in t.warnings)


def test_compact_sched_before_every_cpu_is_whole_is_left_out():
    """Mirrors parser/ftrace/ftrace_crop_tests.py test_crop_compact_sched_switch: CPU 3 whole from 1000, CPU 6 from 0;
    switches on CPU 3 at 1100 (to 50) and 1200 (to 51), on CPU 6 at 500, 600, 1100, 1200 (to 40, 41, 42, 43).
    Trace processor's sched rows: (cpu 3, 1200, open, 51), (cpu 6, 1100, 100, 42), (cpu 6, 1200, open, 43).
    droidlag agrees, and also keeps 50 running on CPU 3 from 1100 (trace processor makes no row of a CPU's first
    compact switch, whose previous thread is unknown; the next thread is known)."""
    def compact(cpu: int, valid_from: int, deltas: list[int], pids: list[int]) -> pb.TracePacket:
        p = pb.TracePacket()
        b = p.ftrace_events
        b.cpu, b.last_read_event_timestamp = cpu, valid_from
        c = b.compact_sched
        c.intern_table.extend(f"t{pid}" for pid in pids)
        c.switch_timestamp.extend(deltas)
        c.switch_next_pid.extend(pids)
        c.switch_prev_state.extend([0] * len(pids))
        c.switch_next_prio.extend([120] * len(pids))
        c.switch_next_comm_index.extend(range(len(pids)))
        return p
    t = _read(compact(3, 1000, [1100, 100], [50, 51]), compact(6, 0, [500, 100, 500, 100], [40, 41, 42, 43]))
    running = t.thread_states.filter(pl.col("state") == "Running").sort("cpu", "ts")
    assert running.select("cpu", "ts", "dur", "tid").rows() == [
        (3, 1100, 100, 50), (3, 1200, 0, 51), (6, 1100, 100, 42), (6, 1200, 0, 43)]
    assert any("2 ftrace event(s) before 1000 ns left out" in w.message for w in t.warnings)


def test_previous_bundle_end_is_read_before_last_read_event():
    """Perfetto v47+ writes previous_bundle_end_timestamp in a CPU's first bundle (trace processor takes it over
    last_read_event_timestamp); only a CPU's first bundle counts."""
    first = _first_bundle(0, 3000, _print(2500, 7, "I|7|early"), _print(3500, 7, "I|7|late"),
                          field="previous_bundle_end_timestamp")
    first.ftrace_events.last_read_event_timestamp = 1000
    later = _first_bundle(0, 9000, _print(4000, 7, "I|7|second bundle"))
    t = _read(first, later)
    assert _slices(t, "ts", "name") == [(3500, "late"), (4000, "second bundle")]


def test_the_battery_tracing_session_keeps_its_ftrace_data_whole():
    """Trace processor does not leave out data before every CPU is whole for Android's lightweight battery-tracing
    session (its FtraceParser::MaybeOnFirstFtraceEvent, b/344969928): the same case as
    test_atrace_before_every_cpu_is_whole_is_left_out, in that session, keeps "FilteredOut"."""
    config = pb.TracePacket()
    config.trace_config.unique_session_name = "session_with_lightweight_battery_tracing"
    t = _read(config, _first_bundle(1, 1000, _print(1500, 42, "B|42|FilteredOut"), _print(2700, 42, "E|42")),
              _first_bundle(0, 2000, _print(2200, 42, "B|42|Kept")))
    assert sorted(_slices(t, "name")) == [("FilteredOut",), ("Kept",)]
    assert not any("left out" in w.message for w in t.warnings)
