"""Readers, one module per real format. `read_trace` picks the trace reader by content."""
from __future__ import annotations

from pathlib import Path

from droidlag.errors import InputError, ReadWarning
from droidlag.io.detect import PERFETTO, SYSTRACE, load, sniff_bytes
from droidlag.io.source import GZIP_MAGIC, gunzip_head, gunzip_stream, read_head
from droidlag.models.trace import Trace

PERFETTO_HEAD = 4096    # bytes read first: enough for a Perfetto trace's first three packets


def read_trace(path: str | Path) -> Trace:
    """Read a Perfetto (protobuf, optionally gzip'd) or systrace/atrace (text, HTML, compressed) trace.

    Returns the Trace with `warnings` for what was skipped; raises InputError for input it cannot use. A Perfetto
    file, plain or gzipped, is streamed from disk in chunks (memory holds the tables, not the file nor its
    expansion)."""
    # a plain Perfetto trace is told from its first records, nearly always within a few kB, by the decoder as it
    # starts on them (gzip and zip open with other bytes than a packet's): the head read to tell the other formats
    # (256 kB), with its checks of the file, only when they do not settle it
    from droidlag.io.perfetto import read_perfetto_file_if_plain
    plain = read_perfetto_file_if_plain(path, PERFETTO_HEAD)
    if plain is not None:
        return plain
    head = read_head(path)
    if head[:2] != GZIP_MAGIC and sniff_bytes(head) == PERFETTO:
        from droidlag.io.perfetto import read_perfetto_file
        return read_perfetto_file(path)
    if head[:2] == GZIP_MAGIC and sniff_bytes(gunzip_head(head, path)) == PERFETTO:
        from droidlag.io.perfetto import read_perfetto_chunks
        warnings: list[ReadWarning] = []
        trace = read_perfetto_chunks(gunzip_stream(path, warnings), str(path))
        trace.warnings[:0] = warnings
        return trace
    from droidlag.io.systrace_html import looks_like_html
    if looks_like_html(gunzip_head(head, path) if head[:2] == GZIP_MAGIC else head):
        # a saved systrace report: streamed, so megabytes of viewer script around the blocks are never held
        from droidlag.io.systrace import read_systrace_html_file
        streamed = read_systrace_html_file(str(path))
        if streamed is not None:
            return streamed
    kind, data, warnings = load(path)
    if kind == PERFETTO:
        from droidlag.io.perfetto import read_perfetto
        trace = read_perfetto(data, str(path))
    elif kind == SYSTRACE:
        from droidlag.io.systrace import read_systrace
        trace = read_systrace(data, str(path))
    else:
        raise InputError(path, f"holds {kind} data, not a trace")
    trace.warnings[:0] = warnings
    return trace


__all__ = ["read_trace", "load", "sniff_bytes", "InputError"]
