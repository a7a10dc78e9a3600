"""`droidlag analyze`: every analysis that applies to the inputs, a ten-second terminal summary, report.html,
findings.json and the verdicts as a Perfetto trace.

Exit codes: 0 ran; 1 a droidlag bug hit one or more inputs (each is an "error" entry in the report, the rest of the
report is kept); 2 usage error (including an --out folder holding files droidlag did not write, without --force);
3 no usable input (every input unreadable or of no use, and no bug)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from droidlag.cli import analyze_compare


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analyze", help="everything in a user's data (traces, dumps, bugreports, gfxinfo, folders, "
                                       "archives): terminal summary, report.html, findings.json, Perfetto export")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files, folders or zip archives")
    p.add_argument("--out", default="droidlag-report", help="output folder (default: droidlag-report)")
    p.add_argument("--json", action="store_true", help="print findings.json to stdout instead of the summary")
    p.add_argument("--open", action="store_true", help="open report.html in the default browser")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary (for scripts)")
    p.add_argument("--force", action="store_true", help="write into --out even when it holds files droidlag did "
                                                        "not write (they are left alone; droidlag's own are replaced)")
    analyze_compare.register_arguments(p)
    p.set_defaults(func=run)


def _progress(quiet: bool):
    if quiet or not sys.stderr.isatty():
        return None, None
    from tqdm import tqdm
    bar = tqdm(desc="analyzing", unit="file", file=sys.stderr, leave=False)

    def step(path: str) -> None:
        bar.set_postfix_str(Path(path).name[-40:])
        bar.update(1)
    return bar, step


def run(args) -> int:
    from droidlag.cli.common import EXIT_INTERNAL, EXIT_NO_INPUT, EXIT_USAGE, clean, print_json
    from droidlag.findings import analyze
    from droidlag.report.writer import TMP_PREFIX, OutputError, check_out_dir, write_outputs

    bad = analyze_compare.usage_error(args)
    if bad:
        print(f"droidlag analyze: {bad}", file=sys.stderr)
        return EXIT_USAGE
    out = Path(args.out)
    try:   # a bad output folder is a usage error, found before minutes of analysis
        check_out_dir(out, args.force)
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f"{TMP_PREFIX}write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OutputError as e:
        print(clean(f"droidlag: --out: {e}"), file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(clean(f"droidlag: cannot write to --out {out}: {e.strerror or e}"), file=sys.stderr)
        return EXIT_USAGE
    bar, step = _progress(args.quiet)
    try:
        findings = analyze(analyze_compare.all_paths(args), progress=step, exclude=[out])
    finally:
        if bar is not None:
            bar.close()
    paired = analyze_compare.pair(args, findings)
    written = write_outputs(findings, out, force=True)   # checked above; files are ours or were allowed
    from droidlag.findings import usable_inputs
    used = usable_inputs(findings.inputs)
    errors = [i for i in findings.inputs if i.status == "error"]
    if args.json:
        import json
        print_json(json.loads(written["findings.json"].read_text(encoding="utf-8")))
    elif not args.quiet:
        _print_summary(findings, written, len(used))
    if args.open:
        import webbrowser
        webbrowser.open(written["report.html"].resolve().as_uri())
    if errors:
        print(clean(f"droidlag: internal error (a bug) on {len(errors)} input(s); the rest of the report is kept: "
                    + "; ".join(f"{i.display or i.path}: {i.reason}" for i in errors[:3])), file=sys.stderr)
        return EXIT_INTERNAL
    if not used:
        print(clean("droidlag: no usable input: " + "; ".join(f"{i.display or i.path}: {i.reason}"
                                                             for i in findings.inputs[:5])), file=sys.stderr)
        return EXIT_NO_INPUT
    return 0 if paired else EXIT_NO_INPUT


def _accounts(heads: list, used: list) -> tuple[list[tuple[str, str]], int, list[str]]:
    """Each analysed input accounted for beside the headlines worth a line (severity > 0): the lines (input, text)
    saying what could not be checked and why (a trace without app frames, as report.html says it; a logcat without
    GC lines), how many inputs had nothing at all to check, and the names of those checked that no headline is
    about."""
    lines: list[tuple[str, str]] = []
    n_nothing = 0
    quiet: list[str] = []
    for i in used:
        name = i.display or str(i.path)
        mine = [h for h in heads if h.source and (h.source == name or h.source.startswith(name + "!"))]
        found = any(h.severity > 0 for h in mine)
        empty = [h.text for h in mine if h.severity <= 0 and h.kind == "info"]
        if not empty and not found and i.reason:
            empty = [f"{name}: {i.reason}."]
        if empty and not found:
            n_nothing += 1
            lines += [(name, f"nothing to check: {t}") for t in empty]
        elif empty:   # something else was found in it (GC, say), its frames could not be checked
            lines += [(name, t) for t in empty]
        elif not found:
            quiet.append(name)
    return lines, n_nothing, quiet


def _names(names: list[str], most: int) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _print_summary(findings, written: dict, n_used: int) -> None:
    """Every input accounted for: the headlines (worst first), each input with nothing to check and why, the
    count of the others checked with nothing found, the skipped ones. The all-clear only when every input had
    something checked and nothing was found."""
    from droidlag.findings import usable_inputs
    every = findings.headlines()
    heads = [h for h in every if h.severity > 0]
    skipped = [i for i in findings.inputs if i.status in ("skipped", "failed", "error")]
    unchecked, n_nothing, quiet = _accounts(every, usable_inputs(findings.inputs))
    empty = f" ({n_nothing} with nothing to check)" if n_nothing else ""
    print(f"droidlag: {n_used} input(s) analyzed{empty}, {len(skipped)} skipped")
    if not heads and not unchecked and n_used:
        print("  no slow frames, frozen frames, ANRs or SNRs found")
    for h in heads[:10]:
        mark = {"bad": "!!", "warn": "! ", "ok": "ok"}.get(h.level, "  ")
        print(f" {mark} {h.text}")
    if len(heads) > 10:
        print(f"    ... and {len(heads) - 10} more in the report")
    for _, text in unchecked[:10]:
        print(f" -- {text}")
    if len(unchecked) > 10:   # the rest named, each said in report.html
        rest = list(dict.fromkeys(name for name, _ in unchecked[10:]))
        print(f"    ... and {len(unchecked) - 10} more (see report.html): {_names(rest, 10)}")
    if quiet and (heads or unchecked):
        print(f"  nothing found in {len(quiet)} other input(s): {_names(quiet, 3)}")
    for i in skipped[:5]:
        print(f"  {'error' if i.status == 'error' else 'skipped'} {i.display or i.path}: {i.reason}")
    if len(skipped) > 5:
        print(f"  ... {len(skipped) - 5} more skipped (see findings.json)")
    print(f"report: {written['report.html']}")
