"""The GC LBO harness's full run: 2 workloads x every collector the JDK has x 5 heap factors x 5 invocations, timed
end to end. Goal: under 15 minutes on this machine. Prints the wall time, the ratio to the goal, and the ratio of
harness time to the JVMs' own timed iterations (same run: the rest is JVM start-up, warm-up, bisection, logging),
and the CPU time the run used, which says what the wall time would be on an idle machine.
The machine's load average at start and end is printed too: on a shared machine it bounds what the numbers mean.
Run: python benchmarks/bench_gc_lbo.py [RESULTS_DIR] (an existing folder resumes)."""
from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from droidlag.gc.lbo.harness import RunPlan, run_plan

GOAL_S = 15 * 60


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="droidlag-lbo-")) / "results"
    load0 = os.getloadavg()
    t0 = time.monotonic()
    last = [0.0]

    def progress(done: int, total: int, what: str) -> None:
        if time.monotonic() - last[0] > 30:
            last[0] = time.monotonic()
            print(f"  {done}/{total} {what} ({time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)

    summary = run_plan(RunPlan(out, workloads=["gcbench", "lucene"], invocations=5), progress)
    wall = time.monotonic() - t0
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    timed = sum(r.get("wall") or 0 for r in rows) / 1e9
    print(f"full run: {summary.ran} invocations ({summary.oom} OOM, {summary.failed} failed, {summary.skipped} "
          f"resumed) with {', '.join(summary.collectors)}; minimum heaps {summary.minheap_mb} MB")
    print(f"  wall {wall:.0f} s = {wall / GOAL_S:.2f} x the 15-minute goal; timed iterations {timed:.0f} s, "
          f"harness/timed = {wall / timed if timed else float('nan'):.1f}")
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ru.ru_utime + ru.ru_stime
    print(f"  CPU time of the JVMs and tools: {cpu:.0f} s = {cpu / (os.cpu_count() or 1):.0f} s of this machine's "
          f"{os.cpu_count()} CPUs; wall/that = {wall / (cpu / (os.cpu_count() or 1)):.1f} (1 = the machine was ours)")
    print(f"  load average at start {load0[0]:.2f}, at end {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          f"results in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
