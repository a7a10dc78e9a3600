"""Writing the outputs of `droidlag analyze`: findings.json, report.html, and the verdicts of each trace as a
Perfetto trace on the original time base."""
from __future__ import annotations

import json
import re
from pathlib import Path

from droidlag.report.html import render
from droidlag.report.perfetto_export import TimelineMark, export_marks


def frame_marks(frames_dict: dict) -> list[TimelineMark]:
    """SR/FF (buffer-aware) and threshold-only slow frames as timeline marks, one track per process."""
    marks: list[TimelineMark] = []
    for f in frames_dict.get("frames", []):
        verdict, naive = f.get("verdict"), f.get("naive_verdict")
        proc = f.get("process") or f.get("pid") or "app"
        causes = f.get("causes") or []
        lead = causes[0]["name"] if causes else None
        args = {"verdict": str(verdict), "naive_verdict": str(naive), "dur_ms": round(f["dur_ns"] / 1e6, 3)}
        for c in causes[:3]:
            args[f"cause.{c['name']}"] = f"{100 * (c.get('share') or 0):.0f}% (normal {100 * (c.get('normal_share') or 0):.0f}%)"
        if f.get("buffer_evidence"):
            args["buffer"] = str(f["buffer_evidence"])
        if f.get("layer_name"):
            args["layer"] = str(f["layer_name"])
        if verdict in ("SR", "FF"):
            name = f"{verdict} {f['dur_ns'] / 1e6:.1f} ms" + (f": {lead}" if lead else "")
            marks.append(TimelineMark(f"droidlag jank: {proc}", name, f["start_ns"], f["dur_ns"], args))
        elif naive in ("SR", "FF"):
            why = "buffer-aware: not jank" if verdict == "ok" else f"buffer-aware: {verdict}"
            marks.append(TimelineMark(f"droidlag long frames, threshold only: {proc}",
                                      f"{naive} {f['dur_ns'] / 1e6:.1f} ms ({why})", f["start_ns"], f["dur_ns"], args))
    return marks


def _slug(path: str) -> str:
    name = Path(path.split("!")[-1]).name
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:80] or "trace"


def _heatmaps(findings, data: dict) -> None:
    """Each view hierarchy's overdraw heat map, as PNG for the page (not in findings.json)."""
    import base64

    from droidlag.report.ui_html import heatmap_png
    for hier, report in zip(data.get("ui_hierarchies") or [], getattr(findings, "ui_reports", []) or []):
        hier["heatmap_png_base64"] = base64.b64encode(heatmap_png(report.draws, report.boxes)).decode()


def write_outputs(findings, out_dir: Path) -> dict[str, Path]:
    """Write findings.json, report.html and the Perfetto exports into out_dir; returns what was written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    data = findings.to_dict()
    written: dict[str, Path] = {}
    traces = data["traces"]
    for i, t in enumerate(traces):
        marks = frame_marks(t["frames"])
        if not marks:   # nothing to put on the timeline: no file, and the report says nothing about one
            continue
        name = "findings.perfetto-trace" if len(traces) == 1 else f"findings-{i + 1}-{_slug(t['path'])}.perfetto-trace"
        (out_dir / name).write_bytes(export_marks(marks))
        t["perfetto_export"] = name
        written[name] = out_dir / name
    (out_dir / "findings.json").write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    written["findings.json"] = out_dir / "findings.json"
    _heatmaps(findings, data)
    (out_dir / "report.html").write_text(render(data), encoding="utf-8")
    written["report.html"] = out_dir / "report.html"
    return written
