"""task_newtask in Perfetto traces: a thread made with CLONE_THREAD joins its creator's process, whatever the order
in which the per-CPU ftrace bundles come in the file, and when the creator is a process's main thread known only as
the process. Expected pids worked out by hand from the events."""
from __future__ import annotations

from pathlib import Path

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from droidlag.io import read_trace

CLONE_THREAD, CLONE_FS, SIGCHLD = 0x10000, 0x200, 0x11


def _newtasks(trace: pb.Trace, cpu: int, events: list[tuple[int, int, int, str, int]]) -> None:
    packet = trace.packet.add(trusted_packet_sequence_id=1)
    packet.ftrace_events.cpu = cpu
    for ts, creator, new, comm, flags in events:
        e = packet.ftrace_events.event.add(timestamp=ts, pid=creator)
        e.task_newtask.pid, e.task_newtask.comm, e.task_newtask.clone_flags = new, comm, flags


def _read(trace: pb.Trace, tmp_path: Path):
    path = tmp_path / "t.pftrace"
    path.write_bytes(trace.SerializeToString())
    return read_trace(path)


def test_a_thread_made_before_its_creator_in_file_order_still_joins_its_process(tmp_path):
    # CPU0's bundle comes first in the file: at 2000, task 500 makes thread 501; CPU1's bundle, after it: at 1000,
    # task 100 forks 500 (a process of its own). In time order 500 is a process first, so 501 is in process 500.
    t = pb.Trace()
    _newtasks(t, 0, [(2000, 500, 501, "worker", CLONE_THREAD | CLONE_FS)])
    _newtasks(t, 1, [(1000, 100, 500, "app", SIGCHLD)])
    trace = _read(t, tmp_path)
    assert (trace.threads[500].pid, trace.threads[501].pid) == (500, 500)
    assert trace.threads[501].name == "worker"


def test_a_thread_made_by_a_main_thread_known_only_as_its_process_joins_that_process(tmp_path):
    t = pb.Trace()
    tree = t.packet.add(trusted_packet_sequence_id=1).process_tree
    tree.processes.add(pid=500, ppid=1, cmdline=["com.app"])      # no thread entries
    _newtasks(t, 0, [(1000, 500, 501, "worker", CLONE_THREAD | CLONE_FS)])
    trace = _read(t, tmp_path)
    assert trace.threads[501].pid == 500 and trace.threads[500].pid == 500
