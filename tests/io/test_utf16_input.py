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


# ---- the same rule for gzip members and archive entries (trial finding: a UTF-16 file inside a .gz, a zip or a
# tar was still "not a format droidlag reads" / "no gfxinfo section") -------------------------------------------
def _utf16_bytes(src: Path) -> bytes:
    text = src.read_bytes().decode("utf-8").replace("\r\n", "\n").replace("\n", "\r\n")
    return b"\xff\xfe" + text.encode("utf-16-le")


def test_utf16_inside_gzip_reads_like_the_original(corpus: Path, tmp_path: Path):
    import gzip

    from droidlag.io.gfxinfo import read_gfxinfo
    original = read_gfxinfo_file(corpus / GFXINFO)
    path = tmp_path / "gfx.txt.gz"
    path.write_bytes(gzip.compress(_utf16_bytes(corpus / GFXINFO)))
    assert load(path)[0] == "gfxinfo" == discover([path])[0].kind
    for dump in (read_gfxinfo_file(path), read_gfxinfo(path.read_bytes(), str(path))):   # streamed; fleet's bytes
        assert [(p.pid, p.name) for p in dump.processes] == [(p.pid, p.name) for p in original.processes]
        assert dump.framestats().height == original.framestats().height > 0
    dpath = tmp_path / "traces.txt.gz"
    dpath.write_bytes(gzip.compress(_utf16_bytes(corpus / DUMP)))
    threads = lambda units: [(t.name, t.tid) for u in units for p in u.processes for t in p.threads]
    assert threads(load_units(dpath)) == threads(load_units(corpus / DUMP)) != []


def test_utf16_archive_entries_read_like_the_original(corpus: Path, tmp_path: Path):
    import io
    import tarfile
    import zipfile

    from droidlag.io.archive import archive_entries
    expected = (corpus / GFXINFO).read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    u16 = _utf16_bytes(corpus / GFXINFO)
    zpath = tmp_path / "gfx.zip"
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("gfx.txt", u16)
    tpath = tmp_path / "gfx.tar.gz"
    with tarfile.open(tpath, "w:gz") as t:
        info = tarfile.TarInfo("gfx.txt")
        info.size = len(u16)
        t.addfile(info, io.BytesIO(u16))
    for path in (zpath, tpath):
        [(name, data)] = list(archive_entries(path, path.read_bytes(), []))
        assert name == "gfx.txt" and data == expected   # UTF-8, no BOM: byte for byte the original text


def test_utf16_entry_of_a_bugreport_zip_is_streamed_as_utf8(tmp_path: Path):
    """The bugreport reader streams entries block by block (archive.EntryStream): the rule holds across blocks,
    a code unit split between two blocks included."""
    import io
    import zipfile

    from droidlag.io.archive import EntryStream, open_zip, safe_infos
    text = "".join(f"line {k} \u00e9\u4e2d\n" for k in range(200_000))   # ~3.6 MB in UTF-16: several 1 MiB blocks
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bugreport-x.txt", b"\xfe\xff" + text.encode("utf-16-be"))
    data = buf.getvalue()
    warnings: list = []
    zf = open_zip("b.zip", data)
    stream = EntryStream("b.zip", zf, warnings)
    [info] = list(safe_infos("b.zip", zf, warnings))
    assert b"".join(stream.blocks(info)).decode("utf-8") == text
    assert warnings == []
