"""Frames on the real corpus. Counts asserted here were checked independently of droidlag: doFrame/DrawFrame counts
and > 16.67 ms frames by a regex pass over the raw ftrace text; FrameTimeline jank-type counts and gfxinfo row
counts from ../shared/corpus/*/SOURCES.md (their authors' own decoders)."""
from __future__ import annotations

import json

import polars as pl
import pytest

from conftest import corpus_file
from droidlag.cli import main
from droidlag.findings import frames_from_file
from droidlag.report.frames_json import summary_dict

TRACES = "traces/"


def _report(corpus, name):
    return frames_from_file(corpus_file(corpus, TRACES + name))


def test_list_jank_counts_and_bufferqueue_signal(corpus):
    r = _report(corpus, "systrace_meizu_flyme_2019_list_jank.dataonly.html.gz")
    s = summary_dict(r.summary)
    # 247 doFrame; 17 frames longer than 16.67 ms from doFrame start to the end of their DrawFrame (max 35.45 ms)
    assert s["frames"] == 247
    assert s["sr_naive"] == 17 and s["ff_naive"] == 0
    assert abs(s["frame_time_ms"]["max"] - 35.448) < 0.01
    assert s["buffer_signal"] == "bufferqueue"
    assert s["sr"] is not None and s["sr"] <= s["sr_naive"]


def test_list_jank_causes_are_ranked_against_normal_frames(corpus):
    r = _report(corpus, "systrace_meizu_flyme_2019_list_jank.dataonly.html.gz")
    assert r.causes.height > 0
    top = summary_dict(r.summary)["causes"][0]
    assert top["mean_normal_share"] is not None
    # every SR/FF frame has at least one cause with its numbers
    bad = r.frames.filter(pl.col("verdict").is_in(["SR", "FF"]))["frame_id"].to_list()
    assert set(bad) <= set(r.causes["frame_id"].to_list())


def test_launcher_scroll_is_the_smooth_control(corpus):
    r = _report(corpus, "systrace_meizu_flyme_2019_launcher_scroll.dataonly.html.gz")
    assert r.summary.frames == 36
    assert r.summary.sr_naive == 0 and r.summary.sr == 0


def test_flutter_app_is_not_miscounted(corpus):
    r = _report(corpus, "systrace_meizu_flyme_2019_flutter_wanandroid.dataonly.html.gz")
    flutter = [a for a in r.summary.sections["non_hwui_apps"] if a["process"] == "com.thl.fluwanandroid"]
    assert flutter and flutter[0]["renderer"] == "flutter"
    assert r.frames.filter(pl.col("process") == "com.thl.fluwanandroid").height == 0


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
    r = _report(corpus, "perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace")
    s = summary_dict(r.summary)
    assert s["frames"] == 30
    assert s["frametimeline_agreement"]["frametimeline_app_jank"] == 1
    assert s["sr"] == 1
    assert r.causes.height > 0


def test_traces_without_frames_say_so(corpus):
    for name in ("perfetto_samsung_s20_a11_sched_idle_freq_only.perfetto-trace",
                 "systrace_legacy_2017_2cpu_blockio_writeback_sf.dataonly.html.gz"):
        r = _report(corpus, name)
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


@pytest.mark.parametrize("name", [
    "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace",
    "traces/perfetto_pixel6_a12_sched_frametimeline_perfsamples.pftrace",
    "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace",
    "traces/perfetto_samsung_s20_a11_sched_idle_freq_only.perfetto-trace",
    "traces/systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz",
    "traces/systrace_legacy_2017_2cpu_blockio_writeback_sf.dataonly.html.gz",
    "traces/systrace_meizu_flyme_2019_flutter_wanandroid.dataonly.html.gz",
    "traces/systrace_meizu_flyme_2019_launcher_scroll.dataonly.html.gz",
    "traces/systrace_meizu_flyme_2019_list_jank.dataonly.html.gz",
    "traces/systrace_xiaomi_miui_2021_launcher.dataonly.html.gz",
    "gfxinfo/sailfish_android10_dumpsys_gfxinfo.txt",
])
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
