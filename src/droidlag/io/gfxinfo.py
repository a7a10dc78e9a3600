"""Reader for `dumpsys gfxinfo [framestats]` text: per-process and per-window summaries and the framestats CSV.

Columns are taken from each block's header, so Android 6-9 (no window sections), 10-11 (16 columns) and 12+
(FrameDeadline, GpuCompleted, FrameTimelineVsyncId, ...) all read the same way. Times are integer nanoseconds.
"""
from __future__ import annotations

import re

import polars as pl

from droidlag.errors import InputError, ReadWarning
from droidlag.io.source import decode_text
from droidlag.models.gfxinfo import GfxinfoDump, GfxProcess, GfxWindow

_PROCESS_RE = re.compile(r"^\*\* Graphics info for pid (\d+) \[(.*)\] \*\*\s*$")
_PACKAGE_RE = re.compile(r"^Package: (\S+)\s*$")
_VIEWROOT_RE = re.compile(r"^\s+(\S.*?)/android\.view\.ViewRootImpl@[0-9a-f]+(?: \(visibility=\d+\))?\s*$")
_KEY_RE = re.compile(r"^([A-Z0-9][A-Za-z0-9 ()/_-]*?):\s*(.*)$")
_MARKER = "---PROFILEDATA---"
# Keys that hold a number of frames or a duration; everything else stays text.
_NUM_RE = re.compile(r"^(-?\d+(?:\.\d+)?)\s*(ms|ns)?(?:\s*\((\d+(?:\.\d+)?)%\))?$")
# Summary keys Android always prints as numbers (counts, percentiles): anything else there is damage, not text.
_NUMERIC_KEY_RE = re.compile(r"^(total_frames|janky_|number_)|_percentile$")
# Every integer the reader keeps must fit a signed 64-bit column.
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def _fits(v: int) -> bool:
    return _I64_MIN <= v <= _I64_MAX


def _snake(key: str) -> str:
    key = key.strip().lower().replace("(", "").replace(")", "")
    return re.sub(r"[^a-z0-9]+", "_", key).strip("_")


def _parse_value(key: str, raw: str):
    raw = raw.strip()
    if key == "histogram":
        hist = {}
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
    num = float(m.group(1)) if "." in m.group(1) else int(m.group(1))
    if isinstance(num, int) and not _fits(num):
        return raw
    if m.group(3) is not None:
        return {"count": num, "percent": float(m.group(3))}
    return num


def _frame_block(lines: list[str], start: int, path: str, warnings: list[ReadWarning]) -> tuple[pl.DataFrame, int]:
    """Parse the CSV after a PROFILEDATA marker at lines[start]; returns the table and the index after the end."""
    i = start + 1
    n = len(lines)
    while i < n and not lines[i].strip():
        i += 1
    if i >= n:
        warnings.append(ReadWarning(path, "framestats block without a header", line=start + 1))
        return pl.DataFrame(), n
    header = [h.strip() for h in lines[i].strip().rstrip(",").split(",")]
    if not header or header[0] != "Flags":
        warnings.append(ReadWarning(path, f"framestats header not recognized: {lines[i][:60]!r}", line=i + 1))
    if len(set(header)) != len(header):   # damage: a name twice would merge two columns
        seen: dict[str, int] = {}
        for k, h in enumerate(header):
            seen[h] = seen.get(h, 0) + 1
            if seen[h] > 1:
                header[k] = f"{h}_{seen[h]}"
        warnings.append(ReadWarning(path, "framestats header names a column twice; the later one renamed",
                                    line=i + 1))
    i += 1
    rows: list[str] = []
    row_lines: list[int] = []
    while i < n and lines[i].strip() != _MARKER:
        line = lines[i].strip()
        i += 1
        if not line:
            continue
        if line.startswith("**") or line.startswith("Window:"):   # truncated block: next section began
            i -= 1
            warnings.append(ReadWarning(path, "framestats block not closed by ---PROFILEDATA---", line=i + 1))
            break
        rows.append(line)
        row_lines.append(i)
    table = _rows_bulk(rows, header) if header else None
    if table is None:
        table = _rows_checked(rows, row_lines, header, path, warnings)
    return table, i + 1


_BULK_ROWS = 20000


def _rows_bulk(rows: list[str], header: list[str]) -> pl.DataFrame | None:
    """All rows at once through polars' CSV parser (memory: the table, not a Python int per field); None when any
    row is not clean (wrong field count, a non-number, a number past 64 bits): then rows are checked one by one."""
    if not rows:
        return pl.DataFrame(schema={h: pl.Int64 for h in header})
    commas = len(header) - 1
    if any(r.rstrip(",").count(",") != commas for r in rows):
        return None
    schema = {h: pl.Int64 for h in header}
    parts = []
    try:
        for k in range(0, len(rows), _BULK_ROWS):   # in pieces: one piece's text at a time beside the table
            body = "\n".join(r.rstrip(",") for r in rows[k:k + _BULK_ROWS]).encode()
            parts.append(pl.read_csv(body, has_header=False, new_columns=header, schema=schema))
    except (pl.exceptions.PolarsError, ValueError):
        return None
    return pl.concat(parts, rechunk=True) if len(parts) > 1 else parts[0]


def _rows_checked(rows: list[str], row_lines: list[int], header: list[str], path: str,
                  warnings: list[ReadWarning]) -> pl.DataFrame:
    """Rows one by one: those with a wrong field count, non-numbers or numbers past 64 bits are skipped, with a
    warning naming the first one's line."""
    cols: dict[str, list] = {h: [] for h in header}
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
    if bad:
        warnings.append(ReadWarning(path, f"{bad} framestats row(s) with a wrong field count or non-numbers "
                                          "(or numbers beyond 64 bits) skipped", line=first_bad))
    return pl.DataFrame(cols, schema={h: pl.Int64 for h in header}) if header else pl.DataFrame()


def read_gfxinfo(data: bytes | str, path: str = "<gfxinfo>") -> GfxinfoDump:
    """Read `dumpsys gfxinfo` (with or without `framestats`) text.

    Returns the dump with warnings for skipped rows; raises InputError when the text holds no gfxinfo section."""
    warnings: list[ReadWarning] = []
    text = decode_text(bytes(data), path, warnings) if isinstance(data, (bytes, bytearray)) else data
    lines = text.splitlines()
    del text   # the lines hold it now; a 200 MB dump must not be held twice
    processes: list[GfxProcess] = []
    proc: GfxProcess | None = None
    win: GfxWindow | None = None
    uptime = None
    orphan = GfxProcess(-1, "<unknown process>")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _PROCESS_RE.match(line)
        pm = _PACKAGE_RE.match(line) if m is None else None
        if pm:   # `dumpsys graphicsstats`: persisted per-package aggregates, no pid
            proc = GfxProcess(-1, pm.group(1))
            processes.append(proc)
            win = None
            i += 1
            continue
        if m:
            proc = GfxProcess(int(m.group(1)), m.group(2))
            processes.append(proc)
            win = None
            i += 1
            continue
        stripped = line.strip()
        if stripped.startswith("Uptime:"):
            um = re.match(r"Uptime:\s*(\d+)", stripped)
            uptime = int(um.group(1)) if um else None
        if stripped == _MARKER:
            owner = proc or orphan
            if proc is None and orphan not in processes:
                processes.append(orphan)
            if win is None:
                win = GfxWindow(owner.name)
                owner.windows.append(win)
            table, i = _frame_block(lines, i, path, warnings)
            if win.framestats.height and table.height:
                win.framestats = pl.concat([win.framestats, table], how="diagonal")
            elif table.width:
                win.framestats = table
            continue
        if proc is not None:
            if stripped.startswith("Window:"):
                win = GfxWindow(stripped[len("Window:"):].strip())
                proc.windows.append(win)
            else:
                vm = _VIEWROOT_RE.match(line)
                if vm:
                    # Android 6-9 name windows only by this line; 10+ repeat the name in a `Window:` line next.
                    nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
                    if not nxt.startswith("Window:") and line.startswith("\t"):
                        win = GfxWindow(vm.group(1))
                        proc.windows.append(win)
                else:
                    km = _KEY_RE.match(stripped)
                    if km and line == stripped:
                        key = _snake(km.group(1))
                        target = win.summary if win is not None else proc.summary
                        value = _parse_value(key, km.group(2))
                        if isinstance(value, str) and value and _NUMERIC_KEY_RE.search(key):
                            warnings.append(ReadWarning(path, f"{km.group(1)!r} is not a number ({value[:40]!r}); "
                                                        "left out", line=i + 1))
                        elif key not in target and value != "":
                            target[key] = value
        i += 1
    if not processes:
        raise InputError(path, "no `dumpsys gfxinfo` or `graphicsstats` section (no 'Graphics info for pid', "
                         "no 'Package:' and no framestats)")
    return GfxinfoDump(path=path, processes=processes, warnings=warnings, uptime_ms=uptime)
