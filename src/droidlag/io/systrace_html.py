"""Unwrapping systrace containers into text sections: HTML `trace-data` blocks, the legacy `linuxPerfData` JS
string, the escaped JS-string text form, and `TRACE:` + zlib (atrace -z) — each section tagged with what it holds.

Sections are chosen by content, never by position: a systrace HTML report may carry a PROCESS DUMP (`ps` listing),
the ftrace text and a JSON metadata block in any order, and newer ones may compress a block (zlib, base64).
A saved report puts megabytes of viewer script before its blocks, so HTML is scanned as a stream: only the
blocks' text is kept, wherever in the file they are.
"""
from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from droidlag._native import count_newlines, find_script_end, js_string, js_string_utf8, text_holds
from droidlag._native import unescape_js as _native_unescape_js
from droidlag.errors import ReadWarning
from droidlag.io.source import GZIP_MAGIC, decode_text, gunzip, inflate_zlib, inflate_zlib_trial

FTRACE, PROCESS_DUMP, JSON_META, PROCFS = "ftrace", "process-dump", "json", "procfs"

_LINUX_PERF_DATA = re.compile(r"linuxPerfData\s*=\s*\"")
_BASE64_HEAD = re.compile(r"[A-Za-z0-9+/=\r\n]{64}")
_PROCFS_LINE = re.compile(r"/?proc/\d+/task/\d+\s*$")
_ZLIB_HEADS = (b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda")
# The same markers as bytes, for scanning a stream; each bounded so a hostile line cannot make them backtrack.
_TAG_B = re.compile(rb"<script\b[^>]{0,512}?\bclass\s{0,8}=\s{0,8}[\"']?trace-data[\"']?[^>]{0,512}>", re.IGNORECASE)
_LEGACY_B = re.compile(rb"linuxPerfData\s{0,8}=\s{0,8}\"")
_LEGACY_MAX = 40           # bytes a _LEGACY_B match can span at most
_MARK_KEEP = 1200          # bytes kept between chunks so a marker split across two chunks is still found (the
                           # longest _TAG_B match is 1066 bytes)
SCAN_CHUNK = 1 << 20
SCAN_WINDOW = 1 << 16      # bytes searched for markers at a time (see _next_marker)


class Readable(Protocol):
    """What the HTML scan reads from: a binary stream's read(n)."""

    def read(self, n: int, /) -> bytes: ...


@dataclass(frozen=True)
class Section:
    """A piece of text from the file: `kind` (FTRACE, PROCESS_DUMP, JSON_META, PROCFS), and the file line of its
    first line (None when the text came out of compressed data, so file lines do not apply)."""

    kind: str
    text: str
    first_line: int | None


def split_sections(data: bytes, path: str | Path, warnings: list[ReadWarning]) -> tuple[str, list[Section]]:
    """The container kind ("atrace-zlib", "html", "html-legacy", "js-text", "text") and all sections of a
    systrace/atrace file (already gunzipped); problems are appended to `warnings`."""
    head = data[:4096]
    marker = atrace_marker(head)
    if marker is not None:
        return "atrace-zlib", _after_trace_marker(data, marker + len(_MARKER), path, warnings)
    if looks_like_html(head) or b"trace-data" in head:
        found = _html_sections(iter((data,)), path, warnings)    # in memory already: the whole as one chunk
        if found is not None:
            return found
    text = decode_text(data, path, warnings)
    # (the regex only where the literal is: its search of a large text cost more than decoding it)
    m = _LINUX_PERF_DATA.search(text) if text_holds(text, "linuxPerfData") else None
    if m:
        return "html-legacy", _linux_perf_data(text, m.end(), path, warnings)
    if _looks_js_escaped(text):
        return "js-text", _classify(unescape_js(text), 1)
    return "text", _classify(text, 1)


# What may come before atrace's `TRACE:` line: its status text (`capturing trace... done`, which it prints even with
# -z) and, through an adb shell that merges stderr into stdout, a few of its `error ...` lines. Bounded: a long text
# before the marker is a document that mentions it, not a capture.
PREAMBLE_MAX_BYTES = 2048
PREAMBLE_MAX_LINES = 16
_MARKER = b"TRACE:"
_STATUS = b"capturing trace"     # atrace's status line (stderr), the only text allowed before the marker on its line
_BOM = b"\xef\xbb\xbf"


def atrace_marker(head: bytes) -> int | None:
    """Where atrace's `TRACE:` marker starts in the first bytes of a file, or None when there is no marker there.

    The marker is `TRACE:` at the start of a line (or after atrace's own status text on its line: `capturing
    trace... done TRACE:`, never after other words: `STACK TRACE:`), followed by the line's end (LF,
    as adb mangled it CR LF or CR CR LF) or straight by a zlib header; what comes before it is a short preamble of
    printable text (at most PREAMBLE_MAX_LINES lines, PREAMBLE_MAX_BYTES bytes; a UTF-8 BOM allowed), as systrace's
    atrace agent and Perfetto's trace processor find it (each looks for `TRACE:` after such status text). The one
    rule of detection (`detect.sniff_bytes`) and of this reader (`split_sections`)."""
    marker = head.find(_MARKER, 0, PREAMBLE_MAX_BYTES + len(_BOM) + len(_MARKER))
    if marker < 0:
        return None
    before = head[:marker]
    if before.startswith(_BOM):
        before = before[len(_BOM):]
    if before and before[-1] not in b" \t\r\n":          # inside a word: `B|1|TRACE:` names a slice
        return None
    line_start = before.rfind(b"\n") + 1
    if before[line_start:].strip() and not before[line_start:].lstrip().startswith(_STATUS):
        return None      # after other words on its line (`MAIN THREAD STACK TRACE:` in an ANR paste, a log line)
    if len(before) > PREAMBLE_MAX_BYTES or before.count(b"\n") > PREAMBLE_MAX_LINES or not _only_text_before(before):
        return None
    after = head[marker + len(_MARKER):marker + len(_MARKER) + 8].lstrip(b" \t\r")
    if after and after[:1] != b"\n" and after[:2] not in _ZLIB_HEADS:
        return None
    return marker


def _only_text_before(prefix: bytes) -> bool:
    """`adb shell atrace -z` prints `capturing trace... done` before the TRACE: marker; binary data may not come there."""
    return all(32 <= c < 127 or c in (9, 10, 13) for c in prefix)


def _after_trace_marker(data: bytes, start: int, path: str | Path, warnings: list[ReadWarning]) -> list[Section]:
    """The sections of what follows `TRACE:` (data[start:]): a zlib stream (atrace -z; no file lines in it), or plain
    text (atrace without -z), decoded as any text is (decode_text) with its file lines."""
    n = len(data)
    k = start
    while k < n and data[k] in b" \t\r\n":
        k += 1
    if data[k:k + 2] in _ZLIB_HEADS:
        return _classify(inflate_salvaging(data[k:], path, warnings).decode("utf-8", "replace"), None)
    body = start                              # the text starts on the line after the marker's
    while body < n and data[body] in b" \t\r":
        body += 1
    if data[body:body + 1] == b"\n":
        body += 1
    first_line = data.count(b"\n", 0, body) + 1
    mark = len(warnings)
    with memoryview(data) as view:
        text = decode_text(view[body:], path, warnings)
    warnings[mark:] = [replace(w, line=w.line + first_line - 1) if w.line is not None else w
                       for w in warnings[mark:]]
    return _classify(text, first_line)


def inflate_salvaging(data: bytes, path: str | Path, warnings: list[ReadWarning]) -> bytes:
    """Inflate atrace's zlib stream. Old adb shells turned every LF into CRLF inside the binary stream (adb on
    Windows into CR CR LF, as systrace's atrace agent undid it); when the stream is corrupt as read, the repaired one is
    tried (CR CR LF first: the CRLF repair would leave its extra CR). When both fail, the text that inflated before the
    damage is kept (fed in small pieces so the good prefix survives the error). The stream as read and the repaired
    one are first tried without that replay, which runs only when its text is the one kept."""
    out, first, damaged = inflate_zlib_trial(data, path)
    if not first:
        return out
    for mangled, what in ((b"\r\r\n", "LF->CR CR LF"), (b"\r\n", "LF->CRLF")):
        if mangled in data:
            repaired, second, _ = inflate_zlib_trial(data.replace(mangled, b"\n"), path)
            if not second:
                warnings.append(ReadWarning(str(path), f"zlib stream had adb's {what} damage; repaired"))
                return repaired
    if damaged:
        return inflate_zlib(data, path, warnings)
    warnings.extend(first)
    return out


# ---- HTML ---------------------------------------------------------------------------------------------------
def looks_like_html(head: bytes) -> bool:
    """The file opens like markup (a saved web page), so its trace blocks may lie anywhere after the head."""
    s = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:512].lower()
    return s.startswith((b"<!doctype html", b"<html", b"<head", b"<meta", b"<script", b"<!--", b"<?xml"))


def _next_marker(buf: bytes | bytearray, pos: int = 0) -> tuple[str, re.Match[bytes]] | None:
    """The first trace-data tag or linuxPerfData string in buf at or after pos. Searched a window of SCAN_WINDOW
    bytes at a time, so that the search of one kind stops at the other's first marker (a tag search over the whole of
    a legacy report was its largest fixed cost); within a window the legacy marker is looked for only before the
    first tag. Each window reaches _MARK_KEEP bytes into the next, longer than any marker: a marker that starts in a
    window is found there whole."""
    n = len(buf)
    while True:
        stop = min(n, pos + SCAN_WINDOW)
        end = min(n, stop + _MARK_KEEP)
        tag = _TAG_B.search(buf, pos, end)
        legacy = _LEGACY_B.search(buf, pos, tag.start() + _LEGACY_MAX if tag is not None else end)
        hit = None
        if legacy is not None and (tag is None or legacy.start() < tag.start()):
            hit = "html-legacy", legacy
        elif tag is not None:
            hit = "html", tag
        if hit is not None and (hit[1].start() < stop or end == n):
            return hit
        if end == n:
            return None
        pos = stop


def _shifted(buf: bytes | bytearray, start: int, more: bytes) -> bytes | bytearray:
    """buf[start:] + more, growable: the chunk itself when nothing is kept (an in-memory file is never copied)."""
    if start >= len(buf):
        return more
    if isinstance(buf, bytes):
        buf = bytearray(memoryview(buf)[start:])
    else:
        del buf[:start]
    buf += more
    return buf


def _block_sections(kind: str, buf: bytes | bytearray, start: int, end: int, first_line: int, path: str | Path,
                    warnings: list[ReadWarning]) -> list[Section]:
    """The sections of the block buf[start:end]: a trace-data block's text (decode_text, its warnings on file
    lines), or the legacy linuxPerfData string's. The string is unescaped from the bytes themselves when they are
    valid UTF-8 without CR or NUL, which decoding would leave as they are (no text of the whole block made first)."""
    with memoryview(buf) as view:
        fast = js_string_utf8(view[start:end]) if kind == "html-legacy" else None
        if fast is not None:
            body, closed, continued = fast
            return _legacy_sections(body, closed, first_line + continued, path, warnings)
        n = len(warnings)
        text = decode_text(view[start:end], path, warnings)
    warnings[n:] = [replace(w, line=w.line + first_line - 1) if w.line is not None else w for w in warnings[n:]]
    if kind == "html":
        return _classify_block(text, first_line, path, warnings)
    return _linux_perf_data(text, 0, path, warnings, first_line)


def _script_bodies(chunks: Iterator[bytes], path: str | Path, warnings: list[ReadWarning]
                   ) -> Iterator[tuple[str, list[Section]]]:
    """(marker kind, sections) for every trace-data block and legacy `linuxPerfData` string in the chunks, a block
    not closed by `</script>` (the file cut short) warned about.
    Memory holds one chunk plus the block being read, never the viewer script around the blocks. Lines are counted
    only up to where a later block starts (natively: a block is megabytes long)."""
    buf: bytes | bytearray = b""
    pos = 0                                  # where the marker search goes on
    counted, line = 0, 1                     # line: the file line of buf[counted]
    ended = False                            # no chunk after buf
    while True:
        hit = _next_marker(buf, pos)
        # a marker in the last _MARK_KEEP bytes may be the tail of one that starts earlier and is cut by the
        # chunk's end: read on first
        if not ended and (hit is None or hit[1].start() >= len(buf) - _MARK_KEEP):
            more = next(chunks, None)
            if more is not None:
                keep = max(pos, len(buf) - _MARK_KEEP)
                line += count_newlines(buf, counted, keep)
                buf, pos, counted = _shifted(buf, keep, more), 0, 0
                continue
            ended = True
        if hit is None:
            return
        kind, m = hit
        body = m.end()
        line += count_newlines(buf, counted, body)
        counted = searched = body
        while (end := find_script_end(buf, max(body, searched - 16))) is None:
            more = None if ended else next(chunks, None)
            if more is None:
                warnings.append(ReadWarning(str(path), "last trace block has no </script> (file cut short); read "
                                            "what was there", line=line))
                yield kind, _block_sections(kind, buf, body, len(buf), line, path, warnings)
                return
            searched = len(buf) - body
            buf, body, counted = _shifted(buf, body, more), 0, 0
        yield kind, _block_sections(kind, buf, body, end[0], line, path, warnings)
        pos = end[1]


def _read_chunks(stream: Readable, chunk: int) -> Iterator[bytes]:
    while more := stream.read(chunk):
        yield more


def stream_html_sections(stream: Readable, path: str | Path, warnings: list[ReadWarning],
                         chunk: int = SCAN_CHUNK) -> tuple[str, list[Section]] | None:
    """The container kind and sections of an HTML systrace report read from a stream, or None when the stream
    holds no trace-data block and no linuxPerfData string."""
    return _html_sections(_read_chunks(stream, chunk), path, warnings)


def _html_sections(chunks: Iterator[bytes], path: str | Path, warnings: list[ReadWarning]
                   ) -> tuple[str, list[Section]] | None:
    sections: list[Section] = []
    kinds: set[str] = set()
    for kind, found in _script_bodies(chunks, path, warnings):
        kinds.add(kind)
        sections.extend(found)
    if not kinds:
        return None
    return ("html" if "html" in kinds else "html-legacy"), sections


def stream_has_trace_blocks(stream: Readable, chunk: int = SCAN_CHUNK) -> bool:
    """Whether a stream holds a trace-data block or a linuxPerfData string anywhere (bounded memory)."""
    tail = b""
    while True:
        more = stream.read(chunk)
        if not more:
            return False
        window = tail + more
        if _next_marker(window) is not None:
            return True
        tail = window[-_MARK_KEEP:]


def _classify_block(block: str, first_line: int, path: str | Path, warnings: list[ReadWarning]) -> list[Section]:
    """A trace-data block is plain text, or (newer systrace) base64 of zlib/gzip data."""
    head = _head(block)
    if head.startswith("TRACE:"):     # uncompressed atrace output pasted into the block
        return _classify(block.strip()[6:].lstrip("\r\n"), None)
    if _BASE64_HEAD.match(head) and " " not in head[:4096]:
        raw = _decode_base64(block)
        if raw is not None:
            if raw[:2] == GZIP_MAGIC:
                return _classify(gunzip(raw, path, warnings).decode("utf-8", "replace"), None)
            if raw[:2] in _ZLIB_HEADS:
                return _classify(inflate_salvaging(raw, path, warnings).decode("utf-8", "replace"), None)
    return _classify(block, first_line)


def _decode_base64(s: str) -> bytes | None:
    try:
        return base64.b64decode("".join(s.split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def _head(text: str, size: int = 8192) -> str:
    """The start of text after leading whitespace, at most `size` characters (no copy of a whole block)."""
    head = text[:size].lstrip()
    return head if head or len(text) <= size else text.lstrip()[:size]


def _classify(text: str, first_line: int | None) -> list[Section]:
    s = _head(text)
    if s.startswith("PROCESS DUMP") or (s.startswith("USER") and "PID" in s[:200]):
        return [Section(PROCESS_DUMP, text, first_line)]
    if s.startswith("{") or s.startswith("["):
        return [Section(JSON_META, text, first_line)]
    if _PROCFS_LINE.match(s[:200].split("\n", 1)[0]):
        return [Section(PROCFS, text, first_line)]
    return [Section(FTRACE, text, first_line)]


# ---- JavaScript strings ------------------------------------------------------------------------------------
def _linux_perf_data(text: str, start: int, path: str | Path, warnings: list[ReadWarning],
                     first_line: int | None = None) -> list[Section]:
    """The legacy `var linuxPerfData = "\\` ... `\\n";` report: the ftrace text is one JS string literal, from
    `start` to its first unescaped `"` (found and unescaped natively in one pass: `js_string`)."""
    body, closed = js_string(text if start == 0 else text[start:])
    if first_line is None:
        first_line = text.count("\n", 0, start) + 1
    return _legacy_sections(body, closed, first_line + text.startswith("\\\n", start), path, warnings)


def _legacy_sections(body: str, closed: bool, first_line: int, path: str | Path,
                     warnings: list[ReadWarning]) -> list[Section]:
    """The sections of an unescaped linuxPerfData string whose text starts on file line first_line (after `= "\\`
    + newline, the line after the marker's)."""
    if not closed:
        warnings.append(ReadWarning(str(path), "linuxPerfData string is not closed (file cut short); read what "
                                    "was there"))
    return _classify(body, first_line)


def _looks_js_escaped(text: str) -> bool:
    """The escaped text form: lines end with a literal `\\n\\` (a JS string with line continuations)."""
    for line in text[:8192].split("\n")[:20]:
        line = line.rstrip("\r")
        if line.strip():
            return line.endswith("\\n\\")
    return False


def unescape_js(s: str) -> str:
    """Undo JS string escaping (natively, one pass: the legacy report's whole ftrace text is one string).
    `\\n` + line continuation becomes one newline, so line numbers still match the file's lines."""
    return _native_unescape_js(s)


# ---- files -------------------------------------------------------------------------------------------------
class _CappedStream:
    """A read-only view of a (possibly gzip) stream that refuses to expand past `limit` bytes (bombs) and turns
    a truncated or corrupt gzip stream into end-of-data plus a warning."""

    def __init__(self, raw: Readable, path: str | Path, warnings: list[ReadWarning], limit: int):
        self.raw, self.path, self.warnings, self.limit, self.total = raw, path, warnings, limit, 0

    def read(self, n: int) -> bytes:
        import zlib

        from droidlag.errors import InputError
        try:
            out = self.raw.read(n)
        except (EOFError, OSError, zlib.error) as e:
            self.warnings.append(ReadWarning(str(self.path), f"gzip stream truncated or corrupt ({e}) after "
                                             f"{self.total} bytes; read what was there"))
            return b""
        self.total += len(out)
        if self.total > self.limit:
            raise InputError(self.path, f"data expands past {self.limit} bytes; refused (possible gzip bomb)")
        return out


def open_decompressed(path: str | Path, warnings: list[ReadWarning]) -> AbstractContextManager[_CappedStream]:
    """A context-managed binary stream of the file's content, gunzipped on the fly when it is gzip."""
    import contextlib
    import gzip

    from droidlag.io.source import MAX_DECOMPRESSED_BYTES

    @contextlib.contextmanager
    def _open() -> Iterator[_CappedStream]:
        with open(path, "rb") as fh:
            if fh.read(2) == GZIP_MAGIC:
                fh.seek(0)
                with gzip.GzipFile(fileobj=fh) as gz:
                    yield _CappedStream(gz, path, warnings, MAX_DECOMPRESSED_BYTES)
            else:
                fh.seek(0)
                yield _CappedStream(fh, path, warnings, 1 << 62)
    return _open()


def file_has_trace_blocks(path: str | Path) -> bool:
    """Whether a file (gzip or not) that opens like HTML holds a systrace block anywhere, read as a stream."""
    with open_decompressed(path, []) as stream:
        return stream_has_trace_blocks(stream)


def read_html_sections(path: str | Path, warnings: list[ReadWarning]) -> tuple[str, list[Section]] | None:
    """The sections of a (possibly gzip) HTML systrace report, read once as a stream; None when it has none."""
    with open_decompressed(path, warnings) as stream:
        return stream_html_sections(stream, path, warnings)
