"""TraceBuilder on constructed event streams: nesting, thread states, binder and block pairing, FrameTimeline."""
import polars as pl
import pytest

from droidlag.models import TraceBuilder, guess_cpu_classes
from droidlag.models.trace import Process

MS = 1_000_000


def _states(trace, tid):
    return [(r["ts"], r["dur"], r["state"], r["cpu"]) for r in
            trace.thread_states.filter(trace.thread_states["tid"] == tid).sort("ts").iter_rows(named=True)]


def test_atrace_slices_nest_per_thread_and_async_pairs_by_cookie():
    b = TraceBuilder("test", "mem")
    b.atrace(0, 10, "B|10|Choreographer#doFrame 123")
    b.atrace(1 * MS, 10, "B|10|traversal")
    b.atrace(2 * MS, 11, "B|10|DrawFrame 123")       # other thread: its own stack
    b.atrace(3 * MS, 10, "E|10")
    b.atrace(4 * MS, 10, "E")
    b.atrace(5 * MS, 11, "E|10")
    b.atrace(1 * MS, 10, "S|10|launching: app|7")
    b.atrace(9 * MS, 12, "F|10|launching: app|7")    # async ends on another thread
    b.atrace(6 * MS, 10, "C|10|SurfaceView - app#0|1")
    t = b.build()
    rows = {r["name"]: r for r in t.slices.iter_rows(named=True)}
    assert rows["Choreographer#doFrame 123"]["dur"] == 4 * MS and rows["Choreographer#doFrame 123"]["depth"] == 0
    assert rows["traversal"]["depth"] == 1 and rows["traversal"]["parent_id"] == rows["Choreographer#doFrame 123"]["id"]
    assert rows["traversal"]["dur"] == 2 * MS
    assert rows["DrawFrame 123"]["depth"] == 0 and rows["DrawFrame 123"]["dur"] == 3 * MS
    assert rows["launching: app"]["kind"] == "async" and rows["launching: app"]["dur"] == 8 * MS
    c = t.counters.row(0, named=True)
    assert (c["name"], c["value"], c["pid"]) == ("SurfaceView - app#0", 1.0, 10)
    assert t.threads[10].pid == 10


def test_unclosed_slice_runs_to_trace_end_and_is_flagged():
    b = TraceBuilder("test", "mem")
    b.atrace(0, 5, "B|5|never ends")
    b.atrace(10, 5, "B|5|x")
    b.atrace(20, 5, "E|5")
    b.see_time(100)
    t = b.build()
    row = t.slices.filter(t.slices["name"] == "never ends").row(0, named=True)
    assert row["dur"] == 100 and row["closed"] is False
    assert any("still open" in w.message for w in t.warnings)


def test_thread_states_from_switch_waking_and_blocked_reason():
    b = TraceBuilder("test", "mem")
    b.sched_switch(0, cpu=0, prev_tid=0, prev_state="R", next_tid=100, next_comm="main")
    b.sched_switch(10, cpu=0, prev_tid=100, prev_state="D", next_tid=200, next_comm="kworker")
    b.sched_waking(30, tid=100, target_cpu=1, waker_tid=200)
    b.sched_blocked_reason(30, tid=100, function="f2fs_issue_flush", io_wait=True)
    b.sched_switch(35, cpu=1, prev_tid=0, prev_state="R", next_tid=100)
    b.sched_switch(50, cpu=1, prev_tid=100, prev_state="R+", next_tid=0)
    b.sched_switch(60, cpu=1, prev_tid=0, prev_state="R", next_tid=100)
    b.see_time(70)
    t = b.build()
    assert _states(t, 100) == [
        (0, 10, "Running", 0), (10, 20, "D", None), (30, 5, "R", 1),
        (35, 15, "Running", 1), (50, 10, "R+", None), (60, 10, "Running", 1)]
    d = t.thread_states.filter(t.thread_states["state"] == "D").row(0, named=True)
    assert d["blocked_function"] == "f2fs_issue_flush" and d["io_wait"] is True
    r = t.thread_states.filter((t.thread_states["tid"] == 100) & (t.thread_states["state"] == "R")).row(0, named=True)
    assert r["waker_tid"] == 200
    assert t.has_sched and t.has_waking and t.has_blocked_reason
    assert t.threads[100].name == "main"


def test_binder_call_pairs_with_its_reply_and_oneway_has_no_duration():
    b = TraceBuilder("test", "mem")
    b.thread(1, 1, "app-main")
    b.thread(2, 50, "binder:50_1")
    b.binder_transaction(100, tid=1, debug_id=7, reply=False, flags=0x10, code=3, to_proc=50)
    b.binder_transaction_received(120, tid=2, debug_id=7)
    b.binder_transaction(400, tid=2, debug_id=8, reply=True)
    b.binder_transaction_received(430, tid=1, debug_id=8)
    b.binder_transaction(500, tid=1, debug_id=9, reply=False, flags=0x11)
    b.binder_transaction_received(510, tid=2, debug_id=9)
    t = b.build()
    call = t.binder.filter(t.binder["debug_id"] == 7).row(0, named=True)
    assert (call["client_tid"], call["server_tid"], call["server_pid"]) == (1, 2, 50)
    assert (call["received_ts"], call["reply_ts"], call["dur"]) == (120, 400, 330)
    ow = t.binder.filter(t.binder["debug_id"] == 9).row(0, named=True)
    assert ow["oneway"] and ow["dur"] is None


def test_block_requests_pair_issue_with_completion_by_device_and_sector():
    b = TraceBuilder("test", "mem")
    b.block_issue(10, dev=(179 << 20) | 0, sector=800, nr_sectors=8, rwbs="WS", tid=9, comm="kworker")
    b.block_issue(12, dev=(179 << 20) | 0, sector=16, nr_sectors=16, rwbs="R")
    b.block_complete(40, dev=(179 << 20) | 0, sector=16, nr_sectors=16, rwbs="R")
    b.block_complete(90, dev=(179 << 20) | 0, sector=800, nr_sectors=8, rwbs="WS")
    b.block_issue(95, dev=(179 << 20) | 0, sector=0, nr_sectors=0, rwbs="DS")
    t = b.build()
    rows = {r["sector"]: r for r in t.block.iter_rows(named=True)}
    assert rows[800]["dur"] == 80 and rows[800]["bytes"] == 4096 and rows[800]["direction"] == "write"
    assert rows[16]["dur"] == 28 and rows[16]["direction"] == "read"
    assert rows[0]["dur"] is None and rows[0]["direction"] == "discard"


def test_frame_timeline_rows_pair_start_and_end_by_cookie():
    b = TraceBuilder("test", "mem")
    b.frame_timeline_start(100, cookie=1, kind="actual", scope="surface", pid=42, token=5, display_frame_token=9,
                           layer_name="app#0", jank_type="Buffer Stuffing", present_type="Late Present")
    b.frame_timeline_end(30_000_000, cookie=1)
    b.frame_timeline_start(200, cookie=2, kind="expected", scope="surface", pid=42, token=5)
    t = b.build()
    act = t.frame_timeline.filter(t.frame_timeline["kind"] == "actual").row(0, named=True)
    assert act["dur"] == 30_000_000 - 100 and act["jank_type"] == "Buffer Stuffing"
    assert t.summary()["frame_timeline"]["surface_jank_types"] == {"Buffer Stuffing": 1}
    assert any("without an end" in w.message for w in t.warnings)


def test_cpu_classes_from_max_frequencies():
    assert guess_cpu_classes({0: 1800000, 1: 1800000, 4: 2400000, 6: 2850000}) == {
        0: "little", 1: "little", 4: "mid", 6: "big"}
    assert guess_cpu_classes({0: 1800000, 1: 1800000}) == {}
    b = TraceBuilder("test", "mem")
    b.cpu_frequency(0, 0, 300000)
    b.cpu_frequency(5, 0, 1700000)
    b.cpu_frequency(5, 7, 2800000)
    b.cpu_frequency(6, 7, 1000000)
    b.counter(7, "cpufreq", 9000000, pid=12)      # no CPU: not any CPU's frequency
    b.counter(8, "cpuidle", 5000000, cpu=3)       # not a frequency
    t = b.build()
    assert t.cpu_max_freq_khz == {0: 1700000, 7: 2800000}
    assert t.cpu_class == {0: "little", 7: "big"}


def test_requeued_block_request_completes_for_its_last_issue_and_flush_is_not_a_write():
    b = TraceBuilder("test", "mem")
    dev = (8 << 20) | 0
    b.block_issue(10, dev=dev, sector=5345064, nr_sectors=8, rwbs="WS", comm="surfaceflinger")
    b.block_issue(50, dev=dev, sector=5345064, nr_sectors=8, rwbs="WS", comm="kworker/3:1H")   # issued again
    b.block_complete(70, dev=dev, sector=5345064, nr_sectors=8, rwbs="WS")
    b.block_issue(80, dev=dev, sector=-1, nr_sectors=0, rwbs="FWS")
    t = b.build()
    rows = t.block.sort("ts").iter_rows(named=True)
    first, second, flush = list(rows)
    assert first["dur"] is None and second["dur"] == 20
    assert flush["direction"] == "flush"


def test_process_pid_fills_the_main_thread_pid():
    b = TraceBuilder("test", "mem")
    b.sched_switch(0, cpu=0, prev_tid=0, prev_state="R", next_tid=300, next_comm="app")
    b.process(300, "com.example.app")
    t = b.build()
    assert t.threads[300].pid == 300


# ---- bulk methods: the same events through the per-event and the bulk calls give the same Trace -----------------
def _sched_stream():
    """(ts, cpu, prev, prev_state int, next) switches and (ts, tid, target_cpu, waker) wakings on two CPUs, with
    ties at equal timestamps, a D sleep named by a blocked reason, and a preempted (R+) thread."""
    switches = [(0, 0, 0, 0, 100), (0, 1, 0, 0, 300), (10, 0, 100, 2, 200), (20, 1, 300, 1, 0),
                (35, 1, 0, 0, 100), (50, 1, 100, 256, 300), (60, 0, 200, 1, 0), (60, 1, 300, 1, 100)]
    wakings = [(30, 100, 1, 200), (40, 300, 1, 0), (45, 200, 0, 100), (45, 300, 1, 100)]
    return switches, wakings


def _decode(v: int) -> str:
    return {0: "R", 1: "S", 2: "D", 256: "R+"}[v]


def _frame(trace, name):
    df = getattr(trace, name)
    return df.sort(df.columns, nulls_last=True) if df.height else df


def test_sched_switch_many_and_sched_waking_many_match_the_per_event_calls():
    switches, wakings = _sched_stream()
    one = TraceBuilder("test", "mem")
    for ts, cpu, prev, st, nxt in switches:
        one.sched_switch(ts, cpu, prev, _decode(st), nxt)
    for ts, tid, cpu, waker in wakings:
        one.sched_waking(ts, tid, cpu, waker)
    one.sched_blocked_reason(30, 100, "io_schedule", True)
    bulk = TraceBuilder("test", "mem")
    ts, cpu, prev, st, nxt = (list(c) for c in zip(*switches))
    bulk.sched_switch_many(ts, cpu, prev, st, nxt, decode_state=_decode)
    wts, wtid, wcpu, wwaker = (list(c) for c in zip(*wakings))
    bulk.sched_waking_many(wts, wtid, wcpu, wwaker)
    bulk.sched_blocked_reason(30, 100, "io_schedule", True)
    a, b = one.build(), bulk.build()
    assert a.thread_states.height == b.thread_states.height > 0
    assert _frame(a, "thread_states").equals(_frame(b, "thread_states"))
    assert (a.start_ns, a.end_ns, a.has_sched, a.has_waking) == (b.start_ns, b.end_ns, True, True)
    assert _states(b, 100) == [(0, 10, "Running", 0), (10, 20, "D", None), (30, 5, "R", 1),
                               (35, 15, "Running", 1), (50, 10, "R+", None), (60, 0, "Running", 1)]
    d = b.thread_states.filter(b.thread_states["state"] == "D").row(0, named=True)
    assert d["blocked_function"] == "io_schedule" and d["io_wait"] is True


def test_sched_switch_many_takes_state_strings_and_one_cpu_and_keeps_insertion_order_at_ties():
    b = TraceBuilder("test", "mem")
    # two switches at the same ts on one CPU: the one added first applies first
    b.sched_switch(0, 2, 0, "R", 7)
    b.sched_switch_many([5, 5], 2, [7, 8], ["S", ""], [8, 9])
    b.see_time(9)
    t = b.build()
    assert _states(t, 7) == [(0, 5, "Running", 2), (5, 4, "S", None)]
    assert _states(t, 8) == [(5, 0, "Running", 2), (5, 4, "R", None)]   # "" prev_state reads as R
    assert _states(t, 9) == [(5, 4, "Running", 2)]


def test_sched_waking_many_with_missing_cpu_and_waker():
    b = TraceBuilder("test", "mem")
    b.sched_switch(0, 0, 0, "R", 5)
    b.sched_switch(10, 0, 5, "S", 0)
    b.sched_waking_many([20, 25], [5, 5], target_cpu=None, waker_tid=[None, 3])
    b.see_time(30)
    t = b.build()
    rows = t.thread_states.filter(t.thread_states["tid"] == 5).sort("ts").rows(named=True)
    assert [(r["ts"], r["state"], r["cpu"], r["waker_tid"]) for r in rows] == [
        (0, "Running", 0, None), (10, "S", None, None), (20, "R", None, None)]   # the second waking changes nothing
    assert t.has_waking and t.start_ns == 0 and t.end_ns == 30


def test_counter_many_matches_per_event_counters():
    one, bulk = TraceBuilder("test", "mem"), TraceBuilder("test", "mem")
    for ts, v, cpu in ((5, 300000, 0), (1, 1700000, 4), (9, 2800000, 7)):
        one.counter(ts, "cpufreq", v, cpu=cpu)
    one.counter(3, "SurfaceView", 1, pid=42)
    bulk.counter_many([5, 1, 9], "cpufreq", [300000, 1700000, 2800000], cpu=[0, 4, 7])
    bulk.counter_many([3], "SurfaceView", [1], pid=42)
    a, b = one.build(), bulk.build()
    assert a.counters.equals(b.counters)
    assert b.counters["ts"].to_list() == [1, 3, 5, 9] and b.counters["value"].dtype == pl.Float64
    assert b.cpu_max_freq_khz == {0: 300000, 4: 1700000, 7: 2800000}
    assert (b.start_ns, b.end_ns) == (1, 9)


def test_bulk_calls_reject_columns_of_different_lengths():
    b = TraceBuilder("test", "mem")
    with pytest.raises(ValueError):
        b.sched_switch_many([1, 2], 0, [0], ["R", "R"], [3, 4])
    with pytest.raises(ValueError):
        b.counter_many([1, 2], "x", [1.0, 2.0], cpu=[0])


def test_atrace_tracks_instants_separators_and_damaged_payloads():
    """The atrace forms of Android's trace_marker (atrace/ATrace.cpp): G/H async on a named track, N/I instants,
    '|' inside names; damaged payloads become warnings with their line, never slices."""
    b = TraceBuilder("test", "mem")
    b.atrace(0, 20, "B|20|a|b\n\x00")                  # name keeps its '|'; trailing newline and NUL dropped
    b.atrace(1 * MS, 20, "G|20|Track 1|load|42")
    b.atrace(2 * MS, 20, "N|20|Track 1|tick")
    b.atrace(3 * MS, 20, "I|20|mark")
    b.atrace(4 * MS, 21, "H|20|Track 1|load|42")
    b.atrace(5 * MS, 20, "C|20|mem| 1.5e3 ")
    b.atrace(6 * MS, 20, "E|20")
    b.atrace(7 * MS, 22, "B|x2|bad pid", line=7)
    b.atrace(8 * MS, 22, "C|22|n|lots", line=8)
    b.atrace(9 * MS, 22, "B|22", line=9)
    b.atrace(9 * MS, 22, "T|22|plain text")            # no slice semantics, no warning
    t = b.build()
    rows = {r["name"]: r for r in t.slices.iter_rows(named=True)}
    assert set(rows) == {"a|b", "load", "tick", "mark"}
    assert rows["a|b"]["dur"] == 6 * MS
    assert (rows["load"]["kind"], rows["load"]["track"], rows["load"]["cookie"], rows["load"]["dur"]) == \
        ("async", "Track 1", 42, 3 * MS)
    assert (rows["tick"]["kind"], rows["tick"]["depth"], rows["tick"]["track"]) == ("instant", 0, "Track 1")
    assert (rows["mark"]["kind"], rows["mark"]["depth"], rows["mark"]["parent_id"]) == ("instant", 1, rows["a|b"]["id"])
    assert t.counters.select("name", "value", "pid").rows() == [("mem", 1500.0, 20)]
    warned = {w.line: w.message for w in t.warnings if "atrace payload" in w.message}
    assert warned == {7: "atrace payload with bad pid: 'B|x2|bad pid'",
                      8: "atrace payload with bad number: 'C|22|n|lots'",
                      9: "atrace payload too short: 'B|22'"}
    assert t.threads[21].pid == 20                    # the pid field names the writing thread's process
    assert t.end_ns == 9 * MS


def test_build_twice_gives_the_same_trace():
    """build() lets the raw sched events go once the thread states are derived (memory); a second build() of the same
    builder still returns every table whole."""
    b = TraceBuilder("test", "mem")
    b.sched_switch(100, 0, 0, "R", 7)
    b.sched_switch(300, 0, 7, "S", 0)
    b.sched_waking(400, 7, 0, 1)
    b.counter(150, "c", 1.0)
    b.counter(120, "c", 2.0)
    b.atrace(110, 7, "B|7|work")
    b.atrace(210, 7, "E|7")
    first, second = b.build(), b.build()
    for name in ("slices", "thread_states", "counters"):
        assert getattr(first, name).height > 0, name
        assert getattr(first, name).equals(getattr(second, name)), name
    assert first.counters.get_column("ts").to_list() == [120, 150]


def test_events_on_an_impossible_cpu_are_dropped_with_a_count_and_the_rest_kept():
    # the narrow (int32) sched columns must not wrap a damaged CPU number into a real one
    b = TraceBuilder("test", "mem")
    b.sched_switch(0, 1, 0, "R", 100)
    b.sched_switch(10, 1 << 33, 100, "S", 0)        # damaged: CPU 8589934592
    b.sched_switch_many([20, 30], [(1 << 32) + 1, 2], [0, 0], ["R", "R"], [100, 100])
    t = b.build()
    assert sum("2 scheduling event(s) with a CPU number outside" in w.message for w in t.warnings) == 1
    assert _states(t, 100) == [(0, 30, "Running", 1), (30, 0, "Running", 2)]


def test_a_later_blocked_reason_for_the_same_d_interval_names_it():
    b = TraceBuilder("test", "mem")
    b.sched_switch(0, 0, 0, "R", 100)
    b.sched_switch(10, 0, 100, "D", 0)
    b.sched_blocked_reason(20, 100, "first_fn", False)
    b.sched_blocked_reason(25, 100, "second_fn", True)   # the same D interval: the last report names it
    b.sched_switch(40, 0, 0, "R", 100)
    b.sched_switch(50, 0, 100, "D", 0)
    b.sched_blocked_reason(60, 100, "third_fn", None)
    t = b.build()
    d = t.thread_states.filter(t.thread_states["state"] == "D").sort("ts")
    assert d["blocked_function"].to_list() == ["second_fn", "third_fn"]
    assert d["io_wait"].to_list() == [True, None]
    assert t.thread_states["state"].dtype == pl.Categorical


def test_bulk_declarations_follow_the_one_by_one_rules():
    """threads_many/processes_many make their records in bulk when nothing was declared before, and fall back to
    the one-by-one rules when a row repeats an id (first pid and name win, a missing one is filled; a process's
    empty name is no name). Expected records written by hand."""
    b = TraceBuilder("test", "mem")
    b.threads_many([(10, 1, "main"), (11, 1, None), (12, None, "w")])
    b.processes_many([(1, "app", 0), (2, "", None)])
    t = b.build()
    assert [tuple(x) for x in t.threads.values()][:3] == [(10, 1, "main"), (11, 1, None), (12, None, "w")]
    assert t.processes[1] == Process(1, "app", 0) and t.processes[2].name is None
    b = TraceBuilder("test", "mem")
    b.threads_many([(10, None, None), (11, 1, "a"), (10, 5, "late"), (11, 2, "b")])
    b.processes_many([(3, None, None), (3, "named", 7)])
    t = b.build()
    assert (t.threads[10].pid, t.threads[10].name) == (5, "late")     # both were missing: filled
    assert (t.threads[11].pid, t.threads[11].name) == (1, "a")        # first wins
    assert list(t.threads)[:2] == [10, 11]
    assert t.processes[3] == Process(3, "named", 7)


def test_a_second_build_reuses_the_tables_and_refuses_events_added_after_the_first():
    # slice events and the sched stream are let go once their tables are made (memory); a second build() gives the
    # same tables and warnings once, and events added after a build cannot be lost silently
    b = TraceBuilder("systrace", "x")
    b.atrace(0, 1, "B|1|outer")
    b.atrace(10, 1, "E|1")
    b.atrace(20, 1, "E|1")          # an end without a begin: one warning
    b.sched_switch(0, 0, 1, "S", 2)
    first = b.build()
    second = b.build()
    assert second.slices.equals(first.slices) and second.thread_states.equals(first.thread_states)
    assert first.slices["name"].to_list() == ["outer"] and first.slices["dur"].to_list() == [10]
    assert sum("without a begin" in w.message for w in second.warnings) == 1
    b.atrace(30, 1, "B|1|late")
    with pytest.raises(RuntimeError, match="build once"):
        b.build()


def test_a_binder_call_to_a_process_main_thread_known_only_as_the_process_has_its_server_pid():
    # the server thread (tid 50) is never declared as a thread, only as process 50: it is that process's main
    # thread, and its pid is known when the binder table is made (as in 43 of the pixel6a corpus trace's calls)
    b = TraceBuilder("perfetto", "x")
    b.process(50, "system_server")
    b.thread(61, 60, "binder-client")
    b.binder_transaction(10, 61, 1, reply=False)
    b.binder_transaction_received(11, 50, 1)
    b.binder_transaction(20, 50, 2, reply=True)
    b.binder_transaction_received(21, 61, 2)
    t = b.build()
    row = t.binder.row(0, named=True)
    assert (row["client_tid"], row["client_pid"], row["server_tid"], row["server_pid"]) == (61, 60, 50, 50)


def test_a_process_declared_again_takes_its_later_name_and_ppid():
    # as trace processor's process table takes each process-tree listing: an app process is listed under its
    # zygote's name until it takes its package name (the pixel6 corpus trace's pid 10628)
    b = TraceBuilder("perfetto", "x")
    b.process(7, "zygote64", 1)
    b.process(7, "com.example.app")
    b.process(7, "", None)                  # no name, no ppid: nothing replaced
    b.process(8, None, None)
    b.process(8, "late", 3)
    t = b.build()
    assert t.processes[7] == Process(7, "com.example.app", 1) and t.processes[8] == Process(8, "late", 3)
    assert t.threads[7].name == "com.example.app"     # the main thread named after the process


def test_async_slices_on_a_named_track_pair_by_name_and_a_nameless_end_closes_the_latest():
    # two G on one track with one cookie, each ended by its named H; then two more ended by H|pid|track|cookie
    # (Android 14's asyncTraceForTrackEnd writes no name), which closes the latest still open first
    b = TraceBuilder("systrace", "x")
    for ts, payload in [(10, "G|1|trk|a|7"), (15, "G|1|trk|b|7"), (20, "H|1|trk|b|7"), (30, "H|1|trk|a|7"),
                        (40, "G|1|trk|c|7"), (45, "G|1|trk|d|7"), (50, "H|1|trk|7"), (60, "H|1|trk|7")]:
        b.atrace(ts, 1, payload)
    t = b.build()
    assert sorted(t.slices.select("name", "ts", "dur", "closed").rows()) == [
        ("a", 10, 20, True), ("b", 15, 5, True), ("c", 40, 20, True), ("d", 45, 5, True)]
    assert not t.warnings


def test_cpu_max_frequency_over_both_sample_routes_ignores_non_numbers():
    """Each CPU's highest cpufreq sample is taken over the samples gathered natively (cpu_frequency, atrace) and
    those given in bulk (counter_many) together; a NaN or infinite value says nothing (it made int() raise when the
    maximum was read off the table), and a maximum the trace states (cpu_info) wins over the samples."""
    b = TraceBuilder("test", "mem")
    b.cpu_frequency(1, 0, 1_000_000)
    b.cpu_frequency(2, 4, float("nan"))
    b.cpu_frequency(3, 5, float("inf"))
    b.atrace(4, 77, "C|77|cpufreq|2500000")           # an app's counter of that name: no CPU, not a CPU's frequency
    b.counter_many([5, 6], "cpufreq", [1_500_000, float("nan")], cpu=[0, 4])
    b.cpu_frequency(7, 0, 1_200_000)                  # after the bulk samples: the highest is still 1.5 GHz
    b.cpu_frequency(8, 3, 2_000_000.9)                # kHz truncated as int() truncates
    b.cpu_frequency(9, 6, 2_000_000)
    b.cpu_max_frequency(6, 3_000_000)
    b.cpu_frequency(10, 7, 1e20)                      # past an int64 on either route: damage, not a frequency
    b.counter_many([11], "cpufreq", [-1e20], cpu=[7])
    t = b.build()
    assert t.cpu_max_freq_khz == {6: 3_000_000, 0: 1_500_000, 3: 2_000_000}
    assert t.counters.height == 11
