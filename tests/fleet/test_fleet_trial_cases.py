"""Fleet cases from the new-user trial of 2026-11-28 (docs/notes/unseen-trial-2026-11-28.md), each on a hand-made
input: a mistyped --db, manifest rows that name missing files or bad times, files that hold nothing counted once,
a gfxinfo whose counts carry trailing notes (its histogram still gives the session)."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from droidlag.errors import InputError
from droidlag.fleet.ingest import ingest, read_manifest
from droidlag.fleet.parse import parse_input
from droidlag.fleet.store import connect

DUMP = ('"main" prio=5 tid=1 Blocked\n'
        "  | group=\"main\" sCount=1 dsCount=0 flags=1 obj=0x72a1 self=0xb4\n"
        "  at com.example.app.Repo.load(Repo.java:42)\n"
        "  - waiting to lock <0x0a1b2c3d> (a java.lang.Object) held by thread 9\n"
        "  at com.example.app.MainActivity.onCreate(MainActivity.java:20)\n")
# Counts with a note after them (a blog's annotated paste); the histogram's counts are summed by hand below.
GFX = ("Applications Graphics Acceleration Info:\n\n** Graphics info for pid 4242 [com.example.shop] **\n\n"
       "Total frames rendered: 11835 // total\nJanky frames: 120 (1.01%) // janky\n50th percentile: 6ms\n"
       "HISTOGRAM: 5ms=100 6ms=200 16ms=50 17ms=20 18ms=5 800ms=1\n")


@pytest.mark.parametrize("kind", ["text", "other_duckdb"])
def test_a_db_that_is_not_a_fleet_store_is_refused_and_left_alone(tmp_path: Path, kind: str):
    db = tmp_path / "x.db"
    if kind == "text":
        db.write_text("my notes\n")
    else:
        con = duckdb.connect(str(db))
        con.execute("CREATE TABLE t (a INTEGER)")
        con.close()
    before = db.read_bytes()
    for read_only in (True, False):
        with pytest.raises(InputError) as e:
            connect(db, read_only=read_only)
        assert str(db) in str(e.value) and "fleet store" in str(e.value)
    assert db.read_bytes() == before


def test_manifest_rows_naming_missing_files_are_said(tmp_path: Path):
    (tmp_path / "a.txt").write_text(DUMP)
    m = tmp_path / "m.csv"
    m.write_text("path,device_id\na.txt,phone1\ngone.txt,phone2\n")
    s = ingest([tmp_path / "a.txt"], tmp_path / "f.duckdb", manifest=m, jobs=1)
    assert s.added == 1
    assert len(s.notes) == 1 and f"{m}:3" in s.notes[0] and "gone.txt" in s.notes[0]


def test_a_manifest_time_that_is_not_a_time_names_its_line(tmp_path: Path):
    m = tmp_path / "m.csv"
    m.write_text("path,device_id,time\na.txt,phone1,2026-11-28 10:00:00\nb.txt,phone2,yesterday\n")
    with pytest.raises(InputError) as e:
        read_manifest(m)
    assert e.value.line == 3 and "yesterday" in str(e.value)


def test_a_file_holding_nothing_is_added_once_not_also_skipped(tmp_path: Path):
    (tmp_path / "a.txt").write_text(DUMP)
    (tmp_path / "empty_gfx.txt").write_text("Applications Graphics Acceleration Info:\n\n"
                                            "** Graphics info for pid 1 [com.example.idle] **\n\nNo frames\n")
    s = ingest([tmp_path], tmp_path / "f.duckdb", jobs=1)
    d = s.to_dict()
    assert s.files == 2 and s.added == 2
    assert [e["path"].rsplit("/", 1)[-1] for e in d["empty"]] == ["empty_gfx.txt"]
    assert d["skipped"] == [] and d["failed"] == []


def test_gfxinfo_with_annotated_counts_keeps_its_session(tmp_path: Path):
    f = tmp_path / "gfx.txt"
    f.write_text(GFX)
    r = parse_input(f)
    assert r.status == "ok"
    # 100+200+50+20+5+1 frames; over 16.67 ms: 17ms=20, 18ms=5, 800ms=1; frozen (>= 700 ms): 800ms=1
    assert r.sessions == [{"app": "com.example.shop", "frames": 376, "slow_frames": 26, "frozen_frames": 1}]


def test_a_utf16_file_is_known_by_its_own_bytes(tmp_path: Path):
    """A UTF-16 file (PowerShell's `>`) is read transcoded; its identity is still its bytes, so a second ingest finds
    it in the store before parsing it (the pre-hash and the parser's hash agree)."""
    import hashlib
    f = tmp_path / "a.txt"
    f.write_bytes(DUMP.encode("utf-16"))
    r = parse_input(f)
    assert r.status == "ok" and r.events
    assert r.content_hash == hashlib.sha256(f.read_bytes()).hexdigest()
    db = tmp_path / "f.duckdb"
    assert ingest([f], db, jobs=1).added == 1
    s = ingest([f], db, jobs=1)
    assert (s.added, s.already) == (0, 1)


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
def test_archives_of_a_phones_files_are_opened(tmp_path: Path, fmt: str):
    """A log bundle (tar.gz) or a plain zip holding a dump, a gfxinfo and a note: the two inputs inside are ingested,
    named archive!entry, as one phone (the bundle's); the note is said skipped. Counted by hand from the files."""
    import tarfile
    import zipfile
    src = {"data/anr/traces.txt": DUMP, "gfx.txt": GFX, "NOTES": "not an input\n"}
    arc = tmp_path / f"phone7.{fmt}"
    if fmt == "zip":
        with zipfile.ZipFile(arc, "w") as z:
            for name, text in src.items():
                z.writestr(name, text)
    else:
        staged = tmp_path / "staged"
        for name, text in src.items():
            (staged / name).parent.mkdir(parents=True, exist_ok=True)
            (staged / name).write_text(text)
        with tarfile.open(arc, "w:gz") as t:
            for name in src:
                t.add(staged / name, arcname=name)
    db = tmp_path / "f.duckdb"
    s = ingest([arc], db, jobs=1)
    assert (s.files, s.added, s.events, s.sessions) == (3, 2, 1, 1)
    assert [r for _, r in s.skipped] and all(p.endswith("!NOTES") for p, _ in s.skipped)
    con = duckdb.connect(str(db), read_only=True)
    paths = sorted(r[0].rsplit("!", 1)[-1] for r in con.execute("SELECT path FROM inputs").fetchall())
    devices = con.execute("SELECT DISTINCT device_id FROM inputs").fetchall()
    con.close()
    assert paths == ["data/anr/traces.txt", "gfx.txt"]
    assert len(devices) == 1 and devices[0][0].startswith("archive:")
    again = ingest([arc], db, jobs=1)
    assert (again.added, again.already) == (0, 2)


def test_anrs_naming_no_app_are_not_ranked_as_an_app(tmp_path: Path):
    """Play Console pastes without their title name no process: three of them are counted apart, not ranked as an
    app called `?` (the trial saw `?` top the ranking with 8 of 13 ANRs and a Zipf law fitted over it)."""
    from droidlag.fleet.pipeline import store_stats
    for i in range(3):   # three different stacks, no process named
        (tmp_path / f"u{i}.txt").write_text(DUMP.replace("Repo.load", f"Repo.load{i}"))
    for app in ("com.example.a", "com.example.b"):
        (tmp_path / f"{app}.txt").write_text(f"ANR in {app}\n\n" + DUMP.replace("com.example.app", app))
    db = tmp_path / "f.duckdb"
    assert ingest([tmp_path], db, jobs=1).events == 5
    apps = store_stats(db)["apps"]
    assert apps["unnamed_app_anrs"] == 3 and apps["anr_apps"] == 2
    assert sorted(a["app"] for a in apps["top"]) == ["com.example.a", "com.example.b"]


def test_a_cohort_change_from_zero_is_none_not_nan():
    """Two cohorts with no SNR before: the relative change is undefined; `fleet stats --json` must stay valid JSON
    (NaN is not) and the terminal must not print `nan%`."""
    import json

    from droidlag.fleet.stats import _cohorts
    # (device, model, version, cohort, anr, snr): the columns _cohorts reads
    devs = [(f"p{i}", "m", "9", "a-before", 2, 0) for i in range(3)] + \
           [(f"q{i}", "m", "9", "b-after", 1, 1) for i in range(3)]
    comp = _cohorts(devs, seed=0)["comparison"]
    assert comp["snr_change"] is None and comp["anr_change"] == pytest.approx(-0.5)
    json.loads(json.dumps(comp, allow_nan=False))
