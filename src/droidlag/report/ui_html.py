"""The UI-layers part of the report: layout findings as a table and a runtime hierarchy's overdraw heat map as an
inline PNG in Android's "Debug GPU overdraw" colours (no tint: drawn once; blue: overdrawn once; green: twice;
pink: three times; red: four or more), with the estimate's assumption beside it."""
from __future__ import annotations

import base64
import io
from html import escape

import numpy as np

# Android's overdraw tints, indexed by overdraw count (draws - 1); index 0 = no tint (drawn once), -1 = not drawn.
OVERDRAW_RGB = [(255, 255, 255), (138, 150, 255), (120, 220, 120), (255, 140, 200), (230, 40, 40)]
NOT_DRAWN_RGB = (235, 235, 235)
LEGEND = [("not drawn", NOT_DRAWN_RGB), ("drawn once (no tint)", OVERDRAW_RGB[0]), ("1x overdraw (blue)", OVERDRAW_RGB[1]),
          ("2x (green)", OVERDRAW_RGB[2]), ("3x (pink)", OVERDRAW_RGB[3]), ("4x+ (red)", OVERDRAW_RGB[4])]


OUTLINE_RGB = (90, 90, 90)


def heatmap_rgb(draws: np.ndarray, boxes: list[tuple[int, int, int, int]] | None = None) -> np.ndarray:
    """An RGB image [h, w, 3] of a layer-count map: pixels drawn n times get the tint of overdraw n-1; `boxes`
    (drawing views, in map pixels) are outlined so that the picture reads like the screen."""
    over = np.clip(draws.astype(np.int16) - 1, 0, 4)
    palette = np.array(OVERDRAW_RGB, dtype=np.uint8)
    img = palette[over]
    img[draws == 0] = NOT_DRAWN_RGB
    h, w = draws.shape
    for x0, y0, x1, y1 in boxes or []:
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1) - 1, min(h, y1) - 1
        if x1 <= x0 or y1 <= y0:
            continue
        img[y0, x0:x1 + 1] = img[y1, x0:x1 + 1] = OUTLINE_RGB
        img[y0:y1 + 1, x0] = img[y0:y1 + 1, x1] = OUTLINE_RGB
    return img


def heatmap_png(draws: np.ndarray, boxes: list[tuple[int, int, int, int]] | None = None) -> bytes:
    """The heat map as PNG bytes."""
    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(heatmap_rgb(draws, boxes), "RGB").save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def e(v) -> str:
    return escape("" if v is None else str(v), quote=True)


def hierarchy_section(report: dict, png: bytes | None) -> str:
    """One hierarchy: heat map, overdraw shares, chains and covered views."""
    share = report.get("overdraw_share") or {}
    label = "estimate" if report.get("estimate") else "measured"
    img = ""
    if png:
        img = (f'<img class="heatmap" alt="overdraw heat map of {e(report.get("activity") or report.get("path"))}" '
               f'src="data:image/png;base64,{base64.b64encode(png).decode()}" style="max-height:520px;'
               'border:1px solid #ccc">')
    legend = "".join(f'<span style="display:inline-block;margin-right:10px"><span style="display:inline-block;'
                     f'width:12px;height:12px;background:rgb{c};border:1px solid #999"></span> {e(t)}</span>'
                     for t, c in LEGEND) + '<div class="muted">grey lines: the drawing views</div>'
    rows = [[k.replace("_", " "), f"{100 * v:.1f}%"] for k, v in share.items()]
    worst = sorted(report.get("regions") or [], key=lambda r: (-r["max_layers"], -r["mean_layers"]))[:5]
    worst_text = "; ".join(f'({r["x"]},{r["y"]}) {r["max_layers"]} layers' for r in worst)
    chains = report.get("same_bounds_chains") or []
    covered = report.get("covered_views") or []
    out = [f'<section class="ui-hierarchy"><h2>View hierarchy: {e(report.get("path"))}</h2>',
           f'<p>{e(report.get("format"))} dump of {e(report.get("activity") or "an app")}: {e(report.get("views"))} '
           f'views, {e(report.get("drawing_views"))} drawing; {e(report.get("mean_layers_per_pixel"))} layers per '
           f'pixel on average ({label}).</p>',
           f'<p class="warn">Assumption: {e(report.get("assumption"))}</p>' if report.get("estimate") else "",
           f'<div style="display:flex;gap:20px;align-items:flex-start">{img}<div>{legend}'
           + _table(["overdraw", "share of screen"], rows)
           + (f'<p>Worst {e(worst[0]["size"])} px regions (x,y): {e(worst_text)}</p>' if worst else "")
           + "</div></div>"]
    classes = report.get("redundant_classes") or {}
    if classes:
        out.append("<p>Redundant components by class: " + e(", ".join(f"{k.rsplit('.', 1)[-1]} {v}"
                                                                      for k, v in classes.items())) + "</p>")
    if chains:
        out.append("<h3>Same-bounds single-child chains</h3>" + _table(
            ["classes (outer to inner)", "redundant layers", "bounds"],
            [[" > ".join(c["classes"]), c["redundant_layers"], c["bounds"]] for c in chains]))
    if covered:
        out.append("<h3>Views fully covered by a view drawn above them</h3>" + _table(
            ["view", "id", "covered by", "bounds"],
            [[c["class"], c["resource_id"], c["covered_by"], c["bounds"]] for c in covered]))
    out.append("</section>")
    return "".join(out)


def layouts_section(report: dict) -> str:
    """An app's layout findings."""
    counts = report.get("counts") or {}
    head = ", ".join(f"{k}: {v}" for k, v in counts.items()) or "none"
    base = str(report.get("path") or "").rstrip("/") + "/"
    rows = [[f'{f["file"][len(base):] if f["file"].startswith(base) else f["file"]}:{f["line"]}', f["kind"],
             f["view_class"], f.get("view_id") or "", f["layers"], f["fix"]] for f in report.get("findings") or []]
    return (f'<section class="ui-layouts"><h2>Layouts: {e(report.get("path"))}</h2><p>{e(report.get("files"))} '
            f'layout files; findings by kind: {e(head)}</p>'
            + "".join(f'<p class="warn">{e(n)}</p>' for n in report.get("notes") or [])
            + _table(["file:line", "kind", "view", "id", "layers", "fix"], rows) + "</section>")


def compare_section(cmp: dict) -> str:
    """Before/after: SR/FF change beside the UI findings that were fixed (and any new ones)."""
    rows = [[k, cmp["before"].get(k), cmp["after"].get(k), cmp["change"].get(k)] for k in cmp.get("change", {})]
    fixed, new = cmp.get("fixed_findings") or [], cmp.get("new_findings") or []
    notes = "".join(f'<p class="warn">{e(n)}</p>' for n in cmp.get("notes") or [])
    if cmp.get("not_possible_reason"):
        notes = f'<p class="bad">Comparison not possible: {e(cmp["not_possible_reason"])}</p>' + notes
    apps = cmp.get("apps") or {}
    head = (f'<p>{e(cmp.get("before_trace"))} ({e(", ".join((apps.get("before") or [])[:2]) or "no app frames")}) '
            f'&rarr; {e(cmp.get("after_trace"))} ({e(", ".join((apps.get("after") or [])[:2]) or "no app frames")})</p>')
    lay = ""
    if "findings_before_counts" in cmp:
        def kinds(c: dict) -> str:
            return ", ".join(f"{k} {v}" for k, v in c.items()) or "none"
        lay = (f'<p>Layout findings before ({e(cmp.get("layouts_before"))}): {e(kinds(cmp["findings_before_counts"]))}; '
               f'after ({e(cmp.get("layouts_after"))}): {e(kinds(cmp["findings_after_counts"]))}.</p>')

    def findings_table(title: str, fs: list[dict]) -> str:
        return (f"<h3>{e(title)} ({len(fs)})</h3>" + _table(
            ["file:line", "kind", "view", "id", "layers"],
            [[f'{f["file"]}:{f["line"]}', f["kind"], f["view_class"], f.get("view_id") or "", f.get("layers")]
             for f in fs])) if fs else ""
    return (f'<section class="ui-compare"><h2>Before and after</h2>{head}{notes}'
            + _table(["measure", "before", "after", "change"], rows) + lay
            + findings_table("UI findings fixed", fixed) + findings_table("UI findings new after the change", new)
            + "</section>")


def standalone_page(title: str, body: str) -> str:
    """A self-contained page (the report's CSS, no script) around one or more sections."""
    from droidlag.report.html import CSS
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-"
            "Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
            f"<title>{e(title)}</title><style>{CSS}</style></head><body><main>{body}</main></body></html>")


def _table(headers: list[str], rows: list[list]) -> str:
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
