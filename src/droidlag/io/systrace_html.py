"""Unwrapping systrace containers into text sections: HTML `trace-data` blocks, the legacy `linuxPerfData` JS
string, the escaped JS-string text form, and `TRACE:` + zlib (atrace -z) — each section tagged with what it holds.

Sections are chosen by content, never by position: a systrace HTML report may carry a PROCESS DUMP (`ps` listing),
the ftrace text and a JSON metadata block in any order, and newer ones may compress a block (zlib, base64).
"""
from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from pathlib import Path

from droidlag.errors import ReadWarning
from droidlag.io.source import GZIP_MAGIC, decode_text, gunzip, inflate_zlib

FTRACE, PROCESS_DUMP, JSON_META, PROCFS = "ftrace", "process-dump", "json", "procfs"

_TRACE_DATA_TAG = re.compile(r"<script\b[^>]*\bclass\s*=\s*[\"']?trace-data[\"']?[^>]*>", re.IGNORECASE)
_LINUX_PERF_DATA = re.compile(r"linuxPerfData\s*=\s*\"")
_JS_ESCAPE = re.compile(r"\\(\n|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)", re.DOTALL)
_JS_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "\n": "", "\\": "\\", '"': '"', "'": "'", "/": "/", "0": "\0"}
_BASE64_HEAD = re.compile(r"[A-Za-z0-9+/=\r\n]{64}")
_PROCFS_LINE = re.compile(r"/?proc/\d+/task/\d+\s*$")
_ZLIB_HEADS = (b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda")


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
    marker = head.find(b"TRACE:")
    if marker >= 0 and _only_text_before(head[:marker]):
        return "atrace-zlib", _classify(_after_trace_marker(data[marker + 6:], path, warnings), None)
    text = decode_text(data, path, warnings)
    if "trace-data" in text and _TRACE_DATA_TAG.search(text):
        return "html", _html_blocks(text, path, warnings)
    m = _LINUX_PERF_DATA.search(text)
    if m:
        return "html-legacy", _linux_perf_data(text, m.end(), path, warnings)
    if _looks_js_escaped(text):
        return "js-text", _classify(unescape_js(text), 1)
    return "text", _classify(text, 1)


def _only_text_before(prefix: bytes) -> bool:
    """`adb shell atrace -z` may print `capturing trace... done` before the TRACE: marker; binary data may not."""
    return all(32 <= c < 127 or c in (9, 10, 13) for c in prefix)


def _after_trace_marker(rest: bytes, path: str | Path, warnings: list[ReadWarning]) -> str:
    """What follows `TRACE:`: a zlib stream (atrace -z) or plain text (atrace without -z)."""
    rest = rest.lstrip(b"\r\n")
    if rest[:2] in _ZLIB_HEADS:
        return inflate_salvaging(rest, path, warnings).decode("utf-8", "replace")
    return rest.decode("utf-8", "replace")


def inflate_salvaging(data: bytes, path: str | Path, warnings: list[ReadWarning]) -> bytes:
    """Inflate atrace's zlib stream. Old adb shells turned every LF into CRLF inside the binary stream; when the
    stream is corrupt as read, the CRLF-repaired one is tried. When both fail, the text that inflated before the
    damage is kept (fed in small pieces so the good prefix survives the error)."""
    first: list[ReadWarning] = []
    out = inflate_zlib(data, path, first)
    if not first:
        return out
    if b"\r\n" in data:
        second: list[ReadWarning] = []
        repaired = inflate_zlib(data.replace(b"\r\n", b"\n"), path, second)
        if not second:
            warnings.append(ReadWarning(str(path), "zlib stream had adb's LF->CRLF damage; repaired"))
            return repaired
    warnings.extend(first)
    return out


# ---- HTML ---------------------------------------------------------------------------------------------------
def _html_blocks(text: str, path: str | Path, warnings: list[ReadWarning]) -> list[Section]:
    sections: list[Section] = []
    pos = 0
    line = 1
    while True:
        m = _TRACE_DATA_TAG.search(text, pos)
        if m is None:
            break
        end = text.find("</script>", m.end())
        if end < 0:
            warnings.append(ReadWarning(str(path), "last trace-data block has no </script> (file cut short); "
                                        "read what was there", line=line + text.count("\n", pos, m.end())))
            end = len(text)
        line += text.count("\n", pos, m.end())
        sections.extend(_classify_block(text[m.end():end], line, path, warnings))
        line += text.count("\n", m.end(), end)
        pos = end
    return sections


def _classify_block(block: str, first_line: int, path: str | Path, warnings: list[ReadWarning]) -> list[Section]:
    """A trace-data block is plain text, or (newer systrace) base64 of zlib/gzip data."""
    s = block.strip()
    if s.startswith("TRACE:"):     # uncompressed atrace output pasted into the block
        return _classify(s[6:].lstrip("\r\n"), None)
    if _BASE64_HEAD.match(s) and " " not in s[:4096]:
        raw = _decode_base64(s)
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


def _classify(text: str, first_line: int | None) -> list[Section]:
    s = text.lstrip()
    if s.startswith("PROCESS DUMP") or (s.startswith("USER") and "PID" in s[:200]):
        return [Section(PROCESS_DUMP, text, first_line)]
    if s.startswith("{") or s.startswith("["):
        return [Section(JSON_META, text, first_line)]
    if _PROCFS_LINE.match(s[:200].split("\n", 1)[0]):
        return [Section(PROCFS, text, first_line)]
    return [Section(FTRACE, text, first_line)]


# ---- JavaScript strings ------------------------------------------------------------------------------------
def _linux_perf_data(text: str, start: int, path: str | Path, warnings: list[ReadWarning]) -> list[Section]:
    """The legacy `var linuxPerfData = "\\` ... `\\n";` report: the ftrace text is one JS string literal."""
    end = _closing_quote(text, start)
    if end < 0:
        warnings.append(ReadWarning(str(path), "linuxPerfData string is not closed (file cut short); read what "
                                    "was there"))
        end = len(text)
    first_line = text.count("\n", 0, start) + 1
    if text.startswith("\\\n", start):   # `= "\` + newline: the string's first line is the file's next one
        first_line += 1
    return _classify(unescape_js(text[start:end]), first_line)


def _closing_quote(text: str, start: int) -> int:
    """Index of the first unescaped `"` at or after start, or -1."""
    pos = start
    while True:
        q = text.find('"', pos)
        if q < 0:
            return -1
        backslashes = 0
        i = q - 1
        while i >= start and text[i] == "\\":
            backslashes += 1
            i -= 1
        if backslashes % 2 == 0:
            return q
        pos = q + 1


def _looks_js_escaped(text: str) -> bool:
    """The escaped text form: lines end with a literal `\\n\\` (a JS string with line continuations)."""
    for line in text[:8192].split("\n")[:20]:
        line = line.rstrip("\r")
        if line.strip():
            return line.endswith("\\n\\")
    return False


def unescape_js(s: str) -> str:
    """Undo JS string escaping. `\\n` + line continuation becomes one newline, so line numbers still match the
    file's lines."""
    s = s.replace("\r\n", "\n").replace("\\n\\\n", "\n")
    if s.endswith("\\"):        # a dangling line continuation at the very end
        s = s[:-1]
    if "\\" not in s:
        return s
    return _JS_ESCAPE.sub(_js_char, s)


def _js_char(m: re.Match) -> str:
    c = m.group(1)
    simple = _JS_SIMPLE.get(c)
    if simple is not None:
        return simple
    if c[0] in "ux" and len(c) > 1:
        return chr(int(c[1:], 16))
    return c
