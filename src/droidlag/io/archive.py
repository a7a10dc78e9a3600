"""Zip archives from users are hostile until checked: entries with absolute or `..` paths, links, too many entries,
and entries or totals that expand past a cap (headers can lie, so sizes are checked while reading) are refused."""
from __future__ import annotations

import stat
import zipfile
from collections.abc import Callable, Iterator
from io import BytesIO
from pathlib import Path, PurePosixPath

from droidlag.errors import InputError, ReadWarning

MAX_ENTRY_BYTES = 512 * 1024**2
MAX_TOTAL_BYTES = 1024**3
MAX_RATIO = 200
MAX_ENTRIES = 10000


def unsafe_reason(info: zipfile.ZipInfo) -> str | None:
    """Why an entry must not be read (path outside the archive, link, too large, bomb-like ratio), or None."""
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


def read_capped(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
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


def open_zip(path: str | Path, data: bytes) -> zipfile.ZipFile:
    """Open zip bytes after the archive-wide checks (readable, entry count, declared total size)."""
    try:
        zf = zipfile.ZipFile(BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise InputError(path, f"not a readable zip archive ({e})") from None
    if len(infos) > MAX_ENTRIES:
        raise InputError(path, f"archive has {len(infos)} entries, over the {MAX_ENTRIES}-entry limit")
    if sum(i.file_size for i in infos) > MAX_TOTAL_BYTES:
        raise InputError(path, f"archive expands past {MAX_TOTAL_BYTES} bytes; refused (possible zip bomb)")
    return zf


def safe_entries(path: str | Path, zf: zipfile.ZipFile, warnings: list[ReadWarning],
                 want: Callable[[zipfile.ZipInfo], bool] = lambda info: True) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of each wanted, safe file entry; unsafe or unreadable entries become warnings, and the running
    total is capped while reading."""
    total = 0
    for info in zf.infolist():
        if info.is_dir() or not want(info):
            continue
        why = unsafe_reason(info)
        if why:
            warnings.append(ReadWarning(str(path), f"entry {info.filename!r} refused: {why}"))
            continue
        try:
            raw = read_capped(zf, info, MAX_ENTRY_BYTES)
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as e:
            warnings.append(ReadWarning(str(path), f"entry {info.filename!r} unreadable ({e}); skipped"))
            continue
        total += len(raw)
        if total > MAX_TOTAL_BYTES:
            raise InputError(path, f"archive expands past {MAX_TOTAL_BYTES} bytes; refused (possible zip bomb)")
        yield info.filename, raw
