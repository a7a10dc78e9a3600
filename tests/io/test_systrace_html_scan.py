"""The scan that finds a systrace report's blocks (systrace_html): markers searched a window at a time, `</script>`
and newlines found natively, block text decoded from a view of the buffer. Synthetic pages, so each expected place
and line is known by construction; the page is read whole (split_sections) and as streams cut in many ways, which
must all agree."""
from __future__ import annotations

import io

import pytest

from droidlag.io.systrace_html import (
    FTRACE,
    JSON_META,
    PROCESS_DUMP,
    SCAN_WINDOW,
    split_sections,
    stream_html_sections,
)

FTRACE_TEXT = ("# tracer: nop\n"
               "  <idle>-0     (-----) [000] d..2 100.000001: sched_switch: prev_comm=swapper prev_pid=0 "
               "prev_prio=120 prev_state=R ==> next_comm=a next_pid=5 next_prio=120\n"
               "       a-5     (    5) [000] ...1 100.000002: tracing_mark_write: B|5|x </scrip\n")
DUMP_TEXT = "USER PID PPID VSIZE RSS WCHAN PC S NAME\nroot 5 1 0 0 0 0 S a\n"


def page(filler: int, blocks: list[str], tag: str = '<script class="trace-data">', end: str = "</script>") -> bytes:
    """A page: `filler` bytes of lines before the blocks, then each block in its own script element."""
    head = b"<!DOCTYPE html>\n<html><head>\n"
    fill = b""
    while len(fill) < filler:
        fill += b"x" * 60 + b"\n"
    body = "".join(f"  {tag}\n{text}  {end}\n" for text in blocks)
    return head + fill[:filler] + body.encode() + b"</head></html>\n"


def block_lines(data: bytes, marker: bytes) -> list[int]:
    """The file line where each block's body starts: the line of each marker's `>` (counted on the raw bytes)."""
    lines, at = [], 0
    while (at := data.find(marker, at)) >= 0:
        gt = data.index(b">", at)
        lines.append(data.count(b"\n", 0, gt) + 1)
        at = gt
    return lines


def read_all_ways(data: bytes) -> list[tuple[str, list[tuple[str, str, int | None]], list[str]]]:
    """(container, [(kind, text, first line)], warnings) read whole and as streams in several piece sizes."""
    got = []
    for chunk in (None, 5, 4096, SCAN_WINDOW - 3, SCAN_WINDOW + 7):
        warnings: list = []
        if chunk is None:
            container, sections = split_sections(data, "page.html", warnings)
        else:
            found = stream_html_sections(io.BytesIO(data), "page.html", warnings, chunk=chunk)
            assert found is not None
            container, sections = found
        got.append((container, [(s.kind, s.text, s.first_line) for s in sections],
                    [f"{w.line}: {w.message}" for w in warnings]))
    return got


@pytest.mark.parametrize("shift", [-40, -17, -1, 0, 1, 600, 1100])
def test_a_tag_across_a_search_window_edge_is_found_every_way(shift):
    # the first tag starts `shift` bytes from the end of the first search window
    prefix = len(b"<!DOCTYPE html>\n<html><head>\n") + 2
    data = page(SCAN_WINDOW + shift - prefix, [DUMP_TEXT, FTRACE_TEXT, '{"traceEvents": []}\n'])
    assert data.find(b"<script") == SCAN_WINDOW + shift
    lines = block_lines(data, b'<script class="trace-data">')
    expected = ("html", [(PROCESS_DUMP, "\n" + DUMP_TEXT + "  ", lines[0]),
                         (FTRACE, "\n" + FTRACE_TEXT + "  ", lines[1]),
                         (JSON_META, '\n{"traceEvents": []}\n  ', lines[2])], [])
    for got in read_all_ways(data):
        assert got == expected


def test_a_legacy_string_past_the_first_window_and_its_end_in_any_case():
    js = FTRACE_TEXT.replace("\n", "\\n\\\n")
    data = page(3 * SCAN_WINDOW + 11, [f'var linuxPerfData = "\\\n{js}";'], tag="<script>", end="</SCRIPT \n >")
    # the string's first line is the one after `= "\`
    first = data[:data.index(b'= "\\')].count(b"\n") + 2
    for got in read_all_ways(data):
        assert got == ("html-legacy", [(FTRACE, FTRACE_TEXT, first)], [])


def test_a_legacy_string_before_a_tag_in_the_same_window_comes_first():
    js = FTRACE_TEXT.replace("\n", "\\n\\\n")
    data = page(100, [f'var linuxPerfData = "{js}";'], tag="<script>") + \
        page(0, [DUMP_TEXT])[len(b"<!DOCTYPE html>\n<html><head>\n"):]
    kinds = {tuple(s[0] for s in got[1]) for got in read_all_ways(data)}
    containers = {got[0] for got in read_all_ways(data)}
    assert kinds == {(FTRACE, PROCESS_DUMP)} and containers == {"html"}


def test_bad_utf8_in_a_later_block_is_warned_on_its_file_line():
    text = FTRACE_TEXT.replace("tracing_mark_write: B|5|x", "tracing_mark_write: B|5|@BAD@")
    data = page(5000, [DUMP_TEXT, text]).replace(b"@BAD@", b"\xff")
    bad_line = data[:data.index(b"\xff")].count(b"\n") + 1
    for container, sections, warnings in read_all_ways(data):
        assert container == "html" and "\ufffd" in sections[1][1]
        assert len(warnings) == 1 and warnings[0].startswith(f"{bad_line}: invalid UTF-8")


def test_a_block_without_its_end_is_kept_and_warned_about():
    data = page(SCAN_WINDOW, [FTRACE_TEXT]).replace(b"  </script>\n</head></html>\n", b"")
    first = block_lines(data, b'<script class="trace-data">')[0]
    for container, sections, warnings in read_all_ways(data):
        assert container == "html" and sections == [(FTRACE, "\n" + FTRACE_TEXT, first)]
        assert warnings == [f"{first}: last trace block has no </script> (file cut short); read what was there"]


def test_a_marker_cut_by_the_window_end_is_not_passed_over_for_a_later_one():
    # a tag starting in the overlap past the first window, too long to end inside it, whose attributes hold a
    # legacy marker that does fit: the tag comes first (it starts first), found whole by the next window
    tag = "<script x='linuxPerfData = \"' " + " " * 480 + 'class="trace-data">'
    prefix = len(b"<!DOCTYPE html>\n<html><head>\n") + 2
    start = SCAN_WINDOW + 1200 - 300
    data = page(start - prefix, [FTRACE_TEXT], tag=tag)
    assert data.find(b"<script") == start
    for container, sections, warnings in read_all_ways(data):
        assert container == "html" and [s[0] for s in sections] == [FTRACE] and warnings == []


def test_a_legacy_string_with_crlf_or_bad_utf8_reads_as_the_clean_one():
    """The string is unescaped from the raw bytes only when decoding would change nothing; CRLF line ends and an
    undecodable byte go through decoding first, to the same text (and a warning on the bad byte's file line)."""
    js = FTRACE_TEXT.replace("\n", "\\n\\\n")
    clean = page(300, [f'var linuxPerfData = "\\\n{js}";'], tag="<script>")
    first = clean[:clean.index(b'= "\\')].count(b"\n") + 2
    expected = ("html-legacy", [(FTRACE, FTRACE_TEXT, first)], [])
    assert read_all_ways(clean)[0] == expected
    for got in read_all_ways(clean.replace(b"\n", b"\r\n")):
        assert got == expected
    bad = clean.replace(b"B|5|x", b"B|5|\xff")
    bad_line = bad[:bad.index(b"\xff")].count(b"\n") + 1
    for container, sections, warnings in read_all_ways(bad):
        assert container == "html-legacy" and sections == [(FTRACE, FTRACE_TEXT.replace("B|5|x", "B|5|\ufffd"), first)]
        assert len(warnings) == 1 and warnings[0].startswith(f"{bad_line}: invalid UTF-8")
