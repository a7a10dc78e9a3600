"""Renderers without the Choreographer (issue 12, item 4): frame pacing from one swap per buffer (a queueBuffer
inside eglSwapBuffers is the same buffer), target rate, hitches over 1.5x/2x, stutter runs; the headline says so
instead of "no jank"; `--app` matches ftrace comms cut to 15 characters and pids."""
from __future__ import annotations

import gzip
import re

from frames_fixtures import MS, RT, UI, frame, new_builder, run_on

from conftest import corpus_file
from droidlag.findings.narrative import frames_headlines
from droidlag.frames import FramesConfig, analyze_frames
from droidlag.io import read_trace
from droidlag.report.frames_json import summary_dict

LEGACY = "traces/systrace_legacy_2017_2cpu_blockio_writeback_sf.dataonly.html.gz"


def test_gl_app_without_choreographer_slices_is_paced_from_its_swaps(corpus):
    path = corpus_file(corpus, LEGACY)
    raw = gzip.decompress(path.read_bytes()).decode()
    # the launcher (pid 2067) swapped on its main thread; each eglSwapBuffers holds a queueBuffer (counted by regex)
    swaps = len(re.findall(r"-2067 .*B\|2067\|eglSwapBuffers", raw))
    queues = len(re.findall(r"-2067 .*B\|2067\|queueBuffer", raw))
    assert swaps == 60 and queues == 60
    r = analyze_frames(read_trace(path))
    pacing = {p["pid"]: p for p in summary_dict(r.summary)["frame_pacing"]}
    launcher = pacing[2067]
    assert launcher["buffers"] == swaps                  # not swaps + queues
    assert launcher["intervals"] + launcher["pauses"] == swaps - 1
    assert launcher["over_2.0x"] <= launcher["over_1.5x"] <= launcher["intervals"]
    assert [n for n in r.notes if "2067" in n or "launcher" in n and "60 buffers" in n]
    heads = [h.to_dict() for h in frames_headlines(r, "t")]
    assert any(h["kind"] == "pacing" and "ndroid.launcher" in h["text"] and "60 buffers" in h["text"]
               for h in heads)
    assert not any("none slow" in h["text"] for h in heads)


def test_app_matches_comm_cut_to_15_characters_and_pid(corpus):
    trace = read_trace(corpus_file(corpus, LEGACY))
    assert trace.process_name(2067) == "ndroid.launcher"
    for app in ("com.android.launcher", "2067"):
        r = analyze_frames(trace, FramesConfig(app=app))
        assert [p["pid"] for p in summary_dict(r.summary)["frame_pacing"]] == [2067], app
    r = analyze_frames(trace, FramesConfig(app="com.example.other"))
    assert summary_dict(r.summary)["frame_pacing"] == []


GAME, GFX = 300, 301
PERIOD = 16_666_667


def _game_trace(hitches: dict[int, int]):
    """A HWUI app drawing 3 smooth frames, and a Unity game on its own GL thread: eglSwapBuffers holding a
    queueBuffer every 2 vsyncs (30 fps), with some intervals stretched (index -> extra ns)."""
    b = new_builder()
    for i in range(3):
        ts = 10 * MS + i * PERIOD
        frame(b, ts, 4, 3)
        run_on(b, UI, 4, ts, ts + 4 * MS)
        b.sched_waking(ts + 4 * MS - 20_000, RT, 5, UI)
        run_on(b, RT, 5, ts + 4 * MS - 15_000, ts + 7 * MS)
    b.process(GAME, "com.example.game")
    b.thread(GAME, GAME, "com.example.game")
    b.thread(GFX, GAME, "UnityGfxDeviceW")
    t = 10 * MS
    for i in range(80):
        t += 2 * PERIOD + hitches.get(i, 0)
        b.atrace(t, GFX, f"B|{GAME}|eglSwapBuffersWithDamageKHR")
        b.atrace(t + 100_000, GFX, f"B|{GAME}|queueBuffer")
        b.atrace(t + 400_000, GFX, "E")
        b.atrace(t + 500_000, GFX, "E")
    for k in range(0, 80 * 2 + 40, 1):   # VSYNC-app toggles once per vsync: the panel's period
        b.counter(10 * MS + k * PERIOD, "VSYNC-app", k % 2, pid=50)
    return b.build()


def test_game_pacing_hitches_and_stutter_runs():
    # intervals 10 and 11 are 2.5x the target (a run of two), 40 is 1.6x: 3 over 1.5x, 2 over 2x, one run
    trace = _game_trace({10: 50 * MS, 11: 50 * MS, 40: 20 * MS})
    r = analyze_frames(trace)
    assert r.summary.frames == 3 and r.summary.sr_naive == 0
    (p,) = summary_dict(r.summary)["frame_pacing"]
    assert p["renderer"] == "unity" and p["producer"] == "UnityGfxDeviceW"
    assert p["buffers"] == 80
    assert abs(p["target_ms"] - 2 * PERIOD / 1e6) < 0.01 and p["target_fps"] == 30.0
    assert (p["over_1.5x"], p["over_2.0x"], p["stutter_runs"], p["longest_stutter_run"]) == (3, 2, 1, 2)
    heads = [h.to_dict() for h in frames_headlines(r, "game")]
    pacing = [h for h in heads if h["kind"] == "pacing"]
    assert len(pacing) == 1 and pacing[0]["level"] == "bad" and "Unity" in pacing[0]["text"]
    # the three HWUI frames are fine, but the headline no longer reads as an all-clear for the trace
    ok = [h for h in heads if h["kind"] == "ok"]
    assert ok and ok[0]["level"] != "ok" and "without the Choreographer" in ok[0]["text"]


def test_steady_game_is_reported_as_paced_not_as_missing():
    r = analyze_frames(_game_trace({}))
    (p,) = summary_dict(r.summary)["frame_pacing"]
    assert p["over_1.5x"] == 0 and p["stutter_runs"] == 0
    assert any(h["kind"] == "pacing" and "steady" in h["text"] for h in map(vars, frames_headlines(r, "g")))




def test_android_41_launcher_in_catapult_systrace_is_paced(corpus):
    """catapult's 2012 systrace (Android 4.1): the launcher (pid 655) drew on its main thread, eglSwapBuffers
    wrapping queueBuffer, and the trace has no doFrame slices. Its buffers are counted once each (regex below)."""
    path = corpus_file(corpus, "systrace/catapult_android_systrace_2012_sched.html")
    raw = path.read_text(errors="replace")
    swaps = len(re.findall(r"B\|655\|eglSwapBuffers", raw))
    assert swaps == len(re.findall(r"B\|655\|queueBuffer", raw)) == 181
    r = analyze_frames(read_trace(path))
    (p,) = [p for p in summary_dict(r.summary)["frame_pacing"] if p["pid"] == 655]
    assert p["buffers"] == swaps
    assert p["target_fps"] == 60.0                 # VSYNC counter of SurfaceFlinger: a 60 Hz panel
    assert any(h["kind"] == "pacing" and "launcher" in h["text"] for h in map(vars, frames_headlines(r, "t")))


def test_surfaceview_beside_hwui_frames_is_paced_apart():
    """An HWUI app with a GL SurfaceView (a map, a game view): its doFrames are frames, and the buffers its GL
    thread queues are paced apart; its RenderThread's queueBuffers are not paced (they are the HWUI frames)."""
    from frames_fixtures import APP
    b = new_builder()
    b.thread(777, APP, "GLThread 777")
    t0 = 10 * MS
    for i in range(30):
        ts = t0 + i * PERIOD
        frame(b, ts, 4, 3)
        run_on(b, UI, 4, ts, ts + 4 * MS)
        b.sched_waking(ts + 4 * MS - 20_000, RT, 5, UI)
        run_on(b, RT, 5, ts + 4 * MS - 15_000, ts + 7 * MS)
        b.atrace(ts + 8 * MS, 777, f"B|{APP}|eglSwapBuffers")
        b.atrace(ts + 8 * MS + 100_000, 777, f"B|{APP}|queueBuffer")
        b.atrace(ts + 8 * MS + 300_000, 777, "E")
        b.atrace(ts + 8 * MS + 400_000, 777, "E")
    r = analyze_frames(b.build())
    assert r.summary.frames == 30
    (p,) = summary_dict(r.summary)["frame_pacing"]
    assert p["producer"] == "GLThread 777" and p["buffers"] == 30 and p["over_1.5x"] == 0
