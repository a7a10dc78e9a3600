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


def _print_summary(findings, written: dict, n_used: int) -> None:
    heads = [h for h in findings.headlines() if h.severity > 0]
    skipped = [i for i in findings.inputs if i.status in ("skipped", "failed", "error")]
    print(f"droidlag: {n_used} input(s) analyzed, {len(skipped)} skipped")
    if not heads and n_used:
        print("  no slow frames, frozen frames, ANRs or SNRs found")
    for h in heads[:10]:
        mark = {"bad": "!!", "warn": "! ", "ok": "ok"}.get(h.level, "  ")
        print(f" {mark} {h.text}")
    if len(heads) > 10:
        print(f"    ... and {len(heads) - 10} more in the report")
    for i in skipped[:5]:
        print(f"  {'error' if i.status == 'error' else 'skipped'} {i.display or i.path}: {i.reason}")
    if len(skipped) > 5:
        print(f"  ... {len(skipped) - 5} more skipped (see findings.json)")
    print(f"report: {written['report.html']}")
