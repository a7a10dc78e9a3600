"""GC in traces: a constructed trace with every kind of ART GC slice (sums known by construction), and the corpus
traces checked against slice counts taken with polars filters written here."""
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
    p = corpus_file(corpus, "traces/perfetto_samsung_s20_a11_sched_idle_freq_only.perfetto-trace")
    r = analyze_trace_gc(read_trace(p))
    assert r.processes == [] and "no ART GC slices" in r.notes[0]


def test_corpus_traces_runs_match_a_name_count(corpus: Path):
    names = ["systrace_meizu_flyme_2019_launcher_scroll.dataonly.html.gz",
             "systrace_meizu_flyme_2019_flutter_wanandroid.dataonly.html.gz"]
    for n in names:
        p = corpus_file(corpus, "traces/" + n)
        trace = read_trace(p)
        runs = trace.slices.filter(pl.col("name").str.ends_with(" GC") & pl.col("name").str.contains("copying"))
        r = analyze_trace_gc(trace)
        assert sum(q.collections for q in r.processes) == runs.height > 0
        assert sum(q.gc_wall_ns for q in r.processes) == int(runs["dur"].sum())
        for q in r.processes:   # CPU inside a run never exceeds the run
            assert q.gc_cpu_ns is None or q.gc_cpu_ns <= q.gc_wall_ns


def test_frames_report_carries_gc_evidence_column(corpus: Path):
    p = corpus_file(corpus, "traces/systrace_meizu_flyme_2019_launcher_scroll.dataonly.html.gz")
    rep = analyze_frames(read_trace(p))
    assert "gc_blocking" in rep.frames.columns
