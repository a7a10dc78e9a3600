"""Every command takes the inputs `analyze` takes (files, folders, zip archives), and input with nothing readable
is exit 3 with the reason, never an all-clear (issue 12, item 1)."""
from __future__ import annotations

import json
import zipfile

import pytest

from conftest import corpus_file
from droidlag.cli import main

NOWINANDROID = "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace"
ANTUTU = "traces/systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz"


def _zip(tmp_path, name, members: dict[str, bytes]):
    p = tmp_path / name
    with zipfile.ZipFile(p, "w") as z:
        for n, data in members.items():
            z.writestr(n, data)
    return p


def test_frames_reads_a_zip_that_analyze_would_open(corpus, tmp_path, capsys):
    z = _zip(tmp_path, "capture.zip", {"traces/antutu.html.gz": corpus_file(corpus, ANTUTU).read_bytes(),
                                       "README.txt": b"notes about the capture\n"})
    assert main(["frames", str(z)]) == 0
    out = capsys.readouterr().out
    assert "capture.zip!traces/antutu.html.gz" in out
    # 252 doFrame in the raw text (SOURCES.md): AnTuTu's 202 ran a traversal and are frames; YY's 50 ran only an
    # animation callback and drew nothing (docs/frames.md, "Callbacks that drew nothing are not frames")
    assert "202 frames" in out
    assert "README.txt: skipped" in out


def test_frames_and_info_read_a_folder(corpus, tmp_path, capsys):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.html.gz").write_bytes(corpus_file(corpus, ANTUTU).read_bytes())
    assert main(["frames", "--json", str(tmp_path / "d")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["frames"] == 202 and doc["summary"]["skipped_callbacks"] == 50   # 252 doFrame
    assert main(["info", str(tmp_path / "d"), str(corpus_file(corpus, NOWINANDROID))]) == 0
    out = capsys.readouterr().out
    assert out.count("trace, ") == 2


def test_nothing_readable_is_exit_3_with_the_reason(tmp_path, capsys):
    z = _zip(tmp_path, "junk.zip", {"a.bin": bytes(range(256)) * 40, "notes.txt": b"hello\n"})
    for cmd in (["frames"], ["info"], ["analyze", "--out", str(tmp_path / "out"), "--quiet"]):
        code = main(cmd + [str(z)])
        err = capsys.readouterr()
        assert code == 3, cmd
        assert "junk.zip" in err.err and "not a format" in err.err, (cmd, err.err)
        assert "no slow frames" not in err.out


def test_analyze_summary_never_says_all_clear_without_input(tmp_path, capsys):
    z = _zip(tmp_path, "empty.zip", {"x.txt": b"nothing here\n"})
    code = main(["analyze", "--out", str(tmp_path / "o"), str(z)])
    out = capsys.readouterr().out
    assert code == 3
    assert "no slow frames" not in out


def test_hangs_and_gc_device_read_a_zip_of_dumps(corpus, tmp_path, capsys):
    dump = corpus_file(corpus, "anr/JaynmBo_APP_traces_samsung.txt").read_bytes()
    z = _zip(tmp_path, "dumps.zip", {"anr/traces.txt": dump})
    assert main(["hangs", str(z)]) == 0
    assert "com.caobo.app" in capsys.readouterr().out       # the ANR'd app named in SOURCES.md
    assert main(["gc", "device", str(z)]) == 0
    out = capsys.readouterr().out
    assert "dumps.zip!anr/traces.txt" in out and "GC runs" in out


def test_folder_walk_leaves_out_documentation_by_name_only(corpus, tmp_path, capsys):
    """Licence, notice, readme and SOURCES files beside the data are not inputs when a folder is walked (the demo
    listed examples/NOTICE and the LICENSE files as skipped inputs); a data file whose name only starts like one,
    and a doc file named on the command line, still are."""
    import shutil

    from droidlag.io.inputs import discover
    dump = corpus / "anr" / "chkbugreport_deadlock_vm_traces.txt"
    folder = tmp_path / "inputs"
    folder.mkdir()
    for name in ("NOTICE", "LICENSE", "LICENSE-Apache-2.0.txt", "licence.md", "COPYING", "README.md", "README",
                 "SOURCES.md"):
        (folder / name).write_text("Licensed under the Apache License, Version 2.0\n")
    shutil.copy(dump, folder / "readme_anr.txt")      # data, whatever its name starts with
    shutil.copy(dump, folder / "license_check.log")
    (folder / "notes.md").write_text("just notes\n")   # not a doc name: still an input (skipped: not a format)
    found = {i.path.name: i.status for i in discover([folder])}
    assert found == {"readme_anr.txt": "pending", "license_check.log": "pending", "notes.md": "skipped"}
    [named] = discover([folder / "NOTICE"])            # named by the user: read, and said why it is skipped
    assert named.status == "skipped" and named.reason == "not a format droidlag reads"


def test_an_empty_or_blank_file_is_named_empty(tmp_path):
    """read_head tells an empty file (no bytes, or only whitespace) from a file whose first bytes are whitespace
    (a Perfetto trace opens with byte 0x0a, a newline)."""
    from droidlag.errors import InputError
    from droidlag.io.source import read_head
    for name, data in (("none.txt", b""), ("blank.txt", b" \n\t\n")):
        f = tmp_path / name
        f.write_bytes(data)
        with pytest.raises(InputError, match="file is empty"):
            read_head(f)
    f = tmp_path / "t.perfetto-trace"
    f.write_bytes(b"\n" + b"x" * 100)
    assert read_head(f) == b"\n" + b"x" * 100
    assert read_head(f, size=1) == b"\n"     # a head of whitespace cut from a longer file is no empty file
