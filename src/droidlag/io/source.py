"""Loading a user's file safely: missing, directory, empty and oversized inputs become InputError; gzip is undone
with a size cap (bombs) and a truncated gzip stream yields what decompressed plus a warning."""
from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path

from droidlag.errors import InputError, ReadWarning

# Upper bound for any one input file, and for what one compressed input may expand to; real captures are far below.
MAX_INPUT_BYTES = 2 * 1024**3
MAX_DECOMPRESSED_BYTES = 1024**3
# How much of an input is enough to tell what it is.
SNIFF_BYTES = 256 * 1024
GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path: str | Path) -> bytes:
    """The raw bytes of a user's file, or InputError naming it (missing, a directory, unreadable, empty)."""
    p = Path(path)
    if not p.exists():
        raise InputError(p, "no such file")
    if p.is_dir():
        raise InputError(p, "is a directory, not a file")
    try:
        size = p.stat().st_size
        if size > MAX_INPUT_BYTES:
            raise InputError(p, f"file is {size} bytes, over the {MAX_INPUT_BYTES}-byte limit")
        data = p.read_bytes()
    except PermissionError:
        raise InputError(p, "permission denied") from None
    except OSError as e:
        raise InputError(p, f"cannot read: {e.strerror or e}") from None
    if not data.strip():
        raise InputError(p, "file is empty")
    return data


def gunzip_head(data: bytes, path: str | Path, size: int = SNIFF_BYTES) -> bytes:
    """The first `size` decompressed bytes of gzip data, enough to tell what it holds without expanding it all."""
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[:size], size)
    except zlib.error as e:
        raise InputError(path, f"corrupt gzip data ({e})") from None


def gunzip(data: bytes, path: str | Path, warnings: list[ReadWarning],
           limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """Decompress gzip data (several members allowed). A truncated or corrupt stream returns what was decompressed
    and adds a warning saying where it stopped; output beyond `limit` bytes is refused as a bomb."""
    out = bytearray()
    total = 0
    pos = 0
    while pos < len(data) and data[pos:pos + 2] == GZIP_MAGIC:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            chunk_in = data[pos:]
            while chunk_in:
                piece = d.decompress(chunk_in, 1 << 24)
                total += len(piece)
                if total > limit:
                    raise InputError(path, f"gzip expands past {limit} bytes; refused (possible gzip bomb)")
                out += piece
                chunk_in = d.unconsumed_tail
            if not d.eof:
                warnings.append(ReadWarning(str(path), f"gzip stream truncated after {total} decompressed bytes; "
                                            "read what was there", offset=len(data)))
                break
        except zlib.error as e:
            warnings.append(ReadWarning(str(path), f"gzip stream corrupt ({e}) after {total} decompressed bytes; "
                                        "read what was there", offset=pos))
            break
        consumed = len(data) - pos - len(d.unused_data)
        pos += consumed
        rest = d.unused_data
        if not rest.strip(b"\x00"):
            break
    return bytes(out)


def gunzip_stream(path: str | Path, warnings: list[ReadWarning], limit: int = MAX_DECOMPRESSED_BYTES,
                  piece: int = 1 << 20, out_max: int = 8 << 20) -> Iterator[bytes]:
    """gunzip's rules (several members, salvage of a truncated or corrupt stream with a warning, the bomb limit) on
    a file read `piece` bytes at a time, yielding decompressed chunks of at most `out_max` bytes: neither the file
    nor its expansion is ever held whole."""
    total = 0
    member_at = 0          # file offset of the current member
    fed = 0                # compressed bytes read from the file so far
    with open(path, "rb") as f:
        def more() -> bytes:
            nonlocal fed
            block = f.read(piece)
            fed += len(block)
            return block

        buf = more()
        while len(buf) >= 2 and buf[:2] == GZIP_MAGIC:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            while not d.eof:
                if not buf:
                    warnings.append(ReadWarning(str(path), f"gzip stream truncated after {total} decompressed "
                                                "bytes; read what was there", offset=fed))
                    return
                try:
                    out = d.decompress(buf, out_max)
                except zlib.error as e:
                    warnings.append(ReadWarning(str(path), f"gzip stream corrupt ({e}) after {total} decompressed "
                                                "bytes; read what was there", offset=member_at))
                    return
                total += len(out)
                if total > limit:
                    raise InputError(path, f"gzip expands past {limit} bytes; refused (possible gzip bomb)")
                if out:
                    yield out
                buf = d.unconsumed_tail or (b"" if d.eof else more())
            buf = d.unused_data
            member_at = fed - len(buf)
            while len(buf) < 2:
                block = more()
                if not block:
                    break
                buf += block


def inflate_zlib(data: bytes, path: str | Path, warnings: list[ReadWarning], limit: int = MAX_DECOMPRESSED_BYTES,
                 piece: int = 4096) -> bytes:
    """Decompress a raw zlib stream (atrace -z) with the same salvage and bomb rules as gunzip.

    The stream is fed `piece` bytes at a time and a failing piece once more byte by byte from the state before it,
    so everything that inflated before damage is kept; data after the end of the stream is reported."""
    d = zlib.decompressobj()
    out: list[bytes] = []
    total = 0
    for i in range(0, len(data), piece):
        saved = d.copy()
        try:
            chunk = d.decompress(data[i:i + piece])
        except zlib.error as e:
            d = saved
            for k in range(i, min(i + piece, len(data))):
                try:
                    out.append(d.decompress(data[k:k + 1]))
                except zlib.error:
                    break
            got = sum(len(x) for x in out)
            warnings.append(ReadWarning(str(path), f"zlib stream corrupt ({e}) at byte {k}; kept the {got} bytes "
                                        "decompressed before it", offset=k))
            return b"".join(out)
        total += len(chunk)
        if total > limit:
            raise InputError(path, f"zlib data expands past {limit} bytes; refused (possible bomb)")
        out.append(chunk)
        if d.eof:
            trailing = len(d.unused_data) + len(data) - (i + piece) if i + piece < len(data) else len(d.unused_data)
            if trailing and data[len(data) - trailing:].strip(b"\x00\r\n \t"):
                warnings.append(ReadWarning(str(path), f"{trailing} bytes after the end of the zlib stream ignored",
                                            offset=len(data) - trailing))
            return b"".join(out)
    warnings.append(ReadWarning(str(path), f"zlib stream truncated after {total} decompressed bytes; "
                                "read what was there", offset=len(data)))
    return b"".join(out)


def read_head(path: str | Path, size: int = SNIFF_BYTES) -> bytes:
    """The first `size` bytes of a user's file (enough to tell what it is), with read_bytes' checks: InputError
    naming it when missing, a directory, unreadable, oversized or empty. Lets a streaming reader pick the format
    without loading the file."""
    p = Path(path)
    if not p.exists():
        raise InputError(p, "no such file")
    if p.is_dir():
        raise InputError(p, "is a directory, not a file")
    try:
        file_size = p.stat().st_size
        if file_size > MAX_INPUT_BYTES:
            raise InputError(p, f"file is {file_size} bytes, over the {MAX_INPUT_BYTES}-byte limit")
        with open(p, "rb") as f:
            head = f.read(size)
    except PermissionError:
        raise InputError(p, "permission denied") from None
    except OSError as e:
        raise InputError(p, f"cannot read: {e.strerror or e}") from None
    if not head.strip() and file_size <= size:
        raise InputError(p, "file is empty")
    return head

