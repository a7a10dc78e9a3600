"""Per-trace summary of frames: counts and rates (naive and buffer-aware), frame-time percentiles, causes ranked,
intervals between consecutive SR/FF, and agreement with FrameTimeline where it exists."""
from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from droidlag.frames.results import CauseRank, FrameCause, FramesSummary, Intervals, VsyncVerdicts
from droidlag.frames.verdicts import FF, NOT_POSSIBLE, OK, SR, ft_is_app_jank


def _pct(n: int | None, total: int) -> float | None:
    """Percent of total (unrounded); None without a count or a total."""
    return None if n is None or not total else 100.0 * n / total


def confusion(pred: pl.Series, truth: pl.Series) -> dict[str, Any]:
    """2x2 table of a jank verdict against ground truth, with precision, recall and accuracy."""
    p = pred.to_numpy().astype(bool)
    t = truth.to_numpy().astype(bool)
    tp, fp = int((p & t).sum()), int((p & ~t).sum())
    fn, tn = int((~p & t).sum()), int((~p & ~t).sum())
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "precision": round(tp / (tp + fp), 4) if tp + fp else None,
            "recall": round(tp / (tp + fn), 4) if tp + fn else None,
            "accuracy": round((tp + tn) / len(p), 4) if len(p) else None}


def frametimeline_agreement(frames: pl.DataFrame) -> dict[str, Any] | None:
    """How the naive verdicts (16.67 ms and the panel's period) and the BufferQueue-based verdict agree with
    FrameTimeline's app jank ("App Deadline Missed") on the frames FrameTimeline covers."""
    f = frames.filter(pl.col("ft_jank_type").is_not_null())
    if not f.height:
        return None
    truth = f.select(ft_is_app_jank(pl.col("ft_jank_type"))).to_series()
    out = {"frames": f.height, "frametimeline_app_jank": int(truth.sum()),
           "buffer_stuffing_only": int((f["ft_jank_type"] == "Buffer Stuffing").sum()),
           "naive_16ms": confusion(f["naive_verdict"] != OK, truth)}
    if f["naive_vsync_verdict"].null_count() < f.height:
        out["naive_vsync_period"] = confusion(f["naive_vsync_verdict"].fill_null(OK) != OK, truth)
    bq = f.filter(pl.col("bufferqueue_verdict").is_not_null())
    if bq.height:
        out["bufferqueue"] = confusion(bq["bufferqueue_verdict"] != OK,
                                       bq.select(ft_is_app_jank(pl.col("ft_jank_type"))).to_series())
    else:
        out["bufferqueue"] = "not possible: no BufferQueue counter for these layers in the trace"
    stuffed = f.filter(pl.col("ft_jank_type") == "Buffer Stuffing")
    out["buffer_stuffing_naive_sr"] = int((stuffed["naive_verdict"] != OK).sum())
    out["by_layer"] = agreement_by_layer(f)
    return out


def agreement_by_layer(f: pl.DataFrame) -> list[dict[str, Any]]:
    """The same agreement per app surface (process and layer): frames, FrameTimeline app jank, and the naive
    16.67 ms verdict's true/false positives and misses against it; busiest layer first."""
    if "layer_name" not in f.columns:
        return []
    out = []
    keys = f.select("pid", "process", "layer_name").unique().sort(["pid", "layer_name"], nulls_last=True)
    for pid, process, layer in keys.iter_rows():
        part = f.filter((pl.col("pid") == pid) & (pl.col("layer_name").eq_missing(layer)))
        truth = part.select(ft_is_app_jank(pl.col("ft_jank_type"))).to_series()
        c = confusion(part["naive_verdict"] != OK, truth)
        out.append({"pid": pid, "process": process, "layer": layer, "frames": part.height,
                    "frametimeline_app_jank": int(truth.sum()), "naive_sr_ff": c["tp"] + c["fp"],
                    "agree": c["tp"] + c["tn"], "naive_tp": c["tp"], "naive_fp": c["fp"], "naive_fn": c["fn"],
                    "precision": c["precision"], "recall": c["recall"]})
    return sorted(out, key=lambda d: (-d["frames"], d["pid"], d["layer"] or ""))


def intervals(frames: pl.DataFrame, col: str) -> Intervals:
    """Median gap (ns) between consecutive SR/FF frames (start to start), and from each FF to the SR before it."""
    bad = frames.filter(pl.col(col).is_in([SR, FF])).sort("start_ns")
    res = Intervals(None, None, col)
    if bad.height >= 2:
        res.median_between_sr_ff_ns = float(np.median(np.diff(bad["start_ns"].to_numpy())))
    gaps = []
    last_sr = None
    for ts, v in bad.select("start_ns", col).iter_rows():
        if v == FF and last_sr is not None:
            gaps.append(ts - last_sr)
        if v == SR:
            last_sr = ts
    if gaps:
        res.median_ff_to_preceding_sr_ns = float(np.median(gaps))
    return res


def rank_summary_causes(causes: list[FrameCause], n_bad: int) -> list[CauseRank]:
    """Causes over all SR/FF frames: in how many frames each stood out, and its mean share there."""
    if not causes:
        return []
    # findings.json v1 averages each frame's share (4 decimals) and sums each frame's cost (whole microseconds) as it
    # shows them: kept so that outputs stay the same
    c = pl.DataFrame([(x.name, x.rank, _shown(x.share, 4), _shown(x.normal_share, 4),
                       _shown(x.evidence.cost_over_budget_ns, 3, 1e6)) for x in causes],
                     schema={"name": pl.Utf8, "rank": pl.Int32, "share": pl.Float64, "normal_share": pl.Float64,
                             "_cost": pl.Float64}, orient="row")
    g = c.group_by("name").agg(pl.len().alias("frames"), (pl.col("rank") == 1).sum().alias("leading"),
                               pl.col("share").mean().alias("mean_share"),
                               pl.col("normal_share").mean().alias("mean_normal_share"),
                               pl.when(pl.col("_cost").is_not_null().any()).then(pl.col("_cost").sum())
                               .alias("cost_ms"))
    # ranked by how many slow frames each cause led, then by the time it cost them over their budget in all
    g = g.sort(["leading", "cost_ms", "frames", "name"], descending=[True, True, True, False], nulls_last=True)
    return [CauseRank(r["name"], r["frames"], r["leading"], _pct(r["frames"], n_bad),
                      r["cost_ms"] * 1e6 if r["cost_ms"] is not None else None, r["mean_share"],
                      r["mean_normal_share"])
            for r in g.iter_rows(named=True)]


def _shown(v: float | None, digits: int, unit: float = 1.0) -> float | None:
    return None if v is None else round(v / unit, digits)


def summarize(frames: pl.DataFrame, causes: list[FrameCause], buffer_signal: str, vsync_period_ns: int | None,
              extra: dict[str, Any] | None = None) -> FramesSummary:
    """Counts, rates and percentiles over the complete frames; frames whose end is not in the trace are counted
    apart (`incomplete_frames`) and take no part in verdicts, percentiles or headlines."""
    incomplete = 0
    if frames.height and "complete" in frames.columns:
        done = frames["complete"].fill_null(True)
        incomplete = int((~done).sum())
        frames = frames.filter(done)
    out = _summarize(frames, causes, buffer_signal, vsync_period_ns, extra)
    out.incomplete_frames = incomplete
    return out


def _summarize(frames: pl.DataFrame, causes: list[FrameCause], buffer_signal: str, vsync_period_ns: int | None,
               extra: dict[str, Any] | None = None) -> FramesSummary:
    n = frames.height
    counts = {v: int((frames["verdict"] == v).sum()) for v in (SR, FF, NOT_POSSIBLE)} if n else {}
    naive = {v: int((frames["naive_verdict"] == v).sum()) for v in (SR, FF)} if n else {SR: 0, FF: 0}
    undecided = counts.get(NOT_POSSIBLE, 0)
    sr = None if undecided else counts.get(SR, 0)
    ff = None if undecided else counts.get(FF, 0)
    dur = frames["dur_ns"].to_numpy() if n else np.array([])
    pct = {f"p{q}": float(np.percentile(dur, q)) for q in (50, 90, 95, 99)} if n else {}
    if n:
        pct["max"] = float(dur.max())
    vs = None
    if n and vsync_period_ns:
        vs_sr = int((frames["naive_vsync_verdict"] == SR).sum())
        vs = VsyncVerdicts(vsync_period_ns, vs_sr, int((frames["naive_vsync_verdict"] == FF).sum()), _pct(vs_sr, n))
    n_bad = int(frames["verdict"].is_in([SR, FF]).sum()) + int((frames["verdict"] == NOT_POSSIBLE).sum()) if n else 0
    out = FramesSummary(
        frames=n, sr=sr, ff=ff, sr_pct=_pct(sr, n), ff_pct=_pct(ff, n), sr_naive=naive[SR], ff_naive=naive[FF],
        sr_naive_pct=_pct(naive[SR], n), ff_naive_pct=_pct(naive[FF], n), not_possible=undecided,
        buffer_signal=buffer_signal, naive_vsync_period=vs, frame_time_ns=pct,
        causes=rank_summary_causes(causes, n_bad),
        intervals=intervals(frames, "naive_verdict" if undecided else "verdict") if n else None)
    if undecided:
        out.not_possible_reason = ("the buffer-aware verdict needs FrameTimeline or a BufferQueue counter; "
                                   f"{undecided} long frame(s) have neither, so sr/ff are not given "
                                   "(see sr_naive/ff_naive)")
    if n and "ft_jank_type" in frames.columns:
        out.frametimeline_agreement = frametimeline_agreement(frames)
    if extra:
        out.sections.update(extra)
    return out


def aggregate_summary(aggregates: list[dict[str, Any]]) -> FramesSummary:
    """The summary of a gfxinfo dump without per-frame rows, from Android's own counters (each process's
    `gfxinfo_summaries` entry): frames = frames rendered; sr_naive/ff_naive counted from the HISTOGRAM (None when no
    process printed one: Android 6, and pastes that leave it out), their percents over the frames of the processes
    that did; no buffer-aware verdict (sr/ff None). `sections["counts_from"]` says where each figure comes from."""
    total = sum(int(g["total_frames_rendered"]) for g in aggregates)
    hist = [g for g in aggregates if g.get("sr_naive_histogram") is not None]
    hist_frames = sum(int(g["total_frames_rendered"]) for g in hist)
    sr = sum(int(g["sr_naive_histogram"]) for g in hist) if hist else None
    ff = sum(int(g.get("ff_naive_histogram") or 0) for g in hist) if hist else None
    out = FramesSummary(frames=total, sr=None, ff=None, sr_pct=None, ff_pct=None, sr_naive=sr, ff_naive=ff,
                        sr_naive_pct=_pct(sr, hist_frames), ff_naive_pct=_pct(ff, hist_frames),
                        not_possible=(sr or 0) + (ff or 0), buffer_signal="none", naive_vsync_period=None,
                        frame_time_ns={}, causes=[], intervals=None)
    out.not_possible_reason = ("no per-frame rows: Android's summary holds no deadlines and no buffer counts, so the "
                               "buffer-aware sr/ff are not given; sr_naive/ff_naive are counted from its HISTOGRAM"
                               if hist else "no per-frame rows and no HISTOGRAM: neither SR/FF count is known; "
                               "Android's own janky count is in counts_from")
    out.sections["counts_from"] = _counts_from(aggregates, hist, hist_frames)
    return out


def _counts_from(aggregates: list[dict[str, Any]], hist: list[dict[str, Any]], hist_frames: int) -> dict[str, Any]:
    """Where an aggregate summary's figures come from, and Android's own janky count beside them."""
    janky = [g for g in aggregates if g.get("janky_frames") is not None]
    n_janky = sum(int(g["janky_frames"]) for g in janky)
    janky_frames = sum(int(g["total_frames_rendered"]) for g in janky)
    rules = sorted({str(g.get("janky_rule")) for g in janky})
    return {"source": "android_summary",
            "frames": ("Total frames rendered" if not any(g.get("total_from_histogram") for g in aggregates)
                       else "Total frames rendered, or the HISTOGRAM's sum where it could not be read"),
            "sr_naive": "HISTOGRAM buckets 17ms to 650ms" if hist else None,
            "ff_naive": "HISTOGRAM buckets from 700ms" if hist else None,
            "processes": len(aggregates), "processes_with_histogram": len(hist), "histogram_frames": hist_frames,
            "janky_frames": n_janky if janky else None,
            "janky_percent": round(100.0 * n_janky / janky_frames, 2) if janky and janky_frames else None,
            "janky_rule": rules[0] if len(rules) == 1 else (rules or None)}
