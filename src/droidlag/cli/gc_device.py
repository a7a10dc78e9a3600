"""`droidlag gc device PATH...`: what garbage collection cost each process, from ART's GC log lines (logcat files,
bugreports, dump texts), the GC totals in ART's process dumps, and GC slices in traces. Exit codes: 0 ran, 3 no usable input."""
from __future__ import annotations

import argparse
import sys

TRACE_KINDS = ("perfetto", "systrace")
LOG_KINDS = ("logcat", "anr", "bugreport")


def register(gcsub: argparse._SubParsersAction) -> None:
    p = gcsub.add_parser("device", help="GC cost per process from logcat/bugreport GC lines, ART process dumps "
                                        "and trace GC slices: collections by kind, pauses, GC wall/CPU time, blocking waits by thread, "
                                        "freed bytes, heap against its limit")
    p.add_argument("paths", nargs="+", metavar="PATH", help="logcat files, bugreports (zip or text), traces, folders")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--top", type=int, default=10, help="processes shown per input in the text output (default 10)")
    p.set_defaults(func=run)


def _reports(item) -> list:
    """The GC reports of one input: a trace's, or a text's log lines and process dumps (each when present)."""
    if item.kind in TRACE_KINDS:
        from droidlag.gc.trace import analyze_trace_gc
        from droidlag.io import read_trace
        return [analyze_trace_gc(read_trace(item.path))]
    if item.kind in LOG_KINDS:
        from droidlag.gc.device import summarize_gc_dumps, summarize_gc_log
        from droidlag.io.art_gc_log import read_device_gc
        log, dumps = read_device_gc(item.path)
        out = [summarize_gc_log(log)] if log.events else []
        return out + ([summarize_gc_dumps(dumps, str(item.path))] if dumps else [])
    return []


def run(args) -> int:
    import tempfile
    from pathlib import Path

    from tqdm import tqdm

    from droidlag.cli.common import EXIT_NO_INPUT, print_json
    from droidlag.errors import InputError
    from droidlag.findings import expand_inputs

    reports, skipped = [], []
    with tempfile.TemporaryDirectory(prefix="droidlag-") as tmp:   # zip archives are opened as analyze opens them
        items = expand_inputs(args.paths, Path(tmp))
        for item in tqdm(items, desc="gc device", unit="file", file=sys.stderr, leave=False, disable=None):
            name = item.display or str(item.path)
            if item.kind == "zip" and item.status == "analyzed":
                continue     # its files follow
            if item.status != "pending":
                skipped.append({"path": name, "reason": item.reason})
                continue
            try:
                got = _reports(item)
            except InputError as e:
                skipped.append({"path": name, "reason": str(e)})
                continue
            if not got:
                skipped.append({"path": name, "reason": f"no GC data is read from {item.kind} input"})
            for r in got:
                if item.display and hasattr(r, "source"):
                    r.source = str(r.source).replace(str(item.path), item.display)
            reports += got
    if args.json:
        print_json({"reports": [r.to_dict() for r in reports], "skipped": skipped})
    else:
        _print(reports, skipped, args.top)
    if not reports:
        print("droidlag: no usable input", file=sys.stderr)
        return EXIT_NO_INPUT
    return 0


def _print(reports, skipped, top: int) -> None:
    from droidlag.findings.narrative import gc_sentence

    for r in reports:
        d = r.to_dict()
        if d["kind"] == "log":
            what = ", ".join(f"{k} {n}" for k, n in d["events"].items()) + " GC lines"
        elif d["kind"] == "dump":
            what = f"GC totals of {len(d['processes'])} process dump(s)"
        else:
            what = ", ".join(f"{k} {n}" for k, n in d["slices"].items()) + " GC slices"
        print(f"{d['source']}: {what or 'no GC data'}")
        for p in d["processes"][:top]:
            print(f"  {gc_sentence(p)}")
        if len(d["processes"]) > top:
            print(f"  ... {len(d['processes']) - top} more process(es) (--top, --json)")
        for n in d["notes"]:
            print(f"  note: {n}")
        for w in d.get("warnings") or []:
            print(f"  warning: {w}")
    for s in skipped:
        print(f"skipped {s['path']}: {s['reason']}")
