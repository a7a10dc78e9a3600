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

from conftest import corpus_file
from droidlag.errors import InputError
from droidlag.io import read_trace
from droidlag.io.systrace import read_systrace

TRACES = "traces"
SYSTRACE = "systrace"
TEST_DATA = "systrace/catapult_test_data"
LIST_JANK = f"{TRACES}/systrace_meizu_flyme_2019_list_jank.dataonly.html.gz"
XIAOMI = f"{TRACES}/systrace_xiaomi_miui_2021_launcher.dataonly.html.gz"
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
    return files


@pytest.mark.slow
def test_every_corpus_systrace_file_reads_or_fails_cleanly(corpus):
    files = _corpus_trace_files(corpus)
    assert len(files) >= 15
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


# ---- Meizu list jank: the full kernel picture --------------------------------------------------------------
@pytest.fixture(scope="module")
def list_jank(corpus):
    path = corpus_file(corpus, LIST_JANK)
    return read_trace(path), raw_text(path)


def test_list_jank_has_exactly_247_do_frame_slices(list_jank):
    trace, text = list_jank
    assert count_begins(text, "Choreographer#doFrame") == 247
    assert count_slices(trace, "Choreographer#doFrame") == 247


def test_list_jank_has_sched_waking_and_blocked_reasons(list_jank):
    trace, text = list_jank
    assert trace.has_sched and trace.has_waking and trace.has_blocked_reason
    states = trace.thread_states
    running = states.filter(pl.col("state") == "Running").height
    switches_to_task = len(re.findall(r" sched_switch: .* next_pid=[1-9]\d* ", text))
    assert running == switches_to_task
    assert text.count(" sched_blocked_reason: ") == 3642
    blocked = states.filter(pl.col("blocked_function").is_not_null())
    assert blocked.height > 0
    assert not blocked.get_column("blocked_function").str.contains(r"\+0x").any()   # offsets stripped
    assert states.filter(pl.col("waker_tid").is_not_null()).height > 0


def test_list_jank_cpu_frequency_binder_and_block(list_jank):
    trace, text = list_jank
    freq = trace.counters.filter(pl.col("name") == "cpufreq")
    assert freq.height == text.count(" cpu_frequency: ") == 748
    assert set(freq.get_column("cpu").unique().to_list()) == set(range(8))
    binder = trace.binder
    replies = text.count(" binder_transaction: ") - len(re.findall(r" binder_transaction: .* reply=0 ", text))
    assert binder.height + replies == text.count(" binder_transaction: ") == 1636
    assert binder.get_column("reply_ts").is_not_null().sum() > 0
    assert binder.get_column("dur").is_not_null().sum() > 0
    assert trace.block.height == text.count(" block_rq_issue: ") == 41
    assert trace.block.get_column("dur").is_not_null().sum() > 0
    assert trace.block.get_column("dev").unique().to_list() == [(8 << 20) | 0]


def test_list_jank_names_processes_from_the_process_dump(list_jank):
    trace, _ = list_jank
    assert trace.metadata["cpus"] == "8"
    assert trace.process_name(24874) == "sample.tencent.matrix"
    assert trace.process_of(24874) == 24874
    assert trace.process_of(24905) == 24874          # matrix_time_upd, from the `ps -T` listing


def test_list_jank_timestamps_are_exact_integer_ns(list_jank):
    trace, text = list_jank
    first = re.search(r"\] \S+ (\d+)\.(\d{6}): ", text)
    assert trace.start_ns <= int(first.group(1)) * 10**9 + int(first.group(2)) * 1000
    assert trace.start_ns % 1000 == 0 and trace.end_ns % 1000 == 0
    assert 4.2e9 < trace.duration_ns < 4.3e9


def test_read_speed_is_recorded(list_jank):
    trace, _ = list_jank
    assert int(trace.metadata["ftrace_events"]) == 280526


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


# ---- Xiaomi: TGID column -----------------------------------------------------------------------------------
def test_xiaomi_tgid_column_maps_threads_to_processes(corpus):
    path = corpus_file(corpus, XIAOMI)
    trace, text = read_trace(path), raw_text(path)
    printed = dict(re.findall(r"-(\d+)\s+\(\s*(\d+)\) \[", text))
    assert len(printed) > 100
    wrong = [t for t, g in printed.items() if trace.process_of(int(t)) != int(g)]
    assert not wrong
    assert trace.process_of(1769) == 990
    assert count_slices(trace, "Choreographer#doFrame") == count_begins(text, "Choreographer#doFrame") == 890
    assert text.count(" sched_waking: ") == 0 and trace.has_waking   # woken via sched_wakeup only


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
    whole = corpus_file(corpus, LIST_JANK).read_bytes()
    cut = tmp_path / "cut.html.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    trace = read_trace(cut)
    assert any("truncated" in w.message for w in trace.warnings)
    assert 0 < count_slices(trace, "Choreographer#doFrame") < 247


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
    src = corpus_file(corpus, "traces/systrace_meizu_flyme_2019_list_jank.dataonly.html.gz")
    text = gzip.decompress(src.read_bytes())
    crlf = tmp_path / "list_jank_crlf.html"
    crlf.write_bytes(text.replace(b"\n", b"\r\n"))
    t = read_trace(crlf)
    names = t.slices["name"]
    assert int((names == "Choreographer#doFrame").sum()) == 247
    assert not names.str.contains("\r").any()
