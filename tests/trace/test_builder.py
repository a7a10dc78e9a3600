"""TraceBuilder on constructed event streams: nesting, thread states, binder and block pairing, FrameTimeline."""
from droidlag.trace import TraceBuilder, guess_cpu_classes

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
