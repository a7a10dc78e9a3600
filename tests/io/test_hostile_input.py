"""Hostile and broken input made from real corpus files (mutated here, in the test): no hang, no crash, no silent
loss. Each case is one of issue 18's findings; expected values are counted from the original file by another route
(line counts, the unmutated read)."""
from __future__ import annotations

import gzip
import io
import re
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from tests.conftest import corpus_file

from droidlag.errors import InputError, ReadWarning
from droidlag.io import read_trace
from droidlag.io.budget import Budget, run_budget
from droidlag.io.gfxinfo import read_gfxinfo
from droidlag.io.source import decode_text, gunzip, inflate_zlib

GFXINFO = "gfxinfo/sailfish_android10_dumpsys_gfxinfo.txt"
GRAPHICSSTATS = "gfxinfo/sailfish_android10_dumpsys_graphicsstats.txt"
ATRACE = "systrace/catapult_test_data/decompressed_atrace_data.txt"
LEGACY = "traces/systrace_legacy_2017_2cpu_blockio_writeback_sf.dataonly.html.gz"
BUGREPORT = "bugreport/bugreport-sailfish-QP1A.191005.007.A3-2020-01-08-15-30-07.zip"
DEADLOCK = "anr/chkbugreport_deadlock_vm_traces.txt"
HUGE = "99999999999999999999999"   # beyond int64 (and uint64)


# ---- gzip: the hang, trailing data, the run's budget -----------------------------------------------------------
GUNZIP_SCRIPT = """
import sys, gzip
from droidlag.io.source import gunzip
data = open(sys.argv[1], 'rb').read()
w = []
out = gunzip(data, sys.argv[1], w)
print(len(out), len(w), *(x.message for x in w), sep='\\n')
"""


@pytest.mark.parametrize("tail", [b"", b"\x00" * 64, b"J", "second member"])
def test_gunzip_after_a_member_over_16_mib_ends(tmp_path: Path, corpus, tail):
    """The hang: a member over 16 MiB followed by anything looped for ever (7.7 GB). Run in a subprocess so a
    regression fails on the generous timeout instead of hanging the suite."""
    text = corpus_file(corpus, ATRACE).read_bytes()
    body = text * (17 * 1024 * 1024 // len(text) + 1)              # > 16 MiB decompressed
    data = gzip.compress(body, compresslevel=1)
    expect = len(body)
    if tail == "second member":
        data += gzip.compress(text)
        expect += len(text)
    else:
        data += tail
    f = tmp_path / "multi.gz"
    f.write_bytes(data)
    r = subprocess.run([sys.executable, "-c", GUNZIP_SCRIPT, str(f)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert int(lines[0]) == expect
    if tail == b"J":   # one junk byte: said, not silently dropped
        assert int(lines[1]) == 1 and "1 bytes after the end of the gzip data" in lines[2]
    else:
        assert int(lines[1]) == 0


def test_gunzip_corrupt_member_keeps_what_came_before(corpus):
    text = corpus_file(corpus, ATRACE).read_bytes()
    data = bytearray(gzip.compress(text))
    mid = len(data) // 2
    data[mid:mid + 16] = bytes(16)   # damage in the middle of the deflate stream
    w: list[ReadWarning] = []
    out = gunzip(bytes(data), "x.gz", w)
    assert out[: mid * 2] == text[: mid * 2]   # everything before the damage (deflate ratio > 2 here)
    assert len(w) == 1 and "corrupt" in w[0].message


def test_one_budget_across_streams_of_a_run(corpus):
    """Two files each under the per-file cap are refused together once the run's budget is spent."""
    text = corpus_file(corpus, ATRACE).read_bytes()
    data = gzip.compress(text)
    with run_budget(Budget(max_bytes=int(len(text) * 1.5))) as b:
        gunzip(data, "a.gz", [])
        assert b.used_bytes == len(text)
        with pytest.raises(InputError, match="budget"):
            gunzip(data, "b.gz", [])


def test_zlib_bomb_ratio_is_refused():
    bomb = __import__("zlib").compress(b"\x00" * (128 * 1024 * 1024), 9)   # ~1000:1, past the 64 MiB floor
    with pytest.raises(InputError, match="bomb"):
        inflate_zlib(bomb, "bomb.z", [])


# ---- zip damage ------------------------------------------------------------------------------------------------
def _corrupt_largest_entry(data: bytes) -> bytes:
    zf = zipfile.ZipFile(io.BytesIO(data))
    big = max(zf.infolist(), key=lambda i: i.compress_size)
    out = bytearray(data)
    off = big.header_offset + 30 + len(big.filename) + len(big.extra) + big.compress_size // 2
    for k in range(off, off + 64):
        out[k] ^= 0x5A
    return bytes(out)


def _drop_byte_before_central_directory(data: bytes) -> bytes:
    eocd = data.rfind(b"PK\x05\x06")
    cd = struct.unpack("<I", data[eocd + 16:eocd + 20])[0]
    return data[:cd - 1] + data[cd:]


def test_corrupt_deflate_entry_in_a_bugreport_is_salvaged(corpus):
    """zlib.error crashed the reader; now the text before the damage is read (the ANR is in the first half) and
    the damage is a warning naming the entry."""
    from droidlag.io.bugreport import read_bugreport_zip
    data = _corrupt_largest_entry(corpus_file(corpus, BUGREPORT).read_bytes())
    units = read_bugreport_zip("br.zip", data)
    assert sum(len(u.processes) for u in units) > 0
    msgs = [w.message for u in units for w in u.warnings]
    assert any("entry damaged" in m for m in msgs)


def test_zip_missing_a_byte_before_its_central_directory(tmp_path: Path, corpus):
    """'negative seek': the local headers are found where they are, so both entries read in full."""
    from droidlag.findings import analyze
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(corpus_file(corpus, DEADLOCK), "traces.txt")
        z.write(corpus_file(corpus, GFXINFO), "gfxinfo.txt")
    f = tmp_path / "cut.zip"
    f.write_bytes(_drop_byte_before_central_directory(bio.getvalue()))
    found = analyze([f])
    status = {i.display or str(i.path): i.status for i in found.inputs}
    assert status == {str(f): "analyzed", f"{f}!traces.txt": "analyzed", f"{f}!gfxinfo.txt": "analyzed"}
    whole = read_gfxinfo(corpus_file(corpus, GFXINFO).read_bytes())
    assert found.gfxinfo[0].summary.frames == analyze([corpus_file(corpus, GFXINFO)]).gfxinfo[0].summary.frames
    assert whole.processes
    assert found.hangs is not None and any(e.deadlock for e in found.hangs.events)


# ---- integers beyond 64 bits -----------------------------------------------------------------------------------
EVENTS = ["block_rq_issue", "block_rq_complete", "tracing_mark_write"]


@pytest.mark.parametrize("event", EVENTS)
@pytest.mark.parametrize("count", [1, 2, 6])
def test_systrace_numbers_beyond_int64_skip_one_line(tmp_path: Path, corpus, event, count):
    text = gzip.decompress(corpus_file(corpus, LEGACY).read_bytes())
    i = text.find(f": {event}: ".encode())
    j = i + len(event) + 4
    k = text.index(b"\n", j)
    f = tmp_path / "big.html"
    f.write_bytes(text[:j] + re.sub(rb"\d+", HUGE.encode(), text[j:k], count=count) + text[k:])
    lineno = text.count(b"\n", 0, i) + 1
    trace = read_trace(f)
    assert any(w.line == lineno and ("line skipped" in w.message or "atrace payload" in w.message)
               for w in trace.warnings), trace.warnings[:5]


def test_systrace_tid_beyond_int64(tmp_path: Path, corpus):
    text = corpus_file(corpus, ATRACE).read_bytes()
    lines = text.split(b"\n")
    k = next(n for n, ln in enumerate(lines) if b"tracing_mark_write: B|" in ln)
    lines[k] = re.sub(rb"-(\d+) ", f"-{HUGE} ".encode(), lines[k], count=1)
    f = tmp_path / "bigtid.txt"
    f.write_bytes(b"\n".join(lines))
    trace = read_trace(f)
    assert any(w.line == k + 1 for w in trace.warnings)
    assert len(trace.threads) > 0


def test_framestats_row_beyond_int64_is_skipped_with_a_warning(corpus):
    raw = corpus_file(corpus, GFXINFO).read_bytes()
    whole = read_gfxinfo(raw)
    rows = sum(w.framestats.height for p in whole.processes for w in p.windows)
    lines = raw.split(b"\n")
    k = next(n for n, ln in enumerate(lines) if ln.strip() == b"---PROFILEDATA---") + 2   # first data row
    fields = lines[k].split(b",")
    fields[1] = HUGE.encode()
    lines[k] = b",".join(fields)
    dump = read_gfxinfo(b"\n".join(lines))
    assert sum(w.framestats.height for p in dump.processes for w in p.windows) == rows - 1
    assert any("64 bits" in w.message for w in dump.warnings)


def test_graphicsstats_count_that_is_not_a_number(tmp_path: Path, corpus):
    """`Total frames rendered: &2` crashed the report (int + str) and lost the whole run."""
    from droidlag.findings import analyze
    from droidlag.report.writer import write_outputs
    raw = corpus_file(corpus, GRAPHICSSTATS).read_bytes()
    f = tmp_path / "gs.txt"
    f.write_bytes(raw.replace(b"Total frames rendered: ", b"Total frames rendered: &", 1))
    line = raw[: raw.index(b"Total frames rendered: ")].count(b"\n") + 1
    found = analyze([f])
    assert found.inputs[0].status == "analyzed"
    assert any(f"gs.txt:{line}: 'Total frames rendered' is not a number" in w for w in found.gfxinfo[0].warnings)
    write_outputs(found, tmp_path / "out")
    assert (tmp_path / "out" / "report.html").exists()


# ---- line endings and encodings --------------------------------------------------------------------------------
@pytest.mark.parametrize("rel", [ATRACE, LEGACY])
@pytest.mark.parametrize("eol", [b"\r", b"\r\n"])
def test_systrace_any_line_ending_reads_the_same(tmp_path: Path, corpus, rel, eol):
    raw = corpus_file(corpus, rel).read_bytes()
    text = gzip.decompress(raw) if rel.endswith(".gz") else raw
    f = tmp_path / "eol.txt"
    f.write_bytes(text.replace(b"\n", eol))
    base, got = read_trace(corpus_file(corpus, rel)), read_trace(f)
    assert got.slices.height == base.slices.height and got.thread_states.height == base.thread_states.height
    assert got.block.height == base.block.height
    assert base.slices.height + base.thread_states.height + base.block.height > 0


def test_invalid_utf8_is_replaced_and_said(corpus):
    raw = corpus_file(corpus, GFXINFO).read_bytes()
    k = raw.index(b"Graphics info for pid") + 30
    bad = raw[:k] + b"\xff\xfe" + raw[k:]
    w: list[ReadWarning] = []
    text = decode_text(bad, "g.txt", w)
    assert "\ufffd" in text and len(w) == 1 and w[0].line == raw[:k].count(b"\n") + 1
    dump = read_gfxinfo(bad, "g.txt")
    assert any("invalid UTF-8" in x.message for x in dump.warnings)


def test_perfetto_print_with_invalid_utf8_reads(tmp_path: Path, corpus):
    raw = bytearray(corpus_file(corpus, "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace")
                    .read_bytes())
    n = 0
    for m in re.finditer(rb"B\|\d+\|[A-Za-z]{4}", bytes(raw)):
        raw[m.end() - 2] = 0xFF
        n += 1
    assert n > 100
    f = tmp_path / "bad.pftrace"
    f.write_bytes(bytes(raw))
    trace = read_trace(f)
    replaced = trace.slices.filter(trace.slices["name"].str.contains("\ufffd")).height
    assert replaced >= n // 2
    assert any(w.message.startswith(f"{replaced} slice name(s) held invalid UTF-8") for w in trace.warnings)


def test_one_bad_file_in_a_folder_keeps_the_run(tmp_path, corpus):
    """The graphicsstats `&2` case and a corrupt plain zip beside a good dump: everything reported, exit 0."""
    from droidlag.cli import main
    d = tmp_path / "data"
    d.mkdir()
    gs = corpus_file(corpus, GRAPHICSSTATS).read_bytes()
    (d / "graphicsstats.txt").write_bytes(gs.replace(b"Total frames rendered: ", b"Total frames rendered: &", 1))
    (d / "bad.zip").write_bytes(_corrupt_largest_entry(_zip_of(corpus, GFXINFO)))
    (d / "traces.txt").write_bytes(corpus_file(corpus, DEADLOCK).read_bytes())
    out = tmp_path / "out"
    assert main(["analyze", str(d), "--out", str(out), "--quiet"]) == 0
    import json
    data = json.loads((out / "findings.json").read_text())
    status = {Path(i["path"]).name: i["status"] for i in data["inputs"]}
    assert status["graphicsstats.txt"] == "analyzed" and status["traces.txt"] == "analyzed"
    assert status["bad.zip"] == "analyzed" and "entry damaged" in next(
        i["reason"] for i in data["inputs"] if i["path"].endswith("bad.zip"))
    assert any(e["deadlock"] for e in data["hangs"]["events"])


def _zip_of(corpus, rel: str) -> bytes:
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(corpus_file(corpus, rel), Path(rel).name)
    return bio.getvalue()


@pytest.mark.parametrize("cut", ["before the second lock line", "inside the second lock line"])
def test_truncated_deadlock_dump_says_so(tmp_path, corpus, cut):
    """A dump cut inside the deadlocked process loses the cycle; the reader must say the dump was truncated (two
    such ANR dumps lost a deadlock with no warning)."""
    from droidlag.findings import analyze_hangs
    raw = corpus_file(corpus, DEADLOCK).read_bytes()
    k = raw.index(b"- waiting to lock <0x4064b378>")
    f = tmp_path / "cut.txt"
    f.write_bytes(raw[:k] if cut.startswith("before") else raw[:k + 40])
    report = analyze_hangs([f])
    assert not any(e.deadlock for e in report.events)
    said = [str(w) for w in report.warnings] + [str(e) for e in report.errors]
    assert any("truncated" in w and "pid 628" in w for w in said), said
