"""Findings in plain words: one headline per problem, worst first ("main thread waited 4.8 s for a lock held by
Binder:1234_5, which was in fsync"), and each hang's wait-for graph as nodes and edges for drawing."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from droidlag.frames import FramesReport
from droidlag.frames.results import ComponentTimes, FramesSummary, ProducerPacing
from droidlag.hangs.analyze import HangReport, critical_key
from droidlag.hangs.causes import code_owner
from droidlag.models.causes import CAUSE_WORDS, STAGE_PREFIX

# Severity orders the terminal summary and the report: system-wide hangs first, then app hangs, then jank.
SEVERITY = {"snr": 100, "deadlock": 90, "anr": 80, "ff": 60, "sr": 40}



@dataclass
class Headline:
    """One problem in plain words. severity orders them (higher first); kind: snr, deadlock, anr, ff, sr, gc, ui,
    pacing, ok or info; level: bad, warn, ok or muted; source: the input it is about."""

    severity: float
    kind: str
    level: str
    source: str | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_FRAME = re.compile(r"^at\s+(?P<where>[\w$.<>]+)\((?P<src>[^)]*)\)")
# A native frame as ART (`native: #00 pc 0000... /system/lib/libc.so (fdatasync+12)`) or debuggerd/Play Console
# (`#00 pc 0x... libc.so (__ioctl + 4) (BuildId: ...)`) prints it: the library and the symbol.
_NATIVE_FRAME = re.compile(r"^(?:native:\s*)?(?:#\d+\s+)?pc\s+(?:0x)?[0-9a-fA-F]+\s+(?P<lib>\S+)"
                           r"(?:\s+\((?P<sym>[^()]+?)(?:\s*\+\s*\d+)?\))?")
# ART's thread state words as a sentence says them after "was" (the rest read as they are: blocked, waiting...).
_STATE_WORDS = {"native": "in native code", "runnable": "running", "timed_waiting": "waiting (timed)"}


def cause_sentence(c: dict[str, Any]) -> str:
    """One cause of one frame in words: what, how long on the critical path, what it cost over the budget, and
    how that compares with normal frames."""
    got = c.get("evidence")
    ev: dict[str, Any] = got if isinstance(got, dict) else {}
    name = str(c.get("name") or "?")
    share, normal = c.get("share"), c.get("normal_share")
    if name.startswith(STAGE_PREFIX):    # gfxinfo: the stage that took the most of the frame
        text = f"The {name[len(STAGE_PREFIX):].replace('_', ' ')} stage took {ev.get('stage_ms', '?')} ms of the " \
               f"{ev.get('frame_ms', '?')} ms frame" + (f" ({100 * share:.0f}%)" if share is not None else "")
        return text + (f"; {100 * normal:.0f}% in normal frames." if normal is not None else ".")
    words = CAUSE_WORDS.get(name, name)
    if share is None:
        comps = ev.get("components_ms") or {}
        top = ", ".join(f"{k} {v} ms" for k, v in list(comps.items())[:3])
        return (f"{words[0].upper() + words[1:]}: no sched data to split the frame's time" +
                (f"; the slices that took it: {top}." if top else "."))
    text = f"{words[0].upper() + words[1:]}: {ev.get('ms', '?')} ms of the {ev.get('path_ms', '?')} ms critical path " \
           f"({100 * share:.0f}%)"
    if ev.get("cost_over_budget_ms") is not None:
        text += f", {ev['cost_over_budget_ms']} ms of it over the frame's budget"
    if normal is not None:
        times = ev.get("times_normal")
        text += (f"; normal frames spend {100 * normal:.0f}% of theirs this way"
                 + (f" ({times}x here)" if times else ""))
        text += ", so it stands out" if ev.get("stands_out") else ", so it is usual for this app, yet it cost the time"
    return text + "."


def _short_frame(frame: str | None) -> str | None:
    if not frame:
        return None
    m = _FRAME.match(frame.strip())
    if not m:
        n = _NATIVE_FRAME.match(frame.strip())
        if n:
            lib = n.group("lib").rsplit("/", 1)[-1]
            return f"{n.group('sym').strip()} ({lib})" if n.group("sym") else lib
        return frame.strip()[:80]
    parts = m.group("where").split(".")
    return ".".join(parts[-2:]) if len(parts) >= 2 else m.group("where")


def _thread(t: dict[str, Any] | None) -> str:
    if not t:
        return "a thread"
    tid = t.get("tid")
    if not t.get("name") and tid is None and not t.get("sys_tid") and t.get("process"):
        return str(t["process"])   # a remote process (a binder peer, a child process), no thread known
    name = t.get("name") or (f"thread {tid}" if tid is not None else "a native thread")
    proc = t.get("process")
    # the tid shown is the dump's `tid` (as in the JSON), else the Linux sysTid, said as such
    where = f"tid {tid}" if tid is not None else (f"sysTid {t['sys_tid']}" if t.get("sys_tid") else "")
    if not t.get("name") and tid is not None:
        where = ""   # "thread 18" already says its tid
    if proc and proc != t.get("_event_process"):
        where = f"{proc}, {where}" if where else proc
    if t.get("state") == "absent":
        where += ", not in the report" if where else "not in the report"
    return f"{name} ({where})" if where else name


def _via_words(via: dict[str, Any] | None) -> str:
    if not via:
        return "waited for"
    kind = via.get("kind")
    if kind in ("monitor", "lock", "lock_owner"):   # lock_owner: another stack shows the owner
        lock = via.get("lock_class") or via.get("lock") or "a lock"
        return f"waited for a lock ({lock}) held by"
    if kind == "binder":
        return "waited on a binder call served by"
    if kind == "join":
        return "waited for the end of"
    if kind == "process":
        return "waited for"
    if kind == "inferred":
        return "- the paste shows"
    if kind == "wait":
        what = via.get("lock_class")
        return f"waited ({what}) for" if what else "waited for"
    return f"waited ({kind}) for"


def _owned_frame(frame: str, process: str | None) -> str:
    """`in the app's Class.method`, or the frame with whose code it is (a library's, the framework's) when that is
    not the app's."""
    short = _short_frame(frame)
    owner = code_owner(re.sub(r"^(?:at )?([^\s(]+).*$", r"\1", frame.strip()), process)
    if owner == "the app's code":
        return f"in the app's {short}"
    return f"in {short}, {owner}" if owner else f"in {short}"


def hang_sentence(ev: dict[str, Any]) -> str:
    """One sentence for an ANR/SNR event dict (the hangs JSON)."""
    proc = ev.get("process") or "an app the report does not name"
    chain = ev.get("chain") or []
    for step in chain:
        if step.get("thread"):
            step["thread"]["_event_process"] = proc
    blocked = ev.get("blocked_thread") or {}
    blocked = {**blocked, "_event_process": proc}
    kind = "SNR (watchdog)" if ev.get("kind") == "snr" else "ANR"
    head = f"{kind} in {proc}: {_thread(blocked)}"
    if ev.get("deadlock"):
        members = ", ".join(_thread({**t, "_event_process": proc}) for t in ev["deadlock"])
        text = f"{head} is in a deadlock: {members} each wait for another in the cycle"
    elif len(chain) > 1:
        hops = [f"{_via_words(step.get('via'))} {_thread(step.get('thread'))}" for step in chain[1:]]
        text = f"{head} " + ", which ".join(hops)
    else:
        state = (blocked.get("state") or "").lower()
        evid = ev.get("evidence") or {}
        # the frame in the app's code it was in (framework wait primitives skipped), else its top frame
        top = _short_frame(evid.get("app_frame") or (evid.get("blocked_frames") or [None])[0])
        if state or top:
            text = f"{head} was {_STATE_WORDS.get(state, state or 'busy')}" + (f" in {top}" if top else "")
        else:   # a header or log lines only: nothing shows what the thread did
            text = f"{head}: the report shows no stack for it"
    crit = ev.get("evidence", {}).get("critical_frames") or {}
    last = chain[-1]["thread"] if len(chain) > 1 and chain[-1].get("thread") else None
    key = critical_key(last.get("name"), last.get("sys_tid"), last.get("tid")) if last else None
    if key in crit and crit[key] and not ev.get("deadlock"):
        text += f", which was in {_short_frame(crit[key][0])}"
    cause = CAUSE_WORDS.get(ev.get("cause", ""), ev.get("cause"))
    cev = (ev.get("evidence") or {}).get("cause") or {}
    app = (ev.get("evidence") or {}).get("app_frame") or cev.get("app_frame")
    if app and len(chain) > 1:
        text += f" ({_owned_frame(app, proc if ev.get('process') else None)})"
    if cev.get("words"):
        cause = f"{cause}: {cev['words']}"
    for step in chain:
        if step.get("thread"):
            step["thread"].pop("_event_process", None)
    return f"{text}. Probable cause: {cause}."


def hang_headlines(report: HangReport) -> list[Headline]:
    out = []
    for ev in report.to_dict()["events"]:
        kind = "deadlock" if ev.get("deadlock") else ev.get("kind", "anr")
        out.append(Headline(SEVERITY.get(kind, 80), kind, "bad", ev.get("source"), hang_sentence(ev)))
    return out


RENDERER_WORDS = {
    "flutter": "draws with Flutter, outside the HWUI pipeline",
    "unity": "draws with Unity, outside the HWUI pipeline",
    "surfaceview/gl": "draws through GL/SurfaceView, outside the HWUI pipeline",
    "no-choreographer": "queues buffers with no Choreographer#doFrame in the trace",
}


def pacing_headline(p: ProducerPacing, path: str) -> Headline:
    """One producer of an app that draws without the Choreographer: its pacing against its target rate (figures as
    the summary shows them)."""
    over, over2 = p.over.get(1.5, 0), p.over.get(2.0, 0)
    pct = p.over_pct.get(1.5)
    pct = round(pct, 2) if pct is not None else None
    fps = round(1e9 / p.target_ns, 1) if p.target_ns else None
    how = RENDERER_WORDS.get(p.renderer or "", f"draws with {p.renderer}")
    who = f"{p.process or p.pid} {how} (thread {p.producer or p.producer_tid})"
    text = (f"{path}: {who}: {p.buffers} buffers at a {fps} fps target ({_shown_ms(p.target_ns)} ms); "
            f"{over} interval(s) over 1.5x the target ({pct}%), {over2} over 2x, "
            f"{p.stutter_runs} stutter run(s), longest interval {_shown_ms(p.interval_ns['max'])} ms")
    if p.pauses:
        text += f"; {p.pauses} pause(s) over 700 ms not counted"
    if not over:
        return Headline(2, "pacing", "ok", path, text + " (steady pacing).")
    return Headline(SEVERITY["sr"] + min(19, (pct or 0) / 5), "pacing", "bad" if over2 else "warn", path, text + ".")


def frames_headlines(report: FramesReport, path: str) -> list[Headline]:
    """One headline per trace or gfxinfo file with slow frames (how many, how bad, the leading cause), and one per
    producer of an app that draws without the Choreographer (its frame pacing)."""
    s = report.summary
    pacing = [pacing_headline(p, path) for p in s.sections.get("frame_pacing") or []]
    base = _frames_headline(report, path)
    if pacing:   # Choreographer frames alone must not read as an all-clear for the apps they leave out
        base = [h for h in base if h.kind != "info"]
        for h in base:
            if h.kind == "ok":
                h.text = h.text[:-1] + (f"; {len(pacing)} thread(s) draw without the Choreographer: their "
                                        "pacing is below.")
                h.level = "muted"
    return base + pacing


def _shown_ms(ns: float) -> float:
    """A time as the summary shows it (ms, 3 decimals): a headline quotes the same figure."""
    return round(ns / 1e6, 3)


def _frozen_words(aggregates: list[dict[str, Any]]) -> tuple[int, str]:
    """Frames over 16.67 ms and over 700 ms by the histograms, in words (the figures `droidlag frames` gives as SR
    and FF). Android 6-7 print no HISTOGRAM line, and a pasted summary may leave it out: then neither is known."""
    sr = sum(g.get("sr_naive_histogram") or 0 for g in aggregates)
    ff = sum(g.get("ff_naive_histogram") or 0 for g in aggregates)
    with_hist = sum(g.get("ff_naive_histogram") is not None for g in aggregates)
    counts = f"{sr} over 16.67 ms and {ff} over 700 ms by the histogram"
    return ff, (counts if with_hist == len(aggregates) else
                f"{counts} of {with_hist} of them" if with_hist else
                "no frame-time histogram, so frames over 700 ms are not known (nor those over 16.67 ms)")


def _aggregates_headline(aggregates: list[dict[str, Any]], path: str) -> Headline:
    """Android's own counters when there are no per-frame rows (gfxinfo without framestats, graphicsstats)."""
    total = sum(g["total_frames_rendered"] for g in aggregates)
    ff, frozen = _frozen_words(aggregates)
    known = [g for g in aggregates if g.get("janky_frames") is not None]
    if known:
        janky = sum(g["janky_frames"] for g in known)
        counted = f"Android counted {janky} janky of {total} frames ({100 * janky / total:.1f}%)"
        if len(known) < len(aggregates):
            counted += f" ({len(aggregates) - len(known)} without a readable janky count)"
    else:   # the janky counts could not be read (warned): the histogram still says how many frames were slow
        janky = sum(g.get("sr_naive_histogram") or 0 for g in aggregates)
        counted = f"Android's janky count could not be read ({total} frames)"
    worst = max(aggregates, key=lambda g: (g.get("janky_percent") or 0, g["total_frames_rendered"]))
    pct = worst.get("janky_percent")
    text = (f"{path}: {counted} in {len(aggregates)} aggregate(s), {frozen}; highest: {worst['process']}"
            f"{f' ({pct}%)' if pct is not None else ''}. No per-frame data, so no buffer-aware verdict or causes.")
    kind = "ff" if ff else "sr"
    return Headline(SEVERITY[kind] + min(19, 100 * janky / total / 5), kind, "bad" if ff else "warn", path, text)


def _legacy_words(s: FramesSummary) -> str:
    """gfxinfo's legacy `Draw Prepare Process Execute` rows: what the frame times are, and the rows Android capped."""
    legacy = s.sections.get("legacy_rows")
    if not isinstance(legacy, dict):
        return ""
    text = "; counted from the legacy `Draw Prepare Process Execute` rows (each frame's stages summed, no timestamps)"
    if legacy.get("at_50ms_cap"):
        text += (f", {legacy['at_50ms_cap']} of them with a stage at Android's 50 ms print cap: those frames took at "
                 "least that long, and whether any was frozen is not known")
    return text


def _leading_cause(s: FramesSummary, n_slow: int) -> str:
    """The cause that led most slow frames, in words, with its share against normal frames (shares as the summary
    shows them: 4 decimals)."""
    causes = s.causes    # ranked: the cause that led most slow frames first
    comps = s.sections.get("app_work_components_ms")
    top = list(comps.ns.items())[:3] if isinstance(comps, ComponentTimes) else []
    slices = "; the slices that took it: " + ", ".join(f"{k} ({_shown_ms(v):.0f} ms)" for k, v in top)
    if not causes:
        return ""
    c = causes[0]
    if c.mean_share is None:   # no sched data: the slices say where the time went
        text = f"; leading cause: {CAUSE_WORDS.get(c.name, c.name)} (no sched data to split it by CPU, binder or I/O)"
        return text + (slices if c.name == "app_work" and top else "")
    name = c.name.removeprefix(STAGE_PREFIX)
    words = CAUSE_WORDS.get(name, name.replace("_", " "))
    # gfxinfo: the stage that took the most of each slow frame, a share of the frame's time (no critical path)
    whole = "the frame's time" if c.name.startswith(STAGE_PREFIX) else "the critical path"
    text = f"; leading {'stage' if c.name.startswith(STAGE_PREFIX) else 'cause'}: {words}, " \
           f"{100 * round(c.mean_share, 4):.0f}% of {whole}"
    if c.mean_normal_share is not None:
        text += f" against {100 * round(c.mean_normal_share, 4):.0f}% in normal frames"
    text += f" (led {c.leading} of {n_slow} frame(s))"
    return text + (slices if name == "app_work" and top else "")


def _not_counted(s: FramesSummary) -> str:
    """What the frame counts leave out: frames without an end, callbacks that drew nothing (docs/frames.md)."""
    text = ""
    if s.incomplete_frames:
        text += f"; {s.incomplete_frames} frame(s) without an end in the trace not counted"
    if s.skipped_callbacks:
        text += f"; {s.skipped_callbacks} Choreographer callback(s) that drew nothing not counted"
    return text


def _frames_headline(report: FramesReport, path: str) -> list[Headline]:
    s = report.summary
    n = s.frames
    aggregates = [g for g in s.sections.get("gfxinfo_summaries") or [] if g.get("total_frames_rendered")]
    if aggregates and (not n or "counts_from" in s.sections):   # Android's own counters, no per-frame rows
        return [_aggregates_headline(aggregates, path)]
    if not n:
        reason = s.no_frames_reason or "no app frames"
        return [Headline(0, "info", "muted", path, f"{path}: {reason}.")]
    aware = s.sr is not None
    sr, ff = (s.sr or 0, s.ff or 0) if aware else (s.sr_naive or 0, s.ff_naive or 0)
    label = "buffer-aware" if aware else "by threshold only; the buffer-aware verdict was not possible"
    worst = _shown_ms(s.frame_time_ns["max"]) if "max" in s.frame_time_ns else None
    if not sr and not ff:
        return [Headline(1, "ok", "ok", path, f"{path}: {n} frames, none slow or frozen ({label})"
                         + _not_counted(s) + ".")]
    legacy = s.sections.get("legacy_rows")
    capped = isinstance(legacy, dict) and bool(legacy.get("at_50ms_cap"))
    frozen = "" if capped and not ff else f"{ff} frozen and "   # capped rows: frozen frames are not known
    text = (f"{path}: {frozen}{sr} slow of {n} frames ({100 * (sr + ff) / n:.1f}%, {label})"
            + (f", worst {worst:.1f} ms" if worst else ""))
    text += _leading_cause(s, sr + ff) + _legacy_words(s) + _not_counted(s)
    kind = "ff" if ff else "sr"
    sev = SEVERITY[kind] + min(19, (sr + ff) * 100 / n / 5)
    return [Headline(sev, kind, "bad" if ff else "warn", path, text + ".")]


def _edge_label(via: dict[str, Any]) -> str | None:
    """A lock edge carries the lock's class (and address); a binder edge how its peer was found."""
    cls, lock = via.get("lock_class"), via.get("lock")
    if cls:
        return f"{cls} {lock}" if lock else cls
    return lock or via.get("how") or via.get("kind")


def wait_for_graph(ev: dict[str, Any]) -> dict[str, Any]:
    """Nodes and edges of an event's wait-for chain (and its deadlock cycle) for drawing."""
    nodes: dict[str, dict[str, Any]] = {}

    def node(t: dict[str, Any], **flags: bool) -> str:
        nid = f"{t.get('pid')}:{t.get('sys_tid') or t.get('tid') or t.get('name')}"
        if nid not in nodes:
            state = (t.get("state") or "").lower()
            sub = f"tid {t.get('sys_tid') or t.get('tid') or '?'}" + (f" · {state}" if state else "")
            proc = t.get("process") or ""
            if len(proc) > 40:   # keep the distinctive end of long package names (":ext1", ".testapp")
                proc = "…" + proc[-39:]
            nodes[nid] = {"id": nid, "label": t.get("name") or "native thread", "sublabel": f"{sub}\n{proc}"}
        nodes[nid].update({k: v for k, v in flags.items() if v})
        return nid

    edges = []
    chain = ev.get("chain") or []
    prev = None
    for i, step in enumerate(chain):
        t = step.get("thread") or {}
        nid = node(t, blocked=(i == 0))
        if prev is not None:
            via = step.get("via") or {}
            edges.append({"src": prev, "dst": nid, "kind": via.get("kind"),
                          "label": _edge_label(via)})
        prev = nid
    for t in ev.get("critical_threads") or []:
        node(t, critical=True)
    cycle = ev.get("deadlock") or []
    if cycle:
        ids = [node(t, critical=True) for t in cycle]
        have = {(e["src"], e["dst"]) for e in edges}
        for a, b in zip(ids, ids[1:] + ids[:1]):
            if (a, b) not in have and a != b:
                edges.append({"src": a, "dst": b, "kind": "cycle", "label": "waits for"})
    return {"nodes": list(nodes.values()), "edges": edges}


def _mb(b: float | None) -> str:
    return f"{b / 1024**2:.0f} MB" if b is not None else "?"


def _dur(ns: int) -> str:
    if ns >= 10_000_000_000:
        return f"{ns / 1e9:.1f} s"
    return f"{ns / 1e6:.0f} ms" if ns >= 10_000_000 else f"{ns / 1e6:.2f} ms"


def gc_sentence(p: dict[str, Any]) -> str:
    """One process's GC cost in plain words (p: ProcessGc.to_dict())."""
    who = f"{p.get('process') or '?'} (pid {p['pid']})" if p.get("pid") is not None else (p.get("process") or "?")
    if p.get("pid") is None and p.get("pid_unknown"):   # a process dump read without its `----- pid` header
        who = f"{p.get('process') or '?'} (pid unknown)"
    parts = []
    if p["collections"]:
        kinds = sorted(p["by_kind"].items(), key=lambda kv: -kv[1])
        parts.append(f"{p['collections']} GC runs (" + ", ".join(f"{k} {n}" for k, n in kinds[:3])
                     + (", ..." if len(kinds) > 3 else "") + f"), {_dur(p['gc_wall_ns'])} of GC wall time")
    if p["pauses"]:
        pc = p["pause_percentiles_ns"]
        parts.append(f"{p['pauses']} pauses, {p['pause_total_ns'] / 1e6:.1f} ms in all "
                     f"(p90 {pc.get('p90', 0) / 1e6:.2f} ms, max {p['pause_max_ns'] / 1e6:.2f} ms)")
    elif p["pause_total_ns"]:   # dumps: a sum and a longest, no single pauses
        parts.append(f"paused {_dur(p['pause_total_ns'])} in all (longest {p['pause_max_ns'] / 1e6:.2f} ms)")
    if p.get("gc_cpu_ns") is not None:
        parts.append(f"GC CPU {p['gc_cpu_ns'] / 1e6:.1f} ms")
    elif p.get("heap_task_daemon_cpu_ns"):
        parts.append(f"HeapTaskDaemon CPU {_dur(p['heap_task_daemon_cpu_ns'])}")
    if p.get("blocking_gc_ns"):
        parts.append(f"{p['blocking_started']} blocking GCs took {_dur(p['blocking_gc_ns'])}, threads waited "
                     f"{_dur(p['blocked_ns'])} for GCs in all")
    stalled = [t for t in p["threads"] if t["waits"] or t["started"]]
    if stalled:
        main = next((t for t in stalled if t["main_thread"]), None)
        parts.append(f"blocking GC stalled {len(stalled)} thread(s) {p['blocking_waits'] + p['blocking_started']} "
                     f"times, {_dur(p['blocked_ns'])} of waiting logged in all threads"
                     + (f", the main thread {main['waits'] + main['started']} times for "
                        f"{_dur(main['waited_ns'])}" if main else ""))
    h = p["heap"]
    if h.get("limit_bytes"):
        parts.append(f"heap up to {_mb(h.get('used_max_bytes'))} of its {_mb(h['limit_bytes'])} limit"
                     + (f", clamped {h['clamps']} times" if h.get("clamps") else ""))
    if h.get("out_of_memory"):
        parts.append(f"{h['out_of_memory']} OutOfMemoryError(s)")
    span = (p["last_ns"] - p["first_ns"]) if p.get("first_ns") is not None and p.get("last_ns") is not None else 0
    when = f" over {_dur(span)}" if span >= 1_000_000_000 else ""
    return f"{who}{when}: " + "; ".join(parts) if parts else f"{who}: GC lines without cost figures"


def gc_headlines(report: dict[str, Any]) -> list[Headline]:
    """One headline per GC report (log or trace): its worst process; a warning when a main thread was stalled by a
    blocking GC, information otherwise."""
    procs = report.get("processes") or []
    if not procs:
        return []
    p = procs[0]
    if not (p["collections"] or p["blocking_waits"] or p["blocking_started"] or p["heap"].get("out_of_memory")):
        return []   # only heap trims or pauses: in the report's GC section, not a headline
    main = any(t["main_thread"] and (t["waits"] or t["started"]) for t in p["threads"])
    more = f" ({len(procs) - 1} more process(es) in the report)" if len(procs) > 1 else ""
    return [Headline(45 if main else 10, "gc", "warn" if main else "muted", report["source"],
                     f"{report['source']}: GC: {gc_sentence(p)}{more}")]


def comparison_headline(cmp: dict[str, Any]) -> Headline:
    """One line for a before/after pair: the SR/FF change beside the number of UI findings fixed."""
    if cmp.get("not_possible_reason"):
        return Headline(5, "info", "warn", cmp.get("before_trace"),
                        f"before/after comparison not possible: {cmp['not_possible_reason']}")
    b, a = cmp.get("before") or {}, cmp.get("after") or {}

    def side(k: str) -> str:
        pct = f"{k} %"
        return (f"{k} {b.get(k)} -> {a.get(k)}" + (f" ({b.get(pct)}% -> {a.get(pct)}% of frames)"
                                                   if b.get(pct) is not None and a.get(pct) is not None else ""))
    text = f"before -> after: {side('SR')}, {side('FF')}"
    if "findings_before_counts" in cmp:
        text += (f"; {len(cmp.get('fixed_findings') or [])} UI finding(s) fixed, "
                 f"{len(cmp.get('new_findings') or [])} new")
    return Headline(4, "info", "ok", cmp.get("after_trace"), text)


def ui_headlines(layouts: list[dict[str, Any]], hierarchies: list[dict[str, Any]]) -> list[Headline]:
    """One line per app's layouts and per view dump: redundant layers are a cause of heavy UI work, not jank by
    themselves, so they rank below slow frames and hangs (severity 2-9)."""
    out: list[Headline] = []
    for lay in layouts:
        n = len(lay.get("findings") or [])
        kinds = ", ".join(f"{v} {k}" for k, v in sorted((lay.get("counts") or {}).items(), key=lambda kv: -kv[1]))
        text = (f"{lay['path']}: {n} redundant UI layer(s) in {lay.get('files')} layout files ({kinds})" if n else
                f"{lay['path']}: no redundant UI layer found in {lay.get('files')} layout files")
        if lay.get("notes"):
            text += "; " + "; ".join(lay["notes"])
        out.append(Headline(min(9, 2 + n / 10) if n else 1, "ui" if n else "ok", "warn" if n else "ok", lay["path"],
                            text))
    for h in hierarchies:
        share = h.get("overdraw_share") or {}
        heavy = (share.get("3x") or 0) + (share.get("4x+") or 0)
        chains = sum(c.get("redundant_layers") or 0 for c in h.get("same_bounds_chains") or [])
        text = (f"{h['path']}: {h.get('mean_layers_per_pixel') or 0:.2f} layers per pixel"
                f"{' (estimate)' if h.get('estimate') else ''}, {100 * heavy:.0f}% of the screen overdrawn 3x or "
                f"more, {chains} redundant same-bounds container(s), {len(h.get('covered_views') or [])} fully "
                "covered view(s)")
        out.append(Headline(min(9, 2 + 20 * heavy + chains / 5), "ui", "warn" if heavy or chains else "ok",
                            h["path"], text))
    return out
