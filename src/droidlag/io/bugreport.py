"""Bugreport archives (zip) and texts: entries are read in memory after checks (no absolute or `..` paths, no links,
per-entry and total size caps, a compression-ratio bomb check), and the dump sections (`VM TRACES JUST NOW`,
`VM TRACES AT LAST ANR`, `BLOCKED PROCESS WAIT-CHANNELS`, binder state) go to the thread-dump reader."""
from __future__ import annotations

import stat
import zipfile
from io import BytesIO
from pathlib import Path, PurePosixPath

from droidlag.errors import InputError, ReadWarning
from droidlag.hangs.model import DumpUnit
from droidlag.io.anr import decode, parse_text

MAX_ENTRY_BYTES = 512 * 1024**2
MAX_TOTAL_BYTES = 1024**3
MAX_RATIO = 200
MAX_ENTRIES = 10000


def _unsafe_reason(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    p = PurePosixPath(name.replace("\\", "/"))
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":") or ".." in p.parts:
        return "path outside the archive"
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return "symbolic link"
    if info.file_size > MAX_ENTRY_BYTES:
        return f"expands to {info.file_size} bytes, over the {MAX_ENTRY_BYTES}-byte limit"
    if info.compress_size and info.file_size / info.compress_size > MAX_RATIO and info.file_size > 1 << 20:
        return f"compression ratio {info.file_size / info.compress_size:.0f}:1 (possible zip bomb)"
    return None


def _read_capped(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    """Read an entry, refusing it if it actually expands past `limit` (headers can lie)."""
    out = BytesIO()
    with zf.open(info) as fh:
        while True:
            chunk = fh.read(1 << 20)
            if not chunk:
                break
            out.write(chunk)
            if out.tell() > limit:
                raise InputError(zf.filename, f"entry {info.filename!r} expands past {limit} bytes; refused "
                                 "(possible zip bomb)")
    return out.getvalue()


def read_bugreport_zip(path: str | Path, data: bytes | None = None) -> list[DumpUnit]:
    """The dump units of a bugreport zip. Unsafe entries are refused with a warning naming them; an archive whose
    entries expand past the total cap, or with no readable text entry, is an InputError."""
    from droidlag.io.source import read_bytes

    source = str(path)
    if data is None:
        data = read_bytes(path)
    warnings: list[ReadWarning] = []
    try:
        zf = zipfile.ZipFile(BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise InputError(path, f"not a readable zip archive ({e})") from None
    if len(infos) > MAX_ENTRIES:
        raise InputError(path, f"archive has {len(infos)} entries, over the {MAX_ENTRIES}-entry limit")
    if sum(i.file_size for i in infos) > MAX_TOTAL_BYTES:
        raise InputError(path, f"archive expands past {MAX_TOTAL_BYTES} bytes; refused (possible zip bomb)")
    wanted = []
    for info in infos:
        if info.is_dir():
            continue
        why = _unsafe_reason(info)
        if why:
            warnings.append(ReadWarning(source, f"entry {info.filename!r} refused: {why}"))
            continue
        low = info.filename.lower()
        base = low.rsplit("/", 1)[-1]
        if (base.startswith("bugreport") and base.endswith(".txt")) or "anr/" in low or base.startswith("traces") \
                or base.startswith("anr_"):
            wanted.append(info)
    if not wanted:
        if warnings:
            raise InputError(path, "; ".join(w.message for w in warnings[:3]))
        raise InputError(path, "zip holds no bugreport text, traces or /data/anr entries")
    units: list[DumpUnit] = []
    total = 0
    for info in wanted:
        try:
            raw = _read_capped(zf, info, MAX_ENTRY_BYTES)
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as e:
            warnings.append(ReadWarning(source, f"entry {info.filename!r} unreadable ({e}); skipped"))
            continue
        total += len(raw)
        if total > MAX_TOTAL_BYTES:
            raise InputError(path, f"archive expands past {MAX_TOTAL_BYTES} bytes; refused (possible zip bomb)")
        name = f"{source}!{info.filename}"
        ws: list[ReadWarning] = []
        text = decode(raw, name, ws)
        got = parse_text(text, name)
        got[0].warnings[:0] = ws
        units.extend(u for u in got if u.processes or u.wait_channels)
    if not units:
        units = [DumpUnit(source=source)]
    units[0].warnings[:0] = warnings
    return units
