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


PANEL_COLOURS = ["#7b3294", "#008837", "#0571b0", "#ca0020"]


def _panel_budgets(periods_ms: list[float] | None) -> list[float]:
    """The panel's own vsync periods worth a line of their own (not the 16.67 ms one again)."""
    return sorted({round(p, 3) for p in periods_ms or [] if p and abs(p - SR_MS) > 0.2}, reverse=True)


def frame_time_histogram(durations_ms: list[float], title: str, periods_ms: list[float] | None = None) -> str:
    """Distribution of frame times (ms) with the SR and FF thresholds marked, and the panel's own vsync period(s)
    where the panel is not 60 Hz (90/120 Hz, or a rate that changed during the trace)."""
    fig, ax = plt.subplots(figsize=(7, 2.6))
    if durations_ms:
        top = max(max(durations_ms), SR_MS * 2)
        bins = [i * top / 60 for i in range(61)]
        ax.hist(durations_ms, bins=bins, color="#4e79a7")
    ax.axvline(SR_MS, color=VERDICT_COLOURS["SR"], linestyle="--", label="16.67 ms (SR)")
    for i, p in enumerate(_panel_budgets(periods_ms)):
        ax.axvline(p, color=PANEL_COLOURS[i % len(PANEL_COLOURS)], linestyle=":",
                   label=f"{p:.2f} ms (vsync, {1000 / p:.0f} Hz)")
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


IDLE_GAP_S = 1.0      # a pause between frames longer than this is cut out of the time axis
IDLE_SHOWN_S = 0.1    # ... and drawn this wide, with a dotted line


def compress_idle(starts_s: list[float]) -> tuple[list[float], list[tuple[float, float]]]:
    """Frame start times (s) with idle gaps cut down to IDLE_SHOWN_S, so the chart spans the frames, not the
    seconds nothing was drawn; also each cut as (x on the axis, idle seconds)."""
    out: list[float] = []
    cuts: list[tuple[float, float]] = []
    shift = 0.0
    for i, x in enumerate(starts_s):
        if i and x - starts_s[i - 1] > IDLE_GAP_S:
            gap = x - starts_s[i - 1]
            shift += gap - IDLE_SHOWN_S
            cuts.append((x - shift - IDLE_SHOWN_S / 2, gap))
        out.append(x - shift)
    return out, cuts


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
    ax.add_collection(PolyCollection(verts, **style), autolim=True)  # type: ignore[arg-type]  # an (n, 4, 2) array


def frame_timeline(frames: list[dict], title: str, t0_ns: int) -> str:
    """Each frame as a bar at its start time (s): stages stacked (ms), outline coloured by verdict; the frame
    budget as a line: 16.67 ms, and the panel's own vsync period where it differs (it may change over time)."""
    fig, ax = plt.subplots(figsize=(10, 3))
    heavy = len(frames) > RASTER_ABOVE
    stage_names: list[str] = []
    for f in frames:
        for s in (f.get("stages") or {}):
            if s not in stage_names:
                stage_names.append(s)
    starts, cuts = compress_idle([(f["start_ns"] - t0_ns) / 1e9 for f in frames])
    xs = np.array(starts, dtype=float)
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
    ax.axhline(SR_MS, color=VERDICT_COLOURS["SR"], linestyle="--", linewidth=0.8, label="16.67 ms")
    periods = [(f.get("vsync_period_ns") or 0) / 1e6 for f in frames]
    if any(p and abs(p - SR_MS) > 0.2 for p in periods):
        ax.step(xs, periods, where="post", color=PANEL_COLOURS[0], linestyle=":", linewidth=1,
                label="vsync period (" + "/".join(f"{1000 / p:.0f}" for p in _panel_budgets(periods)) + " Hz)")
    for x, gap in cuts:
        ax.axvline(x, color="#999999", linestyle=":", linewidth=0.8)
        ax.annotate(f"idle {gap:.1f} s", (x, 0), xytext=(2, 2), textcoords="offset points", fontsize=6,
                    color="#666666")
    ax.set_xlabel("time since trace start (s)" + (", idle gaps cut" if cuts else ""))
    ax.set_ylabel("ms")
    ax.set_title(title, fontsize=10, parse_math=False)   # titles carry input names: `$` is no math
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
