"""report.html: one self-contained page (inline CSS and SVG, no script, no network) rendered from findings.json.

Every string that came from the user's input goes through `e()`; nothing from the input is ever placed in an
attribute without escaping, and the page carries a Content-Security-Policy that forbids scripts outright."""
from __future__ import annotations

from html import escape

from droidlag.report.frames_html import frames_block
from droidlag.report.gc_html import gc_section
from droidlag.report.graph_svg import wait_for_graph_svg

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#1f2d3d;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
main{padding:8px 24px 40px;max-width:1280px}section{background:#fff;border:1px solid #ddd;border-radius:6px;
margin:16px 0;padding:10px 16px}h2{font-size:17px;margin:8px 0}h3{font-size:15px;margin:10px 0 4px}
table{border-collapse:collapse;font-size:13px;margin:6px 0}td,th{border-bottom:1px solid #eee;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f3f3f3}.num{text-align:right;font-variant-numeric:tabular-nums}
.bad{color:#c0392b;font-weight:600}.warn{color:#b9770e}.ok{color:#1e8449}.muted{color:#777}
details{margin:4px 0}summary{cursor:pointer}pre{background:#f6f6f6;padding:6px;overflow:auto;font-size:12px}
.headline{font-size:15px;margin:4px 0}.plot svg{max-width:100%;height:auto}.graph{overflow:auto}
"""


def e(value) -> str:
    """Escape anything for HTML text or a quoted attribute."""
    return escape("" if value is None else str(value), quote=True)


def ms(ns) -> str:
    return "" if ns is None else f"{ns / 1e6:.1f} ms"


def pct(x) -> str:
    return "" if x is None else f"{100 * x:.1f}%"


def _table(headers: list[str], rows: list[list[str]], raw: bool = False) -> str:
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c if raw else e(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render(findings: dict) -> str:
    """The whole report page as HTML text. A section whose rendering fails (a bug) becomes a short error section
    and marks its input "error" in `findings["inputs"]`; the other sections are kept."""
    parts = [_guard(findings, None, lambda: _summary(findings))]
    if findings.get("comparison"):   # asked for by --before/--after: right below the summary
        from droidlag.report.ui_html import compare_section
        parts.append(_guard(findings, None, lambda: compare_section(findings["comparison"])))
    for t in findings.get("traces", []):
        parts.append(_guard(findings, t.get("path"), lambda t=t: _trace_section(t)))
    for g in findings.get("gfxinfo", []):
        parts.append(_guard(findings, g.get("path"), lambda g=g: _gfxinfo_section(g)))
    hangs = findings.get("hangs")
    if hangs and hangs.get("events"):
        parts.append(_guard(findings, None, lambda: _hangs_section(hangs)))
    parts.append(_guard(findings, None, lambda: gc_section(findings.get("gc") or [])))
    from droidlag.report.ui_html import hierarchy_section, layouts_section
    for lay in findings.get("ui_layouts") or []:
        parts.append(_guard(findings, lay.get("path"), lambda lay=lay: layouts_section(lay)))
    for hier in findings.get("ui_hierarchies") or []:
        import base64
        png = base64.b64decode(hier["heatmap_png_base64"]) if hier.get("heatmap_png_base64") else None
        parts.append(_guard(findings, hier.get("path"), lambda hier=hier, png=png: hierarchy_section(hier, png)))
    parts.append(_inputs_section(findings))
    title = "droidlag report"
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:\">"
            f"<meta name=\"viewport\" content=\"width=device-width\"><title>{e(title)}</title><style>{CSS}</style>"
            f"<meta name=\"droidlag-generation\" content=\"{e(findings.get('generation'))}\">"
            f"</head><body><header><h1>{e(title)}</h1><div class=\"muted\">{e(findings.get('generated_by'))}"
            f" · findings schema v{e(findings.get('version'))}</div></header><main>{''.join(parts)}</main>"
            "</body></html>")


def _guard(findings: dict, name: str | None, make) -> str:
    try:
        return make()
    except Exception as exc:  # one section's bug must not lose the report
        reason = f"internal error while rendering (a droidlag bug): {type(exc).__name__}: {exc}"[:500]
        hit = next((i for i in findings.get("inputs") or [] if name is not None
                    and (i.get("path") == name or name.startswith(str(i.get("path"))))), None)
        if hit is not None:
            hit["status"], hit["reason"] = "error", reason
        else:
            findings.setdefault("warnings", []).append(f"{name or 'report'}: {reason}")
        return f'<section class="error"><h2>{e(name or "report section")}</h2><p>{e(reason)}</p></section>'


def _summary(findings: dict) -> str:
    lines = findings.get("headlines") or []
    items = "".join(f'<li class="headline {e(h.get("level", ""))}">{e(h["text"])}</li>' for h in lines) \
        or "<li>No responsiveness problem found in the inputs.</li>"
    return f'<section id="summary"><h2>Summary, worst first</h2><ul>{items}</ul></section>'


def _count(n, thing: str) -> str:
    """`1 thread`, `2 threads` (escaped)."""
    return f"{e(n)} {thing}" + ("" if n == 1 else "s")


def _trace_section(t: dict) -> str:
    info = t.get("info") or {}
    ft = info.get("frame_timeline") or {}
    out = [f'<section class="trace"><h2>Trace: {e(t.get("path"))}</h2>',
           f'<p>{e(info.get("format"))} trace, {(info.get("duration_ns") or 0) / 1e9:.2f} s: '
           f'{_count(info.get("threads"), "thread")}, {_count(info.get("slices"), "slice")}, '
           f'{_count(info.get("sched_intervals"), "sched interval")}, '
           f'{_count(info.get("binder_transactions"), "binder transaction")}, '
           f'{_count(info.get("block_requests"), "block request")}, {_count(ft.get("rows"), "FrameTimeline row")}.'
           + (f' Verdicts on the timeline: open <code>{e(t["perfetto_export"])}</code> in the Perfetto UI.'
              if t.get("perfetto_export") else "") + "</p>"]
    if t.get("frames"):
        out.append(frames_block(t["frames"], info.get("start_ns") or 0))
    out.append("</section>")
    return "".join(out)


def _gfxinfo_section(g: dict) -> str:
    return (f'<section class="gfxinfo"><h2>dumpsys gfxinfo: {e(g.get("path"))}</h2>'
            + frames_block(g, min((f["start_ns"] for f in g.get("frames") or []), default=0)) + "</section>")


def _thread_label(t: dict | None) -> str:
    if not t:
        return "?"
    return f'{t.get("name") or "?"} (tid {t.get("sys_tid") or t.get("tid")})'


def _hang_evidence(ev: dict) -> str:
    """The evidence of one hang: the blocked thread's stack, each critical thread's stack, then the cause's facts."""
    evidence = ev.get("evidence") or {}
    if not isinstance(evidence, dict):
        return f"<pre>{e(_evidence_text(evidence))}</pre>"
    evidence = dict(evidence)
    out = []
    blocked = evidence.pop("blocked_frames", None)
    if blocked:
        out.append(f"<h4>Blocked thread {e(_thread_label(ev.get('blocked_thread')))}</h4><pre>{e(_evidence_text(blocked))}</pre>")
    for name, frames in (evidence.pop("critical_frames", None) or {}).items():
        if frames:
            out.append(f"<h4>Critical thread {e(name)}</h4><pre>{e(_evidence_text(frames))}</pre>")
    cause = evidence.pop("cause", None)
    if cause:
        out.append(f"<h4>Why the cause is {e(ev.get('cause'))}</h4><pre>{e(_evidence_text(cause))}</pre>")
    if evidence:
        out.append(_table(["fact", "value"], [[k, _evidence_text(v)] for k, v in evidence.items()]))
    return "".join(out)


def _clusters_label(ev: dict) -> str:
    many = ev.get("clusters") or []
    if len(many) > 1:   # a deadlock: one cluster per critical thread's stack
        return "clusters " + ", ".join(e(c) for c in many)
    return f"cluster {e(ev.get('cluster'))}"


def _hangs_section(h: dict) -> str:
    out = ['<section id="hangs"><h2>ANR and SNR</h2>']
    events = h.get("events", [])
    by_id = {ev.get("id"): ev for ev in events}
    for ev in events:
        graph = ev.get("wait_for_graph") or {}
        crit = ", ".join(_thread_label(t) for t in ev.get("critical_threads") or [])
        out.append(f'<details {"open" if len(events) <= 5 else ""}><summary><span class="bad">'
                   f'{e(str(ev.get("kind", "")).upper())}</span> '
                   f'{e(ev.get("process"))}: {e(_thread_label(ev.get("blocked_thread")))} blocked; critical: '
                   f'{e(crit)}; cause: {e(ev.get("cause"))}{" — DEADLOCK" if ev.get("deadlock") else ""}'
                   f'</summary><p>{e(ev.get("sentence"))}</p><p class="muted">{e(ev.get("source"))} · '
                   f'{_clusters_label(ev)}</p>')
        if graph.get("nodes"):
            out.append(f'<div class="graph">{wait_for_graph_svg(graph["nodes"], graph.get("edges", []))}</div>')
        out.append(_hang_evidence(ev))
        out.append("</details>")
    clusters = h.get("clusters") or []
    if clusters:
        out.append("<h3>Clusters (same root cause), largest first</h3>")
        for c in clusters:
            rep = by_id.get(c.get("representative")) or {}
            members = "".join(f"<li>{e(m)}</li>" for m in c.get("members", [])[:100])
            if c.get("unknown"):
                title = (f'unknown bucket: {e(c.get("size"))} event(s) with no stack to compare (not a root-cause '
                         'cluster)')
            else:
                sig = "; ".join(c.get("signature") or []) or "no app frame"
                title = f'cluster {e(c.get("id"))}: {e(c.get("size"))} event(s), cause {e(c.get("cause"))} — {e(sig)}'
            out.append(f'<details><summary>{title}</summary>'
                       f'<p>Representative: {e(rep.get("sentence") or c.get("representative"))}</p>'
                       f'<pre>{e(_evidence_text((rep.get("evidence") or {}).get("blocked_frames") or ""))}</pre>'
                       f'<p>Members:</p><ul>{members}</ul></details>')
    out.append("</section>")
    return "".join(out)


def _evidence_text(ev) -> str:
    if isinstance(ev, str):
        return ev
    if isinstance(ev, list):
        return "\n".join(_evidence_text(x) for x in ev)
    if isinstance(ev, dict):
        return "\n".join(f"{k}: {_evidence_text(v) if isinstance(v, (list, dict)) else v}" for k, v in ev.items())
    return str(ev)


def _inputs_section(findings: dict) -> str:
    rows = [[i.get("path"), i.get("kind"), i.get("status"), i.get("reason") or ""] for i in findings.get("inputs", [])]
    warns = findings.get("warnings") or []
    w = "".join(f"<li>{e(x)}</li>" for x in warns[:200])
    more = f'<p class="muted">{len(warns) - 200} more warnings in findings.json.</p>' if len(warns) > 200 else ""
    return (f'<section id="inputs"><h2>Inputs</h2>{_table(["path", "kind", "status", "reason"], rows)}'
            + (f"<h3>Warnings</h3><ul>{w}</ul>{more}" if w else "") + "</section>")
