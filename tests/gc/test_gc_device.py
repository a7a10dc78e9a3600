"""Per-process GC summaries from logs, checked against figures computed here by another route (plain string
splitting of the corpus lines, the statistics module for percentiles)."""
from __future__ import annotations

import re
import statistics
from pathlib import Path

from conftest import corpus_file
from droidlag.gc.device import GcConfig, blocking_events, percentiles_ns, summarize_gc_log
from droidlag.io.art_gc_log import read_gc_log
from droidlag.models.gc import GcLog, GcLogEvent

MB = 1024**2
_UNIT = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def _ns(text: str) -> int:
    num = re.match(r"[\d.]+", text).group(0)
    return round(float(num) * _UNIT[text[len(num):]])


def _fish(corpus: Path) -> Path:
    p = corpus_file(corpus, "gc/art_logcat_karlokarate_FishIT-Player_logcat_030.txt")
    return p


def test_fishit_main_thread_and_pauses_by_another_route(corpus: Path):
    path = _fish(corpus)
    lines = path.read_text(encoding="utf-8").splitlines()
    half = len(lines) // 2
    assert lines[:half] == lines[half:]   # the capture holds its log twice: the reader reads it once
    lines = lines[:half]
    # Android Studio columns: date, time, pid-tid, tag, package, level, message
    main_wait = sum(_ns(ln.rsplit(" for ", 1)[1]) for ln in lines
                    if ln.split()[2] == "7425-7425" and "WaitForGcToComplete" in ln)
    stalled = {ln.split()[2] for ln in lines if "blocking GC" in ln or "WaitForGcToComplete" in ln}
    pauses = [_ns(x) for ln in lines if "GC freed" in ln
              for x in ln.split(" paused ")[1].split(" total ")[0].split(",")]
    walls = sum(_ns(ln.rsplit(" total ", 1)[1]) for ln in lines if "GC freed" in ln)

    report = summarize_gc_log(read_gc_log(path))
    assert len(report.processes) == 1
    p = report.processes[0]
    assert (p.pid, p.process) == (7425, "com.fishit.player.v2")
    assert p.main_thread_blocked_ns == main_wait > 0
    assert len(p.threads) == len(stalled) and p.threads[0].main and p.threads[0].tid == 7425
    assert p.pauses == len(pauses) and p.pause_total_ns == sum(pauses) and p.pause_max_ns == max(pauses)
    q = statistics.quantiles(pauses, n=100, method="inclusive")
    assert p.pause_percentiles_ns == {"p50": round(q[49]), "p90": round(q[89]), "p99": round(q[98])}
    assert p.gc_wall_ns == walls
    # SOURCES.md counts both copies: (146 + 30) / 2 full, (74 + 4) / 2 young, 64 / 2 clamps
    assert p.collections == 127 and p.by_generation == {"full": 88, "young": 39}
    assert p.heap.clamps == 32 and p.heap.limit_bytes == 256 * MB


def test_heap_against_the_clamped_limit(corpus: Path):
    log = read_gc_log(corpus / "gc" / "art_logcat_JayMass5800_HabitV8_error2.txt")
    p = summarize_gc_log(log).processes[0]
    # "Clamp target GC heap from 351MB to 256MB"; the highest used after a GC is 255MB (line 7)
    assert p.heap.limit_bytes == 256 * MB and p.heap.used_max_bytes == 255 * MB
    assert p.heap.used_of_limit == round(255 / 256, 4) and p.heap.min_free_percent == 0
    assert p.heap.soft_reference_collections == 1
    assert p.freed_bytes == sum(x * MB for x in (33, 115, 118, 51, 62, 134, 15, 42, 101, 102)) + \
        sum(x * MB for x in (29, 93, 95, 33, 53, 114, 10, 40, 84, 90))
    assert any("no thread ids" in n for n in summarize_gc_log(log).notes)


def test_processes_are_told_apart_and_ranked_by_blocking(corpus: Path):
    report = summarize_gc_log(read_gc_log(corpus / "gc" / "art_logcat_Crany-web_log.txt"))
    pids = [p.pid for p in report.processes]
    assert len(pids) == len(set(pids)) == 14   # 2 zygotes + 12 apps waiting for ProfileSaver GCs
    blocked = [p.blocked_ns for p in report.processes]
    assert blocked == sorted(blocked, reverse=True) and blocked[0] == 7_906_000


def test_percentiles_of_nothing_and_of_one():
    assert percentiles_ns([], (50,)) == {}
    assert percentiles_ns([7], (50, 99)) == {"p50": 7, "p99": 7}


def _ev(kind, ts, tid=11, dur=None, cause="Alloc"):
    return GcLogEvent(kind=kind, line=1, ts_ns=ts, pid=10, tid=tid, cause=cause, duration_ns=dur)


def test_blocking_events_in_a_window():
    log = GcLog("x", [_ev("waiting_blocking", 100), _ev("wait_done", 500, dur=450), _ev("waiting_blocking", 900),
                      _ev("waiting_blocking", 300, tid=12), _ev("collection", 400)], clock="wall", year_known=True)
    # the completed wait ran 50..500, so it overlaps a window 0..60 that its logged end does not reach
    assert [e.ts_ns for e in blocking_events(log, 10, 11, 0, 60)] == [500]
    assert [e.ts_ns for e in blocking_events(log, 10, 11, 0, 1000)] == [100, 500, 900]
    assert [e.ts_ns for e in blocking_events(log, 10, None, 250, 350)] == [500, 300]
    assert blocking_events(log, 99, None, 0, 1000) == []


def test_config_percentiles_are_used(corpus: Path):
    log = read_gc_log(corpus / "gc" / "art_logcat_Fortochca_logs.txt")
    p = summarize_gc_log(log, GcConfig(percentiles=(75,))).processes[0]
    assert list(p.pause_percentiles_ns) == ["p75"]


def test_process_dumps_give_complete_totals(corpus: Path):
    """The sailfish VM TRACES JUST NOW: one GC block per ART process (as many as `Total GC count:` lines), and
    system_server's figures as its dump prints them (read by hand)."""
    from droidlag.gc.device import summarize_gc_dumps
    from droidlag.io.art_gc_log import read_device_gc

    p = corpus_file(corpus, "anr/sailfish_android10_vm_traces_just_now_54procs.txt")
    text = p.read_text(encoding="utf-8", errors="replace")
    log, dumps = read_device_gc(p)
    assert len(dumps) == text.count("\nTotal GC count: ") == 29
    ss = next(d for d in dumps if d.process == "system_server")
    assert (ss.pid, ss.gc_count, ss.gc_time_ns, ss.blocking_gc_count, ss.blocking_gc_time_ns) == \
        (929, 9, 1_654_000_000, 2, 529_782_000)
    assert (ss.wait_for_gc_ns, ss.mutator_paused_ns, ss.max_memory_bytes) == (403_920_000, 5_863_000, 512 * MB)
    assert ss.heap_task_daemon_cpu_ns == 459_402_197   # HeapTaskDaemon's schedstat run time
    cc = {c.name: c for c in ss.collectors}
    assert set(cc) == {"concurrent copying", "young concurrent copying"}   # "JIT timings" is not a collector
    assert (cc["concurrent copying"].iterations, cc["concurrent copying"].paused_ns,
            cc["concurrent copying"].paused_max_ns, cc["concurrent copying"].total_ns) == (5, 3_594_000, 2_989_000,
                                                                                          1_258_000_000)
    assert (cc["concurrent copying"].freed_objects, cc["concurrent copying"].freed_bytes) == (403794, 32 * MB)
    report = summarize_gc_dumps(dumps, str(p))
    top = report.processes[0]
    assert top.process == "system_server" and top.blocking_gc_ns == 529_782_000
    assert top.heap.limit_bytes == 512 * MB and top.by_kind == {"concurrent copying": 5, "young concurrent copying": 4}
    assert top.pause_total_ns == 5_863_000 and top.pause_max_ns == 2_989_000


def test_threads_caught_waiting_for_gc_in_a_dump(corpus: Path):
    from droidlag.gc.device import summarize_gc_dumps
    from droidlag.io.art_gc_log import read_device_gc

    p = corpus_file(corpus, "anr/Boom618_DigitalFarms_traces_wechat_huawei_n.txt")
    lines = [ln for ln in p.read_text(encoding="utf-8", errors="replace").splitlines()
             if ln.startswith('"') and ("WaitingForGcToComplete" in ln or "WaitingPerformingGc" in ln)]
    _, dumps = read_device_gc(p)
    caught = [t for d in dumps for t in d.threads_waiting_for_gc]
    assert len(caught) == len(lines) == 1
    procs = summarize_gc_dumps(dumps, str(p)).processes
    assert sum(q.blocking_waits for q in procs) == 1
