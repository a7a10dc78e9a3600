"""GC on device data: what the per-process GC summaries cost inside `droidlag analyze`, as a ratio of analyze's
whole run time on the same inputs in the same run (goal: under 10%). Run: python benchmarks/bench_gc.py

Inputs: corpus/gc (every logcat), the bugreport zip and every trace. The GC part is timed on its own over the same
inputs: reading the GC lines of every log input (the bugreport's 18 MB text included) and summarizing them, and
the trace GC summary plus the frames' GC evidence for every trace (traces read beforehand, as analyze has them).
Best of 3 each."""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _corpus import corpus_root, usable  # noqa: E402
from droidlag.findings import analyze  # noqa: E402
from droidlag.gc.device import summarize_gc_log  # noqa: E402
from droidlag.gc.trace import analyze_trace_gc, blocking_slices  # noqa: E402
from droidlag.io import read_trace  # noqa: E402
from droidlag.io.art_gc_log import read_gc_log  # noqa: E402
from droidlag.io.inputs import discover  # noqa: E402


def main() -> None:
    root = corpus_root()
    if root is None:
        sys.exit("corpus not found (../shared/corpus or $DROIDLAG_CORPUS)")
    # the traces one by one: none from a reserved source (tests/conftest.py)
    paths = [root / "gc", root / "bugreport"] + sorted(p for p in (root / "traces").iterdir()
                                                      if p.is_file() and p.suffix != ".md" and usable(p))
    items = [i for i in discover(paths) if i.status == "pending"]
    logs = [i.path for i in items if i.kind in ("logcat", "anr", "bugreport")]
    traces = [read_trace(i.path) for i in items if i.kind in ("perfetto", "systrace")]
    best_all = best_gc = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        f = analyze(paths)
        best_all = min(best_all, time.perf_counter() - t0)
        t0 = time.perf_counter()
        n_lines = 0
        for p in logs:
            log = read_gc_log(p)
            n_lines += len(log.events)
            summarize_gc_log(log)
        for t in traces:
            analyze_trace_gc(t)
            blocking_slices(t)
        best_gc = min(best_gc, time.perf_counter() - t0)
    print(f"analyze: {len(items)} inputs ({len(logs)} logs, {len(traces)} traces), {n_lines} GC lines, "
          f"{sum(len(r.processes) for r in f.gc)} process summaries")
    print(f"analyze total {best_all:.2f} s; GC part {best_gc:.3f} s; ratio {100 * best_gc / best_all:.1f}% "
          f"(goal < 10%)")


if __name__ == "__main__":
    main()
