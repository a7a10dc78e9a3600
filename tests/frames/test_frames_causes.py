"""Each cause rule on a constructed trace: a slow frame whose critical path is dominated by one system factor, with
smooth frames around it as the normal baseline. Each test fails without its rule (the factor would not be found, or
would be misattributed)."""
from __future__ import annotations

import json

from frames_fixtures import APP, MS, RT, UI, frame, new_builder, run_on, sched_smooth, slice_, smooth_frames

from droidlag.frames import analyze_frames
from droidlag.report.frames_json import frames_dict

N_NORMAL = 8
PERIOD = 16_666_667


def _base():
    b = new_builder()
    t = smooth_frames(b, 10 * MS, N_NORMAL)
    sched_smooth(b, 10 * MS, N_NORMAL)
    return b, t


def _long_frame_rt(b, t, ui_ms):
    """RenderThread part of the slow frame, on a big core."""
    rt_start = t + int(ui_ms * MS) - 15_000
    b.sched_waking(rt_start - 5_000, RT, 5, UI)
    run_on(b, RT, 5, rt_start, rt_start + 5 * MS)


def _top_cause(b):
    r = analyze_frames(b.build())
    slow = [f for f in frames_dict(r)["frames"] if f["naive_verdict"] != "ok"]
    assert len(slow) == 1
    return slow[0]["causes"], r


def test_binder_cause_follows_the_server_thread():
    b, t = _base()
    b.process(200, "system_server")
    b.thread(201, 200, "binder:200_1")
    frame(b, t, 30, 5)
    run_on(b, UI, 4, t, t + 2 * MS)                         # sends the call, then sleeps
    b.binder_transaction(t + 2 * MS - 10_000, UI, 1, reply=False)
    b.binder_transaction_received(t + 2 * MS + 10_000, 201, 1)
    run_on(b, 201, 6, t + 2 * MS + 20_000, t + 26 * MS)      # server works 24 ms
    b.binder_transaction(t + 26 * MS - 10_000, 201, 2, reply=True)
    b.binder_transaction_received(t + 26 * MS + 5_000, UI, 2)
    b.sched_waking(t + 26 * MS, UI, 4, 201)
    run_on(b, UI, 4, t + 26 * MS + 10_000, t + 30 * MS)
    _long_frame_rt(b, t, 30)
    causes, _ = _top_cause(b)
    assert causes[0]["name"] == "binder"
    assert causes[0]["share"] > 0.6 and causes[0]["normal_share"] == 0
    assert any("binder:200_1" in k for k in causes[0]["evidence"]["servers_ms"])


def test_io_cause_from_uninterruptible_sleep():
    b, t = _base()
    frame(b, t, 30, 5)
    run_on(b, UI, 4, t, t + 3 * MS, out_state="D")
    b.sched_blocked_reason(t + 25 * MS, UI, "wait_on_page_bit_killable", io_wait=True)
    b.sched_waking(t + 25 * MS, UI, 4, 0)
    run_on(b, UI, 4, t + 25 * MS + 10_000, t + 30 * MS)
    _long_frame_rt(b, t, 30)
    causes, _ = _top_cause(b)
    assert causes[0]["name"] == "io"
    assert "wait_on_page_bit_killable" in causes[0]["evidence"]["blocked_functions_ms"]


def test_runnable_cause_is_scheduling_delay():
    b, t = _base()
    b.thread(300, 300, "hog")
    frame(b, t, 30, 5)
    run_on(b, UI, 4, t, t + 2 * MS, out_state="R")          # preempted, waits 24 ms for the CPU
    run_on(b, 300, 4, t + 2 * MS, t + 26 * MS, out_state="S")
    run_on(b, UI, 4, t + 26 * MS, t + 30 * MS)
    _long_frame_rt(b, t, 30)
    causes, _ = _top_cause(b)
    assert causes[0]["name"] == "runnable"
    assert causes[0]["share"] > 0.6


def test_sleeping_cause_when_no_waker_explains_it():
    b, t = _base()
    frame(b, t, 30, 5)
    run_on(b, UI, 4, t, t + 2 * MS)
    b.sched_waking(t + 26 * MS, UI, 4, 0)                   # a timer: nobody to follow
    run_on(b, UI, 4, t + 26 * MS + 10_000, t + 30 * MS)
    _long_frame_rt(b, t, 30)
    causes, _ = _top_cause(b)
    assert causes[0]["name"] == "sleeping"


def test_wakeup_edge_attributes_the_wait_to_the_waker():
    """The main thread sleeps until a worker, itself blocked on I/O, wakes it: the cause is the worker's I/O, not
    'sleeping' (which it would be without following the wakeup edge)."""
    b, t = _base()
    b.thread(120, APP, "worker")
    frame(b, t, 30, 5)
    run_on(b, UI, 4, t, t + 2 * MS)
    run_on(b, 120, 6, t + 1 * MS, t + 3 * MS, out_state="D")
    b.sched_blocked_reason(t + 24 * MS, 120, "f2fs_read", io_wait=True)
    b.sched_waking(t + 24 * MS, 120, 6, 0)
    run_on(b, 120, 6, t + 24 * MS + 10_000, t + 26 * MS)
    b.sched_waking(t + 26 * MS - 5_000, UI, 4, 120)
    run_on(b, UI, 4, t + 26 * MS + 10_000, t + 30 * MS)
    _long_frame_rt(b, t, 30)
    causes, _ = _top_cause(b)
    names = [c["name"] for c in causes]
    assert names[0] == "io" and "sleeping" not in names
    assert any(k.startswith("worker") for k in causes[0]["evidence"]["threads_ms"])


def test_little_saturated_cause():
    b, t = _base()
    frame(b, t, 30, 5)
    # main thread runs on LITTLE cpu 0 while cpus 0-3 are all busy and big cpus 4-7 idle
    run_on(b, UI, 0, t, t + 30 * MS)
    for cpu, tid in zip((1, 2, 3), (401, 402, 403)):
        b.thread(tid, 400, f"bg{cpu}")
        run_on(b, tid, cpu, t - 1 * MS, t + 31 * MS)
    _long_frame_rt(b, t, 30)
    causes, _ = _top_cause(b)
    assert causes[0]["name"] == "little_saturated"


def test_gc_cause_from_art_gc_slices_on_the_critical_thread():
    b, t = _base()
    frame(b, t, 30, 5)
    run_on(b, UI, 4, t, t + 30 * MS)
    slice_(b, UI, t + 2 * MS, 22 * MS, "WaitForGcToComplete")
    _long_frame_rt(b, t, 30)
    causes, _ = _top_cause(b)
    assert "gc" in [c["name"] for c in causes]


def test_app_work_names_the_components_on_the_critical_call_path():
    b, t = _base()
    frame(b, t, 30, 5, measure_ms=25, component="RecyclerView.onMeasure")
    run_on(b, UI, 4, t, t + 30 * MS)
    _long_frame_rt(b, t, 30)
    causes, _ = _top_cause(b)
    assert [c["name"] for c in causes] == ["app_work"]
    ev = causes[0]["evidence"]
    assert ev["critical_call_path"]["main"][:4] == ["Choreographer#doFrame", "traversal", "measure",
                                                   "RecyclerView.onMeasure"]
    assert "RecyclerView.onMeasure" in ev["components_ms"]


def test_causes_are_not_claimed_without_sched_data():
    b = new_builder()
    t = smooth_frames(b, 10 * MS, 3)
    frame(b, t, 30, 5, measure_ms=25, component="Inflate")
    r = analyze_frames(b.build())
    assert any("no sched_switch" in n for n in r.notes)
    slow = [f for f in frames_dict(r)["frames"] if f["naive_verdict"] != "ok"][0]
    assert [c["name"] for c in slow["causes"]] == ["app_work"]
    assert json.dumps(slow["causes"])  # serializable
