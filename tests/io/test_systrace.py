"""The systrace/atrace reader on the real corpus (counts checked against the raw text by an independent route) and
on small hand-made inputs for the line-format variants and bad input."""
from __future__ import annotations

import ast
import gzip
import re
import zlib
from pathlib import Path

import polars as pl
import pytest

from conftest import corpus_file, usable
from droidlag.errors import InputError
from droidlag.io import read_trace
from droidlag.io.systrace import read_systrace

TRACES = "traces"
SYSTRACE = "systrace"
TEST_DATA = "systrace/catapult_test_data"
ANTUTU_2018 = f"{TRACES}/systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz"
LEGACY_2017 = f"{TRACES}/systrace_legacy_2017_2cpu_blockio_writeback_sf.dataonly.html.gz"
HTML_2012 = f"{SYSTRACE}/catapult_android_systrace_2012_sched.html"
COMPRESSED = f"{SYSTRACE}/catapult_compressed_atrace_data.txt"
DECOMPRESSED = f"{TEST_DATA}/decompressed_atrace_data.txt"
OLD_COMPRESSED = f"{TEST_DATA}/compressed_atrace_data.txt"
CHROME_JSON = f"{TEST_DATA}/profile-chrome_systrace_perf_chrome_data"
NOT_TRACES = {"LICENSE.catapult-systrace", "atrace_procfs_dump", "atrace_extracted_tgids", "atrace_extracted_threads",
              "SOURCES.md"}

HEADER = "# tracer: nop\n#\n#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION\n"


def raw_text(path: Path) -> str:
    """The file's text, gunzipped when needed: the independent route the reader's counts are checked against."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", "replace")


def count_slices(trace, name: str) -> int:
    return trace.slices.filter(pl.col("name") == name).height


def count_begins(text: str, name: str) -> int:
    """atrace `B|pid|name` begin records for `name`, counted in the raw text (any line form)."""
    return len(re.findall(r"B\|\d+\|" + re.escape(name) + r"(?:\\n\\?)?$", text, re.MULTILINE))


# ---- every file goes through the dispatcher ----------------------------------------------------------------
def _corpus_trace_files(corpus: Path) -> list[Path]:
    files = sorted((corpus / TRACES).glob("*.dataonly.html.gz"))
    files += sorted(p for p in (corpus / SYSTRACE).rglob("*") if p.is_file() and p.name not in NOT_TRACES)
    return [p for p in files if usable(p)]


@pytest.mark.slow
def test_every_corpus_systrace_file_reads_or_fails_cleanly(corpus):
    files = _corpus_trace_files(corpus)
    assert len(files) >= 13       # 2 traces/ systraces, 3 systrace/ files, 8 catapult_test_data traces
    expected_errors = {Path(CHROME_JSON).name, Path(OLD_COMPRESSED).name}
    for path in files:
        if path.name in expected_errors:
            with pytest.raises(InputError):
                read_trace(path)
            continue
        trace = read_trace(path)
        assert trace.format == "systrace", path
        assert trace.end_ns > trace.start_ns > 0, path
        assert trace.slices.height or trace.thread_states.height or trace.block.height, path


def test_files_that_are_not_traces_raise_input_error(corpus):
    for name in NOT_TRACES - {"SOURCES.md"}:
        with pytest.raises(InputError):
            read_trace(corpus_file(corpus, f"{TEST_DATA}/{name}"))


def test_chrome_json_is_refused_with_a_reason(corpus):
    path = corpus_file(corpus, CHROME_JSON)
    with pytest.raises(InputError, match="chrome"):
        read_trace(path)
    with pytest.raises(InputError, match="not an Android systrace"):
        read_systrace(path.read_bytes(), str(path))


def test_old_damaged_compressed_atrace_salvages_the_header_then_refuses(corpus):
    """Decision: the 562-byte blob inflates to the ftrace header only, so there is nothing to analyse -> InputError
    that says the data is damaged and how much was salvaged."""
    path = corpus_file(corpus, OLD_COMPRESSED)
    with pytest.raises(InputError) as err:
        read_trace(path)
    assert "only the ftrace header" in err.value.reason
    assert "292 bytes" in err.value.reason


# ---- 2018 capture (AnTuTu + YY): app atrace, sched, blocked reasons, TGID column -------------------------------
# Expected values: traces/SOURCES.md section 5 (an independent decoder's counts) or regexes over the raw text here.
@pytest.fixture(scope="module")
def antutu(corpus):
    path = corpus_file(corpus, ANTUTU_2018)
    return read_trace(path), raw_text(path)


def test_antutu_has_exactly_252_do_frame_slices(antutu):
    trace, text = antutu
    assert count_begins(text, "Choreographer#doFrame") == 252     # SOURCES: 252 doFrame (202 AnTuTu + 50 YY)
    assert count_slices(trace, "Choreographer#doFrame") == 252


def test_antutu_has_sched_wakeups_and_blocked_reasons(antutu):
    trace, text = antutu
    assert trace.has_sched and trace.has_waking and trace.has_blocked_reason
    states = trace.thread_states
    running = states.filter(pl.col("state") == "Running").height
    switches_to_task = len(re.findall(r" sched_switch: .* next_pid=[1-9]\d* ", text))
    assert running == switches_to_task
    # SOURCES: sched_switch 8,844, sched_wakeup 5,289, sched_blocked_reason 373; no sched_waking at all, so the
    # threads are woken through sched_wakeup only
    assert text.count(" sched_switch: ") == 8844 and text.count(" sched_wakeup: ") == 5289
    assert text.count(" sched_blocked_reason: ") == 373 and text.count(" sched_waking: ") == 0
    blocked = states.filter(pl.col("blocked_function").is_not_null())
    assert blocked.height > 0
    assert not blocked.get_column("blocked_function").str.contains(r"\+0x").any()   # offsets stripped
    assert states.filter(pl.col("waker_tid").is_not_null()).height > 0


def test_antutu_tgid_column_maps_threads_to_processes(antutu):
    trace, text = antutu
    printed = dict(re.findall(r"-(\d+)\s+\(\s*(\d+)\) \[", text))
    assert len(printed) > 100                  # 128 distinct threads print a TGID (counted with grep)
    wrong = [t for t, g in printed.items() if trace.process_of(int(t)) != int(g)]
    assert not wrong
    assert trace.process_of(25978) == 25830    # hand-read: `ANRDetector-25978 (25830)`, a thread of YY
    assert trace.metadata["cpus"] == "6"       # `#P:6` in the header


def test_antutu_timestamps_are_exact_integer_ns(antutu):
    trace, text = antutu
    # every event's time, read here as integer ns from the `secs.micros:` field (the text's first event is at
    # 69739.347047, its last at 69744.347233: SOURCES' "over 5.00 s")
    stamps = [int(s) * 10**9 + int(us) * 1000 for s, us in re.findall(r"\] \S+ +(\d+)\.(\d{6}): ", text)]
    assert (trace.start_ns, trace.end_ns) == (min(stamps), max(stamps)) == (69_739_347_047_000, 69_744_347_233_000)
    assert trace.start_ns % 1000 == 0 and trace.end_ns % 1000 == 0


def test_read_speed_is_recorded(antutu):
    trace, text = antutu
    # SOURCES: 17,248 events; the header says `entries-in-buffer/entries-written: 17248/17248`
    assert "entries-in-buffer/entries-written: 17248/17248" in text
    assert int(trace.metadata["ftrace_events"]) == 17248


# ---- PROCESS DUMP: lines without a TGID column get their process from systrace's `ps` listings ---------------
# Hand-made in the form catapult's android_process_data_agent writes (`PROCESS DUMP` then `ps -A -o USER,PID,PPID,
# VSIZE,RSS,WCHAN,ADDR=PC,S,NAME,COMM` and `ps -AT -o USER,PID,TID,CMD`, column titles as Perfetto's traceconv
# writes them), each in its own trace-data block beside an ftrace block whose lines have no TGID column. An app's
# main thread is named by the last 15 characters of its package (the kernel's comm).
_PS_DUMP = (
    "PROCESS DUMP\n"
    "USER           PID  PPID     VSZ    RSS WCHAN            PC S NAME                        COMM\n"
    "root             1     0 10943420  4360 do_epoll_wait      0 S init                        init\n"
    "root             2     0       0      0 kthreadd           0 S [kthreadd]                  [kthreadd]\n"
    "root           700     1 14859068 98320 do_sys_poll        0 S zygote64                    main\n"
    "u0_a88        4100   700 15210496 101232 do_epoll_wait     0 S com.example.feed            om.example.feed\n"
    "USER           PID   TID CMD\n"
    "root             1     1 init\n"
    "root           700   700 main\n"
    "u0_a88        4100  4100 om.example.feed\n"
    "u0_a88        4100  4115 RenderThread\n"
    "u0_a88        4100  4121 Jit thread pool\n")
_NO_TGID = (
    "# tracer: nop\n#\n# entries-in-buffer/entries-written: 5/5   #P:8\n#\n"
    "#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION\n#              | |       |   ||||       |         |\n"
    " om.example.feed-4100  [002] ...1   500.000100: tracing_mark_write: B|4100|Choreographer#doFrame\n"
    " Jit thread pool-4121  [003] d..2   500.002000: sched_switch: prev_comm=Jit thread pool prev_pid=4121 "
    "prev_prio=129 prev_state=S ==> next_comm=swapper/3 next_pid=0 next_prio=120\n"
    "    RenderThread-4115  [005] ...1   500.003300: tracing_mark_write: B|4100|DrawFrame\n"
    " om.example.feed-4100  [002] ...1   500.004100: tracing_mark_write: E|4100\n"
    "    RenderThread-4115  [005] ...1   500.009300: tracing_mark_write: E|4100\n")


def _html(*blocks: str) -> str:
    body = "".join(f'  <script class="trace-data" type="application/text">\n{b}  </script>\n' for b in blocks)
    return f"<!DOCTYPE html>\n<html>\n<body>\n{body}</body>\n</html>\n"


def test_lines_without_tgid_column_take_processes_from_the_process_dump():
    trace = _read(_html(_PS_DUMP, _NO_TGID, '{"traceEvents": []}\n'), "dump.html")
    assert trace.metadata["cpus"] == "8"
    assert trace.process_name(4100) == "com.example.feed"     # NAME, not the 15-character COMM
    assert trace.process_name(700) == "zygote64" and trace.processes[4100].ppid == 700
    assert trace.process_name(2) == "kthreadd"                # a kernel thread's brackets go
    assert trace.process_of(4100) == 4100
    assert trace.process_of(4115) == 4100                     # RenderThread, from the `ps -T` listing
    assert trace.threads[4121].name == "Jit thread pool"      # a CMD with spaces
    assert trace.process_of(4121) == 4100                     # its line says nothing of its process
    rows = trace.slices.sort("ts").select("ts", "dur", "tid", "name").rows()
    # by hand: doFrame 500.0001 -> 500.0041 s on 4100, DrawFrame 500.0033 -> 500.0093 s on 4115
    assert rows == [(500_000_100_000, 4_000_000, 4100, "Choreographer#doFrame"),
                    (500_003_300_000, 6_000_000, 4115, "DrawFrame")]
    assert trace.slices.filter(pl.col("tid") == 4115)["pid"].to_list() == [4100]
    bare = _read(_html(_NO_TGID), "bare.html")                # the same lines without the dump
    assert bare.process_of(4121) is None and bare.process_name(4100) != "com.example.feed"


# ---- compressed atrace (atrace -z) -------------------------------------------------------------------------
def test_compressed_atrace_inflates_byte_exactly_and_matches_the_text(corpus):
    compressed = corpus_file(corpus, COMPRESSED)
    decompressed = corpus_file(corpus, DECOMPRESSED)
    blob = compressed.read_bytes()
    assert blob.startswith(b"TRACE:\n")
    assert zlib.decompress(blob[len(b"TRACE:\n"):]) == decompressed.read_bytes()
    from_zlib, from_text = read_trace(compressed), read_trace(decompressed)
    text = raw_text(decompressed)
    assert count_begins(text, "Choreographer#doFrame") == 15
    assert count_begins(text, "DrawFrame") == 14
    for trace in (from_zlib, from_text):
        assert count_slices(trace, "Choreographer#doFrame") == 15
        assert count_slices(trace, "DrawFrame") == 14
        assert not trace.has_sched
    assert from_zlib.slices.equals(from_text.slices)
    assert from_zlib.counters.equals(from_text.counters)
    assert from_zlib.metadata["container"] == "atrace-zlib"


# ---- catapult's raw/stripped and TGID fixtures -------------------------------------------------------------
def _tables(trace) -> list[pl.DataFrame]:
    return [trace.slices, trace.thread_states, trace.counters, trace.binder, trace.block]


def test_raw_and_stripped_atrace_give_identical_tables(corpus):
    raw = read_trace(corpus_file(corpus, f"{TEST_DATA}/atrace_data_raw"))
    stripped = read_trace(corpus_file(corpus, f"{TEST_DATA}/atrace_data_stripped"))
    for a, b in zip(_tables(raw), _tables(stripped)):
        assert a.equals(b)
    assert raw.threads == stripped.threads
    text = raw_text(corpus_file(corpus, f"{TEST_DATA}/atrace_data_stripped"))
    assert raw.thread_states.filter(pl.col("state") == "Running").height == \
        len(re.findall(r" sched_switch: .* next_pid=[1-9]\d* ", text))


def test_missing_tgids_are_repaired_from_the_procfs_dump(corpus):
    missing = corpus_file(corpus, f"{TEST_DATA}/atrace_missing_tgids")
    fixed = corpus_file(corpus, f"{TEST_DATA}/atrace_fixed_tgids")
    procfs = corpus_file(corpus, f"{TEST_DATA}/atrace_procfs_dump")
    # independent route: the TGIDs the fixed file prints, and catapult's expected extraction
    printed = {int(t): int(g) for t, g in re.findall(r"-(\d+) \(\s*(\d+)\) \[", raw_text(fixed))}
    expected = {int(k): int(v) for k, v in ast.literal_eval(raw_text(corpus_file(
        corpus, f"{TEST_DATA}/atrace_extracted_tgids"))).items()}
    assert printed and all(expected.get(t, g) == g for t, g in printed.items())

    bare = read_trace(missing)
    assert all(bare.process_of(t) is None for t in printed if t in bare.threads and t != 0)
    repaired = read_systrace(missing.read_bytes() + b"\n" + procfs.read_bytes(), str(missing))
    from_fixed = read_trace(fixed)
    for tid, tgid in printed.items():
        assert repaired.process_of(tid) == tgid
        assert from_fixed.process_of(tid) == tgid
    for a, b in zip(_tables(repaired), _tables(bare)):
        assert a.equals(b)


# ---- legacy HTML forms -------------------------------------------------------------------------------------
def test_legacy_2017_linux_perf_data_block_io_without_sched(corpus):
    path = corpus_file(corpus, LEGACY_2017)
    trace, text = read_trace(path), raw_text(path)
    issues, completes = text.count(" block_rq_issue: "), text.count(" block_rq_complete: ")
    assert (issues, completes) == (980, 979)
    assert trace.block.height == issues
    assert completes - 2 <= trace.block.get_column("dur").is_not_null().sum() <= completes
    devs = {(int(a) << 20) | int(b) for a, b in re.findall(r" block_rq_issue: (\d+),(\d+) ", text)}
    assert devs == {(93 << 20) | 16, (93 << 20) | 32}          # SOURCES: block devices 93,16 and 93,32
    assert set(trace.block.get_column("dev").unique().to_list()) == devs
    data = trace.block.filter(pl.col("nr_sectors") > 0)
    assert data.get_column("bytes").min() > 0                   # old kernels print 0 bytes: taken from sectors
    flushes = trace.block.filter(pl.col("nr_sectors") == 0)
    assert flushes.height == text.count(" FWS 0 () 18446744073709551615 + 0 ") == 2
    assert flushes.get_column("sector").to_list() == [-1, -1]  # (u64)-1: no sector
    assert not trace.has_sched and trace.thread_states.height == 0
    assert count_slices(trace, "Choreographer#doFrame") == 0
    assert count_slices(trace, "handleMessageRefresh") == count_begins(text, "handleMessageRefresh") > 0
    assert trace.metadata["container"] == "html-legacy" and trace.metadata["tracer"] == "blk"
    assert trace.process_of(3714) == 3714                       # TGID column `( 3714)`


def test_2012_html_sched_and_old_print_lines(corpus):
    path = corpus_file(corpus, HTML_2012)
    trace, text = read_trace(path), raw_text(path)
    switches = text.count(" sched_switch: ")
    assert 10_500 < switches < 11_500
    assert trace.thread_states.filter(pl.col("state") == "Running").height == \
        len(re.findall(r" sched_switch: .* next_pid=[1-9]\d* ", text))
    traversals = count_begins(text, "performTraversals")
    assert traversals > 0 and count_slices(trace, "performTraversals") == traversals
    assert trace.start_ns > 10**12                              # the 0.0 clock-sync dummy line is not an event
    assert not trace.warnings or all("malformed" not in w.message for w in trace.warnings)


def test_2012_escaped_text_form(corpus):
    path = corpus_file(corpus, f"{SYSTRACE}/catapult_android_systrace_2012_sched.txt")
    trace, text = read_trace(path), raw_text(path)
    assert trace.metadata["container"] == "js-text"
    assert trace.thread_states.filter(pl.col("state") == "Running").height == \
        len(re.findall(r" sched_switch: .* next_pid=[1-9]\d* ", text))
    assert not [w for w in trace.warnings if w.line is not None]


# ---- line-format variants ----------------------------------------------------------------------------------
def _read(text: str, name: str = "mem.txt"):
    return read_systrace(text.encode(), name)


def test_task_names_with_spaces_and_dashes_split_on_the_last_dash():
    trace = _read(HEADER +
                  " Binder Thread #-3-1234  ( 1200) [001] d..2   100.000001: tracing_mark_write: B|1200|work\n"
                  " Binder Thread #-3-1234  ( 1200) [001] d..2   100.000501: tracing_mark_write: E|1200\n")
    assert trace.threads[1234].name == "Binder Thread #-3"
    assert trace.process_of(1234) == 1200
    row = trace.slices.row(0, named=True)
    assert (row["ts"], row["dur"], row["name"]) == (100_000_001_000, 500_000, "work")


def test_lines_without_flags_and_with_dashed_tgid_and_crlf():
    trace = _read((HEADER +
                   "  surfaceflinger-200   (-----) [000]  5.000000: sched_switch: prev_comm=surfaceflinger "
                   "prev_pid=200 prev_prio=120 prev_state=D|K ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
                   "          <idle>-0     [000]  5.000100: sched_wakeup: comm=surfaceflinger pid=200 prio=120 "
                   "success=1 target_cpu=000\n"
                   "     kworker/0:1-30    [000]  5.000050: sched_blocked_reason: pid=200 iowait=1 "
                   "caller=mmc_wait_for_req+0x98/0x120\n").replace("\n", "\r\n"))
    states = trace.thread_states.filter(pl.col("tid") == 200).sort("ts")
    assert states.get_column("state").to_list()[:2] == ["D|K", "R"]
    assert states.row(0, named=True)["blocked_function"] == "mmc_wait_for_req"
    assert states.row(0, named=True)["io_wait"] is True
    assert trace.process_of(200) is None


def test_timestamps_parse_as_strings_without_float_error():
    trace = _read(HEADER + "  a-1 [000] ...1 1229150.408341: tracing_mark_write: C|1|n|7\n")
    assert trace.counters.row(0, named=True)["ts"] == 1_229_150_408_341_000


def test_cpu_idle_binder_block_and_rename():
    trace = _read(HEADER +
                  " <idle>-0 [002] d..1 10.000000: cpu_idle: state=1 cpu_id=2\n"
                  " <idle>-0 [002] d..1 10.000100: cpu_idle: state=4294967295 cpu_id=2\n"
                  " app-10 [001] .... 10.000200: binder_transaction: transaction=7 dest_node=1 dest_proc=20 "
                  "dest_thread=0 reply=0 flags=0x10 code=0x4\n"
                  " srv-21 [002] .... 10.000300: binder_transaction_received: transaction=7\n"
                  " srv-21 [002] .... 10.000400: binder_transaction: transaction=8 dest_node=0 dest_proc=10 "
                  "dest_thread=10 reply=1 flags=0x0 code=0x0\n"
                  " app-10 [001] .... 10.000500: binder_transaction_received: transaction=8\n"
                  " app-10 [001] d..1 10.000600: block_rq_issue: 179,32 WS 4096 () 1000 + 8 [app]\n"
                  " <idle>-0 [000] ..s1 10.000900: block_rq_complete: 179,32 WS () 1000 + 8 [0]\n"
                  " app-10 [001] .... 10.001000: task_rename: pid=21 oldcomm=srv newcomm=binder:20_1 "
                  "oom_score_adj=0\n")
    idle = trace.counters.filter(pl.col("name") == "cpuidle").get_column("value").to_list()
    assert idle == [1.0, -1.0]
    tx = trace.binder.row(0, named=True)
    assert (tx["client_tid"], tx["server_tid"], tx["code"], tx["oneway"]) == (10, 21, 4, False)
    assert tx["reply_ts"] == 10_000_400_000
    blk = trace.block.row(0, named=True)
    assert (blk["dev"], blk["sector"], blk["bytes"], blk["dur"]) == ((179 << 20) | 32, 1000, 4096, 300_000)
    assert trace.threads[21].name == "binder:20_1"


def test_escaped_js_text_form_keeps_file_line_numbers():
    body = HEADER + "  a-1 [000] ...1 1.000000: tracing_mark_write: B|1|x\n  garbage line\n"
    escaped = "".join(line + "\\n\\\n" for line in body.rstrip("\n").split("\n"))
    trace = _read(escaped)
    assert count_slices(trace, "x") == 1
    assert [w.line for w in trace.warnings if w.line is not None] == [5]


def test_html_blocks_are_chosen_by_content_and_may_be_compressed():
    import base64
    ftrace = HEADER + "  a-5 (5) [000] ...1 2.000000: tracing_mark_write: B|5|y\n"
    dump = "PROCESS DUMP\nUSER PID TID CMD\nu0_a1 5 5 main\nu0_a1 5 6 worker\n"
    html = ('<html><body>\n<script class="trace-data" type="application/text">{"traceEvents": []}</script>\n'
            f'<script class="trace-data" type="application/text">\n'
            f'{base64.b64encode(zlib.compress(ftrace.encode())).decode()}</script>\n'
            f'<script class="trace-data" type="application/text">\n{dump}</script></body></html>')
    trace = _read(html)
    assert count_slices(trace, "y") == 1
    assert trace.process_of(6) == 5 and trace.threads[6].name == "worker"


def test_malformed_lines_are_warned_with_a_cap():
    lines = "".join(f"  a-1 [000] ...1 1.{i:06d}: sched_switch: nonsense {i}\n" for i in range(50))
    trace = _read(HEADER + "  a-1 [000] ...1 0.500000: tracing_mark_write: B|1|z\n" + lines)
    detailed = [w for w in trace.warnings if w.line is not None]
    assert 1 <= len(detailed) <= 5
    assert any("50 in all" in w.message for w in trace.warnings)


# ---- bad input ---------------------------------------------------------------------------------------------
def test_truncated_gzip_of_a_real_trace_reads_with_a_warning(corpus, tmp_path):
    whole = corpus_file(corpus, ANTUTU_2018).read_bytes()
    cut = tmp_path / "cut.html.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    trace = read_trace(cut)
    assert any("truncated" in w.message for w in trace.warnings)
    assert 0 < count_slices(trace, "Choreographer#doFrame") < 252


def test_truncated_zlib_atrace_reads_with_a_warning(corpus, tmp_path):
    blob = corpus_file(corpus, COMPRESSED).read_bytes()
    cut = tmp_path / "cut_atrace.txt"
    cut.write_bytes(blob[:4000])          # the zlib stream itself ends near byte 7,600
    trace = read_trace(cut)
    assert any("zlib" in w.message for w in trace.warnings)
    assert 0 < count_slices(trace, "Choreographer#doFrame") <= 15


def test_binary_junk_and_empty_text_raise_input_error(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(InputError):
        read_trace(junk)
    with pytest.raises(InputError):
        read_systrace(bytes(range(256)) * 64, "junk.bin")
    with pytest.raises(InputError):
        read_systrace(b"", "empty.txt")
    with pytest.raises(InputError) as err:
        read_systrace(HEADER.encode(), "header_only.txt")
    assert "only the ftrace header" in err.value.reason
    with pytest.raises(InputError):
        read_systrace(b"TRACE:\n\x78\x9c\x00\x01garbage", "bad_zlib.txt")


def test_crlf_html_capture_reads_like_the_original(corpus, tmp_path):
    """A capture that went through Windows (every LF now CRLF) keeps its slice names and line numbers."""
    src = corpus_file(corpus, ANTUTU_2018)
    text = gzip.decompress(src.read_bytes())
    crlf = tmp_path / "antutu_crlf.html"
    crlf.write_bytes(text.replace(b"\n", b"\r\n"))
    t = read_trace(crlf)
    names = t.slices["name"]
    assert int((names == "Choreographer#doFrame").sum()) == 252     # SOURCES: 252 doFrame
    assert not names.str.contains("\r").any()
