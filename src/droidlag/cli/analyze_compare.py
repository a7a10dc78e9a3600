"""`droidlag analyze --before A --after B`: two traces of the same app, before and after a change (a UI trim),
analyzed like every other input and paired in the report beside the layout findings the change fixed
(`--layouts-before`/`--layouts-after`). Kept apart from cli/analyze.py, which only registers and calls it."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("before/after a change (the SR/FF change beside the UI findings it fixed)")
    g.add_argument("--before", metavar="TRACE", help="a trace of the app before the change (analyzed with PATHs)")
    g.add_argument("--after", metavar="TRACE", help="a trace of the same app after the change")
    g.add_argument("--layouts-before", metavar="DIR", help="the app's layouts (source tree) before the change")
    g.add_argument("--layouts-after", metavar="DIR", help="the app's layouts after the change")
    g.add_argument("--layouts-context", action="append", default=[], metavar="DIR",
                   help="folders that only resolve includes, styles and themes for both sides (e.g. the rest of the "
                        "app when the layout folders hold only the changed files); repeatable")


def usage_error(args) -> str | None:
    """Why the paths and before/after options do not fit together, or None."""
    if not args.paths and not (args.before or args.after):
        return "give at least one PATH, or --before and --after"
    if bool(args.before) != bool(args.after):
        return "give both --before and --after"
    if bool(args.layouts_before) != bool(args.layouts_after):
        return "give both --layouts-before and --layouts-after, or neither"
    if args.layouts_before and not args.before:
        return "--layouts-before/--layouts-after need --before and --after (the traces to compare)"
    for opt, d in (("--layouts-before", args.layouts_before), ("--layouts-after", args.layouts_after),
                   *(("--layouts-context", c) for c in args.layouts_context)):
        if d and not Path(d).is_dir():
            return f"{opt} {d}: not a folder"
    for opt, f in (("--before", args.before), ("--after", args.after)):
        if f and not Path(f).exists():
            return f"{opt} {f}: no such file"
    return None


def all_paths(args) -> list[str | Path]:
    """PATHs plus the before/after traces (each once)."""
    paths: list[str | Path] = list(args.paths)
    seen = {Path(p).resolve() for p in paths}
    for f in (args.before, args.after):
        if f and Path(f).resolve() not in seen:
            paths.append(f)
            seen.add(Path(f).resolve())
    return paths


def pair(args, findings) -> bool:
    """Add the before/after comparison to findings (when asked for); False when it was asked for and could not be
    made (the reason goes to stderr and into findings.json)."""
    if not args.before:
        return True
    from droidlag.findings import add_comparison
    cmp = add_comparison(findings, args.before, args.after,
                         [args.layouts_before] if args.layouts_before else None,
                         [args.layouts_after] if args.layouts_after else None, args.layouts_context)
    if cmp["not_possible_reason"]:
        print(f"droidlag: no before/after comparison: {cmp['not_possible_reason']}", file=sys.stderr)
        return False
    return True
