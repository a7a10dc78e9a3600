"""The native ftrace text parser (native/src/ftrace_text.rs through droidlag.io.ftrace_text): on every corpus systrace
capture, and on the Pixel 6a Perfetto capture's kernel events written out as ftrace text, each event kind's rows are
counted in the raw text by plain substring counting (an independent route), and hand-made lines cover the argument
forms the kernels print (greedy comms with spaces, optional fields, damage)."""
from __future__ import annotations

import gzip
import json
import re
from collections import Counter

import polars as pl
import pytest

from conftest import corpus_file
from droidlag.io import read_trace
from droidlag.io.systrace import read_systrace

BIG = ["traces/systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz",
       "traces/systrace_legacy_2017_2cpu_blockio_writeback_sf.dataonly.html.gz",
       "systrace/catapult_android_systrace_2012_sched.html"]
PIXEL6A = "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace"
HEADER = "# tracer: nop\n#\n#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION\n"


def _text(path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8", "replace")


def _read(text: str):
    return read_systrace(text.encode(), "mem.txt")


def _counts_match_the_text(text: str, trace) -> None:
    counters = trace.counters.group_by("name").len()
    per_name = dict(zip(counters.get_column("name").to_list(), counters.get_column("len").to_list()))
    assert per_name.get("cpufreq", 0) == text.count(" cpu_frequency: state=")
    assert per_name.get("cpuidle", 0) == text.count(" cpu_idle: state=")
    assert trace.block.height == text.count(" block_rq_issue: ")
    calls = len(re.findall(r" binder_transaction: transaction=\d+ .* reply=0 ", text))
    assert trace.binder.height == calls
    # every switch to a real task opens a Running interval (tid 0, the idle task, gets none)
    switches_in = len(re.findall(r" sched_switch: .* next_pid=[1-9]", text))
    assert trace.thread_states.filter(pl.col("state") == "Running").height == switches_in
    # every atrace begin record is one thread slice (tracing_mark_write, `print`, and the 2012 kernels' `0:`)
    begins = len(re.findall(r"(?:tracing_mark_write|\d: 0): B\|", text))
    assert trace.slices.filter(pl.col("kind") == "thread").height == begins
    ignored = json.loads(trace.metadata.get("ftrace_ignored_events", "{}"))
    for name, n in ignored.items():
        assert n == text.count(f": {name}: ") or n == len(re.findall(rf"\d: {re.escape(name)}: ", text)), name


@pytest.mark.parametrize("rel", BIG)
def test_each_event_kind_counts_as_in_the_raw_text(corpus, rel):
    path = corpus_file(corpus, rel)
    _counts_match_the_text(_text(path), read_trace(path))


# ---- the Pixel 6a capture's kernel events as ftrace text ------------------------------------------------------
# No usable systrace capture records cpu_frequency, cpu_idle or binder events, so the Perfetto capture's own events of
# those kinds (and its atrace prints) are written out here as the kernel prints them (the print fmt lines of
# corpus/ftrace_formats/android_raven_AOSP.MASTER_5.10.43: the same 5.10 GKI kernel family), one line each, with the
# `<...>` comm ftrace prints for a task whose name it does not know, in time order across the CPUs.
_FMT = {
    "cpu_frequency": lambda e: f"state={e.state} cpu_id={e.cpu_id}",
    "cpu_idle": lambda e: f"state={e.state} cpu_id={e.cpu_id}",
    "binder_transaction": lambda e: (f"transaction={e.debug_id} dest_node={e.target_node} dest_proc={e.to_proc} "
                                     f"dest_thread={e.to_thread} reply={e.reply} flags=0x{e.flags:x} "
                                     f"code=0x{e.code:x}"),
    "binder_transaction_received": lambda e: f"transaction={e.debug_id}",
}


def _pixel6a_as_ftrace_text(path) -> tuple[str, Counter]:
    """(the text, each event kind's count in the protobuf decode, by the `perfetto` package's classes)."""
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    t = pb.Trace()
    t.ParseFromString(path.read_bytes())
    lines: list[tuple[int, str]] = []
    kinds: Counter = Counter()
    for p in t.packet:
        if not p.HasField("ftrace_events"):
            continue
        cpu = p.ftrace_events.cpu
        for e in p.ftrace_events.event:
            kind = e.WhichOneof("event")
            if kind == "print":
                buf = e.print.buf.rstrip("\n")
                if "\n" in buf:
                    continue
                name, args = "tracing_mark_write", buf
                kinds["print_begin"] += buf.startswith("B|")
            elif kind in _FMT:
                name, args = kind, _FMT[kind](getattr(e, kind))
                kinds[kind] += 1
                if kind == "binder_transaction":
                    kinds["binder_reply"] += bool(e.binder_transaction.reply)
                    kinds["binder_call"] += not e.binder_transaction.reply
                elif kind == "cpu_frequency":
                    kinds[f"freq_cpu{e.cpu_frequency.cpu_id}"] += 1
            else:
                continue
            secs, ns = divmod(e.timestamp, 10**9)
            lines.append((e.timestamp, f"           <...>-{e.pid:<5d} [{cpu:03d}] .... {secs:5d}.{ns // 1000:06d}: "
                                       f"{name}: {args}"))
    lines.sort(key=lambda x: x[0])
    return HEADER + "\n".join(line for _, line in lines) + "\n", kinds


def test_pixel6a_kernel_events_as_text_count_as_in_the_protobuf(corpus):
    text, kinds = _pixel6a_as_ftrace_text(corpus_file(corpus, PIXEL6A))
    # traces/SOURCES.md section 7: cpu_frequency 1,442, cpu_idle 6,809, binder_transaction 1,365 / _received 1,365
    assert (kinds["cpu_frequency"], kinds["cpu_idle"]) == (1442, 6809)
    assert (kinds["binder_transaction"], kinds["binder_transaction_received"]) == (1365, 1365)
    trace = read_systrace(text.encode(), "pixel6a_as_text.txt")
    _counts_match_the_text(text, trace)
    freq = trace.counters.filter(pl.col("name") == "cpufreq")
    assert freq.height == 1442
    per_cpu = dict(freq.group_by("cpu").len().rows())
    assert per_cpu == {int(k[8:]): n for k, n in kinds.items() if k.startswith("freq_cpu")}
    assert set(per_cpu) == set(range(8))
    assert trace.counters.filter(pl.col("name") == "cpuidle").height == 6809
    binder = trace.binder
    assert binder.height == kinds["binder_call"] and kinds["binder_call"] + kinds["binder_reply"] == 1365
    assert 0 < binder.get_column("reply_ts").is_not_null().sum() <= kinds["binder_reply"]
    assert binder.filter(pl.col("dur").is_not_null())["dur"].min() >= 0
    assert trace.slices.filter(pl.col("kind") == "thread").height == kinds["print_begin"] > 0


def test_greedy_comms_optional_fields_and_old_wakeups():
    trace = _read(HEADER +
                  " a b-7 [000] d..2 1.000000: sched_switch: prev_comm=a b prev_pid=7 prev_prio=120 prev_state=S "
                  "==> next_comm=x ==> y next_pid=9 next_prio=120\n"
                  " <idle>-0 [001] d..2 1.000100: sched_waking: comm=a b pid=7 prio=120 target_cpu=001\n"
                  " <idle>-0 [001] d..2 1.000200: sched_wakeup: comm=c pid=11 prio=120 success=1\n"
                  " x ==> y-9 [000] .... 1.000300: sched_process_exit: comm=x ==> y pid=9 prio=120\n")
    assert trace.threads[7].name == "a b" and trace.threads[9].name == "x ==> y"
    s7 = trace.thread_states.filter(pl.col("tid") == 7).sort("ts")
    assert s7.get_column("state").to_list() == ["S", "R"]
    assert s7.row(1, named=True)["cpu"] == 1 and s7.row(1, named=True)["waker_tid"] == 0
    # with sched_waking in the trace, sched_wakeup is skipped (the waking is the earlier, better-placed event)
    assert trace.thread_states.filter(pl.col("tid") == 11).height == 0


def test_wakeup_without_target_cpu_when_there_is_no_waking():
    trace = _read(HEADER + " <idle>-0 [001] d..2 1.000200: sched_wakeup: comm=c pid=11 prio=120 success=1\n")
    row = trace.thread_states.row(0, named=True)
    assert (row["tid"], row["state"], row["cpu"]) == (11, "R", None)


def test_lost_events_unknown_events_and_malformed_lines_are_reported():
    bad = "".join(f" a-1 [000] .... 2.00000{i}: sched_switch: garbage {i}\n" for i in range(7))
    trace = _read(HEADER + "CPU:3 [LOST 42 EVENTS]\n" +
                  " a-1 [000] .... 1.000000: irq_handler_entry: irq=1 name=x\n"
                  " a-1 [000] .... 1.500000: irq_handler_entry: irq=1 name=x\n"
                  " a-1 [000] .... 1.600000: tracing_mark_write: B|1|w\n" + bad)
    messages = [w.message for w in trace.warnings]
    assert any("42 lost event" in m for m in messages)
    detailed = [w for w in trace.warnings if w.message.startswith("line skipped")]
    assert [w.line for w in detailed] == [8, 9, 10, 11, 12]        # file lines of the first five
    assert any(m.startswith("2 more malformed line(s) skipped (7 in all)") for m in messages)
    assert json.loads(trace.metadata["ftrace_ignored_events"]) == {"irq_handler_entry": 2}
    assert trace.metadata["ftrace_events"] == "10"
    assert trace.start_ns == 1_000_000_000


def test_block_request_with_parenthesis_in_the_command_and_no_sector():
    trace = _read(HEADER +
                  " app-10 [001] d..1 10.000600: block_rq_issue: 8,0 FWS 0 (a) b) 18446744073709551615 + 0 [app x]\n")
    blk = trace.block.row(0, named=True)
    assert (blk["sector"], blk["nr_sectors"], blk["comm"], blk["direction"]) == (-1, 0, "app x", "flush")


# ---- events run together on one line (trial finding 5: a trace quoted on a web page lost its newlines; the first
# event was read, the rest of the line silently dropped, and `info` showed a 0.000 s trace) -------------------------
FIVE = [
    "          <idle>-0     [000] d..3   123.456000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 "
    "prev_state=R ==> next_comm=RenderThread next_pid=812 next_prio=110",
    "    RenderThread-812   [000] ...1   123.456100: tracing_mark_write: B|800|DrawFrame",
    "    RenderThread-812   [000] ...1   123.458000: tracing_mark_write: E",
    "    RenderThread-812   [000] d..3   123.458100: sched_switch: prev_comm=RenderThread prev_pid=812 prev_prio=110 "
    "prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120",
    "  Binder:800_2-815  (  800) [001] d..3   123.460000: sched_switch: prev_comm=Binder:800_2 prev_pid=815 "
    "prev_prio=120 prev_state=D ==> next_comm=swapper/1 next_pid=0 next_prio=120",
]


def _facts(trace):
    return (trace.slices.select("ts", "dur", "tid", "name").sort("ts").rows(),
            trace.thread_states.select("ts", "dur", "tid", "state").sort("ts", "tid").rows(),
            (trace.start_ns, trace.end_ns))


@pytest.mark.parametrize("with_header", [True, False], ids=["header-too", "events-only"])
def test_events_run_together_on_one_line_are_split_with_a_warning(tmp_path, with_header):
    from droidlag.io.detect import load
    one = (HEADER.replace("\n", " ") if with_header else "") + " ".join(FIVE) + "\n"
    path = tmp_path / "one.txt"
    path.write_text(one)
    assert load(path)[0] == "systrace"
    trace = read_trace(path)
    # by hand: DrawFrame 123.4561 -> 123.4580 s on tid 812; the trace spans 123.456 -> 123.460 s
    assert trace.slices.select("ts", "dur", "tid", "name").rows() == [(123_456_100_000, 1_900_000, 812, "DrawFrame")]
    assert (trace.start_ns, trace.end_ns) == (123_456_000_000, 123_460_000_000)
    assert _facts(trace) == _facts(_read(HEADER + "\n".join(FIVE) + "\n"))   # the same lines, one a line
    run_on = [w for w in trace.warnings if "run together" in w.message]
    assert [(w.line, w.message.split()[0]) for w in run_on] == [(1, "5")]
    assert trace.process_of(815) == 800   # the TGID column kept


def test_a_bracket_in_an_argument_is_not_an_event_head():
    """atrace payloads and comms may hold `[`, `-N` and numbers: only a whole head (`TASK-PID [CPU] FLAGS SECS:
    event:`) splits a line."""
    lines = ["  app-900   [001] ...1   10.000100: tracing_mark_write: B|900|load x-12 [3] 1.5: y",
             "  app-900   [001] ...1   10.000200: tracing_mark_write: E"]
    trace = _read(HEADER + "\n".join(lines) + "\n")
    assert trace.slices["name"].to_list() == ["load x-12 [3] 1.5: y"]
    assert not [w for w in trace.warnings if "run together" in w.message]


@pytest.mark.parametrize("rel, n", [("systrace/catapult_test_data/decompressed_atrace_data.txt", 400),
                                    ("systrace/catapult_test_data/atrace_data", 100)])
def test_corpus_trace_collapsed_reads_as_the_original(corpus, rel, n):
    """A real capture's first event lines joined in groups of 20 onto single lines (atrace slices; sched, wakeups,
    TGID column): every event is read, as from the lines one a line."""
    path = corpus_file(corpus, rel)
    events = [ln for ln in _text(path).splitlines() if ln.strip() and not ln.lstrip().startswith("#")
              and re.search(r"\[\d+\]", ln)][:n]
    assert len(events) == n
    original = _read(HEADER + "\n".join(events) + "\n")
    joined = _read(HEADER + "\n".join(" ".join(events[k:k + 20]) for k in range(0, n, 20)) + "\n")
    assert _facts(joined) == _facts(original)
    assert original.slices.height + original.thread_states.height > 0
    run_on = [w for w in joined.warnings if "run together" in w.message]
    assert [w.line for w in run_on[:5]] == list(range(4, 4 + min(5, n // 20)))
    assert (n // 20 > 5) == ("more line(s)" in run_on[-1].message)


def test_the_sched_stream_equals_the_same_events_given_one_by_one():
    """The parser hands its switches, wakings and blocked reasons over as one narrow stream (TraceBuilder.sched_stream);
    the builder fed the same events one call each (another route into the same table) makes the same thread states,
    and the same warning for the event on a CPU number no device has."""
    from droidlag.models.trace_builder import TraceBuilder
    lines = [
        " a-7 [001] d..2 1.000000: sched_switch: prev_comm=a prev_pid=7 prev_prio=120 prev_state=D ==> next_comm=b "
        "next_pid=8 next_prio=120",
        " b-8 [001] d..2 1.000100: sched_waking: comm=a pid=7 prio=120 target_cpu=000",
        " b-8 [001] d..2 1.000150: sched_wakeup_new: comm=c pid=9 prio=120 success=1",      # no target_cpu
        " b-8 [070000] d..2 1.000170: sched_switch: prev_comm=b prev_pid=8 prev_prio=120 prev_state=R+ ==> "
        "next_comm=c next_pid=9 next_prio=120",                                                # no such CPU
        " b-8 [001] d..2 1.000200: sched_blocked_reason: pid=7 iowait=1 caller=f+0x10/0x20",
        " b-8 [001] d..2 1.000300: sched_switch: prev_comm=b prev_pid=8 prev_prio=120 prev_state=S ==> next_comm=a "
        "next_pid=7 next_prio=120",
        " a-7 [001] d..2 1.000400: sched_switch: prev_comm=a prev_pid=7 prev_prio=120 prev_state=R ==> next_comm=c "
        "next_pid=9 next_prio=120",
    ]
    trace = _read(HEADER + "\n".join(lines) + "\n")
    b = TraceBuilder("systrace", "mem.txt")
    for tid, name in ((7, "a"), (8, "b"), (9, "c")):
        b.thread(tid, name=name)
    b.sched_switch(1_000_000_000, 1, 7, "D", 8)
    b.sched_switch(1_000_170_000, 70000, 8, "R+", 9)
    b.sched_switch(1_000_300_000, 1, 8, "S", 7)
    b.sched_switch(1_000_400_000, 1, 7, "R", 9)
    b.sched_waking(1_000_100_000, 7, 0, 8)
    b.sched_waking(1_000_150_000, 9, None, 8)
    b.sched_blocked_reason(1_000_200_000, 7, "f", True)
    by_hand = b.build()
    assert trace.thread_states.equals(by_hand.thread_states)
    assert trace.thread_states.height > 0
    cpu_warnings = [w.message for w in trace.warnings if "CPU" in w.message]
    assert cpu_warnings == [w.message for w in by_hand.warnings if "CPU" in w.message] and len(cpu_warnings) == 1


def _three_blocked_reasons() -> list[str]:
    """Threads 7, 8, 7 each run, leave the CPU in D and get a blocked reason: io_schedule, mutex_lock, io_schedule."""
    sw = (" {c}-{p} [000] d..2 {t}: sched_switch: prev_comm={c} prev_pid={p} prev_prio=120 prev_state={s} ==> "
          "next_comm={n} next_pid={q} next_prio=120")
    lines = []
    for t0, tid, caller, iowait in ((1.0, 7, "io_schedule", 1), (1.1, 8, "mutex_lock", 0), (1.2, 7, "io_schedule", 1)):
        lines.append(sw.format(c="x", p=0, t=f"{t0:.6f}", s="R", n="y", q=tid))
        lines.append(sw.format(c="y", p=tid, t=f"{t0 + 0.01:.6f}", s="D", n="x", q=0))
        lines.append(f" x-0 [000] d..2 {t0 + 0.02:.6f}: sched_blocked_reason: pid={tid} iowait={iowait} "
                     f"caller={caller}+0x10/0x20")
    return lines


def test_blocked_reasons_cross_to_python_as_distinct_payloads():
    """Three blocked reasons naming two distinct (function, io_wait) payloads: the parser hands two tuples, each
    reason points at its own, and each D interval names its function."""
    from droidlag._native import FtraceText
    lines = _three_blocked_reasons()
    p = FtraceText(False)
    p.parse("\n".join(lines) + "\n", 1)
    cols = p.finish()
    assert cols["blocked"] == [("io_schedule", True), ("mutex_lock", False)]
    assert list(memoryview(cols["sched"]["blocked_index"]).cast("i")) == [0, 1, 0]
    t = _read(HEADER + "\n".join(lines) + "\n")
    d = t.thread_states.filter(t.thread_states["state"] == "D").sort("ts")
    assert d.select("tid", "blocked_function", "io_wait").rows() == [
        (7, "io_schedule", True), (8, "mutex_lock", False), (7, "io_schedule", True)]


@pytest.mark.parametrize("damage", ["one index short", "one index too many", "an index past the payloads"])
def test_a_sched_stream_whose_blocked_indices_do_not_match_its_reasons_is_refused(damage):
    """The builder checks a decoder's stream before taking it: as many payload indices as blocked reasons, each
    naming a payload given (a mismatch would name the wrong function, or overwrite switch states)."""
    from droidlag._native import FtraceText
    from droidlag.models.trace_builder import TraceBuilder
    p = FtraceText(False)
    p.parse("\n".join(_three_blocked_reasons()) + "\n", 1)
    cols = p.finish()
    idx = bytes(memoryview(cols["sched"]["blocked_index"]))
    cols["sched"]["blocked_index"] = {"one index short": idx[:-4], "one index too many": idx[:4] + idx,
                                      "an index past the payloads": idx[:-4] + (2).to_bytes(4, "little")}[damage]
    with pytest.raises(ValueError, match="payload indices for 3 blocked|outside the 2 given"):
        TraceBuilder("systrace", "mem").sched_stream(cols["sched"], cols["states"].__getitem__, cols["blocked"])
