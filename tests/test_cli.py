"""The CLI on bad input: one clear line on stderr, a non-zero exit, never a traceback."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from droidlag.cli import main

DROIDLAG = [sys.executable, "-m", "droidlag.cli"]


def run(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DROIDLAG_DEBUG"}
    return subprocess.run([*DROIDLAG, *args], capture_output=True, text=True, env=env, timeout=120)


def _file(name: str, content: bytes):
    def make(d: Path) -> Path:
        (d / name).write_bytes(content)
        return d / name
    return make


@pytest.mark.parametrize("make, reason", [
    (lambda d: d / "missing.perfetto-trace", "no such file"),
    (lambda d: d, "folder holds no files"),   # folders are inputs (issue 12): an empty one says so
    (_file("empty.pftrace", b""), "empty"),
    (_file("junk.bin", bytes(range(256)) * 64), "not a format"),
    (_file("notes.txt", b"shopping list\neggs\nmilk\n"), "not a format"),
])
def test_info_bad_input_is_one_line_and_exit_3(tmp_path: Path, make, reason):
    path = make(tmp_path)
    r = run("info", str(path))
    assert r.returncode == 3
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and reason in lines[0] and str(path) in lines[0]


def test_truncated_gzip_of_junk_is_refused_cleanly(tmp_path: Path):
    import gzip
    p = tmp_path / "t.pftrace.gz"
    p.write_bytes(gzip.compress(b"\xff\xfe garbage " * 1000)[:-20])  # truncated gzip of junk
    r = run("info", str(p))
    assert r.returncode == 3 and "Traceback" not in r.stderr


def test_gzip_bomb_of_junk_is_refused_from_its_first_bytes(tmp_path: Path):
    import gzip
    p = tmp_path / "bomb.gz"
    p.write_bytes(gzip.compress(bytes(64 * 1024 * 1024), compresslevel=1))   # 64 MiB of zeros in ~64 KiB
    r = run("info", str(p))
    assert r.returncode == 3 and "holds no format" in r.stderr


def test_gzip_that_expands_past_the_limit_is_refused():
    import gzip

    from droidlag.errors import InputError
    from droidlag.io.source import gunzip
    data = gzip.compress(b"# tracer: nop\n" + b"x" * (4 * 1024 * 1024))
    with pytest.raises(InputError, match="gzip bomb"):
        gunzip(data, "big.gz", [], limit=1024 * 1024)


def test_help_lists_each_part_in_a_line(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "info" in out


def test_no_command_is_a_usage_error(capsys):
    assert main([]) == 2


def test_info_warnings_name_the_file_and_line(tmp_path: Path, capsys):
    """`info` printed a reader warning without where it was (new-user trial 2026-11-28); every other command names
    file:line. Hand-made atrace text whose line 3 has a counter value that is not a number."""
    f = tmp_path / "t.txt"
    f.write_text("# tracer: nop\n"
                 "  app-10 (10) [000] .... 1.000000: tracing_mark_write: B|10|work\n"
                 "  app-10 (10) [000] .... 1.000100: tracing_mark_write: C|10|queued|many\n"
                 "  app-10 (10) [000] .... 1.000200: tracing_mark_write: E|10\n")
    assert main(["info", str(f)]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "warning:" in ln]
    assert lines and all(f"{f}:3: " in ln for ln in lines), lines
