"""The panel's refresh rate drives the second naive line and the charts (issue 12, item 5): 120 Hz on a real
Pixel 7 Pro trace, and a rate that changes from 60 to 90 Hz during a constructed trace."""
from __future__ import annotations

from frames_fixtures import frame, new_builder

from conftest import corpus_file
from droidlag.frames import analyze_frames
from droidlag.io import read_trace
from droidlag.report import plots
from droidlag.report.frames_json import frames_dict, summary_dict

NOWINANDROID = "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace"


def test_pixel7pro_trace_is_120hz_and_its_second_line_uses_it(corpus):
    r = analyze_frames(read_trace(corpus_file(corpus, NOWINANDROID)))
    s = summary_dict(r.summary)
    assert [x["hz"] for x in s["refresh_rates"]] == [120.0]      # Pixel 7 Pro panel, 120 Hz during the capture
    vs = s["naive_vsync_period"]
    assert vs["vsync_period_ms"] == 8.333
    done = r.frames.filter(r.frames["complete"])
    over = int((done["dur_ns"] > 8_333_333).sum())                  # counted here from the frame times
    assert vs["sr"] == over > s["sr_naive"]
    svg = plots.frame_time_histogram((done["dur_ns"] / 1e6).to_list(), "t",
                                     (done["vsync_period_ns"] / 1e6).to_list())
    assert "8.33 ms (vsync, 120 Hz)" in svg and "16.67 ms (SR)" in svg


PERIOD_60, PERIOD_90 = 16_666_667, 11_111_111


def _changing_panel():
    """1 s at 60 Hz then 1 s at 90 Hz (VSYNC-app toggling every vsync), one 14 ms frame per 2 vsyncs throughout."""
    b = new_builder()
    t, k, ticks = 0, 0, []
    while t < 2_000_000_000:
        ticks.append(t)
        b.counter(t, "VSYNC-app", k % 2, pid=50)
        t += PERIOD_60 if t < 1_000_000_000 else PERIOD_90
        k += 1
    starts = ticks[5:-4:2]
    for ts in starts:
        frame(b, ts, 10, 4)          # 10 ms UI + 4 ms RenderThread - 15 us: about 14 ms
    return b.build(), starts


def test_rate_change_during_the_trace():
    trace, starts = _changing_panel()
    r = analyze_frames(trace)
    rates = summary_dict(r.summary)["refresh_rates"]
    assert [x["hz"] for x in rates] == [60.0, 90.0]
    assert abs(rates[1]["start_ns"] - 1_000_000_000) <= 500_000_000
    in_90 = sum(1 for ts in starts if ts >= rates[1]["start_ns"])
    assert rates[1]["frames"] == in_90 and rates[1]["sr_vsync"] == in_90     # 14 ms > 11.1 ms
    assert rates[0]["sr_vsync"] == 0                                          # 14 ms < 16.7 ms
    assert r.summary.sr_naive == 0
    f = frames_dict(r)["frames"]
    svg = plots.frame_timeline(f, "t", 0)
    assert "vsync period (60/90 Hz)" in svg or "vsync period (90 Hz)" in svg
