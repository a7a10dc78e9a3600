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


def plot_reproduce(res: dict, path: str) -> None:
    """Each figure: within tolerance (green) or not (red), with droidlag's value as text."""
    plt = _plt()
    rows = res["rows"]
    fig, ax = plt.subplots(figsize=(11, 0.38 * len(rows) + 1))
    for i, r in enumerate(rows):
        ax.barh(i, 1, color="#4caf50" if r["within_tolerance"] else "#e57373")
        ax.text(0.02, i, f"{r['figure']}: paper {r['paper']}, droidlag {r['droidlag']}", va="center", fontsize=8)
    ax.set_yticks([])
    ax.set_xticks([])
    ax.invert_yaxis()
    ax.set_title("droidlag iolab reproduce: green = within stated tolerance")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
