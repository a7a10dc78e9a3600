"""The fleet page: `droidlag fleet report --db FILE --out DIR` writes DIR/fleet.html (plots inline as SVG) and
DIR/fleet.json from the statistics of droidlag.fleet.stats."""
from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np

from droidlag.report.plots import _svg, plt


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _num(x, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def zipf_plot(stats: dict) -> str:
    """ANR count by app rank on log-log axes with the fitted line."""
    counts = stats["apps"].get("ranked_counts") or []
    fig, ax = plt.subplots(figsize=(6, 3))
    if counts:
        ranks = np.arange(1, len(counts) + 1)
        ax.loglog(ranks, counts, "o", ms=3, color="#4e79a7", label="apps")
        z = stats["apps"]["zipf"]
        if z.get("a") is not None:
            ax.loglog(ranks, 10 ** (z["b"] - z["a"] * np.log10(ranks)), "-", color="#c0392b",
                      label=f"fit a={z['a']:.2f} b={z['b']:.2f} R²={z['r2']:.2f}")
        ax.legend(fontsize=8)
    ax.set_xlabel("app rank")
    ax.set_ylabel("ANRs")
    return _svg(fig)


def windows_plot(stats: dict) -> str:
    """Share of phones with an ANR / SNR / either per ten-day window."""
    ws = stats["ten_day_windows"]["windows"]
    fig, ax = plt.subplots(figsize=(6, 2.6))
    x = np.arange(len(ws))
    for k, (name, colour) in enumerate((("anr", "#e3a21a"), ("snr", "#c0392b"), ("any", "#4e79a7"))):
        ax.bar(x + (k - 1) * 0.27, [100 * (w[name] or 0) for w in ws], 0.27, label=name, color=colour)
    ax.set_xticks(x, [f"days {10 * w['window']}-{10 * w['window'] + 9}" for w in ws], fontsize=7)
    ax.set_ylabel("% of phones")
    ax.legend(fontsize=8)
    return _svg(fig)


def clusters_plot(stats: dict) -> str:
    """Share of events held by each dominant cluster."""
    dom = stats["clusters"]["dominant"]
    fig, ax = plt.subplots(figsize=(6, 2.6))
    ax.bar([f"#{d['cluster']}" for d in dom], [100 * (d["share"] or 0) for d in dom], color="#59a14f")
    ax.set_ylabel("% of events")
    ax.set_xlabel("cluster")
    return _svg(fig)


def _table(head: list[str], rows: list[list]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{th}</tr>{body}</table>"


def _prevalence_rows(block: dict) -> list[list]:
    return [[name, b["phones"], _num(b["anr_per_phone"].get("mean")), _num(b["snr_per_phone"].get("mean")),
             _pct(b["share_with_anr_or_snr"])] for name, b in block.items()]


def fleet_html(stats: dict) -> str:
    """The whole page as one HTML string."""
    prev = stats["prevalence"]
    a = prev["all"]
    parts = [
        "<h1>Fleet</h1>",
        f"<p>{stats['devices']} phones, {stats['events']['anr']} ANRs, {stats['events']['snr']} SNRs, "
        f"{stats['events']['sessions']} frame sessions.</p>",
        "<h2>Prevalence</h2>",
        _table(["", "phones", "ANR/phone", "SNR/phone", "phones with ANR or SNR"],
               [["all", a["phones"], _num(a["anr_per_phone"].get("mean")), _num(a["snr_per_phone"].get("mean")),
                 _pct(a["share_with_anr_or_snr"])]]),
        "<h3>By Android version</h3>", _table(["version", "phones", "ANR/phone", "SNR/phone", "with events"],
                                              _prevalence_rows(prev["by_android_version"])),
        "<h3>By model</h3>", _table(["model", "phones", "ANR/phone", "SNR/phone", "with events"],
                                    _prevalence_rows(prev["by_model"])),
        "<h2>Phones with events per ten days</h2>", windows_plot(stats),
        "<h2>Correlations</h2>",
        _table(["pair", "r"], [[k, _num(v)] for k, v in stats["correlations"].items()]),
        "<h2>Intervals (days)</h2>",
        _table(["between", "n", "median", "mean", "p90"],
               [[k, v["n"], _num(v.get("median_days")), _num(v.get("mean_days")), _num(v.get("p90_days"))]
                for k, v in stats["intervals"].items()]),
        "<h2>ANRs by app (Zipf)</h2>", zipf_plot(stats),
        f"<p>top-10 apps hold {_pct(stats['apps']['top10_share'])} of ANRs.</p>",
        "<h2>Root-cause clusters</h2>", clusters_plot(stats),
        f"<p>{stats['clusters']['clusters']} clusters; the three largest hold {_pct(stats['clusters']['top3_share'])}"
        " of events.</p>",
        _table(["cause", "events", "share"], [[k, v["events"], _pct(v["share"])] for k, v in stats["causes"].items()]),
        "<h2>Cohorts</h2>", _cohorts(stats["cohorts"]),
        "<h2>Android vitals</h2>", _vitals(stats["vitals"]),
    ]
    style = ("body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}")
    return f"<!doctype html><meta charset=utf-8><title>droidlag fleet</title><style>{style}</style>" + "".join(parts)


def _cohorts(c: dict) -> str:
    rows = []
    for name, v in c.items():
        if name == "comparison":
            continue
        rows.append([name, v["phones"], _num(v["anr_per_phone"]["mean"]), _num(v["snr_per_phone"]["mean"])])
    out = _table(["cohort", "phones", "ANR/phone", "SNR/phone"], rows) if rows else "<p>no cohorts in the store</p>"
    comp = c.get("comparison")
    if comp:
        def ci(x):
            return "-" if not x else f"[{100 * x[0]:+.0f}%, {100 * x[1]:+.0f}%]"
        out += (f"<p>{html.escape(comp['after'])} against {html.escape(comp['before'])}: ANR "
                f"{100 * comp['anr_change']:+.0f}% (95% CI {ci(comp['anr_change_ci95'])}), SNR "
                f"{100 * comp['snr_change']:+.0f}% (95% CI {ci(comp['snr_change_ci95'])}) per phone.</p>")
    return out


def _vitals(v: dict) -> str:
    return _table(["measure", "value", "bad-behaviour threshold"], [
        ["user-perceived ANR rate (phones)", _pct(v["user_perceived_anr_rate"]), _pct(v["anr_bad_behaviour_threshold"])],
        ["slow-rendering sessions", _pct(v["slow_session_share"]), "-"],
        ["frozen-frame sessions", _pct(v["frozen_session_share"]), "-"]])


def write_fleet_report(stats: dict, out: str | Path) -> Path:
    """Write out/fleet.html and out/fleet.json; returns the HTML path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "fleet.json").write_text(json.dumps(stats, indent=1, default=str))
    page = out / "fleet.html"
    page.write_text(fleet_html(stats), encoding="utf-8")
    return page
