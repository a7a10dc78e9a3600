"""`dumpsys gfxinfo` as the new-user trial of 2026-11-28 (frames) met it in real pastes: summaries without framestats
rows, the legacy `Draw Prepare Process Execute` table, indented pastes, Android 12 rows without a deadline, the
marker's dashes typeset, causes counted against another set than the headline's. Every input here is hand-made in
the structure of those dumps (Android's own layout: libhwui ProfileData::dump, JankTracker::dumpFrames,
FrameInfoVisualizer::dumpData); expected values are worked out by hand in the comments."""
from __future__ import annotations

from pathlib import Path

import pytest

from droidlag.cli import main
from droidlag.findings.narrative import frames_headlines
from droidlag.frames import analyze_gfxinfo
from droidlag.io.gfxinfo import read_gfxinfo
from droidlag.report.frames_json import frames_dict, summary_dict

MS = 1_000_000
US = 1_000
I64_MAX = (1 << 63) - 1


# ---- D1: a summary without per-frame rows: frames, SR/FF by Android's histogram, never zeros ----------------------
# Android 9 layout (no `Janky frames (legacy)`). The histogram holds 200 frames (= Total frames rendered):
#   5ms=120 8ms=40 12ms=10 16ms=6 (16.0-16.99 ms: not counted as SR) | SR: 17ms=9 24ms=5 48ms=4 133ms=2 650ms=1 -> 21
#   | FF: 700ms=1 1500ms=1 4950ms=1 -> 3.   SR 21/200 = 10.5 %, FF 3/200 = 1.5 %.
SUMMARY_A9 = """Applications Graphics Acceleration Info:
Uptime: 9000000 Realtime: 9000000

** Graphics info for pid 4242 [com.example.feed] **

Stats since: 5000000000ns
Total frames rendered: 200
Janky frames: 24 (12.00%)
50th percentile: 5ms
90th percentile: 17ms
95th percentile: 48ms
99th percentile: 700ms
Number Missed Vsync: 3
Number High input latency: 10
Number Slow UI thread: 7
Number Slow bitmap uploads: 0
Number Slow issue draw commands: 4
Number Frame deadline missed: 9
HISTOGRAM: 5ms=120 8ms=40 12ms=10 16ms=6 17ms=9 24ms=5 48ms=4 133ms=2 650ms=1 700ms=1 1500ms=1 4950ms=1
"""


def test_a_summary_without_rows_counts_frames_and_sr_ff_from_the_histogram():
    r = analyze_gfxinfo(read_gfxinfo(SUMMARY_A9, "feed.txt"))
    s = summary_dict(r.summary)
    assert (s["frames"], s["sr_naive"], s["ff_naive"]) == (200, 21, 3)
    assert (s["sr_naive_pct"], s["ff_naive_pct"]) == (10.5, 1.5)
    assert s["sr"] is None and s["ff"] is None and s["buffer_signal"] == "none"   # never zeros read as an all-clear
    c = s["counts_from"]
    assert c["source"] == "android_summary" and c["frames"] == "Total frames rendered"
    assert c["sr_naive"].startswith("HISTOGRAM") and c["ff_naive"].startswith("HISTOGRAM")
    assert (c["janky_frames"], c["janky_percent"], c["janky_rule"]) == (24, 12.0, "frame_interval")
    [agg] = s["gfxinfo_summaries"]
    assert agg["histogram_4950ms"] == 1   # that bucket also holds 140-149 ms frames (ProfileData::reportFrame)
    assert "no_frames_reason" not in s and any("framestats" in n for n in r.notes)


def test_frames_and_analyze_say_the_same_numbers_of_a_summary(tmp_path: Path, capsys):
    f = tmp_path / "feed.txt"
    f.write_text(SUMMARY_A9)
    assert main(["frames", str(f)]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert "gfxinfo summary (no per-frame rows), 200 frames rendered" in first and " 0 frames" not in first
    assert "by Android's histogram (16.67 ms / 700 ms): SR 21 (10.5%), FF 3 (1.5%)" in out
    assert "Android's janky count:      24 (12.0%)" in out
    [h] = frames_headlines(analyze_gfxinfo(read_gfxinfo(SUMMARY_A9, str(f))), str(f))
    assert "Android counted 24 janky of 200 frames" in h.text
    assert "21 over 16.67 ms and 3 over 700 ms by the histogram" in h.text and h.kind == "ff"


def test_a_summary_without_a_histogram_leaves_sr_ff_unknown_not_zero(tmp_path: Path, capsys):
    """Android 6 prints no HISTOGRAM line (a Chrome dump of 2015 in an issue): 30 frames, 12 janky."""
    text = ("** Graphics info for pid 9702 [com.example.browser] **\n\nStats since: 9656484850794ns\n"
            "Total frames rendered: 30\nJanky frames: 12 (40.00%)\n90th percentile: 101ms\n")
    s = summary_dict(analyze_gfxinfo(read_gfxinfo(text)).summary)
    assert s["frames"] == 30 and s["sr_naive"] is None and s["ff_naive"] is None and s["sr"] is None
    assert s["counts_from"]["janky_frames"] == 12 and s["counts_from"]["processes_with_histogram"] == 0
    f = tmp_path / "chrome.txt"
    f.write_text(text)
    assert main(["frames", "--json", str(f)]) == 0
    assert '"sr_naive": null' in capsys.readouterr().out


def test_android12_janky_is_the_deadline_rule_and_processes_without_histogram_are_said():
    """Android 12+ print `Janky frames (legacy)` beside `Janky frames`: the latter counts missed deadlines. A second
    process without a histogram: SR/FF are over the first's 200 frames only."""
    a12 = SUMMARY_A9.replace("Janky frames: 24 (12.00%)\n", "Janky frames: 24 (12.00%)\nJanky frames (legacy): 60 (30.00%)\n")
    other = "\n** Graphics info for pid 5151 [com.example.other] **\n\nStats since: 1ns\nTotal frames rendered: 100\n" \
            "Janky frames: 1 (1.00%)\n"
    s = summary_dict(analyze_gfxinfo(read_gfxinfo(a12 + other)).summary)
    c = s["counts_from"]
    assert s["frames"] == 300 and s["sr_naive"] == 21 and s["sr_naive_pct"] == 10.5   # 21 of the 200 with a histogram
    assert (c["processes"], c["processes_with_histogram"], c["histogram_frames"]) == (2, 1, 200)
    assert c["janky_frames"] == 25 and c["janky_percent"] == round(100 * 25 / 300, 2)
    assert c["janky_rule"] == ["deadline", "frame_interval"]


# ---- D2: the legacy `Draw Prepare Process Execute` rows ------------------------------------------------------------
# Android 6+ (FrameInfoVisualizer::dumpData), tab-separated, after the window's ViewRootImpl line. By hand:
#   8.00+0.50+3.00+1.00 = 12.5 ms ok | 15.00+1.00+2.00+1.50 = 19.5 ms SR | 50.00+0.40+5.00+0.60 = 56.0 ms SR, Draw at
#   the 50 ms cap | 4.00+0.30+2.20+0.50 = 7.0 ms ok.   Starts: 0, 12.5, 32.0, 88.0 ms (the earlier rows' sum).
LEGACY_A9 = ("** Graphics info for pid 777 [com.example.tv] **\n\nStats since: 1000ns\nTotal frames rendered: 40\n"
             "Janky frames: 10 (25.00%)\nHISTOGRAM: 5ms=20 10ms=10 20ms=8 60ms=2\n\nProfile data in ms:\n\n"
             "\tcom.example.tv/com.example.tv.Main/android.view.ViewRootImpl@1a2b (visibility=0)\n"
             "\tDraw\tPrepare\tProcess\tExecute\n"
             "\t8.00\t0.50\t3.00\t1.00\n\t15.00\t1.00\t2.00\t1.50\n\t50.00\t0.40\t5.00\t0.60\n\t4.00\t0.30\t2.20\t0.50\n"
             "\nView hierarchy:\n\n  com.example.tv/com.example.tv.Main/android.view.ViewRootImpl@1a2b\n"
             "  8 views, 12.58 kB of render nodes\n")


def test_legacy_rows_are_frames_whose_time_is_the_sum_of_their_stages():
    dump = read_gfxinfo(LEGACY_A9)
    r = analyze_gfxinfo(dump)
    f = r.frames
    assert f["dur_ns"].to_list() == [12_500 * US, 19_500 * US, 56_000 * US, 7_000 * US]
    assert f["start_ns"].to_list() == [0, 12_500 * US, 32_000 * US, 88_000 * US]
    assert f["naive_verdict"].to_list() == ["ok", "SR", "SR", "ok"]
    assert f["verdict"].to_list() == ["ok", "not possible", "not possible", "ok"]
    row = f.row(1, named=True)   # Draw -> ui_thread (Android 6+: intended vsync to sync), Prepare, Process, Execute
    assert (row["ui_thread"], row["sync"], row["gpu_issue"], row["swap"]) == (15 * MS, 1 * MS, 2 * MS, 1_500 * US)
    assert row["window"] == "com.example.tv/com.example.tv.Main"
    s = summary_dict(r.summary)
    assert (s["frames"], s["sr_naive"], s["ff_naive"], s["sr"], s["not_possible"]) == (4, 2, 0, None, 2)
    assert s["legacy_rows"] == {"rows": 4, "at_50ms_cap": 1} and s["intervals"] == {}
    # both slow frames led by the UI thread's stage: 15/19.5 and 50/56 of their time
    [cause] = s["causes"]
    assert (cause["name"], cause["leading"], cause["frames"]) == ("stage:ui_thread", 2, 2)
    assert cause["mean_share"] == pytest.approx((15 / 19.5 + 50 / 56) / 2, abs=1e-4)
    assert any("at least the sum shown" in n for n in r.notes)
    assert any("leaves out the GPU's own work" in n for n in r.notes)
    assert not any("no framestats rows (run" in n for n in r.notes) and r.summary.no_frames_reason is None


def test_legacy_rows_headline_says_where_they_come_from_and_the_cap():
    [h] = frames_headlines(analyze_gfxinfo(read_gfxinfo(LEGACY_A9)), "tv.txt")
    assert "2 slow of 4 frames" in h.text and "0 frozen" not in h.text   # frozen is not known under the cap
    assert "legacy `Draw Prepare Process Execute` rows" in h.text and "50 ms print cap" in h.text
    assert "leading stage: ui thread" in h.text and "(led 2 of 2 frame(s))" in h.text


def test_android4_legacy_rows_of_three_stages_without_a_summary():
    """Android 4.x print `Draw Process Execute`, and no JankTracker summary: Draw is the display-list recording."""
    text = ("** Graphics info for pid 31 [com.example.old] **\n\nProfile data in ms:\n\n"
            "\tcom.example.old/com.example.old.Main/android.view.ViewRootImpl@41a2 (visibility=0)\n"
            "\tDraw\tProcess\tExecute\n\t2.00\t3.00\t1.50\n\t9.25\t6.00\t2.00\n")
    r = analyze_gfxinfo(read_gfxinfo(text))
    assert r.frames["dur_ns"].to_list() == [6_500 * US, 17_250 * US]   # 2+3+1.5, 9.25+6+2
    assert r.frames["draw"].to_list() == [2 * MS, 9_250 * US] and r.frames["ui_thread"].null_count() == 2
    assert r.summary.sr_naive == 1
    assert any("display-list recording alone" in n for n in r.notes)


def test_legacy_rows_beside_framestats_are_not_counted_twice():
    rows = [_a12(10 * MS + k * 17 * MS, 2, 2, 2, 16.6) for k in range(2)]
    text = LEGACY_A9.replace("\nView hierarchy:", "\n---PROFILEDATA---\n" + A12_HEADER + "\n" + "\n".join(rows)
                             + "\n---PROFILEDATA---\n\nView hierarchy:")
    r = analyze_gfxinfo(read_gfxinfo(text))
    assert r.summary.frames == 2 and r.summary.buffer_signal == "deadline"
    assert any("4 legacy `Draw Prepare Process Execute` row(s) not used" in n for n in r.notes)


def test_a_damaged_legacy_row_is_skipped_with_its_line():
    text = LEGACY_A9.replace("\t4.00\t0.30\t2.20\t0.50\n", "\t4.00\t0.30\t2.20\n")
    dump = read_gfxinfo(text, "tv.txt")
    assert dump.legacy_rows().height == 3
    [w] = [w for w in dump.warnings if "wrong number of fields" in w.message]
    assert w.line == 15 and str(w).startswith("tv.txt:15:")


def test_a_legacy_header_without_rows_is_no_frames():
    """An Android 12 dump prints the header under a hidden window (visibility=8) with no rows."""
    text = LEGACY_A9.split("\t8.00")[0] + "\nView hierarchy:\n"
    r = analyze_gfxinfo(read_gfxinfo(text))
    assert "counts_from" in r.summary.sections and r.summary.frames == 40


# ---- D3: a paste indented as a whole (markdown, issues) -------------------------------------------------------------
# By hand: the two legacy rows take 30+0.5+2+1 = 33.5 ms (SR) and 6+0.4+1.5+0.8 = 8.7 ms.
INDENTED = """$ adb shell dumpsys gfxinfo com.example.notes

    Stats since: 9000000000ns
    Total frames rendered: 50
    Janky frames: 20 (40.00%)
    50th percentile: 12ms
    Number Missed Vsync: 4

    Draw Prepare Process Execute
    30.00 0.50 2.00 1.00
    6.00 0.40 1.50 0.80
"""


def test_an_indented_paste_is_read_as_if_flush(tmp_path: Path):
    from droidlag.io.detect import load
    path = tmp_path / "notes.md"
    path.write_text(INDENTED)
    assert load(path)[0] == "gfxinfo"
    dump = read_gfxinfo(INDENTED, str(path))
    [proc] = dump.processes
    assert proc.summary["total_frames_rendered"] == 50 and proc.summary["janky_frames"] == {"count": 20,
                                                                                          "percent": 40.0}
    r = analyze_gfxinfo(dump)
    assert r.frames["dur_ns"].to_list() == [33_500 * US, 8_700 * US] and r.summary.sr_naive == 1


def test_an_indented_dump_keeps_its_process_and_its_sub_items_stay_out_of_the_summary():
    text = "\n".join("  " + ln if ln else ln for ln in SUMMARY_A9.splitlines()) + \
        "\n  Memory policy:\n    Max surface area: 2592000\n"
    [proc] = read_gfxinfo(text).processes
    assert (proc.pid, proc.name) == (4242, "com.example.feed")
    assert proc.summary["total_frames_rendered"] == 200 and proc.summary["histogram"][17] == 9
    assert "max_surface_area" not in proc.summary
    flush = read_gfxinfo(SUMMARY_A9 + "Memory policy:\n  Max surface area: 2592000\n")
    assert "max_surface_area" not in flush.processes[0].summary


def test_summary_lines_with_trailing_spaces_are_read():
    """Markdown pastes end lines with two spaces (a line break): the keys are Android's all the same."""
    text = "Stats since: 1ns  \nTotal frames rendered: 40  \nJanky frames: 10 (25.00%)  \n"
    [proc] = read_gfxinfo(text).processes
    assert proc.summary["total_frames_rendered"] == 40 and proc.summary["janky_frames"]["count"] == 10


# ---- D4 and D5: Android 12+ framestats: causes over the headline's set; rows without a deadline -------------------
A12_HEADER = ("Flags,FrameTimelineVsyncId,IntendedVsync,Vsync,InputEventId,HandleInputStart,AnimationStart,"
              "PerformTraversalsStart,DrawStart,FrameDeadline,FrameInterval,FrameStartTime,SyncQueued,SyncStart,"
              "IssueDrawCommandsStart,SwapBuffers,FrameCompleted,DequeueBufferDuration,QueueBufferDuration,"
              "GpuCompleted,SwapBuffersCompleted,DisplayPresentTime,")


def _a12(start: int, draw_ms: float, gpu_ms: float, swap_ms: float, deadline_ms: float | None,
         vsync_id: int = 7) -> str:
    """An Android 12 row: a frame of 0.4 ms before DrawStart, `draw_ms` recording, 0.1 ms until sync, 0.5 ms sync,
    `gpu_ms` issuing and `swap_ms` swapping (dur = 1.0 + draw + gpu + swap ms); FrameDeadline `deadline_ms` after
    IntendedVsync, or INT64_MAX (no deadline) when None."""
    draw_start = start + 400 * US
    sync_queued = draw_start + round(draw_ms * 1000) * US
    issue = sync_queued + 600 * US
    swap = issue + round(gpu_ms * 1000) * US
    end = swap + round(swap_ms * 1000) * US
    deadline = I64_MAX if deadline_ms is None else start + round(deadline_ms * 1000) * US
    vals = [0, vsync_id, start, start, 0, start + 100 * US, start + 200 * US, start + 300 * US, draw_start, deadline,
            16_666_667, start, sync_queued, sync_queued + 100 * US, issue, swap, end, 100 * US, 200 * US, end, end, 0]
    return ",".join(str(v) for v in vals) + ","


def _a12_dump(rows: list[str]) -> str:
    return ("** Graphics info for pid 42 [com.example.app] **\n\nStats since: 1ns\nTotal frames rendered: 9\n"
            "Janky frames: 2 (22.22%)\nJanky frames (legacy): 5 (55.56%)\n\n---PROFILEDATA---\n" + A12_HEADER + "\n"
            + "\n".join(rows) + "\n---PROFILEDATA---\n")


def test_causes_are_counted_over_the_frames_the_headline_counts():
    """Two normal frames (7 and 9 ms), three stuffed ones (25 ms, swap 20 ms, deadline 40 ms: within it) and two
    that missed their deadline (25 ms, draw 20 ms, deadline 16.6 ms). Over the 5 frames slow by threshold, swap
    would lead 3 and draw 2, and the headline read "leading cause: swap (led 3 of 2 frame(s))"."""
    t0 = 10_000 * MS
    rows = [_a12(t0, 2, 2, 2, 16.6), _a12(t0 + 17 * MS, 3, 2, 3, 16.6)]
    rows += [_a12(t0 + k * 34 * MS, 2, 2, 20, 40) for k in (1, 2, 3)]
    rows += [_a12(t0 + k * 34 * MS, 20, 2, 2, 16.6) for k in (4, 5)]
    r = analyze_gfxinfo(read_gfxinfo(_a12_dump(rows)))
    s = summary_dict(r.summary)
    assert (s["frames"], s["sr_naive"], s["sr"]) == (7, 5, 2)
    assert [(c["name"], c["leading"], c["frames"]) for c in s["causes"]] == [("stage:draw", 2, 2)]
    assert s["causes"][0]["mean_share"] == 0.8   # 20 of 25 ms
    assert {c.frame_id for c in r.frame_causes} == {5, 6}   # the stuffed frames are not jank for the user
    [h] = frames_headlines(r, "app.txt")
    assert "2 slow of 7 frames" in h.text and "leading stage: draw" in h.text and "(led 2 of 2 frame(s))" in h.text


def test_deadline_evidence_reads_in_ms_before_or_after():
    t0 = 10_000 * MS
    rows = [_a12(t0, 2, 2, 2, 16.6), _a12(t0 + 17 * MS, 20, 2, 2, 16.6), _a12(t0 + 51 * MS, 2, 2, 20, 40)]
    r = analyze_gfxinfo(read_gfxinfo(_a12_dump(rows)))
    # ends 7.0, 25.0 and 25.0 ms after IntendedVsync: 9.6 ms before, 8.4 ms after, 15.0 ms before the deadline
    assert r.frames["buffer_evidence"].to_list() == ["completed 9.6 ms before the deadline",
                                                    "completed 8.4 ms after the deadline",
                                                    "completed 15.0 ms before the deadline"]


def test_a_row_without_a_deadline_gets_no_buffer_aware_verdict():
    """FrameTimelineVsyncId -1 and FrameDeadline INT64_MAX (Android's UNKNOWN_DEADLINE), as in a real Android 13 paste:
    the deadline is not a time. A 30 ms frame (0.4+25+0.6+2+2) is not cleared; a 7 ms one is within budget."""
    t0 = 10_000 * MS
    rows = [_a12(t0, 2, 2, 2, 16.6), _a12(t0 + 17 * MS, 25, 2, 2, None, vsync_id=-1),
            _a12(t0 + 51 * MS, 2, 2, 2, None, vsync_id=-1)]
    r = analyze_gfxinfo(read_gfxinfo(_a12_dump(rows)))
    f = r.frames
    assert f["dur_ns"].to_list() == [7 * MS, 30 * MS, 7 * MS]
    assert f["verdict"].to_list() == ["ok", "not possible", "ok"]
    assert f["buffer_signal"].to_list() == ["deadline", "none", "none"]
    ev = f["buffer_evidence"].to_list()
    assert "no deadline" in ev[1] and "INT64_MAX" in ev[1] and "-92233" not in ev[1]
    assert ev[2].startswith("within the frame budget; the row has no deadline")
    s = summary_dict(r.summary)
    assert s["sr"] is None and s["not_possible"] == 1 and s["sr_naive"] == 1 and s["buffer_signal"] == "deadline"
    assert "FrameDeadline" in s["not_possible_reason"]
    assert any("2 framestats row(s) carry no deadline" in n and "1 of them over 16.67 ms" in n for n in r.notes)


# ---- D6: the marker with its dashes typeset (`—PROFILEDATA—`), an elided row, a header with no marker ----------------
V6_HEADER = ("Flags,IntendedVsync,Vsync,OldestInputEvent,NewestInputEvent,HandleInputStart,AnimationStart,"
             "PerformTraversalsStart,DrawStart,SyncQueued,SyncStart,IssueDrawCommandsStart,SwapBuffers,FrameCompleted,")


def _v6(start: int, dur_ms: int) -> str:
    end = start + dur_ms * MS
    vals = [0, start, start, I64_MAX, 0, start + 100 * US, start + 200 * US, start + 300 * US, start + 400 * US,
            start + 500 * US, start + 600 * US, start + 700 * US, end - 100 * US, end]
    return ",".join(str(v) for v in vals) + ","


def _rows_v6() -> list[str]:
    t0 = 20_000 * MS   # frames of 10, 25 and 800 ms: one SR, one FF
    return [_v6(t0, 10), _v6(t0 + 17 * MS, 25), _v6(t0 + 50 * MS, 800)]


@pytest.mark.parametrize("marker", ["\u2014PROFILEDATA\u2014", "\u2013\u2013\u2013PROFILEDATA\u2013\u2013\u2013",
                                    "\u2014\u2014PROFILEDATA\u2014\u2014", "--PROFILEDATA--"])
def test_a_typeset_marker_opens_and_closes_the_block(marker, tmp_path: Path):
    text = ("$ adb shell dumpsys gfxinfo com.demo.app framestats\n\nStats since: 1ns\nTotal frames rendered: 42\n"
            f"Janky frames: 31 (73.81%)\n\n{marker}\n{V6_HEADER}\n" + "\n".join(_rows_v6()) + f"\n...\n{marker}\n")
    path = tmp_path / "blog.txt"
    path.write_text(text)
    from droidlag.io.detect import load
    assert load(path)[0] == "gfxinfo"
    dump = read_gfxinfo(text, str(path))
    s = summary_dict(analyze_gfxinfo(dump).summary)
    assert (s["frames"], s["sr_naive"], s["ff_naive"]) == (3, 1, 1)
    messages = [w.message for w in dump.warnings]
    assert not any("without their" in m for m in messages)   # the header is there: no such warning
    assert not any("wrong field count" in m for m in messages)   # `...` is an elision, not a damaged row
    assert any("elided" in m for m in messages)
    assert any("read as the ---PROFILEDATA--- marker" in m for m in messages) == (marker != "---PROFILEDATA---")


def test_a_header_and_rows_pasted_without_any_marker_are_read_under_the_header():
    """17 columns: their order is not fixed by the width, so without the header line they could not be read."""
    header = V6_HEADER + "DequeueBufferDuration,QueueBufferDuration,GpuCompleted,"
    rows = [r + f"100000,200000,{int(r.split(',')[13]) + 1000}," for r in _rows_v6()]
    dump = read_gfxinfo("Stats since: 1ns\nTotal frames rendered: 3\nJanky frames: 2 (66.67%)\n\n" + header + "\n"
                        + "\n".join(rows) + "\n")
    assert dump.framestats().height == 3 and "GpuCompleted" in dump.framestats().columns
    assert not any("without their" in w.message for w in dump.warnings)


def test_json_frames_of_legacy_rows_are_complete(capsys, tmp_path: Path):
    """The frames JSON of legacy rows: every frame has its start, duration and stages; no traceback on any form."""
    path = tmp_path / "tv.txt"
    path.write_text(LEGACY_A9)
    assert main(["frames", "--json", str(path)]) == 0
    import json
    d = json.loads(capsys.readouterr().out)
    assert [f["stages"]["ui_thread"] for f in d["frames"]] == [8 * MS, 15 * MS, 50 * MS, 4 * MS]
    assert frames_dict(analyze_gfxinfo(read_gfxinfo(LEGACY_A9)))["summary"]["legacy_rows"]["at_50ms_cap"] == 1
