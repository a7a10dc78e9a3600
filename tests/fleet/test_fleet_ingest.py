"""Ingest into the fleet store: real corpus files, device facts, idempotence, atomic batches under kill -9, bad
manifests. Expected values are counted by another route (grep-like scans of the files, the generator's truth)."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from droidlag.errors import InputError
from droidlag.fleet.ingest import ingest, read_manifest
from droidlag.fleet.store import connect, export_parquet, table_counts
from droidlag.io.device_meta import device_meta

pytestmark = pytest.mark.corpus


def _counts(db: Path) -> dict:
    con = connect(db, read_only=True)
    try:
        return table_counts(con)
    finally:
        con.close()


def test_corpus_bugreport_and_gfxinfo_land_with_their_device_facts(corpus, tmp_path):
    br = corpus / "bugreport" / "bugreport-sailfish-QP1A.191005.007.A3-2020-01-08-15-30-07.zip"
    gfx = corpus / "gfxinfo" / "sailfish_android10_dumpsys_gfxinfo.txt"
    db = tmp_path / "f.duckdb"
    s = ingest([br, gfx], db, jobs=1)
    assert s.added == 2 and not s.failed
    con = duckdb.connect(str(db), read_only=True)
    dev = con.execute("SELECT model, hardware, android_version, storage_total_kb, storage_used_kb, uptime_s "
                      "FROM devices WHERE device_id = 'file:' || (SELECT substr(content_hash, 1, 16) FROM inputs "
                      "WHERE format = 'bugreport')").fetchall()
    # Read off the bugreport by hand: [ro.product.model]: [Pixel], [ro.build.version.release]: [10],
    # [ro.hardware]: [sailfish], "Data-Free: 20349932K / 25497924K total", "Uptime: up 0 weeks, 0 days, 0 hours".
    assert dev == [("Pixel", "sailfish", "10", 25497924, 25497924 - 20349932, 0.0)]
    # One session per process block ("** Graphics info for pid") with its own "Total frames rendered" line before
    # its first "Window:" (processes that drew nothing have none; windows repeat their process's frames).
    blocks = 0
    for block in re.split(r"^\*\* Graphics info for pid", gfx.read_text(), flags=re.M)[1:]:
        blocks += "Total frames rendered" in block.split("\nWindow:")[0]
    assert blocks == 2
    n = con.execute("SELECT count(*) FROM sessions s JOIN inputs i USING (content_hash) "
                    "WHERE i.format = 'gfxinfo'").fetchall()[0][0]
    assert n == blocks
    # The bugreport's last ANR (bluetooth) is an event.
    assert con.execute("SELECT app, kind FROM events").fetchall() == [("com.android.bluetooth", "anr")]


def test_device_meta_reads_the_fingerprint_form():
    m = device_meta("Build fingerprint: 'lge/lv3_tmo_us/lv3:7.0/NRD90U/163521941dae0:user/release-keys'\n")
    assert (m["model"], m["hardware"], m["android_version"]) == ("lge/lv3", "lv3", "7.0")
    assert device_meta("nothing here\n") == {}


def test_generated_fleet_ingests_every_file_with_its_manifest_device(small_fleet, small_fleet_db):
    folder, truth = small_fleet
    c = _counts(small_fleet_db)
    per_kind = {k: sum(1 for e in truth["events"] if e["kind"] == k) for k in ("anr", "snr")}
    assert c["events"] == per_kind["anr"] + per_kind["snr"]
    assert c["sessions"] == len(truth["phones"])
    assert c["devices"] == len(truth["phones"])
    con = duckdb.connect(str(small_fleet_db), read_only=True)
    got = dict(con.execute("SELECT device_id, count(*) FROM events GROUP BY device_id").fetchall())
    want = {p["device_id"]: p["anr"] + p["snr"] for p in truth["phones"] if p["anr"] + p["snr"]}
    assert got == want
    # The generator writes truth.json beside the dumps: reported as skipped with a reason, never silently.
    reasons = con.execute("SELECT path, reason FROM inputs WHERE status = 'skipped'").fetchall()
    assert [Path(p).name for p, _ in reasons] == ["truth.json"]


def test_same_content_twice_adds_nothing(small_fleet, tmp_path):
    folder, _ = small_fleet
    some = sorted(folder.glob("phone-0000[0-2]/*.txt"))
    db = tmp_path / "f.duckdb"
    first = ingest(some, db, jobs=1)
    before = _counts(db)
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(some[0], copy / "renamed.txt")   # same bytes under another name
    again = ingest(some + [copy / "renamed.txt"], db, jobs=1)
    assert first.added == len(some) and again.added == 0 and again.already == len(some) + 1
    assert _counts(db) == before


def test_an_empty_store_reads_each_file_once(small_fleet, tmp_path, monkeypatch):
    """A first ingest has nothing to skip: the driver does not hash the files the workers read and hash anyway;
    a later ingest hashes them to skip what the store holds."""
    import droidlag.fleet.ingest as fi
    folder, _ = small_fleet
    some = sorted(folder.glob("phone-0000[0-1]/*.txt"))
    hashed: list[Path] = []
    real = fi.file_hash
    monkeypatch.setattr(fi, "file_hash", lambda p: hashed.append(p) or real(p))
    db = tmp_path / "f.duckdb"
    first = ingest(some, db, jobs=1)
    assert first.added == len(some) and hashed == []
    again = ingest(some, db, jobs=1)
    assert again.added == 0 and again.already == len(some) and sorted(hashed) == some


def _ingest_cmd(paths: list[Path], db: Path) -> list[str]:
    code = ("import sys; from droidlag.fleet.ingest import ingest; "
            "ingest(sys.argv[2:], sys.argv[1], jobs=1, batch_size=5)")
    return [sys.executable, "-c", code, str(db)] + [str(p) for p in paths]


def test_kill_9_mid_batch_leaves_the_store_as_before_and_a_rerun_completes(small_fleet, tmp_path):
    folder, _ = small_fleet
    files = sorted(folder.glob("phone-0000[0-3]/*.txt"))[:16]
    first, rest = files[:6], files[6:]
    db, ref = tmp_path / "f.duckdb", tmp_path / "ref.duckdb"
    ingest(first, db, jobs=1, batch_size=5)
    before = _counts(db)
    flag = tmp_path / "in-batch"
    env = dict(os.environ, DROIDLAG_FLEET_PAUSE_IN_BATCH=str(flag))
    proc = subprocess.Popen(_ingest_cmd(rest, db), env=env)
    try:
        deadline = time.monotonic() + 120
        while not flag.exists():
            assert proc.poll() is None, "ingest ended before reaching its batch"
            assert time.monotonic() < deadline, "ingest never reached its batch"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert _counts(db) == before   # the killed batch left nothing behind
    s = ingest(rest, db, jobs=1, batch_size=5)
    assert s.added == len(rest)
    ingest(files, ref, jobs=1, batch_size=5)
    assert _counts(db) == _counts(ref)


def test_bad_manifest_names_file_and_line(tmp_path):
    m = tmp_path / "manifest.csv"
    m.write_text("path,device_id\na.txt,phone-1\nb.txt,\n")
    with pytest.raises(InputError) as e:
        read_manifest(m)
    assert e.value.line == 3 and str(m) in str(e.value)
    m.write_text("file,phone\n")
    with pytest.raises(InputError, match="path and device_id"):
        read_manifest(m)


def test_parquet_export_has_every_table_with_its_rows(small_fleet_db, tmp_path):
    con = connect(small_fleet_db, read_only=True)
    try:
        files = export_parquet(con, tmp_path / "pq")
        counts = table_counts(con)
    finally:
        con.close()
    for f in files:
        n = duckdb.sql(f"SELECT count(*) FROM '{f}'").fetchall()[0][0]
        assert n == counts[f.stem], f.stem


def test_trace_sessions_count_the_frames_verdicts(corpus, tmp_path):
    import polars as pl

    from droidlag.findings import frames_from_file
    trace = corpus / "traces" / "nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace"
    db = tmp_path / "f.duckdb"
    assert ingest([trace], db, jobs=1).sessions > 0
    frames = frames_from_file(trace).frames
    want = (frames.height, frames.filter(pl.col("verdict").is_in(["SR", "FF"])).height,
            frames.filter(pl.col("verdict") == "FF").height)
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT sum(frames), sum(slow_frames), sum(frozen_frames) FROM sessions").fetchall()[0] == want
