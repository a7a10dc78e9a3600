"""Frames analysis speed on the corpus traces: time per 1,000 frames and the ratio to reading the trace (same run).
Goal: analysis adds at most the time of reading the trace (ratio <= 1). Run: python benchmarks/bench_frames.py"""
from __future__ import annotations

import sys
from pathlib import Path

from _corpus import best_of, corpus_root, usable
from droidlag.frames import analyze_frames
from droidlag.io import read_trace


def corpus_traces() -> list[Path]:
    root = corpus_root()
    traces = root / "traces" if root else None
    return sorted(p for p in traces.iterdir() if p.suffix != ".md" and usable(p)) if traces and traces.is_dir() else []



def main() -> int:
    paths = corpus_traces()
    if not paths:
        print("corpus not found (set DROIDLAG_CORPUS)")
        return 1
    print(f"{'trace':<62}{'frames':>7}{'read s':>9}{'frames s':>10}{'ms/1k fr':>10}{'ratio':>7}")
    tot_read = tot_an = 0.0
    for p in paths:
        t_read, trace = best_of(lambda p=p: read_trace(p), 3)
        t_an, rep = best_of(lambda trace=trace: analyze_frames(trace), 3)
        n = rep.summary.frames
        per_k = f"{t_an / n * 1e6:.0f}" if n else "-"
        tot_read += t_read
        tot_an += t_an
        print(f"{p.name[:60]:<62}{n:>7}{t_read:>9.3f}{t_an:>10.3f}{per_k:>10}{t_an / t_read:>7.2f}")
    print(f"{'total':<62}{'':>7}{tot_read:>9.3f}{tot_an:>10.3f}{'':>10}{tot_an / tot_read:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
