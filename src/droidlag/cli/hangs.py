"""`droidlag hangs PATH...`: ANR/SNR events with their wait-for chains, critical threads, causes and clusters."""
from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("hangs", help="ANR/SNR root causes from thread dumps, folders and bugreports: wait-for "
                                     "chains, critical threads, deadlocks, causes, root-cause clusters")
    p.add_argument("paths", nargs="+", metavar="PATH", help="thread dumps (traces.txt, anr_*), folders, bugreports")
    p.add_argument("--threshold", type=float, default=0.95, help="cluster similarity threshold (default 0.95)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    from droidlag.cli.common import EXIT_NO_INPUT, EXIT_USAGE, print_json
    from droidlag.findings import analyze_hangs
    from droidlag.hangs.config import HangsConfig
    from droidlag.io.dump_units import expand_paths

    try:
        config = HangsConfig(threshold=args.threshold)
    except ValueError as e:
        print(f"droidlag hangs: {e}", file=sys.stderr)
        return EXIT_USAGE
    files = expand_paths(args.paths)
    bar = None
    if len(files) > 3 and not args.quiet and sys.stderr.isatty():
        from tqdm import tqdm
        bar = tqdm(total=len(files), unit="file", file=sys.stderr, leave=False)
    report = analyze_hangs(files, config, progress=(lambda _p: bar.update(1)) if bar else None)
    if bar is not None:
        bar.close()
    if args.json:
        from droidlag.findings.narrative import hang_sentence, wait_for_graph
        d = report.to_dict()
        for ev in d["events"]:   # as in findings.json (docs/findings-schema.md)
            ev["wait_for_graph"] = wait_for_graph(ev)
            ev["sentence"] = hang_sentence(ev)
        print_json(d)
    else:
        _print_summary(report)
    if not report.events and len(report.errors) == report.files:
        if not report.files:
            print("droidlag: no files found in " + ", ".join(args.paths), file=sys.stderr)
        elif args.json:   # the summary (stdout) already listed them otherwise
            for err in report.errors:
                print(f"droidlag: {err}", file=sys.stderr)
        return EXIT_NO_INPUT
    return 0


def _print_summary(report) -> None:
    print(f"{report.files} file(s), {len(report.events)} event(s), {len(report.clusters)} cluster(s)")
    for e in report.events:
        several = len(e.clusters) > 1
        if several:   # a deadlock whose critical threads landed in different clusters: say which went where
            crit = ", ".join(f"{n.label()} [cluster {c}]" for n, c in zip(e.critical_threads, e.critical_clusters))
            where = f"clusters {', '.join(map(str, e.clusters))} (primary {e.cluster})"
        else:
            crit = ", ".join(n.label() for n in e.critical_threads)
            where = f"cluster {e.cluster}"
        dl = "  DEADLOCK" if e.deadlock else ""
        pid = f" (pid {e.pid})" if e.pid is not None else ""
        print(f"\n[{e.kind.upper()}] {e.process or 'process not named in the report'}{pid}  {where}  "
              f"cause: {e.cause}{dl}")
        print(f"  source:   {e.source}")
        print(f"  blocked:  {e.blocked_thread.label()}")
        for s in e.chain[1:]:
            via = s["edge"]
            print(f"    -> {s['node'].label()}  ({via.kind}{' ' + via.lock if via.lock else ''}; {via.how})")
        print(f"  critical: {crit}")
        words = (e.evidence.get("cause") or {}).get("words")
        if words:
            print(f"  why:      {words}")
    if report.clusters:
        print("\nclusters (largest first):")
        shared = {e.id for e in report.events if len(e.clusters) > 1}
        for c in report.clusters:
            also = sum(1 for m in c["members"] if m in shared)
            note = f" ({also} also in other clusters)" if also else ""
            if c.get("unknown"):
                print(f"  #{c['id']}: unknown bucket, {c['size']} event(s) with no stack to compare (not a cluster)")
                continue
            sig = "; ".join(c.get("signature") or []) or "no app frame"
            print(f"  #{c['id']}: {c['size']} event(s){note}, cause {c['cause']}, signature {sig}, "
                  f"representative {c['representative']}")
    for w in report.warnings[:20]:
        print(f"warning: {w}", file=sys.stderr)
    for e in report.errors:
        print(f"skipped: {e}", file=sys.stderr)
