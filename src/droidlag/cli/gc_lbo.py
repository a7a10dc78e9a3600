"""`droidlag gc run` (a JVM harness that produces LBO results here) and `droidlag gc lbo RESULTS` (LBO tables with
Fieller CIs, plots, and the checks against the papers)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from droidlag.cli.common import EXIT_NO_INPUT, EXIT_OK, EXIT_USAGE, print_json


def register(gcsub: argparse._SubParsersAction) -> None:
    r = gcsub.add_parser("run", help="run JVM workloads with every collector at multiples of the minimum heap, "
                                     "into a resumable results folder")
    r.add_argument("results", metavar="RESULTS_DIR", help="results folder (created; rerun to resume)")
    r.add_argument("--workloads", default="gcbench,lucene", help="comma-separated: gcbench, lucene")
    r.add_argument("--collectors", default=None,
                   help="comma-separated subset of Epsilon,Serial,Parallel,G1,Z,Shenandoah (default: all the JDK "
                        "has)")
    r.add_argument("--heap-factors", default=None, metavar="X,Y,...",
                   help="explicit multiples of the minimum heap (default: --factor-count spaced over --heap-range)")
    r.add_argument("--factor-count", type=int, default=5, help="how many heap factors (default 5)")
    r.add_argument("--heap-range", type=float, default=3.0, help="largest heap factor (default 3)")
    r.add_argument("--spread", type=float, default=1.0,
                   help="spacing: 0 even, 1 as the public runner (denser near the minimum)")
    r.add_argument("--invocations", type=int, default=5, help="JVM invocations per cell (default 5)")
    r.add_argument("--warmups", type=int, default=None, help="warm-up iterations before the timed one "
                                                             "(default: the workload's, 2)")
    r.add_argument("--java", default="java")
    r.add_argument("--timeout", type=float, default=60.0,
                   help="seconds one JVM may run (default 60); a cell that times out is not run again")
    r.add_argument("--no-perf", action="store_true", help="do not use perf stat even where it works")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=run_harness)

    q = gcsub.add_parser("lbo", help="LBO tables (Table 5 shape) with 95%% Fieller CIs from results: droidlag's "
                                     "results.jsonl/.csv, or logs with Tabulate Statistics / MMTk Statistics")
    q.add_argument("results", metavar="RESULTS", help="a results folder or file")
    q.add_argument("--plot", metavar="PNG_OR_SVG", help="write LBO-vs-heap-factor plots (one per metric)")
    q.add_argument("--baseline", choices=["heap", "benchmark"], default="heap",
                   help="baseline per benchmark and heap factor (default) or per benchmark over all heaps")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=run_lbo)


def _csv(s: str | None) -> list[str] | None:
    return [x.strip() for x in s.split(",") if x.strip()] if s else None


def run_harness(args) -> int:
    from tqdm import tqdm

    from droidlag.gc.lbo import heap_factors
    from droidlag.gc.lbo.harness import RunPlan, run_plan
    from droidlag.gc.lbo.harness.workloads import HarnessError

    try:
        hfs = [float(x) for x in _csv(args.heap_factors) or []] if args.heap_factors else \
            [round(h, 3) for h in heap_factors(args.factor_count, args.heap_range, args.spread)]
    except ValueError:
        print("droidlag: --heap-factors wants numbers like 1.5,2,3", file=sys.stderr)
        return EXIT_USAGE
    plan = RunPlan(Path(args.results), workloads=_csv(args.workloads) or [], collectors=_csv(args.collectors),
                   heap_factors=hfs, invocations=args.invocations, warmups=args.warmups, java=args.java,
                   timeout_s=args.timeout, perf=False if args.no_perf else None)
    bar = tqdm(total=0, unit="run", desc="gc run", file=sys.stderr, disable=None)

    def progress(done: int, total: int, what: str) -> None:
        bar.total = total
        bar.n = done
        bar.set_postfix_str(what)
        bar.refresh()

    try:
        summary = run_plan(plan, progress)
    except HarnessError as e:
        bar.close()
        print(f"droidlag: {e}", file=sys.stderr)
        return EXIT_NO_INPUT
    bar.close()
    if args.json:
        print_json(summary.to_dict())
    else:
        print(f"ran {summary.ran} invocations ({summary.oom} out of memory, {summary.timeouts} timed out, "
              f"{summary.failed} failed, "
              f"{summary.skipped} already done) in {summary.seconds:.0f} s; collectors: "
              f"{', '.join(summary.collectors)}; minimum heaps: "
              + ", ".join(f"{w} {mb} MB" for w, mb in summary.minheap_mb.items())
              + f"\nresults in {args.results}; next: droidlag gc lbo {args.results}")
    return EXIT_OK


def run_lbo(args) -> int:
    from droidlag.gc.lbo import LboConfig, lbo_tables
    from droidlag.gc.lbo.papers import side_by_side, table5_checks, trend_checks
    from droidlag.io.lbo import read_lbo_results
    from droidlag.report.gc_lbo import checks_text, plot_lbo, side_by_side_text, table_text

    invocations, warnings = read_lbo_results(args.results)
    tables = lbo_tables(invocations, LboConfig(baseline_scope=args.baseline))
    trends, table5, sbs = trend_checks(tables), table5_checks(), side_by_side(tables)
    plots = [str(p) for p in plot_lbo(tables, Path(args.plot))] if args.plot else []
    if args.json:
        print_json({"invocations": len(invocations), "tables": {m: t.to_dict() for m, t in tables.items()},
                    "trends": [c.to_dict() for c in trends], "table5": [c.to_dict() for c in table5],
                    "side_by_side": sbs,
                    "plots": plots, "warnings": [w.to_dict() for w in warnings]})
        return EXIT_OK
    print(f"{len(invocations)} invocations from {args.results}")
    for t in tables.values():
        print()
        print(table_text(t))
    print()
    print(side_by_side_text(sbs))
    print()
    print(checks_text(trends, "Our runs against the papers' trends:"))
    print()
    print(checks_text(table5, "The method on Sareen et al.'s published Table 5 (task clock, 2x heap):"))
    for p in plots:
        print(f"plot: {p}")
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    return EXIT_OK
