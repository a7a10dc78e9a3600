"""Bugreport zips and texts: the real sailfish bugreport, and hostile archives refused with a clear message."""
from __future__ import annotations

import json
import zipfile

import pytest

from conftest import corpus_file
from droidlag.cli import main
from droidlag.errors import InputError
from droidlag.hangs.analyze import events_from_unit
from droidlag.io.bugreport import read_bugreport_zip

ZIP = "bugreport/bugreport-sailfish-QP1A.191005.007.A3-2020-01-08-15-30-07.zip"


def test_real_bugreport_sections(corpus):
    units = read_bugreport_zip(corpus_file(corpus, ZIP))
    titles = {u.source.rsplit("#", 1)[-1]: u for u in units}
    assert set(titles) == {"VM TRACES JUST NOW", "VM TRACES AT LAST ANR"}
    assert titles["VM TRACES JUST NOW"].snapshot and len(titles["VM TRACES JUST NOW"].processes) == 54
    last = titles["VM TRACES AT LAST ANR"]
    (e,) = events_from_unit(last)
    assert e.process == "com.android.bluetooth" and e.blocked_thread.tid == 1
    assert e.evidence["blocked_kernel_state"] == "D"
    # BLOCKED PROCESS WAIT-CHANNELS: pid 1 is init in SyS_epoll_wait
    assert last.wait_channels[1][1] == (None, "SyS_epoll_wait")


def _zip(path, entries, symlink=None):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (0o120777 << 16)
            z.writestr(info, "/etc/passwd")
    return path


def test_traversal_and_symlink_refused(corpus, tmp_path):
    dump = corpus_file(corpus, "anr/sentry-java_thread_dump.txt").read_bytes()
    p = _zip(tmp_path / "evil.zip", [("../../bugreport-x.txt", dump), ("/abs/traces.txt", dump)],
             symlink="FS/data/anr/anr_link")
    with pytest.raises(InputError) as ei:
        read_bugreport_zip(p)
    assert "outside" in str(ei.value) or "link" in str(ei.value)
    p2 = _zip(tmp_path / "mixed.zip", [("bugreport-ok.txt", dump), ("../bugreport-bad.txt", dump)],
              symlink="FS/data/anr/anr_link")
    units = read_bugreport_zip(p2)
    msgs = [w.message for w in units[0].warnings]
    assert any("path outside" in m for m in msgs) and any("symbolic link" in m for m in msgs)
    assert units[0].processes[0].pid == 28941


def test_zip_bomb_refused(tmp_path):
    p = _zip(tmp_path / "bomb.zip", [("bugreport-bomb.txt", b"\0" * (8 << 20))])
    with pytest.raises(InputError) as ei:
        read_bugreport_zip(p)
    assert "bomb" in str(ei.value)


def test_cli_json_over_corpus(corpus, capsys):
    rc = main(["hangs", str(corpus / "anr"), str(corpus / "bugreport"), "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    ev = out["events"][0]
    assert set(ev) >= {"id", "source", "kind", "process", "blocked_thread", "critical_threads", "deadlock",
                       "chain", "cluster", "clusters", "cause", "evidence"}
    assert set(ev["blocked_thread"]) == {"process", "pid", "tid", "sys_tid", "name", "state"}
    assert set(out["clusters"][0]) >= {"id", "size", "cause", "representative", "members"}
    sentry = [e for e in out["events"] if e["source"].endswith("sentry-java_thread_dump.txt")][0]
    assert sentry["critical_threads"][0]["tid"] == 5


def test_cli_non_dump_and_text_summary(corpus, tmp_path, capsys):
    f = tmp_path / "x.bin"
    f.write_bytes(b"\x01\x02garbage")
    assert main(["hangs", str(f)]) == 3
    assert main(["hangs", str(corpus_file(corpus, "anr/chkbugreport_deadlock_vm_traces.txt"))]) == 0
    out = capsys.readouterr().out
    # main and Thread-10 have different stacks: the deadlock event is in two clusters, each listing it once
    assert "DEADLOCK" in out and "clusters 0, 1 (primary 0)" in out and "[cluster 1]" in out
    assert out.count("1 event(s) (1 also in other clusters)") == 2
