"""`droidlag info --json` gives the facts of the corpus traces (from their SOURCES.md), end to end through the CLI."""
import json
from pathlib import Path

import pytest

from droidlag.cli import main

REQUIRED = {"format", "duration_ns", "processes", "threads", "slices", "sched_intervals", "counters",
            "binder_transactions", "block_requests", "frame_timeline", "warnings"}


def info(path: Path, capsys) -> dict:
    assert main(["info", "--json", str(path)]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", [
    "perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace",
    "nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace",
    "perfetto_pixel6_a12_sched_frametimeline_perfsamples.pftrace",
    "perfetto_samsung_s20_a11_sched_idle_freq_only.perfetto-trace",
    "systrace_meizu_flyme_2019_list_jank.dataonly.html.gz",
    "systrace_meizu_flyme_2019_launcher_scroll.dataonly.html.gz",
    "systrace_meizu_flyme_2019_flutter_wanandroid.dataonly.html.gz",
    "systrace_xiaomi_miui_2021_launcher.dataonly.html.gz",
    "systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz",
    "systrace_legacy_2017_2cpu_blockio_writeback_sf.dataonly.html.gz",
])
def test_every_corpus_trace_has_the_required_fields(corpus: Path, capsys, name: str):
    d = info(corpus / "traces" / name, capsys)
    assert REQUIRED <= set(d)
    assert d["duration_ns"] > 0 and d["threads"] > 0


def test_pixel6a_has_sched_binder_frequency_atrace_and_frametimeline(corpus: Path, capsys):
    d = info(corpus / "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace", capsys)
    assert d["format"] == "perfetto"
    assert d["sched_intervals"] > 11_086 and d["has_waking"]
    assert d["binder_transactions"] > 0 and d["binder_replies"] > 0
    assert d["cpu_frequency_samples"] == 1442       # SOURCES: cpu_frequency 1,442
    assert d["slices"] > 0
    assert d["frame_timeline"]["display_actual"] == 10 and d["frame_timeline"]["surface_actual"] == 6
    assert d["frame_timeline"]["surface_jank_types"] == {"None": 5, "App Deadline Missed": 1}


def test_meizu_list_jank_has_kernel_data(corpus: Path, capsys):
    d = info(corpus / "traces/systrace_meizu_flyme_2019_list_jank.dataonly.html.gz", capsys)
    assert d["format"] == "systrace" and d["has_sched"] and d["has_waking"] and d["has_blocked_reason"]
    assert d["cpu_frequency_samples"] > 0 and d["binder_replies"] > 0 and d["block_requests"] > 0


def test_nowinandroid_frametimeline_jank_types(corpus: Path, capsys):
    d = info(corpus / "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace", capsys)
    ft = d["frame_timeline"]
    assert ft["surface_actual"] == 1068
    assert ft["surface_jank_types"]["Buffer Stuffing"] == 47
    assert ft["surface_jank_types"]["App Deadline Missed"] == 12
    assert d["sched_intervals"] == 0


def test_samsung_s20_has_no_frame_data(corpus: Path, capsys):
    d = info(corpus / "traces/perfetto_samsung_s20_a11_sched_idle_freq_only.perfetto-trace", capsys)
    # no frame data; its one slice is a test app's track-event instant (tests/io/test_perfetto.py counts it)
    assert d["frame_timeline"]["rows"] == 0 and d["slices"] == 1
    assert d["sched_intervals"] > 0
