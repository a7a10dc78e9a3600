"""The native Perfetto decode alone (issue 13's share of the read that is not Python): `PerfettoDecoder.feed_file`
and `feed_file` + `finish` (the columns handed to the TraceBuilder) per corpus trace, against the bare protobuf (upb)
decode of the same file, timed in turns in one process. Best of N runs, CPU time (`time.process_time`, what a loaded
machine disturbs least) and wall time. The whole read must fit in 2x upb, so this part must take well under 1x.

    python benchmarks/bench_decode_perfetto.py [--runs N]

Run it with malloc's thresholds pinned as bench_read_perfetto.py pins them in its timing child
(MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=67108864) to compare with its figures.
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import perfetto_traces  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    args = ap.parse_args()
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2

    from droidlag._native import PerfettoDecoder

    traces = perfetto_traces()
    if not traces:
        print("no corpus traces found (../shared/corpus or $DROIDLAG_CORPUS)")
        return 1
    print(f"{'trace (best of ' + str(args.runs) + ')':34s} {'MB':>4s}   ms cpu/wall:  {'upb':>11s} {'feed':>11s} "
          f"{'feed+finish':>11s}   x upb (cpu/wall)")
    for path in traces:
        data = path.read_bytes()

        def upb(data: bytes = data) -> None:
            perfetto_trace_pb2.Trace().ParseFromString(data)

        def feed(path: Path = path) -> PerfettoDecoder:
            d = PerfettoDecoder()
            d.feed_file(str(path), 256 << 10)
            return d

        def feed_finish() -> None:
            feed().finish()

        cpu, wall = [float("inf")] * 3, [float("inf")] * 3
        gc.collect()
        for _ in range(args.runs):
            for i, fn in enumerate((upb, feed, feed_finish)):
                w0, c0 = time.perf_counter(), time.process_time()
                fn()
                cpu[i] = min(cpu[i], time.process_time() - c0)
                wall[i] = min(wall[i], time.perf_counter() - w0)
        cell = [f"{c * 1e3:5.2f}/{w * 1e3:5.2f}" for c, w in zip(cpu, wall)]
        print(f"{path.name[:34]:34s} {len(data) / 1e6:4.1f}   {'':12s} {cell[0]:>11s} {cell[1]:>11s} {cell[2]:>11s}"
              f"   {cpu[2] / cpu[0]:.2f}/{wall[2] / wall[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
