"""Presents LBO results: Table 5-shaped text tables (LBO with 95% CI per benchmark, collector and heap factor, OOM
cells marked, geometric means), the checks against the papers with the numbers side by side, and plots of LBO
against heap factor per collector (matplotlib, PNG or SVG)."""
from __future__ import annotations

import math
from pathlib import Path

from droidlag.gc.lbo.analysis import LboCell, LboTable
from droidlag.gc.lbo.papers import Check

METRIC_TITLES = {"wall": "wall clock", "task_clock": "task clock", "cycles": "cycles",
                 "instructions": "instructions"}


def _hf(h: float | None) -> str:
    return "n/a" if h is None else f"{h:.2f}x"


def cell_text(c: LboCell | None) -> str:
    """`1.234 [1.200,1.270]`, `OOM(k/n)`, `T/O(k/n)` (out of time), or `-` (not run / no baseline); an unbounded interval shows as `[lo,inf]`."""
    if c is None:
        return "-"
    if c.oom:
        label = "OOM" if c.n_oom else "T/O"
        return f"{label}({c.n_oom + c.n_timeout}/{c.n + c.n_oom + c.n_timeout})"
    if c.lbo is None:
        return "-"
    if c.low is None or math.isnan(c.low):
        return f"{c.lbo:.3f} [n<2]" if c.n < 2 else f"{c.lbo:.3f} [unbounded]"
    hi = "inf" if math.isinf(c.high or 0.0) else f"{c.high:.3f}"
    return f"{c.lbo:.3f} [{c.low:.3f},{hi}]"


def table_text(table: LboTable) -> str:
    """One block per heap factor: benchmarks as rows, collectors as columns, geomean as the last row."""
    lines = [f"LBO, {METRIC_TITLES.get(table.metric, table.metric)} (mean cost / baseline; 95% CI by Fieller)"]
    cols = table.collectors
    width = 26
    for hf in table.heap_factors:
        present = [c for c in cols if any(x.collector == c and x.heap_factor == hf for x in table.cells)]
        lines.append(f"  heap {_hf(hf)}" + "".join(f"{c:>{width}}" for c in present) + "   baseline")
        for bm in table.benchmarks:
            cells = [table.cell(bm, c, hf) for c in present]
            if not any(cells):
                continue
            base = next((x.baseline_collector for x in cells if x and x.baseline_collector), "-")
            lines.append(f"  {bm:<{len(_hf(hf)) + 5}}" + "".join(f"{cell_text(x):>{width}}" for x in cells)
                         + f"   {base}")
        gm = []
        for c in present:
            v, n, k = table.geomeans.get((c, hf), (None, 0, 0))
            gm.append("-" if v is None else f"{v:.3f} (n={n}{f', {k} OOM' if k else ''})")
        lines.append(f"  {'geomean':<{len(_hf(hf)) + 5}}" + "".join(f"{x:>{width}}" for x in gm))
    return "\n".join(lines)


def checks_text(checks: list[Check], title: str) -> str:
    """Each claim with `holds` / `does not hold` / `cannot say`, and ours beside the papers'."""
    lines = [title]
    for c in checks:
        verdict = "cannot say" if c.holds is None else ("holds" if c.holds else "does NOT hold")
        lines.append(f"  [{verdict}] {c.claim}\n      ours: {c.ours}\n      papers: {c.papers}")
    return "\n".join(lines)


def plot_lbo(tables: dict[str, LboTable], out: Path) -> list[Path]:
    """One figure per metric: geomean LBO (and each benchmark's LBO with its CI, thin) against heap factor, one
    line per collector. Written as <out stem>-<metric><suffix>; suffix .png or .svg (default .png)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    suffix = out.suffix if out.suffix in (".png", ".svg") else ".png"
    written = []
    for metric, table in tables.items():
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        hfs = [h for h in table.heap_factors if h is not None]
        for i, coll in enumerate(table.collectors):
            colour = f"C{i}"
            pts = [(h, v) for h in hfs if (v := table.geomeans.get((coll, h), (None, 0, 0))[0]) is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=colour, label=coll, lw=2)
            for bm in table.benchmarks:
                bars = _bounded(table, bm, coll, hfs)
                if bars and len(table.benchmarks) > 1:
                    ax.errorbar([b[0] for b in bars], [b[1] for b in bars],
                                yerr=[[b[1] - b[2] for b in bars], [b[3] - b[1] for b in bars]],
                                fmt=".", color=colour, alpha=0.35, lw=0.8)
        ax.axhline(1.0, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("heap size (multiple of the minimum heap)")
        ax.set_ylabel(f"LBO, {METRIC_TITLES.get(metric, metric)}")
        ax.set_title(f"Lower-bound GC overhead ({METRIC_TITLES.get(metric, metric)}), geomean over "
                     f"{len(table.benchmarks)} benchmark(s)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out.with_name(f"{out.stem}-{metric}{suffix}")
        # Same results, same bytes: no creation date, fixed SVG ids.
        with matplotlib.rc_context({"svg.hashsalt": "droidlag"}):
            fig.savefig(path, metadata={"Date": None} if suffix == ".svg" else {"Software": None})
        plt.close(fig)
        written.append(path)
    return written


def _bounded(table: LboTable, bm: str, coll: str, hfs: list) -> list[tuple[float, float, float, float]]:
    """(heap factor, LBO, low, high) of the cells with a finite interval."""
    out = []
    for h in hfs:
        c = table.cell(bm, coll, h)
        if c and c.lbo is not None and c.low is not None and c.high is not None and not math.isnan(c.low) \
                and not math.isinf(c.high):
            out.append((h, c.lbo, c.low, c.high))
    return out


def side_by_side_text(sbs: dict) -> str:
    """Our geomeans at ~2x beside the papers' (different runtimes and collectors: read the trends, not the digits)."""
    hf = sbs["heap_factor"]
    if hf is None:
        return "Our table beside the papers': no heap factors in these results"
    lines = [f"Our geomean LBO at {hf:.2f}x (nearest to the papers' 2x) beside the papers':"]
    for metric, vals in sbs["ours"].items():
        lines.append(f"  ours, {METRIC_TITLES.get(metric, metric):<11}" +
                     "  ".join(f"{c} {v:.3f}" for c, v in sorted(vals.items(), key=lambda kv: kv[1])))
    t5 = sbs["sareen_table5_task_clock_2x"]
    lines.append("  Sareen et al. Table 5, task clock, 2x, ART on Pixel 7 Pro: " +
                 "  ".join(f"{c} {v:.3f}" for c, v in sorted(t5.items(), key=lambda kv: kv[1])))
    cw, cc = sbs["cai_2x_ranges"]["wall"], sbs["cai_2x_ranges"]["cycles"]
    lines.append(f"  Cai et al., OpenJDK 17, modest heap: wall {cw[0]:.2f}-{cw[1]:.2f}, cycles {cc[0]:.2f}-{cc[1]:.2f}"
                 " over Serial, Parallel, G1, Shenandoah, ZGC")
    return "\n".join(lines)
