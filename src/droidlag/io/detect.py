"""Choose a reader by content, never by file name."""
from __future__ import annotations

from pathlib import Path

from droidlag.errors import InputError, ReadWarning
from droidlag.io.source import GZIP_MAGIC, gunzip, read_bytes

PERFETTO = "perfetto"
SYSTRACE = "systrace"
ZIP = "zip"
ANR = "anr"
GFXINFO = "gfxinfo"
CHROME_JSON = "chrome-json"


def _varint(buf: bytes, pos: int) -> tuple[int, int] | None:
    result = shift = 0
    while pos < len(buf) and shift < 64:
        b = buf[pos]
        result |= (b & 0x7F) << shift
        pos += 1
        if not b & 0x80:
            return result, pos
        shift += 7
    return None


def looks_like_perfetto(data: bytes) -> bool:
    """A Perfetto trace is a sequence of `Trace.packet` (field 1, length-delimited) records: check the first ones."""
    pos = 0
    for _ in range(3):
        if pos >= len(data):
            return pos > 0
        if data[pos] != 0x0A:
            return False
        v = _varint(data, pos + 1)
        if v is None:
            return False
        length, pos = v
        if length > len(data) * 2 + (1 << 20):
            return False
        pos += length
    return True


def sniff_bytes(data: bytes) -> str | None:
    """The kind of content: one of the constants above, or None for no format droidlag reads."""
    if data[:4] == b"PK\x03\x04":
        return ZIP
    if looks_like_perfetto(data):
        return PERFETTO
    head = data[:65536]
    if b"\x00" in head[:4096] and not head.lstrip().startswith(b"TRACE:"):
        return None
    text = head.decode("utf-8", "replace")
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith("TRACE:") or stripped.startswith("# tracer:"):
        return SYSTRACE
    low = text.lower()
    if "linuxperfdata" in low or 'class="trace-data"' in low or "<html" in low or "<!doctype html" in low:
        return SYSTRACE
    if stripped.startswith("{") and '"traceevents"' in low:
        return CHROME_JSON
    if ("tracing_mark_write" in text or "sched_switch:" in text) and ": " in text:
        return SYSTRACE
    if "----- pid " in text or "\"main\" prio=" in text or "DALVIK THREADS" in text or "\"main\" " in text:
        return ANR
    if "Graphics info for pid" in text or "---PROFILEDATA---" in text or "Applications Graphics Acceleration" in text:
        return GFXINFO
    return None


def load(path: str | Path) -> tuple[str, bytes, list[ReadWarning]]:
    """Read a file, undo gzip, and name its kind. InputError for files no reader can use."""
    data = read_bytes(path)
    warnings: list[ReadWarning] = []
    if data[:2] == GZIP_MAGIC:
        data = gunzip(data, path, warnings)
        if not data.strip():
            raise InputError(path, "gzip file holds no data")
    kind = sniff_bytes(data)
    if kind is None:
        raise InputError(path, "not a format droidlag reads (expected a Perfetto trace, systrace/atrace, "
                         "thread dump, gfxinfo or bugreport)")
    return kind, data, warnings
