"""Frames on the real corpus, and on a systrace HTML report made by hand where no usable corpus file shows the case
(the BufferQueue signal, a Flutter app). Counts asserted here were checked independently of droidlag: doFrame/DrawFrame
counts and > 16.67 ms frames by a regex pass over the raw ftrace text; FrameTimeline jank-type counts and gfxinfo row
counts from ../shared/corpus/*/SOURCES.md (their authors' own decoders); the hand-made report's by hand."""
from __future__ import annotations

import json

import polars as pl
import pytest

from conftest import corpus_file, usable
from droidlag.cli import main
from droidlag.findings import frames_from_file
from droidlag.report.frames_json import summary_dict

TRACES = "traces/"


def _report(corpus, name):
    return frames_from_file(corpus_file(corpus, TRACES + name))


def test_catapult_atrace_counts(corpus):
    """catapult's atrace fixture (HWUI app, doFrame on 18926 and DrawFrame on its RenderThread 18964; no TGIDs, no
    SurfaceFlinger, no FrameTimeline). Counted by our own regex pass over the text (B/E per tid; a frame runs from
    doFrame start to the end of the DrawFrame that starts inside it): 15 doFrame, 14 DrawFrame (as
    systrace/SOURCES.md says); the doFrame without a DrawFrame ran only an `input` callback (1.07 ms) and drew
    nothing, so 14 frames and 1 callback apart (it was counted as a 15th frame before the callbacks that draw nothing
    were set apart); 3 frames over 16.67 ms (22.787, 28.677, 18.966 ms), none over 700 ms."""
    r = frames_from_file(corpus_file(corpus, "systrace/catapult_test_data/decompressed_atrace_data.txt"))
    s = summary_dict(r.summary)
    assert s["frames"] == 14
    assert s["skipped_callbacks"] == 1 and s["skipped_callbacks_by_reason"] == {"no_render_thread_frame": 1}
    assert s["sr_naive"] == 3 and s["ff_naive"] == 0
    assert abs(s["frame_time_ms"]["max"] - 28.677) < 0.01
    # no FrameTimeline and no BufferQueue counter (SOURCES.md: its only counters are jitterNanos and hwui_Texture):
    # the long frames are "not possible", not guessed
    assert s["buffer_signal"] == "none" and s["sr"] is None and s["not_possible"] == 3


# A systrace HTML report made by hand, as catapult's systrace.py writes one: `trace-data` script blocks holding the
# PROCESS DUMP (a `ps` listing, then a `ps -T` one) and the ftrace text with a TGID column. Two apps: an HWUI app
# (doFrame on its main thread, DrawFrame on its RenderThread, SurfaceFlinger's BufferQueue counter for its layer)
# and a Flutter app (Choreographer#doFrame on its main thread; the engine's 1.ui / 1.raster / 1.io threads).
HWUI, RT, SF, FLUTTER = 2000, 2010, 500, 3000
LAYER = "com.example.app/com.example.app.MainActivity#0"
PS = """USER           PID  PPID     VSZ    RSS WCHAN            ADDR S NAME
system         500     1  100000  20000 0                   0 S surfaceflinger
u0_a100       2000   600 1500000 100000 0                   0 S com.example.app
u0_a101       3000   600 1500000 100000 0                   0 S io.example.flutter_gallery
USER           PID   TID CMD
system         500   500 surfaceflinger
u0_a100       2000  2000 com.example.app
u0_a100       2000  2010 RenderThread
u0_a101       3000  3000 flutter_gallery
u0_a101       3000  3010 1.ui
u0_a101       3000  3011 1.raster
u0_a101       3000  3012 1.io
"""
# thread names as ftrace shows them: at most 15 characters (an app's main thread keeps its package name's end)
COMMS = {HWUI: "com.example.app", RT: "RenderThread", SF: "surfaceflinger", FLUTTER: "flutter_gallery",
         3010: "1.ui", 3011: "1.raster"}
PIDS = {HWUI: HWUI, RT: HWUI, SF: SF, FLUTTER: FLUTTER, 3010: FLUTTER, 3011: FLUTTER}
T0 = 1000.0    # seconds
PERIOD = 1000 / 60


def _mark(events: list, ms: float, tid: int, msg: str) -> None:
    events.append((ms, tid, msg))


def _hwui_frame(events: list, start: float, ui: float, rt: float) -> float:
    """doFrame for ui ms; DrawFrame on the RenderThread from just before the doFrame ends, for rt ms. The frame's
    duration (doFrame start to DrawFrame end) is ui - 0.1 + rt ms."""
    _mark(events, start, HWUI, f"B|{HWUI}|Choreographer#doFrame")
    _mark(events, start + ui, HWUI, "E")
    _mark(events, start + ui - 0.1, RT, f"B|{HWUI}|DrawFrame")
    _mark(events, start + ui - 0.1 + rt, RT, "E")
    return ui - 0.1 + rt


def _systrace_html() -> tuple[str, list[float]]:
    ev: list = []
    durs = [_hwui_frame(ev, i * PERIOD, 4, 3.1) for i in range(4)]     # 4 frames of 7 ms
    t4, t5 = 4 * PERIOD, 4 * PERIOD + 60
    durs += [_hwui_frame(ev, t4, 30, 8.1), _hwui_frame(ev, t5, 30, 8.1)]   # 2 frames of 38 ms
    # SurfaceFlinger's queued-buffer count for the app's layer: no buffer waiting at the first long frame's deadline
    # (start + one vsync period) -> the user saw it (SR); one buffer waiting at the second's -> hidden (ok)
    for ms, n in ((t4 - 1, 0), (t5 - 1, 1), (t5 + 45, 0)):
        _mark(ev, ms, SF, f"C|{SF}|{LAYER}|{n}")
    for i in range(10):   # the Flutter app: the embedding's vsync callback and the raster thread's buffers
        _mark(ev, i * PERIOD + 1, FLUTTER, f"B|{FLUTTER}|Choreographer#doFrame")
        _mark(ev, i * PERIOD + 1.5, FLUTTER, "E")
        _mark(ev, i * PERIOD + 3, 3011, f"B|{FLUTTER}|queueBuffer")
        _mark(ev, i * PERIOD + 3.2, 3011, "E")
    lines = [f"{COMMS[tid]:>16}-{tid:<5} ({PIDS[tid]:>5}) [002] ...1 {T0 + ms / 1000:.6f}: tracing_mark_write: {msg}"
             for ms, tid, msg in sorted(ev, key=lambda e: e[0])]
    ftrace = ("# tracer: nop\n#\n"
              f"# entries-in-buffer/entries-written: {len(lines)}/{len(lines)}   #P:8\n#\n"
              "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
              "#              | |        |      |   ||||       |         |\n" + "\n".join(lines) + "\n")
    block = '<script class="trace-data" type="application/text">\n{}</script>\n'
    html = ("<!DOCTYPE html>\n<html>\n<head><meta charset=\"utf-8\"/></head>\n<body>\n"
            + block.format("PROCESS DUMP\n" + PS) + block.format(ftrace) + "</body>\n</html>\n")
    return html, durs


@pytest.fixture
def handmade(tmp_path):
    html, durs = _systrace_html()
    p = tmp_path / "handmade_trace.html"
    p.write_text(html, encoding="utf-8")
    return frames_from_file(p), durs


def test_systrace_counts_and_bufferqueue_signal(handmade):
    r, durs = handmade
    s = summary_dict(r.summary)
    # by hand: 6 HWUI frames (4 of 7 ms, 2 of 38 ms); the Flutter app's doFrames are not frames
    assert s["frames"] == 6 and durs == pytest.approx([7.0] * 4 + [38.0] * 2)
    assert s["sr_naive"] == 2 and s["ff_naive"] == 0
    assert abs(s["frame_time_ms"]["max"] - 38.0) < 0.01
    assert s["buffer_signal"] == "bufferqueue"
    assert s["sr"] == 1                                 # the long frame with a buffer waiting was hidden
    assert r.frames["verdict"].to_list() == ["ok"] * 4 + ["SR", "ok"]


def test_flutter_app_is_not_miscounted(handmade):
    r, _ = handmade
    flutter = [a for a in r.summary.sections["non_hwui_apps"] if a["process"] == "io.example.flutter_gallery"]
    assert flutter and flutter[0]["renderer"] == "flutter"
    assert r.frames.filter(pl.col("pid") == FLUTTER).height == 0
    assert set(r.frames["process"].to_list()) == {"com.example.app"}


def test_pixel6a_startup_causes_are_ranked_against_normal_frames(corpus):
    r = _report(corpus, "perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace")
    assert r.causes.height > 0
    top = summary_dict(r.summary)["causes"][0]
    assert top["mean_normal_share"] is not None
    # every SR/FF frame has at least one cause with its numbers (a trace with sched: SOURCES.md section 7)
    bad = r.frames.filter(pl.col("verdict").is_in(["SR", "FF"]))["frame_id"].to_list()
    assert bad and set(bad) <= set(r.causes["frame_id"].to_list())


def test_2018_systrace_is_a_smooth_control(corpus):
    """SOURCES.md section 5: 252 doFrame (AnTuTu 202, YY 50), 202 `traversal`, the longest 6.7 ms; app atrace only, no
    DrawFrame. Our own regex pass over the text (B/E per tid) finds each of AnTuTu's 202 doFrames with a `traversal`
    section and each of YY's 50 with only an `animation` one: YY's ran no view traversal, so drew nothing, and are
    counted apart (they were counted as frames, 252, before)."""
    r = _report(corpus, "systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz")
    assert r.summary.frames == 202
    assert r.summary.skipped_callbacks == 50 and r.summary.skipped_callbacks_by_reason == {"no_traversal": 50}
    assert {a["process"]: (a["frames"], a["skipped_callbacks"]) for a in r.summary.sections["apps"]} == {
        "tutu.ABenchMark": (202, 0), "m.duowan.mobile": (0, 50)}
    assert r.summary.sr_naive == 0 and r.summary.sr == 0
    assert r.summary.frame_time_ns["max"] < 6.7e6 + 0.05e6


def test_nowinandroid_agreement_with_frametimeline(corpus):
    """FrameTimeline is ground truth: 17 app-deadline-missed frames (12 alone + 5 with Buffer Stuffing) and 47
    Buffer Stuffing frames that are late but not jank."""
    r = _report(corpus, "nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace")
    s = summary_dict(r.summary)
    agree = s["frametimeline_agreement"]
    assert agree["frametimeline_app_jank"] == 17
    assert agree["buffer_stuffing_only"] == 47
    assert s["buffer_signal"] == "frametimeline" and s["sr"] == 17
    stuffed = r.frames.filter(pl.col("ft_jank_type") == "Buffer Stuffing")
    assert stuffed.height == 47
    assert (stuffed["verdict"] == "ok").all()
    # the naive rule counts some of the stuffed frames as SR: that is the false positive buffer awareness removes
    assert (stuffed["naive_verdict"] != "ok").sum() > 0
    assert agree["naive_16ms"]["fp"] > 0 and agree["naive_16ms"]["precision"] < 1


def test_pixel6a_startup_one_app_deadline_missed(corpus):
    """SOURCES.md section 7: 30 doFrame, 7 DrawFrames. A hand-written decode of the trace's ftrace print events (B/E
    per tid, pids from its process_tree) finds 7 doFrames with a DrawFrame of their process starting inside them; 4
    more in processes with DrawFrames (systemui 2, launcher 2) hand the RenderThread nothing (window relayouts, a
    commit callback); of the 19 in processes with no DrawFrame, system_server's 16 ran
    no `traversal` (animation callbacks on its animation threads) and 3 did (2 of system_server, 1 of the search
    app): 10 frames, 20 callbacks that drew nothing (all 30 were counted as frames before)."""
    r = _report(corpus, "perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace")
    s = summary_dict(r.summary)
    assert s["frames"] == 10
    assert s["skipped_callbacks"] == 20
    assert s["skipped_callbacks_by_reason"] == {"no_traversal": 16, "no_render_thread_frame": 4}
    assert s["frametimeline_agreement"]["frametimeline_app_jank"] == 1
    assert s["sr"] == 1
    assert r.causes.height > 0


def test_traces_without_frames_say_so(corpus):
    # sched only (systrace/SOURCES.md: 116 sched_switch/sched_wakeup events), and block I/O + SurfaceFlinger
    # without doFrame (traces/SOURCES.md section 6)
    for name in ("systrace/catapult_test_data/atrace_data",
                 TRACES + "systrace_legacy_2017_2cpu_blockio_writeback_sf.dataonly.html.gz"):
        r = frames_from_file(corpus_file(corpus, name))
        assert r.summary.frames == 0
        assert r.summary.no_frames_reason


def test_gfxinfo_android10(corpus):
    r = frames_from_file(corpus_file(corpus, "gfxinfo/sailfish_android10_dumpsys_gfxinfo.txt"))
    s = summary_dict(r.summary)
    # 125 rows, 6 with Flags != 0; of 119, 16 over 16.67 ms (IntendedVsync -> FrameCompleted), max 107.5 ms
    assert s["frames"] == 119 and s["flagged_rows_excluded"] == 6
    assert s["sr_naive"] == 16 and s["ff_naive"] == 0
    assert abs(s["frame_time_ms"]["max"] - 107.48) < 0.01
    assert s["buffer_signal"] == "none" and s["sr"] is None and s["not_possible"] == 16


CLI_FILES = [
    "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace",
    "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace",
    "traces/systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz",
    "traces/systrace_legacy_2017_2cpu_blockio_writeback_sf.dataonly.html.gz",
    "systrace/catapult_android_systrace_2012_sched.html",
    "systrace/catapult_android_systrace_2012_sched.txt",
    "systrace/catapult_compressed_atrace_data.txt",
    "systrace/catapult_test_data/decompressed_atrace_data.txt",
    "systrace/catapult_test_data/atrace_data",
    "gfxinfo/sailfish_android10_dumpsys_gfxinfo.txt",
]


def test_cli_list_holds_every_usable_trace(corpus):
    """Every trace of corpus/traces that tests may use (tests/conftest.py usable()) is in CLI_FILES."""
    usable_traces = {f"traces/{p.name}" for p in (corpus / "traces").iterdir() if p.name != "SOURCES.md" and usable(p)}
    assert usable_traces and usable_traces <= set(CLI_FILES)


@pytest.mark.parametrize("name", CLI_FILES)
def test_cli_json_runs_on_every_corpus_file(corpus, name, capsys):
    path = corpus_file(corpus, name)
    assert main(["frames", "--json", str(path)]) == 0
    d = json.loads(capsys.readouterr().out)
    for k in ("frames", "sr", "ff", "sr_naive", "ff_naive", "buffer_signal", "causes"):
        assert k in d["summary"]
    assert d["summary"]["buffer_signal"] in ("frametimeline", "bufferqueue", "deadline", "none")
    for f in d["frames"][:50]:
        for c in f["causes"]:
            assert {"name", "share", "normal_share", "evidence"} <= set(c)
