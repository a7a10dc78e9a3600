"""The public entry points: `analyze_frames(trace, config)` and `analyze_gfxinfo(dump, config)` -> FramesReport.

Pure functions: no file access, no printing. The report holds polars tables (frames, causes), each cause as a
typed record with its evidence, and a typed summary; times in ns. `droidlag.report.frames_json.frames_dict` is the
JSON the CLI prints.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from droidlag.frames.block_io import block_baseline
from droidlag.frames.causes import SYSTEM_FACTORS, Baseline, CauseAnalyzer, Ranked, baseline, rank_causes
from droidlag.frames.compositor import Compositor
from droidlag.frames.config import NS_PER_MS, FramesConfig
from droidlag.frames.pacing import MIN_BUFFERS, frame_pacing
from droidlag.frames.refresh import main_period, period_at, refresh_segments, vsync_ticks
from droidlag.frames.results import (
    BlockEvidence,
    CauseEvidence,
    Components,
    ComponentTimes,
    CompositorSummary,
    FrameCause,
    FramesSummary,
    RefreshStretch,
)
from droidlag.frames.rollups import paper_rollups
from droidlag.frames.segment import (
    NO_RENDER_THREAD_FRAME,
    NO_TRAVERSAL,
    NOTHING_EXPECTED,
    segment_frames,
    surfaceflinger_pids,
)
from droidlag.frames.summary import aggregate_summary, summarize
from droidlag.frames.verdicts import FF, NOT_POSSIBLE, OK, SR, apply_verdicts, naive_expr
from droidlag.gc.evidence import frames_with_gc
from droidlag.models.causes import STAGE_PREFIX
from droidlag.models.gfxinfo import LEGACY_STAGES, GfxinfoDump, rendered_frames
from droidlag.models.trace import Trace

# A slow frame whose critical path has sched data for less than this fraction of its time gets no cause.
MIN_SCHED_COVERAGE = 0.5
NO_SCHED_NOTE = "not possible: no sched data in this window"
NO_DATA_NOTE = "not possible: no sched data and no atrace slices of the frame's threads in this window"
CAUSE_SCHEMA = {"frame_id": pl.Int64, "rank": pl.Int32, "name": pl.Utf8, "share": pl.Float64,
                "normal_share": pl.Float64, "cost_over_budget_ns": pl.Float64}


@dataclass
class FramesReport:
    """Frames of one trace or gfxinfo dump.

    frames: one row per frame (times and stage durations in ns, naive and buffer-aware verdicts, evidence).
    frame_causes: each SR/FF frame's causes, ranked, with their typed evidence (ns); `causes` is the same as a
    table (one row per frame and cause: shares, cost over budget in ns) for notebooks.
    summary: counts, rates, percentiles, causes ranked, intervals, FrameTimeline agreement.
    notes: what could not be done and why (missing data, non-HWUI apps)."""

    source: str
    path: str
    frames: pl.DataFrame
    causes: pl.DataFrame
    summary: FramesSummary
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    frame_causes: list[FrameCause] = field(default_factory=list)


def causes_frame(causes: list[FrameCause]) -> pl.DataFrame:
    """The causes as a table: one row per frame and cause."""
    return pl.DataFrame([(c.frame_id, c.rank, c.name, c.share, c.normal_share, c.evidence.cost_over_budget_ns)
                         for c in causes], schema=CAUSE_SCHEMA, orient="row")


def _buffer_signal(frames: pl.DataFrame) -> str:
    if not frames.height:
        return "none"
    sig = frames["buffer_signal"]
    for s in ("frametimeline", "bufferqueue", "deadline"):
        if (sig == s).any():
            return s
    return "none"


def analyze_frames(trace: Trace, config: FramesConfig | None = None) -> FramesReport:
    """Frames, naive and buffer-aware SR/FF verdicts, root causes and the summary for one trace."""
    config = config or FramesConfig()
    seg = segment_frames(trace, config.app, config.vsync_period_ns)
    notes = list(seg.notes)
    sf = surfaceflinger_pids(trace)
    refresh = _refresh(trace, config, seg.vsync_period_ns)
    seg.vsync_period_ns = main_period(refresh) or seg.vsync_period_ns
    frames = seg.frames.with_columns(pl.Series("vsync_period_ns", period_at(
        refresh, seg.frames["start_ns"].to_numpy(), seg.vsync_period_ns), dtype=pl.Int64))
    frames, counters_used = apply_verdicts(trace, frames, config, seg.vsync_period_ns, sf)
    frames = frames_with_gc(trace, frames)
    frame_causes, cause_extra = _causes(trace, frames, config, notes, seg.vsync_period_ns)
    causes = causes_frame(frame_causes)
    no_sched = cause_extra.pop("_no_sched_frames", [])
    no_data = cause_extra.pop("_no_data_frames", [])
    frames = frames.with_columns(pl.when(pl.col("frame_id").is_in(no_sched)).then(pl.lit(NO_SCHED_NOTE))
                                 .when(pl.col("frame_id").is_in(no_data)).then(pl.lit(NO_DATA_NOTE))
                                 .otherwise(pl.lit(None, pl.Utf8)).alias("cause_note"))
    cause_extra["causes_not_possible_frames"] = len(no_sched) + len(no_data)
    cause_extra["paper_rollups"] = paper_rollups(trace, frames, causes)
    unpaced: dict[int, tuple[int, int]] = {}
    pacing = frame_pacing(trace, seg.non_hwui_apps, seg.vsync_period_ns, unpaced=unpaced)
    _pacing_notes(notes, seg.pacing_notes, seg.non_hwui_apps, unpaced)
    skipped_note = _skipped_note(seg.skipped, config)
    if skipped_note:
        notes.append(skipped_note)
    extra = cause_extra | {"vsync_period_source": seg.vsync_period_source, "bufferqueue_counters": counters_used,
             "refresh_rates": _refresh_summary(refresh, frames),
             "non_hwui_apps": seg.non_hwui_apps,
             "frame_pacing": pacing,
             "apps": _apps(frames, seg.skipped), "app_work_components_ms": _app_work_components(frame_causes)}
    bad_ids = frames.filter(frames["verdict"].is_in([SR, FF]) | (frames["verdict"] == NOT_POSSIBLE))["frame_id"] \
        if frames.height else pl.Series([], dtype=pl.Int64)
    # causes of on-time app frames whose compositor was late are evidence, not SR/FF: not in the ranking
    bad = set(bad_ids.to_list())
    summary = summarize(frames, [c for c in frame_causes if c.frame_id in bad], _buffer_signal(frames),
                        seg.vsync_period_ns, extra)
    summary.skipped_callbacks = seg.skipped.height
    summary.skipped_callbacks_by_reason = _skipped_by_reason(seg.skipped)
    if not summary.frames and skipped_note:
        # the note becomes the reason (said once: the report drops a note that repeats the reason)
        summary.no_frames_reason = notes[notes.index(skipped_note)] = "no rendered app frames: " + skipped_note
    elif not frames.height:
        summary.no_frames_reason = notes[-1] if notes else "no app frames"
    return FramesReport("trace", trace.path, frames, causes, summary, notes,
                        [str(w) for w in trace.warnings[:20]], frame_causes)


def _refresh(trace: Trace, config: FramesConfig, period: int | None) -> list[dict[str, Any]]:
    """The refresh-rate stretches of the trace; one stretch when the user gave the period."""
    if config.vsync_period_ns:
        return [{"start_ns": trace.start_ns, "end_ns": trace.end_ns, "period_ns": config.vsync_period_ns,
                 "hz": round(1e9 / config.vsync_period_ns, 1), "source": "config"}]
    ticks, source = vsync_ticks(trace)
    segs = refresh_segments(ticks) if ticks is not None else []
    return [s | {"source": source} for s in segs]


def _refresh_summary(refresh: list[dict[str, Any]], frames: pl.DataFrame) -> list[RefreshStretch]:
    """Each stretch with its frames and its SR count against its own period (complete frames only)."""
    out = []
    done = frames.filter(pl.col("complete").fill_null(True)) if "complete" in frames.columns else frames
    for r in refresh:
        part = done.filter(pl.col("vsync_period_ns") == r["period_ns"]) if done.height else done
        out.append(RefreshStretch(r["hz"], r["period_ns"], r["start_ns"], r["end_ns"], r.get("source"),
                                  part.height if done.height else 0,
                                  int((part["naive_vsync_verdict"] == SR).sum()) if part.height else 0))
    return out


def _app_work_components(causes: list[FrameCause], top: int = 5) -> ComponentTimes:
    """The UI components (slices) that took the most time in the slow frames whose cause is the app's own work,
    summed over those frames: where redundant UI work shows up (the paper's step 5)."""
    total: dict[str, float] = {}
    for c in causes:
        comps = c.evidence.components
        if c.name != "app_work" or comps is None:
            continue
        for k, v in comps.components_ns.items():
            # findings.json v1 sums each frame's time as it shows it (whole microseconds): kept so outputs stay
            total[k] = total.get(k, 0.0) + round(v / 1e6, 3)
    return ComponentTimes({k: v * 1e6 for k, v in sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))[:top]})


def _apps(frames: pl.DataFrame, skipped: pl.DataFrame) -> list[dict[str, Any]]:
    """Per app: its frames (complete ones: a frame without an end is in no count, docs/frames.md), SR/FF by both
    verdicts, and its Choreographer callbacks that drew nothing (not frames). An app whose callbacks all drew
    nothing is listed too, with 0 frames."""
    if not frames.height and not skipped.height:
        return []
    done = frames.filter(pl.col("complete").fill_null(True)) if "complete" in frames.columns else frames
    g = done.group_by("pid", "process").agg(pl.len().alias("frames"),
                                            pl.col("naive_verdict").is_in([SR, FF]).sum().alias("sr_ff_naive"),
                                            pl.col("verdict").is_in([SR, FF]).sum().alias("sr_ff"))
    sk = skipped.group_by("pid", "process").agg(pl.len().alias("skipped_callbacks"))
    g = g.cast({"frames": pl.Int64, "sr_ff_naive": pl.Int64, "sr_ff": pl.Int64}).join(
        sk.cast({"skipped_callbacks": pl.Int64}), on=["pid", "process"], how="full", coalesce=True, nulls_equal=True)
    g = g.with_columns(pl.col("frames", "sr_ff_naive", "sr_ff", "skipped_callbacks").fill_null(0))
    return g.sort(["frames", "skipped_callbacks", "pid"], descending=[True, True, False]).to_dicts()


# words for each reason a doFrame drew nothing (segment.py's reasons; HWUI's own as its SkippedFrameReason name)
_SKIPPED_WORDS = {
    NO_RENDER_THREAD_FRAME: "ran no RenderThread frame although the app's RenderThread draws its frames in this "
                            "trace (input or animation callbacks only, or a traversal that drew nothing)",
    NO_TRAVERSAL: "ran no view traversal (Choreographer's callback sections show no `traversal`: input, animation "
                  "or commit work only, or none; the trace has no RenderThread frame of the app)",
}


def _skipped_by_reason(skipped: pl.DataFrame) -> dict[str, int]:
    if not skipped.height:
        return {}
    g = skipped.group_by("reason").len().sort(["len", "reason"], descending=[True, False])
    return dict(zip(g["reason"].to_list(), g["len"].to_list()))


def _skipped_note(skipped: pl.DataFrame, config: FramesConfig) -> str | None:
    """What the Choreographer callbacks that drew nothing were, and that they are not frames. Those that kept the
    main thread busy past the frame budget are said: not slow frames, as nothing was drawn, but the time is real."""
    if not skipped.height:
        return None
    hwui = {v: k for k, v in NOTHING_EXPECTED.items()}
    parts = []
    for reason, n in _skipped_by_reason(skipped).items():
        words = (f"whose RenderThread frame said `Frame skipped: {hwui[reason]}` (no buffer queued)" if reason in hwui
                 else _SKIPPED_WORDS.get(reason, reason))
        parts.append(f"{n} {words}")
    text = (f"{skipped.height} Choreographer#doFrame callback(s) drew nothing and are not counted as frames (as "
            "Android counts none: gfxinfo records a frame only when the RenderThread drew it, FrameTimeline only when "
            "a buffer was queued): " + "; ".join(parts))
    long_ = skipped.filter(pl.col("dur_ns") > config.sr_threshold_ns)
    if long_.height:
        text += (f". {long_.height} of them kept the main thread busy over {config.sr_threshold_ns / 1e6:.2f} ms "
                 f"(longest {max(long_['dur_ns'].to_list()) / 1e6:.1f} ms): not slow frames, since nothing was drawn, "
                 "but a main thread busy that long delays the frames after it")
    return text


def _pacing_notes(notes: list[str], at: dict[int, int], apps: list[dict[str, Any]],
                  unpaced: dict[int, tuple[int, int]]) -> None:
    """End each note on an app drawn without the Choreographer (or on a surface of its own beside its HWUI frames)
    with what became of that frame pacing: measured, or too few buffers to measure (pacing.MIN_BUFFERS from one
    thread)."""
    beside = {a["pid"] for a in apps if a.get("beside_hwui")}
    for pid, i in at.items():
        whose = "their" if pid in beside else "its"
        if pid in unpaced:
            total, most = unpaced[pid]
            notes[i] += (f"; {whose} frame pacing is not measured: too few buffers ({total} queued, at most {most} "
                         f"from one thread; the minimum is {MIN_BUFFERS} from one thread)")
        else:
            notes[i] += (f"; {whose} frame pacing is measured " + ("apart" if pid in beside else
                                                                   "from the buffers it queued") + " (frame_pacing)")


def _causes(trace: Trace, frames: pl.DataFrame, config: FramesConfig, notes: list[str],
            vsync_period_ns: int | None = None) -> tuple[list[FrameCause], dict[str, Any]]:
    """Cause rows for SR/FF frames (and long undecided ones), plus, as evidence only, the `surfaceflinger` cause
    of frames FrameTimeline calls on time for the app but late on the display. Also the summary's block_io and
    compositor sections."""
    if not frames.height:
        return [], {}
    bad_mask = frames["verdict"].is_in([SR, FF]) | ((frames["verdict"] == NOT_POSSIBLE)
                                                    & (frames["naive_verdict"] != OK))
    bad = frames.filter(bad_mask)
    ok_ft = frames.filter((frames["verdict"] == OK) & frames["ft_jank_type"].is_not_null())
    if not bad.height and not ok_ft.height:
        return [], {}
    normal = frames.filter((frames["verdict"] == OK) & (frames["naive_verdict"] == OK))
    analyzer = CauseAnalyzer(trace, frames, config, vsync_period_ns)
    ok_late = [r for r in ok_ft.iter_rows(named=True)
               if (w := analyzer.comp.window(r["frame_id"])) is not None and w["ft_named"] and w["app_on_time"]]
    if not bad.height and not ok_late:
        return [], {}
    if bad.height:
        by_reason: dict[str, list[str]] = {}
        for k, why in analyzer.missing.items():
            by_reason.setdefault(why, []).append(k)
        for why, ks in by_reason.items():
            notes.append(f"cause{'s' if len(ks) > 1 else ''} {', '.join(ks)} not possible: {why}")
    run = _CauseRun(analyzer, normal, config, vsync_period_ns or config.sr_threshold_ns)
    for r in bad.iter_rows(named=True):
        run.slow_frame(r)
    for r in ok_late:
        run.on_time_frame(r)
    return run.rows, run.extra(bad.height > 0, notes)


class _CauseRun:
    """The causes of one trace's frames, frame by frame: the rows, and what the summary needs of them (block
    requests and SurfaceFlinger shares of the slow frames, frames without the data to give a cause)."""

    def __init__(self, analyzer: CauseAnalyzer, normal: pl.DataFrame, config: FramesConfig, budget_ns: int):
        self.analyzer, self.normal, self.config, self.budget_ns = analyzer, normal, config, budget_ns
        self.base_by_pid: dict[int, Baseline] = {}
        self.rows: list[FrameCause] = []
        self.bad_block: list[BlockEvidence] = []
        self.late_sf: dict[str, list[float]] = {"sr_ff": [], "app_on_time": []}
        self.no_sched: list[int] = []
        self.no_data: list[int] = []

    def base(self, pid: int) -> Baseline:
        """The normal frames' shares of the app `pid` (sampled once per app)."""
        if pid not in self.base_by_pid:
            self.base_by_pid[pid] = baseline(self.analyzer, self.normal.filter(pl.col("pid") == pid).to_dicts(),
                                             self.config.max_normal_frames)
        return self.base_by_pid[pid]

    def emit(self, fid: int, ranked: list[Ranked]) -> None:
        self.rows.extend(FrameCause(fid, i + 1, c.name, c.share, c.normal_share, c.evidence)
                         for i, c in enumerate(ranked))

    def slow_frame(self, r: dict[str, Any]) -> None:
        """An SR/FF (or long undecided) frame: its ranked causes, or why it can have none."""
        analyzer = self.analyzer
        fs = analyzer.shares(r)
        if fs.coverage is not None and fs.coverage < MIN_SCHED_COVERAGE:
            self.no_sched.append(r["frame_id"])     # a cause from a window without sched data would be invented
            return
        components = analyzer.app_components(r)
        if fs.coverage is None and not _has_slices(components):
            self.no_data.append(r["frame_id"])      # no sched and no atrace slice of the frame's threads in its window
            return
        sfc = analyzer.compositor_cause(r, fs, self.base(r["pid"]))
        if sfc:
            self.late_sf["sr_ff"].append(sfc.share or 0.0)
        if fs.evidence.block is not None:
            self.bad_block.append(fs.evidence.block)
        self.emit(r["frame_id"], rank_causes(fs, self.base(r["pid"]), self.config, components, sfc,
                                             max(0, r["dur_ns"] - self.budget_ns)))

    def on_time_frame(self, r: dict[str, Any]) -> None:
        """A frame on time for the app whose display frame FrameTimeline calls late: the compositor, as evidence."""
        fs = self.analyzer.compositor_only(r)
        sfc = self.analyzer.compositor_cause(r, fs, self.base(r["pid"]))
        if sfc:
            self.late_sf["app_on_time"].append(sfc.share or 0.0)
            self.emit(r["frame_id"], [sfc])

    def extra(self, any_bad: bool, notes: list[str]) -> dict[str, Any]:
        """The summary's block_io and compositor sections and the frames without a cause; notes on what was
        missing."""
        analyzer, comp = self.analyzer, self.analyzer.comp
        factors = [k for b in self.base_by_pid.values() for k, v in b.shares.items()
                   if k in SYSTEM_FACTORS and v is not None]
        if any_bad and (not self.base_by_pid or not factors):
            notes.append("no normal frames to compare with: cause shares are compared against 0")
        extra: dict[str, Any] = {"_no_sched_frames": self.no_sched, "_no_data_frames": self.no_data}
        if self.no_data:
            notes.append(f"{len(self.no_data)} slow frame(s) have neither sched data nor atrace slices of their "
                         "threads in their window: cause not possible")
        if self.no_sched:
            notes.append(f"{len(self.no_sched)} slow frame(s) lie outside the sched data (before its first or after "
                         "its last event on the frame's threads): cause not possible: no sched data in this window")
        if analyzer.block is not None:
            extra["block_io"] = {"sr_ff": block_baseline(self.bad_block),
                                 "normal": block_baseline(analyzer.normal_block)}
        if comp.tid is not None and comp.windows:
            extra["compositor"] = _compositor_summary(comp, self.late_sf, self.base_by_pid)
        elif any_bad and comp.tid is None:
            notes.append("cause 'surfaceflinger' not possible: no SurfaceFlinger main thread in the trace")
        elif any_bad:
            notes.append("cause 'surfaceflinger' not possible: no FrameTimeline display frames and no SurfaceFlinger "
                         "composition slices to give the frames' composition windows")
        return extra


def _has_slices(components: Components) -> bool:
    return bool(components.components_ns) or any(components.critical_call_path.values())


def _compositor_summary(comp: Compositor, late_sf: dict[str, list[float]],
                        base_by_pid: dict[int, Baseline]) -> CompositorSummary:
    w = comp.windows.values()
    normals = {str(pid): b.surfaceflinger for pid, b in base_by_pid.items() if b.surfaceflinger}

    def mean(xs: list[float]) -> float | None:
        # findings.json v1 averages each frame's share as it shows it (4 decimals): kept so that outputs stay the same
        return sum(round(x, 4) for x in xs) / len(xs) if xs else None
    return CompositorSummary(comp.tid, len(comp.windows), sorted({x["source"] for x in w}),
                             sum(1 for x in w if x["late"]), sum(1 for x in w if x["ft_named"]),
                             len(late_sf["sr_ff"]), len(late_sf["app_on_time"]), mean(late_sf["sr_ff"]),
                             mean(late_sf["app_on_time"]), normals or None)


# ---- gfxinfo -------------------------------------------------------------------------------------------------
# FrameDeadline of a frame that has none: libhwui's UiFrameInfoBuilder::UNKNOWN_DEADLINE (INT64_MAX, FrameInfo.h),
# with FrameTimelineVsyncId INVALID_VSYNC_ID (-1): the Java side's VsyncEventData.INVALID_FRAME_TIMELINES, for a
# frame drawn without a vsync frame timeline (Choreographer's doFrame run from a message, not a vsync event).
UNKNOWN_DEADLINE = (1 << 63) - 1
_FRAMESTATS_NEED = {"Flags", "IntendedVsync", "FrameCompleted"}
_EMPTY_FRAMES = {"frame_id": pl.Int64, "start_ns": pl.Int64, "dur_ns": pl.Int64, "verdict": pl.Utf8,
                 "naive_verdict": pl.Utf8, "naive_vsync_verdict": pl.Utf8, "buffer_signal": pl.Utf8,
                 "ft_jank_type": pl.Utf8}
NO_DEADLINE_REASON = ("the buffer-aware verdict needs each frame's deadline (framestats' FrameDeadline, Android 12+); "
                      "{n} long frame(s) have none, so sr/ff are not given (see sr_naive/ff_naive)")


def analyze_gfxinfo(dump: GfxinfoDump, config: FramesConfig | None = None, *,
                    release_tables: bool = False) -> FramesReport:
    """The frames of a `dumpsys gfxinfo` dump, from the best data it holds:
    - framestats rows: naive SR/FF (IntendedVsync -> FrameCompleted), buffer-aware where a row carries its
      FrameDeadline (Android 12+), else "not possible"; rows with non-zero Flags are not counted (as Android);
    - else the legacy `Draw Prepare Process Execute` rows (GPU profiling on): each row a frame whose time is the sum
      of its stages; no timestamps and no buffer-aware verdict;
    - else Android's own summary: frames rendered, its janky count, SR/FF counted from its HISTOGRAM.
    `release_tables`: the caller hands the dump over, and its per-window tables are emptied once combined (memory
    at scale: the rows are not held twice)."""
    config = config or FramesConfig()
    fs, legacy = _gfx_rows(dump, config, release_tables)
    sections: dict[str, Any] = {"gfxinfo_summaries": _gfx_summaries(dump, config)}
    warnings = [str(w) for w in dump.warnings]
    if fs.height and _FRAMESTATS_NEED <= set(fs.columns):
        notes = ([f"{legacy.height} legacy `Draw Prepare Process Execute` row(s) not used: the framestats rows of "
                  "the same dump are timestamped and complete"] if legacy.height else [])
        return _gfx_framestats_report(dump.path, fs, config, sections, notes, warnings)
    notes = [f"framestats lack columns {sorted(_FRAMESTATS_NEED - set(fs.columns))}"] if fs.height else []
    if legacy.height:
        return _gfx_legacy_report(dump.path, legacy, config, sections, notes, warnings)
    return _gfx_summary_report(dump.path, sections, notes, warnings)


def _gfx_rows(dump: GfxinfoDump, config: FramesConfig, release_tables: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The dump's framestats rows and legacy rows (of `config.app` when given)."""
    fs, legacy = dump.framestats(), dump.legacy_rows()
    if release_tables:
        for p in dump.processes:
            for w in p.windows:
                w.framestats, w.legacy = pl.DataFrame(), pl.DataFrame()
    if config.app:
        fs = fs.filter(pl.col("process").str.contains(config.app, literal=True)) if fs.height else fs
        legacy = legacy.filter(pl.col("process").str.contains(config.app, literal=True)) if legacy.height else legacy
    return fs, legacy


def _gfx_framestats_report(path: str, fs: pl.DataFrame, config: FramesConfig, sections: dict[str, Any],
                           notes: list[str], warnings: list[str]) -> FramesReport:
    """Frames from framestats rows: verdicts, the leading stage of each slow frame, the summary."""
    flagged = int((fs["Flags"] != 0).sum())
    if flagged:
        notes.append(f"{flagged} framestats row(s) with non-zero Flags (e.g. window layout changed) not counted")
    f = _gfx_frames(fs, config, notes)
    del fs   # f holds the rows it keeps
    interval = f["FrameInterval"].median() if "FrameInterval" in f.columns else None
    period = config.vsync_period_ns or (int(interval) if interval else None)   # type: ignore[arg-type]
    f = f.with_columns((naive_expr(pl.col("dur_ns"), period, config.ff_threshold_ns) if period
                        else pl.lit(None, pl.Utf8)).alias("naive_vsync_verdict"))
    if "FrameDeadline" in f.columns:
        f = _deadline_verdicts(f, config.ff_threshold_ns, notes)
    else:
        f = _undecided_verdicts(f, "no FrameDeadline column (Android 11 and older) and no buffer count in gfxinfo")
        notes.append("buffer-aware verdicts not possible: these framestats have no FrameDeadline column "
                     "(added in Android 12) and gfxinfo has no buffer count")
    stages = [s for s in list(_GFX_STAGES) + ["dequeue_buffer", "queue_buffer"] if s in f.columns]
    frame_causes = _gfx_causes(f, stages)
    summary = summarize(f, frame_causes, _buffer_signal(f), period,
                        sections | {"flagged_rows_excluded": flagged, "apps": _gfx_apps(f)})
    if summary.not_possible:
        summary.not_possible_reason = NO_DEADLINE_REASON.format(n=summary.not_possible)
    return FramesReport("gfxinfo", path, f, causes_frame(frame_causes), summary, notes, warnings, frame_causes)


def _gfx_frames(fs: pl.DataFrame, config: FramesConfig, notes: list[str]) -> pl.DataFrame:
    """One frame per framestats row with Flags 0 and a completion time: start (IntendedVsync), duration (to
    FrameCompleted), stages and the naive verdict."""
    f = fs.filter(pl.col("Flags") == 0).with_columns(pl.col("IntendedVsync").alias("start_ns"),
                                                      (pl.col("FrameCompleted") - pl.col("IntendedVsync"))
                                                      .alias("dur_ns"))
    bad_rows = f.filter((pl.col("FrameCompleted") <= 0) | (pl.col("dur_ns") < 0)).height
    if bad_rows:
        notes.append(f"{bad_rows} row(s) without a completion time skipped")
        f = f.filter((pl.col("FrameCompleted") > 0) & (pl.col("dur_ns") >= 0))
    f = f.with_row_index("frame_id").with_columns(pl.col("frame_id").cast(pl.Int64))
    f = f.with_columns(_gfx_stages(f))
    return f.with_columns(naive_expr(pl.col("dur_ns"), config.sr_threshold_ns, config.ff_threshold_ns)
                          .alias("naive_verdict"), pl.lit(None, pl.Utf8).alias("ft_jank_type"))


def _ms1(ns: pl.Expr) -> pl.Expr:
    """ns as ms with one decimal, for evidence text."""
    return (ns / NS_PER_MS).round(1)


def _deadline_verdicts(f: pl.DataFrame, ff_ns: int, notes: list[str]) -> pl.DataFrame:
    """The buffer-aware verdict from each row's FrameDeadline (Android 12+): a frame is SR/FF when its GPU work
    (GpuCompleted, else FrameCompleted) ended after its deadline. The printed deadline already carries Android's
    allowance for a triple-buffered app (JankTracker::finishFrame moves it one frame interval later on the record
    that dumpFrames prints). A row without a deadline (INT64_MAX, Android's UNKNOWN_DEADLINE) gets no verdict."""
    deadline = pl.col("FrameDeadline")
    known = (deadline > 0) & (deadline != UNKNOWN_DEADLINE)
    end = pl.coalesce(pl.when(pl.col("GpuCompleted") > 0).then(pl.col("GpuCompleted")),
                      pl.col("FrameCompleted")) if "GpuCompleted" in f.columns else pl.col("FrameCompleted")
    late = end - deadline
    fast = pl.col("naive_verdict") == OK
    why_none = (pl.when(deadline == UNKNOWN_DEADLINE)
                .then(pl.lit("the row has no deadline (FrameDeadline is INT64_MAX: Android's 'no deadline', for a "
                             "frame drawn without a vsync timeline), so no buffer-aware verdict"))
                .otherwise(pl.format("the row has no deadline (FrameDeadline {}), so no buffer-aware verdict",
                                     deadline)))
    f = f.with_columns(
        pl.when(known).then(pl.lit("deadline")).otherwise(pl.lit("none")).alias("buffer_signal"),
        pl.when(~known).then(pl.when(fast).then(pl.lit(OK)).otherwise(pl.lit(NOT_POSSIBLE)))
        .when(late > 0).then(pl.when(pl.col("dur_ns") > ff_ns).then(pl.lit(FF)).otherwise(pl.lit(SR)))
        .otherwise(pl.lit(OK)).alias("verdict"),
        pl.when(~known & fast).then(pl.lit("within the frame budget; ") + why_none)
        .when(~known).then(why_none)
        .when(late > 0).then(pl.format("completed {} ms after the deadline", _ms1(late)))
        .otherwise(pl.format("completed {} ms before the deadline", _ms1(-late))).alias("buffer_evidence"))
    none = f.filter(pl.col("buffer_signal") == "none")
    if none.height:
        slow = int((none["naive_verdict"] != OK).sum())
        notes.append(f"{none.height} framestats row(s) carry no deadline (FrameDeadline INT64_MAX, Android's "
                     "'no deadline', as with FrameTimelineVsyncId -1): no buffer-aware verdict for them"
                     + (f"; {slow} of them over 16.67 ms counted 'not possible'" if slow else ""))
    return f


def _undecided_verdicts(f: pl.DataFrame, why: str) -> pl.DataFrame:
    """No buffer signal at all: fast frames are ok, long ones 'not possible', `why` as their evidence."""
    fast = pl.col("naive_verdict") == OK
    return f.with_columns(pl.lit("none").alias("buffer_signal"),
                          pl.when(fast).then(pl.lit(OK)).otherwise(pl.lit(NOT_POSSIBLE)).alias("verdict"),
                          pl.when(fast).then(pl.lit("within the frame budget")).otherwise(pl.lit(why))
                          .alias("buffer_evidence"))


# Legacy `Draw Prepare Process Execute` columns -> the frame table's stages. Android 6+ (FrameInfoVisualizer::dumpData)
# print Draw = IntendedVsync -> SyncStart less the wait for the RenderThread to take the frame (SyncQueued ->
# SyncStart, FrameInfo::duration): the UI thread's part, as framestats' ui_thread; Android 4.x-5.x (DrawProfiler)
# print the display-list recording alone there (draw).
_LEGACY_STAGE = {"Prepare": "sync", "Process": "gpu_issue", "Execute": "swap"}
# FrameInfoVisualizer::durationMS clamps each printed stage to 50 ms.
_LEGACY_CAP_NS = 50 * NS_PER_MS


def _gfx_legacy_report(path: str, legacy: pl.DataFrame, config: FramesConfig, sections: dict[str, Any],
                       notes: list[str], warnings: list[str]) -> FramesReport:
    """Frames from the legacy rows: each row a frame whose time is the sum of its stages (the frame's CPU-side
    time); the naive verdict only, the leading stage of each slow frame."""
    f = _legacy_frames(legacy, config)
    notes += _legacy_notes(f)
    stages = [s for s in ("ui_thread", "draw", *_LEGACY_STAGE.values()) if s in f.columns]
    frame_causes = _gfx_causes(f, stages)
    at_cap = int(f["at_cap"].sum())
    summary = summarize(f, frame_causes, "none", config.vsync_period_ns,
                        sections | {"legacy_rows": {"rows": f.height, "at_50ms_cap": at_cap}, "apps": _gfx_apps(f)})
    summary.intervals = None   # the rows carry no timestamps
    if summary.not_possible:
        summary.not_possible_reason = (f"the legacy rows carry no deadline and gfxinfo no buffer count: "
                                       f"{summary.not_possible} long frame(s) have no buffer-aware verdict, so sr/ff "
                                       "are not given (see sr_naive/ff_naive)")
    return FramesReport("gfxinfo", path, f, causes_frame(frame_causes), summary, notes, warnings, frame_causes)


def _legacy_frames(legacy: pl.DataFrame, config: FramesConfig) -> pl.DataFrame:
    """One frame per legacy row: duration = the sum of its stages, a start that only orders the rows (the sum of
    the earlier rows of its window), stages named as the frame table's, the naive verdict."""
    names = [n for n in LEGACY_STAGES if n in legacy.columns]
    f = legacy.with_row_index("frame_id").with_columns(
        pl.col("frame_id").cast(pl.Int64),
        pl.sum_horizontal([pl.col(n).fill_null(0) for n in names]).alias("dur_ns"),
        pl.any_horizontal([pl.col(n) == _LEGACY_CAP_NS for n in names]).alias("at_cap"),
        pl.when(pl.col("android6")).then(pl.col("Draw")).alias("ui_thread"),
        pl.when(~pl.col("android6")).then(pl.col("Draw")).alias("draw"),
        *[pl.col(n).alias(st) for n, st in _LEGACY_STAGE.items() if n in names])
    f = f.with_columns((pl.col("dur_ns").cum_sum() - pl.col("dur_ns")).over("pid", "window").alias("start_ns"))
    sr, ff = config.sr_threshold_ns, config.ff_threshold_ns
    f = f.with_columns(naive_expr(pl.col("dur_ns"), sr, ff).alias("naive_verdict"),
                       (naive_expr(pl.col("dur_ns"), config.vsync_period_ns, ff) if config.vsync_period_ns
                        else pl.lit(None, pl.Utf8)).alias("naive_vsync_verdict"),
                       pl.lit(None, pl.Utf8).alias("ft_jank_type"))
    return _undecided_verdicts(f, "the legacy rows carry no deadline and gfxinfo no buffer count")


def _legacy_notes(f: pl.DataFrame) -> list[str]:
    """What the legacy rows' times are and are not (AOSP libhwui FrameInfoVisualizer / DrawProfiler)."""
    notes = [f"{f.height} frame(s) from the legacy `Draw Prepare Process Execute` rows (GPU profiling on; no "
             "framestats rows): a frame's time is the sum of its stages, its CPU-side time. On Android 6+ that is "
             "from the intended vsync to the frame completed (Draw: the UI thread's input, animation, measure/layout "
             "and recording; Prepare: sync; Process: issuing draw commands; Execute: swapping buffers), less the "
             "wait for the RenderThread to take the frame; it leaves out the GPU's own work after the swap, "
             "SurfaceFlinger's composition and the display. Android counts the same time in its histogram"]
    old = int((~f["android6"]).sum())
    if old:
        notes.append(f"{old} of the rows have no `Total frames rendered` summary beside them (Android 4.x-5.x print "
                     "none): there Draw is the display-list recording alone, without measure, layout, input or "
                     "animation, so their time is shorter than the frame's")
    capped = int(f["at_cap"].sum())
    if capped:
        notes.append(f"{capped} row(s) have a stage at 50.00 ms, the cap Android puts on each stage it prints: their "
                     "time is at least the sum shown (they are slow; whether any was frozen, over 700 ms, cannot be "
                     "told from these rows)")
    notes.append("the legacy rows carry no timestamps: start_ns only orders them (the sum of the earlier rows' times "
                 "in their window), so no intervals between slow frames are given")
    notes.append("buffer-aware verdicts not possible: the legacy rows carry no deadline and gfxinfo no buffer count")
    return notes


def _gfx_summary_report(path: str, sections: dict[str, Any], notes: list[str], warnings: list[str]) -> FramesReport:
    """No per-frame rows: the summary from Android's own counters (frames rendered, SR/FF by its HISTOGRAM,
    labelled in `counts_from`), or, without them, no frames and the reason."""
    empty = pl.DataFrame(schema=_EMPTY_FRAMES)
    aggregates = [g for g in sections["gfxinfo_summaries"] if g.get("total_frames_rendered")]
    if not aggregates:
        notes.append("no framestats rows (run `dumpsys gfxinfo <pkg> framestats`)")
        summary = summarize(empty, [], "none", None, sections)
        summary.no_frames_reason = notes[0]
        return FramesReport("gfxinfo", path, empty, causes_frame([]), summary, notes, warnings)
    summary = aggregate_summary(aggregates)
    summary.sections.update(sections)
    notes.append("no per-frame rows (run `dumpsys gfxinfo <pkg> framestats` for them): frames and SR/FF are "
                 "Android's own counts, from its summary and HISTOGRAM (summary.counts_from); no buffer-aware "
                 "verdict and no causes")
    return FramesReport("gfxinfo", path, empty, causes_frame([]), summary, notes, warnings)


def _gfx_apps(f: pl.DataFrame) -> list[dict[str, Any]]:
    """Frames and naive SR/FF per (pid, process, window). The names are grouped as categories: grouping the
    strings of every row took 220 MB for the 824k frames of a 200 MB gfxinfo, categories take 9 MB."""
    return (f.lazy().select("pid", pl.col("process", "window").cast(pl.Categorical),
                            (pl.col("naive_verdict") != OK).alias("bad"))
            .group_by("pid", "process", "window").agg(pl.len().alias("frames"), pl.col("bad").sum().alias("sr_ff_naive"))
            .with_columns(pl.col("process", "window").cast(pl.Utf8))
            .sort(["frames", "pid", "window"], descending=[True, False, False]).collect().to_dicts())


# framestats column pairs -> stage (ns): Android's own breakdown of a frame.
_GFX_STAGES = {
    "input": ("HandleInputStart", "AnimationStart"),
    "animation": ("AnimationStart", "PerformTraversalsStart"),
    "measure_layout": ("PerformTraversalsStart", "DrawStart"),
    "draw": ("DrawStart", "SyncQueued"),
    "sync": ("SyncStart", "IssueDrawCommandsStart"),
    "gpu_issue": ("IssueDrawCommandsStart", "SwapBuffers"),
    "swap": ("SwapBuffers", "FrameCompleted"),
}


def _gfx_stages(f: pl.DataFrame) -> list[pl.Expr]:
    out = []
    for stage, (a, b) in _GFX_STAGES.items():
        if a in f.columns and b in f.columns:
            out.append(pl.when((pl.col(a) > 0) & (pl.col(b) >= pl.col(a))).then(pl.col(b) - pl.col(a))
                       .alias(stage))
    if "DequeueBufferDuration" in f.columns:
        out.append(pl.col("DequeueBufferDuration").alias("dequeue_buffer"))
    if "QueueBufferDuration" in f.columns:
        out.append(pl.col("QueueBufferDuration").alias("queue_buffer"))
    out.append((pl.col("SyncQueued") - pl.col("IntendedVsync")).alias("ui_thread")
               if "SyncQueued" in f.columns else pl.lit(None, pl.Int64).alias("ui_thread"))
    return out


def _gfx_causes(f: pl.DataFrame, stages: list[str]) -> list[FrameCause]:
    """gfxinfo has no system events: the cause of a slow frame is the stage that took the most time, compared
    with that stage's mean share over normal frames. Slow frames are those the summary counts (buffer-aware SR/FF,
    or long frames without a buffer-aware verdict), so a cause's count and its denominator come from one set;
    normal frames are those fast by both verdicts."""
    cols = f.select("frame_id", "verdict", "naive_verdict", "dur_ns", *stages)   # the filters copy only what is used
    bad = cols.filter(pl.col("verdict").is_in([SR, FF, NOT_POSSIBLE]))
    normal = cols.filter((pl.col("verdict") == OK) & (pl.col("naive_verdict") == OK))
    rows: list[FrameCause] = []
    # each stage's mean share over normal frames, once (per slow frame it made the analysis quadratic)
    normal_mean = normal.select([(pl.col(st).fill_null(0) / pl.col("dur_ns")).mean().alias(st) for st in stages]) \
        .row(0, named=True) if normal.height and stages else {}
    for r in bad.iter_rows(named=True):
        shares = {s: (r[s] or 0) / r["dur_ns"] for s in stages if r["dur_ns"]}
        if not shares:
            continue
        top = max(shares, key=lambda k: shares[k])
        nb = normal_mean.get(top)
        rows.append(FrameCause(r["frame_id"], 1, f"{STAGE_PREFIX}{top}", shares[top],
                               float(nb) if nb is not None else None,
                               CauseEvidence(None, stage=top, stage_ns=r[top] or 0, frame_ns=r["dur_ns"],
                                             note="gfxinfo has no sched/binder/I/O data; system causes not possible")))
    return rows


# The HISTOGRAM's buckets (libhwui ProfileData::frameCountIndexForFrameTime / frameTimeForFrameCountIndex): a bucket
# labelled N ms holds frames from about N ms (whole ms, truncated): 1 ms wide from 6 to 31, 2 ms from 32 to 47, 4 ms
# from 48 to 135 (label N: N-1 to N+2), 50 ms from 150; 5ms holds everything up to 5 ms. SR = buckets 17 ms to 650 ms (the 16ms
# bucket, 16.0-16.99 ms, is left out: a lower bound), FF = buckets from 700 ms. AOSP's unsigned arithmetic in
# ProfileData::reportFrame puts frames of 140-149 ms in the last bucket, 4950ms, with those over 4.95 s.
_LAST_BUCKET_MS = 4950


def _gfx_summaries(dump: GfxinfoDump, config: FramesConfig | None = None) -> list[dict[str, Any]]:
    """Android's own aggregate counters per process (gfxinfo) or package (graphicsstats), with SR/FF counted from
    the frame-time histogram at its resolution. `janky_rule`: what Android's `Janky frames` counts (Android 12+,
    which print `Janky frames (legacy)` beside it: frames that missed their deadline; before: frames longer than
    the panel's frame interval)."""
    config = config or FramesConfig()
    out = []
    for p in dump.processes:
        s = p.summary
        raw_hist = s.get("histogram")
        hist: dict[int, int] = raw_hist if isinstance(raw_hist, dict) else {}
        total, from_histogram = rendered_frames(s)
        if total is None:
            continue
        janky = s.get("janky_frames")
        sr_ns, ff_ns = config.sr_threshold_ns, config.ff_threshold_ns
        out.append({"pid": p.pid if p.pid >= 0 else None, "process": p.name,
                    "total_frames_rendered": total,
                    "janky_frames": janky.get("count") if isinstance(janky, dict) else janky,
                    "janky_percent": janky.get("percent") if isinstance(janky, dict) else None,
                    "janky_rule": "deadline" if "janky_frames_legacy" in s else "frame_interval",
                    "percentiles_ms": {k: s.get(k) for k in ("50th_percentile", "90th_percentile",
                                                             "95th_percentile", "99th_percentile") if k in s},
                    "sr_naive_histogram": sum(n for ms, n in hist.items() if sr_ns < ms * NS_PER_MS < ff_ns)
                    if hist else None,
                    "ff_naive_histogram": sum(n for ms, n in hist.items() if ms * NS_PER_MS >= ff_ns)
                    if hist else None,
                    **({"histogram_4950ms": hist[_LAST_BUCKET_MS]} if hist.get(_LAST_BUCKET_MS) else {}),
                    **({"total_from_histogram": True} if from_histogram else {})})
    return out


__all__ = ["FramesReport", "analyze_frames", "analyze_gfxinfo", "SYSTEM_FACTORS"]
