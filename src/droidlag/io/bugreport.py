"""Bugreport archives (zip) and texts: entries are read in memory after checks (no absolute or `..` paths, no links,
per-entry and total size caps, a compression-ratio bomb check), and the dump sections (`VM TRACES JUST NOW`,
`VM TRACES AT LAST ANR`, `BLOCKED PROCESS WAIT-CHANNELS`, binder state) go to the thread-dump reader."""
from __future__ import annotations

import zipfile
from pathlib import Path

from droidlag.errors import InputError, ReadWarning
from droidlag.io.anr import decode, parse_text
from droidlag.io.archive import open_zip, safe_entries
from droidlag.models.dumps import DumpUnit


def _wanted(info: zipfile.ZipInfo) -> bool:
    """Entries that can hold thread dumps: the bugreport text, traces files and /data/anr files."""
    low = info.filename.lower()
    base = low.rsplit("/", 1)[-1]
    return (base.startswith("bugreport") and base.endswith(".txt")) or "anr/" in low or base.startswith("traces") \
        or base.startswith("anr_")


def read_bugreport_zip(path: str | Path, data: bytes | None = None) -> list[DumpUnit]:
    """The dump units of a bugreport zip. Unsafe entries are refused with a warning naming them; an archive whose
    entries expand past the total cap, or with no readable text entry, is an InputError."""
    from droidlag.io.source import read_bytes

    source = str(path)
    if data is None:
        data = read_bytes(path)
    warnings: list[ReadWarning] = []
    zf = open_zip(path, data)
    units: list[DumpUnit] = []
    found = False
    for entry, raw in safe_entries(path, zf, warnings, _wanted):
        found = True
        name = f"{source}!{entry}"
        ws: list[ReadWarning] = []
        text = decode(raw, name, ws)
        del raw   # parsing needs the text only (memory at scale)
        got = parse_text(text, name)
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
