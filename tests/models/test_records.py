"""Thread and Process records: native immutable objects that read as the named tuples they replaced, are not
tracked by the cyclic garbage collector, and follow the TraceBuilder's declaration rules when made in bulk."""
from __future__ import annotations

import copy
import gc
import pickle

import pytest

from droidlag._native import add_main_threads, processes_of, threads_of
from droidlag.models.trace import Process, Thread
from droidlag.models.trace_builder import TraceBuilder


def test_a_thread_reads_as_a_named_tuple_did():
    t = Thread(12, 3, "RenderThread")
    assert (t.tid, t.pid, t.name) == (12, 3, "RenderThread")
    tid, pid, name = t
    assert (tid, pid, name) == (12, 3, "RenderThread")
    assert tuple(t) == (12, 3, "RenderThread") and len(t) == 3
    assert t[0] == 12 and t[-1] == "RenderThread"
    with pytest.raises(IndexError):
        t[3]
    assert repr(t) == "Thread(tid=12, pid=3, name='RenderThread')"
    assert repr(Thread(1, None, None)) == "Thread(tid=1, pid=None, name=None)"
    assert t == Thread(12, 3, "RenderThread") and t != Thread(12, 3, "main") and t != Thread(12, None, "RenderThread")
    assert hash(t) == hash((12, 3, "RenderThread"))      # as the tuple's: equal records hash alike
    assert {t, Thread(12, 3, "RenderThread")} == {t}
    assert pickle.loads(pickle.dumps(t)) == t and copy.deepcopy(t) == t
    with pytest.raises(AttributeError):
        t.name = "x"     # type: ignore[misc]


def test_a_process_reads_as_a_named_tuple_did():
    p = Process(40, "com.example.app")
    assert p.ppid is None and tuple(p) == (40, "com.example.app", None)
    assert Process(40, "com.example.app", 1) != p and Process(40, "com.example.app", None) == p
    assert repr(Process(1, "init", 0)) == "Process(pid=1, name='init', ppid=0)"
    assert pickle.loads(pickle.dumps(p)) == p
    assert p != Thread(40, None, "com.example.app") and (p == (40, "com.example.app", None)) is False


def test_records_and_their_dicts_are_not_tracked_by_the_garbage_collector():
    # a named tuple (a tuple subclass) is tracked and never untracked by CPython: each collection walked thousands
    assert not gc.is_tracked(Thread(1, 2, "x")) and not gc.is_tracked(Process(1, "x"))
    made = threads_of([(1, None, "a"), (2, 1, None)])
    assert made is not None and not gc.is_tracked(made)


def test_bulk_records_refuse_a_repeated_id_and_read_an_empty_process_name_as_none():
    assert threads_of([(1, None, "a"), (1, 2, None)]) is None
    assert processes_of([(5, "x", None), (5, None, 1)]) is None
    made = processes_of([(5, "", None), (6, "app", 5)])
    assert made == {5: Process(5, None, None), 6: Process(6, "app", 5)}
    assert list(made) == [5, 6]      # in the rows' order


def test_main_threads_come_from_processes():
    processes = {10: Process(10, "app"), 20: Process(20, "srv"), 30: Process(30, "other")}
    threads = {20: Thread(20, None, "srv-main"), 30: Thread(30, 7, "kept"), 31: Thread(31, 30, "w")}
    add_main_threads(processes, threads)
    assert threads == {20: Thread(20, 20, "srv-main"),   # pid filled, name kept
                       30: Thread(30, 7, "kept"),        # a pid already known is kept
                       31: Thread(31, 30, "w"),
                       10: Thread(10, 10, "app")}        # added, named as the process


def test_adopted_records_follow_the_rules_when_records_exist_already():
    b = TraceBuilder("perfetto", "x")
    b.thread(5, None, "first")
    b.process(9, None, None)
    b.adopt_records({9: Process(9, "named", 1)}, {5: Thread(5, 9, "second"), 6: Thread(6, 9, "w")})
    t = b.build()
    # thread(5, 9, "second") after thread(5, None, "first"): the pid is filled, the first name wins
    assert t.threads[5] == Thread(5, 9, "first") and t.threads[6] == Thread(6, 9, "w")
    assert t.processes[9] == Process(9, "named", 1)      # name and ppid were missing: filled
    assert t.threads[9] == Thread(9, 9, "named")         # the process's main thread


def test_adopted_records_are_taken_as_they_are_by_a_fresh_builder():
    b = TraceBuilder("perfetto", "x")
    threads = {5: Thread(5, 9, "a")}
    b.adopt_records({9: Process(9, "p")}, threads)
    t = b.build()
    assert t.threads == {5: Thread(5, 9, "a"), 9: Thread(9, 9, "p")} and t.processes == {9: Process(9, "p")}
