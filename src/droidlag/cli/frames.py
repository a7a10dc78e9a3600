"""`droidlag frames`: slow/frozen frames (naive and buffer-aware) and their causes, from a trace or gfxinfo text."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("frames", help="slow rendering / frozen frames (naive and buffer-aware) and their root "
                                      "causes, from a Perfetto/systrace trace or `dumpsys gfxinfo framestats` text")
    p.add_argument("paths", nargs="+", metavar="PATH", help="Perfetto traces, systrace/atrace files, dumpsys "
                   "gfxinfo output, folders or zip archives of them")
    p.add_argument("--app", help="only this app (package / process name)")
    p.add_argument("--vsync-ms", type=float, help="the panel's vsync period in ms (default: from the trace)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args) -> int:
    import sys

    from droidlag.cli.common import EXIT_NO_INPUT, EXIT_USAGE, print_json
    from droidlag.findings import frames_reports
    from droidlag.frames import FramesConfig

    try:
        config = FramesConfig(app=args.app,
                              vsync_period_ns=round(args.vsync_ms * 1e6) if args.vsync_ms is not None else None)
    except ValueError as e:
        print(f"droidlag frames: {e} (--vsync-ms {args.vsync_ms})", file=sys.stderr)
        return EXIT_USAGE
    reports, inputs = frames_reports(args.paths, config)
    if not reports:
        why = "; ".join(f"{i.display or i.path}: {i.reason}" for i in inputs if i.reason)[:2000]
        print(f"droidlag frames: no trace or gfxinfo text could be read ({why or 'no input files'})",
              file=sys.stderr)
        return EXIT_NO_INPUT
    if args.json:
        from droidlag.report.frames_json import frames_dict
        print_json(frames_dict(reports[0]) if len(reports) == 1 and len(args.paths) == 1 and not
                   any(i.kind == "zip" for i in inputs) else
                   {"reports": [frames_dict(r) for r in reports], "inputs": [i.to_dict() for i in inputs]})
        return 0
    for report in reports:
        _print(report)
    for i in inputs:
        if i.status in ("skipped", "failed"):
            print(f"{i.display or i.path}: {i.status}: {i.reason}")
    return 0


def _fmt(v, suffix="") -> str:
    return "n/a" if v is None else f"{v}{suffix}"


def _pct(v: float | None) -> str:
    return _fmt(None if v is None else round(v, 2), "%")


def _print(report) -> None:
    from droidlag.report.frames_json import ms

    s = report.summary
    print(f"{report.path}: {report.source}, {s.frames} frames; buffer signal: {s.buffer_signal}")
    if s.frames:
        print(f"  naive (16.67 ms / 700 ms):  SR {s.sr_naive} ({_pct(s.sr_naive_pct)}), "
              f"FF {s.ff_naive} ({_pct(s.ff_naive_pct)})")
        vs = s.naive_vsync_period
        rates = s.sections.get("refresh_rates") or []
        if len(rates) > 1:
            print("  panel:                      " + ", ".join(
                f"{r.hz:g} Hz ({r.frames} frames, SR {r.sr_vsync})" for r in rates))
        if vs:
            period = ms(vs.vsync_period_ns)
            hz = f", {1000 / period:.0f} Hz" if period else ""
            print(f"  naive (vsync {period} ms{hz}{' and others' if len(rates) > 1 else ''}): "
                  f"SR {vs.sr} ({_pct(vs.sr_pct)})")
        if s.incomplete_frames:
            print(f"  incomplete (no end in the trace, not counted): {s.incomplete_frames}")
        print(f"  buffer-aware:               SR {_fmt(s.sr)} ({_pct(s.sr_pct)}), "
              f"FF {_fmt(s.ff)} ({_pct(s.ff_pct)})")
        if s.not_possible_reason:
            print(f"    {s.not_possible_reason}")
        print("  frame time ms:              " + " ".join(f"{k} {ms(v)}" for k, v in s.frame_time_ns.items()))
        agree = s.frametimeline_agreement
        if agree:
            n = agree["naive_16ms"]
            print(f"  vs FrameTimeline ({agree['frames']} frames, {agree['frametimeline_app_jank']} app jank, "
                  f"{agree['buffer_stuffing_only']} buffer stuffing): naive precision {_fmt(n['precision'])} "
                  f"recall {_fmt(n['recall'])}")
            for layer in agree.get("by_layer") or []:
                print(f"    layer {layer['process'] or layer['pid']} / {layer['layer']}: {layer['frames']} frames, "
                      f"{layer['frametimeline_app_jank']} app jank; over 16.67 ms {layer['naive_sr_ff']}, agree "
                      f"{layer['agree']}, false alarms {layer['naive_fp']}, missed {layer['naive_fn']}")
        for c in s.causes[:6]:
            share = None if c.mean_share is None else round(c.mean_share, 4)
            normal = None if c.mean_normal_share is None else round(c.mean_normal_share, 4)
            print(f"  cause {c.name:<18} led {c.leading} of {c.frames} SR/FF frames it was in, "
                  f"{_fmt(ms(c.cost_over_budget_ns), ' ms')} over budget, mean share {_fmt(share)} "
                  f"(normal {_fmt(normal)})")
        r = s.sections.get("paper_rollups") or {}
        if r.get("sr_ff_frames"):
            cc, ds, cpu = r["cause_classes"], r["dominant_stage"], r.get("cpu_utilisation") or {}
            print(f"  paper roll-ups: cause classes {cc['pct']} (paper {cc['paper_pct']}); dominant stage "
                  f"{ds.get('dominant')} (paper {ds['paper']}); CPU busy SR {_fmt(cpu.get('sr_pct'), '%')}, "
                  f"FF {_fmt(cpu.get('ff_pct'), '%')}, normal {_fmt(cpu.get('normal_pct'), '%')}")
    for g in s.sections.get("gfxinfo_summaries") or []:
        rendered = "frames in its histogram" if g.get("total_from_histogram") else "frames rendered"
        janky = (f"Android counts {g['janky_frames']} janky ({_fmt(g['janky_percent'], '%')})"
                 if g["janky_frames"] is not None else "Android's janky count unreadable")
        print(f"  {g['process']}: {g['total_frames_rendered']} {rendered}, {janky}; histogram: SR "
              f"{_fmt(g['sr_naive_histogram'])}, FF {_fmt(g['ff_naive_histogram'])}")
    from droidlag.report.frames_json import pacing_dict
    for p in map(pacing_dict, s.sections.get("frame_pacing") or []):
        print(f"  pacing {p.get('process') or p['pid']} / {p.get('producer')}: {p['buffers']} buffers, target "
              f"{p['target_fps']} fps; over 1.5x {p['over_1.5x']} ({p['over_1.5x_pct']}%), over 2x {p['over_2.0x']}, "
              f"stutter runs {p['stutter_runs']}, longest interval {p['interval_ms']['max']} ms")
    for n in report.notes:
        print(f"  note: {n}")
    for w in report.warnings[:5]:
        print(f"  warning: {w}")
