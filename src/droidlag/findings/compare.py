"""Before/after a UI trim (issue 16): the SR/FF change of the same app's traces beside the UI findings that
were fixed. `compare_runs` reads the two traces; `add_comparison` pairs two traces `analyze` already read."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from droidlag.errors import InputError
from droidlag.findings.results import Findings, TraceFindings
from droidlag.frames import FramesReport, analyze_frames
from droidlag.ui.layouts import LayoutFinding

COMPARED = {"frames": "frames", "SR": "sr", "FF": "ff", "SR (threshold only)": "sr_naive",
            "FF (threshold only)": "ff_naive", "SR %": "sr_pct", "FF %": "ff_pct"}   # shown name -> summary key


def _frame_counts(report: FramesReport | None) -> dict[str, Any]:
    """The compared figures of one side; all None when the side has no frames report. Rates in percent to 2
    decimals, as the summary shows them."""
    if report is None:
        return {k: None for k in COMPARED}
    s = report.summary
    got = {k: getattr(s, v) for k, v in COMPARED.items()}
    return {k: (v or 0) if k == "frames" else round(v, 2) if k.endswith("%") and v is not None else v
            for k, v in got.items()}


def _finding_key(f: LayoutFinding, root: str) -> tuple[Any, ...]:
    rel = str(Path(f.file).relative_to(root)) if f.file.startswith(root) else f.file
    return (Path(rel).parent.name, Path(rel).name, f.kind, f.view_class, f.view_id)


def _compare_frames(before: str, report_before: FramesReport | None, after: str,
                    report_after: FramesReport | None) -> dict[str, Any]:
    """The SR/FF counts and rates of each side and their change (None where a side or a figure is missing)."""
    counts, apps = {}, {}
    for side, report in (("before", report_before), ("after", report_after)):
        counts[side] = _frame_counts(report)
        apps[side] = [a.get("process") for a in (report.summary.sections.get("apps") if report else None) or []
                      if a.get("process")]
    change = {}
    for k in counts["before"]:
        b, a = counts["before"][k], counts["after"][k]
        change[k] = None if b is None or a is None else round(a - b, 3)
    notes = []
    if apps["before"] and apps["after"] and apps["before"][0] != apps["after"][0]:
        notes.append(f"the busiest app differs: {apps['before'][0]} before, {apps['after'][0]} after: "
                     "the change may not be the trim's")
    if counts["before"]["frames"] and counts["after"]["frames"]:
        notes.append("compare rates (SR %, FF %) when the two runs have different numbers of frames")
    for side in ("before", "after"):
        if report_before is not None and report_after is not None and not counts[side]["frames"]:
            notes.append(f"the {side} trace has no app frames: its SR/FF say nothing of the change")
    if Path(before).resolve() == Path(after).resolve():
        notes.append("before and after are the same trace")
    return {"before_trace": before, "after_trace": after, "apps": apps, "before": counts["before"],
            "after": counts["after"], "change": change, "fixed_findings": [], "new_findings": [], "notes": notes,
            "not_possible_reason": None}


def _compare_layouts(out: dict[str, Any], layouts_before: list[str | Path], layouts_after: list[str | Path],
                     context: list[str | Path] | None = None) -> None:
    """Fill `out` with the UI findings present before and gone after (fixed) and the new ones; each side's first
    folder is reported, the rest (and `context`) only resolve includes, styles and themes."""
    from droidlag.io.android_res import read_app
    from droidlag.ui.layouts import analyze_layouts

    reports, counts = {}, {}
    for side, roots in (("before", layouts_before), ("after", layouts_after)):
        res, _ = read_app([*roots, *(context or [])])
        report = analyze_layouts(res)
        reports[side] = {_finding_key(f, str(roots[0])): f for f in report.findings}
        counts[side] = report.counts()
    out["layouts_before"], out["layouts_after"] = str(layouts_before[0]), str(layouts_after[0])
    out["findings_before_counts"], out["findings_after_counts"] = counts["before"], counts["after"]
    out["fixed_findings"] = [f.to_dict() for k, f in reports["before"].items() if k not in reports["after"]]
    out["new_findings"] = [f.to_dict() for k, f in reports["after"].items() if k not in reports["before"]]


def compare_runs(before: str | Path, after: str | Path, layouts_before: list[str | Path] | None = None,
                 layouts_after: list[str | Path] | None = None,
                 layouts_context: list[str | Path] | None = None) -> dict[str, Any]:
    """Frames of the same app before and after a change (SR/FF counts and rates, buffer-aware and threshold-only),
    and when layout folders are given, the UI findings present before and gone after. Raises InputError for an
    unreadable trace."""
    from droidlag.io import read_trace

    out = _compare_frames(str(before), analyze_frames(read_trace(Path(before))), str(after),
                          analyze_frames(read_trace(Path(after))))
    if layouts_before and layouts_after:
        _compare_layouts(out, layouts_before, layouts_after, layouts_context)
    return out


def _trace_of(findings: Findings, path: str | Path) -> tuple[TraceFindings | None, str | None]:
    """The one trace `analyze` read from `path` (a trace file, or an archive holding one), or why there is none."""
    want = Path(path).resolve()
    found = [t for t in findings.traces
             if Path(t.path.split("!")[0]).resolve() == want]
    if len(found) == 1:
        return found[0], None
    if found:
        return None, f"{path} holds {len(found)} traces: give one trace file"
    why = [f"{i.reason or i.kind}" for i in findings.inputs
           if Path(str(i.display or i.path).split("!")[0]).resolve() == want and i.status != "analyzed"]
    return None, f"no trace was read from {path}" + (f": {why[0]}" if why else "")


def add_comparison(findings: Findings, before: str | Path, after: str | Path,
                   layouts_before: list[str | Path] | None = None, layouts_after: list[str | Path] | None = None,
                   layouts_context: list[str | Path] | None = None) -> dict[str, Any]:
    """Pair two traces that `analyze` already read (the same app before and after a change) into
    `findings.comparison`: their SR/FF change beside the layout findings the change fixed (`compare_runs` without
    reading the traces again). Never raises for bad input: `not_possible_reason` says why a part is missing."""
    sides = {side: _trace_of(findings, p) for side, p in (("before", before), ("after", after))}
    out = _compare_frames(str(before), sides["before"][0].frames if sides["before"][0] else None, str(after),
                          sides["after"][0].frames if sides["after"][0] else None)
    missing = [why for _, why in sides.values() if why]
    if missing:
        out["not_possible_reason"] = "; ".join(missing)
        out["notes"] = []
    if layouts_before and layouts_after:
        try:
            _compare_layouts(out, layouts_before, layouts_after, layouts_context)
        except InputError as e:
            out["notes"].append(f"layout findings not compared: {e}")
    findings.comparison = out
    return out
