"""Zip and tar archives from users are hostile until checked: entries with absolute or `..` paths, links, devices,
too many entries, and entries or totals that expand past a cap (headers can lie, so sizes are checked while reading)
are refused with a warning naming the entry. Every byte read out counts against the run's one budget
(droidlag.io.budget), whatever the format and the nesting level.

Damaged archives are salvaged: a deflate entry is inflated from its own bytes with the same code as gzip (what came
out before the damage is kept, with a warning), and an entry whose local header is not where the central directory
says (bytes lost or added before it) is looked for nearby."""
from __future__ import annotations

import contextlib
import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator
from io import BytesIO
from pathlib import Path, PurePosixPath

from droidlag.errors import InputError, ReadWarning
from droidlag.io.budget import current
from droidlag.io.source import GZIP_MAGIC, _Inflate, _stream_warnings, gunzip, utf8_blocks, utf8_text

# One entry (bugreport text is streamed, never held whole: the cap is the run's per-stream one).
MAX_ENTRY_BYTES = 1024**3
MAX_TOTAL_BYTES = 1024**3
MAX_RATIO = 200
MAX_ENTRIES = 10000
# How far from the central directory's offset a local header is looked for (bytes lost or added before it).
HEADER_SEARCH = 4096
_LOCAL_SIG = b"PK\x03\x04"


def _bad_path(name: str) -> bool:
    p = PurePosixPath(name.replace("\\", "/"))
    return name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":") or ".." in p.parts


def unsafe_reason(info: zipfile.ZipInfo) -> str | None:
    """Why an entry must not be read (path outside the archive, link, encrypted, too large, bomb-like ratio), or
    None."""
    if _bad_path(info.filename):
        return "path outside the archive"
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return "symbolic link"
    if info.flag_bits & 0x1:
        return "encrypted"
    if info.file_size > MAX_ENTRY_BYTES:
        return f"expands to {info.file_size} bytes, over the {MAX_ENTRY_BYTES}-byte limit"
    if info.compress_size and info.file_size / info.compress_size > MAX_RATIO and info.file_size > 1 << 20:
        return f"compression ratio {info.file_size / info.compress_size:.0f}:1 (possible zip bomb)"
    return None


def _data_start(buf: memoryview, info: zipfile.ZipInfo) -> int | None:
    """Offset of the entry's data: after its local header at the central directory's offset, or at the nearest
    local header with the same name (a zip with bytes lost or added before the central directory)."""
    raw_name = info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437", "replace")
    off = info.header_offset

    def name_at(cand: int) -> bool:
        if cand < 0 or buf[cand:cand + 4] != _LOCAL_SIG:
            return False
        n = int(struct.unpack("<H", buf[cand + 26:cand + 28])[0])
        return bytes(buf[cand + 30:cand + 30 + n]) == raw_name

    if name_at(off):
        cand = off
    else:   # the signatures within HEADER_SEARCH bytes (found by bytes.find, not byte by byte), nearest first
        lo = max(off - HEADER_SEARCH + 1, 0)
        region = bytes(buf[lo:off + HEADER_SEARCH + 3])
        found = []
        at = region.find(_LOCAL_SIG)
        while at >= 0:
            found.append(lo + at)
            at = region.find(_LOCAL_SIG, at + 1)
        found.sort(key=lambda c: (abs(c - off), c))
        cand = next((c for c in found if name_at(c)), -1)
        if cand < 0:
            return None
    n, m = struct.unpack("<HH", buf[cand + 26:cand + 30])
    return int(cand + 30 + n + m)


def read_entry(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: str | Path, warnings: list[ReadWarning],
               limit: int = MAX_ENTRY_BYTES) -> bytes:
    """An entry's bytes as the readers take them (UTF-16 text transcoded: io.source.utf8_text), refused
    (InputError) past `limit` or the run's budget; damage is salvaged with a warning. zipfile.BadZipFile when the
    entry's data cannot be found at all."""
    with contextlib.closing(entry_blocks(zf, info, path, warnings, limit)) as blocks:
        return utf8_text(b"".join(blocks))


def entry_blocks(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: str | Path, warnings: list[ReadWarning],
                 limit: int = MAX_ENTRY_BYTES) -> Generator[bytes, None, None]:
    """read_entry's bytes as blocks (at most 1 MiB each), never held whole: the same caps, salvage and warnings
    (the size and checksum are checked at the end). Close the iterator when not reading it to the end."""
    where = f"{path}!{info.filename}"
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or not isinstance(zf.fp, BytesIO):
        yield from _blocks_via_zipfile(zf, info, where, limit)
        return
    size = 0
    crc = 0
    with zf.fp.getbuffer() as whole:
        buf = whole.toreadonly()
        try:
            start = _data_start(buf, info)
            if start is None:
                raise zipfile.BadZipFile("local header not found")
            body = buf[start:start + info.compress_size]
            if len(body) < info.compress_size:
                warnings.append(ReadWarning(where, f"entry cut short: {len(body)} of {info.compress_size} bytes"))
            if info.compress_type == zipfile.ZIP_STORED:
                if len(body) > limit:
                    raise InputError(where, f"entry holds more than {limit} bytes; refused")
                current().take(len(body), where, "archive entry")
                pieces: Iterable[bytes] = (bytes(body[k:k + (1 << 20)]) for k in range(0, len(body), 1 << 20))
                inf = None
            else:
                inf = _Inflate(body, 0, -zlib.MAX_WBITS, where, limit)
                pieces = inf
            for block in pieces:
                size += len(block)
                crc = zlib.crc32(block, crc)
                yield block
            if inf is not None:
                ws: list[ReadWarning] = []
                _stream_warnings(inf, body, where, ws)
                warnings += [ReadWarning(where, w.message.replace("zlib stream", "deflate data"), offset=w.offset)
                             for w in ws]
            del body
        finally:
            buf.release()
    if size != info.file_size or crc != info.CRC:
        warnings.append(ReadWarning(where, f"entry damaged: {size} bytes read of {info.file_size} declared"
                                    + ("" if size != info.file_size else ", checksum differs")
                                    + "; read what was there"))


def _blocks_via_zipfile(zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, limit: int) -> Generator[bytes, None, None]:
    """Other compression methods (bzip2, lzma) or a zip read from a file: zipfile's reader, capped while reading."""
    got = 0
    with zf.open(info) as fh:
        while chunk := fh.read(1 << 20):
            got += len(chunk)
            current().take(len(chunk), where, "archive entry")
            if got > limit:
                raise InputError(where, f"entry expands past {limit} bytes; refused (possible zip bomb)")
            yield chunk


def open_zip(path: str | Path, data: bytes) -> zipfile.ZipFile:
    """Open zip bytes after the archive-wide checks (readable, entry count, declared total size)."""
    try:
        zf = zipfile.ZipFile(BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, struct.error, NotImplementedError) as e:
        raise InputError(path, f"not a readable zip archive ({e})") from None
    if len(infos) > MAX_ENTRIES:
        raise InputError(path, f"archive has {len(infos)} entries, over the {MAX_ENTRIES}-entry limit")
    if sum(i.file_size for i in infos) > MAX_TOTAL_BYTES:
        raise InputError(path, f"archive expands past {MAX_TOTAL_BYTES} bytes; refused (possible zip bomb)")
    return zf


_ENTRY_ERRORS = (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError, ValueError, zlib.error,
                 struct.error)


def safe_infos(path: str | Path, zf: zipfile.ZipFile, warnings: list[ReadWarning],
               want: Callable[[zipfile.ZipInfo], bool] = lambda info: True) -> Iterator[zipfile.ZipInfo]:
    """Each wanted, safe file entry (counted against the run's entry cap); unsafe ones become warnings naming them."""
    budget = current()
    for info in zf.infolist():
        if not info.filename:
            warnings.append(ReadWarning(str(path), "an entry with no name refused"))
            continue
        if info.is_dir() or not want(info):
            continue
        why = unsafe_reason(info)
        if why:
            warnings.append(ReadWarning(str(path), f"entry {info.filename!r} refused: {why}"))
            continue
        budget.entry(path)
        yield info


def safe_entries(path: str | Path, zf: zipfile.ZipFile, warnings: list[ReadWarning],
                 want: Callable[[zipfile.ZipInfo], bool] = lambda info: True) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of each wanted, safe file entry; unsafe or unreadable entries become warnings, damaged ones are
    salvaged with a warning, and the archive's total and the run's budget are capped while reading."""
    total = 0
    for info in safe_infos(path, zf, warnings, want):
        try:
            raw = read_entry(zf, info, path, warnings)
        except _ENTRY_ERRORS as e:
            warnings.append(ReadWarning(str(path), f"entry {info.filename!r} unreadable ({e}); skipped"))
            continue
        total += len(raw)
        if total > MAX_TOTAL_BYTES:
            raise InputError(path, f"archive expands past {MAX_TOTAL_BYTES} bytes; refused (possible zip bomb)")
        box = [raw]
        del raw   # the suspended generator keeps no reference: the caller may free the entry when done with it
        yield info.filename, box.pop()


class EntryStream:
    """The bytes of the safe entries of one zip as streams of blocks (`blocks(info)`), never an entry whole: the
    archive's total is capped across entries, and an entry that cannot be read on (damage zipfile cannot get past)
    keeps what came before with a warning naming it."""

    def __init__(self, path: str | Path, zf: zipfile.ZipFile, warnings: list[ReadWarning]) -> None:
        self.path, self.zf, self.warnings = path, zf, warnings
        self.total = 0
        self.got = 0          # bytes read from the last entry
        self.failed = False   # the last entry could not be read to its end

    def blocks(self, info: zipfile.ZipInfo) -> Generator[bytes, None, None]:
        got = self.got = 0
        self.failed = False
        gen = utf8_blocks(entry_blocks(self.zf, info, self.path, self.warnings))   # UTF-16 text transcoded
        try:
            for block in gen:
                got += len(block)
                self.got = got
                self.total += len(block)
                if self.total > MAX_TOTAL_BYTES:
                    raise InputError(self.path, f"archive expands past {MAX_TOTAL_BYTES} bytes; refused (possible "
                                     "zip bomb)")
                yield block
        except _ENTRY_ERRORS as e:
            self.failed = True
            what = f"read the {got} bytes before it" if got else "skipped"
            self.warnings.append(ReadWarning(str(self.path), f"entry {info.filename!r} unreadable ({e}); {what}"))
        finally:
            gen.close()


# ---- tar (log bundles: .tar, .tar.gz, .tgz) ---------------------------------------------------------------------
def is_tar(head: bytes) -> bool:
    """POSIX/GNU tar: `ustar` at byte 257 of the first header."""
    return head[257:262] == b"ustar"


def tar_entries(path: str | Path, data: bytes, warnings: list[ReadWarning]) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of each safe regular file in a tar (gzip'd or not: undone here, within the run's budget).
    Links, devices, absolute or `..` paths and oversized entries are refused with a warning; a tar cut short yields
    the entries before the cut and a warning."""
    if data[:2] == GZIP_MAGIC:
        data = gunzip(data, path, warnings)
    budget = current()
    total = 0
    try:
        tf = tarfile.open(fileobj=BytesIO(data), mode="r:")
    except (tarfile.TarError, OSError, EOFError, ValueError) as e:
        raise InputError(path, f"not a readable tar archive ({e})") from None
    members = iter(tf)
    while True:
        try:
            member = next(members)
        except StopIteration:
            break
        except (tarfile.TarError, OSError, EOFError, ValueError, UnicodeDecodeError) as e:
            warnings.append(ReadWarning(str(path), f"tar archive damaged after {total} bytes of entries ({e}); "
                                        "read the entries before it"))
            break
        why = _tar_unsafe(member)
        if why == "":
            continue
        if why:
            warnings.append(ReadWarning(str(path), f"entry {member.name!r} refused: {why}"))
            continue
        budget.entry(path)
        if member.offset_data + member.size > len(data):
            warnings.append(ReadWarning(str(path), f"entry {member.name!r} cut short; read what was there"))
        raw = data[member.offset_data:member.offset_data + member.size]
        budget.take(len(raw), f"{path}!{member.name}", "archive entry")
        total += len(raw)
        if total > MAX_TOTAL_BYTES:
            raise InputError(path, f"archive holds more than {MAX_TOTAL_BYTES} bytes; refused")
        yield member.name, utf8_text(raw)


def _tar_unsafe(member: tarfile.TarInfo) -> str | None:
    """Why a tar member must not be read, "" for a folder (nothing to read, nothing to say), or None."""
    if member.isdir():
        return ""
    if _bad_path(member.name):
        return "path outside the archive"
    if member.issym() or member.islnk():
        return "link"
    if not member.isreg():
        return "not a regular file (device, fifo)"
    if member.size > MAX_ENTRY_BYTES:
        return f"holds {member.size} bytes, over the {MAX_ENTRY_BYTES}-byte limit"
    return None


def archive_entries(path: str | Path, data: bytes, warnings: list[ReadWarning]) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of the safe file entries of a zip or a tar, gzip'd or not (undone here, within the run's
    budget). InputError when it is neither."""
    if data[:2] == GZIP_MAGIC:
        data = gunzip(data, path, warnings)
    if is_tar(data[:512]):
        yield from tar_entries(path, data, warnings)
        return
    if data[:2] != b"PK":
        raise InputError(path, "not a zip or tar archive")
    yield from safe_entries(path, open_zip(path, data), warnings)
