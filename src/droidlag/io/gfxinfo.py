"""Reader for `dumpsys gfxinfo [framestats]` text: per-process and per-window summaries, the framestats CSV and the
legacy `Draw Prepare Process Execute` table (GPU profiling on).

Columns are taken from each block's header, so Android 6-9 (no window sections), 10-11 (16 columns) and 12+
(FrameDeadline, GpuCompleted, FrameTimelineVsyncId, ...) all read the same way. Times are integer nanoseconds.
Pastes are read as Android printed them: indented as a whole (the margin of their first section line is removed),
with the marker's dashes typeset (`—PROFILEDATA—`), rows elided (`...`), a header and rows without the marker.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl

from droidlag.errors import InputError, ReadWarning
from droidlag.io.source import GZIP_MAGIC, bytes_blocks, file_blocks, gunzip, text_chunks, utf8_text
from droidlag.models.gfxinfo import GfxinfoDump, GfxProcess, GfxWindow

_PROCESS_RE = re.compile(r"^\*\* Graphics info for pid (\d+) \[(.*)\] \*\*\s*$")
_PACKAGE_RE = re.compile(r"^Package: (\S+)\s*$")
_VIEWROOT_RE = re.compile(r"^\s+(\S.*?)/android\.view\.ViewRootImpl@[0-9a-f]+(?: \(visibility=\d+\))?\s*$")
_KEY_RE = re.compile(r"^([A-Z0-9][A-Za-z0-9 ()/_-]*?):\s*(.*)$")
_MARKER = "---PROFILEDATA---"
# The marker as pastes carry it: blogs' typography turns `---` into an em dash (`—PROFILEDATA—`), others into en dashes
# or a longer run; any run of hyphens and dashes (U+2010-2015, minus sign) on both sides is the marker.
_DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_MARKER_RE = re.compile(f"^[{_DASHES}]+ ?PROFILEDATA ?[{_DASHES}]+$")
# The first line of a process's summary (Android 6+), where a paste that left out the process line starts.
_SUMMARY_START_RE = re.compile(r"^(?:Stats since: \d+ns|Total frames rendered: \d+)\s*$")
# Lines that open a gfxinfo section: their indentation is the margin of a paste indented as a whole (markdown, issues).
_SECTION_START_RE = re.compile(r"^(?:\*\* Graphics info for pid \d+|Applications Graphics Acceleration Info:"
                               r"|Stats since: \d+ns\s*$|Total frames rendered: \d+\s*$|Package: \S+\s*$)")
_SECTION_FIRST = frozenset("*ASTP")   # the first characters of _SECTION_START_RE's lines (a cheap test per line)
# A framestats header line: `Flags,` then column names (letters only), the trailing comma Android prints.
_HEADER_RE = re.compile(r"^Flags(?: ?, ?[A-Za-z]{1,40}){9,60} ?,?$")
# A paste's elision inside framestats rows (`...`, `…`): rows were left out there, not damaged.
_ELISION_RE = re.compile(r"^(?:\.{2,}|\u2026+)$")
# The legacy per-frame table (models.gfxinfo.LEGACY_STAGES): its header, and rows of 3 or 4 times in ms (`%3.2f`),
# tab-separated as Android prints them (spaces where a page re-typeset them).
_LEGACY_HEADER_RE = re.compile(r"^Draw\s+(?:Prepare\s+)?Process\s+Execute$")
_LEGACY_ROW_RE = re.compile(r"^\d{1,9}\.\d{2}(?:\s+\d{1,9}\.\d{2}){2,3}$")

# Keys that hold a number of frames or a duration; everything else stays text.
_NUM_RE = re.compile(r"^(-?\d+(?:\.\d+)?)\s*(ms|ns)?(?:\s*\((\d+(?:\.\d+)?)%\))?$")
# Summary keys Android always prints as numbers (counts, percentiles): anything else there is damage, not text.
_NUMERIC_KEY_RE = re.compile(r"^(total_frames|janky_|number_)|_percentile$")
# A framestats row: integers only (each at most 20 digits), 10 or more of them, the trailing comma Android prints.
_ROW_RE = re.compile(r"^-?\d{1,20}(?:,-?\d{1,20}){9,}\s*,?\s*$")
# Framestats columns whose order is fixed by a row's width: the 14 columns developer.android.com documents for
# Android 6-9 (libhwui FrameInfo.h), and Android 10-11's 16 (the two buffer durations appended; the corpus' Android 10
# header). Android 12 reworked the list (FrameTimelineVsyncId second, FrameDeadline, FrameInterval, FrameStartTime,
# later WorkloadTarget, ...) and its order differs between releases of equal width, so rows of 12+ are read only under
# their header.
_FRAMESTATS_6 = ("Flags", "IntendedVsync", "Vsync", "OldestInputEvent", "NewestInputEvent", "HandleInputStart",
                 "AnimationStart", "PerformTraversalsStart", "DrawStart", "SyncQueued", "SyncStart",
                 "IssueDrawCommandsStart", "SwapBuffers", "FrameCompleted")
_FRAMESTATS_BY_WIDTH = {14: _FRAMESTATS_6, 16: _FRAMESTATS_6 + ("DequeueBufferDuration", "QueueBufferDuration")}
_HEADER_HINT = "`Flags,IntendedVsync,...` header line"


def is_marker(stripped: str) -> bool:
    """`---PROFILEDATA---`, with any run of hyphens or typographic dashes around it."""
    return stripped == _MARKER or (len(stripped) < 40 and _MARKER_RE.match(stripped) is not None)


def is_framestats_row(line: str) -> bool:
    """A `dumpsys gfxinfo framestats` data row (integers and commas only)."""
    return _ROW_RE.match(line) is not None


def headerless_columns(row: str) -> tuple[str, ...] | None:
    """The column names of a framestats row pasted without its header line, when its width fixes them (Android
    6-11), else None."""
    return _FRAMESTATS_BY_WIDTH.get(row.strip().rstrip(",").count(",") + 1)


# Every integer the reader keeps must fit a signed 64-bit column.
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def _fits(v: int) -> bool:
    return _I64_MIN <= v <= _I64_MAX


def _snake(key: str) -> str:
    key = key.strip().lower().replace("(", "").replace(")", "")
    return re.sub(r"[^a-z0-9]+", "_", key).strip("_")


def _parse_value(key: str, raw: str) -> Any:
    raw = raw.strip()
    if key == "histogram":
        hist: dict[int, int] = {}
        for item in raw.split():
            k, _, v = item.partition("=")
            if k.endswith("ms") and v.isdigit():
                try:
                    bucket, count = int(k[:-2]), int(v)
                except ValueError:
                    continue
                if _fits(bucket) and _fits(count):
                    hist[bucket] = count
        return hist
    m = _NUM_RE.match(raw)
    if not m:
        return raw
    num: int | float = float(m.group(1)) if "." in m.group(1) else int(m.group(1))
    if isinstance(num, int) and not _fits(num):
        return raw
    if m.group(3) is not None:
        return {"count": num, "percent": float(m.group(3))}
    return num


# A frame interval is a display period (8-50 ms in practice); a frame start time is a timestamp like IntendedVsync.
_MAX_INTERVAL_NS = 1_000_000_000


def _swap_mislabelled_interval(table: pl.DataFrame, path: str, line: int,
                               warnings: list[ReadWarning]) -> pl.DataFrame:
    """Android 12+'s framestats header names the FrameInterval and FrameStartTime columns in the wrong order:
    libhwui's FrameInfoNames lists `FrameInterval,FrameStartTime` while its FrameInfoIndex (the data) has
    FrameStartTime first. When the values show it -- the column named FrameInterval holds timestamps (as large as
    IntendedVsync) and the one named FrameStartTime holds periods under a second -- the two names are swapped back,
    with a warning; a header whose values fit its names is left as it is."""
    names = ("FrameInterval", "FrameStartTime", "IntendedVsync")
    if not table.height or not all(n in table.columns for n in names):
        return table
    ok = table.filter((pl.col("IntendedVsync") > 0) & (pl.col("FrameStartTime") > 0))
    if not ok.height:
        return table
    interval, start, vsync = (ok[n].median() for n in names)
    if not (isinstance(interval, (int, float)) and isinstance(start, (int, float)) and isinstance(vsync, (int, float))):
        return table
    if start < _MAX_INTERVAL_NS <= interval and interval >= vsync / 2:
        warnings.append(ReadWarning(path, "framestats header names FrameInterval and FrameStartTime in the wrong "
                                    "order (Android 12+'s header; the values show it): the two columns are read "
                                    "the other way round", line=line + 1))
        return table.rename({"FrameInterval": "FrameStartTime", "FrameStartTime": "FrameInterval"})
    return table


class _Block:
    """A framestats block being read: its header, then its rows in pieces of _BULK_ROWS parsed as they come."""

    def __init__(self, win: GfxWindow, marker_line: int, implicit: bool = False) -> None:
        self.win, self.marker_line = win, marker_line
        self.implicit = implicit   # rows pasted with no `---PROFILEDATA---` line: the block ends at a non-row line
        self.unread = 0            # rows skipped: no header, and a width that does not fix the columns
        self.header: list[str] | None = None
        self.rows: list[str] = []
        self.row_lines: list[int] = []
        self.parts: list[pl.DataFrame] = []
        self.bad = 0
        self.first_bad: int | None = None

    def assume_header(self, row: str, lineno: int, path: str, warnings: list[ReadWarning]) -> None:
        """The block's first line is a data row (its header line was left out of the paste): the columns Android
        6-11 print for the row's width, with a warning; other widths are not read (the warning says why)."""
        width = row.strip().rstrip(",").count(",") + 1
        columns = headerless_columns(row)
        if columns is None:
            self.header = []
            warnings.append(ReadWarning(path, f"framestats rows of {width} fields without their {_HEADER_HINT}: "
                                        "their column order is fixed only for Android 6-11's 14 or 16 fields, so "
                                        "they were not read (paste them with the header line)", line=lineno))
            return
        self.header = list(columns)
        warnings.append(ReadWarning(path, f"framestats rows without their {_HEADER_HINT}: read as the {width} "
                                    f"columns Android {'6-9' if width == 14 else '10-11'} prints, in that order",
                                    line=lineno))

    def set_header(self, line: str, lineno: int, path: str, warnings: list[ReadWarning]) -> None:
        header = [h.strip() for h in line.strip().rstrip(",").split(",")]
        if not header or header[0] != "Flags":
            warnings.append(ReadWarning(path, f"framestats header not recognized: {line[:60]!r}", line=lineno))
        if len(set(header)) != len(header):   # damage: a name twice would merge two columns
            seen: dict[str, int] = {}
            for k, h in enumerate(header):
                seen[h] = seen.get(h, 0) + 1
                if seen[h] > 1:
                    header[k] = f"{h}_{seen[h]}"
            warnings.append(ReadWarning(path, "framestats header names a column twice; the later one renamed",
                                        line=lineno))
        self.header = header

    def add(self, row: str, lineno: int) -> None:
        if self.header == []:   # rows whose columns are not known (assume_header)
            self.unread += 1
            return
        self.rows.append(row)
        self.row_lines.append(lineno)
        if len(self.rows) >= _BULK_ROWS:
            self.flush()

    def flush(self) -> None:
        """Parse the rows gathered so far into a table piece: in bulk when they are clean, else one by one."""
        header = self.header or []
        if not self.rows and self.parts:
            return
        table = _rows_bulk(self.rows, header) if header else None
        if table is None:
            table, bad, first = _rows_checked(self.rows, self.row_lines, header)
            self.bad += bad
            self.first_bad = self.first_bad or first
        self.parts.append(table)
        self.rows, self.row_lines = [], []

    def close(self, path: str, warnings: list[ReadWarning]) -> None:
        """The block's table onto its window (after the rows of an earlier block of the same window)."""
        if self.header is None:
            warnings.append(ReadWarning(path, "framestats block without a header", line=self.marker_line))
            return
        if self.header == []:
            return
        self.flush()
        if self.bad:
            warnings.append(ReadWarning(path, f"{self.bad} framestats row(s) with a wrong field count or non-numbers "
                                              "(or numbers beyond 64 bits) skipped", line=self.first_bad))
        table = pl.concat(self.parts) if len(self.parts) > 1 else self.parts[0]
        self.parts = []
        table = _swap_mislabelled_interval(table, path, self.marker_line, warnings)
        win = self.win
        if win.framestats.height and table.height:
            win.framestats = pl.concat([win.framestats, table], how="diagonal")
        elif table.width:
            win.framestats = table


_BULK_ROWS = 20000


def _rows_bulk(rows: list[str], header: list[str]) -> pl.DataFrame | None:
    """Rows at once through polars' CSV parser (memory: the table, not a Python int per field); None when any row
    is not clean (wrong field count, a non-number, a number past 64 bits): then they are checked one by one."""
    schema = {h: pl.Int64 for h in header}
    if not rows:
        return pl.DataFrame(schema=schema)
    commas = len(header) - 1
    if any(r.rstrip(",").count(",") != commas for r in rows):
        return None
    body = "\n".join(r.rstrip(",") for r in rows).encode()
    try:   # numbers are never quoted: a `"` is damage, not CSV quoting (a lone one made polars panic: fuzz find)
        return pl.read_csv(body, has_header=False, new_columns=header, schema=schema, quote_char=None)
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException, ValueError):
        return None


def _rows_checked(rows: list[str], row_lines: list[int], header: list[str]) -> tuple[pl.DataFrame, int, int | None]:
    """Rows one by one: those with a wrong field count, non-numbers or numbers past 64 bits are skipped. Returns
    the table, how many were skipped and the first one's line."""
    cols: dict[str, list[int]] = {h: [] for h in header}
    bad = 0
    first_bad = None
    for lineno, line in zip(row_lines, rows):
        fields = line.rstrip(",").split(",")
        try:
            if len(fields) != len(header):
                raise ValueError("field count")
            vals = [int(f) for f in fields]
            if not all(_I64_MIN <= v <= _I64_MAX for v in vals):
                raise ValueError("beyond 64 bits")
        except ValueError:
            bad += 1
            first_bad = first_bad or lineno
            continue
        for h, v in zip(header, vals):
            cols[h].append(v)
    table = pl.DataFrame(cols, schema={h: pl.Int64 for h in header}) if header else pl.DataFrame()
    return table, bad, first_bad


NS_PER_MS = 1_000_000


class _Legacy:
    """A legacy `Draw Prepare Process Execute` table being read (models.gfxinfo.LEGACY_STAGES): one row per frame,
    times in ms with 2 decimals, kept as integer ns under the header's names."""

    def __init__(self, win: GfxWindow, header: str, lineno: int) -> None:
        self.win, self.line = win, lineno
        self.names = header.split()
        self.cols: dict[str, list[int]] = {n: [] for n in self.names}
        self.bad = 0
        self.first_bad: int | None = None

    def add(self, stripped: str, lineno: int) -> None:
        vals = stripped.split()
        if len(vals) != len(self.names):   # a row of 3 under a header of 4 (or the reverse): damage
            self.bad += 1
            self.first_bad = self.first_bad or lineno
            return
        for name, v in zip(self.names, vals):
            self.cols[name].append(round(float(v) * NS_PER_MS))

    def close(self, path: str, warnings: list[ReadWarning]) -> None:
        if self.bad:
            warnings.append(ReadWarning(path, f"{self.bad} `{' '.join(self.names)}` row(s) with a wrong number of "
                                        "fields skipped", line=self.first_bad))
        table = pl.DataFrame(self.cols, schema={n: pl.Int64 for n in self.names})
        if not table.height:
            return
        self.win.legacy = pl.concat([self.win.legacy, table], how="diagonal") if self.win.legacy.height else table


class _Reader:
    """The gfxinfo text as a stream of lines: processes (`** Graphics info for pid`, or graphicsstats' `Package:`),
    their windows, summary keys, and framestats blocks parsed in pieces as their rows come."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.warnings: list[ReadWarning] = []
        self.processes: list[GfxProcess] = []
        self.proc: GfxProcess | None = None
        self.win: GfxWindow | None = None
        self.uptime: int | None = None
        self.orphan = GfxProcess(-1, "<unknown process>")
        self.block: _Block | None = None
        self.viewroot: str | None = None   # an Android 6-9 window line, waiting to see whether `Window:` follows
        self.unread_rows = 0               # framestats rows not read: no header, a width that does not fix the columns
        self.margin = ""                   # the indentation of a paste indented as a whole (markdown, issues)
        self.legacy: _Legacy | None = None
        self.typeset_marker = False        # a `—PROFILEDATA—` marker was read (warned once)

    def feed(self, lines: Iterable[str], first: int) -> int:
        """Read `lines`, the first being line number `first`; returns the number of the next line."""
        lineno = first
        for raw in lines:
            line = self._dedent(raw)
            if self.legacy is not None and self._legacy_line(line, lineno):
                lineno += 1
                continue
            if self.block is None or not self._block_line(line, lineno):
                if self.viewroot is not None:
                    self._window_from_viewroot(line)
                self._line(line, lineno)
            lineno += 1
        return lineno

    def _dedent(self, line: str) -> str:
        """The line without the paste's margin. A line that opens a section (process line, title, a summary's first
        line) sets the margin to its own indentation: Android prints those flush left, so an indented one means the
        whole paste was indented (markdown code blocks, issue comments) and its lines lose that much."""
        if line[:1] not in (" ", "\t"):
            if self.margin and line[:1] in _SECTION_FIRST and _SECTION_START_RE.match(line):
                self.margin = ""
            return line
        body = line.lstrip(" \t")
        if _SECTION_START_RE.match(body):
            self.margin = line[:len(line) - len(body)]
            return body
        if self.margin and line.startswith(self.margin):
            return line[len(self.margin):]
        return line

    def _legacy_line(self, line: str, lineno: int) -> bool:
        """A line of a legacy `Draw Prepare Process Execute` table (rows, or blank lines in it); False when it ends
        the table without belonging to it."""
        assert self.legacy is not None
        stripped = line.strip()
        if not stripped:
            return True
        if _LEGACY_ROW_RE.match(stripped):
            self.legacy.add(stripped, lineno)
            return True
        self._close_legacy()
        return False

    def _close_legacy(self) -> None:
        assert self.legacy is not None
        self.legacy.close(self.path, self.warnings)
        self.legacy = None

    def _marker(self, stripped: str, lineno: int) -> bool:
        """`---PROFILEDATA---`; a typeset one (`—PROFILEDATA—`) is read as it, with a warning the first time."""
        if not is_marker(stripped):
            return False
        if stripped != _MARKER and not self.typeset_marker:
            self.typeset_marker = True
            self.warnings.append(ReadWarning(self.path, f"{stripped!r} read as the {_MARKER} marker (its dashes were "
                                             "changed, as blogs' typography does)", line=lineno))
        return True

    def _block_line(self, line: str, lineno: int) -> bool:
        """A line inside a framestats block; False when it ends the block without belonging to it."""
        block = self.block
        assert block is not None
        stripped = line.strip()
        if not stripped:
            return True
        if _ELISION_RE.match(stripped):   # `...`: the paste left rows out here
            self.warnings.append(ReadWarning(self.path, f"framestats rows elided ({stripped!r}): the frames left out "
                                             "of the paste are not counted", line=lineno))
            return True
        if block.implicit and not is_framestats_row(stripped):   # the end of rows pasted on their own
            self._close_block()
            return False
        if block.header is None:
            if is_framestats_row(stripped):   # the header line was left out: the row is data
                block.assume_header(stripped, lineno, self.path, self.warnings)
                block.add(stripped, lineno)
            else:
                block.set_header(line, lineno, self.path, self.warnings)
            return True
        if self._marker(stripped, lineno):
            self._close_block()
            return True
        if stripped.startswith("**") or stripped.startswith("Window:"):   # truncated block: next section began
            self.warnings.append(ReadWarning(self.path, "framestats block not closed by ---PROFILEDATA---",
                                             line=lineno))
            self._close_block()
            return False
        block.add(stripped, lineno)
        return True

    def _close_block(self) -> None:
        assert self.block is not None
        self.block.close(self.path, self.warnings)
        self.unread_rows += self.block.unread
        self.block = None

    def _window_from_viewroot(self, nxt: str) -> None:
        """Android 6-9 name windows only by the ViewRootImpl line; 10+ repeat the name in a `Window:` line next."""
        if not nxt.strip().startswith("Window:") and self.proc is not None:
            self.win = GfxWindow(self.viewroot or "")
            self.proc.windows.append(self.win)
        self.viewroot = None

    def _line(self, line: str, lineno: int) -> None:
        """A line outside framestats blocks."""
        m = _PROCESS_RE.match(line)
        if m:
            self._new_process(GfxProcess(int(m.group(1)), m.group(2)))
            return
        pm = _PACKAGE_RE.match(line)
        if pm:   # `dumpsys graphicsstats`: persisted per-package aggregates, no pid
            self._new_process(GfxProcess(-1, pm.group(1)))
            return
        stripped = line.strip()
        if stripped.startswith("Uptime:"):
            um = re.match(r"Uptime:\s*(\d+)", stripped)
            self.uptime = int(um.group(1)) if um else None
        if self._marker(stripped, lineno):
            self._open_block(lineno)
        elif _HEADER_RE.match(stripped):   # a header and its rows pasted without `---PROFILEDATA---`
            self._open_block(lineno, implicit=True)
            assert self.block is not None
            self.block.set_header(stripped, lineno, self.path, self.warnings)
        elif is_framestats_row(stripped):   # framestats rows pasted without `---PROFILEDATA---` (and their header)
            self._open_block(lineno, implicit=True)
            self._block_line(line, lineno)
        elif _LEGACY_HEADER_RE.match(stripped):
            self.legacy = _Legacy(self._window(), stripped, lineno)
        elif self.proc is not None:
            self._process_line(line, stripped, lineno, self.proc)
        elif _SUMMARY_START_RE.match(line):
            # a summary pasted without its `** Graphics info for pid` line (issues, blogs): the process is unknown
            self.warnings.append(ReadWarning(self.path, "gfxinfo summary with no '** Graphics info for pid' line "
                                             "before it: its process is unknown", line=lineno))
            self._new_process(self.orphan)
            self._process_line(line, stripped, lineno, self.orphan)

    def _new_process(self, proc: GfxProcess) -> None:
        self.proc = proc
        self.processes.append(proc)
        self.win = None

    def _window(self) -> GfxWindow:
        """The window per-frame rows belong to: the current one, else one named after the process (the orphan
        process when no process line came before)."""
        owner = self.proc or self.orphan
        if self.proc is None and self.orphan not in self.processes:
            self.processes.append(self.orphan)
        if self.win is None:
            self.win = GfxWindow(owner.name)
            owner.windows.append(self.win)
        return self.win

    def _open_block(self, lineno: int, implicit: bool = False) -> None:
        self.block = _Block(self._window(), lineno, implicit)

    def _process_line(self, line: str, stripped: str, lineno: int, proc: GfxProcess) -> None:
        """A window line or a summary key inside a process's section."""
        if stripped.startswith("Window:"):
            self.win = GfxWindow(stripped[len("Window:"):].strip())
            proc.windows.append(self.win)
            return
        vm = _VIEWROOT_RE.match(line)
        if vm:
            if line.startswith("\t"):
                self.viewroot = vm.group(1)
            return
        km = _KEY_RE.match(stripped)
        if not km or line[:1] in (" ", "\t"):   # indented: a sub-item (memory, caches), not a summary key
            return
        key = _snake(km.group(1))
        target = self.win.summary if self.win is not None else proc.summary
        value = _parse_value(key, km.group(2))
        if isinstance(value, str) and value and _NUMERIC_KEY_RE.search(key):
            self.warnings.append(ReadWarning(self.path, f"{km.group(1)!r} is not a number ({value[:40]!r}); "
                                             "left out", line=lineno))
        elif key not in target and value != "":
            target[key] = value

    def finish(self) -> GfxinfoDump:
        if self.block is not None:
            self._close_block()
        if self.legacy is not None:
            self._close_legacy()
        if self.viewroot is not None:
            self._window_from_viewroot("")
        if self.unread_rows and not any(w.framestats.height or w.summary for p in self.processes
                                        for w in p.windows) and not any(p.summary for p in self.processes):
            first = next((w.line for w in self.warnings if _HEADER_HINT in w.message), None)
            raise InputError(self.path, f"{self.unread_rows} framestats row(s) without their {_HEADER_HINT}"
                             + (f" (line {first})" if first else "") + ": the column order of rows of that width "
                             "differs between Android 12+ releases; paste them with the header line")
        if not self.processes:
            raise InputError(self.path, "no `dumpsys gfxinfo` or `graphicsstats` section (no 'Graphics info for "
                             "pid', no 'Package:' and no framestats)")
        return GfxinfoDump(path=self.path, processes=self.processes, warnings=self.warnings, uptime_ms=self.uptime)


def _read_chunks(chunks: Iterable[str], path: str, warnings: list[ReadWarning]) -> GfxinfoDump:
    """The dump of a text given as line-aligned chunks; `warnings` (those of decoding, filled while the chunks are
    read) come first."""
    reader = _Reader(path)
    lineno = 1
    for chunk in chunks:
        lineno = reader.feed(chunk.splitlines(), lineno)
    dump = reader.finish()
    dump.warnings[:0] = warnings
    return dump


def read_gfxinfo(data: bytes | bytearray | str, path: str = "<gfxinfo>") -> GfxinfoDump:
    """Read `dumpsys gfxinfo` (with or without `framestats`) text.

    Returns the dump with warnings for skipped rows; raises InputError when the text holds no gfxinfo section.
    Bytes are decoded a few MiB at a time (source.text_chunks): the whole text is never held beside them. Gzip'd
    bytes are undone and UTF-16 text transcoded first, as for a file (source.gunzip / utf8_text)."""
    warnings: list[ReadWarning] = []
    if not isinstance(data, str):
        data = gunzip(bytes(data), path, warnings) if data[:2] == GZIP_MAGIC else utf8_text(bytes(data))
    chunks: Iterable[str] = [data] if isinstance(data, str) else text_chunks(bytes_blocks(data), path, warnings)
    return _read_chunks(chunks, path, warnings)


def read_gfxinfo_file(path: str | Path) -> GfxinfoDump:
    """read_gfxinfo on a file (gzip'd or not), streamed: neither the file's bytes nor its text is ever held whole,
    only the parsed model. InputError naming the file when it is missing, empty or holds no gfxinfo section."""
    warnings: list[ReadWarning] = []
    return _read_chunks(text_chunks(file_blocks(path, warnings), path, warnings), str(path), warnings)
