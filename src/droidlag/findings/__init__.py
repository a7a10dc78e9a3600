"""`analyze(paths)`: everything droidlag can find in a user's data, in one call.

Inputs are told apart by content (traces, thread dumps, bugreports, gfxinfo, folders and zip archives of them);
every analysis that applies runs; one bad input is recorded with its reason and the rest go on. The result is a
`Findings` object (findings/results.py); `droidlag.report.findings_json.findings_dict` writes it as findings.json
(schema in docs/findings-schema.md). Also here: the findings of one kind over many inputs (`frames_reports`,
`trace_summaries`), file reading for the analyses (findings/inputs.py), before/after comparisons
(findings/compare.py), findings in words (findings/narrative.py)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from droidlag.errors import InputError
from droidlag.findings.compare import add_comparison, compare_runs
from droidlag.findings.inputs import analyze_hangs, causes_table, frames_from_file, frames_table
from droidlag.findings.results import SCHEMA, SCHEMA_VERSION, Findings, TraceFindings
from droidlag.frames import FramesConfig, FramesReport, analyze_frames
from droidlag.gc.device import GcConfig, summarize_gc_dumps, summarize_gc_log
from droidlag.gc.evidence import hang_gc, hang_gc_from_dump
from droidlag.gc.trace import analyze_trace_gc
from droidlag.hangs import HangReport, HangsConfig
from droidlag.io.budget import run_budget
from droidlag.io.inputs import ARCHIVE_KINDS, InputFile, discover, expand_archives
from droidlag.io.tempfiles import run_temp_dir
from droidlag.models.trace import Trace

TRACE_KINDS = ("perfetto", "systrace")
HANG_KINDS = ("anr", "bugreport")
GC_LOG_KINDS = ("logcat", "anr", "bugreport")   # texts that can hold ART GC log lines
def analyze(paths: list[str | Path], progress: Callable[[str], None] | None = None,
            hangs_config: HangsConfig | None = None, exclude: list[str | Path] | None = None) -> Findings:
    """Find every responsiveness problem in the inputs (files, folders, archives). Never raises for bad input:
    each input's status and reason are in `Findings.inputs` ("error" when a droidlag bug hit it: the rest is kept).
    Folders in `exclude` (the run's own output folder) are not read."""
    findings = Findings()
    with run_budget(), run_temp_dir() as tmp:
        items = expand_archives(discover(paths, [Path(p) for p in exclude or []]), Path(tmp))
        findings.inputs = items
        hang_items: list[InputFile] = []
        for item in items:
            if item.status != "pending":
                continue
            if progress:
                progress(str(item.path))
            try:
                _analyze_one(item, findings, hang_items)
            except InputError as e:
                item.status, item.reason = "failed", e.reason
            except Exception as e:  # a bug must not lose the other inputs' findings
                findings.internal_error(item.display or str(item.path), "analysing", e)
        if hang_items:
            findings.hangs = _hangs_isolated(hang_items, hangs_config, findings)
        _gc_logs(items, findings)
    return findings


def expand_inputs(paths: list[str | Path], tmp: Path) -> list[InputFile]:
    """Every input under `paths` as `analyze` finds it: files, folders, and the files inside zip archives
    (extracted under `tmp`, named `archive!entry`)."""
    return expand_archives(discover(paths), tmp)


def usable_inputs(items: list[InputFile]) -> list[InputFile]:
    """Inputs something was read from: an archive only holds inputs, so it does not count by itself."""
    return [i for i in items if i.status == "analyzed" and i.kind not in ARCHIVE_KINDS]


def _each_input(paths: list[str | Path], kinds: tuple[str, ...], not_this_kind: str,
                work: Callable[[InputFile, str], object]) -> tuple[list[Any], list[InputFile]]:
    """`work(item, name)` on every input of one of `kinds` among `paths` (files, folders, archives, expanded as
    `analyze` does: one budget and one temp folder for the run); other kinds are skipped with
    "<kind> data<not_this_kind>", an InputError fails its input with the reason. Returns the results and the
    inputs."""
    out: list[Any] = []
    with run_budget(), run_temp_dir() as tmp:
        items = expand_archives(discover(paths), Path(tmp))
        for item in items:
            if item.status != "pending":
                continue
            if item.kind not in kinds:
                item.status, item.reason = "skipped", f"{item.kind} data{not_this_kind}"
                continue
            try:
                out.append(work(item, item.display or str(item.path)))
            except InputError as e:
                item.status, item.reason = "failed", e.reason
                continue
            item.status = "analyzed"
    return out, items


def trace_summaries(paths: list[str | Path]) -> tuple[list[dict[str, Any]], list[InputFile]]:
    """`Trace.summary()` of every trace among the inputs (files, folders, zip archives), named as the user knows
    them; the inputs come back with their status and reason. Never raises for bad input."""
    from droidlag.io import read_trace

    def summary(item: InputFile, name: str) -> dict[str, Any]:
        info = read_trace(item.path).summary()
        info["path"] = name
        return info

    return _each_input(paths, TRACE_KINDS, ", not a trace", summary)


def frames_reports(paths: list[str | Path],
                   config: FramesConfig | None = None) -> tuple[list[FramesReport], list[InputFile]]:
    """The frames report of every trace and gfxinfo text among the inputs (files, folders, zip archives), as
    `analyze` finds them; the inputs come back with their status and reason. Never raises for bad input."""
    from droidlag.io import read_trace

    def report(item: InputFile, name: str) -> FramesReport:
        r = (analyze_frames(read_trace(item.path), config) if item.kind in TRACE_KINDS
             else frames_from_file(item.path, config))
        r.path = name
        return r

    return _each_input(paths, TRACE_KINDS + ("gfxinfo",), " holds no frames", report)


def _analyze_one(item: InputFile, findings: Findings, hang_items: list[InputFile]) -> None:
    if item.kind in TRACE_KINDS:
        from droidlag.io import read_trace
        trace = read_trace(item.path)
        name = item.display or str(item.path)
        report = analyze_frames(trace)
        findings.traces.append(TraceFindings(name, trace, report))
        _trace_gc(trace, name, findings)
        findings.warnings += [f"{name}: {w.message}" for w in trace.warnings]
        item.status = "analyzed"
    elif item.kind == "gfxinfo":
        report = frames_from_file(item.path)
        report.path = item.display or str(item.path)
        findings.gfxinfo.append(report)
        item.status = "analyzed"
    elif item.kind in HANG_KINDS:
        hang_items.append(item)
    elif item.kind == "logcat":
        item.status = "analyzed"   # its GC lines are read with the other logs, after the hangs
    elif item.kind in ("view-hierarchy", "android-layouts"):
        _ui_one(item, findings)
    elif item.kind == "chrome-json":
        item.status, item.reason = "skipped", "Chrome JSON trace (traceEvents), not an Android trace"
    else:
        item.status, item.reason = "skipped", f"no analysis for {item.kind} data"


def _ui_one(item: InputFile, findings: Findings) -> None:
    """A runtime view dump (overdraw, heat map) or an app's layouts (redundant layers)."""
    name = item.display or str(item.path)
    if item.kind == "view-hierarchy":
        from droidlag.io.view_hierarchy import read_hierarchy
        from droidlag.ui.hierarchy import analyze_hierarchy
        h, warnings = read_hierarchy(item.path)
        report = analyze_hierarchy(h)
        d = report.to_dict()
        d["path"] = name
        findings.ui_hierarchies.append(d)
        findings.ui_reports.append(report)   # the report layer draws its layer counts as the heat map
    else:
        from droidlag.io.android_res import read_app
        from droidlag.ui.layouts import analyze_layouts
        res, warnings = read_app([item.path])
        d = analyze_layouts(res).to_dict()
        d["path"] = name
        findings.ui_layouts.append(d)
    findings.warnings += [f"{name}: {w}" for w in warnings]
    item.status = "analyzed"


def _hangs_isolated(items: list[InputFile], config: HangsConfig | None, findings: Findings) -> HangReport | None:
    """The hangs of all dumps together; when that hits a bug, each dump alone, so the bug stays with its input."""
    try:
        return _hangs(items, config)
    except Exception:  # find which input(s) the bug belongs to
        pass
    good: list[InputFile] = []
    for i in items:
        try:
            _hangs([i], config)
            good.append(i)
        except Exception as e:
            findings.internal_error(i.display or str(i.path), "analysing its thread dumps", e)
    try:
        return _hangs(good, config) if good else None
    except Exception as e:  # only together: every dump is marked
        for i in good:
            findings.internal_error(i.display or str(i.path), "clustering thread dumps", e)
        return None


def _hangs(items: list[InputFile], config: HangsConfig | None) -> HangReport:
    """All dumps in one run, so that events from different files cluster together."""
    report = analyze_hangs([i.path for i in items], config)
    failed = {str(e.path): e.reason for e in report.errors}
    for i in items:
        if str(i.path) in failed:
            i.status, i.reason = "failed", failed[str(i.path)]
        else:
            i.status = "analyzed"
    # events found inside an extracted archive are named after the archive, not the temporary folder
    shown = {str(i.path): i.display for i in items if i.display}
    for ev in report.events:
        for real, display in shown.items():
            if ev.source.startswith(real):
                ev.source = display + ev.source[len(real):]
    return report


def _trace_gc(trace: Trace, name: str, findings: Findings) -> None:
    """The trace's GC summary, if it holds any ART GC slices; a failure here never loses the frames."""
    try:
        report = analyze_trace_gc(trace)
    except Exception as e:  # one analysis' bug must not lose the trace
        findings.warnings.append(f"{name}: GC summary failed: internal error: {type(e).__name__}: {e}")
        return
    if report.processes:
        report.source = name
        findings.gc.append(report)


def _gc_logs(items: list[InputFile], findings: Findings, config: GcConfig | None = None) -> None:
    """ART GC lines and the GC part of process dumps in every logcat, dump text and bugreport: per-process
    summaries, and hang evidence where a hang's blocked thread was stalled by GC in the same capture's log."""
    from droidlag.io.art_gc_log import read_device_gc

    for item in items:
        if item.kind not in GC_LOG_KINDS or item.status == "skipped":
            continue
        name = item.display or str(item.path)
        try:
            log, dumps = read_device_gc(item.path)
        except InputError as e:
            if item.kind == "logcat":
                item.status, item.reason = "failed", e.reason
            continue
        except Exception as e:  # one reader's bug must not lose the other findings
            findings.internal_error(name, "reading its GC lines", e)
            continue
        log.source = name
        findings.gc_logs[name] = log   # hang sources are named the same way
        findings.gc_dumps[name] = dumps
        findings.warnings += [f"{name}: {w.message}" + (f" (line {w.line})" if w.line else "")
                              for w in log.warnings[:20]]
        if item.kind == "logcat" and not log.events:
            item.reason = "logcat without ART GC lines"
        if log.events:
            findings.gc.append(summarize_gc_log(log, config))
        if dumps:
            findings.gc.append(summarize_gc_dumps(dumps, name))
    _hang_gc_evidence(findings, config)


def _hang_gc_evidence(findings: Findings, config: GcConfig | None) -> None:
    """Each hang whose blocked thread waited for a GC in its capture's log (before the dump), or was dumped waiting
    for one, says so."""
    if not findings.hangs or not findings.gc_logs:
        return
    for ev in findings.hangs.events:
        path = next((p for p in findings.gc_logs if ev.source.startswith(p)), None)
        if path is None:
            continue
        bt = ev.blocked_thread
        got = hang_gc(findings.gc_logs[path], ev.pid, bt.sys_tid if bt is not None else None,
                      ev.evidence.get("dump_time"), config)
        if got:
            ev.evidence["gc_blocking"] = got
        in_dump = hang_gc_from_dump(findings.gc_dumps.get(path, []), ev.pid, ev.evidence.get("dump_time"),
                                    bt.name if bt is not None else None, bt is not None and bt.tid == 1)
        if in_dump:
            ev.evidence["gc_in_dump"] = in_dump


__all__ = ["SCHEMA", "SCHEMA_VERSION", "Findings", "TraceFindings", "analyze", "add_comparison", "compare_runs",
           "expand_inputs", "usable_inputs", "frames_reports", "trace_summaries", "frames_from_file", "frames_table",
           "causes_table", "analyze_hangs"]
