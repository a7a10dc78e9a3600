"""Writing the outputs of `droidlag analyze`: findings.json, report.html, and the verdicts of each trace as a
Perfetto trace on the original time base."""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from droidlag.report.findings_json import findings_dict
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


_TRACE_SUFFIX = re.compile(r"\.(?:perfetto-trace|pftrace|perfetto|pb|trace|html|txt)(?:\.gz)?$", re.I)


def _slug(path: str) -> str:
    """The input's file name, safe, without a trace extension (so `a.perfetto-trace` exports to
    `findings-N-a.perfetto-trace`, not `...perfetto-trace.perfetto-trace`)."""
    name = _TRACE_SUFFIX.sub("", Path(path.split("!")[-1]).name)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:80] or "trace"


def _heatmaps(findings, data: dict) -> None:
    """Each view hierarchy's overdraw heat map, as PNG for the page (not in findings.json)."""
    import base64

    from droidlag.report.ui_html import heatmap_png
    for hier, report in zip(data.get("ui_hierarchies") or [], getattr(findings, "ui_reports", []) or []):
        hier["heatmap_png_base64"] = base64.b64encode(heatmap_png(report.draws, report.boxes)).decode()


class OutputError(Exception):
    """The output folder cannot be used as asked (foreign files without --force, not a folder, a link)."""


MARKER = ".droidlag-generation.json"   # written last: names the generation and every file in it
TMP_PREFIX = ".droidlag-tmp-"
OUTPUT_NAME = re.compile(r"^(findings\.json|report\.html|findings(-\d+-[A-Za-z0-9._-]+)?\.perfetto-trace)$")


def _previous(out_dir: Path) -> dict:
    """The last complete generation's marker ({} when none or unreadable)."""
    try:
        data = json.loads((out_dir / MARKER).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def check_out_dir(out_dir: Path, force: bool = False) -> None:
    """OutputError unless out_dir can take droidlag's outputs: a real folder (not a link), holding nothing but what
    droidlag wrote there (the files its marker lists, and its temp files) unless `force`. Outputs of a droidlag
    without markers count as foreign: --force once, and they are replaced."""
    if out_dir.is_symlink():
        raise OutputError(f"{out_dir} is a symbolic link; give the real folder")
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"{out_dir} exists and is not a folder")
    if not out_dir.exists() or force:
        return
    ours = set(_previous(out_dir).get("files") or [])
    foreign = sorted(p.name for p in out_dir.iterdir()
                     if p.name != MARKER and not p.name.startswith(TMP_PREFIX)
                     and not (p.name in ours and p.is_file() and not p.is_symlink()))
    if foreign:
        raise OutputError(f"{out_dir} holds files droidlag did not write ({', '.join(foreign[:5])}"
                          f"{', ...' if len(foreign) > 5 else ''}); choose an empty or new folder, or pass --force")


def _clean_temp(out_dir: Path) -> None:
    """Temp files left by a run that was killed (ours by their prefix)."""
    for p in out_dir.glob(TMP_PREFIX + "*"):
        try:
            p.unlink()
        except OSError:
            pass


def _write_temp(out_dir: Path, generation: str, name: str, data: bytes) -> Path:
    """data under a fresh temp name in out_dir: created exclusively, never through a link."""
    tmp = out_dir / f"{TMP_PREFIX}{generation}-{os.getpid()}-{name}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return tmp


def write_outputs(findings, out_dir: Path, force: bool = False) -> dict[str, Path]:
    """Write findings.json, report.html and the Perfetto exports into out_dir as one generation; returns what was
    written.

    Every file is written under a temp name and renamed into place (a rename replaces a planted link, never writes
    through it); the old marker goes first and the new one, naming the generation and its files, comes last, so a run
    killed half-way leaves no marker rather than a mix passing for one. Files of the previous generation that this
    one does not write (a stale Perfetto export) are removed. OutputError when out_dir holds files droidlag did not
    write, unless `force`."""
    check_out_dir(out_dir, force)
    out_dir.mkdir(parents=True, exist_ok=True)
    _clean_temp(out_dir)
    data = findings_dict(findings)
    # The generation is named by its content: the same input gives byte-identical outputs, and files of two
    # different runs never share a name.
    generation = hashlib.sha256(json.dumps(data, default=str, sort_keys=True).encode()).hexdigest()[:32]
    data["generation"] = generation
    files: dict[str, bytes] = {}
    traces = data["traces"]
    for i, t in enumerate(traces):
        marks = frame_marks(t["frames"])
        if not marks:   # nothing to put on the timeline: no file, and the report says nothing about one
            continue
        name = "findings.perfetto-trace" if len(traces) == 1 else f"findings-{i + 1}-{_slug(t['path'])}.perfetto-trace"
        files[name] = export_marks(marks)
        t["perfetto_export"] = name
    html_data = dict(data, ui_hierarchies=[dict(h) for h in data.get("ui_hierarchies") or []])
    _heatmaps(findings, html_data)
    html = render(html_data)             # may mark inputs "error" (a section that failed): before findings.json
    _sync_statuses(findings, data)
    # no indent: json's C encoder (with indent it runs in Python: 25 s for 35k frames)
    files["findings.json"] = json.dumps(data, default=str, separators=(",", ":")).encode("utf-8")
    files["report.html"] = html.encode("utf-8")
    temps = {name: _write_temp(out_dir, generation, name, raw) for name, raw in files.items()}
    previous = _previous(out_dir)
    # While files are swapped the marker names no generation (an incomplete run, detectable) but still lists every
    # file of the old and the new one as ours: a run killed here leaves a folder the next run may write into.
    pending = {"generation": None, "incomplete": True,
               "files": sorted(set(files) | {str(n) for n in previous.get("files") or [] if OUTPUT_NAME.match(str(n))})}
    os.replace(_write_temp(out_dir, generation, MARKER, json.dumps(pending, indent=1).encode()), out_dir / MARKER)
    written: dict[str, Path] = {}
    for name, tmp in temps.items():
        os.replace(tmp, out_dir / name)
        written[name] = out_dir / name
    for name in previous.get("files") or []:
        if name not in files and OUTPUT_NAME.match(str(name)):
            (out_dir / name).unlink(missing_ok=True)
    marker = {"generation": generation, "generated_by": data.get("generated_by"), "files": sorted(files)}
    os.replace(_write_temp(out_dir, generation, MARKER, json.dumps(marker, indent=1).encode()), out_dir / MARKER)
    return written


def _sync_statuses(findings, data: dict) -> None:
    """Inputs the renderer marked "error" are marked so on the Findings too (the CLI's exit code reads them)."""
    for obj, d in zip(getattr(findings, "inputs", []) or [], data.get("inputs") or []):
        if d.get("status") == "error" and obj.status != "error":
            obj.status, obj.reason = "error", d.get("reason")
