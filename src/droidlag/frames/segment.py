"""Frame segmentation: each app's `Choreographer#doFrame` joined to its RenderThread `DrawFrame` (by vsync id, else
by containment), its FrameTimeline row and SurfaceFlinger's composition, with per-stage durations (ns).

Apps that render without HWUI (Flutter, Unity, GL/SurfaceView) are detected and left out of the frame counts,
with a note, instead of being miscounted. Choreographer callbacks that drew nothing are not frames either
(`_split_drawn`): they are counted apart (`Segmentation.skipped`), with a note.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from droidlag.frames.frametimeline import join_surface_frames, surface_frames
from droidlag.frames.pacing import outer_swaps
from droidlag.frames.refresh import estimate_vsync_period
from droidlag.models.trace import Trace

DOFRAME_RE = r"^Choreographer#doFrame(?:\s+(\d+))?$"
DRAWFRAME_RE = r"^DrawFrames?(?:\s+(\d+))?$"
SF_COMPOSITION = ("handleMessageRefresh", "onMessageRefresh", "composite")
# stage name -> (thread role, slice names); durations of the outermost matching slices inside the frame's root.
MAIN_STAGES = {
    "input": ("input", "deliverInputEvent"),
    "animation": ("animation",),
    "traversal": ("traversal",),
    "measure": ("measure", "AndroidOwner:measureAndLayout"),
    "layout": ("layout",),
    "draw": ("draw", "Record View#draw()"),
    "recompose": ("Recomposer:recompose", "Compose:recompose"),
}
RENDER_STAGES = {
    "sync": ("syncFrameState",),
    "dequeue_buffer": ("dequeueBuffer",),
    "queue_buffer": ("queueBuffer",),
    "swap": ("eglSwapBuffersWithDamageKHR", "eglSwapBuffers", "eglSwapBuffersWithDamageEXT", "swapBuffers"),
    "gpu_issue": ("flush commands", "Issue draw commands", "Flush"),
}
STAGES = ("input", "animation", "traversal", "measure", "layout", "draw", "recompose", "ui_thread", "sync",
          "render_thread", "dequeue_buffer", "queue_buffer", "swap", "gpu_issue", "composition")
FLUTTER_THREADS = re.compile(r"^\d+\.(ui|raster|gpu|io)$")
UNITY_THREADS = re.compile(r"^(UnityMain|UnityGfxDevice\w*|UnityChoreograp\w*)$")

FRAME_SCHEMA = {
    "frame_id": pl.Int64, "pid": pl.Int64, "process": pl.Utf8, "ui_tid": pl.Int64, "render_tid": pl.Int64,
    "vsync_id": pl.Int64, "do_frame_id": pl.Int64, "draw_frame_id": pl.Int64, "do_frame_ts": pl.Int64,
    "start_ns": pl.Int64, "end_ns": pl.Int64, "dur_ns": pl.Int64, "start_source": pl.Utf8,
    "ft_jank_type": pl.Utf8, "ft_present_type": pl.Utf8, "ft_expected_end_ns": pl.Int64, "ft_actual_end_ns": pl.Int64,
    "layer_name": pl.Utf8, "complete": pl.Boolean,
}

# Choreographer callbacks that drew nothing (docs/frames.md "Which frames"). HWUI's RenderThread says why it drew
# no frame with an instant `Frame skipped: <SkippedFrameReason>`; for these reasons no frame was expected (libhwui
# CanvasContext: "there was no frame expected to be drawn"), and such a frame is neither given to JankTracker
# (gfxinfo) nor queued as a buffer (no FrameTimeline surface frame). NoBuffer, NoOutputTarget and AlreadyDrawn are
# frames that were due and were dropped: they stay frames.
SKIPPED_FRAME_RE = r"^Frame skipped: (\w+)"
NOTHING_EXPECTED = {"NothingToDraw": "nothing_to_draw", "DrawingOff": "drawing_off",
                    "ContextIsStopped": "context_is_stopped"}
NO_RENDER_THREAD_FRAME = "no_render_thread_frame"
NO_TRAVERSAL = "no_traversal"
# Choreographer.doCallbacks traces one section per callback type it runs (CALLBACK_TRACE_TITLES); views are drawn
# only in the traversal callback (ViewRootImpl.scheduleTraversals posts CALLBACK_TRAVERSAL).
CALLBACK_SECTIONS = ("input", "animation", "insets_animation", "traversal", "commit")
# What shows a doFrame drew, even where its DrawFrame is not in the trace: the UI thread handing a frame to the
# RenderThread (ThreadedRenderer.draw: the root display list recorded, then DrawFrameTask::postAndWait), ViewRootImpl's
# `draw` section, or the UI thread queueing a buffer itself (a software-drawn window: lockCanvas/unlockCanvasAndPost
# dequeue and queue its buffer; GL on the UI thread swaps).
HANDOFF = ("postAndWait", "Record View#draw()", "draw", "dequeueBuffer", "queueBuffer", "eglSwapBuffers",
           "eglSwapBuffersWithDamageKHR", "unlockCanvasAndPost")
SKIPPED_SCHEMA = pl.Schema({"pid": pl.Int64, "process": pl.Utf8, "ui_tid": pl.Int64, "vsync_id": pl.Int64,
                            "do_frame_ts": pl.Int64, "do_frame_end": pl.Int64, "dur_ns": pl.Int64, "reason": pl.Utf8})


@dataclass
class Segmentation:
    """Frames (one row per frame, FRAME_SCHEMA + one column per stage, ns) and what was noticed on the way."""

    frames: pl.DataFrame
    notes: list[str] = field(default_factory=list)
    non_hwui_apps: list[dict[str, Any]] = field(default_factory=list)
    vsync_period_ns: int | None = None
    vsync_period_source: str | None = None
    # the doFrame callbacks that drew nothing (SKIPPED_SCHEMA): not frames, counted apart
    skipped: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=SKIPPED_SCHEMA))
    # pid -> index in `notes` of the note on an app drawn without the Choreographer, which the analysis ends with
    # what became of its frame pacing (measured, or too few buffers)
    pacing_notes: dict[int, int] = field(default_factory=dict)


def _thread_names(trace: Trace) -> pl.DataFrame:
    rows = [(t.tid, t.pid, t.name) for t in trace.threads.values()]
    return pl.DataFrame(rows, schema={"tid": pl.Int64, "tpid": pl.Int64, "tname": pl.Utf8}, orient="row")


def surfaceflinger_pids(trace: Trace) -> set[int]:
    pids = {p.pid for p in trace.processes.values() if p.name and p.name.split("/")[-1] == "surfaceflinger"}
    pids |= {t.pid for t in trace.threads.values() if t.name == "surfaceflinger" and t.pid is not None}
    return pids


def app_matches(trace: Trace, pid: int | None, app: str) -> bool:
    """Whether process `pid` is the app the user named: by pid, by process name (exact, `pkg:service`, or a
    part of it), or by a kernel comm that ftrace cut to 15 characters (the end or the start of the package)."""
    if pid is None:
        return False
    if app.isdigit():
        return pid == int(app)
    names = {trace.process_name(pid)} | {t.name for t in trace.threads.values() if t.tid == pid}
    for n in filter(None, names):
        if n == app or n.startswith(app + ":") or app in n:
            return True
        if len(n) >= 12 and (app.endswith(n) or app.startswith(n) or app.split(":")[0].endswith(n)):
            return True
    return False


def ft_app_pids(trace: Trace, app: str) -> list[int]:
    """Processes with FrameTimeline surface frames that are the app: by app_matches, or (a trace without process
    names) by the package SurfaceFlinger names in their app layers (`TX - <package>/...`)."""
    ft = trace.frame_timeline.filter(pl.col("scope") == "surface")
    out = []
    for (pid,), part in sorted(ft.partition_by("pid", as_dict=True).items(), key=lambda kv: kv[0][0]) if ft.height \
            else ():
        pkgs = part["layer_name"].drop_nulls().str.extract(LAYER_PACKAGE_RE, 1).drop_nulls().unique().to_list()
        if app_matches(trace, pid, app) or (not trace.process_name(pid) and any(app == p for p in pkgs)):
            out.append(pid)
    return out


def _renderer_of(trace: Trace, pid: int) -> str | None:
    names = [t.name or "" for t in trace.threads.values() if t.pid == pid]
    if any(FLUTTER_THREADS.match(n) for n in names):
        return "flutter"
    if any(UNITY_THREADS.match(n) for n in names):
        return "unity"
    return None


def _stage_sums(slices: pl.DataFrame, roots: pl.DataFrame, stages: dict[str, tuple[str, ...]],
                tid_col: str, id_col: str) -> pl.DataFrame:
    """Per root (frame), the summed duration of the outermost slices of each stage on the root's thread."""
    name_to_stage = {n: s for s, names in stages.items() for n in names}
    cand = slices.filter(pl.col("name").is_in(list(name_to_stage))).select("id", "ts", "dur", "tid", "name",
                                                                            "parent_id")
    out_cols = ["frame_id"] + list(stages)
    if not cand.height or not roots.height:
        return pl.DataFrame(schema={c: pl.Int64 for c in out_cols})
    cand = cand.with_columns(pl.col("name").replace_strict(name_to_stage, default=None).alias("stage"))
    parent = slices.select(pl.col("id").alias("parent_id"), pl.col("name").alias("parent_name"))
    cand = cand.join(parent, on="parent_id", how="left")
    cand = cand.filter(pl.col("parent_name").is_null()
                       | (pl.col("parent_name").replace_strict(name_to_stage, default="") != pl.col("stage")))
    r = roots.select("frame_id", pl.col(tid_col).alias("tid"), pl.col(f"{id_col}_ts").alias("root_ts"),
                     pl.col(f"{id_col}_end").alias("root_end")).drop_nulls().sort("root_ts")
    j = cand.sort("ts").join_asof(r, left_on="ts", right_on="root_ts", by="tid", strategy="backward", check_sortedness=False)
    j = j.filter(pl.col("frame_id").is_not_null() & (pl.col("ts") < pl.col("root_end")))
    if not j.height:
        return pl.DataFrame(schema={c: pl.Int64 for c in out_cols})
    wide = j.group_by("frame_id", "stage").agg(pl.col("dur").sum()).pivot(on="stage", index="frame_id",
                                                                          values="dur")
    for s in stages:
        if s not in wide.columns:
            wide = wide.with_columns(pl.lit(None, pl.Int64).alias(s))
    return wide.select(out_cols).cast({c: pl.Int64 for c in out_cols})


def segment_frames(trace: Trace, app: str | None = None, vsync_period_ns: int | None = None) -> Segmentation:
    """Segment every HWUI app's frames (or only `app`'s, matched against the process name). Phases: the root slices
    (doFrame, DrawFrame) of the apps asked for; non-HWUI renderers left out; each doFrame joined to its DrawFrame;
    FrameTimeline surface frames joined by token; the callbacks that drew nothing set apart; stages and
    composition; FrameTimeline-only frames appended."""
    notes: list[str] = []
    period, period_src = (vsync_period_ns, "config") if vsync_period_ns else estimate_vsync_period(trace)
    s = trace.slices
    empty = pl.DataFrame(schema=FRAME_SCHEMA | {st: pl.Int64 for st in STAGES})
    if not s.height:
        ft_frames = frames_from_frame_timeline(trace, s, app, list(surfaceflinger_pids(trace)), notes)
        if ft_frames is not None:
            return Segmentation(ft_frames, notes, [], period, period_src)
        notes.append("the trace has no atrace slices and no FrameTimeline: no Choreographer#doFrame, so no app "
                     "frames")
        return Segmentation(empty, notes, [], period, period_src)
    s = s.filter(pl.col("kind") == "thread")
    tnames = _thread_names(trace)
    s = s.join(tnames, on="tid", how="left").with_columns(pl.coalesce("pid", "tpid").alias("pid"))
    sf = surfaceflinger_pids(trace)
    do, draw, proc_name = _root_slices(trace, s, app, sf, notes)
    seg = Segmentation(empty, notes, [], period, period_src)
    non_hwui, producers = _renderers(trace, s, do, draw, app, sf, seg)
    seg.non_hwui_apps = non_hwui + producers
    excluded = [d["pid"] for d in non_hwui]
    do = do.filter(~pl.col("pid").is_in(excluded))
    if not do.height:
        ft_frames = frames_from_frame_timeline(trace, s, app, excluded + list(sf), notes)
        if ft_frames is not None:
            seg.frames = ft_frames
        elif not non_hwui:
            notes.append("no app frames: the trace has no Choreographer#doFrame slices"
                         + (" for that app" if app else ""))
        return seg
    frames, draw = _match_draw_frames(do, draw)
    frames, ft_only = _join_frame_timeline(trace, frames, app, excluded + list(sf), proc_name, notes)
    frames, seg.skipped = _split_drawn(trace, s, frames, draw)
    if frames.height:
        frames = _with_stages(trace, s, frames, sf)
        _doframe_notes(trace, frames, draw, notes)
        cols = list(FRAME_SCHEMA) + [c for c in ("draw_frame_ts", "draw_frame_end", "do_frame_end",
                                                  "compose_end_ns") if c in frames.columns] + list(STAGES)
        frames = frames.select([c for c in cols if c in frames.columns])
    else:
        frames = empty
    if ft_only.height:
        extra = _ft_frames(trace, s, ft_only, int(frames["frame_id"].max() or 0) + 1)   # type: ignore[arg-type]
        n_extra = extra.filter(pl.col("complete").fill_null(True)).height
        notes.append(f"{n_extra} FrameTimeline app surface frame(s) had no doFrame (drawn outside the "
                     "Choreographer, or its doFrame was outside the trace): counted from FrameTimeline alone "
                     "(intended vsync to actual end)")
        frames = pl.concat([frames, extra.select([c for c in frames.columns if c in extra.columns])],
                           how="diagonal_relaxed")
    # ties in start time (frames of different apps) ordered by pid and frame, so the output is the same every run
    seg.frames = with_layer_package(frames).sort(["start_ns", "pid", "frame_id"], nulls_last=True)
    return seg


def _doframe_notes(trace: Trace, frames: pl.DataFrame, draw: pl.DataFrame, notes: list[str]) -> None:
    """What the doFrame frames lack: FrameTimeline rows, a DrawFrame. Counted over complete frames only, as every
    count is (docs/frames.md)."""
    done = frames.filter(pl.col("complete").fill_null(True))
    if not done.height:
        return
    _frame_timeline_notes(trace, done, notes)
    n_unmatched = done.filter(pl.col("draw_frame_id").is_null()).height
    if not draw.height:
        notes.append("no RenderThread DrawFrame slices: frame ends come from the main thread's doFrame only "
                     "(RenderThread, dequeue/queueBuffer stages not available)")
    elif n_unmatched:
        notes.append(f"{n_unmatched} doFrame(s) had no matching DrawFrame (the RenderThread slice is not in the "
                     "trace, or the app drew without one); their end is the doFrame end")


def _root_slices(trace: Trace, s: pl.DataFrame, app: str | None, sf: set[int],
                 notes: list[str]) -> tuple[pl.DataFrame, pl.DataFrame, dict[int, str | None]]:
    """The outermost doFrame slices (SurfaceFlinger's left out) and the DrawFrame slices, with their vsync ids,
    of every app or of `app` only; and the name of each process that has either."""
    do = s.filter(pl.col("name").str.contains(DOFRAME_RE))
    do = do.join(s.select(pl.col("id").alias("parent_id"), pl.col("name").alias("pname")), on="parent_id",
                 how="left").filter(pl.col("pname").is_null() | ~pl.col("pname").str.contains(DOFRAME_RE))
    do = do.with_columns(pl.col("name").str.extract(DOFRAME_RE, 1).cast(pl.Int64).alias("vsync_id"))
    draw = s.filter(pl.col("name").str.contains(DRAWFRAME_RE)).with_columns(
        pl.col("name").str.extract(DRAWFRAME_RE, 1).cast(pl.Int64).alias("vsync_id"))
    proc_name = process_names(trace, set(do["pid"].drop_nulls().to_list()) | set(draw["pid"].drop_nulls().to_list()))
    if app:
        keep = {pid for pid in proc_name if app_matches(trace, pid, app)}
        do = do.filter(pl.col("pid").is_in(list(keep)))
        draw = draw.filter(pl.col("pid").is_in(list(keep)))
        if not keep:
            notes.append(f"no frames of app {app!r} in the trace")
    return do.filter(~pl.col("pid").is_in(list(sf))), draw, proc_name


def _renderers(trace: Trace, s: pl.DataFrame, do: pl.DataFrame, draw: pl.DataFrame, app: str | None, sf: set[int],
               seg: Segmentation) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Non-HWUI renderers (Choreographer callbacks that drive Flutter/Unity/GL drawing are not HWUI frames: left
    out of the frames, paced apart) and HWUI apps with a GL surface of their own beside (their frames counted, the
    other surface paced). Each gets a note, whose index `seg.pacing_notes` keeps for the analysis to end it with
    what became of the pacing."""
    non_hwui: list[dict[str, Any]] = []
    # one swap per buffer: a queueBuffer inside eglSwapBuffers is the same buffer
    cand = s.filter(pl.col("pid").is_not_null() & ~pl.col("pid").is_in(list(sf)))["pid"].unique().to_list()
    swaps = outer_swaps(s, cand).join(s.select("tid", "tname").unique("tid"), on="tid", how="left")
    producers: list[dict[str, Any]] = []
    do_pids = set(do["pid"].to_list())
    pids = sorted(set(do["pid"].drop_nulls().to_list()) | set(swaps["pid"].drop_nulls().to_list()))
    names = process_names(trace, pids)
    for pid in pids:
        n_do = do.filter(pl.col("pid") == pid).height
        n_draw = draw.filter(pl.col("pid") == pid).height
        renderer = _renderer_of(trace, pid)
        other_swaps = swaps.filter((pl.col("pid") == pid) & (pl.col("tname") != "RenderThread")).height
        if renderer or (n_draw < 0.1 * max(n_do, 1) and other_swaps >= 10):
            if app and pid not in do_pids and not app_matches(trace, pid, app):
                continue
            non_hwui.append(_non_hwui(names.get(pid), pid, renderer or ("surfaceview/gl" if n_do else
                                                                         "no-choreographer"),
                                      n_do, n_draw, other_swaps, seg))
        elif other_swaps >= 10 and (not app or app_matches(trace, pid, app)):
            # an HWUI app with a SurfaceView/GL surface of its own (a game view, a map, a video): the HWUI frames
            # are counted, and the other surface's buffers are paced
            producers.append({"pid": pid, "process": names.get(pid), "renderer": "surfaceview/gl",
                              "beside_hwui": True, "buffers_queued_elsewhere": other_swaps})
            seg.pacing_notes[pid] = len(seg.notes)
            seg.notes.append(f"{_who(names.get(pid), pid)} also queued {other_swaps} buffers from threads other "
                             "than its RenderThread (a SurfaceView or GL surface)")
    return non_hwui, producers


def _who(name: str | None, pid: int) -> str:
    return f"{name} (pid {pid})" if name else f"pid {pid}"


def _non_hwui(name: str | None, pid: int, renderer: str, n_do: int, n_draw: int, other_swaps: int,
              seg: Segmentation) -> dict[str, Any]:
    """One app that renders without HWUI, with the note that says why its frames are not counted (the analysis
    ends it with its frame pacing, or why there is none)."""
    seg.pacing_notes[pid] = len(seg.notes)
    if n_do:
        seg.notes.append(f"{_who(name, pid)} renders with {renderer} (not the HWUI pipeline): its {n_do} "
                         f"Choreographer#doFrame callbacks and {other_swaps} buffers queued from other threads are "
                         "not counted as frames")
    else:
        seg.notes.append(f"{_who(name, pid)} queued {other_swaps} buffers but the trace has no "
                         "Choreographer#doFrame slices for it (not traced with the gfx/view categories, or it "
                         "draws without the Choreographer): its frames are not counted")
    return {"pid": pid, "process": name, "renderer": renderer, "choreographer_callbacks": n_do,
            "hwui_draw_frames": n_draw, "buffers_queued_elsewhere": other_swaps}


def _match_draw_frames(do: pl.DataFrame, draw: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One frame per doFrame, joined to its DrawFrame: by vsync id where both names carry one, else the DrawFrame
    starting inside the doFrame. Also the DrawFrames of the frames' processes."""
    do = do.sort(["ts", "pid", "tid"]).with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("frame_id"),
                                                    (pl.col("ts") + pl.col("dur")).alias("do_end"))
    frames = do.select("frame_id", "pid", pl.col("tid").alias("ui_tid"), "vsync_id",
                       pl.col("id").alias("do_frame_id"), pl.col("ts").alias("do_frame_ts"),
                       pl.col("do_end").alias("do_frame_end"), pl.col("closed").alias("do_closed"))
    draw = draw.filter(pl.col("pid").is_in(do["pid"].unique().to_list())).with_columns(
        (pl.col("ts") + pl.col("dur")).alias("draw_end"))
    dsel = draw.select("pid", pl.col("tid").alias("render_tid"), pl.col("id").alias("draw_frame_id"),
                       pl.col("ts").alias("draw_frame_ts"), pl.col("draw_end").alias("draw_frame_end"), "vsync_id",
                       pl.col("closed").alias("draw_closed"))
    by_id = frames.filter(pl.col("vsync_id").is_not_null()).join(
        dsel.filter(pl.col("vsync_id").is_not_null()).unique(["pid", "vsync_id"], keep="first"),
        on=["pid", "vsync_id"], how="inner").select("frame_id", "render_tid", "draw_frame_id", "draw_frame_ts",
                                                    "draw_frame_end", "draw_closed")
    rest = frames.filter(~pl.col("frame_id").is_in(by_id["frame_id"].implode()))
    used = by_id["draw_frame_id"].implode()
    d2 = dsel.filter(~pl.col("draw_frame_id").is_in(used)).sort("draw_frame_ts")
    cont = d2.join_asof(rest.sort("do_frame_ts").select("pid", "frame_id", "do_frame_ts", "do_frame_end"),
                        left_on="draw_frame_ts", right_on="do_frame_ts", by="pid", strategy="backward",
                        check_sortedness=False)
    cont = cont.filter(pl.col("frame_id").is_not_null() & (pl.col("draw_frame_ts") <= pl.col("do_frame_end")))
    cont = cont.sort("draw_frame_ts").unique("frame_id", keep="first").select(
        "frame_id", "render_tid", "draw_frame_id", "draw_frame_ts", "draw_frame_end", "draw_closed")
    matched = pl.concat([by_id, cont])
    return frames.join(matched, on="frame_id", how="left"), draw


def _join_frame_timeline(trace: Trace, frames: pl.DataFrame, app: str | None, exclude: list[int],
                         proc_name: dict[int, str | None], notes: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """FrameTimeline surface frames by token (= vsync id): one frame per layer the doFrame fed, for the intended
    start and the ground-truth verdict; then each frame's start, end, process and completeness. Also the surface
    frames without a doFrame (frames of their own, added by the caller)."""
    allowed = None if not app else ft_app_pids(trace, app)
    surf = surface_frames(trace, exclude, allowed)
    frames, ft_only = join_surface_frames(frames, surf)
    # a process whose doFrames carry no vsync id cannot be matched to FrameTimeline: its surface frames would count
    # its frames twice, so they are not added (the doFrames stay the frames)
    unmatched = frames.group_by("pid").agg(pl.col("vsync_id").is_not_null().any().alias("ids"))
    no_ids = unmatched.filter(~pl.col("ids"))["pid"].to_list()
    no_ids = sorted(set(ft_only.filter(pl.col("pid").is_in(no_ids))["pid"].to_list()))
    if no_ids:
        notes.append("FrameTimeline is present but the doFrame slices of "
                     + ", ".join(str(proc_name.get(p) or p) for p in no_ids)
                     + " carry no vsync id: their frames cannot be matched to it (FrameTimeline verdicts not used)")
        ft_only = ft_only.filter(~pl.col("pid").is_in(no_ids))
    frames = frames.with_columns(
        pl.when(pl.col("ft_expected_ts").is_not_null()).then(pl.col("ft_expected_ts"))
        .otherwise(pl.col("do_frame_ts")).alias("start_ns"),
        pl.when(pl.col("ft_expected_ts").is_not_null()).then(pl.lit("intended_vsync"))
        .otherwise(pl.lit("doframe_start")).alias("start_source"),
        pl.max_horizontal("do_frame_end", "draw_frame_end").alias("end_ns"))
    frames = frames.with_columns((pl.col("end_ns") - pl.col("start_ns")).alias("dur_ns"),
                                 pl.col("pid").replace_strict(proc_name, default=None, return_dtype=pl.Utf8)
                                 .alias("process"),
                                 (pl.col("do_closed").fill_null(True) & pl.col("draw_closed").fill_null(True)
                                  & pl.col("ft_ended").fill_null(True)).alias("complete"))
    return frames, ft_only


def _doframe_marks(s: pl.DataFrame, roots: pl.DataFrame) -> pl.DataFrame:
    """Per doFrame (roots: do_frame_id, tid, ts, end), what the slices starting inside it on its thread say: a
    hand-over to the RenderThread (`handoff`, HANDOFF), a view traversal (`traversal`). The outermost doFrames of one
    thread do not overlap."""
    out_schema = pl.Schema([("do_frame_id", pl.Int64()), ("handoff", pl.Boolean()), ("traversal", pl.Boolean())])
    m = s.filter(pl.col("name").is_in(HANDOFF + ("traversal",))).select("tid", pl.col("ts").alias("m_ts"), "name")
    if not m.height or not roots.height:
        return pl.DataFrame(schema=out_schema)
    j = m.sort("m_ts").join_asof(roots.sort("ts"), left_on="m_ts", right_on="ts", by="tid", strategy="backward",
                                 check_sortedness=False)
    j = j.filter(pl.col("do_frame_id").is_not_null() & (pl.col("end").is_null() | (pl.col("m_ts") <= pl.col("end"))))
    return j.group_by("do_frame_id").agg(pl.col("name").is_in(HANDOFF).any().alias("handoff"),
                                         (pl.col("name") == "traversal").any().alias("traversal")).cast(out_schema)


def _draw_skips(trace: Trace, draw: pl.DataFrame) -> pl.DataFrame:
    """Per DrawFrame slice (`draw`: the frames' processes' DrawFrames), the reason HWUI gave for drawing nothing
    (`Frame skipped: <reason>`, an instant the RenderThread logs inside it; null where it drew): columns
    draw_frame_id, pid, d_ts, skip."""
    d = draw.select(pl.col("id").alias("draw_frame_id"), "pid", "tid", pl.col("ts").alias("d_ts"),
                    pl.col("draw_end").alias("d_end"))
    inst = trace.slices.filter(pl.col("name").str.starts_with("Frame skipped"))
    inst = inst.select("tid", pl.col("ts").alias("i_ts"), pl.col("name").str.extract(SKIPPED_FRAME_RE, 1)
                       .alias("skip")).drop_nulls("skip")
    if not inst.height or not d.height:
        return d.select("draw_frame_id", "pid", "d_ts", pl.lit(None, pl.Utf8).alias("skip"))
    j = inst.sort("i_ts").join_asof(d.sort("d_ts"), left_on="i_ts", right_on="d_ts", by="tid", strategy="backward",
                                    check_sortedness=False)
    j = j.filter(pl.col("draw_frame_id").is_not_null() & (pl.col("d_end").is_null() | (pl.col("i_ts") <= pl.col("d_end"))))
    # a reason for which no frame was expected wins over one for a dropped frame, should a DrawFrame hold both
    j = j.sort(pl.col("skip").is_in(list(NOTHING_EXPECTED)), "i_ts", descending=[True, False]) \
        .unique("draw_frame_id", keep="first").select("draw_frame_id", "skip")
    return d.select("draw_frame_id", "pid", "d_ts").join(j, on="draw_frame_id", how="left")


def _render_thread_skips(trace: Trace, frames: pl.DataFrame, roots: pl.DataFrame, draw: pl.DataFrame) -> pl.DataFrame:
    """Per doFrame (do_frame_id), HWUI's reason for drawing nothing, only when every DrawFrame of it (the one matched
    to it, and every DrawFrame of its process starting inside it: one per window) gave a reason for which no frame
    was expected; a doFrame one of whose windows drew is a frame. Columns do_frame_id, skip."""
    schema = pl.Schema({"do_frame_id": pl.Int64, "skip": pl.Utf8})
    if not draw.height or not roots.height:
        return pl.DataFrame(schema=schema)
    skips = _draw_skips(trace, draw)
    if skips["skip"].null_count() == skips.height:
        return pl.DataFrame(schema=schema)
    r = roots.join(frames.unique("do_frame_id").select("do_frame_id", "pid", "draw_frame_id"), on="do_frame_id")
    inside = r.join(skips, on="pid").filter((pl.col("d_ts") >= pl.col("ts"))
                                            & (pl.col("end").is_null() | (pl.col("d_ts") <= pl.col("end"))))
    matched = r.filter(pl.col("draw_frame_id").is_not_null()).join(
        skips.select("draw_frame_id", "skip"), on="draw_frame_id")
    both = pl.concat([inside.select("do_frame_id", "draw_frame_id_right", "skip")
                      .rename({"draw_frame_id_right": "d"}),
                      matched.select("do_frame_id", pl.col("draw_frame_id").alias("d"), "skip")]).unique(["do_frame_id", "d"])
    per = both.group_by("do_frame_id").agg(pl.col("skip").is_in(list(NOTHING_EXPECTED)).fill_null(False).all().alias("all_skipped"),
                                           pl.col("skip").drop_nulls().first().alias("skip"))
    return per.filter(pl.col("all_skipped")).select(list(schema)).cast(schema)


def _pids_tracing_callbacks(s: pl.DataFrame) -> set[int]:
    """The processes whose Choreographer traces its callback sections (input, animation, traversal, ...) under
    doFrame: there, a doFrame without a `traversal` section ran no view traversal, so drew no view. Per process:
    one app's own slice named like a section says nothing of another's Choreographer."""
    sec = s.filter(pl.col("name").is_in(list(CALLBACK_SECTIONS)) & pl.col("parent_id").is_not_null())
    if not sec.height:
        return set()
    parents = s.filter(pl.col("id").is_in(sec["parent_id"].unique().implode()) & pl.col("name").str.contains(DOFRAME_RE))
    return set(parents["pid"].drop_nulls().to_list())


def _with_draw_inside(roots: pl.DataFrame, frames: pl.DataFrame, draw: pl.DataFrame) -> pl.Series:
    """The doFrames (do_frame_id) inside which a DrawFrame of their process starts: the first one at or after each
    doFrame's start, by pid (doFrames of two UI threads of one process may overlap)."""
    if not draw.height or not roots.height:
        return pl.Series("do_frame_id", [], dtype=pl.Int64)
    r = roots.join(frames.unique("do_frame_id").select("do_frame_id", "pid"), on="do_frame_id").sort("ts")
    d = draw.select("pid", pl.col("ts").alias("d_ts")).sort("d_ts")
    j = r.join_asof(d, left_on="ts", right_on="d_ts", by="pid", strategy="forward", check_sortedness=False)
    return j.filter(pl.col("d_ts").is_not_null() & (pl.col("end").is_null() | (pl.col("d_ts") <= pl.col("end"))))[
        "do_frame_id"]


def _split_drawn(trace: Trace, s: pl.DataFrame, frames: pl.DataFrame,
                 draw: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The doFrame frames that drew, and the callbacks that drew nothing (SKIPPED_SCHEMA), which are not frames
    (docs/frames.md, "Which frames"). A doFrame with a FrameTimeline surface frame queued a buffer: it drew. Else it
    drew nothing when its DrawFrame said `Frame skipped` for a reason with no frame expected (NothingToDraw,
    DrawingOff, ContextIsStopped); when it has no DrawFrame while the app's RenderThread draws its frames in this
    trace and it handed the RenderThread nothing (no `postAndWait` or `Record View#draw()` inside it); or, the trace
    showing no RenderThread frame of the app, when Choreographer's sections show it ran no traversal. A doFrame
    still open at the end of the trace is left as it is (incomplete)."""
    roots = frames.unique("do_frame_id").select("do_frame_id", pl.col("ui_tid").alias("tid"),
                                                pl.col("do_frame_ts").alias("ts"), pl.col("do_frame_end").alias("end"))
    f = frames.join(_doframe_marks(s, roots), on="do_frame_id", how="left").join(
        _render_thread_skips(trace, frames, roots, draw), on="do_frame_id", how="left")
    # no DrawFrame of its process starts inside it (whatever the one-to-one match gave the doFrame)
    no_draw = pl.col("draw_frame_id").is_null() & ~pl.col("do_frame_id").is_in(
        _with_draw_inside(roots, frames, draw).implode())
    rt_frames = pl.col("pid").is_in(draw["pid"].unique().implode())
    # asked only where some app shows no RenderThread frame
    traced = list(_pids_tracing_callbacks(s)) if frames.filter(~rt_frames).height else []
    f = f.with_columns(
        pl.when(pl.col("ft_ended").is_not_null()).then(pl.lit(None, pl.Utf8))
        .when(pl.col("skip").is_in(list(NOTHING_EXPECTED)))
        .then(pl.col("skip").replace_strict(NOTHING_EXPECTED, default=None, return_dtype=pl.Utf8))
        .when(~pl.col("do_closed").fill_null(True)).then(pl.lit(None, pl.Utf8))
        .when(no_draw & rt_frames & ~pl.col("handoff").fill_null(False)).then(pl.lit(NO_RENDER_THREAD_FRAME))
        .when(no_draw & ~rt_frames & ~pl.col("traversal").fill_null(False) & ~pl.col("handoff").fill_null(False)
              & pl.col("pid").is_in(traced))
        .then(pl.lit(NO_TRAVERSAL))
        .otherwise(pl.lit(None, pl.Utf8)).alias("_skipped"))
    skipped = f.filter(pl.col("_skipped").is_not_null()).unique("do_frame_id", keep="first").sort("do_frame_ts") \
        .select("pid", "process", "ui_tid", "vsync_id", "do_frame_ts", "do_frame_end",
                (pl.col("do_frame_end") - pl.col("do_frame_ts")).alias("dur_ns"), pl.col("_skipped").alias("reason")) \
        .cast(SKIPPED_SCHEMA)
    kept = f.filter(pl.col("_skipped").is_null()).drop("handoff", "traversal", "skip", "_skipped")
    # frames numbered again without the gaps the callbacks left, in the same order
    kept = kept.sort("frame_id").with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("frame_id"))
    return kept, skipped


def _with_stages(trace: Trace, s: pl.DataFrame, frames: pl.DataFrame, sf: set[int]) -> pl.DataFrame:
    """Each frame's stage durations (ns) on the main thread and the RenderThread, and its composition."""
    roots_main = frames.select("frame_id", "ui_tid", pl.col("do_frame_ts").alias("do_ts"),
                               pl.col("do_frame_end").alias("do_end"))
    roots_rt = frames.select("frame_id", "render_tid", pl.col("draw_frame_ts").alias("dr_ts"),
                             pl.col("draw_frame_end").alias("dr_end"))
    main = _stage_sums(s, roots_main, MAIN_STAGES, "ui_tid", "do")
    rt = _stage_sums(s, roots_rt, RENDER_STAGES, "render_tid", "dr")
    frames = frames.join(main, on="frame_id", how="left").join(rt, on="frame_id", how="left")
    frames = frames.with_columns(
        (pl.coalesce("draw_frame_ts", "do_frame_end") - pl.col("do_frame_ts")).alias("ui_thread"),
        (pl.col("draw_frame_end") - pl.col("draw_frame_ts")).alias("render_thread"))
    frames = _join_composition(trace, s, frames, sf)
    for st in STAGES:
        if st not in frames.columns:
            frames = frames.with_columns(pl.lit(None, pl.Int64).alias(st))
    return frames


# `TX - <package>/<activity>#<n>`: the app's own window; `SurfaceView - <package>/<activity>@...#<n>`: a surface in
# it. Not "Splash Screen <package>": systemui draws those.
LAYER_PACKAGE_RE = r"^(?:TX - )?(?:SurfaceView - )?([A-Za-z]\w*(?:\.\w+)+)(?:/|#|$)"
# A layer name that also names its process: `SurfaceView - <package>/<activity>@<hash>@<n>[<pid>]#<n>`
# (SurfaceFlinger's BufferQueue counter and its slices carry the name in a systrace/atrace text trace).
LAYER_PID_RE = r"^(?:TX - )?(?:SurfaceView - )?([A-Za-z]\w*(?:\.\w+)+)/[^\[\]|]*\[(\d+)\]"


def layer_packages(trace: Trace) -> dict[int, str]:
    """pid -> the package SurfaceFlinger's layer names give it where a name carries the process's pid (`[<pid>]`):
    from counter and slice names. The package most of its names give, when they differ."""
    names: list[pl.Series] = []
    if trace.counters.height:
        names.append(trace.counters["name"].unique())
    if trace.slices.height:
        names.append(trace.slices["name"].unique())
    cand = [n.filter(n.str.contains("[", literal=True)) for n in names]
    if not any(c.len() for c in cand):
        return {}
    found = pl.concat(cand).to_frame("name").select(
        pl.col("name").str.extract(LAYER_PID_RE, 1).alias("pkg"),
        pl.col("name").str.extract(LAYER_PID_RE, 2).cast(pl.Int64, strict=False).alias("pid")).drop_nulls()
    if not found.height:
        return {}
    best = found.group_by("pid", "pkg").len().sort(["pid", "len", "pkg"], descending=[False, True, False]) \
        .unique("pid", keep="first")
    return dict(zip(best["pid"].to_list(), best["pkg"].to_list()))


def process_names(trace: Trace, pids: set[int] | list[int]) -> dict[int, str | None]:
    """Each process's name (Trace.process_name); a process the trace does not name takes the package of the layers
    SurfaceFlinger names after it (`SurfaceView - <package>/...[<pid>]#0`), as one with FrameTimeline rows takes
    that of its `TX - <package>/...` layers (with_layer_package)."""
    out = {pid: trace.process_name(pid) for pid in pids}
    if any(v is None for v in out.values()):
        pkgs = layer_packages(trace)
        out = {pid: v if v is not None else pkgs.get(pid) for pid, v in out.items()}
    return out


def with_layer_package(frames: pl.DataFrame) -> pl.DataFrame:
    """Frames of a process the trace does not name (no process tree) take the package SurfaceFlinger names in the
    layer (`TX - <package>/<activity>#<n>`, `SurfaceView - <package>/...`)."""
    if "layer_name" not in frames.columns or not frames.height:
        return frames
    pkg = frames.select("pid", pl.col("layer_name").str.extract(LAYER_PACKAGE_RE, 1).alias("_pkg")).drop_nulls()
    if not pkg.height:
        return frames
    # the process's package: the one most of its layers name (a layer without one, e.g. StatusBar, takes it too)
    by_pid = pkg.group_by("pid", "_pkg").len().sort(["pid", "len", "_pkg"], descending=[False, True, False]) \
        .unique("pid", keep="first").select("pid", "_pkg")
    return frames.join(by_pid, on="pid", how="left").with_columns(
        pl.coalesce("process", "_pkg").alias("process")).drop("_pkg")


def _frame_timeline_notes(trace: Trace, done: pl.DataFrame, notes: list[str]) -> None:
    """How the complete doFrame frames met FrameTimeline. Said only of a trace that holds FrameTimeline: systrace and
    atrace text cannot hold it, and a capture without its data source has none (the buffer signal says so)."""
    if not trace.frame_timeline.height or not done.height:
        return
    multi = done.group_by("do_frame_id").len().filter(pl.col("len") > 1).height
    if multi:
        notes.append(f"{multi} doFrame(s) fed more than one layer: one frame per FrameTimeline surface frame (layer "
                     "and vsync)")
    n_ft = done.filter(pl.col("ft_ended").is_not_null()).height
    if n_ft < done.height:
        notes.append(f"{done.height - n_ft} of {done.height} doFrame frames have no FrameTimeline row (no buffer "
                     "submitted, or outside the FrameTimeline data)")


def _join_composition(trace: Trace, s: pl.DataFrame, frames: pl.DataFrame, sf: set[int]) -> pl.DataFrame:
    """The first SurfaceFlinger composition starting after the frame's RenderThread work ended."""
    comp = s.filter(pl.col("pid").is_in(list(sf)) & pl.col("name").is_in(SF_COMPOSITION)).select(
        pl.col("ts").alias("comp_ts"), pl.col("dur").alias("composition"))
    if not comp.height:
        return frames.with_columns(pl.lit(None, pl.Int64).alias("composition"),
                                   pl.lit(None, pl.Int64).alias("compose_end_ns"))
    f = frames.sort("end_ns").join_asof(comp.sort("comp_ts"), left_on="end_ns", right_on="comp_ts",
                                        strategy="forward", tolerance=100_000_000, check_sortedness=False)
    return f.with_columns((pl.col("comp_ts") + pl.col("composition")).alias("compose_end_ns")).drop("comp_ts")


def frames_from_frame_timeline(trace: Trace, s: pl.DataFrame, app: str | None, exclude_pids: list[int],
                               notes: list[str]) -> pl.DataFrame | None:
    """Frames from FrameTimeline app surface frames when the trace has no doFrame slices (atrace without the
    gfx/view categories, or no atrace): one per (process, layer, token)."""
    if not trace.frame_timeline.height:
        return None
    pids = None
    if app:
        pids = ft_app_pids(trace, app)
    surf = surface_frames(trace, exclude_pids, pids)
    if not surf.height:
        return None
    f = with_layer_package(_ft_frames(trace, s, surf, 0)).sort("frame_id")
    n = f.filter(pl.col("complete").fill_null(True)).height      # one without an end is in no count
    notes.append(f"no Choreographer#doFrame slices: {n} frames taken from FrameTimeline app surface frames "
                 "(intended vsync to actual end, one per layer and vsync); the main thread stands in for the UI "
                 "thread and RenderThread stages come from its slices in the frame's window")
    return f


def _ft_frames(trace: Trace, s: pl.DataFrame, surf: pl.DataFrame, first_id: int) -> pl.DataFrame:
    """Frames from surface frames alone: start = intended vsync (expected start), end = actual end; the main
    thread (tid = pid) is the UI thread and the process's RenderThread, when it has one, the render thread."""
    f = surf.with_columns(
        pl.coalesce("ft_expected_ts", "ft_actual_start_ns").alias("start_ns"),
        pl.when(pl.col("ft_expected_ts").is_not_null()).then(pl.lit("intended_vsync"))
        .otherwise(pl.lit("ft_actual_start")).alias("start_source"),
        pl.col("ft_actual_end_ns").alias("end_ns"))
    names = {p: trace.process_name(p) for p in f["pid"].unique().drop_nulls().to_list()}
    rts: dict[int, int] = {}
    for t in trace.threads.values():
        if t.name == "RenderThread" and t.pid is not None and t.pid in names:
            rts.setdefault(t.pid, t.tid)
    f = f.sort(["start_ns", "pid", "vsync_id", "layer_name"], nulls_last=True).with_columns(
        (pl.int_range(pl.len(), dtype=pl.Int64) + first_id).alias("frame_id"),
        (pl.col("end_ns") - pl.col("start_ns")).alias("dur_ns"),
        pl.col("pid").replace_strict(names, default=None, return_dtype=pl.Utf8).alias("process"),
        pl.col("pid").alias("ui_tid"),
        pl.col("pid").replace_strict(rts, default=None, return_dtype=pl.Int64).alias("render_tid"),
        pl.lit(None, pl.Int64).alias("do_frame_id"), pl.lit(None, pl.Int64).alias("draw_frame_id"),
        pl.lit(None, pl.Int64).alias("do_frame_ts"), pl.col("ft_ended").fill_null(True).alias("complete"),
        pl.col("ft_actual_start_ns").alias("act_ts"), pl.col("ft_actual_end_ns").alias("act_end"))
    if s.height:
        f = _ft_draw_frames(s, f)
        main = _stage_sums(s, f.select("frame_id", "ui_tid", "act_ts", "act_end"), MAIN_STAGES, "ui_tid", "act")
        f = f.join(main, on="frame_id", how="left")
        rt = _stage_sums(s, f.select("frame_id", "render_tid", "act_ts", "act_end"), RENDER_STAGES, "render_tid",
                         "act")
        f = f.join(rt, on="frame_id", how="left")
    for st in STAGES:
        if st not in f.columns:
            f = f.with_columns(pl.lit(None, pl.Int64).alias(st))
    extra = [c for c in ("draw_frame_ts", "draw_frame_end") if c in f.columns]
    return f.select(list(FRAME_SCHEMA) + extra + list(STAGES))


def _ft_draw_frames(s: pl.DataFrame, f: pl.DataFrame) -> pl.DataFrame:
    """The RenderThread DrawFrame of each FrameTimeline-only frame, so that its cause walk covers the
    RenderThread too: by vsync id where the name carries one, else the last DrawFrame starting in the frame."""
    draw = s.filter(pl.col("name").str.contains(DRAWFRAME_RE) & pl.col("tid").is_in(
        f["render_tid"].drop_nulls().unique().implode())).with_columns(
        pl.col("name").str.extract(DRAWFRAME_RE, 1).cast(pl.Int64).alias("d_vsync"))
    cols = {"draw_frame_id": pl.Int64, "draw_frame_ts": pl.Int64, "draw_frame_end": pl.Int64}
    if not draw.height:
        return f.with_columns([pl.lit(None, t).alias(c) for c, t in cols.items()])
    d = draw.select(pl.col("tid").alias("render_tid"), "d_vsync", pl.col("id").alias("draw_frame_id"),
                    pl.col("ts").alias("draw_frame_ts"), (pl.col("ts") + pl.col("dur")).alias("draw_frame_end"))
    by_id = f.select("frame_id", "render_tid", pl.col("vsync_id").alias("d_vsync")).join(
        d.filter(pl.col("d_vsync").is_not_null()).unique(["render_tid", "d_vsync"], keep="first"),
        on=["render_tid", "d_vsync"], how="inner").select("frame_id", *cols)
    rest = f.filter(~pl.col("frame_id").is_in(by_id["frame_id"].implode()) & pl.col("render_tid").is_not_null())
    win = rest.select("frame_id", "render_tid", "start_ns", "end_ns").sort("end_ns").join_asof(
        d.sort("draw_frame_ts"), left_on="end_ns", right_on="draw_frame_ts", by="render_tid", strategy="backward",
        check_sortedness=False)
    win = win.filter(pl.col("draw_frame_ts").is_not_null() & (pl.col("draw_frame_ts") >= pl.col("start_ns")))
    matched = pl.concat([by_id, win.select("frame_id", *cols)])
    return f.join(matched, on="frame_id", how="left")
