"""Speed and memory of the Perfetto reader against the bare protobuf decode of the same file, printed as ratios.

Goal (from the issue): read_perfetto at most 2x the bare `perfetto_trace_pb2.Trace().ParseFromString`, and peak
memory under 3x the file size. Times are the best of N runs; memory is tracemalloc's peak (Python allocations
only: upb's arena and polars' buffers are outside it).
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import perfetto_traces  # noqa: E402
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb  # noqa: E402

from droidlag.io.perfetto import read_perfetto  # noqa: E402


def best_of(fn, runs: int) -> float:
    """The fastest of `runs` calls of fn, seconds."""
    best = float("inf")
    for _ in range(runs):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def peak_python_bytes(fn) -> int:
    """tracemalloc's peak during one call of fn, bytes."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="timed runs per file; the best counts (default 7)")
    args = ap.parse_args()
    files = perfetto_traces()
    if not files:
        print("real corpus not found: expected ../shared/corpus beside the repository (or set DROIDLAG_CORPUS)")
        return 1
    print(f"{'file':<44}{'MB':>6}{'decode ms':>11}{'read ms':>10}{'MB/s':>8}{'x decode':>10}"
          f"{'py-peak/file':>14}")
    for path in files:
        data = path.read_bytes()
        mb = len(data) / 1e6
        read_perfetto(data, str(path))                       # warm-up: imports, polars, caches
        decode = best_of(lambda: pb.Trace().ParseFromString(data), args.runs)
        read = best_of(lambda: read_perfetto(data, str(path)), args.runs)
        py_peak = peak_python_bytes(lambda: read_perfetto(data, str(path)))
        print(f"{path.name[:43]:<44}{mb:>6.2f}{decode * 1e3:>11.1f}{read * 1e3:>10.1f}{mb / read:>8.1f}"
              f"{read / decode:>10.1f}{py_peak / len(data):>14.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
