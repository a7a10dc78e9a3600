"""The gfxinfo reader and verdicts on constructed text: columns by header, Flags rows excluded, FrameDeadline as
the buffer-aware signal (Android 12+), bad input."""
from __future__ import annotations

import pytest

from droidlag.cli import main
from droidlag.errors import InputError
from droidlag.frames import analyze_gfxinfo
from droidlag.io.gfxinfo import read_gfxinfo
from droidlag.report.frames_json import summary_dict

A12_HEADER = ("Flags,FrameTimelineVsyncId,IntendedVsync,Vsync,InputEventId,HandleInputStart,AnimationStart,"
              "PerformTraversalsStart,DrawStart,FrameDeadline,FrameInterval,FrameStartTime,SyncQueued,SyncStart,"
              "IssueDrawCommandsStart,SwapBuffers,FrameCompleted,DequeueBufferDuration,QueueBufferDuration,"
              "GpuCompleted,SwapBuffersCompleted,DisplayPresentTime,")
MS = 1_000_000


def _row(flags, start, dur_ms, deadline_ms):
    end = start + int(dur_ms * MS)
    vals = [flags, 7, start, start, 0, start + 100, start + 200, start + 300, start + 400,
            start + int(deadline_ms * MS), 16_666_667, start, start + 500, start + 600, start + 700, end - 100, end,
            1000, 2000, end, end, 0]
    return ",".join(str(v) for v in vals) + ","


def _a12_text(rows):
    return ("** Graphics info for pid 42 [com.example.app] **\n\nStats since: 1ns\nTotal frames rendered: 4\n"
            "Janky frames: 1 (25.00%)\n\n\tcom.example.app/com.example.app.Main/android.view.ViewRootImpl@1 "
            "(visibility=0)\nWindow: com.example.app/com.example.app.Main\n---PROFILEDATA---\n" + A12_HEADER + "\n"
            + "\n".join(rows) + "\n---PROFILEDATA---\n")


def test_android12_columns_by_header_and_deadline_signal():
    t0 = 10_000_000_000
    rows = [_row(0, t0, 8, 16.6), _row(0, t0 + 17 * MS, 20, 33.3),      # long but within its (stuffed) deadline
            _row(0, t0 + 40 * MS, 25, 16.6), _row(1, t0 + 80 * MS, 90, 16.6)]   # missed; Flags=1 excluded
    dump = read_gfxinfo(_a12_text(rows))
    r = analyze_gfxinfo(dump)
    s = summary_dict(r.summary)
    assert s["frames"] == 3 and s["flagged_rows_excluded"] == 1
    assert s["sr_naive"] == 2 and s["sr"] == 1
    assert s["buffer_signal"] == "deadline"
    assert dump.processes[0].summary["janky_frames"] == {"count": 1, "percent": 25.0}


def test_malformed_rows_are_skipped_with_a_warning():
    t0 = 10_000_000_000
    dump = read_gfxinfo(_a12_text([_row(0, t0, 8, 16.6), "1,2,3", "x," * 22]))
    assert dump.framestats().height == 1
    assert dump.warnings and "skipped" in dump.warnings[0].message


def test_text_without_gfxinfo_is_an_input_error():
    with pytest.raises(InputError):
        read_gfxinfo(b"hello world\n")


def test_cli_bad_inputs_never_traceback(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01\x02 not a trace" * 10)
    trunc = tmp_path / "trunc.txt"
    trunc.write_text("** Graphics info for pid 1 [x] **\n---PROFILEDATA---\n")
    assert main(["frames", str(tmp_path / "missing.txt")]) == 3
    assert main(["frames", str(empty)]) == 3
    assert main(["frames", str(junk)]) == 3
    assert main(["frames", "--json", str(trunc)]) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.err


# A summary pasted without its `** Graphics info for pid` line, as issues and blog posts quote it (hand-made here in
# the Android 6-9 form). The new-user trial of 2026-11-28 found it refused as "not a format droidlag reads".
SUMMARY_ONLY = """Stats since: 752958278148ns
Total frames rendered: 1200
Janky frames: 300 (25.00%)
90th percentile: 34ms
95th percentile: 42ms
99th percentile: 69ms
Number Missed Vsync: 47
"""


def test_a_summary_without_its_process_line_is_read_as_an_unknown_process(tmp_path):
    from droidlag.frames import frames_report
    from droidlag.io.inputs import discover
    f = tmp_path / "pasted.txt"
    f.write_text(SUMMARY_ONLY)
    [item] = discover([f])
    assert item.kind == "gfxinfo"
    dump = read_gfxinfo(SUMMARY_ONLY, "pasted.txt")
    [proc] = dump.processes
    assert proc.name == "<unknown process>" and proc.summary["total_frames_rendered"] == 1200
    assert proc.summary["janky_frames"] == {"count": 300, "percent": 25.0}
    assert [w.line for w in dump.warnings] == [1] and "process is unknown" in dump.warnings[0].message
    [agg] = frames_report(dump).summary.sections["gfxinfo_summaries"]
    assert (agg["total_frames_rendered"], agg["janky_frames"]) == (1200, 300)


def test_prose_quoting_one_count_is_not_gfxinfo(tmp_path):
    from droidlag.io.inputs import discover
    f = tmp_path / "notes.txt"
    f.write_text("After the fix the list scrolls better.\nTotal frames rendered: 1200 in our run.\n")
    [item] = discover([f])
    assert item.kind != "gfxinfo"


def test_counts_that_are_not_numbers_leave_the_histogram(capsys):
    """A summary whose counts carry trailing notes (a blog's `// ...` annotations: warned, left out) keeps its process
    and its HISTOGRAM: the frames and the frame over 700 ms are still counted (new-user trial 2026-11-28). Hand-made;
    the histogram holds 20 frames: 2 slow (the 20 and 25 ms buckets) and 1 frozen (800 ms)."""
    from droidlag.findings.narrative import frames_headlines
    from droidlag.frames import frames_report
    text = ("** Graphics info for pid 7 [com.example.launcher] **\nStats since: 1ns // since boot\n"
            "Total frames rendered: 20 // all frames\nJanky frames: 3 (15.00%) // slow ones\n"
            "HISTOGRAM: 5ms=15 10ms=2 20ms=1 25ms=1 800ms=1\n")
    dump = read_gfxinfo(text, "annotated.txt")
    assert any("is not a number" in w.message for w in dump.warnings)
    [agg] = frames_report(dump).summary.sections["gfxinfo_summaries"]
    assert agg["total_frames_rendered"] == 20 and agg["total_from_histogram"] is True
    assert (agg["sr_naive_histogram"], agg["ff_naive_histogram"], agg["janky_frames"]) == (2, 1, None)
    [h] = frames_headlines(frames_report(dump), "annotated.txt")
    assert "1 over 700 ms" in h.text and "None" not in h.text and h.kind == "ff"


# ---- framestats rows pasted without their header line (trial finding 13: smart-test-ti/SoloX#249 pasted rows only,
# refused as "not a format droidlag reads"). Android 6-9 print 14 columns in the order developer.android.com lists
# (Flags, IntendedVsync, Vsync, ..., FrameCompleted), Android 10-11 append DequeueBufferDuration and
# QueueBufferDuration: those widths fix the columns. Android 12+ orders its wider rows differently by release.
def _v6_row(flags, start, dur_ms, extra=()):
    """A hand-written Android 6-9 row: FrameCompleted (the 14th field) is `dur_ms` after IntendedVsync (the 2nd)."""
    end = start + int(dur_ms * MS)
    vals = [flags, start, start + 50, 0, 0, start + 100, start + 200, start + 300, start + 400, start + 500,
            start + 600, start + 700, end - 100, end, *extra]
    return ",".join(str(v) for v in vals) + ","


def _headerless_rows(extra=()):
    t0 = 20_000_000_000
    return [_v6_row(0, t0, 10, extra), _v6_row(0, t0 + 17 * MS, 25, extra), _v6_row(0, t0 + 50 * MS, 800, extra),
            _v6_row(1, t0 + 900 * MS, 30, extra)]


@pytest.mark.parametrize("extra", [(), (200_000, 500_000)], ids=["android6-9", "android10-11"])
def test_framestats_rows_without_header_are_read_by_their_width(tmp_path, extra):
    from droidlag.io.detect import load
    path = tmp_path / "rows.txt"
    path.write_text("\n".join(_headerless_rows(extra)) + "\n")
    assert load(path)[0] == "gfxinfo"   # what `analyze`, `frames` and `fleet` go by
    dump = read_gfxinfo(path.read_bytes(), str(path))
    fs = dump.framestats()
    assert fs.height == 4 and fs["Flags"].to_list() == [0, 0, 0, 1]
    # by hand: frames of 10, 25 and 800 ms (the Flags=1 row excluded): 25 ms is slow (SR), 800 ms frozen (FF; the
    # verdicts are exclusive)
    assert ((fs["FrameCompleted"] - fs["IntendedVsync"]) // MS).to_list() == [10, 25, 800, 30]
    s = summary_dict(analyze_gfxinfo(dump).summary)
    assert s["frames"] == 3 and s["sr_naive"] == 1 and s["ff_naive"] == 1
    [w] = dump.warnings
    assert w.line == 1 and "without their `Flags,IntendedVsync,...` header line" in w.message
    assert ("QueueBufferDuration" in fs.columns) == bool(extra)


def test_framestats_block_whose_header_line_is_lost_reads_its_first_row_as_data():
    """`---PROFILEDATA---` then rows: the first row was taken for a header of numbers, so a frame was lost and every
    column misnamed."""
    text = ("** Graphics info for pid 42 [com.example.app] **\n---PROFILEDATA---\n" + "\n".join(_headerless_rows())
            + "\n---PROFILEDATA---\n")
    dump = read_gfxinfo(text)
    assert dump.framestats().height == 4
    assert summary_dict(analyze_gfxinfo(dump).summary)["frames"] == 3
    assert [w.line for w in dump.warnings] == [3]


def test_wider_framestats_rows_without_header_say_why_they_are_not_read(tmp_path):
    """22 fields (Android 12+): the order is not fixed by the width; refused with the reason, not 'not a format'."""
    from droidlag.io.detect import load
    rows = [_row(0, 30_000_000_000 + k * 17 * MS, 8, 16.6) for k in range(3)]
    path = tmp_path / "rows.txt"
    path.write_text("\n".join(rows) + "\n")
    assert load(path)[0] == "gfxinfo"
    with pytest.raises(InputError, match=r"3 framestats row\(s\) without their `Flags,IntendedVsync,...` header line "
                                         r"\(line 1\).*Android 12\+"):
        read_gfxinfo(path.read_bytes(), str(path))
    # beside a summary, the process is kept and the rows are skipped with a warning naming the line
    text = "Stats since: 1ns\nTotal frames rendered: 3\nJanky frames: 0 (0.00%)\n" + "\n".join(rows) + "\n"
    dump = read_gfxinfo(text)
    assert dump.processes[0].summary["total_frames_rendered"] == 3
    assert any(w.line == 4 and "not read" in w.message for w in dump.warnings)


def test_a_csv_of_other_numbers_is_not_framestats(tmp_path):
    from droidlag.io.detect import sniff_bytes
    prose = "Here is my data:\n" + "\n".join(",".join(str(k * j) for j in range(5)) for k in range(4))
    assert sniff_bytes(prose.encode()) is None
    mixed = "\n".join(["1,2,3,4,5,6,7,8,9,10,11,12,13,14", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16"])
    assert sniff_bytes(mixed.encode()) is None   # two widths: not rows of one dump


def test_android12_header_with_interval_and_start_time_swapped_is_read_by_the_values():
    """Android 12+ print `...,FrameDeadline,FrameInterval,FrameStartTime,...` while the values come in the order
    FrameStartTime, FrameInterval (libhwui's names list against its index enum; seen in a real Android 13 paste,
    smart-test-ti/SoloX#249, where `FrameInterval` held 268809780365 and `FrameStartTime` 16653828). The vsync
    period was then taken from a timestamp: "vsync 268908.46 ms, 0 Hz"."""
    t0 = 10_000_000_000
    rows = []
    for k, dur in enumerate((8, 20, 25)):
        start = t0 + k * 17 * MS
        vals = _row(0, start, dur, 16.6).rstrip(",").split(",")
        vals[10], vals[11] = str(start - 5000), "16666667"   # the data's order under the printed names
        rows.append(",".join(vals) + ",")
    dump = read_gfxinfo(_a12_text(rows))
    fs = dump.framestats()
    assert fs["FrameInterval"].to_list() == [16_666_667] * 3
    assert fs["FrameStartTime"].to_list() == [t0 - 5000, t0 + 17 * MS - 5000, t0 + 34 * MS - 5000]
    assert any("FrameInterval and FrameStartTime in the wrong order" in w.message for w in dump.warnings)
    s = summary_dict(analyze_gfxinfo(dump).summary)
    assert s["frames"] == 3 and s["sr_naive"] == 2   # 20 and 25 ms over 16.67 ms, by hand
    # the header's own order, when the values fit it, is kept (test_android12_columns_by_header_and_deadline_signal)
    plain = read_gfxinfo(_a12_text([_row(0, t0, 8, 16.6)]))
    assert plain.framestats()["FrameInterval"].to_list() == [16_666_667]
    assert not any("wrong order" in w.message for w in plain.warnings)


def test_headerless_rows_whose_last_row_is_cut_are_still_framestats(tmp_path):
    """A paste cut mid-row (SoloX#249's last row lost a field): the one shorter row does not hide the rest."""
    rows = _headerless_rows()
    text = "\n".join(rows[:-1] + [rows[-1].rstrip(",").rsplit(",", 1)[0]]) + "\n"
    path = tmp_path / "rows.txt"
    path.write_text(text)
    from droidlag.io.detect import load
    assert load(path)[0] == "gfxinfo"
    dump = read_gfxinfo(path.read_bytes(), str(path))
    assert dump.framestats().height == 3   # the cut row skipped, with the warning naming it
    assert any(w.line == 4 and "skipped" in w.message for w in dump.warnings)
