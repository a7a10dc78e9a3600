"""Loading a user's file safely: missing, directory, empty and oversized inputs become InputError. All gzip and zlib
data is undone here, bounded (the file's cap, the run's budget, a ratio cap) and salvaging: a truncated or corrupt
stream yields what decompressed plus a warning saying where it stopped."""
from __future__ import annotations

import codecs
import errno
import os
import stat
import zlib
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path

from droidlag.errors import InputError, ReadWarning
from droidlag.io.budget import current

# Upper bound for any one input file, and for what one compressed input may expand to; real captures are far below.
MAX_INPUT_BYTES = 2 * 1024**3
MAX_DECOMPRESSED_BYTES = 1024**3
# How much of an input is enough to tell what it is.
SNIFF_BYTES = 256 * 1024
GZIP_MAGIC = b"\x1f\x8b"
# UTF-16 with a byte-order mark: what Windows PowerShell's `adb shell dumpsys ... > file.txt` (PowerShell 5) and
# Notepad's "Unicode" save write. Such text is transcoded to UTF-8 wherever bytes come out of a file or a container
# (read_bytes, read_head, file_blocks; gunzip, gunzip_head, gunzip_stream; zip and tar entries in io/archive), by
# the one rule of utf8_text / utf8_blocks, so every reader sees the text it knows.
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF16_SAMPLE = 8192


def is_utf16_text(head: bytes) -> bool:
    """True for bytes that open with a UTF-16 byte-order mark and decode, in their first KiBs, to printable text: a
    binary file that happens to start with FF FE (a Perfetto trace never does) is left alone."""
    if head[:2] not in _UTF16_BOMS:
        return False
    try:
        sample = codecs.getincrementaldecoder("utf-16")("strict").decode(head[:_UTF16_SAMPLE])
    except UnicodeDecodeError:
        return False
    text = sum(c.isprintable() or c in "\t\r\n" for c in sample)
    return bool(sample) and text >= 0.95 * len(sample)


def utf8_text(data: bytes) -> bytes:
    """Bytes as the readers take them: UTF-16 text with a BOM (is_utf16_text) transcoded to UTF-8 (the BOM
    dropped), anything else (UTF-8, binary, compressed) unchanged and not copied. The one rule for a file's bytes, a
    gzip member's and an archive entry's."""
    if not is_utf16_text(data):
        return data
    return data.decode("utf-16", "replace").encode("utf-8")


def utf8_blocks(blocks: Iterable[bytes]) -> Generator[bytes, None, None]:
    """utf8_text's rule over a stream of blocks (the first block decides; a code unit split across blocks is kept
    whole by an incremental decoder). The source iterator is closed when this one is."""
    it = iter(blocks)
    try:
        first = next(it, None)
        while first is not None and len(first) < 2:   # too little to see a BOM: take the next block with it
            more = next(it, None)
            if more is None:
                break
            first += more
        if first is None:
            return
        if not is_utf16_text(first):
            yield first
            yield from it
            return
        decoder = codecs.getincrementaldecoder("utf-16")("replace")
        yield decoder.decode(first).encode("utf-8")
        for block in it:
            yield decoder.decode(block).encode("utf-8")
        yield decoder.decode(b"", final=True).encode("utf-8")
    finally:
        close = getattr(it, "close", None)
        if close is not None:
            close()


def head_as_utf8(head: bytes) -> bytes:
    """The first bytes of a file as the readers will see them: UTF-16 text (is_utf16_text) as UTF-8 (a code unit cut
    at the end is dropped), anything else unchanged."""
    if not is_utf16_text(head):
        return head
    return codecs.getincrementaldecoder("utf-16")("replace").decode(head).encode("utf-8")


def input_size(p: Path) -> int:
    """The size of a user's file, from one stat, or InputError naming it: missing, a directory, unreadable, over
    MAX_INPUT_BYTES (three stats, each a system call, were a tenth of a small trace's read when caches were cold)."""
    try:
        st = os.stat(p)
    except PermissionError:
        raise InputError(p, "permission denied") from None
    except OSError as e:
        if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            raise InputError(p, "no such file") from None
        raise InputError(p, f"cannot read: {e.strerror or e}") from None
    except ValueError:    # a NUL in the path: no file has that name
        raise InputError(p, "no such file") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(p, "is a directory, not a file")
    if st.st_size > MAX_INPUT_BYTES:
        raise InputError(p, f"file is {st.st_size} bytes, over the {MAX_INPUT_BYTES}-byte limit")
    return st.st_size


def read_bytes(path: str | Path) -> bytes:
    """The bytes of a user's file as the readers take them (UTF-16 text transcoded to UTF-8), or InputError naming it
    (missing, a directory, unreadable, empty)."""
    return read_file(path)[1]


def read_file(path: str | Path) -> tuple[bytes, bytes]:
    """(the file's own bytes, the bytes as the readers take them): the same object unless the file is UTF-16 text,
    which is transcoded to UTF-8. InputError as read_bytes."""
    p = Path(path)
    input_size(p)
    try:
        raw = p.read_bytes()
    except PermissionError:
        raise InputError(p, "permission denied") from None
    except OSError as e:
        raise InputError(p, f"cannot read: {e.strerror or e}") from None
    data = utf8_text(raw)
    if not data or data.isspace():   # (strip() would copy a large file once more)
        raise InputError(p, "file is empty")
    return raw, data


def gunzip_head(data: bytes, path: str | Path, size: int = SNIFF_BYTES) -> bytes:
    """The first `size` decompressed bytes of gzip data, enough to tell what it holds without expanding it all (as
    the readers will see them: head_as_utf8)."""
    try:
        return head_as_utf8(zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[:size], size))
    except zlib.error as e:
        raise InputError(path, f"corrupt gzip data ({e})") from None


# Input is fed in pieces of this size, output taken in pieces of OUT_PIECE: a bomb never gets a large buffer, and a
# piece that fails is replayed byte by byte so everything before the damage is kept.
IN_PIECE = 64 * 1024
OUT_PIECE = 1 << 20


class _Inflate:
    """One zlib/gzip/deflate stream of `data` from `start`, iterated as output chunks; every byte is counted against
    the run's budget, `limit` (for this file) and the ratio cap. A piece's output is given only once the whole piece
    inflated: a piece that fails is replayed byte by byte from the state before it, so everything before the damage
    is kept. After the iteration: `end` (offset after the stream), `ended` (whether it ended), `error` (what stopped
    it, or None). `produced` is what earlier streams of the same file gave (for the caps)."""

    def __init__(self, data: bytes | memoryview, start: int, wbits: int, path: str | Path, limit: int,
                 produced: int = 0, salvage: bool = True) -> None:
        self.data, self.start, self.wbits, self.path, self.limit = data, start, wbits, path, limit
        self.produced = produced
        self.salvage = salvage     # False: stop at a failed piece without replaying it (only trying the stream)
        self.end: int = len(data)
        self.ended = False
        self.error: str | None = None

    def _keep(self, chunk: bytes, pos: int, got: list[bytes]) -> None:
        if not chunk:
            return
        self.produced += len(chunk)
        if self.produced > self.limit:
            what = "gzip" if self.wbits > zlib.MAX_WBITS else "compressed data"
            raise InputError(self.path, f"{what} expands past {self.limit} bytes; refused (possible {what} bomb)")
        budget = current()
        budget.take(len(chunk), self.path, "decompressed data")
        budget.check_ratio(self.produced, pos - self.start + IN_PIECE, self.path, "compressed data")
        got.append(chunk)

    def _replay(self, d: zlib._Decompress, piece: bytes, pos: int, got: list[bytes], error: str) -> bool:
        """The failed piece again from the state before it, in parts halved on each failure down to one byte, to
        keep all that inflates before the damage; sets end/ended/error. True when the stream ended cleanly inside
        the piece. (Halving, not byte by byte: a damaged 64 KiB piece took 64k calls.)"""
        start, n = 0, len(piece)
        size = max(1, n // 2)
        while start < n:
            part = piece[start:start + size]
            trial = d.copy()
            out: list[bytes] = []
            produced = self.produced
            try:
                self._feed(trial, part, pos + start, out)
            except zlib.error:
                current().used_bytes -= self.produced - produced
                self.produced = produced
                if size == 1:
                    self.end, self.error = pos + start, error
                    return False
                size = max(1, size // 2)
                continue
            got.extend(out)
            d = trial
            if d.eof:
                self.end, self.ended = pos + start + len(part) - len(d.unused_data), True
                return True
            start += len(part)
        self.end, self.error = pos + n, error
        return False

    def _feed(self, d: zlib._Decompress, buf: bytes, pos: int, got: list[bytes]) -> None:
        """Inflate `buf` into `got`, OUT_PIECE at a time, each piece counted (zlib.error on damage)."""
        while True:
            chunk = d.decompress(buf, OUT_PIECE)
            self._keep(chunk, pos, got)
            buf = d.unconsumed_tail
            if d.eof or (not buf and len(chunk) < OUT_PIECE):
                return

    def __iter__(self) -> Iterator[bytes]:
        data, n = self.data, len(self.data)
        d = zlib.decompressobj(self.wbits)
        pos = self.start
        while pos < n:
            piece = bytes(data[pos:pos + IN_PIECE])
            saved, produced_mark = d.copy(), self.produced
            got: list[bytes] = []
            try:
                self._feed(d, piece, pos, got)
            except zlib.error as e:   # undo what this piece gave, then replay it from the state before it
                current().used_bytes -= self.produced - produced_mark
                self.produced = produced_mark
                got = []
                if not self.salvage:
                    self.end, self.error = pos, str(e)
                    return
                self._replay(saved, piece, pos, got, str(e))
                yield from got
                return
            yield from got
            del got
            if d.eof:
                self.end, self.ended = pos + len(piece) - len(d.unused_data), True
                return
            pos += len(piece)
        self.end = n


def _inflate_stream(data: bytes | memoryview, start: int, wbits: int, path: str | Path, out: list[bytes],
                    produced: int, limit: int) -> tuple[int, bool, str | None]:
    """_Inflate collected into `out`: returns (end offset of the stream, whether it ended, the error or None)."""
    inf = _Inflate(data, start, wbits, path, limit, produced)
    out.extend(inf)
    return inf.end, inf.ended, inf.error


def gunzip(data: bytes, path: str | Path, warnings: list[ReadWarning],
           limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """Decompress gzip data (several members allowed), as the readers take it (utf8_text). A truncated or corrupt
    stream returns what was decompressed and adds a warning saying where it stopped; bytes after the last member
    are reported (NUL padding is not); output beyond `limit` bytes, past the run's budget or at a bomb-like ratio is
    refused (InputError)."""
    return utf8_text(_gunzip(data, path, warnings, limit))


def _gunzip(data: bytes, path: str | Path, warnings: list[ReadWarning], limit: int) -> bytes:
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
    """gunzip's rules (several members, salvage of a truncated or corrupt stream with a warning, the bomb limit,
    UTF-16 text transcoded) on a file read `piece` bytes at a time, yielding decompressed chunks of at most `out_max`
    bytes (UTF-16 ones transcoded): neither the file nor its expansion is ever held whole."""
    return utf8_blocks(_gunzip_stream(path, warnings, limit, piece, out_max))


def _gunzip_stream(path: str | Path, warnings: list[ReadWarning], limit: int, piece: int,
                   out_max: int) -> Iterator[bytes]:
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


def inflate_zlib_trial(data: bytes, path: str | Path,
                       limit: int = MAX_DECOMPRESSED_BYTES) -> tuple[bytes, list[ReadWarning], bool]:
    """inflate_zlib without the salvage: (output, warnings, damaged). When damaged (a piece failed), the output
    lacks what inflated before the damage inside that piece and is not to be kept (its share of the run's budget is
    given back); otherwise it is inflate_zlib's, warnings and all."""
    warnings: list[ReadWarning] = []
    inf = _Inflate(memoryview(data), 0, zlib.MAX_WBITS, path, limit, salvage=False)
    out = b"".join(inf)
    if inf.error:
        current().used_bytes -= inf.produced
    _stream_warnings(inf, data, path, warnings)
    return out, warnings, inf.error is not None


def inflate_bounded(data: bytes | memoryview, wbits: int, path: str | Path, warnings: list[ReadWarning],
                    limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """One zlib (wbits 15), raw deflate (-15, zip entries) or gzip (31) stream, bounded and salvaging as gunzip."""
    inf = _Inflate(memoryview(data), 0, wbits, path, limit)
    out = b"".join(inf)
    _stream_warnings(inf, data, path, warnings)
    return out


def _stream_warnings(inf: _Inflate, data: bytes | memoryview, path: str | Path, warnings: list[ReadWarning]) -> None:
    """What an inflated stream says once read: corrupt, truncated or followed by data."""
    got = inf.produced
    if inf.error:
        warnings.append(ReadWarning(str(path), f"zlib stream corrupt ({inf.error}) at byte {inf.end}; kept the {got} "
                                    "bytes decompressed before it", offset=inf.end))
    elif not inf.ended:
        warnings.append(ReadWarning(str(path), f"zlib stream truncated after {got} decompressed bytes; "
                                    "read what was there", offset=len(data)))
    elif bytes(data[inf.end:]).strip(b"\x00\r\n \t"):
        warnings.append(ReadWarning(str(path), f"{len(data) - inf.end} bytes after the end of the zlib stream ignored",
                                    offset=inf.end))


def decode_text(data: bytes | memoryview, source: str | Path, warnings: list[ReadWarning]) -> str:
    """Bytes (or a view of them: no copy of a block cut out of a larger buffer) to text with one line convention:
    invalid UTF-8 is replaced (U+FFFD) and reported with its line and the number of bad spots; CR LF and lone CR
    (classic Mac, some Windows tools) become LF; NUL bytes are dropped."""
    try:
        text = str(data, "utf-8")
    except UnicodeDecodeError as e:
        data = bytes(data)
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
    file_size = input_size(p)
    try:
        with open(p, "rb") as f:
            head = f.read(size)
    except PermissionError:
        raise InputError(p, "permission denied") from None
    except OSError as e:
        raise InputError(p, f"cannot read: {e.strerror or e}") from None
    head = head_as_utf8(head)
    if file_size <= size and not head.strip():     # (strip copies the head: only for a file this small)
        raise InputError(p, "file is empty")
    return head



# ---- streaming: bytes in blocks -> text in line-aligned chunks ---------------------------------------------------
# Text is decoded in chunks of about this many bytes, each ending at a line break: a reader holds one chunk's text
# beside what it has built, never the whole file's bytes and text at once.
TEXT_CHUNK = 4 << 20
# A "line" longer than this (no line break at all) is cut anyway, at a UTF-8 character boundary.
MAX_CARRY = 64 << 20


def file_blocks(path: str | Path, warnings: list[ReadWarning], piece: int = TEXT_CHUNK) -> Iterator[bytes]:
    """The bytes of a user's file (gzip undone, bounded, salvaging: `gunzip_stream`) in blocks of about `piece`
    bytes, with read_bytes' checks (InputError naming it when missing, a directory, unreadable, oversized, empty).
    The file is never held whole."""
    head = read_head(path, 2)
    if head[:2] == GZIP_MAGIC:
        yield from gunzip_stream(path, warnings, out_max=piece)
        return
    yield from utf8_blocks(_raw_blocks(path, piece))


def _raw_blocks(path: str | Path, piece: int) -> Iterator[bytes]:
    try:
        with open(path, "rb") as f:
            while block := f.read(piece):
                yield block
    except OSError as e:
        raise InputError(path, f"cannot read: {e.strerror or e}") from None


def bytes_blocks(data: bytes | bytearray | memoryview, piece: int = TEXT_CHUNK) -> Iterator[bytes]:
    """In-memory bytes in blocks of `piece` (copies of one block at a time)."""
    view = memoryview(data)
    for k in range(0, len(view), piece):
        yield bytes(view[k:k + piece])


def _cut(buf: bytes) -> int:
    """Where to cut `buf` so that the head ends at a line break and a CR LF pair is never split: after the last LF
    or CR that is not the final byte (a final CR may be half of a CR LF); 0 when there is none."""
    body = buf[:-1] if buf.endswith(b"\r") else buf
    return max(body.rfind(b"\n"), body.rfind(b"\r")) + 1


def _utf8_boundary(buf: bytes, at: int) -> int:
    """`at` moved back (at most 3 bytes) so that it does not split a UTF-8 sequence."""
    k = at
    while k > 0 and at - k < 3 and 0x80 <= buf[k] < 0xC0:
        k -= 1
    return k if k > 0 else at


def text_chunks(blocks: Iterable[bytes], source: str | Path, warnings: list[ReadWarning]) -> Iterator[str]:
    """decode_text's rules (invalid UTF-8 replaced and reported once, with the first bad spot's line and the number
    of bad spots; CR LF and lone CR become LF; NULs dropped) applied to a stream of byte blocks: yields text chunks
    that each end at a line break (but the last), so that `chunk.splitlines()` over the chunks gives the lines of
    the whole text."""
    carry = b""
    lines_before = 0
    bad = 0
    first_bad: int | None = None

    def decode(raw: bytes) -> str:
        nonlocal bad, first_bad, lines_before
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            if first_bad is None:
                head = raw[:e.start].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
                first_bad = lines_before + head.count(b"\n") + 1
            text = raw.decode("utf-8", "replace")
            bad += text.count("\ufffd") - raw.count("\ufffd".encode())
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if "\x00" in text:
            text = text.replace("\x00", "")
        lines_before += text.count("\n")
        return text

    for block in blocks:
        buf = carry + block if carry else block
        cut = _cut(buf)
        if cut == 0 and len(buf) > MAX_CARRY:
            cut = _utf8_boundary(buf, len(buf) - 1)
        carry = buf[cut:]
        if cut:
            yield decode(buf[:cut])
        del buf
    if carry:
        yield decode(carry)
    if bad:
        warnings.append(ReadWarning(str(source), f"invalid UTF-8 (mixed encoding?): {bad} undecodable spot(s) "
                                    "replaced, the first here", line=first_bad))
