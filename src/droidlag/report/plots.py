"""Plots for the HTML report, as inline SVG text (matplotlib, no network, no files)."""
from __future__ import annotations

import io

import matplotlib

matplotlib.use("svg")
# The same input gives the same report, byte for byte: fixed ids in the SVG, no creation date.
matplotlib.rcParams["svg.hashsalt"] = "droidlag"
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from droidlag.frames.config import FramesConfig  # noqa: E402

SR_MS, FF_MS = FramesConfig().sr_threshold_ns / 1e6, FramesConfig().ff_threshold_ns / 1e6
VERDICT_COLOURS = {"ok": "#4c9f70", "SR": "#e3a21a", "FF": "#c0392b", "not possible": "#8e8e8e"}
STAGE_COLOURS = ["#4e79a7", "#59a14f", "#9c755f", "#f28e2b", "#edc948", "#b07aa1", "#76b7b2", "#ff9da7",
                 "#bab0ac", "#e15759"]


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.find("<svg"):]   # drop the XML prolog and DOCTYPE: the SVG sits inside HTML


def frame_time_histogram(durations_ms: list[float], title: str) -> str:
    """Distribution of frame times (ms) with the SR and FF thresholds marked."""
    fig, ax = plt.subplots(figsize=(7, 2.6))
    if durations_ms:
        top = max(max(durations_ms), SR_MS * 2)
        bins = [i * top / 60 for i in range(61)]
        ax.hist(durations_ms, bins=bins, color="#4e79a7")
    ax.axvline(SR_MS, color=VERDICT_COLOURS["SR"], linestyle="--", label="16.67 ms (SR)")
    if durations_ms and max(durations_ms) > FF_MS * 0.8:
        ax.axvline(FF_MS, color=VERDICT_COLOURS["FF"], linestyle="--", label="700 ms (FF)")
    ax.set_xlabel("frame time (ms)")
    ax.set_ylabel("frames")
    if durations_ms and len(durations_ms) > 50:   # a long tail of rare slow frames stays visible
        ax.set_yscale("symlog")
    else:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(title, fontsize=10, parse_math=False)   # titles carry input names: `$` is no math
    ax.legend(fontsize=8)
    return _svg(fig)


# Past this many frames the bars and points of a timeline are drawn as one embedded image inside the SVG (a path per
# bar made the page tens of MB and took a minute to draw for 30k frames); axes, labels and legend stay vector.
RASTER_ABOVE = 2000


def _bars(ax, xs: np.ndarray, heights: np.ndarray, width: float, bottoms: np.ndarray | float, **style) -> None:
    """Bars as one PolyCollection (one artist, however many bars), left-aligned at xs."""
    if not len(xs):
        return
    b = np.broadcast_to(np.asarray(bottoms, dtype=float), xs.shape)
    x1 = xs + width
    verts = np.stack([np.stack([xs, b], 1), np.stack([xs, b + heights], 1), np.stack([x1, b + heights], 1),
                      np.stack([x1, b], 1)], 1)
    ax.add_collection(PolyCollection(verts, **style), autolim=True)


def frame_timeline(frames: list[dict], title: str, t0_ns: int) -> str:
    """Each frame as a bar at its start time (s): stages stacked (ms), outline coloured by verdict."""
    fig, ax = plt.subplots(figsize=(10, 3))
    heavy = len(frames) > RASTER_ABOVE
    stage_names: list[str] = []
    for f in frames:
        for s in (f.get("stages") or {}):
            if s not in stage_names:
                stage_names.append(s)
    xs = np.array([(f["start_ns"] - t0_ns) / 1e9 for f in frames], dtype=float)
    dur = np.array([f["dur_ns"] / 1e6 for f in frames], dtype=float)
    gaps = np.diff(xs)
    gaps = np.sort(gaps[gaps > 0])
    span = float(xs[-1] - xs[0]) if len(xs) > 1 else 1.0
    # bars as wide as the typical gap between frames, but never thinner than a visible sliver of the axis
    width = max(0.8 * float(gaps[len(gaps) // 2]) if len(gaps) else 0.01, span / 400)
    width = min(width, max(span, 0.05) / 40)   # a few frames far apart still get thin bars
    if stage_names:
        bottoms = np.zeros(len(frames))
        for i, s in enumerate(stage_names):
            h = np.array([((f.get("stages") or {}).get(s) or 0) / 1e6 for f in frames], dtype=float)
            _bars(ax, xs, h, width, bottoms, facecolors=STAGE_COLOURS[i % len(STAGE_COLOURS)], linewidths=0,
                  label=s, rasterized=heavy)
            bottoms = bottoms + h
    verdicts = np.array([str(f.get("verdict")) for f in frames])
    for verdict, colour in VERDICT_COLOURS.items():
        if verdict == "ok":
            continue
        m = verdicts == verdict
        _bars(ax, xs[m], dur[m], width, 0.0, facecolors="none", edgecolors=colour, linewidths=1.2,
              rasterized=heavy)
    ax.plot(xs, dur, ".", color="#333333", markersize=2, label="frame time", rasterized=heavy)
    ax.autoscale_view()
    ax.axhline(SR_MS, color=VERDICT_COLOURS["SR"], linestyle="--", linewidth=0.8)
    ax.set_xlabel("time since trace start (s)")
    ax.set_ylabel("ms")
    ax.set_title(title, fontsize=10, parse_math=False)   # titles carry input names: `$` is no math
    if stage_names:
        ax.legend(fontsize=7, ncol=4, loc="upper right")
    return _svg(fig)


def gc_timeline(timeline: dict, title: str) -> str:
    """A process's GC over time: per bucket, the share of wall time in logged collections and in main-thread waits
    for a blocking GC (%), from ProcessGc.timeline."""
    width = timeline["width_ns"]
    n = len(timeline["gc_wall_ns"])
    xs = [i * width / 1e9 for i in range(n)]
    fig, ax = plt.subplots(figsize=(10, 2.6))
    gc = [100 * v / width for v in timeline["gc_wall_ns"]]
    main = [100 * v / width for v in timeline["main_blocked_ns"]]
    ax.bar(xs, gc, width=width / 1e9, align="edge", color="#4e79a7", label="GC running (logged collections)")
    ax.bar(xs, main, width=width / 1e9, align="edge", color="#c0392b", alpha=0.8,
           label="main thread waiting for a blocking GC")
    ax.set_xlabel(f"time since the first GC line (s), {width / 1e9:.0f} s buckets")
    ax.set_ylabel("% of wall time")
    ax.set_title(title, fontsize=10, parse_math=False)
    ax.legend(fontsize=8, loc="upper right")
    return _svg(fig)
