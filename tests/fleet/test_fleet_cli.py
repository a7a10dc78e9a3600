"""`droidlag fleet ...` end to end on real corpus files and a generated fleet: exit codes, JSON, the HTML page."""
from __future__ import annotations

import json

import pytest

from droidlag.cli import main

pytestmark = pytest.mark.corpus


def test_ingest_stats_report_export_on_real_files(corpus, tmp_path, capsys):
    db = tmp_path / "f.duckdb"
    rc = main(["fleet", "ingest", str(corpus / "anr"), str(corpus / "gfxinfo"), "--db", str(db), "--json",
               "--quiet", "--jobs", "2"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    # Every file of the two folders is accounted for (added, or skipped with its reason), none silently.
    n_files = sum(1 for d in ("anr", "gfxinfo") for f in (corpus / d).iterdir() if f.suffix != ".md")
    assert out["files"] == n_files == out["added"] + len([s for s in out["skipped"] if "not a thread" in s["reason"]])
    assert out["events"] > 0 and out["clustering"]["new_signatures"] > 0
    assert main(["fleet", "stats", "--db", str(db), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["events"]["anr"] + stats["events"]["snr"] == out["events"]
    assert main(["fleet", "report", "--db", str(db), "--out", str(tmp_path / "rep")]) == 0
    page = (tmp_path / "rep" / "fleet.html").read_text()
    assert "<svg" in page and "Zipf" in page
    assert main(["fleet", "export", "--db", str(db), "--out", str(tmp_path / "pq")]) == 0
    assert (tmp_path / "pq" / "events.parquet").exists()


def test_stats_on_a_missing_store_is_a_clear_error(tmp_path, capsys):
    assert main(["fleet", "stats", "--db", str(tmp_path / "none.duckdb")]) == 3
    assert "no fleet store" in capsys.readouterr().err


def test_bad_manifest_is_an_input_error_not_a_traceback(tmp_path, capsys):
    m = tmp_path / "m.csv"
    m.write_text("path,device_id\nx.txt,\n")
    (tmp_path / "x.txt").write_text("hello\n")
    assert main(["fleet", "ingest", str(tmp_path / "x.txt"), "--db", str(tmp_path / "f.duckdb"),
                 "--manifest", str(m)]) == 3
    err = capsys.readouterr().err
    assert f"{m}:2" in err


def test_generate_says_synthetic(corpus, tmp_path, capsys):
    out = tmp_path / "gen"
    assert main(["fleet", "generate", str(out), "--dumps", str(corpus / "anr"), "--gfxinfo",
                 str(corpus / "gfxinfo" / "sailfish_android10_dumpsys_gfxinfo.txt"), "--phones", "3"]) == 0
    assert "SYNTHETIC" in capsys.readouterr().out
    assert (out / "GENERATED.md").read_text().startswith("# SYNTHETIC FLEET")


def test_ingest_takes_its_files_from_the_manifest(tmp_path, capsys):
    """`fleet ingest --manifest m.csv --db F` with no PATH ingests the files the manifest names; a row naming a
    missing file is said on stderr; neither PATH nor manifest is a usage error."""
    dump = ('"main" prio=5 tid=1 Blocked\n  at com.example.app.Repo.load(Repo.java:42)\n'
            "  - waiting to lock <0x0a1b2c3d> (a java.lang.Object) held by thread 9\n")
    (tmp_path / "a.txt").write_text(dump)
    (tmp_path / "b.txt").write_text(dump.replace("Repo", "Store"))
    m = tmp_path / "m.csv"
    m.write_text("path,device_id\na.txt,p1\nb.txt,p2\nmissing.txt,p3\n")
    db = tmp_path / "f.duckdb"
    assert main(["fleet", "ingest", "--db", str(db), "--manifest", str(m), "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["files"], out["added"]) == (2, 2) and len(out["notes"]) == 1 and "missing.txt" in out["notes"][0]
    assert main(["fleet", "ingest", "--db", str(db)]) == 2


def test_generate_with_a_folder_for_gfxinfo_is_a_usage_error(corpus, tmp_path):
    """--gfxinfo takes one file: a folder was an internal error after writing half a fleet."""
    out = tmp_path / "fleet"
    assert main(["fleet", "generate", str(out), "--dumps", str(corpus / "anr"), "--gfxinfo",
                 str(corpus / "gfxinfo")]) == 2
    assert not out.exists()
