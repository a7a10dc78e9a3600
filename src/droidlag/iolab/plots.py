"""Charts for the I/O lab (matplotlib, imported only when a plot is asked for)."""
from __future__ import annotations


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_sim(out: dict, path: str) -> None:
    """Mean and p99 foreground response time per policy, with the FG-only time as a line."""
    plt = _plt()
    runs = out["runs"]
    names = [r["policy"] for r in runs]
    fig, ax = plt.subplots(figsize=(1.2 * len(names) + 3, 4))
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], [r["mean_ms"] for r in runs], 0.4, label="mean")
    ax.bar([x + 0.2 for x in xs], [r["p99_ms"] for r in runs], 0.4, label="p99")
    ax.axhline(out["fg_only"]["mean_ms"], color="k", ls="--", lw=1, label="FG only")
    ax.set_xticks(list(xs), names)
    ax.set_ylabel("foreground response time (ms)")
    ax.set_title(f"{out['scenario']} on {out['device']}, {out['background']} background apps")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _position(r: dict) -> tuple[float | None, float | None]:
    """Where droidlag's value and the paper's figure sit on a scale where the tolerance band is [0, 1]
    (None when the row has no numeric band). An open band (no upper bound) is [0, 1] from its lower edge
    at the width of the value itself."""
    lo, hi, v = r.get("band_low"), r.get("band_high"), r.get("value")
    if lo is None or v is None:
        return None, None
    if hi is None:
        hi = lo + max(abs(v - lo), 1e-9) * 2
    width = (hi - lo) or 1.0
    pv = r.get("paper_value")
    return (v - lo) / width, (None if pv is None else (pv - lo) / width)


def plot_reproduce(res: dict, path: str) -> None:
    """One line per figure: the tolerance band (shaded, drawn as [0, 1]), the paper's figure (black tick) and
    droidlag's (a dot, green within the band, red outside; an arrow at the edge when far off)."""
    plt = _plt()
    rows = res["rows"]
    fig, ax = plt.subplots(figsize=(13, 0.42 * len(rows) + 1.6))
    clip_lo, clip_hi = -1.6, 2.6
    for i, r in enumerate(rows):
        x, px = _position(r)
        ok = r["within_tolerance"]
        color = "#2e7d32" if ok else "#c62828"
        ax.add_patch(plt.Rectangle((0, i - 0.3), 1, 0.6, color="#c8e6c9", lw=0))
        if px is not None:
            ax.plot([px, px], [i - 0.3, i + 0.3], color="k", lw=1.5)
        if x is None:  # a yes/no figure: inside the band when it holds
            x = 0.5 if ok else clip_lo + 0.1
        if x < clip_lo or x > clip_hi:
            edge = clip_lo + 0.05 if x < clip_lo else clip_hi - 0.05
            ax.annotate("", xy=(edge, i), xytext=(edge - 0.25 if x > clip_hi else edge + 0.25, i),
                        arrowprops={"arrowstyle": "->", "color": color, "lw": 2})
        else:
            ax.plot([x], [i], "o", color=color, ms=8)
        label = f"paper {r['paper']}  droidlag {r['droidlag']}"
        label = label if len(label) <= 60 else label[:59] + "…"
        ax.text(clip_hi + 0.05, i, label, va="center", fontsize=7.5,
                color=color, parse_math=False)
    ax.set_yticks(range(len(rows)), [r["figure"] for r in rows], fontsize=8)
    for lab in ax.get_yticklabels():
        lab.set_parse_math(False)
    ax.set_xlim(clip_lo, clip_hi)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xticks([0, 1], ["band low", "band high"])
    ax.grid(axis="x", alpha=0.3)
    n_ok = sum(r["within_tolerance"] for r in rows)
    ax.set_title(f"droidlag iolab reproduce: {n_ok}/{len(rows)} figures within tolerance (shaded: the tolerance, "
                 "black tick: the paper, dot: droidlag)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 0.8, 1))  # the right fifth holds the values written beside each line
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_wam(out: dict, path: str) -> None:
    """WAM: per policy, the sync stalls over 5 s and the random write speed; for a sweep, write speed and
    trim time per day against S_d with the knee marked."""
    plt = _plt()
    if "points" in out:
        pts = out["points"]
        xs = [p["threshold_gb"] for p in pts]
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.plot(xs, [p["trim_s_per_day"] for p in pts], "o-", color="tab:red", label="trim time per day")
        ax.set_xlabel("S_d threshold (GB deleted before a batched trim)")
        ax.set_ylabel("trim time per day (s)", color="tab:red")
        ax2 = ax.twinx()
        ax2.plot(xs, [p["rand_write_mbps"] for p in pts], "s--", color="tab:blue", label="random write")
        ax2.set_ylabel("random write speed (MB/s)", color="tab:blue")
        if out.get("knee_gb") is not None:
            ax.axvline(out["knee_gb"], color="k", ls=":", lw=1)
            ax.annotate(f"knee {out['knee_gb']:g} GB", (out["knee_gb"], ax.get_ylim()[1]), ha="left", va="top")
        ax.set_title("Practical WAM: the S_d sweep", math_fontfamily="dejavusans")
    else:
        runs = out["runs"]
        names = [r["policy"] for r in runs]
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4))
        ax.bar(names, [r["anr_stalls"] for r in runs], color="tab:red", label="app sync > 5 s (ANR)")
        ax.bar(names, [r["snr_stalls"] for r in runs], color="k", label="system sync > 60 s (SNR)")
        ax.set_ylabel(f"stalls in {out['days']} day(s)")
        ax.legend()
        xs = list(range(len(names)))
        ax2.bar([x - 0.2 for x in xs], [r["rand_write_mbps"] for r in runs], 0.4, label="random")
        ax2.bar([x + 0.2 for x in xs], [r["seq_write_mbps"] for r in runs], 0.4, label="sequential")
        ax2.set_xticks(list(xs), names)
        ax2.set_ylabel("write speed (MB/s)")
        ax2.legend(loc="lower right")
        fig.suptitle("WAM policies: fsync stalls and write speed")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
