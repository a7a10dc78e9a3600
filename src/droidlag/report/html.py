"""report.html: one self-contained page (inline CSS and SVG, no script, no network) rendered from findings.json.

Every string that came from the user's input goes through `e()`; nothing from the input is ever placed in an
attribute without escaping, and the page carries a Content-Security-Policy that forbids scripts outright."""
from __future__ import annotations

from html import escape

from droidlag.report import plots
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
    """The whole report page as HTML text."""
    parts = [_summary(findings)]
    for t in findings.get("traces", []):
        parts.append(_trace_section(t))
    for g in findings.get("gfxinfo", []):
        parts.append(_gfxinfo_section(g))
    hangs = findings.get("hangs")
    if hangs and hangs.get("events"):
        parts.append(_hangs_section(hangs))
    parts.append(_inputs_section(findings))
    title = "droidlag report"
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:\">"
            f"<meta name=\"viewport\" content=\"width=device-width\"><title>{e(title)}</title><style>{CSS}</style>"
            f"</head><body><header><h1>{e(title)}</h1><div class=\"muted\">{e(findings.get('generated_by'))}"
            f" · findings schema v{e(findings.get('version'))}</div></header><main>{''.join(parts)}</main>"
            "</body></html>")


def _summary(findings: dict) -> str:
    lines = findings.get("headlines") or []
    items = "".join(f'<li class="headline {e(h.get("level", ""))}">{e(h["text"])}</li>' for h in lines) \
        or "<li>No responsiveness problem found in the inputs.</li>"
    return f'<section id="summary"><h2>Summary, worst first</h2><ul>{items}</ul></section>'


def _trace_section(t: dict) -> str:
    info = t.get("info") or {}
    out = [f'<section class="trace"><h2>Trace: {e(t.get("path"))}</h2>',
           f'<p>{e(info.get("format"))} trace, {info.get("duration_ns", 0) / 1e9:.2f} s, '
           f'{e(info.get("threads"))} threads, {e(info.get("slices"))} slices, '
           f'{e(info.get("sched_intervals"))} sched intervals, {e(info.get("binder_transactions"))} binder '
           f'transactions, {e(info.get("block_requests"))} block requests, '
           f'{e((info.get("frame_timeline") or {}).get("rows"))} FrameTimeline rows.</p>']
    for app in t.get("frames") or []:
        out.append(_frames_block(app, info.get("start_ns", 0)))
    if t.get("frames_note"):
        out.append(f'<p class="muted">{e(t["frames_note"])}</p>')
    out.append("</section>")
    return "".join(out)


def _frames_block(app: dict, t0: int) -> str:
    s = app.get("summary") or {}
    frames = app.get("frames") or []
    name = s.get("app") or app.get("app") or "app"
    out = [f"<h3>Frames of {e(name)}</h3>",
           _table(["frames", "SR (buffer-aware)", "FF (buffer-aware)", "SR naive", "FF naive", "buffer signal",
                   "p50", "p90", "p99"],
                  [[s.get("frames"), s.get("sr"), s.get("ff"), s.get("sr_naive"), s.get("ff_naive"),
                    s.get("buffer_signal"), *(ms(v) for v in (s.get("percentiles_ns") or {}).values())][:9]])]
    if s.get("notes"):
        out.append("".join(f'<p class="warn">{e(n)}</p>' for n in s["notes"]))
    if frames:
        durs = [f["dur_ns"] / 1e6 for f in frames]
        out.append(f'<div class="plot">{plots.frame_time_histogram(durs, f"frame time, {name}")}</div>')
        out.append(f'<div class="plot">{plots.frame_timeline(frames, f"frames over time, {name}", t0)}</div>')
    causes = s.get("causes") or []
    if causes:
        out.append("<h3>Causes of slow frames, ranked</h3>" + _table(
            ["cause", "frames", "mean share of critical path", "in normal frames"],
            [[c.get("name"), c.get("frames"), pct(c.get("share")), pct(c.get("normal_share"))] for c in causes]))
    bad = [f for f in frames if f.get("verdict") in ("SR", "FF")]
    bad.sort(key=lambda f: -f["dur_ns"])
    for f in bad[:50]:
        out.append(_frame_detail(f))
    if len(bad) > 50:
        out.append(f'<p class="muted">{len(bad) - 50} more slow frames in findings.json.</p>')
    return "".join(out)


def _frame_detail(f: dict) -> str:
    causes = f.get("causes") or []
    lead = causes[0]["name"] if causes else "no system factor stands out"
    head = (f'<summary><span class="bad">{e(f.get("verdict"))}</span> at {ms(f["start_ns"])} — '
            f'{ms(f["dur_ns"])} — {e(lead)}</summary>')
    rows = [[c.get("name"), pct(c.get("share")), pct(c.get("normal_share")), c.get("evidence")] for c in causes]
    body = [_table(["cause", "share of critical path", "normal frames", "evidence"], rows)] if rows else []
    stages = f.get("stages") or {}
    if stages:
        body.append(_table(list(stages), [[ms(v) for v in stages.values()]]))
    path = f.get("critical_path")
    if path:
        body.append(f"<p>Critical path: {e(' > '.join(map(str, path)) if isinstance(path, list) else path)}</p>")
    return f"<details>{head}{''.join(body)}</details>"


def _gfxinfo_section(g: dict) -> str:
    rows = [[p.get("process"), p.get("frames"), p.get("sr_naive"), p.get("ff_naive"), p.get("buffer_signal")]
            for p in g.get("processes", [])]
    return (f'<section class="gfxinfo"><h2>dumpsys gfxinfo: {e(g.get("path"))}</h2>'
            + _table(["process", "frames", "SR", "FF", "buffer signal"], rows) + "</section>")


def _thread_label(t: dict | None) -> str:
    if not t:
        return "?"
    return f'{t.get("name") or "?"} (tid {t.get("sys_tid") or t.get("tid")})'


def _hangs_section(h: dict) -> str:
    out = ['<section id="hangs"><h2>ANR and SNR</h2>']
    for ev in h.get("events", []):
        graph = ev.get("wait_for_graph") or {}
        crit = ", ".join(_thread_label(t) for t in ev.get("critical_threads") or [])
        out.append(f'<details><summary><span class="bad">{e(str(ev.get("kind", "")).upper())}</span> '
                   f'{e(ev.get("process"))}: {e(_thread_label(ev.get("blocked_thread")))} blocked; critical: '
                   f'{e(crit)}; cause: {e(ev.get("cause"))}{" — DEADLOCK" if ev.get("deadlock") else ""}'
                   f'</summary><p class="muted">{e(ev.get("source"))}</p>')
        if graph.get("nodes"):
            out.append(f'<div class="graph">{wait_for_graph_svg(graph["nodes"], graph.get("edges", []))}</div>')
        if ev.get("evidence"):
            out.append(f"<pre>{e(_evidence_text(ev['evidence']))}</pre>")
        out.append("</details>")
    clusters = h.get("clusters") or []
    if clusters:
        out.append("<h3>Clusters</h3>")
        for c in clusters:
            rep = c.get("representative")
            out.append(f'<details><summary>cluster {e(c.get("id"))}: {e(c.get("size"))} event(s), '
                       f'cause {e(c.get("cause"))}</summary><p>representative: {e(rep)}</p>'
                       f'<pre>{e(_evidence_text(c.get("representative_stack") or ""))}</pre></details>')
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
