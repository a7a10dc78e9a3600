"""GC in traces: a constructed trace with every kind of ART GC slice (sums known by construction), a hand-made systrace
whose GC sums are worked out by hand, and corpus traces without GC slices."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from conftest import corpus_file
from droidlag.frames import analyze_frames
from droidlag.gc.evidence import frames_with_gc
from droidlag.gc.trace import analyze_trace_gc
from droidlag.io import read_trace
from droidlag.models import TraceBuilder

MS = 1_000_000
APP, UI, RT, HTD = 100, 100, 101, 105


def _slice(b, tid, ts, dur, name, pid=APP):
    b.atrace(ts, tid, f"B|{pid}|{name}")
    b.atrace(ts + dur, tid, f"E|{pid}")


def _trace():
    b = TraceBuilder("test", "<constructed>")
    b.process(APP, "com.example.app")
    b.thread(UI, APP, "com.example.app")
    b.thread(RT, APP, "RenderThread")
    b.thread(HTD, APP, "HeapTaskDaemon")
    # a background collection on HeapTaskDaemon, 0-40 ms, with a flip pause (2 ms) holding a nested phase
    _slice(b, HTD, 0, 40 * MS, "Background young concurrent copying GC")
    _slice(b, HTD, 5 * MS, 2 * MS, "ThreadListFlip")
    _slice(b, HTD, 5 * MS + 100_000, 500_000, "(Paused)FlipCallback")
    _slice(b, HTD, 30 * MS, 1 * MS, "(Paused)ClearCards")
    # the main thread waits for it 10-25 ms, then runs an Alloc GC itself 60-72 ms
    _slice(b, UI, 10 * MS, 15 * MS, "GC: Wait For Completion Alloc")
    _slice(b, UI, 60 * MS, 12 * MS, "Alloc concurrent copying GC")
    _slice(b, HTD, 80 * MS, 3 * MS, "void art::gc::Heap::TrimSpaces(art::Thread *)")
    # sched: HeapTaskDaemon runs 0-30 ms on cpu 0 (30 ms of CPU inside its 40 ms run); the UI thread 60-70 ms
    b.sched_switch(0, 0, 0, "R", HTD)
    b.sched_switch(30 * MS, 0, HTD, "S", 0)
    b.sched_switch(60 * MS, 1, 0, "R", UI)
    b.sched_switch(70 * MS, 1, UI, "S", 0)
    b.counter(1 * MS, "Heap size (KB)", 2048, pid=APP)
    b.counter(50 * MS, "Heap size (KB)", 4096, pid=APP)
    b.see_time(100 * MS)
    return b.build()


def test_constructed_trace_sums():
    r = analyze_trace_gc(_trace())
    assert len(r.processes) == 1
    p = r.processes[0]
    assert p.collections == 2 and p.by_kind == {"Background young concurrent copying": 1, "Alloc concurrent copying": 1}
    assert p.by_generation == {"young": 1, "full": 1}
    assert p.gc_wall_ns == 52 * MS
    assert p.gc_cpu_ns == 30 * MS + 10 * MS
    assert p.heap_task_daemon_cpu_ns == 30 * MS
    assert (p.pauses, p.pause_total_ns, p.pause_max_ns) == (2, 3 * MS, 2 * MS)   # the nested phase is one pause
    main = p.threads[0]
    assert main.main and main.tid == UI and (main.waits, main.started) == (1, 1)
    assert main.waited_ns == 27 * MS and p.main_thread_blocked_ns == 27 * MS
    assert p.heap.used_max_bytes == 4096 * 1024 and p.heap.used_last_bytes == 4096 * 1024
    assert p.heap_tasks == {"void art::gc::Heap::TrimSpaces(art::Thread *)": 3 * MS}


def test_frames_overlapping_a_blocking_gc_say_so():
    trace = _trace()
    frames = pl.DataFrame({"start_ns": [8 * MS, 26 * MS, 65 * MS], "end_ns": [20 * MS, 40 * MS, 90 * MS],
                           "ui_tid": [UI, UI, UI], "render_tid": [RT, RT, RT]})
    got = frames_with_gc(trace, frames)["gc_blocking"].to_list()
    first = json.loads(got[0])
    assert first["blocking_gc_ns"] == 10 * MS and first["slices"][0]["slice"] == "GC: Wait For Completion Alloc"
    assert got[1] is None
    assert json.loads(got[2])["blocking_gc_ns"] == 7 * MS


def test_trace_without_gc_slices_says_so(corpus: Path):
    # neither capture recorded atrace's `dalvik` category: no print names a GC slice (checked with grep and, for the
    # Perfetto file, over every print event decoded with the protobuf classes)
    for rel in ("traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace",
                "traces/systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz"):
        r = analyze_trace_gc(read_trace(corpus_file(corpus, rel)))
        assert r.processes == [] and "no ART GC slices" in r.notes[0], rel


# No usable corpus trace holds a GC run (the `dalvik` category), so a systrace capture is hand-made in the form of
# ART's slices (art/runtime/gc: `<cause> <collector> GC`, `ThreadListFlip`, `GC: Wait For Completion <cause>`,
# `Lock contention on GC thread flip lock`) with the TGID column and the sched_switch lines of the collecting threads.
# App 4100: HeapTaskDaemon (4118) runs 10.000-10.012 and 10.015-10.0315 s; its young CC run is 10.001-10.031 (30 ms,
# CPU inside 11 + 16 = 27 ms) with a 0.4 ms flip; it runs 10.100-10.151 with a CC run 10.1005-10.1505 (50 ms, all on
# CPU); the main thread waits for the first run 10.020-10.0312 (11.2 ms). system_server 1290: HeapTaskDaemon (1360)
# runs 10.200-10.2102 with a young CC run 10.2001-10.2101 (10 ms, all on CPU); android.display (1350) meets the flip
# lock 10.203-10.204 (1 ms).
def _sw(comm: str, tid: int, tgid: str, cpu: int, ts: str, prev: tuple[str, int, str], nxt: tuple[str, int]) -> str:
    return (f"{comm:>16}-{tid:<5d} ({tgid:>5}) [{cpu:03d}] d..2 {ts}: sched_switch: prev_comm={prev[0]} prev_pid={prev[1]} "
            f"prev_prio=120 prev_state={prev[2]} ==> next_comm={nxt[0]} next_pid={nxt[1]} next_prio=124")


def _mark(comm: str, tid: int, tgid: int, cpu: int, ts: str, what: str) -> str:
    return f"{comm:>16}-{tid:<5d} ({tgid:>5}) [{cpu:03d}] ...1 {ts}: tracing_mark_write: {what}"


DAEMON = "HeapTaskDaemon"
GC_SYSTRACE = "\n".join([
    "# tracer: nop", "#", "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION",
    _sw("<idle>", 0, "-----", 1, "10.000000", ("swapper/1", 0, "R"), (DAEMON, 4118)),
    _mark(DAEMON, 4118, 4100, 1, "10.001000", "B|4100|Background young concurrent copying GC"),
    _mark(DAEMON, 4118, 4100, 1, "10.002000", "B|4100|ThreadListFlip"),
    _mark(DAEMON, 4118, 4100, 1, "10.002400", "E|4100"),
    _sw(DAEMON, 4118, "4100", 1, "10.012000", (DAEMON, 4118, "S"), ("swapper/1", 0)),
    _sw("<idle>", 0, "-----", 1, "10.015000", ("swapper/1", 0, "R"), (DAEMON, 4118)),
    _mark("om.example.feed", 4100, 4100, 0, "10.020000", "B|4100|GC: Wait For Completion Background"),
    _mark(DAEMON, 4118, 4100, 1, "10.031000", "E|4100"),
    _mark("om.example.feed", 4100, 4100, 0, "10.031200", "E|4100"),
    _sw(DAEMON, 4118, "4100", 1, "10.031500", (DAEMON, 4118, "S"), ("swapper/1", 0)),
    _sw("<idle>", 0, "-----", 1, "10.100000", ("swapper/1", 0, "R"), (DAEMON, 4118)),
    _mark(DAEMON, 4118, 4100, 1, "10.100500", "B|4100|Background concurrent copying GC"),
    _mark(DAEMON, 4118, 4100, 1, "10.150500", "E|4100"),
    _sw(DAEMON, 4118, "4100", 1, "10.151000", (DAEMON, 4118, "S"), ("swapper/1", 0)),
    _sw("<idle>", 0, "-----", 2, "10.200000", ("swapper/2", 0, "R"), (DAEMON, 1360)),
    _mark(DAEMON, 1360, 1290, 2, "10.200100", "B|1290|Background young concurrent copying GC"),
    _mark("android.display", 1350, 1290, 3, "10.203000", "B|1290|Lock contention on GC thread flip lock"),
    _mark("android.display", 1350, 1290, 3, "10.204000", "E|1290"),
    _mark(DAEMON, 1360, 1290, 2, "10.210100", "E|1290"),
    _sw(DAEMON, 1360, "1290", 2, "10.210200", (DAEMON, 1360, "S"), ("swapper/2", 0)),
]) + "\n"


def test_systrace_gc_slices_sum_as_worked_by_hand(tmp_path: Path):
    p = tmp_path / "gc_systrace.txt"
    p.write_text(GC_SYSTRACE)
    trace = read_trace(p)
    runs = trace.slices.filter(pl.col("name").str.ends_with(" GC") & pl.col("name").str.contains("copying"))
    assert runs.height == 3
    r = analyze_trace_gc(trace)
    assert sum(q.collections for q in r.processes) == runs.height
    assert sum(q.gc_wall_ns for q in r.processes) == int(runs["dur"].sum()) == 90 * MS
    for q in r.processes:   # CPU inside a run never exceeds the run
        assert q.gc_cpu_ns is None or q.gc_cpu_ns <= q.gc_wall_ns
    app, ss = (next(q for q in r.processes if q.pid == pid) for pid in (4100, 1290))
    assert app.by_kind == {"Background young concurrent copying": 1, "Background concurrent copying": 1}
    assert (app.gc_wall_ns, app.gc_cpu_ns) == (80 * MS, 77 * MS)
    assert app.heap_task_daemon_cpu_ns == 12 * MS + 16_500_000 + 51 * MS
    assert (app.pauses, app.pause_total_ns) == (1, 400_000)
    assert app.main_thread_blocked_ns == 11_200_000
    assert (ss.collections, ss.gc_wall_ns, ss.gc_cpu_ns) == (1, 10 * MS, 10 * MS)
    assert ss.blocked_ns == 1 * MS and ss.main_thread_blocked_ns == 0
    assert [(t.tid, t.waits) for t in ss.threads] == [(1350, 1)]


def test_frames_report_carries_gc_evidence_column(corpus: Path):
    p = corpus_file(corpus, "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace")
    rep = analyze_frames(read_trace(p))
    assert "gc_blocking" in rep.frames.columns and rep.frames.height > 0
