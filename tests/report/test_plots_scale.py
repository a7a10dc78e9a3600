"""Report plots at scale (issue 18): a timeline with hundreds of idle gaps draws the cuts as one collection and
labels only the longest few (1,485 labels took 25 s to lay out for an 8 MB gfxinfo); the axis says how many."""
from __future__ import annotations

from tests.conftest import corpus_file

from droidlag.findings import frames_from_file
from droidlag.report.plots import IDLE_GAP_S, MAX_CUT_LABELS, frame_timeline

GFXINFO = "gfxinfo/sailfish_android10_dumpsys_gfxinfo.txt"


def test_many_idle_gaps_label_the_longest_few(corpus):
    real = frames_from_file(corpus_file(corpus, GFXINFO)).frames.select("start_ns", "dur_ns", "verdict").to_dicts()
    t0 = min(f["start_ns"] for f in real)
    span = max(f["start_ns"] for f in real) - t0
    # the real frames again and again, each copy 3 s after the last: a pause between copies
    frames = [dict(f, start_ns=f["start_ns"] + k * (span + 3_000_000_000)) for k in range(40) for f in real]
    starts = sorted(f["start_ns"] for f in frames)
    gaps = sum(1 for a, b in zip(starts, starts[1:]) if b - a > IDLE_GAP_S * 1e9)   # counted here, not by the plot
    assert gaps >= 39
    svg = frame_timeline(frames, "many pauses", t0)
    assert svg.count("<!-- idle ") == MAX_CUT_LABELS   # matplotlib writes each text as a comment before its path
    assert f"{gaps} idle gap(s) cut" in svg
