"""Block requests as evidence of the `io` cause: on a constructed trace the requests behind the main thread's
D-state time are named; on the real Meizu systrace the numbers agree with a brute-force pass over trace.block."""
from __future__ import annotations

import json

import polars as pl
from frames_fixtures import MS, RT, UI, frame, new_builder, run_on, sched_smooth, smooth_frames

from conftest import corpus_file
from droidlag.frames import analyze_frames
from droidlag.frames.block_io import BlockIndex
from droidlag.frames.causes import CauseAnalyzer
from droidlag.frames.config import FramesConfig
from droidlag.frames.critical_path import CriticalPathFinder
from droidlag.io import read_trace
from droidlag.report.frames_json import frames_dict, summary_dict

KWORKER = 900


def _io_trace():
    b = new_builder()
    b.thread(KWORKER, 2, "kworker/u16:1")
    t = smooth_frames(b, 10 * MS, 8)
    sched_smooth(b, 10 * MS, 8)
    frame(b, t, 30, 5)
    run_on(b, UI, 4, t, t + 3 * MS, out_state="D")
    b.sched_blocked_reason(t + 25 * MS, UI, "wait_on_page_bit_killable", io_wait=True)
    b.sched_waking(t + 25 * MS, UI, 4, 0)
    run_on(b, UI, 4, t + 25 * MS + 10_000, t + 30 * MS)
    rt_start = t + 30 * MS - 15_000
    b.sched_waking(rt_start - 5_000, RT, 5, UI)
    run_on(b, RT, 5, rt_start, rt_start + 5 * MS)
    # a 64 KiB read by a kworker in flight for 20 ms of the main thread's 22 ms in D
    b.block_issue(t + 4 * MS, 8 << 20, 1000, 128, "R", tid=KWORKER, comm="kworker/u16:1")
    b.block_complete(t + 24 * MS, 8 << 20, 1000, 128, "R")
    # a small write the main thread issued just before it blocked
    b.block_issue(t + 2 * MS, 8 << 20, 5000, 8, "WS", tid=UI, comm="com.example.app")
    b.block_complete(t + 2 * MS + 300_000, 8 << 20, 5000, 8, "WS")
    # a read long before the slow frame: not in the evidence
    b.block_issue(12 * MS, 8 << 20, 9000, 8, "R", tid=KWORKER, comm="kworker/u16:1")
    b.block_complete(13 * MS, 8 << 20, 9000, 8, "R")
    return b.build()


def test_io_cause_names_the_block_requests():
    r = analyze_frames(_io_trace())
    slow = [f for f in frames_dict(r)["frames"] if f["naive_verdict"] != "ok"][0]
    io = [c for c in slow["causes"] if c["name"] == "io"][0]
    blk = io["evidence"]["block"]
    assert blk["requests"] == 2 and blk["bytes"] == 128 * 512 + 8 * 512
    assert blk["by_direction"] == {"read": {"requests": 1, "bytes": 65536}, "write": {"requests": 1, "bytes": 4096}}
    assert abs(blk["overlap_ms"] - 20.0) < 0.01 and abs(blk["d_state_ms"] - 22.0) < 0.05
    top = blk["top_requests"][0]
    assert top["comm"] == "kworker/u16:1" and top["direction"] == "read" and top["why"] == "in_flight_during_d"
    assert abs(top["overlap_ms"] - 20.0) < 0.01
    assert blk["top_requests"][1]["why"] == "issued_by_path_thread"
    # the same measure over normal frames, for comparison: none of them saw a request
    assert blk["normal"]["mean_requests"] == 0 and blk["normal"]["frames"] == 8
    assert summary_dict(r.summary)["block_io"]["sr_ff"]["frames_with_requests"] == 1
    assert json.dumps(frames_dict(r))


def _brute_force(block: pl.DataFrame, path, threads, window) -> tuple[set, int, int]:
    """Independent of BlockIndex: plain Python over the rows of trace.block."""
    d = [(s.ts, s.ts + s.dur) for s in path if s.state.startswith("D")]
    picked = set()
    for _i, row in enumerate(block.iter_rows(named=True)):
        end = row["ts"] + row["dur"] if row["dur"] is not None else None
        in_d = end is not None and any(row["ts"] < b and end > a for a, b in d)
        issued = row["tid"] in threads and window[0] <= row["ts"] < window[1]
        if in_d or issued:
            picked.add((row["ts"], row["sector"], row["tid"]))
    nbytes = sum(r["bytes"] for r in block.iter_rows(named=True) if (r["ts"], r["sector"], r["tid"]) in picked)
    # D-state time with at least one complete request in flight, by 1 us sampling-free sweep
    covered = 0
    for a, b in d:
        pts = sorted({a, b} | {x for r in block.iter_rows(named=True) if r["dur"] is not None
                               for x in (r["ts"], r["ts"] + r["dur"]) if a < x < b})
        for lo, hi in zip(pts, pts[1:]):
            if any(r["dur"] is not None and r["ts"] <= lo and r["ts"] + r["dur"] >= hi
                   for r in block.iter_rows(named=True)):
                covered += hi - lo
    return picked, nbytes, covered


def test_meizu_block_evidence_agrees_with_trace_block(corpus):
    trace = read_trace(corpus_file(corpus, "traces/systrace_meizu_flyme_2019_list_jank.dataonly.html.gz"))
    assert trace.block.height == 41
    r = analyze_frames(trace)
    assert summary_dict(r.summary)["block_io"]["sr_ff"]["frames"] == r.frames.filter(pl.col("verdict") == "SR").height
    analyzer = CauseAnalyzer(trace, r.frames, FramesConfig())
    for row in r.frames.iter_rows(named=True):
        fs = analyzer.shares(row)
        ev = fs.evidence.block
        threads = {s.tid for s in fs.path}
        picked, nbytes, covered = _brute_force(trace.block, fs.path, threads, (row["start_ns"], row["end_ns"]))
        assert ev.requests == len(picked) and ev.bytes == nbytes and ev.overlap_ns == covered
    # The frames' paths never enter D state here, so also check the join where it has work to do: the D-state
    # time of the threads that sleep in D most (kworkers, jbd2), over the whole trace.
    idx = BlockIndex(trace.block)
    finder = CriticalPathFinder(trace)
    top_d = trace.thread_states.filter(pl.col("state").cast(pl.Utf8).str.starts_with("D")).group_by("tid").len().sort(
        "len", descending=True).head(4)["tid"].to_list()
    nonzero = 0
    for tid in top_d:
        path = finder.own_states(tid, trace.start_ns, trace.end_ns)
        ev = idx.evidence(path, {tid}, (trace.start_ns, trace.end_ns))
        picked, nbytes, covered = _brute_force(trace.block, path, {tid}, (trace.start_ns, trace.end_ns))
        assert ev.requests == len(picked) and ev.bytes == nbytes and ev.overlap_ns == covered
        nonzero += ev.requests > 0
    assert nonzero >= 1
