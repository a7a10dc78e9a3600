"""The frames part of report.html: counts, the paper's roll-ups, charts, frame pacing of apps that draw without the
Choreographer, and each slow frame in words (app and layer, FrameTimeline's jank type, the leading cause), with
its evidence as short sentences and small tables."""
from __future__ import annotations

from html import escape
from typing import Any

from droidlag.findings.narrative import cause_sentence
from droidlag.models.causes import CAUSE_WORDS, STAGE_PREFIX
from droidlag.report import plots


def e(value) -> str:
    return escape("" if value is None else str(value), quote=True)


def ms(ns) -> str:
    return "" if ns is None else f"{ns / 1e6:.1f} ms"


def _table(headers: list[str], rows: list[list], raw: bool = False) -> str:
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c if raw else e(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _na(v) -> str:
    return "not possible" if v is None else str(v)


def apps_label(s: dict) -> str:
    apps = s.get("apps") or []
    names = [a.get("process") or str(a.get("pid")) for a in apps[:3]]
    return ", ".join(n for n in names if n) or "the app"


def stack_parts(f: dict) -> dict:
    """Disjoint parts of a frame for the stacked timeline: UI thread, RenderThread, and the rest of the frame
    (waiting for vsync, buffers or other threads). Nested stages (measure inside traversal) are not stacked."""
    st = f.get("stages") or {}
    dur = f["dur_ns"]
    ui = st.get("ui_thread") or sum(st.get(k) or 0 for k in ("input", "animation", "traversal", "measure_layout",
                                                              "draw"))
    rt = st.get("render_thread") or sum(st.get(k) or 0 for k in ("sync", "gpu_issue", "swap"))
    ui = min(ui, dur)
    rt = min(rt, dur - ui)
    return {"UI thread": ui, "RenderThread": rt, "rest of the frame": dur - ui - rt}


def short_layer(layer: str | None) -> str:
    """A FrameTimeline layer name without its `TX - ` prefix and the package repeated before the activity."""
    if not layer:
        return ""
    name = layer.removeprefix("TX - ")
    if "/" in name and not name.startswith("Surface("):
        pkg, act = name.split("/", 1)
        if "." in act.split("#")[0]:
            act = "." + act.split("#")[0].rsplit(".", 1)[-1] + ("#" + act.split("#", 1)[1] if "#" in act else "")
        name = f"{pkg}/{act}"
    return name if len(name) <= 70 else name[:67] + "..."


def frames_block(report: dict, t0: int) -> str:
    s = report.get("summary") or {}
    frames = report.get("frames") or []
    pcts = s.get("frame_time_ms") or {}
    out = [f"<h3>Frames of {e(apps_label(s))}</h3>"]
    if not s.get("frames"):
        out.append(f'<p class="muted">{e(s.get("no_frames_reason") or "no app frames")}</p>')
    else:
        out.append(_table(
            ["frames", "SR (buffer-aware)", "FF (buffer-aware)", "SR threshold only", "FF threshold only",
             "buffer signal", *[f"{k} ms" for k in pcts]],
            [[s.get("frames"), _na(s.get("sr")), _na(s.get("ff")), s.get("sr_naive"), s.get("ff_naive"),
              s.get("buffer_signal"), *pcts.values()]]))
        out.append(_refresh_text(s))
    if s.get("incomplete_frames"):
        out.append(f'<p class="muted">{s["incomplete_frames"]} frame(s) have no end in the trace (the trace '
                   "stopped first, or an end event was lost): their duration is unknown, so they are counted apart "
                   "and left out of every count, percentile and chart.</p>")
    out += [f'<p class="warn">{e(n)}</p>' for n in report.get("notes") or []
            if s.get("frames") or n != s.get("no_frames_reason")]   # said once, above
    out.append(_aggregates(s))
    if s.get("not_possible_reason"):
        out.append(f'<p class="warn">{e(s["not_possible_reason"])}</p>')
    out.append(_agreement(s))
    out.append(_charts(frames, t0))
    out.append(pacing_block(s.get("frame_pacing") or []))
    out.append(_causes_table(s))
    out.append(rollups_block(s.get("paper_rollups")))
    bad = [f for f in frames if f.get("verdict") in ("SR", "FF") or f.get("naive_verdict") in ("SR", "FF")]
    bad.sort(key=lambda f: -f["dur_ns"])
    if bad:
        out.append("<h3>Slow frames, longest first</h3>")
    out += [frame_detail(f, t0) for f in bad[:50]]
    if len(bad) > 50:
        out.append(f'<p class="muted">{len(bad) - 50} more long frames in findings.json.</p>')
    return "".join(out)


def _refresh_text(s: dict) -> str:
    rates = s.get("refresh_rates") or []
    if not rates:
        return ""
    parts = [f"{r['hz']:g} Hz ({r['vsync_period_ms']} ms budget, {r['frames']} frames, {r['sr_vsync']} over it)"
             for r in rates]
    how = "changed during the trace: " if len(rates) > 1 else ""
    return f"<p>Panel refresh rate {how}{e('; '.join(parts))}, from {e(rates[0].get('source'))}.</p>"


def _aggregates(s: dict) -> str:
    aggregates = s.get("gfxinfo_summaries") or []
    if not aggregates:
        return ""
    return "<h3>Android's own counters</h3>" + _table(
        ["process / package", "frames rendered", "janky (Android)", "janky %", "SR by histogram",
         "FF by histogram", "p50/p90/p95/p99 ms"],
        [[g.get("process"), g.get("total_frames_rendered"), g.get("janky_frames"), g.get("janky_percent"),
          g.get("sr_naive_histogram"), g.get("ff_naive_histogram"),
          "/".join(str(v) for v in (g.get("percentiles_ms") or {}).values())] for g in aggregates])


def _agreement(s: dict) -> str:
    a = s.get("frametimeline_agreement")
    if not a or not a.get("by_layer"):
        return ""
    rows = [[layer.get("process") or layer.get("pid"), short_layer(layer.get("layer")), layer["frames"],
             layer["frametimeline_app_jank"], layer["naive_sr_ff"], layer["agree"], layer["naive_fp"],
             layer["naive_fn"]] for layer in a["by_layer"][:20]]
    return ("<h3>Agreement with FrameTimeline, per layer</h3><p>FrameTimeline's App Deadline Missed is the ground "
            "truth; the threshold-only verdict (16.67 ms) is compared with it on every app surface frame.</p>"
            + _table(["app", "layer", "frames", "FrameTimeline app jank", "over 16.67 ms", "agree",
                      "over 16.67 ms but on time", "missed"], rows))


def _charts(frames: list[dict], t0: int) -> str:
    out = []
    done = [f for f in frames if f.get("complete") is not False]
    by_app: dict[str, list[dict]] = {}
    for f in done:
        by_app.setdefault(str(f.get("process") or f.get("pid") or "app"), []).append(f)
    for app, fs in sorted(by_app.items(), key=lambda kv: -len(kv[1]))[:4]:
        durs = [f["dur_ns"] / 1e6 for f in fs]
        periods = [(f.get("vsync_period_ns") or 0) / 1e6 for f in fs]
        ordered = [{**f, "stages": stack_parts(f)} for f in sorted(fs, key=lambda f: f["start_ns"])]
        out.append(f'<div class="plot">{plots.frame_time_histogram(durs, f"frame time, {app}", periods)}</div>')
        out.append(f'<div class="plot">{plots.frame_timeline(ordered, f"frames over time, {app}", t0)}</div>')
    return "".join(out)


def pacing_block(pacing: list[dict]) -> str:
    if not pacing:
        return ""
    rows = [[p.get("process") or p["pid"], p.get("renderer"), p.get("producer"), p["buffers"],
             f"{p['target_fps']} fps ({p['target_ms']} ms)", f"{p['over_1.5x']} ({p['over_1.5x_pct']}%)",
             f"{p['over_2.0x']} ({p['over_2.0x_pct']}%)", p["stutter_runs"], p["interval_ms"]["p50"],
             p["interval_ms"]["max"]] for p in pacing]
    return ("<h3>Frame pacing of apps that draw without the Choreographer</h3><p>Games, GL/Vulkan, SurfaceView, "
            "Flutter and Unity hand buffers to SurfaceFlinger from their own threads: each buffer is one frame "
            "(a queueBuffer inside eglSwapBuffers counted once), measured against the app's target rate.</p>"
            + _table(["app", "renderer", "thread", "buffers", "target", "over 1.5x", "over 2x", "stutter runs",
                      "median interval ms", "longest ms"], rows))


def _causes_table(s: dict) -> str:
    causes = s.get("causes") or []
    if not causes:
        return ""
    rows = [[CAUSE_WORDS.get(c["name"].removeprefix(STAGE_PREFIX), c["name"]), c.get("leading"), c.get("frames"),
             "" if c.get("cost_over_budget_ms") is None else f"{c['cost_over_budget_ms']:.1f} ms",
             _pct(c.get("mean_share")), _pct(c.get("mean_normal_share"))] for c in causes]
    return ("<h3>Causes of slow frames, ranked</h3><p>Ranked by the slow frames each cause led, then by the time it "
            "cost them over their budget. The share in normal frames is for comparison, not a filter.</p>"
            + _table(["cause", "led", "in frames", "time over budget", "share of the critical path",
                      "same share in normal frames"], rows))


def _pct(x) -> str:
    return "" if x is None else f"{100 * x:.1f}%"


def rollups_block(r: dict | None) -> str:
    if not r or not r.get("sr_ff_frames"):
        return ""
    cc = r["cause_classes"]
    names = {"ui_work": "UI work / heavy rendering", "io_binder": "I/O and binder", "scheduling": "scheduling",
             "compositor": "the compositor", "other": "other", "stage": "a stage (gfxinfo)"}
    rows = [[names.get(k, k), v, f"{cc['pct'].get(k)}%", f"{cc['paper_pct'].get(k, '')}%" if k in cc["paper_pct"]
             else ""] for k, v in sorted(cc["counts"].items(), key=lambda kv: -kv[1])]
    out = [f"<h3>The paper's roll-ups over {r['sr_ff_frames']} slow frame(s)</h3>"]
    if rows:
        out.append(_table(["leading cause class", "frames", "share", "in the paper"], rows))
    ds = r["dominant_stage"]
    if ds.get("dominant"):
        counts = ", ".join(f"{k} {v}" for k, v in sorted(ds["counts"].items(), key=lambda kv: -kv[1]))
        out.append(f"<p>The stage that took the most time in slow frames: <b>{e(ds['dominant'])}</b> ({e(counts)}); "
                   f"the paper found {e(ds['paper'])}.</p>")
    cpu = r.get("cpu_utilisation")
    if cpu:
        out.append(f"<p>CPU busy during SR frames {e(cpu.get('sr_pct'))}%, during FF frames "
                   f"{e(cpu.get('ff_pct') if cpu.get('ff_pct') is not None else 'n/a (none)')}"
                   f"{'%' if cpu.get('ff_pct') is not None else ''}, in normal frames {e(cpu.get('normal_pct'))}% "
                   f"({cpu['cpus']} CPUs; the paper: {e(cpu['paper'])}).</p>")
    return "".join(out)


def frame_detail(f: dict, t0: int) -> str:
    """One slow frame: verdict, time, length, app and layer, FrameTimeline's jank type and the leading cause in the
    summary line; each cause as a sentence below, with small tables for its numbers."""
    causes = f.get("causes") or []
    verdict = f.get("verdict")
    cls = "bad" if verdict in ("SR", "FF") else "muted"
    label = verdict if verdict in ("SR", "FF") else f'{f.get("naive_verdict")} by threshold only ({verdict})'
    who = f.get("process") or f.get("pid") or "?"
    layer = short_layer(f.get("layer_name"))
    ft = f.get("ft_jank_type")
    if f.get("cause_note"):
        lead = f["cause_note"]
    elif verdict == "ok" and not causes:
        lead = "not jank for the user (buffer-aware), so no cause is sought"
    elif causes:
        lead = "leading cause: " + CAUSE_WORDS.get(causes[0]["name"], causes[0]["name"])
    else:
        lead = "no cause found"
    parts = [f"{(f['start_ns'] - t0) / 1e9:.3f} s", ms(f["dur_ns"]), str(who)]
    if layer:
        parts.append(f"layer {layer}")
    if ft:
        parts.append(f"FrameTimeline: {ft}")
    parts.append(lead)
    head = f'<summary><span class="{cls}">{e(label)}</span> at {e(" — ".join(parts))}</summary>'
    body = []
    if f.get("buffer_evidence"):
        body.append(f"<p>Why this verdict: {e(f['buffer_evidence'])}.</p>")
    gc = f.get("gc_blocking")
    if gc:
        names = ", ".join(sorted({f"{s['slice']} on {s['thread']}" for s in gc.get("slices") or []}))
        body.append(f"<p>Blocking GC during the frame: {ms(gc.get('blocking_gc_ns'))} ({e(names)}).</p>")
    shared: dict[str, Any] = {}   # what every cause of the frame carries (threads on the path, call paths): shown once, at the end
    for c in causes:
        body.append(f"<p>{e(cause_sentence(c))}</p>")
        ev = c.get("evidence")
        if isinstance(ev, dict):
            own = {k: v for k, v in ev.items() if k not in ("threads_ms", "critical_call_path")}
            shared = shared or {k: ev[k] for k in ("threads_ms", "critical_call_path") if ev.get(k)}
            body.append(_cause_tables(own))
        elif ev:
            body.append(f"<p>{e(ev)}</p>")
    if shared:
        body.append(_cause_tables(shared))
    stages = f.get("stages") or {}
    if stages:
        body.append("<p>Stages of the frame:</p>" + _table(list(stages), [[ms(v) for v in stages.values()]]))
    return f"<details>{head}{''.join(body)}</details>"


def _cause_tables(ev: dict) -> str:
    """The numbers behind a cause as small tables: threads on the critical path, binder servers, blocked kernel
    functions, CPUs of a placement, the UI components that took the time."""
    out = []
    for key, title in (("threads_ms", "thread on the critical path"), ("servers_ms", "binder server thread"),
                       ("blocked_functions_ms", "kernel function blocked in"), ("components_ms", "slice (UI component)")):
        d = ev.get(key)
        if d:
            out.append(_table([title, "ms"], [[k, v] for k, v in d.items()]))
    cpus = (ev.get("cpus") or {}) if isinstance(ev.get("cpus"), dict) else {}
    if cpus:
        out.append(_table(["cpu", "class", "ms", "mean frequency, % of top", "faster cpus idle"],
                          [[c, d.get("class"), d.get("ms"), d.get("mean_freq_pct"),
                            ", ".join(map(str, d.get("idle_faster_cpus") or []))] for c, d in cpus.items()]))
    path = ev.get("critical_call_path") or {}
    for thread, calls in path.items() if isinstance(path, dict) else ():
        if calls:
            out.append(f"<p>Critical call path on the {e(thread.replace('_', ' '))}: {e(' > '.join(calls))}</p>")
    return "".join(out)
