"""Reader for Android systrace/atrace captures: plain ftrace text, `atrace -z` (`TRACE:` + zlib), systrace HTML
reports (new `trace-data` blocks and the legacy `linuxPerfData` string) and the escaped JS-string text form.

The container is undone in systrace_html.py, the ftrace lines are decoded in ftrace_text.py; this module reads the
process dumps and metadata around them and turns the whole into a Trace.
"""
from __future__ import annotations

import json
import re

from droidlag._native import process_dump, text_holds
from droidlag.errors import InputError
from droidlag.io.ftrace_text import FtraceTextParser
from droidlag.io.systrace_html import (
    FTRACE,
    JSON_META,
    PROCESS_DUMP,
    PROCFS,
    Section,
    read_html_sections,
    split_sections,
)
from droidlag.models.trace import Trace
from droidlag.models.trace_builder import TraceBuilder

_ENTRIES_RE = re.compile(r"entries-in-buffer/entries-written:\s*(\d+)/(\d+)\s+#P:(\d+)")
_TRACER_RE = re.compile(r"#\s*tracer:\s*(\S+)")
MAX_IGNORED_EVENT_NAMES = 20
_DUMP_THREAD = 0     # process_dump's row kinds: 0 a `ps -T` thread row, 1 a `ps` process row


def read_systrace(data: bytes, path: str) -> Trace:
    """Read a systrace/atrace capture (bytes already gunzipped) into a Trace; time in integer ns on the trace clock.

    Warnings on the trace say what was skipped or repaired (truncated compressed data, malformed lines, lost
    events). Raises InputError when the file holds no ftrace event at all."""
    builder = TraceBuilder("systrace", path)
    container, sections = split_sections(data, path, builder.warnings)
    return _build(builder, container, sections, path)


def read_systrace_html_file(path: str) -> Trace | None:
    """Read a saved systrace HTML report (gzip or not) as a stream, keeping only its trace blocks in memory; None
    when the file holds no trace-data block and no linuxPerfData string."""
    builder = TraceBuilder("systrace", path)
    found = read_html_sections(path, builder.warnings)
    if found is None:
        return None
    return _build(builder, found[0], found[1], path)


def _build(builder: TraceBuilder, container: str, sections: list[Section], path: str) -> Trace:
    builder.metadata["container"] = container
    ftrace = [s for s in sections if s.kind == FTRACE]
    if not ftrace:
        kinds = ", ".join(sorted({s.kind for s in sections})) or "nothing"
        raise InputError(path, f"no ftrace/atrace text in this file (found {kinds}); a Chrome JSON trace or a "
                         "process listing alone is not an Android systrace")
    parser = FtraceTextParser(builder, skip_wakeup=any(text_holds(s.text, " sched_waking: ") for s in ftrace))
    for section in sections:
        if section.kind == PROCESS_DUMP:
            read_process_dump(section.text, builder, parser)
        elif section.kind == PROCFS:
            parser.parse(section.text, section.first_line)
        elif section.kind == JSON_META:
            _read_json_metadata(section, builder)
    for section in ftrace:
        _read_header(section.text, builder)
        parser.parse(section.text, section.first_line)
    parser.finish()
    if parser.events == 0:
        raise InputError(path, _no_events_reason(builder), line=parser.first_bad_line)
    if parser.unhandled:
        top = sorted(parser.unhandled.items(), key=lambda kv: -kv[1])[:MAX_IGNORED_EVENT_NAMES]
        builder.metadata["ftrace_ignored_events"] = json.dumps(dict(top))
    builder.metadata["ftrace_events"] = str(parser.events)
    return builder.build()


def _no_events_reason(builder: TraceBuilder) -> str:
    reason = "no ftrace events in this file"
    if "tracer" in builder.metadata:
        reason += "; only the ftrace header is there"
    damage = [w.message for w in builder.warnings if "zlib" in w.message or "gzip" in w.message
              or "decompressed before the damage" in w.message]
    if damage:
        reason += f" (compressed data damaged: {'; '.join(damage)})"
    return reason


def _read_header(text: str, builder: TraceBuilder) -> None:
    """`# tracer: nop` and `# entries-in-buffer/entries-written: N/M   #P:8` from the ftrace header."""
    head = text[:4096]
    m = _TRACER_RE.search(head)
    if m:
        builder.metadata["tracer"] = m.group(1)
    m = _ENTRIES_RE.search(head)
    if m:
        builder.metadata["ftrace_entries_in_buffer"] = m.group(1)
        builder.metadata["ftrace_entries_written"] = m.group(2)
        builder.metadata["cpus"] = m.group(3)


def read_process_dump(text: str, builder: TraceBuilder, parser: FtraceTextParser) -> None:
    """systrace's PROCESS DUMP: a `ps` listing (USER PID PPID ... S NAME [COMM]) gives process names and parents;
    a `ps -T` listing (USER PID TID CMD) maps threads to processes. Each listing starts with its header line. The
    rows are split natively (`droidlag._native.process_dump`: a dump lists every thread of the device)."""
    run: list[tuple[int, int, str | None]] = []     # consecutive thread rows, declared in bulk
    tgids: list[tuple[int, int]] = []
    for kind, pid, second, name in process_dump(text):
        if kind == _DUMP_THREAD:
            run.append((second, pid, name))
            tgids.append((second, pid))
            continue
        if run:
            builder.threads_many(run)
            run = []
        builder.process(pid, name, ppid=second)
        builder.thread(pid, pid)        # the process's main thread
        tgids.append((pid, pid))
    if run:
        builder.threads_many(run)
    parser.set_tgids(tgids)


def _read_json_metadata(section: Section, builder: TraceBuilder) -> None:
    """systrace.py's JSON block: the command line (categories) and the clock domain."""
    try:
        doc = json.loads(section.text)
    except ValueError:
        builder.warn("JSON metadata block is not valid JSON; ignored", line=section.first_line)
        return
    if not isinstance(doc, dict):
        return
    for ev in doc.get("traceEvents") or []:
        if isinstance(ev, dict) and ev.get("name") == "process_argv":
            argv = (ev.get("args") or {}).get("argv")
            if isinstance(argv, list):
                builder.metadata["systrace_argv"] = " ".join(str(a) for a in argv)
    meta = doc.get("metadata")
    if isinstance(meta, dict):
        for key, value in meta.items():
            if isinstance(value, (str, int, float)):
                builder.metadata[f"systrace_{key}"] = str(value)
