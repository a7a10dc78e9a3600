"""Archives as users send them (tar and tar.gz log bundles, zips of zips) and as attackers craft them (links, `..`
paths, nesting, bombs spread across levels): one budget for the run, every skipped level or entry said, no temp
file left. Contents are real corpus files."""
from __future__ import annotations

import gzip
import io
import os
import struct
import subprocess
import sys
import tarfile
import zipfile

import pytest
from tests.conftest import corpus_file

import droidlag.io.budget as budget
from droidlag.findings import analyze
from droidlag.io.tempfiles import PID_FILE, remove_stale

GFXINFO = "gfxinfo/sailfish_android10_dumpsys_gfxinfo.txt"
DEADLOCK = "anr/chkbugreport_deadlock_vm_traces.txt"


def _status(found) -> dict[str, tuple[str, str | None]]:
    return {i.display or str(i.path): (i.status, i.reason) for i in found.inputs}


@pytest.mark.parametrize("mode, name", [("w", "bundle.tar"), ("w:gz", "bundle.tar.gz")])
def test_tar_bundles_are_read_and_their_traps_refused(tmp_path, corpus, mode, name):
    f = tmp_path / name
    with tarfile.open(f, mode) as t:
        t.add(corpus_file(corpus, DEADLOCK), "logs/traces.txt")
        t.add(corpus_file(corpus, GFXINFO), "logs/gfxinfo.txt")
        link = tarfile.TarInfo("logs/passwd")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        t.addfile(link)
        escape = tarfile.TarInfo("../escape.txt")
        escape.size = 5
        t.addfile(escape, io.BytesIO(b"owned"))
    found = analyze([f])
    got = _status(found)
    assert got[f"{f}!logs/traces.txt"][0] == "analyzed" and got[f"{f}!logs/gfxinfo.txt"][0] == "analyzed"
    reason = got[str(f)][1]
    assert "'logs/passwd' refused: link" in reason and "'../escape.txt' refused: path outside" in reason
    assert any(e.deadlock for e in found.hangs.events)
    assert not (tmp_path.parent / "escape.txt").exists()


def _nest(payload: bytes, name: str, levels: int) -> bytes:
    for lvl in range(1, levels + 1):
        b = io.BytesIO()
        with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(name, payload)
        payload, name = b.getvalue(), f"level{lvl}.zip"
    return payload


def test_nesting_past_the_limit_is_reported_not_dropped(tmp_path, corpus):
    f = tmp_path / "nest.zip"
    f.write_bytes(_nest(corpus_file(corpus, GFXINFO).read_bytes(), "gfxinfo.txt", budget.MAX_DEPTH + 1))
    got = _status(analyze([f]))
    opened = [k for k, (s, _) in got.items() if s == "analyzed"]
    assert len(opened) == budget.MAX_DEPTH            # the archives at levels 1..MAX_DEPTH
    deepest = [v for v in got.values() if v[0] == "skipped"]
    assert len(deepest) == 1 and "past the limit" in deepest[0][1]
    f.write_bytes(_nest(corpus_file(corpus, GFXINFO).read_bytes(), "gfxinfo.txt", budget.MAX_DEPTH))
    got = _status(analyze([f]))
    assert [k for k, (s, _) in got.items() if k.endswith("gfxinfo.txt")] and \
        all(s == "analyzed" for s, _ in got.values())  # the third level is read


def test_one_budget_across_nesting_and_formats(tmp_path, corpus, monkeypatch):
    """Two gzips inside a zip inside a zip: each stream is under every per-file cap, their sum over the run's
    budget; the second is refused with the reason, the first is read."""
    text = corpus_file(corpus, GFXINFO).read_bytes() * 40      # ~1.7 MB of text
    gz = gzip.compress(text)
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.txt.gz", gz)
        z.writestr("b.txt.gz", gz)
    f = tmp_path / "layers.zip"
    f.write_bytes(_nest(b.getvalue(), "inner.zip", 1))
    # before the gzips are undone the run has taken the inner zip (about 2 gzips) and the 2 gzips themselves
    monkeypatch.setattr(budget, "MAX_RUN_BYTES", int(4.2 * len(gz) + 1.5 * len(text)))
    got = _status(analyze([f]))
    inner = {k.rsplit("!", 1)[-1]: v for k, v in got.items() if k.endswith(".gz")}
    assert inner["a.txt.gz"][0] == "analyzed"
    assert inner["b.txt.gz"][0] == "failed" and "budget" in inner["b.txt.gz"][1]
    assert not any(s == "error" for s, _ in got.values())


def test_no_temp_files_after_a_run_and_stale_ones_removed(tmp_path, corpus, monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp / "droidlag-stale123"
    (stale / "x").mkdir(parents=True)
    (stale / PID_FILE).write_text(dead.stdout.strip())         # its process has exited: a kill -9 left it
    other = tmp / "droidlag-iolab-abcd1234"   # another part's scratch folder: never ours to remove
    other.mkdir()
    os.utime(other, (0, 0))
    live = tmp / "droidlag-live1234"
    live.mkdir()
    (live / PID_FILE).write_text(str(os.getppid()))               # a running process: left alone
    f = tmp_path / "a.zip"
    with zipfile.ZipFile(f, "w") as z:
        z.write(corpus_file(corpus, GFXINFO), "g.txt")
    found = analyze([f])
    assert _status(found)[f"{f}!g.txt"][0] == "analyzed"
    assert sorted(p.name for p in tmp.iterdir()) == ["droidlag-iolab-abcd1234", "droidlag-live1234"]
    assert remove_stale(tmp) == []


def test_zip_entry_whose_header_lies_about_its_size(corpus):
    """A deflate entry declaring 1 kB that inflates to 128 MB: the ratio cap stops it while reading, whatever the
    header said, and the refusal names the entry."""
    from droidlag.errors import InputError
    from droidlag.io.archive import open_zip, safe_entries
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(corpus_file(corpus, GFXINFO), "gfxinfo.txt")
        z.writestr("zeros.txt", b"\0" * (128 * 1024 * 1024))
    data = bytearray(b.getvalue())
    for sig, size_at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):   # local and central headers of zeros.txt
        at = data.rindex(sig)
        struct.pack_into("<I", data, at + size_at, 1000)
    zf = open_zip("lie.zip", bytes(data))
    got = []
    with pytest.raises(InputError, match="zeros.txt.*(bomb|expands)"):
        for name, _raw in safe_entries("lie.zip", zf, []):
            got.append(name)
    assert got == ["gfxinfo.txt"]
