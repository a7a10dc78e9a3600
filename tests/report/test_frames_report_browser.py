"""The frames report of a 90 Hz app, a game drawing without the Choreographer, a real 120 Hz trace and a real GL
app without Choreographer slices, opened in headless Chromium (issue 12, items 4, 5 and 7): the page has no
errors, says the panel's rate, shows the pacing table and each slow frame's app, layer, jank type and cause."""
from __future__ import annotations

from pathlib import Path

import pytest
from browser import open_page

from conftest import corpus_file
from droidlag.findings import analyze
from droidlag.report.writer import write_outputs

PERIOD_90 = 11_111_111
APP, UI, RT, GAME, GFX = 2000, 2000, 2011, 3000, 3012


def _line(comm: str, tid: int, pid: int, ns: int, payload: str) -> str:
    return f"{comm[-15:]:>16}-{tid:<5} ({pid:5d}) [000] ...1 {ns // 1000 / 1e6:.6f}: tracing_mark_write: {payload}\n"


def ninety_hz_trace_with_a_game() -> str:
    """ftrace text: a 90 Hz panel (VSYNC-app toggling every 11.1 ms), a HWUI app drawing one frame per vsync with
    three slow ones, and a Unity game swapping on its GL thread at 45 fps with two hitches."""
    out = ["# tracer: nop\n#\n#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"]
    t0 = 1_000_000_000
    for k in range(200):
        out.append(_line("surfaceflinger", 500, 500, t0 + k * PERIOD_90, f"C|500|VSYNC-app|{k % 2}"))
    for i in range(150):
        ts = t0 + i * PERIOD_90 + 100_000
        ui = 25_000_000 if i in (40, 41, 90) else 4_000_000
        out.append(_line("com.example.ninety", UI, APP, ts, f"B|{APP}|Choreographer#doFrame"))
        out.append(_line("com.example.ninety", UI, APP, ts + 10_000, f"B|{APP}|traversal"))
        out.append(_line("com.example.ninety", UI, APP, ts + 20_000, f"B|{APP}|measure"))
        out.append(_line("com.example.ninety", UI, APP, ts + ui - 40_000, "E"))
        out.append(_line("com.example.ninety", UI, APP, ts + ui - 30_000, "E"))
        out.append(_line("com.example.ninety", UI, APP, ts + ui, "E"))
        out.append(_line("RenderThread", RT, APP, ts + ui - 25_000, f"B|{APP}|DrawFrame"))   # during the sync
        out.append(_line("RenderThread", RT, APP, ts + ui - 20_000, f"B|{APP}|syncFrameState"))
        out.append(_line("RenderThread", RT, APP, ts + ui + 200_000, "E"))
        out.append(_line("RenderThread", RT, APP, ts + ui + 2_000_000, f"B|{APP}|queueBuffer"))
        out.append(_line("RenderThread", RT, APP, ts + ui + 2_500_000, "E"))
        out.append(_line("RenderThread", RT, APP, ts + ui + 2_600_000, "E"))
    t = t0
    for i in range(70):
        t += 2 * PERIOD_90 + (40_000_000 if i in (20, 50) else 0)
        out.append(_line("UnityGfxDeviceW", GFX, GAME, t, f"B|{GAME}|eglSwapBuffers"))
        out.append(_line("UnityGfxDeviceW", GFX, GAME, t + 100_000, f"B|{GAME}|queueBuffer"))
        out.append(_line("UnityGfxDeviceW", GFX, GAME, t + 300_000, "E"))
        out.append(_line("UnityGfxDeviceW", GFX, GAME, t + 400_000, "E"))
    out.sort(key=lambda s: float(s.split("]")[1].split(":")[0].split()[-1]) if not s.startswith("#") else -1)
    return "".join(out)


@pytest.mark.slow
def test_frames_report_of_90hz_game_120hz_and_gl_in_a_browser(corpus: Path, tmp_path: Path):
    text = tmp_path / "ninety_hz_and_game.atrace.txt"
    text.write_text(ninety_hz_trace_with_a_game())
    findings = analyze([text, corpus_file(corpus, "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace"),
                        corpus_file(corpus, "traces/systrace_legacy_2017_2cpu_blockio_writeback_sf.dataonly.html.gz")])
    assert all(i.status == "analyzed" for i in findings.inputs), [i.to_dict() for i in findings.inputs]
    written = write_outputs(findings, tmp_path / "out")
    html = written["report.html"].read_text()
    assert "vsync period (90 Hz)" in html and "(vsync, 120 Hz)" in html      # budget lines in the charts
    r = open_page(written["report.html"], tmp_path / "frames_report.png", (".plot svg", "details", "table"))
    assert r["errors"] == [] and [m for m in r["console"] if m[0] == "error"] == []
    body = r["text"]
    assert "Panel refresh rate 90 Hz" in body and "Panel refresh rate 120 Hz" in body
    assert "Frame pacing of apps that draw without the Choreographer" in body
    assert "draws with Unity" in body and "UnityGfxDeviceW" in body
    assert "ndroid.launcher queues buffers with no Choreographer#doFrame in the trace" in body
    assert "Agreement with FrameTimeline, per layer" in body
    # a slow frame's summary line names the app, the layer, FrameTimeline's jank type and the leading cause
    assert "com.google.samples.apps.nowinandroid.demo — layer com.google.samples.apps.nowinandroid.demo/" in body
    assert "FrameTimeline: App Deadline Missed" in body and "leading cause:" in body
    assert "none slow or frozen" not in body
    assert "150 doFrame(s) had no matching DrawFrame" not in body      # the 90 Hz app's frames are whole
    assert r["counts"][".plot svg"] >= 6
    assert (tmp_path / "frames_report.png").stat().st_size > 10_000
