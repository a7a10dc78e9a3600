"""What the systrace/atrace trial (a new user's, on public captures) found in the frames, on hand-made atrace text:
Choreographer callbacks that drew nothing were counted as frames (an animation-only doFrame; a doFrame whose
RenderThread frame said `Frame skipped: NothingToDraw`); a text trace, which cannot hold FrameTimeline, got a note
about FrameTimeline rows, and that note and the per-app count took in a frame without an end; a Flutter app with 2
buffers was promised a pacing the output never gave, and was named by its pid although SurfaceFlinger's layer names
its package. Expected values are worked out by hand in each test."""
from __future__ import annotations

from pathlib import Path

import pytest
from frames_fixtures import MS

from droidlag.findings import frames_from_file
from droidlag.findings.narrative import frames_headlines
from droidlag.frames import analyze_frames
from droidlag.models import TraceBuilder
from droidlag.report.frames_json import frames_dict

HEADER = "# tracer: nop\n#\n"
APP, RT = 2000, 2010          # com.example.app and its RenderThread
SF = 500


def _line(comm: str, tid: int, pid: int, ms: float, msg: str) -> tuple[float, str]:
    """One atrace line at `ms` milliseconds after 1000 s (ftrace prints whole microseconds)."""
    return ms, f"{comm[-15:]:>16}-{tid:<5} ({pid:>5}) [001] ...1 {1000 + ms / 1000:.6f}: tracing_mark_write: {msg}"


def _text(lines: list[tuple[float, str]]) -> str:
    return HEADER + "\n".join(text for _, text in sorted(lines, key=lambda x: x[0])) + "\n"


def ui(ms: float, msg: str) -> tuple[float, str]:
    return _line("com.example.app", APP, APP, ms, msg)


def rt(ms: float, msg: str) -> tuple[float, str]:
    return _line("RenderThread", RT, APP, ms, msg)


def drawn_frame(t: float, vsync: int) -> list[tuple[float, str]]:
    """A frame that drew: doFrame (traversal) 0-4 ms, DrawFrames 3.8-7.0 ms queueing a buffer: 7.0 ms long."""
    return [ui(t, f"B|{APP}|Choreographer#doFrame {vsync}"), ui(t + 0.1, f"B|{APP}|traversal"), ui(t + 3.9, "E"),
            ui(t + 4.0, "E"), rt(t + 3.8, f"B|{APP}|DrawFrames {vsync}"), rt(t + 6.0, f"B|{APP}|queueBuffer"),
            rt(t + 6.5, "E"), rt(t + 7.0, "E")]


def skipped_draw(t: float, vsync: int, reason: str, ui_ms: float = 30.0) -> list[tuple[float, str]]:
    """A doFrame whose traversal runs `ui_ms`, then a DrawFrames in which the RenderThread says `Frame skipped:
    <reason>` and queues nothing (0.5 ms)."""
    end = t + ui_ms
    return [ui(t, f"B|{APP}|Choreographer#doFrame {vsync}"), ui(t + 0.1, f"B|{APP}|traversal"),
            ui(end - 0.2, "E"), ui(end, "E"), rt(end - 0.1, f"B|{APP}|DrawFrames {vsync}"),
            rt(end + 0.2, f"I|{APP}|Frame skipped: {reason}"), rt(end + 0.4, "E")]


def animation_only(t: float, vsync: int | None) -> list[tuple[float, str]]:
    """A doFrame that ran only an animation callback: 0.6 ms, no traversal, no RenderThread frame."""
    name = "Choreographer#doFrame" + (f" {vsync}" if vsync is not None else "")
    return [ui(t, f"B|{APP}|{name}"), ui(t + 0.1, f"B|{APP}|animation"), ui(t + 0.5, "E"), ui(t + 0.6, "E")]


def _report(tmp_path: Path, lines: list[tuple[float, str]], name: str = "trace.txt") -> dict:
    p = tmp_path / name
    p.write_text(_text(lines), encoding="utf-8")
    return frames_dict(frames_from_file(p))


# ---- defect 1: callbacks that drew nothing are not frames ----------------------------------------------------

def test_nothing_to_draw_and_animation_only_callbacks_are_not_frames(tmp_path):
    """vsync 100 drew (7.0 ms); vsync 101's traversal took 30.0 ms and its RenderThread frame said NothingToDraw;
    vsync 102 ran an animation callback only. One frame, 7.0 ms, none slow; 2 callbacks apart. Before: 3 frames,
    one of them SR (101: 16.667 -> 47.067 ms, 30.4 ms)."""
    d = _report(tmp_path, drawn_frame(0, 100) + skipped_draw(16.667, 101, "NothingToDraw")
                + animation_only(50.0, 102))
    s = d["summary"]
    assert s["frames"] == 1 and s["incomplete_frames"] == 0
    assert s["sr_naive"] == 0 and s["ff_naive"] == 0
    assert s["frame_time_ms"]["max"] == 7.0
    assert s["skipped_callbacks"] == 2
    assert s["skipped_callbacks_by_reason"] == {"no_render_thread_frame": 1, "nothing_to_draw": 1}
    assert s["apps"] == [{"pid": APP, "process": "com.example.app", "frames": 1, "sr_ff_naive": 0, "sr_ff": 0,
                          "skipped_callbacks": 2}]
    note = next(n for n in d["notes"] if "drew nothing" in n)
    assert note.startswith("2 Choreographer#doFrame callback(s) drew nothing and are not counted as frames")
    assert "1 whose RenderThread frame said `Frame skipped: NothingToDraw` (no buffer queued)" in note
    # the 30 ms traversal is said, not hidden: the main thread was busy that long (doFrame 16.667 -> 46.667 ms)
    assert "1 of them kept the main thread busy over 16.67 ms (longest 30.0 ms)" in note
    assert [f["dur_ns"] for f in d["frames"]] == [7 * MS]


@pytest.mark.parametrize("reason", ["NoBuffer", "AlreadyDrawn", "NoOutputTarget"])
def test_a_frame_that_was_due_and_dropped_stays_a_frame(tmp_path, reason):
    """HWUI's other skip reasons are frames that were expected and not drawn: they stay frames, and a long one
    stays slow (vsync 101: doFrame 16.667 ms, DrawFrames ends at 47.067 ms: 30.4 ms, SR by threshold)."""
    d = _report(tmp_path, drawn_frame(0, 100) + skipped_draw(16.667, 101, reason))
    s = d["summary"]
    assert s["frames"] == 2 and s["skipped_callbacks"] == 0 and s["sr_naive"] == 1
    assert s["frame_time_ms"]["max"] == 30.4


@pytest.mark.parametrize("handoff", ["postAndWait", "Record View#draw()"])
def test_a_doframe_that_handed_a_frame_over_stays_a_frame_without_its_drawframe(tmp_path, handoff):
    """vsync 101 handed its frame to the RenderThread (a `postAndWait` or `Record View#draw()` inside it) but no
    DrawFrame of it is in the trace (lost): a frame, ending at its doFrame's end (4.0 ms)."""
    t = 16.667
    lost = [ui(t, f"B|{APP}|Choreographer#doFrame 101"), ui(t + 0.1, f"B|{APP}|traversal"),
            ui(t + 3.0, f"B|{APP}|{handoff}"), ui(t + 3.5, "E"), ui(t + 3.9, "E"), ui(t + 4.0, "E")]
    d = _report(tmp_path, drawn_frame(0, 100) + lost)
    s = d["summary"]
    assert s["frames"] == 2 and s["skipped_callbacks"] == 0
    assert sorted(f["dur_ns"] for f in d["frames"]) == [4 * MS, 7 * MS]
    assert "1 doFrame(s) had no matching DrawFrame (the RenderThread slice is not in the trace, or the app drew " \
           "without one); their end is the doFrame end" in d["notes"]


def test_without_render_thread_frames_a_doframe_without_traversal_drew_nothing(tmp_path):
    """An old capture with the main thread only (no RenderThread frames), Choreographer's callback sections traced:
    doFrames 0 and 2 ran `input` + `traversal` (3.0 ms), 1 and 3 only `animation` (0.6 ms). 2 frames, 2 callbacks
    apart (no view traversal ran: Choreographer draws views only in its traversal callback). Before: 4 frames."""
    lines: list[tuple[float, str]] = []
    for k in range(4):
        t = k * 16.667
        if k % 2:
            lines += animation_only(t, None)
        else:
            lines += [ui(t, f"B|{APP}|Choreographer#doFrame"), ui(t + 0.1, f"B|{APP}|input"), ui(t + 0.5, "E"),
                      ui(t + 0.6, f"B|{APP}|traversal"), ui(t + 2.9, "E"), ui(t + 3.0, "E")]
    d = _report(tmp_path, lines)
    s = d["summary"]
    assert s["frames"] == 2 and s["skipped_callbacks"] == 2
    assert s["skipped_callbacks_by_reason"] == {"no_traversal": 2}
    assert [f["dur_ns"] for f in d["frames"]] == [3 * MS, 3 * MS]
    assert "no RenderThread DrawFrame slices: frame ends come from the main thread's doFrame only (RenderThread, " \
           "dequeue/queueBuffer stages not available)" in d["notes"]


def test_doframes_without_callback_sections_stay_frames(tmp_path):
    """A capture whose Choreographer traces no callback sections (bare doFrames, 2.0 ms each) says nothing about what
    they drew: every one stays a frame, as before."""
    lines: list[tuple[float, str]] = []
    for k in range(3):
        lines += [ui(k * 16.667, f"B|{APP}|Choreographer#doFrame"), ui(k * 16.667 + 2.0, "E")]
    s = _report(tmp_path, lines)["summary"]
    assert s["frames"] == 3 and s["skipped_callbacks"] == 0


# ---- a review's reproducers: frames that drew without a RenderThread frame, one window of two, one app's sections

def test_a_window_drawn_on_the_ui_thread_stays_a_frame_and_stays_slow(tmp_path):
    """The app draws its frames on the RenderThread, but vsync 101's window is drawn in software on the UI thread
    (ViewRootImpl's `draw`, the buffer dequeued and queued by lockCanvas/unlockCanvasAndPost): 80.0 ms, no DrawFrame.
    It queued a buffer, so it is a frame, and slow (2 frames of 7.0 and 80.0 ms; before the review: 1, none slow)."""
    t = 16.667
    soft = [ui(t, f"B|{APP}|Choreographer#doFrame 101"), ui(t + 0.1, f"B|{APP}|traversal"),
            ui(t + 1.0, f"B|{APP}|draw"), ui(t + 1.5, f"B|{APP}|dequeueBuffer"), ui(t + 2.0, "E"),
            ui(t + 78.0, f"B|{APP}|queueBuffer"), ui(t + 78.5, "E"), ui(t + 79.0, "E"), ui(t + 79.9, "E"),
            ui(t + 80.0, "E")]
    s = _report(tmp_path, drawn_frame(0, 100) + soft)["summary"]
    assert s["frames"] == 2 and s["skipped_callbacks"] == 0
    assert s["sr_naive"] == 1 and s["frame_time_ms"]["max"] == 80.0


def test_one_window_with_nothing_to_draw_does_not_drop_a_frame_another_window_drew(tmp_path):
    """One doFrame, two windows of the app: the first window's DrawFrames says NothingToDraw, the second's draws and
    queues a buffer. The doFrame drew: a frame, no callback set apart (before the review: dropped as
    nothing_to_draw)."""
    t = 16.667
    two = [ui(t, f"B|{APP}|Choreographer#doFrame 101"), ui(t + 0.1, f"B|{APP}|traversal"),
           ui(t + 1.6, f"B|{APP}|postAndWait"), ui(t + 2.2, "E"), ui(t + 3.6, f"B|{APP}|postAndWait"),
           ui(t + 4.2, "E"), ui(t + 4.4, "E"), ui(t + 4.5, "E"),
           rt(t + 1.7, f"B|{APP}|DrawFrames 101"), rt(t + 2.0, f"I|{APP}|Frame skipped: NothingToDraw"),
           rt(t + 2.1, "E"), rt(t + 3.7, f"B|{APP}|DrawFrames 101"), rt(t + 9.0, f"B|{APP}|queueBuffer"),
           rt(t + 9.5, "E"), rt(t + 10.0, "E")]
    s = _report(tmp_path, drawn_frame(0, 100) + two)["summary"]
    assert s["frames"] == 2 and s["skipped_callbacks"] == 0


def test_callback_sections_are_read_per_process(tmp_path):
    """An old-style app (pid 3000, no RenderThread, bare doFrames that draw and swap on the UI thread, one of 120 ms)
    beside another app whose only `input` section sits under a doFrame: the other app's sections say nothing of the
    old app's Choreographer, so its 3 doFrames stay frames, 1 slow (before the review: all dropped as no_traversal)."""
    old, other = 3000, 4000
    lines: list[tuple[float, str]] = []
    for k, dur in enumerate((5.0, 5.0, 120.0)):
        t = k * 200.0
        lines += [_line("com.old.app", old, old, t, f"B|{old}|Choreographer#doFrame"),
                  _line("com.old.app", old, old, t + 0.5, f"B|{old}|performTraversals"),
                  _line("com.old.app", old, old, t + dur - 0.4, "E"),
                  _line("com.old.app", old, old, t + dur, "E")]
    lines += [_line("com.other.app", other, other, 700.0, f"B|{other}|Choreographer#doFrame"),
              _line("com.other.app", other, other, 700.1, f"B|{other}|input"),
              _line("com.other.app", other, other, 700.3, "E"), _line("com.other.app", other, other, 700.4, "E")]
    s = _report(tmp_path, lines)["summary"]
    old_app = next(a for a in s["apps"] if a["pid"] == old)
    assert old_app["frames"] == 3 and old_app.get("skipped_callbacks", 0) == 0
    assert s["sr_naive"] >= 1 and s["frame_time_ms"]["max"] == 120.0
    assert s["skipped_callbacks"] == 1      # the other app's input-only callback drew nothing


def test_every_callback_drew_nothing_reads_as_no_rendered_frames(tmp_path):
    """The trial's bamlab capture in small: animation-only doFrames (vsync 300-302) and one still open at the end. No
    frame, 1 incomplete, 3 callbacks apart; the headline says no frame was rendered, not "none slow"."""
    lines = animation_only(0, 300) + animation_only(16.667, 301) + animation_only(33.333, 302)
    lines += [ui(50.0, f"B|{APP}|Choreographer#doFrame 303"), ui(50.1, f"B|{APP}|animation")]
    p = tmp_path / "animation_only.txt"
    p.write_text(_text(lines), encoding="utf-8")
    r = frames_from_file(p)
    d = frames_dict(r)
    s = d["summary"]
    assert (s["frames"], s["incomplete_frames"], s["skipped_callbacks"]) == (0, 1, 3)
    assert s["no_frames_reason"].startswith("no rendered app frames: 3 Choreographer#doFrame callback(s) drew "
                                            "nothing")
    assert [n for n in d["notes"] if "drew nothing" in n] == [s["no_frames_reason"]]    # said once
    (h,) = frames_headlines(r, "t")
    assert h.kind == "info" and "none slow" not in h.text and "no rendered app frames" in h.text


def test_headline_says_what_the_counts_leave_out(tmp_path):
    d_path = tmp_path / "mixed.txt"
    d_path.write_text(_text(drawn_frame(0, 100) + animation_only(16.667, 101) + animation_only(33.333, 102)),
                      encoding="utf-8")
    (h,) = frames_headlines(frames_from_file(d_path), "t")
    assert h.text == ("t: 1 frames, none slow or frozen (buffer-aware); 2 Choreographer callback(s) that drew "
                      "nothing not counted.")


def test_a_doframe_with_a_frametimeline_surface_frame_drew():
    """FrameTimeline's surface frame for token 201 says a buffer was queued: its doFrame (animation only, no DrawFrame,
    in an app whose RenderThread draws its other frames) is a frame; token 202's, with no surface frame, is not."""
    b = TraceBuilder("test", "<constructed>")
    b.process(APP, "com.example.app")
    b.thread(APP, APP, "com.example.app")
    b.thread(RT, APP, "RenderThread")
    t0 = 1_000 * MS

    def sl(tid: int, ts: int, dur: int, name: str) -> None:
        b.atrace(ts, tid, f"B|{APP}|{name}")
        b.atrace(ts + dur, tid, f"E|{APP}")

    sl(APP, t0, 4 * MS, "Choreographer#doFrame 200")
    sl(RT, t0 + 3 * MS, 4 * MS, "DrawFrames 200")
    for token, ts in ((201, t0 + 17 * MS), (202, t0 + 34 * MS)):
        b.atrace(ts, APP, f"B|{APP}|Choreographer#doFrame {token}")
        sl(APP, ts + 100_000, 400_000, "animation")
        b.atrace(ts + 600_000, APP, f"E|{APP}")
    layer = "TX - com.example.app/com.example.app.MainActivity#0"
    for cookie, (token, ts) in enumerate(((200, t0), (201, t0 + 17 * MS))):
        b.frame_timeline_start(ts, 10 + cookie, "expected", "surface", APP, token, layer_name=layer)
        b.frame_timeline_end(ts + 16 * MS, 10 + cookie)
        b.frame_timeline_start(ts, 20 + cookie, "actual", "surface", APP, token, layer_name=layer, jank_type="None",
                               present_type="On-time Present")
        b.frame_timeline_end(ts + 8 * MS, 20 + cookie)
    r = analyze_frames(b.build())
    assert sorted(r.frames["vsync_id"].to_list()) == [200, 201]
    assert r.summary.skipped_callbacks == 1
    assert r.summary.skipped_callbacks_by_reason == {"no_render_thread_frame": 1}


# ---- defect 2: no FrameTimeline note on text; one count for frames without an end ---------------------------

def test_text_trace_gets_no_frametimeline_note_and_counts_agree(tmp_path):
    """Three frames that drew (vsync 100-102) and a doFrame still open at the end (vsync 103, traversal begun):
    3 frames, 1 incomplete; the app's count is 3 too; systrace/atrace text holds no FrameTimeline, so no note on
    FrameTimeline rows; the open doFrame is in no note's count. Before: a note "4 of 4 doFrame frames have no
    FrameTimeline row", apps[0].frames 4, and "1 doFrame(s) had no matching DrawFrame"."""
    lines = drawn_frame(0, 100) + drawn_frame(16.667, 101) + drawn_frame(33.333, 102)
    lines += [ui(50.0, f"B|{APP}|Choreographer#doFrame 103"), ui(50.1, f"B|{APP}|traversal")]
    d = _report(tmp_path, lines)
    s = d["summary"]
    assert (s["frames"], s["incomplete_frames"], s["skipped_callbacks"]) == (3, 1, 0)
    assert [a["frames"] for a in s["apps"]] == [3]
    assert not any("FrameTimeline" in n for n in d["notes"])
    assert not any("no matching DrawFrame" in n for n in d["notes"])


# ---- defect 3: a pacing note that says what happened; the package from SurfaceView layer names ----------------

FLUTTER, UI_1, RASTER = 4000, 4010, 4011
PKG = "io.example.flutter"
SURFACE_VIEW = f"SurfaceView - {PKG}/{PKG}.MainActivity@b1c2d3e@0[{FLUTTER}]#0"


def _flutter(n_buffers: int) -> list[tuple[float, str]]:
    """A Flutter app (threads 1.ui, 1.raster; no process name in the trace, no doFrame) whose raster thread queues
    `n_buffers` buffers one vsync apart; SurfaceFlinger's BufferQueue counter names its SurfaceView layer, with the
    pid; another app's SurfaceView layer names another package and pid."""
    lines = [_line("1.ui", UI_1, FLUTTER, 0.05, f"B|{FLUTTER}|Frame"), _line("1.ui", UI_1, FLUTTER, 0.08, "E")]
    for k in range(n_buffers):
        t = 1.0 + k * 16.667
        lines += [_line("1.raster", RASTER, FLUTTER, t, f"B|{FLUTTER}|queueBuffer"),
                  _line("1.raster", RASTER, FLUTTER, t + 0.3, "E"),
                  _line("surfaceflinger", SF, SF, t + 0.5, f"C|{SF}|{SURFACE_VIEW}|1"),
                  _line("surfaceflinger", SF, SF, t + 8.0, f"C|{SF}|{SURFACE_VIEW}|0")]
    lines.append(_line("surfaceflinger", SF, SF, 0.5, f"C|{SF}|SurfaceView - com.other.app/com.other.app.Main@1@0"
                                                        f"[4999]#0|0"))
    return lines


def test_too_few_buffers_say_so_and_the_app_takes_its_layers_package(tmp_path):
    """2 buffers (trial: bamlab's Flutter capture): no pacing, and the note says why (2 queued, at most 2 from one
    thread; 10 from one thread needed); the app is named by the package of its layer `SurfaceView -
    io.example.flutter/...[4000]#0`. Before: named "4000", and "its frame pacing is measured" with no pacing."""
    d = _report(tmp_path, _flutter(2))
    s = d["summary"]
    assert s["frames"] == 0 and s["frame_pacing"] == []
    (app,) = s["non_hwui_apps"]
    assert (app["pid"], app["process"], app["renderer"], app["buffers_queued_elsewhere"]) == (FLUTTER, PKG,
                                                                                             "flutter", 2)
    note = f"{PKG} (pid {FLUTTER}) queued 2 buffers but the trace has no Choreographer#doFrame slices for it"
    (n,) = [n for n in d["notes"] if n.startswith(note)]
    assert n.endswith("its frames are not counted; its frame pacing is not measured: too few buffers (2 queued, at "
                      "most 2 from one thread; the minimum is 10 from one thread)")
    assert "measured from the buffers" not in n


def test_enough_buffers_are_paced_and_the_note_says_so(tmp_path):
    """12 buffers one vsync apart: one producer paced (12 buffers, 11 intervals), named by the layer's package."""
    d = _report(tmp_path, _flutter(12))
    s = d["summary"]
    (p,) = s["frame_pacing"]
    assert (p["pid"], p["process"], p["producer"], p["buffers"], p["intervals"]) == (FLUTTER, PKG, "1.raster", 12, 11)
    (n,) = [n for n in d["notes"] if n.startswith(f"{PKG} (pid {FLUTTER}) queued 12 buffers")]
    assert n.endswith("; its frame pacing is measured from the buffers it queued (frame_pacing)")
