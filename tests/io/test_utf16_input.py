"""UTF-16 text with a byte-order mark (Windows PowerShell 5's `adb shell dumpsys gfxinfo pkg > gfx.txt`, Notepad's
"Unicode" save) is read as the same text in UTF-8: found by the new-user trial of 2026-11-28, where such a file was
"not a format droidlag reads". Inputs are corpus files re-encoded here; expected values come from reading the
original UTF-8 file."""
from __future__ import annotations

from pathlib import Path

import pytest

from droidlag.errors import InputError
from droidlag.io import read_trace
from droidlag.io.detect import load
from droidlag.io.dump_units import load_units
from droidlag.io.gfxinfo import read_gfxinfo_file
from droidlag.io.inputs import discover

GFXINFO = "gfxinfo/sailfish_android10_dumpsys_gfxinfo.txt"
ATRACE = "systrace/catapult_test_data/decompressed_atrace_data.txt"
DUMP = "anr/chkbugreport_deadlock_vm_traces.txt"


def _powershell(src: Path, dst: Path, codec: str = "utf-16-le") -> Path:
    """The file as PowerShell 5's `>` writes it: a BOM, UTF-16, CR LF line ends."""
    bom = b"\xff\xfe" if codec == "utf-16-le" else b"\xfe\xff"
    text = src.read_bytes().decode("utf-8").replace("\r\n", "\n").replace("\n", "\r\n")
    dst.write_bytes(bom + text.encode(codec))
    return dst


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_gfxinfo_reads_like_the_original(corpus: Path, tmp_path: Path, codec: str):
    original = read_gfxinfo_file(corpus / GFXINFO)
    path = _powershell(corpus / GFXINFO, tmp_path / "gfx.txt", codec)
    assert load(path)[0] == "gfxinfo" == discover([path])[0].kind   # what `analyze` and `fleet ingest` go by
    dump = read_gfxinfo_file(path)
    assert [(p.pid, p.name) for p in dump.processes] == [(p.pid, p.name) for p in original.processes]
    assert dump.framestats().height == original.framestats().height > 0
    assert [p.summary.get("total_frames_rendered") for p in dump.processes] == \
        [p.summary.get("total_frames_rendered") for p in original.processes]


def test_utf16_systrace_text_reads_like_the_original(corpus: Path, tmp_path: Path):
    original = read_trace(corpus / ATRACE)
    trace = read_trace(_powershell(corpus / ATRACE, tmp_path / "trace.txt"))
    assert trace.slices.height == original.slices.height > 0
    assert sorted(trace.slices["name"].to_list()) == sorted(original.slices["name"].to_list())


def test_utf16_thread_dump_reads_like_the_original(corpus: Path, tmp_path: Path):
    path = _powershell(corpus / DUMP, tmp_path / "traces.txt")
    kind, _data, _warnings = load(path)
    assert kind == "anr"
    [item] = discover([path])   # how `analyze` picks the reader
    assert item.kind == "anr"
    threads = lambda units: [(t.name, t.tid) for u in units for p in u.processes for t in p.threads]
    assert threads(load_units(path)) == threads(load_units(corpus / DUMP))
    assert threads(load_units(path))


def test_binary_opening_like_a_bom_is_not_taken_for_text(tmp_path: Path):
    """FF FE then bytes that are not printable UTF-16 text stay bytes: still not a format droidlag reads."""
    path = tmp_path / "blob.bin"
    path.write_bytes(b"\xff\xfe" + bytes(range(256)) * 64)
    with pytest.raises(InputError, match="not a format droidlag reads"):
        load(path)
