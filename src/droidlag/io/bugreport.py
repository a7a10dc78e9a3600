"""Bugreport archives (zip) and texts: entries are read in memory after checks (no absolute or `..` paths, no links,
per-entry and total size caps, a compression-ratio bomb check), and the dump sections (`VM TRACES JUST NOW`,
`VM TRACES AT LAST ANR`, `BLOCKED PROCESS WAIT-CHANNELS`, binder state) go to the thread-dump reader."""
from __future__ import annotations

import contextlib
import zipfile
from collections.abc import Iterable
from pathlib import Path

from droidlag.errors import InputError, ReadWarning
from droidlag.io.anr import _SECTION, finish_units, parse_binder_state, parse_dump, parse_process_wchan
from droidlag.io.archive import EntryStream, open_zip, safe_infos
from droidlag.io.source import text_chunks
from droidlag.models.dumps import BinderTransaction, DumpUnit


def _wanted(info: zipfile.ZipInfo) -> bool:
    """Entries that can hold thread dumps: the bugreport text, traces files and /data/anr files."""
    low = info.filename.lower()
    base = low.rsplit("/", 1)[-1]
    return (base.startswith("bugreport") and base.endswith(".txt")) or "anr/" in low or base.startswith("traces") \
        or base.startswith("anr_")


def read_bugreport_zip(path: str | Path, data: bytes | None = None) -> list[DumpUnit]:
    """The dump units of a bugreport zip. Unsafe entries are refused with a warning naming them; an archive whose
    entries expand past the total cap, or with no readable text entry, is an InputError. Entries are streamed:
    inflated, decoded and parsed a few MiB at a time, the sections that hold no dump data dropped as they pass."""
    from droidlag.io.source import read_bytes

    source = str(path)
    if data is None:
        data = read_bytes(path)
    warnings: list[ReadWarning] = []
    zf = open_zip(path, data)
    stream = EntryStream(path, zf, warnings)
    units: list[DumpUnit] = []
    found = False
    for info in safe_infos(path, zf, warnings, _wanted):
        name = f"{source}!{info.filename}"
        ws: list[ReadWarning] = []
        with contextlib.closing(stream.blocks(info)) as blocks:
            got = read_dump_stream(text_chunks(blocks, name, ws), name)
        if stream.failed and not stream.got:   # nothing could be read from it (the warning says why)
            continue
        found = True
        got[0].warnings[:0] = ws
        units.extend(u for u in got if u.processes or u.wait_channels)
    if not found:
        refused = [w.message for w in warnings if "refused" in w.message]
        if refused:
            raise InputError(path, "; ".join(refused[:3]))
        raise InputError(path, "zip holds no bugreport text, traces or /data/anr entries")
    if not units:
        units = [DumpUnit(source=source)]
    units[0].warnings[:0] = warnings
    return units


# A dump section is handed to the dump parser in pieces of about this much text, cut where a process begins.
_PIECE_CHARS = 8 << 20
_LOOSE_MARKS = ("----- pid ", '"main"', "Waiting Channels")


class _Section:
    """One `------ TITLE ------` section (or the text before the first): dump sections are parsed piece by piece
    into one unit as their lines come; wait-channel and binder sections are kept (they are small); the rest is
    dropped as it passes."""

    def __init__(self, title: str, line0: int, source: str) -> None:
        self.title, self.line0 = title, line0
        self.kind = ("dump" if "VM TRACES" in title else "wchan" if "BLOCKED PROCESS WAIT-CHANNELS" in title
                     else "binder" if title.startswith(("BINDER TRANSACTIONS", "BINDER STATE"))
                     else "loose" if not title or "ANR" in title or "WATCHDOG" in title.upper() else "skip")
        name = f"{source}#{title.split('(')[0].strip()}" if self.kind == "dump" else source
        self.unit = DumpUnit(source=name)
        self.lines: list[str] = []
        self.size = 0
        self.body_line = 0       # index (in the section's body) of the first line in self.lines
        self.marked = False      # a loose section holds something that looks like a dump

    def add(self, line: str) -> None:
        if self.kind == "skip":
            return
        if self.kind in ("dump", "loose"):
            if not self.marked and self.kind == "loose" and any(m in line for m in _LOOSE_MARKS):
                self.marked = True
            if self.size >= _PIECE_CHARS and line.startswith("----- pid "):
                self._parse_piece(last=False)
        self.lines.append(line)
        self.size += len(line) + 1

    def _parse_piece(self, last: bool) -> None:
        """The gathered lines into the unit, numbered as anr.parse_text numbers a whole section."""
        text = "\n".join(self.lines) + ("" if last and self.tail_open else "\n")
        if self.title:            # the body starts with the end of the title line
            base = self.line0 + (1 if self.kind == "dump" else 0)
            first = self.body_line == 0
            text = ("\n" if first else "") + text
            offset = base if first else base + 1 + self.body_line
        else:
            offset = self.body_line
        parse_dump(text, self.unit.source, line_offset=offset, unit=self.unit)
        self.body_line += len(self.lines)
        self.lines, self.size = [], 0

    tail_open = False    # the text ended without a line break inside this section

    def close(self, last: bool) -> None:
        """The section is over (`last`: the text is over)."""
        if self.kind in ("dump", "loose") and (self.lines or self.body_line == 0):
            self._parse_piece(last)
        if self.kind == "dump":
            self.unit.snapshot = "JUST NOW" in self.title

    def body(self) -> str:
        return "\n" + "\n".join(self.lines) + "\n"


def read_dump_stream(chunks: Iterable[str], source: str) -> list[DumpUnit]:
    """anr.parse_text on a text given as line-aligned chunks (source.text_chunks), never held whole: the same
    units (one per `VM TRACES` section, loose sections that hold a dump, or the whole text when it has no sections),
    with wait-channel tables and binder state attached to every unit."""
    sections: list[_Section] = []
    cur = _Section("", 0, source)
    lineno = 0
    sectioned = False
    nbytes = 0
    binder: list[BinderTransaction] = []
    proc_wchan: dict[int, tuple[str | None, str]] = {}
    ended_open = False
    for chunk in chunks:
        nbytes += len(chunk)
        lines = chunk.split("\n")
        if lines[-1] == "":
            lines.pop()
            ended_open = False
        else:
            ended_open = True
        for line in lines:
            if line.startswith("------ "):
                sectioned = True
                m = _SECTION.match(line)
                if m:
                    _finish(cur, False, sections, binder, proc_wchan)
                    cur = _Section(m.group(1), lineno, source)
                    lineno += 1
                    continue
            cur.add(line)
            lineno += 1
    cur.tail_open = ended_open
    _finish(cur, True, sections, binder, proc_wchan)
    return _units(sections, sectioned, nbytes, source, binder, proc_wchan)


def _finish(sec: _Section, last: bool, sections: list[_Section], binder: list[BinderTransaction],
            proc_wchan: dict[int, tuple[str | None, str]]) -> None:
    sec.close(last)
    if sec.kind == "wchan":
        proc_wchan.update(parse_process_wchan(sec.body()))
    elif sec.kind == "binder":
        binder.extend(parse_binder_state(sec.body(), sec.line0 + 1))
    elif sec.kind in ("dump", "loose"):
        sections.append(sec)
    sec.lines = []


def _units(sections: list[_Section], sectioned: bool, nbytes: int, source: str, binder: list[BinderTransaction],
           proc_wchan: dict[int, tuple[str | None, str]]) -> list[DumpUnit]:
    """The units in parse_text's order: dump sections, then loose sections that hold a dump."""
    if not sectioned:
        return [sections[0].unit]
    units = [s.unit for s in sections if s.kind == "dump"]
    units += [s.unit for s in sections if s.kind == "loose" and s.marked]
    return finish_units(units, source, nbytes, binder, proc_wchan)
