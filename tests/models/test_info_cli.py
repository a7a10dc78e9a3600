"""`droidlag info --json` gives the facts of the corpus traces (from their SOURCES.md) and of hand-made ones (worked
out by hand), end to end through the CLI."""
import json
from pathlib import Path

import pytest

from conftest import corpus_file
from droidlag.cli import main

REQUIRED = {"format", "duration_ns", "processes", "threads", "slices", "sched_intervals", "counters",
            "binder_transactions", "block_requests", "frame_timeline", "warnings"}


def info(path: Path, capsys) -> dict:
    assert main(["info", "--json", str(path)]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", [
    "perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace",
    "nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace",
    "systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz",
    "systrace_legacy_2017_2cpu_blockio_writeback_sf.dataonly.html.gz",
])
def test_every_corpus_trace_has_the_required_fields(corpus: Path, capsys, name: str):
    d = info(corpus_file(corpus, "traces/" + name), capsys)
    assert REQUIRED <= set(d)
    assert d["duration_ns"] > 0 and d["threads"] > 0


def test_pixel6a_has_sched_binder_frequency_atrace_and_frametimeline(corpus: Path, capsys):
    d = info(corpus_file(corpus, "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace"),
             capsys)
    assert d["format"] == "perfetto"
    assert d["sched_intervals"] > 11_086 and d["has_waking"]
    assert d["binder_transactions"] > 0 and d["binder_replies"] > 0
    assert d["cpu_frequency_samples"] == 1442       # SOURCES: cpu_frequency 1,442
    assert d["slices"] > 0
    assert d["frame_timeline"]["display_actual"] == 10 and d["frame_timeline"]["surface_actual"] == 6
    assert d["frame_timeline"]["surface_jank_types"] == {"None": 5, "App Deadline Missed": 1}


def test_systraces_report_their_kernel_data(corpus: Path, capsys, tmp_path: Path):
    d = info(corpus_file(corpus, "traces/systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz"), capsys)
    # SOURCES: sched_switch 8,844, sched_wakeup 5,289, sched_blocked_reason 373; no cpu_frequency, binder or block
    assert d["format"] == "systrace" and d["has_sched"] and d["has_waking"] and d["has_blocked_reason"]
    assert (d["cpu_frequency_samples"], d["binder_transactions"], d["block_requests"]) == (0, 0, 0)
    assert d["frame_timeline"]["rows"] == 0                  # a systrace has no FrameTimeline
    d = info(corpus_file(corpus, "traces/systrace_legacy_2017_2cpu_blockio_writeback_sf.dataonly.html.gz"), capsys)
    assert d["block_requests"] == 980 and not d["has_sched"]  # SOURCES: block_rq_issue 980, no sched events
    # no usable corpus systrace records cpu_frequency or binder: hand-made lines in the kernel's print formats
    # (corpus/ftrace_formats): 3 frequency samples on CPUs 0 and 4, one binder call answered by a reply
    text = tmp_path / "kernel.txt"
    text.write_text(
        "# tracer: nop\n#\n#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
        "          <idle>-0     [000] d..2   10.000000: cpu_frequency: state=1803000 cpu_id=0\n"
        "          <idle>-0     [004] d..2   10.000100: cpu_frequency: state=2253000 cpu_id=4\n"
        "       app-10    [001] ....   10.000200: binder_transaction: transaction=7 dest_node=1 dest_proc=20 "
        "dest_thread=0 reply=0 flags=0x10 code=0x4\n"
        "       srv-21    [002] ....   10.000300: binder_transaction_received: transaction=7\n"
        "       srv-21    [002] ....   10.000400: binder_transaction: transaction=8 dest_node=0 dest_proc=10 "
        "dest_thread=10 reply=1 flags=0x0 code=0x0\n"
        "       app-10    [001] ....   10.000500: binder_transaction_received: transaction=8\n"
        "          <idle>-0     [000] d..2   10.000600: cpu_frequency: state=1197000 cpu_id=0\n")
    d = info(text, capsys)
    assert (d["cpu_frequency_samples"], d["binder_transactions"], d["binder_replies"]) == (3, 1, 1)


def test_nowinandroid_frametimeline_jank_types(corpus: Path, capsys):
    d = info(corpus_file(corpus, "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace"), capsys)
    ft = d["frame_timeline"]
    assert ft["surface_actual"] == 1068
    assert ft["surface_jank_types"]["Buffer Stuffing"] == 47
    assert ft["surface_jank_types"]["App Deadline Missed"] == 12
    assert d["sched_intervals"] == 0


def test_a_perfetto_trace_without_frame_data_says_so(capsys, tmp_path: Path):
    """No usable corpus Perfetto capture lacks frame data, so hand-made: one CPU's two sched_switch events (thread 5
    runs from 100 ns, thread 6 from 200 ns) and one track-event instant on thread 5; by hand, 3 sched intervals, 1
    slice, no FrameTimeline rows."""
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    t = pb.Trace()
    bundle = t.packet.add().ftrace_events
    bundle.cpu = 0
    for ts, prev, nxt in ((100, 0, 5), (200, 5, 6)):
        e = bundle.event.add(timestamp=ts, pid=prev)
        e.sched_switch.prev_pid, e.sched_switch.next_pid = prev, nxt
        e.sched_switch.prev_comm, e.sched_switch.next_comm = str(prev), str(nxt)
        e.sched_switch.prev_state = 1
    desc = t.packet.add(timestamp=0, trusted_packet_sequence_id=1)
    desc.track_descriptor.uuid = 9
    desc.track_descriptor.thread.pid, desc.track_descriptor.thread.tid = 5, 5
    ev = t.packet.add(timestamp=150, trusted_packet_sequence_id=1)
    ev.track_event.type, ev.track_event.track_uuid, ev.track_event.name = pb.TrackEvent.TYPE_INSTANT, 9, "Hello"
    path = tmp_path / "sched_only.perfetto-trace"
    path.write_bytes(t.SerializeToString())
    d = info(path, capsys)
    assert d["format"] == "perfetto" and d["frame_timeline"]["rows"] == 0 and d["slices"] == 1
    assert d["sched_intervals"] == 3 and d["has_sched"]        # 5 Running 100-200, 5 asleep (S) and 6 Running from 200
