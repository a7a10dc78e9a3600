"""GC through the gatherer and the commands: analyze picks up logcat files and bugreports' GC lines, findings.json
and report.html carry them; hangs get GC evidence from their capture's log; `droidlag gc device`."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import corpus_file
from droidlag.cli import main
from droidlag.findings import analyze
from droidlag.gc.evidence import dump_time_ns, hang_gc
from droidlag.models.gc import GcLog, GcLogEvent
from droidlag.report.findings_json import findings_dict


def test_analyze_reads_every_logcat_and_the_bugreport(corpus: Path, tmp_path: Path):
    gc_dir = corpus / "gc"
    logs = sorted(gc_dir.glob("art_logcat_*.txt"))
    assert logs, "no corpus/gc"
    f = analyze(logs + sorted((corpus / "bugreport").glob("*.zip")))
    kinds = {Path(i.path).name: (i.kind, i.status) for i in f.inputs}
    assert all(kinds[p.name] == ("logcat", "analyzed") for p in logs)
    d = findings_dict(f)
    sources = {r["source"] for r in d["gc"]}
    assert {str(p) for p in logs} <= sources
    assert any(s.endswith(".zip") for s in sources)
    fish = next(r for r in d["gc"] if "FishIT" in r["source"])
    assert fish["events"]["waiting_blocking"] == 1150 // 2   # SOURCES.md counts the log's two copies
    heads = [h for h in d["headlines"] if h["kind"] == "gc" and "FishIT" in h["source"]]
    assert heads and heads[0]["level"] == "warn" and "main thread" in heads[0]["text"]
    from droidlag.report.html import render
    html = render(d)
    assert '<section id="gc">' in html and "com.fishit.player.v2" in html


def test_hang_evidence_from_the_log():
    ev = [GcLogEvent(kind="waiting_blocking", line=3, ts_ns=dump_time_ns("2020-01-08 15:31:20"), pid=7, tid=7,
                     cause="Alloc"),
          GcLogEvent(kind="wait_done", line=4, ts_ns=dump_time_ns("2020-01-08 15:31:21"), pid=7, tid=7,
                     cause="Alloc", duration_ns=900_000_000)]
    log = GcLog("bugreport.zip", ev, clock="wall", year=2020, year_known=True)
    got = hang_gc(log, 7, 7, "2020-01-08 15:31:29")
    assert got["waits"] == 1 and got["waited_ns"] == 900_000_000 and got["lines"] == [3, 4]
    assert hang_gc(log, 7, 7, "2020-01-08 16:00:00") is None       # long before the dump: not part of the hang
    assert hang_gc(log, 7, 8, "2020-01-08 15:31:29") is None       # another thread
    log.year_known = False
    assert hang_gc(log, 7, 7, "2020-01-08 15:31:29") is None       # a year-less log cannot be placed


def test_gc_device_command(corpus: Path, capsys):
    p = corpus_file(corpus, "gc/art_logcat_JayMass5800_HabitV8_error2.txt")
    assert main(["gc", "device", str(p), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reports"][0]["processes"][0]["collections"] == 10
    assert main(["gc", "device", str(p)]) == 0
    assert "256 MB limit" in capsys.readouterr().out


def test_gc_device_without_usable_input(tmp_path: Path, capsys):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01 nothing here")
    assert main(["gc", "device", str(junk)]) == 3


def test_logcat_files_are_recognized_by_content(corpus: Path):
    from droidlag.io.detect import LOGCAT, sniff_bytes

    for p in sorted((corpus / "gc").glob("art_logcat_*.txt")):
        assert sniff_bytes(p.read_bytes()) == LOGCAT, p.name
    # prose quoting a GC message without a logcat prefix is not a log
    prose = b"Our app showed: Background concurrent copying GC freed 5MB AllocSpace bytes, 3(1KB) LOS objects, " \
            b"40% free, 5MB/10MB, paused 1ms total 100ms\nwhich we fixed.\n"
    assert sniff_bytes(prose) is None


def test_hang_says_what_its_process_dump_says_of_gc(corpus: Path):
    """The system_server SNR dump: its process dump counts blocking GCs; the hang event carries them."""
    p = corpus_file(corpus, "anr/CharmingW_CWImage_traces_system_server_watchdog_snr.txt")
    text = p.read_text(encoding="utf-8", errors="replace")
    first = text.split("----- end", 1)[0]
    count = int(first.split("Total blocking GC count: ", 1)[1].split()[0])
    f = analyze([p])
    ev = f.hangs.events[0]
    assert ev.evidence["gc_in_dump"]["blocking_gc_count"] == count == 6


def test_hang_gc_from_dump_rules():
    from droidlag.gc.evidence import hang_gc_from_dump
    from droidlag.models.gc import ArtGcDump

    d = ArtGcDump("x", 1, pid=5, time="2020-01-01 00:00:00", blocking_gc_count=0,
                  threads_waiting_for_gc=[("main", True, "WaitingForGcToComplete")])
    assert hang_gc_from_dump([d], 5, None, "main", True)["blocked_thread_state"] == "WaitingForGcToComplete"
    assert hang_gc_from_dump([d], 5, None, "Binder:5_1", False) is None   # another thread, no blocking GC
    assert hang_gc_from_dump([d], 6, None, "main", True) is None          # another process
