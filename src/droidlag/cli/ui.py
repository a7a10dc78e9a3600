"""`droidlag ui`: redundant UI layers. `layouts APP_DIR` checks an app's layout XML (includes, merges, themes and
drawables resolved across files); `hierarchy FILE` measures overdraw in a runtime view dump and draws the heat
map; `compare` shows the SR/FF change of a trim beside the UI findings it fixed."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ui", help="redundant UI layers and overdraw: app layouts, runtime view hierarchies, "
                                  "before/after a trim")
    ui = p.add_subparsers(dest="ui_command", metavar="SUBCOMMAND")
    lay = ui.add_parser("layouts", help="findings in an app's res/layout*/*.xml")
    lay.add_argument("app_dir", metavar="APP_DIR", help="the app's source tree (or a folder holding res/)")
    lay.add_argument("--context", action="append", default=[], metavar="DIR",
                     help="more source folders used only to resolve includes, styles, themes and the manifest "
                          "(e.g. the rest of the app when APP_DIR holds only changed files); repeatable")
    lay.add_argument("--exclude", action="append", default=[], metavar="NAME",
                     help="sub-folder names not to read (repeatable)")
    lay.add_argument("--json", action="store_true", help="print the findings as JSON")
    lay.set_defaults(func=run_layouts)
    hie = ui.add_parser("hierarchy", help="overdraw heat map and redundant layers of a uiautomator, dumpsys "
                                          "activity top, DroidBot or RICO view dump")
    hie.add_argument("file", metavar="FILE")
    hie.add_argument("--json", action="store_true", help="print the report as JSON")
    hie.add_argument("--out", metavar="DIR", help="write heatmap.png, hierarchy.json and report.html here")
    hie.set_defaults(func=run_hierarchy)
    cmp = ui.add_parser("compare", help="SR/FF before and after a UI change, beside the UI findings it fixed")
    cmp.add_argument("--before", required=True, metavar="TRACE")
    cmp.add_argument("--after", required=True, metavar="TRACE")
    cmp.add_argument("--layouts-before", metavar="DIR")
    cmp.add_argument("--layouts-after", metavar="DIR")
    cmp.add_argument("--layouts-context", action="append", default=[], metavar="DIR",
                     help="folders that only resolve includes, styles and themes for both sides; repeatable")
    cmp.add_argument("--json", action="store_true", help="print the comparison as JSON")
    cmp.add_argument("--out", metavar="DIR", help="write compare.json and report.html here")
    cmp.set_defaults(func=run_compare)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_layouts(args) -> int:
    from droidlag.cli.common import print_json
    from droidlag.io.android_res import read_app
    from droidlag.ui.layouts import analyze_layouts

    res, warnings = read_app([args.app_dir, *args.context], report_roots=1, exclude=tuple(args.exclude))
    report = analyze_layouts(res)
    if args.json:
        d = report.to_dict()
        d["path"] = args.app_dir
        d["warnings"] = [w.to_dict() for w in warnings]
        print_json(d)
        return 0
    root = str(Path(args.app_dir))
    print(f"{report.files} layout files in {args.app_dir}: {len(report.findings)} findings "
          + ", ".join(f"{k} {v}" for k, v in report.counts().items()))
    for f in report.findings:
        rel = f.file[len(root):].lstrip("/") if f.file.startswith(root) else f.file
        print(f"{rel}:{f.line}: {f.kind}: {f.view_class}" + (f" @id/{f.view_id}" if f.view_id else "")
              + f" (+{f.layers} layer): {f.fix}")
    for n in report.notes:
        print(f"note: {n}")
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    return 0


def run_hierarchy(args) -> int:
    import json

    from droidlag.cli.common import print_json
    from droidlag.io.view_hierarchy import read_hierarchy
    from droidlag.report.ui_html import heatmap_png, hierarchy_section, standalone_page
    from droidlag.ui.hierarchy import analyze_hierarchy

    h, warnings = read_hierarchy(args.file)
    report = analyze_hierarchy(h)
    d = report.to_dict()
    d["warnings"] = [w.to_dict() for w in warnings]
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        png = heatmap_png(report.draws, report.boxes)
        (out / "heatmap.png").write_bytes(png)
        (out / "hierarchy.json").write_text(json.dumps(d, indent=1), encoding="utf-8")
        (out / "report.html").write_text(standalone_page("droidlag ui hierarchy", hierarchy_section(d, png)), encoding="utf-8")
    if args.json:
        print_json(d)
        return 0
    share = report.overdraw_share()
    kind = "estimate" if report.estimate else "measured"
    print(f"{h.format} dump, {report.views} views ({report.drawing_views} drawing), screen {h.screen[0]}x{h.screen[1]}"
          f"{', ' + h.activity if h.activity else ''}")
    print(f"layers per pixel ({kind}): mean {report.mean_draws():.2f}; overdraw " +
          ", ".join(f"{k.replace('_', ' ')} {100 * v:.0f}%" for k, v in share.items()))
    if report.estimate:
        print(f"assumption: {report.assumption}")
    worst = sorted(report.regions, key=lambda r: -r["max_layers"])[:3]
    print("worst regions: " + "; ".join(f"({r['x']},{r['y']}) {r['max_layers']} layers" for r in worst))
    if report.redundant_classes:
        print("redundant components: " + ", ".join(f"{k} {v}" for k, v in report.redundant_classes.items()))
    for chain in report.chains:
        print(f"same-bounds chain, {chain.redundant} redundant: {' > '.join(chain.classes)} ({chain.source})")
    for cv in report.covered:
        print(f"fully covered: {cv.cls} {cv.resource_id or ''} under {cv.covered_by} ({cv.source})")
    if args.out:
        print(f"heat map: {Path(args.out) / 'heatmap.png'}")
    return 0


def _write_compare(d: dict, out: Path) -> None:
    import json

    from droidlag.report.ui_html import compare_section, standalone_page
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.json").write_text(json.dumps(d, indent=1), encoding="utf-8")
    (out / "report.html").write_text(standalone_page("droidlag ui compare", compare_section(d)), encoding="utf-8")


def run_compare(args) -> int:
    from droidlag.cli.common import EXIT_USAGE, print_json
    from droidlag.findings import compare_runs

    if bool(args.layouts_before) != bool(args.layouts_after):
        print("droidlag: give both --layouts-before and --layouts-after, or neither", file=sys.stderr)
        return EXIT_USAGE
    d = compare_runs(args.before, args.after, [args.layouts_before] if args.layouts_before else None,
                     [args.layouts_after] if args.layouts_after else None, args.layouts_context)
    if args.out:
        _write_compare(d, Path(args.out))
    if args.json:
        print_json(d)
        return 0
    for n in d["notes"]:
        print(f"note: {n}")
    for k, v in d["change"].items():
        print(f"{k:>22}: {d['before'][k]} -> {d['after'][k]} ({'+' if v and v > 0 else ''}{v})")
    if d["fixed_findings"]:
        print(f"UI findings fixed ({len(d['fixed_findings'])}):")
        for f in d["fixed_findings"]:
            print(f"  {f['file']}:{f['line']}: {f['kind']}: {f['view_class']}")
    return 0
