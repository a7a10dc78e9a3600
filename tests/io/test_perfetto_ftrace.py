"""prev_state decoding for both kernel encodings, and ftrace bundles built with the perfetto classes: compact_sched
(implicit prev_pid, inferred waker, interned comms), interned kernel symbols, sched_wakeup de-duplication."""
from __future__ import annotations

import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from droidlag.io.perfetto import read_perfetto
from droidlag.io.perfetto_ftrace import kernel_version, prev_state_string

K510 = "5.10.107-android13-4-00011-g913113f05fa2-ab8919828"
K44 = "4.4.88-g7a7c5ae"


@pytest.mark.parametrize("value, expected", [
    (0, "R"), (256, "R+"), (1, "S"), (2, "D"), (4, "T"), (8, "t"), (16, "X"), (32, "Z"), (64, "P"), (128, "I"),
    (2 | 256, "D+"), (1 | 2, "S|D"),
])
def test_prev_state_on_4_14_and_later_kernels(value, expected):
    assert prev_state_string(value, K510) == expected
    assert prev_state_string(value, None) == expected     # the default when the trace has no uname


@pytest.mark.parametrize("value, expected", [
    (0, "R"), (2048, "R+"), (1, "S"), (2, "D"), (16, "Z"), (32, "X"), (64, "x"), (128, "K"), (256, "W"),
    (512, "P"), (1024, "N"), (2 | 128, "D|K"), (1 | 2048, "S+"),
])
def test_prev_state_on_4_4_kernels(value, expected):
    assert prev_state_string(value, K44) == expected


def test_kernel_version_parses_uname_release():
    assert kernel_version(K510) == (5, 10)
    assert kernel_version("4.19.113-22067904") == (4, 19)
    assert kernel_version("") is None and kernel_version(None) is None


def _trace(*packets: pb.TracePacket) -> bytes:
    t = pb.Trace()
    t.packet.extend(packets)
    return t.SerializeToString()


def _uname(release: str) -> pb.TracePacket:
    p = pb.TracePacket(trusted_packet_sequence_id=1)
    p.system_info.utsname.release = release
    return p


def test_compact_sched_uses_implicit_prev_pid_interned_comms_and_running_thread_as_waker():
    p = pb.TracePacket(trusted_packet_sequence_id=2)
    b = p.ftrace_events
    b.cpu = 3
    cs = b.compact_sched
    cs.intern_table.extend(["main", "RenderThread"])
    # switches at 1000 (-> 10 "main"), 1500 (10 leaves in D, -> 11 "RenderThread"); timestamps delta-encoded
    cs.switch_timestamp.extend([1000, 500])
    cs.switch_prev_state.extend([0, 2])
    cs.switch_next_pid.extend([10, 11])
    cs.switch_next_prio.extend([120, 110])
    cs.switch_next_comm_index.extend([0, 1])
    # 11 wakes 10 at 1800 (on this cpu, so the waker is the running thread, 11)
    cs.waking_timestamp.extend([1800])
    cs.waking_pid.extend([10])
    cs.waking_target_cpu.extend([2])
    cs.waking_prio.extend([120])
    cs.waking_comm_index.extend([0])
    t = read_perfetto(_trace(_uname(K510), p), "mem")
    rows = {(r["tid"], r["state"]): r for r in t.thread_states.iter_rows(named=True)}
    assert rows[(10, "Running")]["ts"] == 1000 and rows[(10, "Running")]["dur"] == 500
    assert rows[(10, "D")]["dur"] == 300
    r = rows[(10, "R")]
    assert (r["ts"], r["cpu"], r["waker_tid"]) == (1800, 2, 11)
    assert t.thread_name(10) == "main" and t.thread_name(11) == "RenderThread"


def _event(ts: int, pid: int, **kw) -> pb.FtraceEvent:
    e = pb.FtraceEvent(timestamp=ts, pid=pid)
    for k, v in kw.items():
        getattr(e, k).CopyFrom(v)
    return e


def _bundle(*events: pb.FtraceEvent) -> pb.TracePacket:
    """One ftrace event bundle of cpu 0 holding the events, on sequence 2."""
    p = pb.TracePacket(trusted_packet_sequence_id=2)
    p.ftrace_events.cpu = 0
    p.ftrace_events.event.extend(events)
    return p


def test_blocked_reason_caller_resolves_through_interned_kernel_symbols():
    p = _bundle(
        _event(100, 0, sched_switch=pb.SchedSwitchFtraceEvent(prev_pid=0, prev_state=0, next_pid=5, next_comm="w")),
        _event(200, 5, sched_switch=pb.SchedSwitchFtraceEvent(prev_pid=5, prev_state=2, next_pid=0, prev_comm="w")),
        _event(300, 9, sched_waking=pb.SchedWakingFtraceEvent(pid=5, target_cpu=0, comm="w")),
        _event(300, 9, sched_wakeup=pb.SchedWakeupFtraceEvent(pid=5, target_cpu=0, comm="w")),
        _event(300, 9, sched_blocked_reason=pb.SchedBlockedReasonFtraceEvent(pid=5, caller=7, io_wait=1)),
    )
    p.interned_data.kernel_symbols.add(iid=7, str=b"io_schedule")
    t = read_perfetto(_trace(p), "mem")
    d = t.thread_states.filter(t.thread_states["state"] == "D").row(0, named=True)
    assert (d["ts"], d["dur"], d["blocked_function"], d["io_wait"]) == (200, 100, "io_schedule", True)
    r = t.thread_states.filter(t.thread_states["state"] == "R")
    assert r.height == 1 and r["waker_tid"][0] == 9       # sched_wakeup did not add a second wake-up


def test_sched_wakeup_is_used_when_the_trace_has_no_sched_waking():
    p = _bundle(
        _event(100, 5, sched_switch=pb.SchedSwitchFtraceEvent(prev_pid=5, prev_state=1, next_pid=0)),
        _event(400, 9, sched_wakeup=pb.SchedWakeupFtraceEvent(pid=5, target_cpu=1, comm="w")),
    )
    t = read_perfetto(_trace(p), "mem")
    r = t.thread_states.filter(t.thread_states["state"] == "R").row(0, named=True)
    assert (r["ts"], r["cpu"], r["waker_tid"]) == (400, 1, 9)
    assert t.has_waking


def test_task_rename_and_process_tree_names_win_over_comms():
    tree = pb.TracePacket(trusted_packet_sequence_id=1, timestamp=50)
    tree.process_tree.processes.add(pid=40, ppid=1, cmdline=["com.example.app"])
    tree.process_tree.threads.add(tid=41, tgid=40, name="RenderThread")
    p = _bundle(
        _event(100, 0, sched_switch=pb.SchedSwitchFtraceEvent(prev_pid=0, next_pid=40, next_comm="<pre-initialized>")),
        _event(150, 40, task_rename=pb.TaskRenameFtraceEvent(pid=40, oldcomm="<pre-initialized>",
                                                             newcomm="example.app")),
        _event(200, 40, sched_switch=pb.SchedSwitchFtraceEvent(prev_pid=40, next_pid=41, next_comm="RenderThre")),
    )
    t = read_perfetto(_trace(tree, p), "mem")
    assert t.thread_name(40) == "example.app"
    assert t.thread_name(41) == "RenderThread" and t.process_of(41) == 40
    assert t.process_name(40) == "com.example.app" and t.processes[40].ppid == 1


def test_thread_facts_apply_in_reading_order_and_threads_keep_first_seen_order():
    """Each thread's pid and name from the facts in the order the reader applies them (declarations, atrace pids,
    authoritative names by time, comms last), worked out by hand: a later name wins over an earlier one whichever
    source it comes from, a comm never renames a named thread, a missing pid is filled by the first source that has
    one; the threads table lists threads in the order their first fact was applied."""
    early_tree = pb.TracePacket(trusted_packet_sequence_id=1, timestamp=50)
    early_tree.process_tree.processes.add(pid=40, ppid=1, cmdline=["com.example.app"])
    early_tree.process_tree.threads.add(tid=41, tgid=40, name="tree-early")
    early_tree.process_tree.threads.add(tid=43, name="no-tgid")          # pid unknown here
    late_tree = pb.TracePacket(trusted_packet_sequence_id=1, timestamp=500)
    late_tree.process_tree.threads.add(tid=42, tgid=40, name="tree-late")
    p = _bundle(
        _event(100, 0, sched_switch=pb.SchedSwitchFtraceEvent(prev_pid=0, next_pid=41, next_comm="comm41")),
        _event(110, 41, sched_switch=pb.SchedSwitchFtraceEvent(prev_pid=41, prev_comm="comm41", next_pid=44,
                                                               next_comm="comm44")),
        _event(120, 43, print=pb.PrintFtraceEvent(buf="B|77|work\n")),     # atrace: 43 belongs to 77
        _event(130, 45, print=pb.PrintFtraceEvent(buf="B|40|other\n")),    # atrace-only thread 45 of 40
        _event(300, 41, task_rename=pb.TaskRenameFtraceEvent(pid=41, newcomm="renamed41")),
        _event(300, 42, task_rename=pb.TaskRenameFtraceEvent(pid=42, newcomm="renamed42")),
        _event(310, 46, task_rename=pb.TaskRenameFtraceEvent(pid=46, newcomm="rename-only")),
    )
    t = read_perfetto(_trace(early_tree, late_tree, p), "mem")
    # 41: tree name at 50, renamed at 300 -> the rename (later) wins; the comm does not count
    assert (t.threads[41].pid, t.threads[41].name) == (40, "renamed41")
    # 42: renamed at 300, tree name at 500 -> the tree (later) wins
    assert (t.threads[42].pid, t.threads[42].name) == (40, "tree-late")
    # 43: declared without a tgid; the atrace pid fills it
    assert (t.threads[43].pid, t.threads[43].name) == (77, "no-tgid")
    # 44: known only from a comm; 45 only from atrace; 46 only from a rename
    assert (t.threads[44].pid, t.threads[44].name) == (None, "comm44")
    assert (t.threads[45].pid, t.threads[45].name) == (40, None)
    assert (t.threads[46].pid, t.threads[46].name) == (None, "rename-only")
    # first seen: the trees' threads (41, 43, then 42), atrace's 45, the rename's 46, the comm's 44, and last the
    # processes' main threads the builder adds (40)
    assert list(t.threads) == [41, 43, 42, 45, 46, 44, 40]


def test_varints_of_every_length_decode_exactly():
    """Timestamps of every bit width (varints of 1 to 9 bytes) and a negative pid (10 bytes) come back exactly: the
    decoder reads varints up to 8 bytes a word at a time, so each length, and a varint followed by other fields
    that the word also covers, must give the value the protobuf encoder wrote."""
    stamps = sorted({(1 << k) + d for k in range(63) for d in (-1, 0, 1) if 0 < (1 << k) + d < (1 << 63)})
    p = _bundle(*(_event(ts, 0, sched_switch=pb.SchedSwitchFtraceEvent(prev_pid=0, next_pid=1000 + i, prev_state=0))
                  for i, ts in enumerate(stamps)),
                _event(stamps[-1] + 1, 0, sched_switch=pb.SchedSwitchFtraceEvent(prev_pid=0, next_pid=-5)))
    t = read_perfetto(_trace(p), "mem")
    running = t.thread_states.sort("ts")
    assert running["ts"].to_list() == [*stamps, stamps[-1] + 1]
    assert running["tid"].to_list() == [*range(1000, 1000 + len(stamps)), -5]


def _blocked_switches(tid: int, t0: int) -> list[pb.FtraceEvent]:
    """tid runs at t0 and leaves the CPU in D at t0 + 100."""
    return [_event(t0, 0, sched_switch=pb.SchedSwitchFtraceEvent(prev_pid=0, prev_state=0, next_pid=tid)),
            _event(t0 + 100, tid, sched_switch=pb.SchedSwitchFtraceEvent(prev_pid=tid, prev_state=2, next_pid=0))]


def _reason(ts: int, tid: int, caller: int, io_wait: int) -> pb.FtraceEvent:
    return _event(ts, 9, sched_blocked_reason=pb.SchedBlockedReasonFtraceEvent(pid=tid, caller=caller, io_wait=io_wait))


def test_blocked_reasons_cross_to_python_as_distinct_payloads():
    # three reasons naming two distinct (function, io_wait) payloads: the decoder hands two tuples, and each D
    # interval still names its own function (thread 5's two D intervals io_schedule, thread 6's mutex_lock)
    from droidlag._native import PerfettoDecoder
    p = _bundle(*_blocked_switches(5, 100), _reason(250, 5, 7, 1),
                *_blocked_switches(6, 300), _reason(450, 6, 8, 0),
                *_blocked_switches(5, 500), _reason(650, 5, 7, 1))
    p.interned_data.kernel_symbols.add(iid=7, str=b"io_schedule")
    p.interned_data.kernel_symbols.add(iid=8, str=b"mutex_lock")
    d = PerfettoDecoder()
    d.feed(_trace(p))
    cols = d.finish()
    assert cols["blocked"] == [("io_schedule", True), ("mutex_lock", False)]
    assert list(memoryview(cols["sched"]["blocked_index"]).cast("i")) == [0, 1, 0]
    t = read_perfetto(_trace(p), "mem")
    rows = t.thread_states.filter(t.thread_states["state"] == "D").sort("ts")
    assert rows.select("ts", "tid", "blocked_function", "io_wait").rows() == [
        (200, 5, "io_schedule", True), (400, 6, "mutex_lock", False), (600, 5, "io_schedule", True)]


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return bytes(out)


def test_a_packet_that_fails_half_way_leaves_no_blocked_payload_behind():
    # the second packet's bundle holds a blocked reason with a new payload, then an event whose timestamp is cut off:
    # the packet is rolled back whole, so only the first packet's payload crosses, and reading stops there. The first
    # packet's two reasons name one payload, so that a rollback to the reasons' count would keep the second payload
    from droidlag._native import PerfettoDecoder
    first = _bundle(*_blocked_switches(5, 100), _reason(250, 5, 0x10, 0), _reason(260, 5, 0x10, 0)).SerializeToString()
    ok_event = _reason(300, 5, 0x20, 1).SerializeToString()
    bundle = b"\x08\x00" + b"\x12" + _varint(len(ok_event)) + ok_event + b"\x12\x02\x08\x80"
    second = b"\x0a" + _varint(len(bundle)) + bundle + b"\x50\x02"
    data = b"\x0a" + _varint(len(first)) + first + b"\x0a" + _varint(len(second)) + second
    d = PerfettoDecoder()
    d.feed(data)
    cols = d.finish()
    assert cols["stopped"] is not None and cols["stopped"][0] == 1 + len(_varint(len(first))) + len(first)
    assert cols["blocked"] == [("ksym#16", False)]
    assert list(memoryview(cols["sched"]["blocked_index"]).cast("i")) == [0, 0]
