"""Readers are chosen by content: every real corpus file is told apart, and prose about a format is not taken for it."""
from pathlib import Path

import pytest

from conftest import usable
from droidlag.io.detect import LOGCAT, sniff_bytes
from droidlag.io.inputs import discover, walk


def _usable_files(*folders: Path) -> list[Path]:
    """The files a folder walk finds (walk reads no content), less those from reserved sources: discover() sniffs
    each file it is given, and reserved files must not be read."""
    return [f for folder in folders for f in walk(folder) if usable(f)]


def test_every_corpus_trace_is_recognized_by_content(corpus: Path):
    files = _usable_files(corpus / "traces", corpus / "systrace")
    kinds = {i.path.relative_to(corpus).as_posix(): i.kind for i in discover(files)}
    assert sum(name.endswith((".pftrace", ".perfetto-trace")) for name in kinds) >= 2
    # catapult's expected-output dicts (atrace_extracted_*) and its procfs listing are not traces
    for name, kind in kinds.items():
        if name.endswith(".pftrace") or name.endswith(".perfetto-trace"):
            assert kind == "perfetto", name
        elif name.endswith((".html.gz", ".html")) or ("atrace" in name and "extracted" not in name and "procfs" not in name):
            assert kind == "systrace", name
    assert kinds["systrace/catapult_test_data/profile-chrome_systrace_perf_chrome_data"] == "chrome-json"


def test_documentation_files_are_not_taken_for_data(corpus: Path):
    # the documentation files a walk of the whole corpus keeps (those whose names is_doc_file does not know), sniffed
    found = [f for f in _usable_files(corpus) if f.suffix == ".md" or f.name.startswith("LICENSE")]
    docs = discover(found)
    assert docs, "corpus has its SOURCES.md files"
    assert all(i.kind is None and i.status == "skipped" for i in docs), [(i.path.name, i.kind) for i in docs if i.kind]


def test_dumps_gfxinfo_and_bugreport_are_recognized(corpus: Path):
    anr = {i.path.name: i.kind for i in discover(_usable_files(corpus / "anr")) if i.path.suffix == ".txt"}
    assert set(anr.values()) == {"anr"}, anr
    bugreports = discover(_usable_files(corpus / "bugreport"))
    assert {i.kind for i in bugreports if i.path.suffix in (".zip", ".txt")} == {"bugreport", "anr"}
    assert [i.kind for i in discover([corpus / "gfxinfo" / "sailfish_android10_dumpsys_gfxinfo.txt"])] == ["gfxinfo"]


@pytest.mark.parametrize("content", [b"", b"\x00\x01\x02" * 100, b"hello\nworld\n", b"\x1f\x8b\x08\x00garbage"])
def test_junk_is_skipped_with_a_reason(tmp_path: Path, content: bytes):
    f = tmp_path / "input.bin"
    f.write_bytes(content)
    [item] = discover([tmp_path])
    assert item.status == "skipped" and item.reason


# A few ftrace lines copied out of a trace (a question, a bug report) with no `# tracer:` header: hand-made here in
# the forms of a real capture (Android 12+ five-character flags, tab-indented, TGID column). The new-user trial of
# 2026-11-28 found such 4-line snippets refused as "not a format droidlag reads".
SNIPPET = (
    "          app-4321    ( 4321) [002] ..... 1000.000100: tracing_mark_write: B|4321|inflate\n"
    "\t  kworker-77    (   77) [002] d..2. 1000.000200: sched_switch: prev_comm=kworker prev_pid=77 prev_prio=120 "
    "prev_state=S ==> next_comm=app next_pid=4321 next_prio=110\n"
    "          app-4321    ( 4321) [002] ..... 1000.000900: tracing_mark_write: E|4321\n"
)


def test_a_short_headerless_ftrace_snippet_is_a_trace(tmp_path: Path):
    from droidlag.io import read_trace
    f = tmp_path / "snippet.txt"
    f.write_text(SNIPPET)
    [item] = discover([f])
    assert item.kind == "systrace"
    trace = read_trace(f)
    assert trace.slices["name"].to_list() == ["inflate"]
    assert trace.slices["dur"].to_list() == [800_000]   # 1000.000900 - 1000.000100 s


def test_prose_quoting_a_few_ftrace_lines_is_not_a_trace(tmp_path: Path):
    f = tmp_path / "question.md"
    f.write_text("Why does my app jank here? I see this in the trace:\n\n" + SNIPPET + "\nAny idea what inflate does?\n")
    [item] = discover([f])
    assert item.kind != "systrace"


def test_a_perfetto_head_is_conclusive_only_when_its_first_three_packets_lie_within_it():
    from droidlag.io.detect import looks_like_perfetto
    packet = b"\x0a\x03abc"                          # Trace.packet, 3 bytes long
    three = packet * 3
    assert looks_like_perfetto(three) and looks_like_perfetto(three, within=True)
    big = b"\x0a\x80\x40" + b"x" * 100               # a first packet of 8192 bytes, cut after 100
    assert looks_like_perfetto(big)                  # a head: not refused
    assert not looks_like_perfetto(big, within=True)  # but nothing decided within it
    assert not looks_like_perfetto(packet, within=True) and looks_like_perfetto(packet)


def test_a_perfetto_length_is_read_whole_not_cut_to_64_bits():
    """A 10-byte varint carries up to 70 bits: a length of 2^64 is far past any file, not 0 (which a 64-bit
    accumulator would make of it, taking three such records for a trace); a varint longer than 10 bytes, or cut off
    by the data's end, is no record."""
    from droidlag.io.detect import looks_like_perfetto
    huge = b"\x0a" + b"\x80" * 9 + b"\x02"           # 2 << 63
    assert not looks_like_perfetto(huge * 3) and not looks_like_perfetto(huge * 3, within=True)
    assert not looks_like_perfetto(b"\x0a" + b"\x80" * 10 + b"\x00")
    assert not looks_like_perfetto(b"\x0a\x80")
    assert looks_like_perfetto(bytearray(b"\x0a\x00" * 3)) and looks_like_perfetto(memoryview(b"\x0a\x00" * 3))
    one_mib_over = b"\x0a" + bytes([0x81, 0x80, 0x40])  # 2**20 + 1: within twice the data plus 1 MiB
    assert looks_like_perfetto(one_mib_over) and not looks_like_perfetto(b"\x0a" + bytes([0x80, 0x80, 0x80, 0x01]))


def test_read_trace_tells_a_plain_perfetto_file_while_decoding_it_and_checks_the_rest(tmp_path):
    """read_trace decodes a plain Perfetto file from the first bytes the decoder reads (no separate head read);
    anything else reaches the file checks and the other formats' sniffing, with nothing decoded on the way."""
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    from droidlag._native import PerfettoDecoder
    from droidlag.errors import InputError
    from droidlag.io import PERFETTO_HEAD, read_trace
    from droidlag.io.source import MAX_INPUT_BYTES
    t = pb.Trace()
    for pid, name in ((10, "a"), (20, "b"), (30, "c")):
        p = t.packet.add()
        p.timestamp = pid
        proc = p.process_tree.processes.add()
        proc.pid, proc.cmdline[:] = pid, [name]
    trace_file = tmp_path / "t.pftrace"
    trace_file.write_bytes(t.SerializeToString())
    d = PerfettoDecoder()
    assert d.feed_file_if_perfetto(str(trace_file), 1 << 17, PERFETTO_HEAD, MAX_INPUT_BYTES) == trace_file.stat().st_size
    assert {p.pid: p.name for p in read_trace(trace_file).processes.values()} == {10: "a", 20: "b", 30: "c"}
    # too large for the limit, a directory, text: not decoded here (None), and the checks name the problem
    assert d.feed_file_if_perfetto(str(trace_file), 1 << 17, PERFETTO_HEAD, 10) is None
    assert PerfettoDecoder().feed_file_if_perfetto(str(tmp_path), 1 << 17, PERFETTO_HEAD, MAX_INPUT_BYTES) is None
    text = tmp_path / "notes.txt"
    text.write_text("\n" * 3 + "not a trace\n")
    fresh = PerfettoDecoder()
    assert fresh.feed_file_if_perfetto(str(text), 1 << 17, PERFETTO_HEAD, MAX_INPUT_BYTES) is None
    assert fresh.finish()["packets"] == 0
    # text of newlines frames like three empty packets within the head: no packet decodes, so the file's own
    # checks speak (it is empty), as before the decoder told Perfetto files; a NUL in a path names no file
    for n in (36, 5000):
        (tmp_path / f"nl{n}.txt").write_bytes(b"\n" * n)
    for bad, why in ((tmp_path, "directory"), (tmp_path / "missing.pftrace", "no such file"),
                     (tmp_path / "nl36.txt", "empty"), (tmp_path / "nl5000.txt", "empty"),
                     (str(tmp_path / "a") + "\0b", "no such file")):
        try:
            read_trace(bad)
        except InputError as e:
            assert why in str(e)
        else:
            raise AssertionError(f"{bad} read")


def test_a_perfetto_trace_whose_first_packet_outgrows_the_small_head_is_still_read(tmp_path):
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    from droidlag.io import PERFETTO_HEAD, read_trace
    t = pb.Trace()
    first = t.packet.add()
    first.trusted_packet_sequence_id = 1
    first.system_info.utsname.release = "5.10." + "9" * (2 * PERFETTO_HEAD)   # a first packet past the small head
    for pid, name in ((10, "a"), (11, "b")):
        p = t.packet.add()
        p.process_tree.processes.add(pid=pid, ppid=1, cmdline=[name])
    path = tmp_path / "big-first.pftrace"
    path.write_bytes(t.SerializeToString())
    trace = read_trace(path)
    assert trace.format == "perfetto" and trace.process_name(10) == "a" and trace.process_name(11) == "b"


# gfxinfo pastes the new-user trial of 2026-11-28 (frames) found refused or misread; hand-made in their structure.
@pytest.mark.parametrize("text", [
    # a summary indented as a whole (a markdown code block in a blog): refused as "not a format droidlag reads"
    "$ adb shell dumpsys gfxinfo com.example.notes\n\n    Stats since: 9000000000ns\n    Total frames rendered: 50\n"
    "    Janky frames: 20 (40.00%)\n",
    # framestats between markers whose dashes a blog typeset as em dashes, with no summary
    "\u2014PROFILEDATA\u2014\nFlags,IntendedVsync,Vsync,OldestInputEvent,NewestInputEvent,HandleInputStart,"
    "AnimationStart,PerformTraversalsStart,DrawStart,SyncQueued,SyncStart,IssueDrawCommandsStart,SwapBuffers,"
    "FrameCompleted,\n0,1,1,2,0,3,4,5,6,7,8,9,10,11,\n\u2014PROFILEDATA\u2014\n",
    # the legacy per-frame table alone, tab-separated as Android prints it
    "\tDraw\tPrepare\tProcess\tExecute\n\t8.00\t0.50\t3.00\t1.00\n\t15.00\t1.00\t2.00\t1.50\n",
], ids=["indented-summary", "typeset-marker", "legacy-table"])
def test_gfxinfo_pastes_are_recognized(text: str):
    from droidlag.io.detect import sniff_bytes
    assert sniff_bytes(text.encode()) == "gfxinfo"


def test_prose_naming_the_legacy_columns_is_not_gfxinfo():
    from droidlag.io.detect import sniff_bytes
    prose = ("The profile bars are split into Draw Prepare Process Execute\nstages; see the docs for what each means.\n")
    assert sniff_bytes(prose.encode()) is None


# ART/Dalvik GC lines in every logcat prefix the GC reader knows are logs; prose naming a GC message is not.
_CC = ("Background concurrent copying GC freed 812669(25MB) AllocSpace objects, 52(1872KB) LOS objects, 47% free, "
       "26MB/50MB, paused 76us total 118.936ms")


def test_gc_lines_of_the_tag_format_are_a_logcat():
    assert sniff_bytes(("\n".join(f"I/a.termview: {_CC}" for _ in range(3)) + "\n").encode()) == LOGCAT


def test_a_gc_line_pasted_in_a_code_comment_is_a_logcat():
    text = "}\n// I/FirebaseAuth(16391): Creating user\n// I/ample.shopverse(16391): " + _CC + "\n"
    assert sniff_bytes(text.encode()) == LOGCAT


def test_epoch_uid_gc_lines_even_with_a_glued_word_are_a_logcat():
    line = "37238.786 10240  3426  3464 I 1.syncthingfor: " + _CC
    assert sniff_bytes((line + "\n").encode()) == LOGCAT
    assert sniff_bytes(("timestamp" + line + "\n").encode()) == LOGCAT


def test_dalvik_gc_lines_are_a_logcat():
    text = ("04-27 10:39:28.982   387   397 D dalvikvm: GC_EXPLICIT freed 89K, 17% free 15805K/19020K, paused "
            "2ms+5ms, total 63ms\n")
    assert sniff_bytes(text.encode()) == LOGCAT


def test_prose_naming_gc_messages_is_not_a_logcat():
    text = ("# GC notes\n\nART logs lines such as " + _CC + " when a collection is slow.\n"
            "Look for I/art: " + _CC + " in the log.\nDalvik said GC_FOR_ALLOC freed 5K, 3% free 18048K/18524K, "
            "paused 13ms, total 14ms back then.\n")
    assert sniff_bytes(text.encode()) is None
