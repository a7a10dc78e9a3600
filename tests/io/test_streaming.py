"""Readers that stream (issue 18, scale): gfxinfo and bugreport text are decoded and parsed a few MiB at a time, so
a 200 MB input is never held whole beside its model. Chunk boundaries must change nothing: each test cuts real
corpus files into tiny chunks (every boundary lands mid-line, inside CR LF pairs and UTF-8 sequences) and compares
with the reading of the whole text by another route (the text split at once, anr.parse_text, counted lines)."""
from __future__ import annotations

import io
import re
import zipfile
import zlib
from pathlib import Path

import pytest
from tests.conftest import corpus_file

from droidlag.errors import ReadWarning
from droidlag.io import bugreport as br
from droidlag.io import source
from droidlag.io.anr import decode, parse_text
from droidlag.io.gfxinfo import read_gfxinfo, read_gfxinfo_file
from droidlag.io.source import decode_text, inflate_bounded, text_chunks

GFXINFO = "gfxinfo/sailfish_android10_dumpsys_gfxinfo.txt"
GRAPHICSSTATS = "gfxinfo/sailfish_android10_dumpsys_graphicsstats.txt"
BUGREPORT = "bugreport/bugreport-sailfish-QP1A.191005.007.A3-2020-01-08-15-30-07.zip"
DUMP = "anr/sailfish_android10_vm_traces_just_now_54procs.txt"


def _blocks(data: bytes, size: int) -> list[bytes]:
    return [data[k:k + size] for k in range(0, len(data), size)]


def _shape(dump):
    return ([(p.pid, p.name, p.summary, [(w.name, w.summary, w.framestats.to_dict(as_series=False))
                                         for w in p.windows]) for p in dump.processes],
            [(w.message, w.line) for w in dump.warnings], dump.uptime_ms)


@pytest.mark.parametrize("size", [1, 7, 4096])
def test_text_chunks_give_the_lines_of_the_whole_text(corpus, size):
    """CR LF, lone CR, NUL and invalid UTF-8 spread over a real dump: the lines of the chunks joined are those of
    decode_text on the whole bytes, and the UTF-8 warning names the same line."""
    raw = corpus_file(corpus, GFXINFO).read_bytes()[:20000]
    lines = raw.split(b"\n")
    # a lone CR before an empty line would make a CR LF pair: there, LF
    ends = [b"\r\n" if i % 3 == 0 else b"\r" if i % 3 == 1 and lines[i + 1:i + 2] != [b""] else b"\n"
            for i in range(len(lines))]
    mixed = b"".join(ln + end for ln, end in zip(lines, ends))
    mixed = mixed.replace(b"Janky", b"J\xffnky\x00", 1).replace(b"pid", b"p\xe2\x82", 1)
    want_w: list[ReadWarning] = []
    want = decode_text(mixed, "x", want_w).splitlines()
    got_w: list[ReadWarning] = []
    chunks = list(text_chunks(_blocks(mixed, size), "x", got_w))
    assert all(c.endswith("\n") for c in chunks[:-1])
    assert [ln for c in chunks for ln in c.splitlines()] == want
    assert len(want) == len(lines)   # counted on the raw bytes: one line per original line
    assert [w.message for w in got_w] == [w.message for w in want_w]
    first_bad = next(i for i, ln in enumerate(want) if "\ufffd" in ln) + 1
    assert got_w[0].line == first_bad


def test_a_line_with_no_break_is_cut_at_a_character_boundary(monkeypatch):
    monkeypatch.setattr(source, "MAX_CARRY", 10)
    text = "é" * 40   # 80 bytes, no line break: cut into pieces, never inside a 2-byte character
    w: list[ReadWarning] = []
    chunks = list(text_chunks(_blocks(text.encode(), 3), "x", w))
    assert "".join(chunks) == text and len(chunks) > 1 and not w


@pytest.mark.parametrize("rel", [GFXINFO, GRAPHICSSTATS])
def test_gfxinfo_streamed_in_tiny_chunks_equals_the_whole_read(corpus, monkeypatch, rel, tmp_path):
    p = corpus_file(corpus, rel)
    whole = _shape(read_gfxinfo(p.read_text()))   # the text split at once
    monkeypatch.setattr(source, "TEXT_CHUNK", 97)
    assert _shape(read_gfxinfo(p.read_bytes())) == whole
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(p.read_bytes().replace(b"\n", b"\r\n"))
    streamed = read_gfxinfo_file(crlf)
    assert _shape(streamed)[0] == whole[0]
    assert sum(w.framestats.height for q in streamed.processes for w in q.windows) == \
        len(re.findall(rb"(?m)^[01],\d", p.read_bytes()))   # framestats rows counted on the bytes


def test_truncated_framestats_block_keeps_the_next_process(corpus):
    """A block cut before its closing ---PROFILEDATA--- ends at the next `** Graphics info` line: that line
    starts the next process (it was skipped, losing the process that followed the damage)."""
    raw = corpus_file(corpus, GFXINFO).read_text()
    first = raw.index("---PROFILEDATA---")
    close = raw.index("---PROFILEDATA---", first + 1)
    cut = raw[:close] + raw[close + len("---PROFILEDATA---"):]
    dump = read_gfxinfo(cut)
    want = [int(m) for m in re.findall(r"(?m)^\*\* Graphics info for pid (\d+)", raw)]
    assert [q.pid for q in dump.processes if q.pid >= 0] == want
    assert any("not closed" in w.message for w in dump.warnings)


def _units_shape(units):
    return [(u.source, u.snapshot, [(p.pid, p.cmdline, p.kind, p.complete, len(p.threads),
                                     sum(len(t.raw_frames) for t in p.threads)) for p in u.processes],
             sorted(u.wait_channels), len(u.binder)) for u in units]


def _zip(name: str, data: bytes) -> bytes:
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(name, data)
    return b.getvalue()


def test_bugreport_streamed_in_pieces_equals_parse_text(corpus, monkeypatch):
    """The real bugreport (18 MB of text) streamed, its dump sections parsed in 20 kB pieces cut at process
    starts, gives the units anr.parse_text gives on the whole text."""
    data = corpus_file(corpus, BUGREPORT).read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        name = next(n for n in z.namelist() if n.endswith(".txt"))
        text = decode(z.read(name), "x", [])
    whole = [u for u in parse_text(text, f"br.zip!{name}") if u.processes or u.wait_channels]
    monkeypatch.setattr(br, "_PIECE_CHARS", 20000)
    units = br.read_bugreport_zip("br.zip", data)
    assert _units_shape(units) == _units_shape(whole)
    pids = re.findall(r"(?m)^----- pid (\d+) at", text)   # the dumps, counted on the text
    assert sum(1 for u in units for p in u.processes if p.kind != "wchan") == len(pids)


def test_dump_with_crlf_in_a_bugreport_zip_streamed(corpus, monkeypatch):
    raw = corpus_file(corpus, DUMP).read_bytes()
    body = b"== dumpstate\n------ VM TRACES JUST NOW (/data/anr/traces.txt) ------\n" + raw
    monkeypatch.setattr(br, "_PIECE_CHARS", 5000)
    monkeypatch.setattr(source, "TEXT_CHUNK", 4099)
    units = br.read_bugreport_zip("br.zip", _zip("bugreport-x.txt", body.replace(b"\n", b"\r\n")))
    whole = [u for u in parse_text(decode(body, "x", []), "br.zip!bugreport-x.txt") if u.processes or u.wait_channels]
    assert _units_shape(units) == _units_shape(whole)
    assert len(units[0].processes) == raw.count(b"\n----- pid ") + raw.startswith(b"----- pid ")


def test_damaged_deflate_keeps_everything_before_the_bad_byte(corpus):
    """The salvage halves a damaged piece down to the failing byte: the output is what zlib gives fed one byte at
    a time up to its error (the other route)."""
    raw = corpus_file(corpus, DUMP).read_bytes()[:300000]
    comp = bytearray(zlib.compress(raw)[2:-4])   # raw deflate
    comp[len(comp) // 2:len(comp) // 2 + 64] = b"\xff" * 64
    comp = bytes(comp)
    d = zlib.decompressobj(-zlib.MAX_WBITS)
    expect = b""
    for k in range(len(comp)):
        try:
            expect += d.decompress(comp[k:k + 1])
        except zlib.error:
            break
    w: list[ReadWarning] = []
    got = inflate_bounded(comp, -zlib.MAX_WBITS, "x", w)
    assert got == expect and len(got) > len(raw) // 4 and raw.startswith(got[:len(raw) // 4])
    assert "corrupt" in w[0].message


def test_gfxinfo_file_read_from_gzip(corpus, tmp_path):
    import gzip
    p = corpus_file(corpus, GFXINFO)
    gz = tmp_path / "g.txt.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    assert _shape(read_gfxinfo_file(gz))[0] == _shape(read_gfxinfo(p.read_bytes()))[0]
    assert Path(gz).exists()
