"""`droidlag analyze` as an unlucky user and an attacker meet it: a bug on one input, a planted link in --out, a
folder of the user's own files, a run killed half-way, its own previous output as input, hostile names on the
terminal. Inputs are real corpus files (mutated here where the case needs it)."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.conftest import corpus_file

from droidlag.cli import main
from droidlag.report.writer import MARKER, TMP_PREFIX

GFXINFO = "gfxinfo/sailfish_android10_dumpsys_gfxinfo.txt"
DEADLOCK = "anr/chkbugreport_deadlock_vm_traces.txt"
# a real capture with a slow frame (traces/SOURCES.md section 7: one "App Deadline Missed"), so its analysis writes
# a Perfetto export beside the report
STARTUP = "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace"


def _inputs(out: Path) -> dict[str, dict]:
    return {Path(i["path"]).name: i for i in json.loads((out / "findings.json").read_text())["inputs"]}


# ---- isolation and the exit-code contract ----------------------------------------------------------------------
def test_bug_while_analysing_one_input_is_an_error_entry(tmp_path, corpus, monkeypatch, capsys):
    import droidlag.findings

    def broken(*a, **k):
        raise RuntimeError("injected bug")
    monkeypatch.setattr(droidlag.findings, "frames_from_file", broken)
    out = tmp_path / "out"
    rc = main(["analyze", str(corpus_file(corpus, GFXINFO)), str(corpus_file(corpus, DEADLOCK)), "--out", str(out),
               "--quiet"])
    assert rc == 1
    got = _inputs(out)
    assert got[Path(GFXINFO).name]["status"] == "error" and "injected bug" in got[Path(GFXINFO).name]["reason"]
    assert got[Path(DEADLOCK).name]["status"] == "analyzed"
    data = json.loads((out / "findings.json").read_text())
    assert any(e["deadlock"] for e in data["hangs"]["events"])      # the rest of the report is kept
    assert "deadlock" in (out / "report.html").read_text()
    assert "internal error" in capsys.readouterr().err


def test_bug_while_rendering_one_section_keeps_the_others(tmp_path, corpus, monkeypatch):
    import droidlag.report.html as html

    def broken(g):
        raise KeyError("injected render bug")
    monkeypatch.setattr(html, "_gfxinfo_section", broken)
    out = tmp_path / "out"
    rc = main(["analyze", str(corpus_file(corpus, GFXINFO)), str(corpus_file(corpus, DEADLOCK)), "--out", str(out),
               "--quiet"])
    assert rc == 1
    assert _inputs(out)[Path(GFXINFO).name]["status"] == "error"
    page = (out / "report.html").read_text()
    assert "injected render bug" in page and "Thread-10" in page


def test_bug_in_one_dump_keeps_the_other_dumps(tmp_path, corpus, monkeypatch):
    import droidlag.findings as findings
    real = findings.analyze_hangs
    bad = str(corpus_file(corpus, "anr/chkbugreport_aidldeadlock_vm_traces.txt"))

    def picky(paths, config=None):
        if any(str(p) == bad for p in paths):
            raise ValueError("injected hangs bug")
        return real(paths, config)
    monkeypatch.setattr(findings, "analyze_hangs", picky)
    found = findings.analyze([bad, corpus_file(corpus, DEADLOCK)])
    status = {Path(i.path).name: i.status for i in found.inputs}
    assert status == {Path(bad).name: "error", Path(DEADLOCK).name: "analyzed"}
    assert found.hangs is not None and any(e.deadlock for e in found.hangs.events)


def test_only_unusable_inputs_exit_3(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 16)
    assert main(["analyze", str(junk), "--out", str(tmp_path / "out"), "--quiet"]) == 3


# ---- the output folder -----------------------------------------------------------------------------------------
def test_planted_link_is_replaced_never_followed(tmp_path, corpus):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").symlink_to(victim)
    gfx = str(corpus_file(corpus, GFXINFO))
    assert main(["analyze", gfx, "--out", str(out), "--quiet"]) == 2      # a link droidlag did not write: refused
    assert victim.read_text() == "precious"
    assert main(["analyze", gfx, "--out", str(out), "--quiet", "--force"]) == 0
    assert victim.read_text() == "precious"
    assert not (out / "report.html").is_symlink() and "<html" in (out / "report.html").read_text()[:300]


def test_folder_with_the_users_files_is_refused_without_force(tmp_path, corpus):
    out = tmp_path / "out"
    out.mkdir()
    (out / "findings.json").write_text("my own notes")
    gfx = str(corpus_file(corpus, GFXINFO))
    assert main(["analyze", gfx, "--out", str(out), "--quiet"]) == 2
    assert (out / "findings.json").read_text() == "my own notes"
    assert main(["analyze", gfx, "--out", str(tmp_path / "fresh"), "--quiet"]) == 0
    assert main(["analyze", gfx, "--out", str(tmp_path / "fresh"), "--quiet"]) == 0   # its own folder: fine


def test_one_generation_and_no_stale_export(tmp_path, corpus):
    out = tmp_path / "out"
    assert main(["analyze", str(corpus_file(corpus, STARTUP)), "--out", str(out), "--quiet"]) == 0
    assert (out / "findings.perfetto-trace").exists()
    assert main(["analyze", str(corpus_file(corpus, GFXINFO)), "--out", str(out), "--quiet"]) == 0
    assert not (out / "findings.perfetto-trace").exists()           # the old trace's export is gone
    _assert_one_generation(out)
    assert not [p for p in out.iterdir() if p.name.startswith(".droidlag-tmp-")]


def _assert_one_generation(out: Path, killed: bool = False) -> None:
    """The folder holds one generation: the marker's files and nothing else. After a kill -9 (killed=True) a temp
    file of the killed run may be left beside them (nothing can remove it then; the next run sweeps it away, which
    the check after a complete run sees)."""
    marker = json.loads((out / MARKER).read_text())
    gen = marker["generation"]
    assert json.loads((out / "findings.json").read_text())["generation"] == gen
    assert f'name="droidlag-generation" content="{gen}"' in (out / "report.html").read_text()
    left = {p.name for p in out.iterdir() if p.name != MARKER}
    if killed:
        left = {name for name in left if not name.startswith(TMP_PREFIX)}
    assert set(marker["files"]) == left


def test_own_output_is_never_read_as_input(tmp_path, corpus):
    data = tmp_path / "data"
    data.mkdir()
    (data / "trace.perfetto-trace").write_bytes(corpus_file(corpus, STARTUP).read_bytes())
    out = data / "droidlag-report"
    for _ in range(2):
        assert main(["analyze", str(data), "--out", str(out), "--quiet"]) == 0
        paths = [i["path"] for i in json.loads((out / "findings.json").read_text())["inputs"]]
        assert paths == [str(data / "trace.perfetto-trace")]
    # and a report folder found elsewhere (by its marker) is not read either
    assert main(["analyze", str(data), "--out", str(tmp_path / "other"), "--quiet"]) == 0
    paths = [i["path"] for i in json.loads((tmp_path / "other" / "findings.json").read_text())["inputs"]]
    assert paths == [str(data / "trace.perfetto-trace")]
    # --out the input folder itself (--force: it holds the user's trace): the trace is read, droidlag's files not
    for _ in range(2):
        assert main(["analyze", str(data), "--out", str(data), "--quiet", "--force"]) == 0
        paths = [i["path"] for i in json.loads((data / "findings.json").read_text())["inputs"]]
        assert paths == [str(data / "trace.perfetto-trace")]
    assert (data / "trace.perfetto-trace").exists()


@pytest.mark.slow
def test_kill_9_never_leaves_a_mixed_generation(tmp_path, corpus):
    """kill -9 at several moments of a run that rewrites an existing report: afterwards either the marker is there
    and findings.json and report.html are of its generation, or there is no marker (an incomplete run, detectable)."""
    out = tmp_path / "out"
    sets = [[str(corpus_file(corpus, STARTUP)), str(corpus_file(corpus, GFXINFO))],
            [str(corpus_file(corpus, GFXINFO))]]     # two inputs sets: two different generations

    def args(k: int) -> list[str]:
        return [sys.executable, "-m", "droidlag.cli", "analyze", *sets[k % 2], "--out", str(out), "--quiet"]
    assert subprocess.run(args(1), timeout=600).returncode == 0
    t0 = time.monotonic()
    assert subprocess.run(args(0), timeout=600).returncode == 0
    full = time.monotonic() - t0
    first = json.loads((out / MARKER).read_text())["generation"]
    for k in range(1, 8):   # spread over the run, its writing phase included
        p = subprocess.Popen(args(k))
        time.sleep(full * (0.6 + 0.06 * k))
        p.send_signal(signal.SIGKILL)
        p.wait()
        if (out / MARKER).exists() and json.loads((out / MARKER).read_text())["generation"] is not None:
            _assert_one_generation(out, killed=True)
        else:   # killed while swapping files: the marker names no generation (incomplete, detectable)
            assert json.loads((out / "findings.json").read_text())   # whole files only: renamed, never cut
    assert subprocess.run(args(1), timeout=600).returncode == 0      # the next run cleans up and completes
    _assert_one_generation(out)
    assert json.loads((out / MARKER).read_text())["generation"] != first


def test_run_killed_while_swapping_files_leaves_a_folder_the_next_run_takes(tmp_path, corpus, monkeypatch):
    """A kill between the first rename and the last marker (simulated: the second rename never returns) leaves a
    marker naming no generation that still lists the files as droidlag's: the next run, without --force, replaces
    them (with no marker at all, the folder was refused as foreign: exit 2)."""
    import droidlag.report.writer as writer

    out = tmp_path / "out"
    gfx = str(corpus_file(corpus, GFXINFO))
    assert main(["analyze", gfx, "--out", str(out), "--quiet"]) == 0
    real, calls = os.replace, []

    def dies(a, b):
        calls.append(b)
        if len(calls) == 2:   # the pending marker is in place, findings.json is not yet renamed
            raise KeyboardInterrupt("killed")
        return real(a, b)
    monkeypatch.setattr(writer.os, "replace", dies)
    assert main(["analyze", gfx, str(corpus_file(corpus, DEADLOCK)), "--out", str(out), "--quiet"]) == 130
    monkeypatch.setattr(writer.os, "replace", real)
    marker = json.loads((out / MARKER).read_text())
    assert marker["generation"] is None and "findings.json" in marker["files"]
    assert main(["analyze", gfx, "--out", str(out), "--quiet"]) == 0
    _assert_one_generation(out)


# ---- the terminal ----------------------------------------------------------------------------------------------
def test_hostile_names_do_not_reach_the_terminal(tmp_path, corpus):
    raw = corpus_file(corpus, DEADLOCK).read_bytes()
    evil = b"\x1b]0;pwned\x07\x1b[2J\x1b[31mcom.evil\x9b1m\xe2\x80\xae"
    f = tmp_path / "traces.txt"
    f.write_bytes(raw.replace(b"Cmd line: com.sonymobile.chkbugreport.testapp", b"Cmd line: " + evil))
    r = subprocess.run([sys.executable, "-m", "droidlag.cli", "analyze", str(f), "--out", str(tmp_path / "o")],
                       capture_output=True, timeout=600)
    assert r.returncode == 0
    assert b"com.evil" in r.stdout
    assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", r.stdout + r.stderr)
    assert "\u202e" not in r.stdout.decode() and "\x9b" not in r.stdout.decode()
    r = subprocess.run([sys.executable, "-m", "droidlag.cli", "hangs", str(f)], capture_output=True, timeout=600)
    assert b"com.evil" in r.stdout and b"\x1b" not in r.stdout


def test_sigterm_removes_the_runs_temp_files(tmp_path, corpus):
    """A zip's entries are extracted to the run's temp folder; SIGTERM mid-run removes it."""
    import zipfile
    z = tmp_path / "in.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for k in range(6):
            zf.write(corpus_file(corpus, STARTUP), f"t{k}.perfetto-trace")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    p = subprocess.Popen([sys.executable, "-m", "droidlag.cli", "analyze", str(z), "--out", str(tmp_path / "o"),
                          "--quiet"], env=env)
    for _ in range(600):   # wait until the entries are out
        if list(tmp.glob("droidlag-*/*/*")):
            break
        time.sleep(0.1)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=120) != 0
    assert not list(tmp.glob("droidlag-*"))
