"""Defects the new-user trial on public systrace/atrace captures found (2026-11-28), on hand-made inputs:

- `adb shell atrace -z > f` writes atrace's status line (`capturing trace... done`, and through an adb shell that
  merges stderr, its `error ...` lines) before `TRACE:` and the zlib stream; such files were refused as "not a format
  droidlag reads" (detection took `TRACE:` only at the file's start). adb's LF -> CRLF (and, on Windows, CR CR LF)
  damage inside the stream is undone.
- A header-less ftrace text with a few lines that are not events (a kernel print whose text runs over several lines)
  was refused without saying why; it is read when it opens with an event line and event lines are most of its lines,
  the others skipped with a warning naming their line; a text still refused says why, naming the line.
- The kernel's placeholder `<pid>` is not a thread's name (native parser; here in the trace-data HTML form the trial
  saw, TGID `(-----)`).

Expected values are worked out by hand from the lines below."""
from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from droidlag.errors import InputError
from droidlag.io import read_trace, sniff_bytes
from droidlag.io.inputs import discover
from droidlag.io.systrace import read_systrace

HEADER = ("# tracer: nop\n"
          "#\n"
          "# entries-in-buffer/entries-written: 4/4   #P:4\n"
          "#\n"
          "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
          "#              | |        |      |   ||||       |         |\n")
EVENTS = ("  com.example.app-4321  ( 4321) [001] ...1   200.000100: tracing_mark_write: B|4321|Choreographer#doFrame\n"
          "     RenderThread-4340  ( 4321) [002] ...1   200.003000: tracing_mark_write: B|4321|DrawFrame\n"
          "  com.example.app-4321  ( 4321) [001] ...1   200.004100: tracing_mark_write: E|4321\n"
          "     RenderThread-4340  ( 4321) [002] ...1   200.009000: tracing_mark_write: E|4321\n")
# by hand: doFrame 200.000100 -> 200.004100 s on 4321, DrawFrame 200.003000 -> 200.009000 s on 4340
EXPECTED = [(200_000_100_000, 4_000_000, 4321, "Choreographer#doFrame"),
            (200_003_000_000, 6_000_000, 4340, "DrawFrame")]
STATUS = b"capturing trace... done\n"


def _filler(n: int) -> str:
    """Counter lines with varied values, so that the zlib stream is long enough to hold LF bytes adb can mangle."""
    return "".join(f"  com.example.app-4321  ( 4321) [001] ...1   199.{k:06d}: tracing_mark_write: "
                   f"C|4321|level|{(k * 7919) % 100003}\n" for k in range(1, n + 1))


def _slices(trace) -> list[tuple[int, int, int, str]]:
    return trace.slices.sort("ts").select("ts", "dur", "tid", "name").rows()


def _ctrace(text: str, preamble: bytes = STATUS) -> bytes:
    return preamble + b"TRACE:\n" + zlib.compress(text.encode(), 6)


# ---- defect 1: atrace -z with atrace's status lines before TRACE: -------------------------------------------------
def test_atrace_z_after_its_status_line_is_read(tmp_path: Path):
    f = tmp_path / "capture.ctrace"
    f.write_bytes(_ctrace(HEADER + EVENTS))
    assert sniff_bytes(f.read_bytes()) == "systrace"
    [item] = discover([f])
    assert item.kind == "systrace"
    trace = read_trace(f)
    assert _slices(trace) == EXPECTED
    assert trace.metadata["container"] == "atrace-zlib"
    assert trace.warnings == []


def test_atrace_error_lines_merged_before_the_marker_are_a_preamble_too():
    preamble = (b"error opening /sys/kernel/debug/tracing/options/print-tgid: No such file or directory (2)\n"
                b"capturing trace... done\n")
    data = _ctrace(HEADER + EVENTS, preamble)
    assert sniff_bytes(data) == "systrace"
    assert _slices(read_systrace(data, "merged.ctrace")) == EXPECTED


@pytest.mark.parametrize(("newline", "what"), [(b"\r\n", "LF->CRLF"), (b"\r\r\n", "LF->CR CR LF")])
def test_adb_line_end_damage_through_the_whole_capture_is_repaired(tmp_path: Path, newline: bytes, what: str):
    """Old adb turned every LF of the output into CRLF (adb on Windows into CR CR LF), inside the zlib stream too."""
    clean = _ctrace(HEADER + _filler(400) + EVENTS)
    assert clean.count(b"\n") > 3     # LFs inside the stream, not only the two text lines
    f = tmp_path / "mangled.ctrace"
    f.write_bytes(clean.replace(b"\n", newline))
    assert sniff_bytes(f.read_bytes()) == "systrace"
    trace = read_trace(f)
    assert _slices(trace) == EXPECTED
    assert len(trace.counters) == 400
    assert [w.message for w in trace.warnings] == [f"zlib stream had adb's {what} damage; repaired"]


def test_uncompressed_atrace_after_the_status_line_warns_on_file_lines():
    """`adb shell atrace > f` (no -z): the text after TRACE: keeps its file lines (the marker's two lines before it)."""
    bad = "this line is not an event\n"
    data = STATUS + b"TRACE:\n" + (HEADER + EVENTS[:200] + bad + EVENTS[200:]).encode()
    # line 1 status, 2 TRACE:, 3-8 header, 9-10 the first two events, 11 the bad line
    assert EVENTS[:200].count("\n") == 2 and EVENTS[200:].startswith("  com.example.app-4321")
    trace = read_systrace(data, "plain.txt")
    assert _slices(trace) == EXPECTED
    assert [(w.line, "not an ftrace event" in w.message) for w in trace.warnings] == [(11, True)]


def test_the_marker_rule_is_bounded_and_anchored():
    from droidlag.io.systrace_html import atrace_marker
    z = zlib.compress((HEADER + EVENTS).encode())
    assert atrace_marker(STATUS + b"TRACE:\n" + z) == len(STATUS)
    assert atrace_marker(b"\xef\xbb\xbfTRACE:\r\n" + z) == 3                     # a BOM, CRLF after the marker
    assert atrace_marker(b"capturing trace... done TRACE:\n" + z) == 24          # on the status line
    assert atrace_marker(b"TRACE:" + z) == 0                                    # the stream straight after it
    assert atrace_marker(b"status\n" * 16 + b"TRACE:\n" + z) == 7 * 16          # 16 lines before it: a preamble
    assert atrace_marker(b"status\n" * 17 + b"TRACE:\n" + z) is None            # 17: a document, not a capture
    assert atrace_marker(b"x" * 2049 + b"\nTRACE:\n" + z) is None               # past 2 KiB
    assert atrace_marker(b"see the TRACE: line below\n" + z) is None             # not followed by the line's end
    assert atrace_marker(b"B|1|TRACE:\n") is None                              # inside a word
    assert atrace_marker(b"\x01\x02\nTRACE:\n" + z) is None                     # binary before it
    assert sniff_bytes(b"status\n" * 17 + b"TRACE:\n" + z) is None


def test_trace_after_other_words_on_its_line_is_not_the_marker():
    """`STACK TRACE:` heads the main thread's stack in ANR pastes and crash logs: only atrace's status text may come
    before the marker on its line (a review's reproducer: both files were taken for systraces, then refused)."""
    from droidlag.io.systrace_html import atrace_marker
    anr = (b"ANR in com.example.notes (com.example.notes/.MainActivity)\nReason: Input dispatching timed out\n"
           b"MAIN THREAD STACK TRACE:\n\"main\" prio=5 tid=1 Blocked\n"
           b"  | group=\"main\" sCount=1 dsCount=0 flags=1 obj=0x71d9a000 self=0x7a1c010800\n"
           b"  at com.example.notes.NoteList.load(NoteList.java:88)\n"
           b"  - waiting to lock <0x0a1b2c3d> (a java.lang.Object) held by thread 12\n")
    log = b"".join(b"03-04 10:15:30.123  4321  4321 E CrashReporter: " + m + b"\n"
                   for m in (b"Uncaught exception in main thread", b"STACK TRACE:", b"java.lang.IllegalStateException",
                             b"\tat com.example.notes.NoteList.load(NoteList.java:88)", b"end", b"end"))
    assert atrace_marker(anr) is None and atrace_marker(log) is None
    assert sniff_bytes(anr) == "anr" and sniff_bytes(log) == "logcat"
    assert atrace_marker(b"  capturing trace... done TRACE:\n") == 26            # the status text itself may


def test_a_slice_named_like_the_marker_does_not_cut_a_text_trace():
    """A text trace is read whole: `TRACE:` inside an event (a slice name) is not atrace's marker (the reader took the
    text after the first `TRACE:` in its first 4 KiB for the capture)."""
    events = EVENTS.replace("B|4321|DrawFrame", "B|4321|TRACE:")
    trace = read_systrace((HEADER + events).encode(), "named.txt")
    assert _slices(trace) == [EXPECTED[0], (200_003_000_000, 6_000_000, 4340, "TRACE:")]
    assert trace.metadata["container"] == "text"


# ---- defect 2: header-less text with a few lines that are not events ----------------------------------------------
# A kernel print whose text runs over three lines (the last two are not events), then a slice: 3 event lines of 5.
MULTILINE_PRINT = (
    "           <...>-1200  ( 1200) [000] ....   300.000100: print: tracing_mark_write: sensor hub: irq=41 ts=7\n"
    "status = 0x0, pending = 2\n"
    "flags = 0x10\n"
    "     surfaceflinger-610   (  610) [003] ....   300.000200: tracing_mark_write: B|610|onMessageRefresh\n"
    "     surfaceflinger-610   (  610) [003] ....   300.002700: tracing_mark_write: E|610\n")


def test_headerless_text_with_continuation_lines_is_read_and_the_lines_warned(tmp_path: Path):
    f = tmp_path / "print.systrace"
    f.write_text(MULTILINE_PRINT)
    [item] = discover([f])
    assert item.kind == "systrace"
    trace = read_trace(f)
    # by hand: 300.000200 -> 300.002700 s on 610
    assert _slices(trace) == [(300_000_200_000, 2_500_000, 610, "onMessageRefresh")]
    skipped = [(w.line, w.message) for w in trace.warnings if "line skipped" in w.message]
    assert [line for line, _ in skipped] == [2, 3]
    assert "status = 0x0, pending = 2" in skipped[0][1] and "flags = 0x10" in skipped[1][1]


def test_headerless_text_that_is_mostly_other_lines_is_refused_naming_the_line(tmp_path: Path):
    lines = MULTILINE_PRINT.splitlines(keepends=True)
    text = lines[0] + "irq = 41\nmore = 1\n" + "".join(lines[1:4])    # 2 event lines of 6
    f = tmp_path / "mostly_text.txt"
    f.write_text(text)
    with pytest.raises(InputError) as err:
        read_trace(f)
    assert err.value.line == 2
    assert "2 of its 6 non-blank lines look like ftrace events" in err.value.reason
    assert "line 2 is not an event: 'irq = 41'" in err.value.reason
    assert "# tracer: nop" in err.value.reason                        # and how to read it anyway
    [item] = discover([f])
    assert item.status == "skipped" and "line 2 is not an event" in (item.reason or "")
    # the same with the header the reason suggests: read, the 4 other lines skipped with a warning each
    trace = read_systrace(("# tracer: nop\n" + text).encode(), "with_header.txt")
    assert len([w for w in trace.warnings if "line skipped" in w.message]) == 4


def test_prose_quoting_ftrace_lines_is_refused_saying_it_does_not_open_with_one(tmp_path: Path):
    f = tmp_path / "question.md"
    f.write_text("My app janks, the trace says:\n\n" + EVENTS[:200] + "\nWhy?\n")
    assert sniff_bytes(f.read_bytes()) is None
    with pytest.raises(InputError) as err:
        read_trace(f)
    assert err.value.line == 1
    assert err.value.reason.startswith("not a format droidlag reads: 2 of its 4 non-blank lines look like ftrace "
                                       "events, but it does not open with one (line 1 is not an event: 'My app "
                                       "janks, the trace says:')")


def test_one_event_line_alone_is_not_a_trace(tmp_path: Path):
    f = tmp_path / "one.txt"
    f.write_text(EVENTS.splitlines()[0] + "\n")
    with pytest.raises(InputError, match="1 of its 1 non-blank lines look like ftrace events, but that is only 1 "
                                         "event") as err:
        read_trace(f)
    assert err.value.line is None


def test_text_with_no_ftrace_line_keeps_the_plain_refusal(tmp_path: Path):
    f = tmp_path / "notes.txt"
    f.write_text("just notes [1] and [2]\n")
    [item] = discover([f])
    assert item.reason == "not a format droidlag reads"


# ---- defect 3: the kernel's `<pid>` placeholder in a trace-data HTML block (TGID unknown: `(-----)`) -----------------
def test_placeholder_pid_in_a_trace_data_block_gives_way_to_the_sched_comm():
    block = (HEADER
             + "          <7952>-7952  (-----) [000] ...1   538.064761: tracing_mark_write: B|7952|dump\n"
             "          <7952>-7952  (-----) [000] d..3   538.064918: sched_switch: prev_comm=atrace prev_pid=7952 "
             "prev_prio=120 prev_state=R ==> next_comm=kworker/u16:11 next_pid=682 next_prio=120\n"
             "  kworker/u16:11-682   (  682) [000] d..3   538.064928: sched_switch: prev_comm=kworker/u16:11 prev_pid=682 "
             "prev_prio=120 prev_state=S ==> next_comm=atrace next_pid=7952 next_prio=120\n")
    html = f'<!DOCTYPE html>\n<html>\n<body>\n<script class="trace-data" type="application/text">\n{block}</script>\n'
    trace = read_systrace(html.encode(), "sf.html")
    assert trace.threads[7952].name == "atrace"
    assert trace.threads[682].name == "kworker/u16:11"
