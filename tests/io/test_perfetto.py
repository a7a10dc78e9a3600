"""The Perfetto reader on the two usable real corpus traces, each fact checked against an independent decode of the
file (the protobuf classes read directly, FrameTimeline through a test-local descriptor), on hand-made traces for
what neither capture holds (full sched_switch events, FrameTimeline on the monotonic clock), plus damaged input."""
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
from perfetto_wire import field

from conftest import corpus_file
from droidlag.errors import InputError
from droidlag.io import read_trace
from droidlag.io.perfetto import read_perfetto

PIXEL6A = "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace"
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
    path = corpus_file(corpus, PIXEL6A)
    t = _trace(path)
    # the processes: the 665 of the process trees (SOURCES: 665 procs) and the 7 tasks forked during the trace
    # without CLONE_THREAD (0x10000) that no process tree lists (a process of its own: docs/validation-perfetto.md),
    # both taken here from the protobuf classes
    raw = pb.Trace.FromString(path.read_bytes())
    tree = {q.pid for p in raw.packet if p.HasField("process_tree") for q in p.process_tree.processes}
    forked = {e.task_newtask.pid for p in raw.packet if p.HasField("ftrace_events") for e in p.ftrace_events.event
              if e.WhichOneof("event") == "task_newtask" and not e.task_newtask.clone_flags & 0x10000}
    assert (len(tree), len(forked - tree)) == (665, 7)
    assert set(t.processes) == tree | forked
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


# ---- display frames of both captures ---------------------------------------------------------------------------
# Trace processor's names for the bits and values these captures use (JankType 1 JANK_NONE; PresentType 1
# PRESENT_ON_TIME), written by hand from its frame-timeline parser.
_JANK_NAMES = {1: "None"}
_PRESENT_NAMES = {1: "On-time Present"}


@pytest.mark.parametrize("rel, frames", [(PIXEL6A, 10), (NOWINANDROID, 801)])
def test_display_frames_and_their_types_match_the_raw_events(corpus, rel, frames):
    """SOURCES: 10 actual display frames (pixel6a), 801 expected and 801 actual (nowinandroid), all jank None."""
    path = corpus_file(corpus, rel)
    t, raw = _trace(path), _raw_frames(path)
    actual = [e for m, e in raw if m == "actual_display"]
    expected = [e for m, e in raw if m == "expected_display"]
    assert len(actual) == len(expected) == frames
    got = _ft(t, "actual", "display")
    assert got.height == frames and _ft(t, "expected", "display").height == frames
    assert sorted(got["token"].to_list()) == sorted(e.token for e in actual)
    assert Counter(got["jank_type"].to_list()) == Counter(_JANK_NAMES[e.jank_type] for e in actual)
    assert Counter(got["present_type"].to_list()) == Counter(_PRESENT_NAMES[e.present_type] for e in actual)


# ---- hand-made: full sched_switch events (Android 12 and older, or no compact_sched), FrameTimeline on MONOTONIC ---
def test_regular_sched_switch_events_become_thread_states_named_by_their_comms():
    """A seeded hand-made stream of full sched_switch events (the form before compact_sched), with no atrace and no
    FrameTimeline: 4 CPUs, 400 switches among 12 threads and the idle task (a thread never runs on two CPUs at once),
    and one task_rename. Worked out here, not by the reader: each switch to a real task opens a Running interval on
    its CPU lasting to that CPU's next switch (the CPU's last one to the trace's end, its last event); each thread is
    named by one of the comms its events gave it."""
    rng = random.Random(20)
    tids = list(range(501, 513))
    comm = {tid: f"worker-{tid}" for tid in tids}
    given: dict[int, set] = {tid: {comm[tid]} for tid in tids}
    running = {cpu: 0 for cpu in range(4)}
    bundles = {cpu: pb.TracePacket() for cpu in range(4)}
    for cpu, bundle in bundles.items():
        bundle.ftrace_events.cpu = cpu
    expected_running: list[tuple[int, int, int]] = []     # (cpu, ts, tid); durations filled in below
    ts = 1_000_000
    for k in range(400):
        ts += rng.randint(1_000, 200_000)
        cpu = rng.randrange(4)
        prev = running[cpu]
        free = [tid for tid in tids if tid not in running.values()] + [0]
        nxt = rng.choice([tid for tid in free if tid != prev])
        e = bundles[cpu].ftrace_events.event.add(timestamp=ts, pid=prev)
        e.sched_switch.prev_pid, e.sched_switch.next_pid = prev, nxt
        e.sched_switch.prev_comm = comm[prev] if prev else f"swapper/{cpu}"
        e.sched_switch.next_comm = comm[nxt] if nxt else f"swapper/{cpu}"
        e.sched_switch.prev_state = rng.choice([0, 1, 2])       # R, S, D
        e.sched_switch.prev_prio = e.sched_switch.next_prio = 120
        running[cpu] = nxt
        if nxt:
            expected_running.append((cpu, ts, nxt))
        if k == 200:                                            # thread 505 renames itself (a pthread_setname_np)
            ts += 1_000
            r = bundles[cpu].ftrace_events.event.add(timestamp=ts, pid=nxt or 1)
            r.task_rename.pid, r.task_rename.oldcomm, r.task_rename.newcomm = 505, comm[505], "OkHttp Dispatch"
            r.task_rename.oom_score_adj = 0
            comm[505] = "OkHttp Dispatch"
            given[505].add("OkHttp Dispatch")
    end = ts
    rows = []
    for cpu in range(4):
        mine = [(t0, tid) for c, t0, tid in expected_running if c == cpu]
        switches = [e.timestamp for e in bundles[cpu].ftrace_events.event if e.WhichOneof("event") == "sched_switch"]
        for t0, tid in mine:
            later = [t1 for t1 in switches if t1 > t0]
            rows.append((cpu, t0, (later[0] if later else end) - t0, tid))
    data = pb.Trace(packet=list(bundles.values())).SerializeToString()
    t = read_perfetto(data, "mem")
    assert t.has_sched and t.end_ns == end
    got = t.thread_states.filter(pl.col("state") == "Running").select("cpu", "ts", "dur", "tid").sort("cpu", "ts")
    assert got.rows() == sorted(rows) and len(rows) > 200
    for tid in tids:
        assert t.threads[tid].name in given[tid], tid
    assert t.slices.height == 0 and t.frame_timeline.height == 0


def test_frame_timeline_on_the_monotonic_clock_moves_to_the_boot_clock():
    """Android 12's SurfaceFlinger stamped its FrameTimeline packets on CLOCK_MONOTONIC (timestamp_clock_id 3); both
    usable captures (Android 13) stamp them on BOOTTIME, so this is hand-made. A clock snapshot says MONOTONIC
    1,000,000 is BOOTTIME 9,001,000,000 (8 s spent suspended). An expected display frame starts at monotonic
    2,000,000 and ends 16 ms later, the actual one starts at 2,100,000 and ends 17 ms later: by hand, on the boot
    clock they start at 9,002,000,000 and 9,002,100,000."""
    snap = pb.TracePacket(timestamp=9_001_000_000, trusted_packet_sequence_id=1)
    snap.clock_snapshot.clocks.add(clock_id=3, timestamp=1_000_000)
    snap.clock_snapshot.clocks.add(clock_id=6, timestamp=9_001_000_000)

    def ft(ts: int, member: int, *fields: int) -> bytes:
        body = b"".join(field(n, v) for n, v in enumerate(fields, start=1))
        head = pb.TracePacket(timestamp=ts, timestamp_clock_id=3, trusted_packet_sequence_id=3).SerializeToString()
        return head + field(76, field(member, body))
    packets = [snap.SerializeToString(),
               ft(2_000_000, 1, 1, 77, 600),                       # expected display: cookie 1, token 77, pid 600
               ft(2_100_000, 2, 2, 77, 600, 1, 1, 0, 1, 1),        # actual: on time, no GPU composition, jank None
               ft(18_000_000, 5, 1), ft(19_100_000, 5, 2)]         # the frame ends of cookies 1 and 2
    t = read_perfetto(b"".join(field(1, p) for p in packets), "mem")
    rows = t.frame_timeline.sort("ts").select("kind", "scope", "ts", "dur", "token").rows()
    assert rows == [("expected", "display", 9_002_000_000, 16_000_000, 77),
                    ("actual", "display", 9_002_100_000, 17_000_000, 77)]


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
    say the file holds two traces; read as one, with a warning saying so. Each corpus trace alone has one (one
    trace_config packet each, counted with the protobuf classes)."""
    a, b = corpus_file(corpus, PIXEL6A).read_bytes(), corpus_file(corpus, NOWINANDROID).read_bytes()
    for one in (a, b):
        assert sum(p.HasField("trace_config") for p in pb.Trace.FromString(one).packet) == 1
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
    path = corpus_file(corpus, NOWINANDROID)
    gz = tmp_path / "nowinandroid.perfetto-trace.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    zipped, plain = read_trace(gz).summary(), _trace(path).summary()
    for summary in (zipped, plain):             # the file's path, which differs, is in the summary and its warnings
        summary.pop("path")
        for w in summary["warnings"]:
            w.pop("path")
    assert zipped == plain and plain["warnings"]


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
