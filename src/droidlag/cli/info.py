"""`droidlag info`: what a trace holds."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("info", help="what a trace holds: processes, threads, slices, sched, binder, block I/O, "
                                    "FrameTimeline (Perfetto or systrace/atrace)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="Perfetto traces (.perfetto-trace/.pftrace/.pb, gzip "
                   "ok), systrace/atrace files, folders or zip archives of them")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args) -> int:
    """Exit 0 when at least one trace was read (each input not read is named with its reason: on stderr, or in the
    JSON's `inputs`), as `frames` and `analyze` do; 3 when none was."""
    import sys

    from droidlag.cli.common import EXIT_NO_INPUT, clean, not_read, one_result, print_json
    from droidlag.findings import trace_summaries

    infos, inputs = trace_summaries(args.paths)
    if not infos:
        why = "; ".join(f"{i.display or i.path}: {i.reason}" for i in inputs if i.reason)[:2000]
        print(f"droidlag info: no trace could be read ({why or 'no input files'})", file=sys.stderr)
        return EXIT_NO_INPUT
    if args.json:
        print_json(infos[0] if one_result(args.paths, inputs, len(infos)) else
                   {"traces": infos, "inputs": [i.to_dict() for i in inputs]})
    else:
        for info in infos:
            _print(info)
    for i in not_read(inputs):
        print(clean(f"droidlag info: {i.display or i.path}: {i.status}: {i.reason}"), file=sys.stderr)
    return 0


def _print(info: dict) -> None:
    print(f"{info['path']}: {info['format']} trace, {info['duration_ns'] / 1e9:.3f} s")
    rows = [
        ("processes", info["processes"]), ("threads", info["threads"]), ("slices", info["slices"]),
        ("sched intervals", info["sched_intervals"]), ("counters", info["counters"]),
        ("cpu frequency samples", info["cpu_frequency_samples"]),
        ("binder transactions", f"{info['binder_transactions']} ({info['binder_replies']} with reply)"),
        ("block requests", info["block_requests"]),
        ("FrameTimeline rows", info["frame_timeline"]["rows"]),
    ]
    for k, v in rows:
        print(f"  {k:<24}{v}")
    jt = info["frame_timeline"]["surface_jank_types"]
    if jt:
        print("  app frame jank types:   " + ", ".join(f"{k} {v}" for k, v in jt.items()))
    classes = {c: d["class"] for c, d in info["cpus"].items() if d["class"]}
    if classes:
        print("  cpu classes (guessed):  " + " ".join(f"{c}:{k}" for c, k in classes.items()))
    for w in info["warnings"]:   # where, as every other command prints it (ReadWarning's form)
        where = w.get("path") or info["path"]
        where += f":{w['line']}" if w.get("line") is not None else \
            (f" (byte {w['offset']})" if w.get("offset") is not None else "")
        print(f"  warning: {where}: {w['message']}")
