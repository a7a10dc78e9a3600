"""Speed and memory of the Perfetto reader against the bare protobuf decode of the same file, printed as ratios.

Goal (from the issue): read_perfetto at most 2x the bare `perfetto_trace_pb2.Trace().ParseFromString`, and peak
memory under 3x the file size. Times are the best of N runs. Memory is measured two ways, each file in fresh
subprocesses so runs share no heap: tracemalloc's peak (Python allocations only: upb's arena and polars' buffers
are outside it) and the growth of the peak resident set (ru_maxrss over the RSS just before the call), which sees
everything. The RSS growth of the bare decode is printed too, as the floor any reader built on it starts from.
"""
from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import perfetto_traces  # noqa: E402


def best_of(fn, runs: int) -> float:
    """The fastest of `runs` calls of fn, seconds."""
    best = float("inf")
    for _ in range(runs):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def _warm_up_libraries() -> None:
    """Build a tiny Trace so that polars' one-time costs (thread pool, lazy modules) are not charged to the file."""
    from droidlag.models.trace_builder import TraceBuilder
    b = TraceBuilder("warm-up", "mem")
    b.atrace(0, 1, "B|1|x")
    b.atrace(5, 1, "E|1")
    b.sched_switch(0, 0, 0, "R", 1)
    b.sched_waking(2, 2, 0, 1)
    b.sched_switch(3, 0, 1, "S", 2)
    b.cpu_frequency(1, 0, 1000)
    b.binder_transaction(1, 1, 1, False)
    b.block_issue(1, 1, 1, 1, "R")
    b.frame_timeline_start(1, 1, "actual", "surface", 1, 1, jank_type="None")
    b.frame_timeline_end(4, 1)
    b.build().summary()


def _child(mode: str, path: str, runs: int) -> dict:
    """One measurement in this (fresh) process; printed as JSON for the parent."""
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    from droidlag.io import perfetto as reader
    data = Path(path).read_bytes()

    def decode():
        pb.Trace().ParseFromString(data)

    def read():
        reader.read_perfetto(data, path)

    if mode in ("rss-read", "rss-decode"):
        _warm_up_libraries()
        gc.collect()
        before = _rss_bytes()
        (read if mode == "rss-read" else decode)()
        return {"rss_growth": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before}
    if mode == "tracemalloc":
        gc.collect()
        tracemalloc.start()
        read()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return {"py_peak": peak}
    # times: warm up (imports, polars, caches), then best-of-N of decode, the whole read, and its three phases
    read()
    out = {"decode": best_of(decode, runs), "read": best_of(read, runs)}
    phases = {"parse": [], "loop": [], "build": []}
    for _ in range(runs):
        gc.collect()
        t0 = time.perf_counter()
        dec = reader.PerfettoDecoder()
        dec.feed(data)
        cols = dec.finish()
        t1 = time.perf_counter()
        b = reader.TraceBuilder("perfetto", path)
        reader.fill_builder(b, cols)
        del cols
        t2 = time.perf_counter()
        b.build()
        t3 = time.perf_counter()
        for v, dt in zip(phases.values(), (t1 - t0, t2 - t1, t3 - t2)):
            v.append(dt)
    out.update({k: min(v) for k, v in phases.items()})
    return out


def _run_child(mode: str, path: Path, runs: int) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, str(path), "--runs", str(runs)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="timed runs per file; the best counts (default 7)")
    ap.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_child(args.child[0], args.child[1], args.runs)))
        return 0
    files = perfetto_traces()
    if not files:
        print("real corpus not found: expected ../shared/corpus beside the repository (or set DROIDLAG_CORPUS)")
        return 1
    print(f"{'file':<30}{'MB':>6}{'decode':>8}{'read':>8}{'x dec':>7}{'MB/s':>7}"
          f"{'parse':>8}{'loop':>8}{'build':>8}{'py-peak':>9}{'rss':>7}{'rss-dec':>9}")
    print(f"{'':<30}{'':>6}{'ms':>8}{'ms':>8}{'':>7}{'':>7}{'ms':>8}{'ms':>8}{'ms':>8}"
          f"{'/file':>9}{'/file':>7}{'/file':>9}")
    for path in files:
        size = path.stat().st_size
        t = _run_child("times", path, args.runs)
        py = _run_child("tracemalloc", path, 1)["py_peak"]
        rss = _run_child("rss-read", path, 1)["rss_growth"]
        rss_dec = _run_child("rss-decode", path, 1)["rss_growth"]
        print(f"{path.name[:29]:<30}{size / 1e6:>6.2f}{t['decode'] * 1e3:>8.1f}{t['read'] * 1e3:>8.1f}"
              f"{t['read'] / t['decode']:>7.1f}{size / 1e6 / t['read']:>7.1f}"
              f"{t['parse'] * 1e3:>8.1f}{t['loop'] * 1e3:>8.1f}{t['build'] * 1e3:>8.1f}"
              f"{py / size:>9.2f}{rss / size:>7.2f}{rss_dec / size:>9.2f}")
    print("parse = native decode to columns, loop = columns into the TraceBuilder, build = TraceBuilder.build(); "
          "rss = peak RSS growth of one read, rss-dec = of the bare decode")
    return 0


if __name__ == "__main__":
    sys.exit(main())
