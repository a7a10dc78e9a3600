"""FrameTimeline app surface frames as frames: one per (process, layer, token), every one of them.

One vsync of one process can produce a buffer on several layers (systemui's status bar and navigation bar, the
window manager's transition surfaces): FrameTimeline gives each its own surface frame with its own jank type, so
each is a frame here. A doFrame is joined to every surface frame of its process and vsync id; surface frames
without a doFrame become frames of their own (intended vsync to actual end). A surface frame whose end event is
not in the trace is marked incomplete.
"""
from __future__ import annotations

import polars as pl

from droidlag.models.trace import Trace

FT_COLUMNS: dict[str, pl.DataType | type[pl.DataType]] = {"vsync_id": pl.Int64, "layer_name": pl.Utf8, "ft_actual_start_ns": pl.Int64,
              "ft_actual_end_ns": pl.Int64, "ft_jank_type": pl.Utf8, "ft_present_type": pl.Utf8,
              "ft_ended": pl.Boolean, "ft_expected_ts": pl.Int64, "ft_expected_end_ns": pl.Int64}


def surface_frames(trace: Trace, exclude_pids: list[int] | set[int] | tuple[int, ...] = (),
                   pids: list[int] | None = None) -> pl.DataFrame:
    """One row per app surface frame (actual rows), keyed by (pid, layer_name, vsync_id), with its expected
    (intended) start and end; FT_COLUMNS + pid."""
    ft = trace.frame_timeline
    schema: dict[str, pl.DataType | type[pl.DataType]] = {"pid": pl.Int64} | FT_COLUMNS
    if not ft.height:
        return pl.DataFrame(schema=schema)
    surf = ft.filter((pl.col("scope") == "surface") & ~pl.col("pid").is_in(list(exclude_pids)))
    if pids is not None:
        surf = surf.filter(pl.col("pid").is_in(pids))
    ended = pl.col("ended") if "ended" in surf.columns else pl.lit(True)
    act = surf.filter(pl.col("kind") == "actual").with_columns(
        (pl.col("jank_type").fill_null("None") != "None").alias("_jank"), ended.alias("ft_ended"))
    # the same layer and token twice (a re-sent buffer): one frame, the janky row first
    act = act.sort(["_jank", "ts"], descending=[True, False]).unique(["pid", "layer_name", "token"], keep="first",
                                                                       maintain_order=True)
    act = act.select("pid", pl.col("token").alias("vsync_id"), "layer_name", pl.col("ts").alias("ft_actual_start_ns"),
                     (pl.col("ts") + pl.col("dur")).alias("ft_actual_end_ns"), pl.col("jank_type").alias("ft_jank_type"),
                     pl.col("present_type").alias("ft_present_type"), "ft_ended")
    exp = surf.filter(pl.col("kind") == "expected").select(
        "pid", pl.col("token").alias("vsync_id"), "layer_name", pl.col("ts").alias("ft_expected_ts"),
        (pl.col("ts") + pl.col("dur")).alias("ft_expected_end_ns"))
    # expected rows by layer where they name one, else by (pid, token): the intended vsync is the process's
    by_layer = exp.filter(pl.col("layer_name").is_not_null()).unique(["pid", "layer_name", "vsync_id"], keep="first")
    by_token = exp.unique(["pid", "vsync_id"], keep="first").drop("layer_name").rename(
        {"ft_expected_ts": "_e_ts", "ft_expected_end_ns": "_e_end"})
    out = act.join(by_layer, on=["pid", "layer_name", "vsync_id"], how="left", nulls_equal=True)
    out = out.join(by_token, on=["pid", "vsync_id"], how="left").with_columns(
        pl.coalesce("ft_expected_ts", "_e_ts").alias("ft_expected_ts"),
        pl.coalesce("ft_expected_end_ns", "_e_end").alias("ft_expected_end_ns")).drop("_e_ts", "_e_end")
    out = out.select(list(schema)).cast(schema)  # type: ignore[arg-type]
    return out.sort(["ft_actual_start_ns", "pid", "layer_name"], nulls_last=True)


def join_surface_frames(frames: pl.DataFrame, surf: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """doFrame frames joined to every surface frame of their (pid, vsync id): a doFrame that fed two layers becomes
    two frames. Returns (frames renumbered, surface frames no doFrame matched)."""
    if not surf.height:
        return frames.with_columns([pl.lit(None, t).alias(c) for c, t in FT_COLUMNS.items() if c != "vsync_id"]), surf
    out = frames.join(surf, on=["pid", "vsync_id"], how="left")
    matched = surf.join(frames.select("pid", "vsync_id").drop_nulls().unique(), on=["pid", "vsync_id"], how="semi")
    unmatched = surf.join(matched.select("pid", "vsync_id", "layer_name"), on=["pid", "vsync_id", "layer_name"],
                          how="anti", nulls_equal=True)
    out = out.sort(["frame_id", "layer_name"], nulls_last=True).with_columns(
        pl.int_range(pl.len(), dtype=pl.Int64).alias("frame_id"))
    return out, unmatched


def coverage_note(frames_total: int, n_ft: int, doframes: int) -> str | None:
    if doframes and n_ft < frames_total:
        return (f"{frames_total - n_ft} of {frames_total} frames have no FrameTimeline row (no buffer submitted, "
                "or outside the FrameTimeline data)")
    return None
