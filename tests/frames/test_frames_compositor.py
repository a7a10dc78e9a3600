"""SurfaceFlinger on the critical path: frames FrameTimeline (or the composition timing) calls late because of the
compositor get the `surfaceflinger` cause, from SF's main thread over the composition window, against normal
frames. Without the extension the on-time-app frame has no cause at all and the SR frame names only app causes."""
from __future__ import annotations

import json

import polars as pl
from frames_fixtures import APP, MS, RT, SF_PID, UI, frame, new_builder, run_on, slice_

from conftest import corpus_file
from droidlag.findings import frames_from_file
from droidlag.frames import analyze_frames
from droidlag.frames.results import CompositorEvidence
from droidlag.report.frames_json import evidence_dict, frames_dict, summary_dict

PERIOD = 16_666_667
N = 8
HOG = 700
SF_JANK = "SurfaceFlinger CPU Deadline Missed"


def _app_sched(b, ts, ui_ms, rt_ms):
    run_on(b, UI, 4, ts, ts + int(ui_ms * MS))
    rt_start = ts + int(ui_ms * MS) - 15_000
    b.sched_waking(rt_start - 5_000, RT, 5, UI)
    run_on(b, RT, 5, rt_start, rt_start + int(rt_ms * MS))
    return rt_start + int(rt_ms * MS)


def _composition(b, a, work_ms, preempted_ms=0.0, atrace=True):
    """SF main thread: woken at a, composes (onMessageReceived > handleMessageRefresh > composite) for work_ms of
    CPU; when preempted_ms, a hog takes cpu 6 from it 1 ms into the composition for that long (SF runnable).
    atrace=False: the sched events only, no SurfaceFlinger slices (a trace without the gfx atrace category)."""
    w = int(preempted_ms * MS)
    b.sched_waking(a, SF_PID, 6, 0)
    b.sched_switch(a + 1000, 6, 0, "R", SF_PID)
    if w:
        b.sched_switch(a + 1 * MS, 6, SF_PID, "R", HOG)
        b.sched_switch(a + 1 * MS + w, 6, HOG, "S", SF_PID)
    end = a + w + int(work_ms * MS)
    b.sched_switch(end, 6, SF_PID, "S", 0)
    if not atrace:
        return end
    b.atrace(a + 2000, SF_PID, f"B|{SF_PID}|onMessageReceived")
    b.atrace(a + 4000, SF_PID, f"B|{SF_PID}|handleMessageRefresh")
    slice_(b, SF_PID, a + 6000, end - a - 20_000, "composite", pid=SF_PID)
    b.atrace(end - 6000, SF_PID, "E")
    b.atrace(end - 4000, SF_PID, "E")
    return end


def _ft(b, cookie, vsync, ts, app_end, d_ts, d_end, jank="None", d_jank="None", d_present=None):
    b.frame_timeline_start(ts, cookie, "expected", "surface", APP, vsync, layer_name="app#0")
    b.frame_timeline_end(ts + PERIOD, cookie)
    b.frame_timeline_start(ts + 1000, cookie + 1, "actual", "surface", APP, vsync, display_frame_token=vsync + 10_000,
                           layer_name="app#0", jank_type=jank,
                           present_type="On-time Present" if jank == "None" else "Late Present")
    b.frame_timeline_end(app_end, cookie + 1)
    b.frame_timeline_start(d_ts, cookie + 2, "actual", "display", SF_PID, vsync + 10_000, jank_type=d_jank,
                           present_type=d_present or ("On-time Present" if d_jank == "None" else "Late Present"),
                           on_time_finish=d_present == "Early Present" or d_jank == "None")
    b.frame_timeline_end(d_end, cookie + 2)


def _trace(with_ft=True, d_present=None, atrace=True):
    """N on-time frames, then (i = N) an on-time app frame whose composition is late and (i = N + 1) an app frame
    24 ms late whose composition is late too. atrace=False: sched and FrameTimeline only, no atrace at all (no
    doFrame/DrawFrame, no SurfaceFlinger slices): the frames come from FrameTimeline's surface frames."""
    b = new_builder()
    b.thread(HOG, 700, "hog")
    t = 10 * MS
    for i in range(N + 2):
        ts = t + i * PERIOD
        late_app = i == N + 1
        ui_ms = 24 if late_app else 4
        if atrace:
            frame(b, ts, ui_ms, 3, vsync_id=1000 + i, measure_ms=1)
        end = _app_sched(b, ts, ui_ms, 3)
        a = end + 500_000
        if i >= N:     # the compositor is late: preempted 14 ms by a hog in the middle of 4 ms of work
            cend = _composition(b, a, 4, preempted_ms=14, atrace=atrace)
        else:
            cend = _composition(b, a, 2, atrace=atrace)
        if with_ft:
            jank = ("App Deadline Missed, " + SF_JANK) if late_app else SF_JANK if i == N else "None"
            _ft(b, 10 * i, 1000 + i, ts, end, a, cend + 1 * MS, jank=jank, d_jank=SF_JANK if i >= N else "None",
                d_present=d_present if i >= N else None)
    return b.build()


def _frame(r, vsync):
    return [f for f in frames_dict(r)["frames"] if f["vsync_id"] == vsync][0]


def test_app_on_time_but_compositor_late_keeps_verdict_and_says_so():
    r = analyze_frames(_trace())
    f = _frame(r, 1000 + N)
    assert f["verdict"] == "ok" and f["ft_jank_type"] == SF_JANK
    assert [c["name"] for c in f["causes"]] == ["surfaceflinger"]
    ev = f["causes"][0]["evidence"]
    assert "compositor was late" in ev["verdict_note"] and SF_JANK in ev["compositor_late"]
    assert ev["thread"] == f"surfaceflinger ({SF_PID})"
    assert ev["states"]["runnable"] > 0.6 and ev["normal"]["states"]["runnable"] < 0.05
    assert ev["slices_ms"] and ev["critical_call_path"][:3] == ["onMessageReceived", "handleMessageRefresh",
                                                                 "composite"]
    assert "cpu6 (big)" in ev["cpu_ms"]
    assert ev["display_frame"]["jank_type"] == SF_JANK
    assert f["causes"][0]["share"] > f["causes"][0]["normal_share"]
    # not counted as SR: the summary's cause ranking is over SR/FF frames only
    assert r.summary.sr == 1
    comp = summary_dict(r.summary)["compositor"]
    assert comp["cause_app_on_time_frames"] == 1 and comp["cause_sr_ff_frames"] == 1
    assert json.dumps(frames_dict(r))


def test_sr_frame_with_late_compositor_gets_both_sides():
    r = analyze_frames(_trace())
    f = _frame(r, 1000 + N + 1)
    assert f["verdict"] == "SR"
    names = [c["name"] for c in f["causes"]]
    assert names[-1] == "surfaceflinger" and len(names) >= 2   # app-side cause(s) first, then the compositor
    assert {c["name"] for c in summary_dict(r.summary)["causes"]} >= {"surfaceflinger"}


def test_sf_jank_type_on_a_display_frame_that_presented_early_blames_no_compositor():
    """FrameTimeline labels some early frames "Prediction Error"/SF types: a frame presented early was not held up."""
    r = analyze_frames(_trace(d_present="Early Present"))
    on_time_app = _frame(r, 1000 + N)
    assert on_time_app["verdict"] == "ok" and on_time_app["causes"] == []
    slow = _frame(r, 1000 + N + 1)
    assert slow["verdict"] == "SR" and "surfaceflinger" not in [c["name"] for c in slow["causes"]]


def test_without_frametimeline_a_long_composition_is_the_signal():
    """Systrace-era: no FrameTimeline; the composition of the slow frame took longer than a vsync period."""
    r = analyze_frames(_trace(with_ft=False))
    f = _frame(r, 1000 + N + 1)
    assert f["naive_verdict"] == "SR"
    sf = [c for c in f["causes"] if c["name"] == "surfaceflinger"]
    assert sf and "over one vsync period" in sf[0]["evidence"]["compositor_late"]
    assert sf[0]["evidence"]["window_source"] == "composition slice"
    # the on-time app frame is not an SR/FF frame and FrameTimeline is absent: no causes for it
    assert _frame(r, 1000 + N)["causes"] == []


def test_frametimeline_sf_jank_without_atrace():
    """Sched + FrameTimeline, no atrace (a Perfetto config without the gfx category): the frames come from
    FrameTimeline's surface frames and the composition window from the display frame; SurfaceFlinger has no slices
    to show. Expected values by hand from _trace(): the display frames of i = N and N + 1 carry SF_JANK and were
    presented late (2 frames); frame N + 1 is the app's own deadline miss (SR), frame N was on time (ok)."""
    trace = _trace(atrace=False)
    assert trace.slices.height == 0
    r = analyze_frames(trace)
    assert r.frames.height == N + 2 and r.frames["do_frame_id"].null_count() == N + 2   # FrameTimeline-only frames
    comp = summary_dict(r.summary)["compositor"]
    assert comp["sf_main_tid"] == SF_PID
    assert comp["late_frametimeline_frames"] == 2 and comp["window_sources"] == ["frametimeline display frame"]
    assert comp["cause_sr_ff_frames"] == 1 and comp["cause_app_on_time_frames"] == 1
    sfc = r.causes.filter(pl.col("name") == "surfaceflinger")
    assert sfc.height == comp["cause_sr_ff_frames"] + comp["cause_app_on_time_frames"] == 2
    for c in (c for c in r.frame_causes if c.name == "surfaceflinger"):
        ev = evidence_dict(c.evidence)
        assert ev["thread"].endswith(f"({comp['sf_main_tid']})") and ev["slices_ms"] == {}
        assert ev["critical_call_path"] == [] and ev["window_source"] == "frametimeline display frame"
        assert ev["states"]["runnable"] > 0.6      # the hog holds the CPU 14 ms of the 19 ms display frame
    ok_rows = r.frames.filter(pl.col("frame_id").is_in(sfc["frame_id"].implode()) & (pl.col("verdict") == "ok"))
    assert ok_rows.height == comp["cause_app_on_time_frames"] == 1
    assert json.dumps(frames_dict(r))


def test_surfaceflinger_evidence_is_typed():
    """The frames analysis returns typed evidence (moved here from test_frames_results, on this hand-made trace):
    every surfaceflinger cause has its CompositorEvidence with a window, and the summary's two counts add up to
    the records."""
    r = analyze_frames(_trace())
    sf = [c for c in r.frame_causes if c.name == "surfaceflinger"]
    assert sf and all(isinstance(c.evidence.compositor, CompositorEvidence) and c.evidence.compositor.window_ns > 0
                      for c in sf)
    shown = summary_dict(r.summary)["compositor"]
    assert shown["cause_sr_ff_frames"] + shown["cause_app_on_time_frames"] == len(sf) == 2


def test_real_frametimeline_without_sf_jank_blames_no_compositor(corpus):
    """Real Perfetto capture (sched + FrameTimeline + atrace): corpus/traces/SOURCES.md section 7 counts its 10
    actual display frames all with jank None and its one janky app surface frame as "App Deadline Missed" (decoded
    there with a hand-written wire-format decoder): no SF jank type, so no compositor-late frame and no
    surfaceflinger cause, while composition windows still come from the display frames."""
    r = frames_from_file(corpus_file(
        corpus, "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace"))
    comp = summary_dict(r.summary)["compositor"]
    assert comp["window_sources"] == ["frametimeline display frame"] and comp["frames_with_window"] > 0
    assert comp["late_frametimeline_frames"] == 0
    assert comp["cause_sr_ff_frames"] == comp["cause_app_on_time_frames"] == 0
    assert r.causes.filter(pl.col("name") == "surfaceflinger").height == 0
