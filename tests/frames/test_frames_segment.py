"""Frame segmentation and verdicts on constructed traces: doFrame + DrawFrame matching, stages, vsync ids,
non-HWUI renderers, BufferQueue-aware verdicts and missing data."""
from __future__ import annotations

import polars as pl
from frames_fixtures import APP, MS, RT, SF_PID, UI, frame, new_builder, slice_, smooth_frames

from droidlag.frames import FramesConfig, analyze_frames
from droidlag.frames.segment import segment_frames
from droidlag.report.frames_json import frames_dict


def test_frames_match_drawframe_by_containment_and_measure_wall_time():
    b = new_builder()
    t = smooth_frames(b, 10 * MS, 5)
    end, rt_start = frame(b, t, 30, 10, measure_ms=20)
    seg = segment_frames(b.build())
    f = seg.frames
    assert f.height == 6
    last = f.row(5, named=True)
    assert last["render_tid"] == RT
    # wall time from doFrame start to DrawFrame end, not the sum of both threads
    assert last["dur_ns"] == end - t
    assert last["measure"] == 20 * MS
    assert last["render_thread"] == 10 * MS
    assert last["start_source"] == "doframe_start"


def test_frames_match_by_vsync_id_when_names_carry_one():
    b = new_builder()
    smooth_frames(b, 10 * MS, 4, vsync0=500)
    f = segment_frames(b.build()).frames
    assert f["vsync_id"].to_list() == [500, 501, 502, 503]
    assert f["draw_frame_id"].null_count() == 0


def test_naive_and_bufferqueue_verdicts():
    """A 40 ms frame with a queued buffer ready at its deadline is hidden (buffer stuffing); one with none is SR."""
    b = new_builder()
    t = smooth_frames(b, 10 * MS, 3)
    frame(b, t, 30, 10)                               # long frame 1: queue empty at deadline -> SR
    t2 = t + 60 * MS
    frame(b, t2, 30, 10)                              # long frame 2: a buffer waiting at deadline -> hidden
    layer = "com.example.app/com.example.app.MainActivity#0"
    b.atrace(t + 1 * MS, SF_PID, f"C|{SF_PID}|{layer}|0")
    b.atrace(t2 + 2 * MS, SF_PID, f"C|{SF_PID}|{layer}|1")
    b.atrace(t2 + 20 * MS, SF_PID, f"C|{SF_PID}|{layer}|0")
    r = analyze_frames(b.build())
    f = r.frames
    assert f["naive_verdict"].to_list() == ["ok", "ok", "ok", "SR", "SR"]
    assert f["verdict"].to_list() == ["ok", "ok", "ok", "SR", "ok"]
    assert r.summary.buffer_signal == "bufferqueue"
    assert (r.summary.sr, r.summary.sr_naive) == (1, 2)


def test_long_frame_without_buffer_signal_is_not_possible_not_guessed():
    b = new_builder()
    t = smooth_frames(b, 10 * MS, 3)
    frame(b, t, 30, 10)
    r = analyze_frames(b.build())
    assert r.frames["verdict"].to_list()[-1] == "not possible"
    assert r.summary.sr is None and r.summary.sr_naive == 1
    assert r.summary.not_possible_reason is not None


def test_frozen_frame_over_700ms():
    b = new_builder()
    t = smooth_frames(b, 10 * MS, 2)
    frame(b, t, 750, 5)
    r = analyze_frames(b.build())
    assert r.summary.ff_naive == 1 and r.summary.sr_naive == 0


def test_frametimeline_is_the_buffer_aware_signal_and_buffer_stuffing_is_not_jank():
    b = new_builder()
    t = smooth_frames(b, 10 * MS, 2, vsync0=10)
    frame(b, t, 30, 5, vsync_id=12)
    frame(b, t + 50 * MS, 30, 5, vsync_id=13)
    for cookie, (tok, ts, jank) in enumerate([(10, 10 * MS, "None"), (11, 10 * MS + 16_666_667, "None"),
                                              (12, t, "App Deadline Missed"), (13, t + 50 * MS, "Buffer Stuffing")]):
        b.frame_timeline_start(ts, 2 * cookie, "expected", "surface", APP, tok)
        b.frame_timeline_end(ts + 16 * MS, 2 * cookie)
        b.frame_timeline_start(ts + 100_000, 2 * cookie + 1, "actual", "surface", APP, tok, jank_type=jank,
                               present_type="On-time Present" if jank == "None" else "Late Present")
        b.frame_timeline_end(ts + 36 * MS, 2 * cookie + 1)
    r = analyze_frames(b.build())
    f = r.frames
    assert f["verdict"].to_list() == ["ok", "ok", "SR", "ok"]
    assert f["naive_verdict"].to_list()[2:] == ["SR", "SR"]
    agree = r.summary.frametimeline_agreement
    assert agree["naive_16ms"]["fp"] == 1 and agree["naive_16ms"]["tp"] == 1
    assert r.summary.buffer_signal == "frametimeline"


def test_flutter_app_is_detected_not_counted():
    b = new_builder()
    b.thread(110, APP, "1.ui")
    b.thread(111, APP, "1.raster")
    for i in range(20):
        ts = 10 * MS + i * 16_666_667
        slice_(b, UI, ts, 1 * MS, "Choreographer#doFrame")
        slice_(b, 111, ts + 2 * MS, 1 * MS, "queueBuffer")
    r = analyze_frames(b.build())
    assert r.summary.frames == 0
    assert r.summary.sections["non_hwui_apps"][0]["renderer"] == "flutter"
    assert any("flutter" in n for n in r.notes)


def test_trace_without_frames_says_so():
    b = new_builder()
    b.sched_switch(1 * MS, 0, 0, "R", UI)
    b.sched_switch(2 * MS, 0, UI, "S", 0)
    r = analyze_frames(b.build())
    assert r.summary.frames == 0
    assert r.summary.no_frames_reason is not None
    d = frames_dict(r)
    assert d["frames"] == [] and d["summary"]["buffer_signal"] == "none"


def test_app_filter_and_json_shape():
    b = new_builder()
    smooth_frames(b, 10 * MS, 3)
    r = analyze_frames(b.build(), FramesConfig(app="com.other"))
    assert r.summary.frames == 0
    r = analyze_frames(b.build(), FramesConfig(app="com.example.app"))
    d = frames_dict(r)
    assert d["summary"]["frames"] == 3
    for k in ("frames", "sr", "ff", "sr_naive", "ff_naive", "buffer_signal", "causes"):
        assert k in d["summary"]
    fr = d["frames"][0]
    for k in ("start_ns", "dur_ns", "stages", "verdict", "naive_verdict", "causes"):
        assert k in fr
    assert isinstance(r.frames, pl.DataFrame)
