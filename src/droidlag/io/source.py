"""Loading a user's file safely: missing, directory, empty and oversized inputs become InputError. All gzip and zlib
data is undone here, bounded (the file's cap, the run's budget, a ratio cap) and salvaging: a truncated or corrupt
stream yields what decompressed plus a warning saying where it stopped."""
from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path

from droidlag.errors import InputError, ReadWarning
from droidlag.io.budget import current

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
    if not data or data.isspace():   # (strip() would copy a large file once more)
        raise InputError(p, "file is empty")
    return data


def gunzip_head(data: bytes, path: str | Path, size: int = SNIFF_BYTES) -> bytes:
    """The first `size` decompressed bytes of gzip data, enough to tell what it holds without expanding it all."""
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[:size], size)
    except zlib.error as e:
        raise InputError(path, f"corrupt gzip data ({e})") from None


# Input is fed in pieces of this size, output taken in pieces of OUT_PIECE: a bomb never gets a large buffer, and a
# piece that fails is replayed byte by byte so everything before the damage is kept.
IN_PIECE = 64 * 1024
OUT_PIECE = 1 << 20


def _inflate_stream(data: bytes | memoryview, start: int, wbits: int, path: str | Path, out: list[bytes],
                    produced: int, limit: int) -> tuple[int, bool, str | None]:
    """Inflate one zlib/gzip stream of `data` from `start`, appending to `out`, every byte counted against the run's
    budget, `limit` (for this file) and the ratio cap. Returns (end offset of the stream, whether it ended, the error
    that stopped it or None). `produced` is what earlier streams of the same file gave (for the caps)."""
    budget = current()
    d = zlib.decompressobj(wbits)
    pos = start
    n = len(data)

    def keep(chunk: bytes) -> None:
        nonlocal produced
        if not chunk:
            return
        produced += len(chunk)
        if produced > limit:
            what = "gzip" if wbits > zlib.MAX_WBITS else "compressed data"
            raise InputError(path, f"{what} expands past {limit} bytes; refused (possible {what} bomb)")
        budget.take(len(chunk), path, "decompressed data")
        budget.check_ratio(produced, pos - start + IN_PIECE, path, "compressed data")
        out.append(chunk)

    while pos < n:
        piece = bytes(data[pos:pos + IN_PIECE])
        saved, mark, produced_mark = d.copy(), len(out), produced
        try:
            buf = piece
            while True:
                chunk = d.decompress(buf, OUT_PIECE)
                keep(chunk)
                buf = d.unconsumed_tail
                if d.eof or (not buf and len(chunk) < OUT_PIECE):
                    break
        except zlib.error as e:   # undo what this piece gave, then replay it from the state before it
            d = saved
            del out[mark:]
            budget.used_bytes -= produced - produced_mark
            produced = produced_mark
            for k in range(len(piece)):
                try:
                    keep(d.decompress(piece[k:k + 1]))
                except zlib.error:
                    return pos + k, False, str(e)
                if d.eof:
                    return pos + k + 1 - len(d.unused_data), True, None
            return pos + len(piece), False, str(e)
        if d.eof:
            return pos + len(piece) - len(d.unused_data), True, None
        pos += len(piece)
    return n, False, None


def gunzip(data: bytes, path: str | Path, warnings: list[ReadWarning],
           limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """Decompress gzip data (several members allowed). A truncated or corrupt stream returns what was decompressed
    and adds a warning saying where it stopped; bytes after the last member are reported (NUL padding is not);
    output beyond `limit` bytes, past the run's budget or at a bomb-like ratio is refused (InputError)."""
    out: list[bytes] = []
    pos = 0
    produced = 0
    view = memoryview(data)
    while pos < len(data) and data[pos:pos + 2] == GZIP_MAGIC:
        end, ended, error = _inflate_stream(view, pos, 16 + zlib.MAX_WBITS, path, out, produced, limit)
        produced = sum(len(x) for x in out)
        if error:
            warnings.append(ReadWarning(str(path), f"gzip stream corrupt ({error}) at byte {end} after {produced} "
                                        "decompressed bytes; read what was there", offset=end))
            return b"".join(out)
        if not ended:
            warnings.append(ReadWarning(str(path), f"gzip stream truncated after {produced} decompressed bytes; "
                                        "read what was there", offset=len(data)))
            return b"".join(out)
        pos = end
    rest = data[pos:]
    if rest.strip(b"\x00"):
        warnings.append(ReadWarning(str(path), f"{len(rest)} bytes after the end of the gzip data ignored",
                                    offset=pos))
    return b"".join(out)


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
                current().take(len(out), path, "decompressed data")   # the run's one budget
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


def inflate_zlib(data: bytes, path: str | Path, warnings: list[ReadWarning],
                 limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """Decompress a raw zlib stream (atrace -z) with the same salvage and bomb rules as gunzip: everything that
    inflated before damage is kept, and data after the end of the stream is reported."""
    return inflate_bounded(data, zlib.MAX_WBITS, path, warnings, limit)


def inflate_bounded(data: bytes | memoryview, wbits: int, path: str | Path, warnings: list[ReadWarning],
                    limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """One zlib (wbits 15), raw deflate (-15, zip entries) or gzip (31) stream, bounded and salvaging as gunzip."""
    out: list[bytes] = []
    end, ended, error = _inflate_stream(memoryview(data), 0, wbits, path, out, 0, limit)
    got = sum(len(x) for x in out)
    if error:
        warnings.append(ReadWarning(str(path), f"zlib stream corrupt ({error}) at byte {end}; kept the {got} bytes "
                                    "decompressed before it", offset=end))
    elif not ended:
        warnings.append(ReadWarning(str(path), f"zlib stream truncated after {got} decompressed bytes; "
                                    "read what was there", offset=len(data)))
    elif bytes(data[end:]).strip(b"\x00\r\n \t"):
        warnings.append(ReadWarning(str(path), f"{len(data) - end} bytes after the end of the zlib stream ignored",
                                    offset=end))
    return b"".join(out)


def decode_text(data: bytes, source: str | Path, warnings: list[ReadWarning]) -> str:
    """Bytes to text with one line convention: invalid UTF-8 is replaced (U+FFFD) and reported with its line and
    the number of bad spots; CR LF and lone CR (classic Mac, some Windows tools) become LF; NUL bytes are dropped."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        text = data.decode("utf-8", "replace")
        bad = text.count("\ufffd") - data.count("\ufffd".encode())
        warnings.append(ReadWarning(str(source), f"invalid UTF-8 (mixed encoding?): {bad} undecodable spot(s) "
                                    "replaced, the first here", line=line))
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text


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

