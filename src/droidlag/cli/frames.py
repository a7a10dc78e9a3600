"""`droidlag frames`: slow/frozen frames (naive and buffer-aware) and their causes, from a trace or gfxinfo text.

Exit codes: 0 something was read (each input not read, or without the `--app` asked for, is named with its reason);
2 usage error; 3 nothing could be read, or `--app` matches no app with frames in any input (each input named with
the apps it does have frames of)."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("frames", help="slow rendering / frozen frames (naive and buffer-aware) and their root "
                                      "causes, from a Perfetto/systrace trace or `dumpsys gfxinfo framestats` text")
    p.add_argument("paths", nargs="+", metavar="PATH", help="Perfetto traces, systrace/atrace files, dumpsys "
                   "gfxinfo output, folders or zip archives of them")
    p.add_argument("--app", help="only this app (package / process name, or pid); exit 3, naming the apps each "
                   "input has frames of, when no input has it")
    p.add_argument("--vsync-ms", type=float, help="the panel's vsync period in ms (default: from the trace)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args) -> int:
    import sys

    from droidlag.cli.common import EXIT_NO_INPUT, EXIT_USAGE, not_read, one_result, print_json
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
    if args.app:
        reports = _of_the_app(args, config, reports, inputs)
        if not reports:
            return EXIT_NO_INPUT
    if args.json:
        from droidlag.report.frames_json import frames_dict
        print_json(frames_dict(reports[0]) if one_result(args.paths, inputs, len(reports)) else
                   {"reports": [frames_dict(r) for r in reports], "inputs": [i.to_dict() for i in inputs]})
        return 0
    for report in reports:
        _print(report)
    for i in not_read(inputs):
        print(f"{i.display or i.path}: {i.status}: {i.reason}")
    return 0


def _app_found(report, app: str) -> bool:
    """Whether `app` matched something with frames in this report: frames (complete or not) or an app drawing
    without the Choreographer (trace); rows of a process whose name holds it, or such a process among Android's
    own counters (gfxinfo: the counters are of every process, so their frame count says nothing of the match)."""
    s = report.summary
    sec = s.sections
    if "gfxinfo_summaries" in sec:
        return bool(sec.get("apps")) or any(app in (g.get("process") or "") for g in sec["gfxinfo_summaries"])
    return bool(s.frames or s.incomplete_frames or sec.get("apps") or sec.get("non_hwui_apps")
                or sec.get("frame_pacing"))


_DRAWS = {"flutter": "draws with Flutter", "unity": "draws with Unity", "surfaceview/gl": "draws with GL/SurfaceView",
          "no-choreographer": "queues buffers without the Choreographer"}


def _named(name: str | None, pid: object, what: str) -> str:
    """An app as `--app` can name it (its process name, else its pid), with what it drew."""
    return f"{name} (pid {pid}, {what})" if name and pid is not None else f"{name or f'pid {pid}'} ({what})"


def _apps_with_frames(report) -> list[str]:
    """The apps a report (of every app) has frames of, most frames first."""
    sec = report.summary.sections
    counts: dict[tuple[str | None, object], tuple[int, int]] = {}
    for a in sec.get("apps") or []:    # per process (trace) or per window (gfxinfo)
        key = (a.get("process"), a.get("pid"))
        n, idle = counts.get(key, (0, 0))
        counts[key] = (n + int(a.get("frames") or 0), idle + int(a.get("skipped_callbacks") or 0))
    out = [(n, _named(name, pid, f"{n} frames" + (f", {idle} doFrame callbacks that drew nothing" if idle else "")))
           for (name, pid), (n, idle) in counts.items()]
    named = {name for name, _ in counts}
    counted: dict[str, tuple[int, object]] = {}   # Android's counters of processes without per-frame rows
    for g in sec.get("gfxinfo_summaries") or []:     # (graphicsstats: a package's several, summed; no pid)
        if g.get("process") and g["process"] not in named:
            n, pid = counted.get(g["process"], (0, g.get("pid")))
            counted[g["process"]] = (n + int(g.get("total_frames_rendered") or 0), pid)
    out += [(n, _named(name, pid, f"{n} frames, Android's count")) for name, (n, pid) in counted.items()]
    for a in sec.get("non_hwui_apps") or []:        # apps that draw without the Choreographer
        r = a.get("renderer") or "no-choreographer"
        out.append((0, _named(a.get("process"), a.get("pid"), _DRAWS.get(r, f"draws with {r}"))))
    return [text for _, text in sorted(out, key=lambda x: -x[0])]


def _of_the_app(args, config, reports: list, inputs: list) -> list:
    """The reports in which `--app` matched an app. Each input where it matched none is marked skipped, with the
    apps that do have frames there; when it matched in none at all, each is said on stderr (the caller exits 3):
    a mistyped package must not pass as "0 frames"."""
    import dataclasses
    import sys

    from droidlag.cli.common import clean
    from droidlag.findings import frames_reports

    missing = [r for r in reports if not _app_found(r, args.app)]
    if not missing:
        return reports
    every, _ = frames_reports(args.paths, dataclasses.replace(config, app=None))   # only to list the apps there
    whole = {r.path: r for r in every}
    for r in missing:
        w = whole.get(r.path)
        apps = _apps_with_frames(w) if w is not None else []
        if apps:
            there = "the apps there: " + ", ".join(apps[:12]) + (f" and {len(apps) - 12} more"
                                                                  if len(apps) > 12 else "")
        else:
            there = (f"no app has frames there ({w.summary.no_frames_reason or 'no app frames'})"
                     if w is not None else "its apps could not be listed")
        reason = f"--app {args.app!r} matches no app with frames; {there}"
        for i in inputs:
            if (i.display or str(i.path)) == r.path:
                i.status, i.reason = "skipped", reason
        if len(missing) == len(reports):
            print(clean(f"droidlag frames: {r.path}: {reason}"), file=sys.stderr)
    gone = {id(r) for r in missing}
    return [r for r in reports if id(r) not in gone]


def _fmt(v, suffix="") -> str:
    return "n/a" if v is None else f"{v}{suffix}"


def _pct(v: float | None) -> str:
    return _fmt(None if v is None else round(v, 2), "%")


def _source(report) -> str:
    """What the frames were counted from, for the first line."""
    sections = report.summary.sections
    if "legacy_rows" in sections:
        return "gfxinfo legacy `Draw Prepare Process Execute` rows"
    return report.source


_JANKY_RULE = {"deadline": "frames that missed their deadline (Android 12+)",
               "frame_interval": "frames longer than the panel's frame interval (Android 6-11)"}


def _print_counts_from(report) -> None:
    """A gfxinfo summary without per-frame rows: Android's own counts, each labelled with where it comes from."""
    s = report.summary
    c = s.sections["counts_from"]
    print(f"{report.path}: gfxinfo summary (no per-frame rows), {s.frames} frames rendered (Android's count); "
          "buffer signal: none")
    if s.sr_naive is None:
        print("  by Android's histogram:     SR/FF not known (no HISTOGRAM line: Android 6 prints none, and pastes "
              "may leave it out)")
    else:
        part = (f" ({c['processes_with_histogram']} of {c['processes']} processes, {c['histogram_frames']} frames)"
                if c["processes_with_histogram"] < c["processes"] else "")
        print(f"  by Android's histogram (16.67 ms / 700 ms): SR {s.sr_naive} ({_pct(s.sr_naive_pct)}), "
              f"FF {s.ff_naive} ({_pct(s.ff_naive_pct)}){part}")
    if c["janky_frames"] is not None:
        rule = _JANKY_RULE.get(c["janky_rule"]) if isinstance(c["janky_rule"], str) else None
        print(f"  Android's janky count:      {c['janky_frames']} ({_pct(c['janky_percent'])})"
              + (f", {rule}" if rule else ""))
    print("  buffer-aware:               not possible (no per-frame rows: no deadlines, no buffer counts)")


def _print_frames(s) -> None:
    """Counts, rates, percentiles, FrameTimeline agreement, causes and roll-ups of per-frame data."""
    from droidlag.report.frames_json import ms

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
    _print_agreement(s.frametimeline_agreement)
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


def _print_agreement(agree) -> None:
    if not agree:
        return
    n = agree["naive_16ms"]
    print(f"  vs FrameTimeline ({agree['frames']} frames, {agree['frametimeline_app_jank']} app jank, "
          f"{agree['buffer_stuffing_only']} buffer stuffing): naive precision {_fmt(n['precision'])} "
          f"recall {_fmt(n['recall'])}")
    for layer in agree.get("by_layer") or []:
        print(f"    layer {layer['process'] or layer['pid']} / {layer['layer']}: {layer['frames']} frames, "
              f"{layer['frametimeline_app_jank']} app jank; over 16.67 ms {layer['naive_sr_ff']}, agree "
              f"{layer['agree']}, false alarms {layer['naive_fp']}, missed {layer['naive_fn']}")


def _print_aggregates(s) -> None:
    """Android's own counters per process (gfxinfo) or package (graphicsstats)."""
    for g in s.sections.get("gfxinfo_summaries") or []:
        rendered = "frames in its histogram" if g.get("total_from_histogram") else "frames rendered"
        janky = (f"Android counts {g['janky_frames']} janky ({_fmt(g['janky_percent'], '%')})"
                 if g["janky_frames"] is not None else "Android's janky count unreadable")
        last = (f" ({g['histogram_4950ms']} in its 4950ms bucket, which also holds frames of 140-149 ms)"
                if g.get("histogram_4950ms") else "")
        print(f"  {g['process']}: {g['total_frames_rendered']} {rendered}, {janky}; histogram: SR "
              f"{_fmt(g['sr_naive_histogram'])}, FF {_fmt(g['ff_naive_histogram'])}{last}")


def _print(report) -> None:
    s = report.summary
    if "counts_from" in s.sections:
        _print_counts_from(report)
    else:
        print(f"{report.path}: {_source(report)}, {s.frames} frames; buffer signal: {s.buffer_signal}")
        if s.frames:
            _print_frames(s)
    _print_aggregates(s)
    from droidlag.report.frames_json import pacing_dict
    for p in map(pacing_dict, s.sections.get("frame_pacing") or []):
        print(f"  pacing {p.get('process') or p['pid']} / {p.get('producer')}: {p['buffers']} buffers, target "
              f"{p['target_fps']} fps; over 1.5x {p['over_1.5x']} ({p['over_1.5x_pct']}%), over 2x {p['over_2.0x']}, "
              f"stutter runs {p['stutter_runs']}, longest interval {p['interval_ms']['max']} ms")
    for n in report.notes:
        print(f"  note: {n}")
    for w in report.warnings[:5]:
        print(f"  warning: {w}")
