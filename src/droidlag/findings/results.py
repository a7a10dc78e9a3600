"""The findings of a run as the analyses return them: each trace with its frames report, gfxinfo reports, hangs,
GC reports, UI findings, a before/after comparison, each input's status; and the headlines that put them in
words. `droidlag.report.findings_json` writes them as findings.json (docs/findings-schema.md)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from droidlag.findings.narrative import (
    Headline,
    comparison_headline,
    frames_headlines,
    gc_headlines,
    hang_headlines,
    ui_headlines,
)
from droidlag.frames import FramesReport
from droidlag.gc.device import GcDumpReport, GcLogReport
from droidlag.gc.trace import TraceGcReport
from droidlag.hangs import HangReport
from droidlag.io.inputs import InputFile
from droidlag.models.gc import ArtGcDump, GcLog
from droidlag.models.trace import Trace

SCHEMA = "droidlag-findings"
SCHEMA_VERSION = 1


@dataclass
class TraceFindings:
    """One trace: what it holds, and its frames report."""

    path: str
    trace: Trace
    frames: FramesReport


@dataclass
class Findings:
    """Everything found in the inputs, as the analyses' typed results (tables stay tables: trace and frames);
    `droidlag.report.findings_json.findings_dict` writes it as findings.json."""

    inputs: list[InputFile] = field(default_factory=list)
    traces: list[TraceFindings] = field(default_factory=list)
    gfxinfo: list[FramesReport] = field(default_factory=list)
    hangs: HangReport | None = None
    gc: list[GcLogReport | GcDumpReport | TraceGcReport] = field(default_factory=list)
    gc_logs: dict[str, GcLog] = field(default_factory=dict)   # input path -> its GC lines (for hang evidence)
    gc_dumps: dict[str, list[ArtGcDump]] = field(default_factory=dict)   # input path -> its dumps' GC parts
    warnings: list[str] = field(default_factory=list)
    ui_layouts: list[dict[str, Any]] = field(default_factory=list)        # one per app source tree (droidlag.ui.layouts)
    ui_hierarchies: list[dict[str, Any]] = field(default_factory=list)    # one per runtime view dump (droidlag.ui.hierarchy)
    ui_reports: list[Any] = field(default_factory=list)              # the HierarchyReport of each ui_hierarchies entry
    comparison: dict[str, Any] | None = None   # before/after traces of one app beside the UI findings fixed (add_comparison)

    def internal_error(self, name: str | None, stage: str, exc: BaseException) -> None:
        """A droidlag bug while `stage` ("analysing", "rendering", ...) the input shown as `name`: that input's
        status becomes "error" (the run ends with exit 1) and the rest of the run is kept."""
        reason = f"internal error while {stage} (a droidlag bug): {type(exc).__name__}: {exc}"[:500]
        hit = [i for i in self.inputs if name is not None and (i.display or str(i.path)) == name]
        if not hit and name is not None:   # a part named after a file inside an input (bugreport!entry)
            hit = [i for i in self.inputs if name.startswith(i.display or str(i.path))][:1]
        for i in hit:
            i.status, i.reason = "error", reason
        if not hit:
            self.warnings.append(f"{name or 'run'}: {reason}")

    def guarded(self, name: str | None, stage: str, make: Callable[[], list[Any]],
                default: list[Any] | None = None) -> list[Any]:
        """make(), or, when it hits a bug, `default` (else []) with the input `name` marked "error"."""
        try:
            return make()
        except Exception as e:  # one input's rendering bug must not lose the others
            self.internal_error(name, stage, e)
            return default if default is not None else []

    def headlines(self) -> list[Headline]:
        """What was found, worst first, each in plain words."""
        out: list[Headline] = []
        hangs, comparison = self.hangs, self.comparison
        if hangs:
            out += self.guarded(None, "writing the hang headlines", partial(hang_headlines, hangs))
        for t in self.traces:
            out += self.guarded(t.path, "writing headlines", partial(frames_headlines, t.frames, t.path))
        for g in self.gfxinfo:
            out += self.guarded(g.path, "writing headlines", partial(frames_headlines, g, g.path))
        for r in self.gc:
            out += self.guarded(getattr(r, "source", None), "writing GC headlines",
                                partial(lambda r: gc_headlines(r.to_dict()), r))
        out += self.guarded(None, "writing UI headlines", partial(ui_headlines, self.ui_layouts, self.ui_hierarchies))
        if comparison:
            out += self.guarded(None, "writing the comparison headline", lambda: [comparison_headline(comparison)])
        return sorted(out, key=lambda h: -h.severity)
