"""The report's GC section: per input (log or trace), one row per process with what GC cost it."""
from __future__ import annotations

from html import escape

from droidlag.report import plots

_HEAD = ["process", "pid", "GC runs (by kind)", "pauses: n / total", "pause p50 / p90 / p99 / max", "GC wall",
         "GC CPU", "blocking GC: waits / own runs", "blocked (all threads)", "main thread blocked", "freed",
         "heap used max / limit", "clamps / OOM"]


def _e(v) -> str:
    return escape("" if v is None else str(v), quote=True)


def _ms(ns) -> str:
    if ns is None:
        return ""
    if ns >= 10_000_000_000:
        return f"{ns / 1e9:.2f} s"
    return f"{ns / 1e6:.1f} ms" if ns >= 1_000_000 or ns == 0 else f"{ns / 1e6:.2f} ms"


def _worst(report: dict) -> tuple:
    """Sort key of a report: its worst process's main-thread blocking, all blocking, then GC time."""
    procs = report.get("processes") or [{}]
    p = procs[0]
    main = sum(t.get("waited_ns") or 0 for t in p.get("threads") or [] if t.get("main_thread"))
    return (-main, -(p.get("blocked_ns") or 0), -(p.get("gc_wall_ns") or 0))


def _mb(b) -> str:
    return "" if b is None else f"{b / 1024**2:.1f} MB"


def _row(p: dict) -> list[str]:
    kinds = "<br>".join(f"{_e(k)}: {n}" for k, n in sorted(p["by_kind"].items(), key=lambda kv: -kv[1]))
    pc = p["pause_percentiles_ns"]
    h = p["heap"]
    main = [t for t in p["threads"] if t["main_thread"]]
    main_txt = (f'<span class="bad">{_ms(main[0]["waited_ns"])} ({main[0]["waits"] + main[0]["started"]}x)</span>'
                if main and (main[0]["waits"] or main[0]["started"]) else "")
    pid = "unknown" if p["pid"] is None and p.get("pid_unknown") else p["pid"]   # a dump without its header
    return [_e(p["process"]), _e(pid), f"{p['collections']}<br>{kinds}" if p["collections"] else "0",
            f"{p['pauses']} / {_ms(p['pause_total_ns'])}",
            " / ".join(_ms(pc.get(k)) for k in ("p50", "p90", "p99")) + f" / {_ms(p['pause_max_ns'])}" if pc else "",
            _ms(p["gc_wall_ns"]), _ms(p.get("gc_cpu_ns")), f"{p['blocking_waits']} / {p['blocking_started']}",
            _ms(p["blocked_ns"]), main_txt, _mb(p["freed_bytes"]) if p["freed_bytes"] else "",
            f"{_mb(h.get('used_max_bytes'))} / {_mb(h.get('limit_bytes'))}",
            f"{h.get('clamps') or 0} / {h.get('out_of_memory') or 0}"]


def gc_section(reports: list[dict], top: int = 30) -> str:
    """HTML for the GC section; empty when no input held GC data."""
    if not reports:
        return ""
    out = ['<section id="gc"><h2>Garbage collection</h2><p class="muted">Inputs and processes worst first (main '
           "thread blocked by GC, then all blocking, then GC time). From logs: ART logs only explicit and slow "
           "collections (total over 100 ms or a pause of 5 ms or more), so log figures are lower bounds; from process "
           "dumps: totals since the process started; from traces: ART's GC slices and the sched data.</p>"]
    for r in sorted(reports, key=_worst):
        what = {"log": r.get("events"), "trace": r.get("slices"), "dump": {"process dumps": r.get("dumps")}}.get(
            r.get("kind") or "")
        head = ", ".join(f"{_e(k)} {_e(n)}" for k, n in (what or {}).items())
        rows = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in _row(p)) + "</tr>" for p in r["processes"][:top])
        more = (f'<p class="muted">{len(r["processes"]) - top} more process(es) in findings.json.</p>'
                if len(r["processes"]) > top else "")
        notes = "".join(f'<li class="muted">{_e(n)}</li>' for n in r.get("notes") or [])
        # a picture for the worst processes whose log spans time: GC and main-thread waits over time
        pics = "".join('<div class="plot">' + plots.gc_timeline(p["timeline"], f"GC over time, {p['process']}")
                       + "</div>" for p in r["processes"][:2]
                       if p.get("timeline") and (p["gc_wall_ns"] or p["blocked_ns"]))
        out.append(f'<h3>{_e(r["source"])} ({_e(r.get("kind"))})</h3><p class="muted">{head}</p>'
                   f'<div style="overflow-x:auto"><table><thead><tr>{"".join(f"<th>{_e(h)}</th>" for h in _HEAD)}</tr>'
                   f"</thead><tbody>{rows}</tbody></table></div>{more}{pics}"
                   + (f"<ul>{notes}</ul>" if notes else ""))
    out.append("</section>")
    return "".join(out)
