"""Headlines and sentences say only what the input shows (new-user trial of 2026-11-28: a logcat `ANR in` block with
no stack read "main was busy", a native frame was quoted raw as "was native in native: #00 pc 0000...").
Inputs are hand-made pastes in the forms of real reports."""
from __future__ import annotations

from pathlib import Path

from droidlag.findings.inputs import analyze_hangs
from droidlag.findings.narrative import hang_sentence


def _sentence(tmp_path: Path, text: str) -> str:
    f = tmp_path / "paste.txt"
    f.write_text(text)
    (ev,) = analyze_hangs([f]).to_dict()["events"]
    return hang_sentence(ev)


def test_an_anr_block_without_stacks_does_not_claim_what_main_did(tmp_path: Path):
    text = _sentence(tmp_path, "ANR in com.example.notes (com.example.notes/.MainActivity)\nPID: 4242\n"
                               "Reason: Input dispatching timed out (Waited 5001ms for MotionEvent)\n")
    assert "ANR in com.example.notes: main (tid 1): the report shows no stack for it." in text
    assert "busy" not in text


def test_a_native_top_frame_is_named_by_symbol_and_library(tmp_path: Path):
    text = _sentence(tmp_path, '"main" prio=5 tid=1 Native\n'
                               "  | group=\"main\" sCount=1 dsCount=0 obj=0x1 self=0x2\n"
                               "  native: pc 0000000000012345  /system/lib/libc.so (fdatasync+12)\n"
                               "  at android.database.sqlite.SQLiteConnection.nativeExecute (Native method)\n")
    assert "main (tid 1) was in native code in fdatasync (libc.so)" in text
    assert "pc 0000" not in text


def test_a_gfxinfo_headline_without_a_histogram_does_not_count_frozen_frames(tmp_path: Path):
    """Android 6-7 gfxinfo has no HISTOGRAM line: the headline must not say '0 over 700 ms by the histogram'."""
    from droidlag.findings.narrative import frames_headlines
    from droidlag.frames import frames_report
    from droidlag.io.gfxinfo import read_gfxinfo
    text = ("** Graphics info for pid 42 [com.example.notes] **\n\nStats since: 1ns\nTotal frames rendered: 40\n"
            "Janky frames: 10 (25.00%)\n90th percentile: 101ms\n")
    [h] = frames_headlines(frames_report(read_gfxinfo(text, "gfx.txt")), "gfx.txt")
    assert "no frame-time histogram, so frames over 700 ms are not known" in h.text
    assert "0 over 700 ms" not in h.text
    with_hist = text + "HISTOGRAM: 5ms=30 20ms=9 750ms=1\n"
    [h] = frames_headlines(frames_report(read_gfxinfo(with_hist, "gfx.txt")), "gfx.txt")
    assert "1 over 700 ms by the histogram;" in h.text


def test_perfetto_export_names_do_not_double_the_extension():
    """Several traces export to findings-N-<input>.perfetto-trace; the input's own trace extension is dropped (the
    new-user trial saw `x.perfetto-trace.perfetto-trace`), and the name still matches what droidlag knows as its own
    output (so a rerun never reads it as an input)."""
    from droidlag.report.writer import OUTPUT_NAME, _slug
    for path, stem in [("/d/pixel6.perfetto-trace", "pixel6"), ("bundle.zip!traces/a b.pftrace", "a_b"),
                       ("list_jank.html.gz", "list_jank"), ("dump", "dump")]:
        name = f"findings-2-{_slug(path)}.perfetto-trace"
        assert name == f"findings-2-{stem}.perfetto-trace" and OUTPUT_NAME.match(name)
