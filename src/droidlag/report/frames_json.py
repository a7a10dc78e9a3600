"""The frames report as findings.json writes it (`droidlag frames --json`, `traces[].frames`, `gfxinfo[]`): the
analysis' typed records (ns, unrounded) in the schema's words, milliseconds and rounding (docs/findings-schema.md).
This is the one place they are converted."""
from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from typing import Any

from droidlag.frames import FramesReport
from droidlag.frames.results import (
    BlockBaseline,
    BlockEvidence,
    BlockRequest,
    CauseEvidence,
    CauseRank,
    ComponentTimes,
    CompositorEvidence,
    CompositorSummary,
    FrameCause,
    FramesSummary,
    Intervals,
    PlacementCpu,
    ProducerPacing,
    RefreshStretch,
    SfBaseline,
    VsyncVerdicts,
)
from droidlag.frames.segment import STAGES

# frame-table columns written as they are, after the fixed ones
_FRAME_COLUMNS = ("pid", "process", "window", "layer_name", "vsync_id", "ft_jank_type", "ft_present_type",
                  "buffer_signal", "buffer_evidence", "naive_vsync_verdict", "vsync_period_ns", "complete",
                  "cause_note")


def ms(ns: float | None, digits: int = 3) -> float | None:
    """Nanoseconds as milliseconds, rounded (3 decimals: whole microseconds)."""
    return None if ns is None else round(ns / 1e6, digits)


def _r(x: float | None, digits: int) -> float | None:
    return None if x is None else round(x, digits)


def _ms_by(d: dict[str, int] | dict[str, float]) -> dict[str, float | None]:
    return {k: ms(v) for k, v in d.items()}


def frames_dict(report: FramesReport) -> dict[str, Any]:
    """The frames report as JSON: summary, notes, warnings, and one object per frame with its causes."""
    by_frame: dict[int, list[dict[str, Any]]] = {}
    for c in report.frame_causes:
        by_frame.setdefault(c.frame_id, []).append(cause_dict(c))
    f = report.frames
    stage_cols = [c for c in STAGES if c in f.columns]
    keep = [c for c in _FRAME_COLUMNS if c in f.columns]
    frames = []
    for r in f.iter_rows(named=True):
        d = {"start_ns": r["start_ns"], "dur_ns": r["dur_ns"],
             "stages": {c: r[c] for c in stage_cols if r[c] is not None},
             "verdict": r["verdict"], "naive_verdict": r["naive_verdict"],
             "causes": by_frame.get(r["frame_id"], [])}
        d.update({k: r[k] for k in keep})
        if r.get("gc_blocking"):   # the frame overlapped a blocking GC on its own threads (gc.evidence, JSON text)
            d["gc_blocking"] = json.loads(r["gc_blocking"])
        frames.append(d)
    return {"source": report.source, "path": report.path, "summary": summary_dict(report.summary),
            "notes": report.notes, "warnings": report.warnings, "frames": frames}


def cause_dict(c: FrameCause) -> dict[str, Any]:
    """One cause of one frame: name, shares, evidence."""
    return {"name": c.name, "share": _r(c.share, 4), "normal_share": _r(c.normal_share, 4),
            "evidence": evidence_dict(c.evidence)}


def evidence_dict(ev: CauseEvidence) -> dict[str, Any]:
    """A cause's evidence in the order findings.json v1 gives it for each kind of cause."""
    if ev.stage is not None:   # gfxinfo: the stage that took the most of the frame
        return {"stage_ms": ms(ev.stage_ns), "frame_ms": ms(ev.frame_ns), "note": ev.note}
    if ev.compositor is not None:
        return compositor_evidence_dict(ev.compositor) | {"label": ev.label}
    if ev.ns is None:          # the app's own work when no factor reached the share: its slices
        comps = ev.components
        out: dict[str, Any] = ({"critical_call_path": comps.critical_call_path,
                                "components_ms": _ms_by(comps.components_ns)} if comps is not None else {})
        return out | {"path_ms": ms(ev.path_ns), "label": ev.label}
    out = {"path_ms": ms(ev.path_ns), "ms": ms(ev.ns), "cost_over_budget_ms": ms(ev.cost_over_budget_ns),
           "stands_out": ev.stands_out, "times_normal": _r(ev.times_normal, 2)}
    if ev.servers_ns is not None:
        out["servers_ms"] = _ms_by(ev.servers_ns)
    if ev.blocked_functions_ns is not None:
        out["blocked_functions_ms"] = _ms_by(ev.blocked_functions_ns)
        out["io_wait_intervals"] = ev.io_wait_intervals
    if ev.block is not None:
        out["block"] = block_dict(ev.block) | {"normal": block_baseline_dict(ev.block.normal)}
    if ev.placement is not None:
        out["cpus"] = {str(c): placement_dict(p) for c, p in ev.placement.items()}
    out["threads_ms"] = _ms_by(ev.threads_ns) if ev.threads_ns is not None else None
    out["critical_call_path"] = ev.critical_call_path
    if ev.components is not None:
        out["components_ms"] = _ms_by(ev.components.components_ns)
    out["label"] = ev.label
    return out


def block_dict(b: BlockEvidence) -> dict[str, Any]:
    return {"requests": b.requests, "bytes": b.bytes, "by_direction": b.by_direction, "d_state_ms": ms(b.d_state_ns),
            "overlap_ms": ms(b.overlap_ns), "overlap_ns": b.overlap_ns, "overlap_share": round(b.overlap_share, 4),
            "top_requests": [request_dict(r) for r in b.top_requests]}


def request_dict(r: BlockRequest) -> dict[str, Any]:
    return {"ts": r.ts, "dur_ms": ms(r.dur_ns), "direction": r.direction, "bytes": r.bytes, "tid": r.tid,
            "comm": r.comm, "overlap_ms": ms(r.overlap_ns), "why": r.why}


def block_baseline_dict(b: BlockBaseline | None) -> dict[str, Any] | None:
    if b is None:
        return None
    return {"frames": b.frames, "frames_with_requests": b.frames_with_requests,
            "mean_requests": round(b.mean_requests, 3), "mean_bytes": round(b.mean_bytes, 1),
            "mean_overlap_ms": ms(b.mean_overlap_ns), "mean_overlap_share": round(b.mean_overlap_share, 4)}


def placement_dict(p: PlacementCpu) -> dict[str, Any]:
    return {"ms": ms(p.ns), "class": p.cpu_class, "mean_freq_pct": _r(p.mean_freq_pct, 1),
            "idle_faster_cpus": p.idle_faster_cpus}


def sf_baseline_dict(b: SfBaseline | None) -> dict[str, Any] | None:
    if b is None:
        return None
    out: dict[str, Any] = {"frames": b.frames, "share": round(b.share, 4), "window_ms": ms(b.window_ns)}
    if b.states is not None:
        out["states"] = {k: round(v, 4) for k, v in b.states.items()}
    return out


def compositor_evidence_dict(ev: CompositorEvidence) -> dict[str, Any]:
    late = ev.compositor_late
    if late is None and ev.slow_composition is not None:
        comp, period = ev.slow_composition
        late = f"composition took {comp / 1e6:.2f} ms, over one vsync period ({period / 1e6:.2f} ms)"
    out: dict[str, Any] = {
        "compositor_late": late, "window_source": ev.window_source, "window_ms": ms(ev.window_ns),
        "window_start_ns": ev.window_start_ns, "thread": ev.thread, "states": ev.states,
        "cpu_ms": _ms_by(ev.cpu_ns), "threads_ms": _ms_by(ev.threads_ns), "slices_ms": _ms_by(ev.slices_ns),
        "critical_call_path": ev.critical_call_path}
    if ev.display_frame is not None:
        out["display_frame"] = ev.display_frame
    if ev.normal is not None:
        out["normal"] = sf_baseline_dict(ev.normal)
    out["app_path_ms"] = ms(ev.app_path_ns)
    if ev.verdict_note is not None:
        out["verdict_note"] = ev.verdict_note
    return out


def compositor_summary_dict(c: CompositorSummary) -> dict[str, Any]:
    return {"sf_main_tid": c.sf_main_tid, "frames_with_window": c.frames_with_window,
            "window_sources": c.window_sources, "late_signal_frames": c.late_signal_frames,
            "late_frametimeline_frames": c.late_frametimeline_frames, "cause_sr_ff_frames": c.cause_sr_ff_frames,
            "cause_app_on_time_frames": c.cause_app_on_time_frames,
            "mean_share_sr_ff": _r(c.mean_share_sr_ff, 4), "mean_share_app_on_time": _r(c.mean_share_app_on_time, 4),
            "normal_by_pid": ({pid: sf_baseline_dict(b) for pid, b in c.normal_by_pid.items()}
                              if c.normal_by_pid is not None else None)}


def cause_rank_dict(c: CauseRank) -> dict[str, Any]:
    return {"name": c.name, "frames": c.frames, "leading": c.leading, "frames_pct": _r(c.frames_pct, 2),
            "cost_over_budget_ms": ms(c.cost_over_budget_ns), "mean_share": _r(c.mean_share, 4),
            "mean_normal_share": _r(c.mean_normal_share, 4)}


def vsync_dict(v: VsyncVerdicts | None) -> dict[str, Any] | None:
    if v is None:
        return None
    return {"vsync_period_ms": ms(v.vsync_period_ns), "sr": v.sr, "ff": v.ff, "sr_pct": _r(v.sr_pct, 2)}


def intervals_dict(i: Intervals | None) -> dict[str, Any]:
    if i is None:
        return {}
    return {"median_between_sr_ff_ms": ms(i.median_between_sr_ff_ns),
            "median_ff_to_preceding_sr_ms": ms(i.median_ff_to_preceding_sr_ns), "verdict_column": i.verdict_column}


def pacing_dict(p: ProducerPacing) -> dict[str, Any]:
    """One producer's pacing: the target as ms and fps, hitches per factor (`over_1.5x`, `over_1.5x_pct`, ...),
    interval percentiles in ms."""
    return ({"pid": p.pid, "process": p.process, "renderer": p.renderer, "producer_tid": p.producer_tid,
             "producer": p.producer, "buffers": p.buffers, "intervals": p.intervals, "target_ms": ms(p.target_ns),
             "target_fps": round(1e9 / p.target_ns, 1) if p.target_ns else None, "target_source": p.target_source}
            | {f"over_{f}x": n for f, n in p.over.items()}
            | {f"over_{f}x_pct": round(v, 2) for f, v in p.over_pct.items()}
            | {"stutter_runs": p.stutter_runs, "longest_stutter_run": p.longest_stutter_run,
               "interval_ms": {k: ms(v) for k, v in p.interval_ns.items()}, "pauses": p.pauses})


def refresh_dict(r: RefreshStretch) -> dict[str, Any]:
    return {"hz": r.hz, "vsync_period_ms": ms(r.period_ns), "start_ns": r.start_ns, "end_ns": r.end_ns,
            "source": r.source, "frames": r.frames, "sr_vsync": r.sr_vsync}


def _section(value: Any) -> Any:
    """A summary section: typed records converted, containers walked, the rest as it is."""
    if isinstance(value, CompositorSummary):
        return compositor_summary_dict(value)
    if isinstance(value, BlockBaseline):
        return block_baseline_dict(value)
    if isinstance(value, RefreshStretch):
        return refresh_dict(value)
    if isinstance(value, ComponentTimes):
        return _ms_by(value.ns)
    if isinstance(value, ProducerPacing):
        return pacing_dict(value)
    if is_dataclass(value) and not isinstance(value, type):
        raise TypeError(f"no findings.json form for {type(value).__name__}: add one to report/frames_json.py "
                        f"(fields {[f.name for f in fields(value)]})")
    if isinstance(value, dict):
        return {k: _section(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_section(v) for v in value]
    return value


def summary_dict(s: FramesSummary) -> dict[str, Any]:
    """The summary in findings.json's order: counts and rates, percentiles, causes, intervals, the sections."""
    out: dict[str, Any] = {
        "frames": s.frames, "sr": s.sr, "ff": s.ff, "sr_pct": _r(s.sr_pct, 2), "ff_pct": _r(s.ff_pct, 2),
        "sr_naive": s.sr_naive, "ff_naive": s.ff_naive, "sr_naive_pct": _r(s.sr_naive_pct, 2),
        "ff_naive_pct": _r(s.ff_naive_pct, 2), "not_possible": s.not_possible, "buffer_signal": s.buffer_signal,
        "naive_vsync_period": vsync_dict(s.naive_vsync_period),
        "frame_time_ms": {k: ms(v) for k, v in s.frame_time_ns.items()},
        "causes": [cause_rank_dict(c) for c in s.causes],
        "intervals": intervals_dict(s.intervals),
    }
    if s.not_possible_reason is not None:
        out["not_possible_reason"] = s.not_possible_reason
    if s.frametimeline_agreement is not None:
        out["frametimeline_agreement"] = s.frametimeline_agreement
    out.update({k: _section(v) for k, v in s.sections.items()})
    out["incomplete_frames"] = s.incomplete_frames
    out["skipped_callbacks"] = s.skipped_callbacks
    if s.skipped_callbacks_by_reason:
        out["skipped_callbacks_by_reason"] = s.skipped_callbacks_by_reason
    if s.no_frames_reason is not None:
        out["no_frames_reason"] = s.no_frames_reason
    return out
