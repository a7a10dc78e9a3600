"""findings.json: everything `droidlag.findings.analyze` found, in the schema of docs/findings-schema.md. The typed
findings become JSON here and only here (frames through `frames_json`). A part whose conversion fails (a bug) is
left out and its input marked "error"."""
from __future__ import annotations

from functools import partial
from typing import Any

from droidlag import __version__
from droidlag.findings import SCHEMA, SCHEMA_VERSION, Findings, TraceFindings
from droidlag.findings.narrative import hang_sentence, wait_for_graph
from droidlag.frames import FramesReport
from droidlag.gc.device import GcDumpReport, GcLogReport
from droidlag.gc.trace import TraceGcReport
from droidlag.hangs import HangReport
from droidlag.report.frames_json import frames_dict


def hangs_dict(report: HangReport | None) -> dict[str, Any]:
    """The hangs object: events (each with its sentence and wait-for graph), clusters, warnings, errors."""
    hangs = (report or HangReport()).to_dict()
    if report:
        for d in hangs["events"]:
            d["wait_for_graph"] = wait_for_graph(d)
            d["sentence"] = hang_sentence(d)
    return hangs


def _trace_dicts(t: TraceFindings) -> list[dict[str, Any]]:
    return [{"path": t.path, "info": t.trace.summary(), "frames": frames_dict(t.frames)}]


def _frames_dicts(report: FramesReport) -> list[dict[str, Any]]:
    return [frames_dict(report)]


def _gc_dicts(report: GcLogReport | GcDumpReport | TraceGcReport) -> list[dict[str, Any]]:
    return [report.to_dict()]


def findings_dict(findings: Findings) -> dict[str, Any]:
    """findings.json as a dict (the writer adds `generation`)."""
    headlines = [h.to_dict() for h in findings.headlines()]
    traces = [d for t in findings.traces
              for d in findings.guarded(t.path, "writing its findings", partial(_trace_dicts, t))]
    gfxinfo = [d for g in findings.gfxinfo
               for d in findings.guarded(g.path, "writing its findings", partial(_frames_dicts, g))]
    hangs = findings.guarded(None, "writing the hang findings", lambda: [hangs_dict(findings.hangs)],
                             [HangReport().to_dict()])[0]
    gc = [d for r in findings.gc
          for d in findings.guarded(getattr(r, "source", None), "writing its GC findings", partial(_gc_dicts, r))]
    return {
        "schema": SCHEMA, "version": SCHEMA_VERSION, "generated_by": f"droidlag {__version__}",
        "headlines": headlines,
        "inputs": [i.to_dict() for i in findings.inputs],
        "traces": traces,
        "gfxinfo": gfxinfo,
        "hangs": hangs,
        "gc": gc,
        "warnings": findings.warnings,
        "ui_layouts": findings.ui_layouts,
        "ui_hierarchies": findings.ui_hierarchies,
        "comparison": findings.comparison,
    }
