"""The frames analysis returns typed results in nanoseconds; findings.json's milliseconds and rounding are the
serialiser's (report/frames_json.py). Checked on a real trace against figures recomputed from the frame table. The
typed SurfaceFlinger evidence is checked in test_frames_compositor.py, on a hand-made trace with a late compositor."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from conftest import corpus_file
from droidlag.findings import frames_from_file
from droidlag.frames.causes import SYSTEM_FACTORS
from droidlag.frames.results import CauseEvidence, CauseRank, FrameCause, FramesSummary
from droidlag.models.causes import CAUSE_CLASSES, CAUSE_LABELS, CAUSE_WORDS, CAUSES
from droidlag.report.frames_json import frames_dict, summary_dict

# sched, binder, cpufreq, FrameTimeline, atrace; a slow frame (corpus/traces/SOURCES.md section 7: one app surface
# frame "App Deadline Missed"), so system-factor causes with their numbers
STARTUP = "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace"


@pytest.fixture(scope="module")
def startup(corpus):
    return frames_from_file(corpus_file(corpus, STARTUP))


def test_causes_are_typed_records_not_json_text(startup):
    r = startup
    assert r.frame_causes and all(isinstance(c, FrameCause) and isinstance(c.evidence, CauseEvidence)
                                  for c in r.frame_causes)
    assert "evidence" not in r.causes.columns          # the table carries numbers only
    assert r.causes.height == len(r.frame_causes)
    factor = [c for c in r.frame_causes if c.evidence.ns is not None]
    assert factor and all(isinstance(c.evidence.path_ns, int) for c in factor)


def test_evidence_ms_is_the_serialisers_rounding_of_ns(startup):
    d = frames_dict(startup)
    by_frame = {f["start_ns"]: f for f in d["frames"]}
    starts = dict(zip(startup.frames["frame_id"].to_list(), startup.frames["start_ns"].to_list()))
    seen = 0
    for c in startup.frame_causes:
        shown = next(x for x in by_frame[starts[c.frame_id]]["causes"] if x["name"] == c.name)
        ev = c.evidence
        if ev.ns is not None:
            assert shown["evidence"]["path_ms"] == round(ev.path_ns / 1e6, 3)
            assert shown["evidence"]["ms"] == round(ev.ns / 1e6, 3)
            assert shown["evidence"]["cost_over_budget_ms"] == round(ev.cost_over_budget_ns / 1e6, 3)
            assert shown["share"] == round(c.share, 4)
            seen += 1
    assert seen > 0


def test_summary_is_typed_and_its_percentiles_come_from_the_frame_table(startup):
    s = startup.summary
    assert isinstance(s, FramesSummary) and all(isinstance(c, CauseRank) for c in s.causes)
    f = startup.frames.filter(pl.col("complete").fill_null(True))
    dur = f["dur_ns"].to_numpy()
    assert s.frames == f.height
    assert s.frame_time_ns["max"] == float(dur.max())                      # ns, unrounded
    shown = summary_dict(s)["frame_time_ms"]
    assert shown["max"] == round(float(dur.max()) / 1e6, 3)
    assert shown["p90"] == round(float(np.percentile(dur, 90)) / 1e6, 3)
    sr = int((f["verdict"] == "SR").sum())
    assert s.sr == sr and summary_dict(s)["sr_pct"] == round(100 * sr / f.height, 2)


def test_summary_cause_counts_match_the_records(startup):
    s = startup.summary
    bad = set(startup.frames.filter(pl.col("verdict").is_in(["SR", "FF", "not possible"]))["frame_id"].to_list())
    for rank in s.causes:
        mine = [c for c in startup.frame_causes if c.name == rank.name and c.frame_id in bad]
        assert rank.frames == len(mine) and rank.leading == sum(c.rank == 1 for c in mine)


def test_one_cause_vocabulary_for_frames_and_hangs(corpus):
    # every cause the frames analysis can name has words, a label and a class in the one vocabulary
    for name in (*SYSTEM_FACTORS, "app_work", "surfaceflinger"):
        assert name in CAUSE_WORDS and name in CAUSE_LABELS and name in CAUSE_CLASSES
    # and so does every cause the hangs analysis gives on the corpus's dumps
    from droidlag.findings import analyze_hangs
    causes = {e.cause for e in analyze_hangs([corpus / "anr"]).events}
    assert causes and causes <= set(CAUSES)
