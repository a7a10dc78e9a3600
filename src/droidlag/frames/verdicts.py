"""Naive and buffer-aware SR/FF verdicts per frame.

Naive: duration against 16.67 ms (and the panel's vsync period) and 700 ms. Buffer-aware: a long frame is SR/FF
only if the user saw it, i.e. no ready buffer was waiting for SurfaceFlinger. The signal, best first:
FrameTimeline (ground truth), the BufferQueue queued-count counter at the frame's deadline, else "not possible".
"""
from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from droidlag.frames.config import FramesConfig
from droidlag.models.trace import Trace

OK, SR, FF, NOT_POSSIBLE = "ok", "SR", "FF", "not possible"
# A frame whose end is not in the trace (FrameTimeline end event or doFrame/DrawFrame end missing): its duration
# is unknown, so it takes no verdict and is counted apart.
INCOMPLETE = "incomplete"
APP_JANK = "App Deadline Missed"


def naive_expr(dur: pl.Expr, sr_ns: int | pl.Expr, ff_ns: int) -> pl.Expr:
    return (pl.when(dur > ff_ns).then(pl.lit(FF)).when(dur > sr_ns).then(pl.lit(SR)).otherwise(pl.lit(OK)))


def ft_is_app_jank(jank_type: pl.Expr) -> pl.Expr:
    """FrameTimeline says the app missed its deadline (alone or with other types). Buffer Stuffing alone is
    late-but-smooth; SurfaceFlinger/display jank types are not the app's frame."""
    return jank_type.fill_null("").str.contains(APP_JANK, literal=True)


def bufferqueue_counter(trace: Trace, process: str | None, layer_name: str | None,
                        sf_pids: set[int] | frozenset[int]) -> tuple[str | None, pl.DataFrame | None]:
    """The SurfaceFlinger BufferQueue counter (queued buffers) of the app's layer: `C|<sf pid>|<layer>|<n>`.
    Picks the layer named by FrameTimeline if given, else the busiest counter whose name holds the package and
    looks like a layer (has '/' or '#'). Returns (name, table of ts/value) or (None, None)."""
    c = trace.counters
    if not c.height or not process:
        return None, None
    pkg = process.split(":")[0]
    cand = c.filter(pl.col("name").str.contains(pkg, literal=True) & pl.col("cpu").is_null())
    if sf_pids:
        cand = cand.filter(pl.col("pid").is_in(list(sf_pids)) | pl.col("pid").is_null())
    if not cand.height:
        return None, None
    if layer_name is not None:
        exact = cand.filter(pl.col("name") == layer_name)
        if exact.height:
            return layer_name, exact.select("ts", "value").sort("ts")
    cand = cand.filter((pl.col("name").str.contains("/", literal=True) | pl.col("name").str.contains("#", literal=True))
                       & ~pl.col("name").str.starts_with("SurfaceView"))
    if not cand.height:
        return None, None
    # Only small integers: a queued-buffer count, not some other app counter.
    stats = cand.group_by("name").agg(pl.len().alias("n"), pl.col("value").max().alias("mx"),
                                      pl.col("value").min().alias("mn"))
    stats = stats.filter((pl.col("mx") <= 8) & (pl.col("mn") >= 0)).sort(["n", "name"], descending=[True, False])
    if not stats.height:
        return None, None
    name = stats["name"][0]
    return name, cand.filter(pl.col("name") == name).select("ts", "value").sort("ts")


def _value_at(counter: pl.DataFrame, times: np.ndarray) -> np.ndarray:
    """Counter value in effect at each time (last sample at or before it); NaN before the first sample."""
    ts = counter["ts"].to_numpy()
    vals = counter["value"].to_numpy()
    idx = np.searchsorted(ts, times, side="right") - 1
    out = np.full(times.shape, np.nan)
    ok = idx >= 0
    out[ok] = vals[idx[ok]]
    return out


def apply_verdicts(trace: Trace | None, frames: pl.DataFrame, config: FramesConfig, vsync_period_ns: int | None,
                   sf_pids: set[int] | frozenset[int] = frozenset()) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Add naive_verdict, naive_vsync_verdict, verdict, buffer_signal, buffer_evidence and queued_at_deadline.
    Returns the table and, per process, the BufferQueue counter used (or why none)."""
    sr, ff = config.sr_threshold_ns, config.ff_threshold_ns
    period = vsync_period_ns
    # the second naive line: the panel's own period, per frame where the rate changed during the trace
    per_frame = "vsync_period_ns" in frames.columns and frames.height and (frames["vsync_period_ns"] > 0).all()
    budget: pl.Expr | int | None = pl.col("vsync_period_ns") if per_frame else period
    f = frames.with_columns(naive_expr(pl.col("dur_ns"), sr, ff).alias("naive_verdict"),
                            (naive_expr(pl.col("dur_ns"), budget, ff) if budget is not None
                             else pl.lit(None, pl.Utf8)).alias("naive_vsync_verdict"))
    if not f.height:
        return f.with_columns(pl.lit(None, pl.Utf8).alias(c) for c in ("verdict", "buffer_signal",
                                                                       "buffer_evidence",
                                                                       "bufferqueue_verdict")).with_columns(
            pl.lit(None, pl.Float64).alias("queued_at_deadline")), {}
    # Per-frame queued count at the deadline (start + one budget), per process.
    queued = np.full(f.height, np.nan)
    counters_used: dict[str, Any] = {}
    if trace is not None:
        budget = period or sr
        deadline = (f["start_ns"] + budget).to_numpy()
        for (pid, proc), sub_idx in _groups(f):
            layers = f["layer_name"][sub_idx].drop_nulls() if "layer_name" in f.columns else pl.Series([])
            layer = layers[0] if len(layers) else None
            name, counter = bufferqueue_counter(trace, proc, layer, sf_pids)
            counters_used[proc or str(pid)] = name
            if counter is not None and counter.height:
                queued[sub_idx] = _value_at(counter, deadline[sub_idx])
    f = f.with_columns(pl.Series("queued_at_deadline", queued, dtype=pl.Float64).fill_nan(None))
    has_ft = pl.col("ft_jank_type").is_not_null()
    long_ = pl.col("naive_verdict") != OK
    ft_jank = ft_is_app_jank(pl.col("ft_jank_type"))
    severity = pl.when(pl.col("dur_ns") > ff).then(pl.lit(FF)).otherwise(pl.lit(SR))
    q = pl.col("queued_at_deadline")
    f = f.with_columns(
        pl.when(has_ft).then(pl.lit("frametimeline"))
        .when(q.is_not_null()).then(pl.lit("bufferqueue"))
        .otherwise(pl.lit("none")).alias("buffer_signal"),
        pl.when(has_ft).then(pl.when(ft_jank).then(severity).otherwise(pl.lit(OK)))
        .when(~long_).then(pl.lit(OK))
        .when(q.is_not_null()).then(pl.when(q < 1).then(pl.col("naive_verdict")).otherwise(pl.lit(OK)))
        .otherwise(pl.lit(NOT_POSSIBLE)).alias("verdict"),
        # The BufferQueue signal on its own, kept to measure it against FrameTimeline where both exist.
        pl.when(q.is_null()).then(pl.lit(None, pl.Utf8)).when(~long_ | (q >= 1)).then(pl.lit(OK))
        .otherwise(pl.col("naive_verdict")).alias("bufferqueue_verdict"),
        pl.when(has_ft).then(pl.format("FrameTimeline: {} / {}", pl.col("ft_jank_type"), pl.col("ft_present_type")))
        .when(~long_).then(pl.lit("within the frame budget"))
        .when(q.is_not_null()).then(pl.format("{} queued buffer(s) ready at the deadline", q.cast(pl.Int64)))
        .otherwise(pl.lit("long frame; no FrameTimeline row and no BufferQueue counter for this layer, so "
                          "whether a ready buffer hid it is not known")).alias("buffer_evidence"),
    )
    return _mark_incomplete(f), counters_used


def _mark_incomplete(f: pl.DataFrame) -> pl.DataFrame:
    if "complete" not in f.columns:
        return f
    done = pl.col("complete").fill_null(True)
    return f.with_columns(
        *[pl.when(done).then(pl.col(c)).otherwise(pl.lit(INCOMPLETE)).alias(c)
          for c in ("verdict", "naive_verdict", "naive_vsync_verdict", "bufferqueue_verdict")],
        pl.when(done).then(pl.col("buffer_evidence")).otherwise(
            pl.lit("the frame's end is not in the trace (no end event): its duration is unknown, so it is counted "
                   "apart and takes no verdict")).alias("buffer_evidence"))


def _groups(f: pl.DataFrame) -> list[tuple[tuple[int, str | None], np.ndarray]]:
    pids = f["pid"].to_numpy()
    procs = f["process"].to_list()
    keys: dict[tuple[int, str | None], list[int]] = {}
    for i, (p, n) in enumerate(zip(pids, procs)):
        keys.setdefault((int(p), n), []).append(i)
    return [(k, np.array(v)) for k, v in keys.items()]
