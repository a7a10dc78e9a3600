"""The Perfetto reader on the four real corpus traces, each fact checked against an independent decode of the file
(the protobuf classes read directly, FrameTimeline through a test-local descriptor), plus damaged input."""
from __future__ import annotations

import gzip
import random
from collections import Counter
from functools import cache
from pathlib import Path

import polars as pl
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.unknown_fields import UnknownFieldSet
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from conftest import corpus_file
from droidlag.errors import InputError
from droidlag.io import read_trace
from droidlag.io.perfetto import read_perfetto

PIXEL6A = "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace"
PIXEL6 = "traces/perfetto_pixel6_a12_sched_frametimeline_perfsamples.pftrace"
SAMSUNG = "traces/perfetto_samsung_s20_a11_sched_idle_freq_only.perfetto-trace"
NOWINANDROID = "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace"


# ---- independent decoding of the corpus files -------------------------------------------------------------------
@cache
def _trace(path: Path):
    return read_perfetto(path.read_bytes(), str(path))


@cache
def _raw(path: Path) -> dict:
    """Counts straight from the protobuf classes: ftrace event kinds, compact_sched arrays, prints, binder replies,
    sched_switch comms."""
    t = pb.Trace()
    t.ParseFromString(path.read_bytes())
    kinds: Counter = Counter()
    prints: list[str] = []
    replies = 0
    comms: dict[int, set] = {}
    compact_switch = compact_waking = 0
    for p in t.packet:
        if not p.HasField("ftrace_events"):
            continue
        cs = p.ftrace_events.compact_sched
        compact_switch += len(cs.switch_timestamp)
        compact_waking += len(cs.waking_timestamp)
        for e in p.ftrace_events.event:
            k = e.WhichOneof("event")
            kinds[k] += 1
            if k == "print":
                prints.append(e.print.buf)
            elif k == "binder_transaction":
                replies += bool(e.binder_transaction.reply)
            elif k == "sched_switch":
                s = e.sched_switch
                comms.setdefault(s.prev_pid, set()).add(s.prev_comm)
                comms.setdefault(s.next_pid, set()).add(s.next_comm)
            elif k == "task_rename":
                comms.setdefault(e.task_rename.pid, set()).add(e.task_rename.newcomm)
    return dict(kinds=kinds, prints=prints, replies=replies, comms=comms, compact_switch=compact_switch,
                compact_waking=compact_waking)


def _frame_timeline_class():
    """FrameTimelineEvent as a message class built here from its field numbers (independent of the reader)."""
    F = descriptor_pb2.FieldDescriptorProto
    fp = descriptor_pb2.FileDescriptorProto(name="test_frame_timeline.proto", package="t", syntax="proto2")
    root = fp.message_type.add(name="FTE")
    members = {
        "expected_display": [("cookie", 1, F.TYPE_INT64), ("token", 2, F.TYPE_INT64), ("pid", 3, F.TYPE_INT32)],
        "actual_display": [("cookie", 1, F.TYPE_INT64), ("token", 2, F.TYPE_INT64), ("pid", 3, F.TYPE_INT32),
                           ("present_type", 4, F.TYPE_INT32), ("jank_type", 7, F.TYPE_INT32)],
        "expected_surface": [("cookie", 1, F.TYPE_INT64), ("token", 2, F.TYPE_INT64), ("pid", 4, F.TYPE_INT32)],
        "actual_surface": [("cookie", 1, F.TYPE_INT64), ("token", 2, F.TYPE_INT64), ("pid", 4, F.TYPE_INT32),
                           ("layer_name", 5, F.TYPE_STRING), ("present_type", 6, F.TYPE_INT32),
                           ("jank_type", 9, F.TYPE_INT32)],
        "frame_end": [("cookie", 1, F.TYPE_INT64)],
    }
    root.oneof_decl.add(name="event")
    for number, (name, fields) in enumerate(members.items(), start=1):
        m = root.nested_type.add(name=name.title().replace("_", ""))
        for fname, fnum, ftype in fields:
            m.field.add(name=fname, number=fnum, type=ftype, label=F.LABEL_OPTIONAL)
        root.field.add(name=name, number=number, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL, oneof_index=0,
                       type_name=f".t.FTE.{m.name}")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("t.FTE"))


@cache
def _raw_frames(path: Path) -> list:
    """Every field-76 payload of the file, decoded by protobuf with the test-local class: (member, message)."""
    cls = _frame_timeline_class()
    t = pb.Trace()
    t.ParseFromString(path.read_bytes())
    out = []
    for p in t.packet:
        for f in UnknownFieldSet(p):
            if f.field_number == 76:
                e = cls.FromString(f.data)
                member = e.WhichOneof("event")
                out.append((member, getattr(e, member)))
    return out


def _ft(trace, kind: str, scope: str) -> pl.DataFrame:
    ft = trace.frame_timeline
    return ft.filter((pl.col("kind") == kind) & (pl.col("scope") == scope))


# ---- Pixel 6a, Android 13: everything on ------------------------------------------------------------------------
def test_pixel6a_compact_sched_becomes_thread_states(corpus):
    path = corpus_file(corpus, PIXEL6A)
    t, raw = _trace(path), _raw(path)
    assert raw["compact_switch"] == 11_086 and raw["compact_waking"] == 6_857
    assert t.has_sched and t.has_waking
    running = t.thread_states.filter(pl.col("state") == "Running")
    # every switch starts a Running interval for a non-idle thread (swapper, tid 0, gets none)
    assert 0.5 * raw["compact_switch"] < running.height <= raw["compact_switch"]
    assert running["cpu"].null_count() == 0
    assert set(t.thread_states["state"].unique()) >= {"Running", "R", "R+", "S", "D"}


def test_pixel6a_binder_transactions_pair_with_replies(corpus):
    path = corpus_file(corpus, PIXEL6A)
    t, raw = _trace(path), _raw(path)
    calls = raw["kinds"]["binder_transaction"] - raw["replies"]
    assert raw["kinds"]["binder_transaction"] == 1_365
    assert t.binder.height == calls
    answered = t.binder.filter(pl.col("reply_ts").is_not_null()).height
    assert 0 < answered <= raw["replies"]
    assert t.binder.filter(pl.col("dur").is_not_null())["dur"].min() >= 0


def test_pixel6a_cpufreq_and_cpuidle_counters(corpus):
    path = corpus_file(corpus, PIXEL6A)
    t, raw = _trace(path), _raw(path)
    names = t.counters["name"]
    assert int((names == "cpufreq").sum()) == raw["kinds"]["cpu_frequency"] == 1_442
    assert int((names == "cpuidle").sum()) == raw["kinds"]["cpu_idle"]
    assert len(t.cpu_max_freq_khz) == 8 and len(set(t.cpu_class.values())) == 3


def test_pixel6a_atrace_slices_include_30_doframes(corpus):
    path = corpus_file(corpus, PIXEL6A)
    t, raw = _trace(path), _raw(path)
    begins = [b for b in raw["prints"] if b.startswith("B|") and b.split("|", 2)[2].startswith("Choreographer#doFrame")]
    doframes = t.slices.filter(pl.col("name").str.starts_with("Choreographer#doFrame "))
    assert doframes.height == len(begins) == 30
    assert doframes["closed"].all()


def test_pixel6a_frame_timeline_one_app_deadline_missed_late(corpus):
    path = corpus_file(corpus, PIXEL6A)
    t, raw = _trace(path), _raw_frames(path)
    members = Counter(m for m, _ in raw)
    assert _ft(t, "actual", "display").height == members["actual_display"] == 10
    actual = _ft(t, "actual", "surface")
    assert actual.height == members["actual_surface"] == 6
    janky = actual.filter(pl.col("jank_type") != "None")
    assert janky.select("jank_type", "present_type").rows() == [("App Deadline Missed", "Late Present")]
    raw_janky = [e for m, e in raw if m == "actual_surface" and e.jank_type != 1]
    assert len(raw_janky) == 1 and raw_janky[0].jank_type == 64 and raw_janky[0].present_type == 2
    assert janky["token"][0] == raw_janky[0].token and janky["layer_name"][0] == raw_janky[0].layer_name


def test_pixel6a_metadata_from_system_info(corpus):
    t = _trace(corpus_file(corpus, PIXEL6A))
    assert t.metadata["build"] == "google/bluejay/bluejay:13/TQ1A.220812.001.A1/8949995:userdebug/dev-keys"
    assert t.metadata["device"] == "bluejay"
    assert t.metadata["kernel"].startswith("5.10.107-android13")
    assert t.metadata["android_sdk"] == "33"


def test_pixel6a_process_tree_names_processes_and_threads(corpus):
    t = _trace(corpus_file(corpus, PIXEL6A))
    assert len(t.processes) == 665
    assert t.processes[1].name == "/system/bin/init"
    target = [p for p in t.processes.values() if p.name == "androidx.benchmark.integration.macrobenchmark.target"]
    assert len(target) == 1 and t.thread_name(target[0].pid)


def test_pixel6a_blocked_reason_callers_are_kept_unresolved(corpus):
    t = _trace(corpus_file(corpus, PIXEL6A))
    assert t.has_blocked_reason
    fns = t.thread_states["blocked_function"].drop_nulls()
    assert fns.len() > 0 and fns.str.starts_with("ksym#").all()
    assert any("kernel symbols" in w.message for w in t.warnings)


# ---- nowinandroid, Pixel 7 Pro: atrace + FrameTimeline, no sched -----------------------------------------------
def test_nowinandroid_surface_frames_and_jank_types(corpus):
    path = corpus_file(corpus, NOWINANDROID)
    t, raw = _trace(path), _raw_frames(path)
    members = Counter(m for m, _ in raw)
    # SOURCES' "1,068 expected/actual surface frames" is 1,068 of each (801 of each for display frames)
    assert _ft(t, "expected", "surface").height == members["expected_surface"] == 1_068
    assert _ft(t, "actual", "surface").height == members["actual_surface"] == 1_068
    assert _ft(t, "actual", "display").height == _ft(t, "expected", "display").height == 801
    assert members["frame_end"] == 3_737
    jank = dict(_ft(t, "actual", "surface").group_by("jank_type").len().rows())
    assert jank == {"None": 1004, "Buffer Stuffing": 47, "App Deadline Missed": 12,
                    "App Deadline Missed, Buffer Stuffing": 5}
    raw_bits = Counter(e.jank_type for m, e in raw if m == "actual_surface")
    assert raw_bits == {1: 1004, 128: 47, 64: 12, 64 | 128: 5}
    present = dict(_ft(t, "actual", "surface").group_by("present_type").len().rows())
    assert present == {"On-time Present": 1004, "Late Present": 64}


def test_nowinandroid_has_atrace_slices_and_no_sched(corpus):
    path = corpus_file(corpus, NOWINANDROID)
    t, raw = _trace(path), _raw(path)
    assert not t.has_sched and t.thread_states.height == 0
    begins = sum(1 for b in raw["prints"] if b.startswith("B|"))
    async_begins = sum(1 for b in raw["prints"] if b.startswith("S|"))
    assert t.slices.filter(pl.col("kind") == "thread").height == begins > 0
    assert t.slices.filter(pl.col("kind") == "async").height == async_begins == 1
    assert t.slices.filter(pl.col("name") == "Compose:recompose").height == 438


# ---- Pixel 6, Android 12: regular sched_switch, FrameTimeline on CLOCK_MONOTONIC --------------------------------
def test_pixel6_sched_switch_events_become_thread_states(corpus):
    path = corpus_file(corpus, PIXEL6)
    t, raw = _trace(path), _raw(path)
    assert raw["kinds"]["sched_switch"] == 24_698
    assert t.has_sched and t.has_waking
    running = t.thread_states.filter(pl.col("state") == "Running").height
    assert 0.5 * raw["kinds"]["sched_switch"] < running <= raw["kinds"]["sched_switch"]
    assert t.slices.height == 0   # no atrace in this trace


def test_pixel6_frame_timeline_counts_and_clock(corpus):
    path = corpus_file(corpus, PIXEL6)
    t, raw = _trace(path), _raw_frames(path)
    members = Counter(m for m, _ in raw)
    assert _ft(t, "actual", "display").height == members["actual_display"] == 131
    assert _ft(t, "actual", "surface").height == members["actual_surface"] == 161
    display = dict(_ft(t, "actual", "display").group_by("jank_type").len().rows())
    assert display == {"Prediction Error": 86, "SurfaceFlinger CPU Deadline Missed": 19,
                       "SurfaceFlinger Stuffing": 5, "SurfaceFlinger GPU Deadline Missed": 3, "None": 18}


def test_pixel6_frame_timeline_moves_from_monotonic_to_boot_clock(corpus):
    path = corpus_file(corpus, PIXEL6)
    trace = pb.Trace()
    trace.ParseFromString(path.read_bytes())
    snapshot = next({c.clock_id: c.timestamp for c in p.clock_snapshot.clocks} for p in trace.packet
                    if p.HasField("clock_snapshot"))
    monotonic = [p.timestamp for p in trace.packet if p.timestamp_clock_id == 3 and UnknownFieldSet(p)]
    assert len(monotonic) == 1_167
    boot_minus_mono = snapshot[6] - snapshot[3]
    ft = _trace(path).frame_timeline
    assert ft["ts"].min() == min(monotonic) + boot_minus_mono


# ---- Samsung S20, Android 11: sched/idle/freq only ---------------------------------------------------------------
def test_samsung_sched_without_frames_or_slices(corpus):
    path = corpus_file(corpus, SAMSUNG)
    t = _trace(path)
    assert t.has_sched and t.thread_states.height > 0
    assert t.frame_timeline.height == 0
    assert t.metadata["kernel"] == "4.19.113-22067904"
    # no atrace; its only slice is its one track event, an instant (TYPE_INSTANT, 3) of a test app's thread, counted
    # here from the protobuf classes: an instant of duration 0 on that thread, as trace processor shows it
    raw = pb.Trace()
    raw.ParseFromString(path.read_bytes())
    events = [(p.timestamp, p.track_event.type) for p in raw.packet if p.HasField("track_event")]
    assert events == [(1993164300488, 3)]
    assert t.slices.select("ts", "dur", "tid", "name", "kind").rows() == \
        [(1993164300488, 0, 20855, "Hello Trace", "instant")]


def test_samsung_thread_names_come_from_comms(corpus):
    path = corpus_file(corpus, SAMSUNG)
    t, raw = _trace(path), _raw(path)
    switched = {tid for tid in raw["comms"] if tid}
    named = {tid for tid, th in t.threads.items() if th.name}
    assert switched <= named
    for tid in switched:
        assert t.threads[tid].name in raw["comms"][tid]


# ---- damaged and packaged input ----------------------------------------------------------------------------------
def test_truncated_trace_reads_what_is_there_and_names_the_offset(corpus):
    path = corpus_file(corpus, PIXEL6A)
    data = path.read_bytes()
    cut = data[: int(len(data) * 0.6)]
    t = read_perfetto(cut, "cut.perfetto-trace")
    full = _trace(path)
    stop = [w for w in t.warnings if "truncated or corrupt" in w.message]
    assert len(stop) == 1 and stop[0].offset is not None and 0 < stop[0].offset <= len(cut)
    assert str(stop[0].offset) in stop[0].message
    assert 0 < t.thread_states.height < full.thread_states.height
    assert 0 < t.counters.height < full.counters.height


def test_two_captures_in_one_file_are_read_with_a_warning(corpus):
    """`cat a.pftrace b.pftrace` (found by the new-user trial): one TraceConfig packet per capture, so two of them
    say the file holds two traces; read as one, with a warning saying so. Each corpus trace alone has one."""
    a, b = corpus_file(corpus, PIXEL6A).read_bytes(), corpus_file(corpus, SAMSUNG).read_bytes()
    both = read_perfetto(a + b, "both.pftrace")
    said = [w.message for w in both.warnings if "traces (one TraceConfig" in w.message]
    assert len(said) == 1 and said[0].startswith("the file holds 2 traces")
    for one in (a, b):
        assert not [w for w in read_perfetto(one, "one.pftrace").warnings if "TraceConfig" in w.message]


@pytest.mark.parametrize("data", [b"", random.Random(0).randbytes(4096), b"\x0a\xff\xff\xff\x0f" + b"\x00" * 16],
                         ids=["empty", "random-bytes", "first-record-truncated"])
def test_unreadable_input_raises_input_error(data):
    with pytest.raises(InputError) as e:
        read_perfetto(data, "bad.pftrace")
    assert "bad.pftrace" in str(e.value)


def test_gzipped_copy_reads_the_same_as_plain(corpus, tmp_path):
    path = corpus_file(corpus, SAMSUNG)
    gz = tmp_path / "s20.perfetto-trace.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    zipped, plain = read_trace(gz).summary(), _trace(path).summary()
    zipped.pop("path")
    plain.pop("path")
    assert zipped == plain


def test_cpu_info_keys_max_frequency_by_cpu_position_not_processor_name():
    """CpuInfo has one entry per CPU in CPU order; `processor` is a model name, not the CPU number."""
    t = pb.Trace()
    p = t.packet.add()
    p.timestamp = 5
    for freqs in ([300000, 1800000], [500000, 2800000]):
        c = p.cpu_info.cpus.add()
        c.processor = "AArch64 Processor rev 14"
        c.frequencies.extend(freqs)
    q = t.packet.add()
    q.timestamp = 9
    e = q.ftrace_events.event.add()
    e.timestamp, e.pid, e.print.buf = 9, 1, "B|1|x"
    tr = read_perfetto(t.SerializeToString(), "mem")
    assert tr.cpu_max_freq_khz == {0: 1800000, 1: 2800000}
    assert tr.cpu_class == {0: "little", 1: "big"}


def test_sched_stream_keeps_the_time_range_and_flags_of_events_on_an_impossible_cpu():
    """A hand-made bundle: thread 5 runs on cpu 0 from 100, switches out asleep (S) at 200 to thread 6; a waking of
    thread 5 at 300 names target cpu 70000 (no device has it: left out with a warning, but its time still ends the
    trace); a waking at 250 onto cpu 1 is read. Worked by hand: thread 5 is Running 100-200, S 200-250, R 250-300
    (the trace's end); thread 6 Running 200-300; the trace spans 100-300 and has sched_waking."""
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    t = pb.Trace()
    bundle = t.packet.add().ftrace_events
    bundle.cpu = 0
    e = bundle.event.add(timestamp=100, pid=0)
    e.sched_switch.prev_pid, e.sched_switch.next_pid, e.sched_switch.next_comm = 0, 5, "worker"
    e = bundle.event.add(timestamp=200, pid=5)
    e.sched_switch.prev_pid, e.sched_switch.prev_state, e.sched_switch.next_pid = 5, 1, 6
    e.sched_switch.prev_comm, e.sched_switch.next_comm = "worker", "other"
    e = bundle.event.add(timestamp=250, pid=6)
    e.sched_waking.pid, e.sched_waking.target_cpu, e.sched_waking.comm = 5, 1, "worker"
    e = bundle.event.add(timestamp=300, pid=6)
    e.sched_waking.pid, e.sched_waking.target_cpu, e.sched_waking.comm = 5, 70000, "worker"
    tr = read_perfetto(t.SerializeToString(), "mem")
    assert (tr.start_ns, tr.end_ns, tr.has_sched, tr.has_waking) == (100, 300, True, True)
    rows = sorted(tr.thread_states.select("tid", "ts", "dur", "state", "cpu").rows())
    assert rows == [(5, 100, 100, "Running", 0), (5, 200, 50, "S", None), (5, 250, 50, "R", 1),
                    (6, 200, 100, "Running", 0)]
    assert [w.message for w in tr.warnings if "CPU number" in w.message] == \
        ["1 scheduling event(s) with a CPU number outside 0..65535 skipped"]
