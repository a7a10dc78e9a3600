"""LBO tables from invocations: distilled cost (total minus attributable GC cost), the baseline per benchmark and
heap factor (the lowest mean distilled cost over collectors), LBO = mean cost / baseline with a Fieller confidence
interval for the ratio of means, and geometric means across benchmarks with out-of-memory cells shown and excluded.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from droidlag.models.lbo import METRICS, Invocation


@dataclass(frozen=True)
class LboConfig:
    """`confidence`: of the intervals (the papers use 95%). `baseline_scope`: "heap" takes the baseline per benchmark
    and heap factor (the minimum over collectors), "benchmark" the minimum over collectors and heap factors."""

    confidence: float = 0.95
    baseline_scope: str = "heap"


@dataclass(frozen=True)
class LboCell:
    """One benchmark x collector x heap factor for one metric. `lbo`/`low`/`high` are None for OOM cells and where a
    cell has no baseline; `high` is inf when Fieller's interval is unbounded (the baseline's mean is not
    significantly above zero)."""

    benchmark: str
    collector: str
    heap_factor: float | None
    metric: str
    n: int
    n_oom: int
    mean_total: float | None
    mean_distilled: float | None
    baseline_collector: str | None = None
    lbo: float | None = None
    low: float | None = None
    high: float | None = None
    n_timeout: int = 0

    @property
    def oom(self) -> bool:
        """A cell where any invocation ran out of memory (or of time) is shown as such and left out of geomeans."""
        return self.n_oom + self.n_timeout > 0

    def to_dict(self) -> dict:
        return {"benchmark": self.benchmark, "collector": self.collector, "heap_factor": self.heap_factor,
                "metric": self.metric, "n": self.n, "n_oom": self.n_oom, "n_timeout": self.n_timeout,
                "oom": self.oom,
                "mean_total": self.mean_total, "mean_distilled": self.mean_distilled,
                "baseline_collector": self.baseline_collector, "lbo": self.lbo, "ci_low": self.low,
                "ci_high": None if self.high is None or math.isinf(self.high) else self.high}


@dataclass
class LboTable:
    """All cells of one metric, and the geometric mean LBO per collector and heap factor over the benchmarks whose
    cell is usable (`geomeans[(collector, heap_factor)] = (value, benchmarks used, benchmarks OOM)`)."""

    metric: str
    cells: list[LboCell] = field(default_factory=list)
    geomeans: dict[tuple[str, float | None], tuple[float | None, int, int]] = field(default_factory=dict)

    @property
    def collectors(self) -> list[str]:
        return sorted({c.collector for c in self.cells})

    @property
    def heap_factors(self) -> list[float | None]:
        return sorted({c.heap_factor for c in self.cells}, key=lambda h: -1.0 if h is None else h)

    @property
    def benchmarks(self) -> list[str]:
        return sorted({c.benchmark for c in self.cells})

    def cell(self, benchmark: str, collector: str, heap_factor: float | None) -> LboCell | None:
        return next((c for c in self.cells if (c.benchmark, c.collector, c.heap_factor) ==
                     (benchmark, collector, heap_factor)), None)

    def to_dict(self) -> dict:
        return {"metric": self.metric, "cells": [c.to_dict() for c in self.cells],
                "geomeans": [{"collector": c, "heap_factor": h, "lbo": v, "benchmarks": n, "oom": k}
                             for (c, h), (v, n, k) in sorted(self.geomeans.items(), key=lambda kv: (
                                 kv[0][0], -1.0 if kv[0][1] is None else kv[0][1]))]}


def heap_factors(count: int = 9, heap_range: float = 6.0, spread_factor: float = 1.0) -> list[float]:
    """Heap multiples from 1 to `heap_range`, denser near the minimum heap as the public runner spaces them: point n
    of N = count - 1 sits at n + spread_factor / (N - 1) * n(n - 1) / 2, scaled onto [1, heap_range]. With the
    defaults: 1.0, 1.417, 1.893, 2.429, 3.024, 3.679, 4.393, 5.167, 6.0."""
    if count < 2:
        return [1.0]
    big_n = count - 1

    def spread(n: int) -> float:
        return n + (spread_factor / (big_n - 1) * (n * n - n) / 2 if big_n > 1 else 0.0)

    return [1.0 + spread(n) * (heap_range - 1.0) / spread(big_n) for n in range(count)]


def fieller_ratio_ci(mean_a: float, mean_b: float, var_a: float, var_b: float, cov_ab: float, df: float,
                     confidence: float = 0.95) -> tuple[float, float]:
    """Fieller's interval for mean_a / mean_b, where var_a, var_b, cov_ab are the (co)variances of the two *means*
    (a sample variance divided by n). Returns (low, high); (nan, inf) when the interval is unbounded (g >= 1:
    mean_b is not significantly different from zero)."""
    ratio = mean_a / mean_b
    t = float(stats.t.ppf(0.5 + confidence / 2, df))
    g = t * t * var_b / (mean_b * mean_b)
    if g >= 1.0:
        return math.nan, math.inf
    disc = var_a - 2 * ratio * cov_ab + ratio * ratio * var_b - g * (var_a - (cov_ab * cov_ab / var_b if var_b else 0))
    half = t / abs(mean_b) * math.sqrt(max(disc, 0.0))
    centre = ratio - g * cov_ab / var_b if var_b else ratio
    return (centre - half) / (1 - g), (centre + half) / (1 - g)


def geomean(values: list[float]) -> float | None:
    """Geometric mean of positive values; None for an empty list."""
    if not values:
        return None
    return float(math.exp(sum(math.log(v) for v in values) / len(values)))


def _welch_df(var_a: float, n_a: int, var_b: float, n_b: int) -> float:
    """Welch-Satterthwaite degrees of freedom for two independent means with variances-of-the-mean var_a, var_b."""
    den = (var_a * var_a / (n_a - 1) if n_a > 1 else 0.0) + (var_b * var_b / (n_b - 1) if n_b > 1 else 0.0)
    if den == 0:
        return float(max(n_a + n_b - 2, 1))
    return (var_a + var_b) ** 2 / den


def _cell_ci(totals: np.ndarray, base: np.ndarray, same_runs: bool, confidence: float) -> tuple[float, float]:
    """CI of mean(totals)/mean(base). When the baseline is this cell's own collector the two samples are the same
    invocations (total and distilled cost of each), so they are paired: covariance counted, df = n - 1."""
    n_a, n_b = len(totals), len(base)
    if n_a < 2 or n_b < 2:
        return math.nan, math.nan
    var_a, var_b = float(np.var(totals, ddof=1)) / n_a, float(np.var(base, ddof=1)) / n_b
    if same_runs:
        cov = float(np.cov(totals, base, ddof=1)[0, 1]) / n_a
        df = float(n_a - 1)
    else:
        cov = 0.0
        ratio = float(totals.mean() / base.mean())
        df = _welch_df(var_a, n_a, ratio * ratio * var_b, n_b)
    return fieller_ratio_ci(float(totals.mean()), float(base.mean()), var_a, var_b, cov, df, confidence)


def lbo_tables(invocations: list[Invocation], config: LboConfig | None = None) -> dict[str, LboTable]:
    """One LBO table per metric that the invocations measured (wall, task_clock, cycles, instructions, in that
    order, then any other counter)."""
    config = config or LboConfig()
    metrics = [m for m in METRICS if any(m in i.costs for i in invocations)]
    metrics += sorted({m for i in invocations for m in i.costs} - set(metrics))
    return {m: _table(invocations, m, config) for m in metrics}


def _table(invocations: list[Invocation], metric: str, config: LboConfig) -> LboTable:
    groups: dict[tuple, list[Invocation]] = defaultdict(list)
    for inv in invocations:
        if inv.failed or metric in inv.costs:
            groups[(inv.benchmark, inv.collector, inv.heap_factor)].append(inv)
    samples = {}
    timeouts = {}
    for key, invs in groups.items():
        ok = [i for i in invs if not i.failed]
        timeouts[key] = sum(i.timeout for i in invs)
        samples[key] = (np.array([i.costs[metric].total for i in ok], dtype=float),
                        np.array([i.costs[metric].distilled for i in ok], dtype=float), len(invs) - len(ok))
    baselines = _baselines(samples, config.baseline_scope)
    table = LboTable(metric)
    for key, (totals, distilled, n_oom) in sorted(samples.items(), key=lambda kv: _sort_key(kv[0])):
        bm, coll, hf = key
        n_to = timeouts[key]
        cell = LboCell(bm, coll, hf, metric, len(totals), n_oom - n_to,
                       float(totals.mean()) if len(totals) else None,
                       float(distilled.mean()) if len(distilled) else None, n_timeout=n_to)
        base_key = baselines.get((bm, hf) if config.baseline_scope == "heap" else (bm,))
        if n_oom == 0 and len(totals) and base_key is not None:
            base = samples[base_key][1]
            low, high = _cell_ci(totals, base, base_key == key, config.confidence)
            cell = LboCell(bm, coll, hf, metric, len(totals), 0, cell.mean_total, cell.mean_distilled,
                           base_key[1], float(totals.mean() / base.mean()), low, high)
        table.cells.append(cell)
    _fill_geomeans(table)
    return table


def _sort_key(key: tuple) -> tuple:
    bm, coll, hf = key
    return bm, -1.0 if hf is None else hf, coll


def _baselines(samples: dict, scope: str) -> dict[tuple, tuple]:
    """The cell whose mean distilled cost is lowest, per benchmark and heap factor (or per benchmark). OOM cells and
    cells with a non-positive mean are not candidates. A heap-independent cell (heap factor None: the no-GC run,
    whose heap only has to hold everything allocated) is a candidate at every heap factor of its benchmark."""
    means = {key: float(d.mean()) for key, (_t, d, n_oom) in samples.items() if not n_oom and len(d) and d.mean() > 0}
    groups: dict[tuple, list[tuple]] = defaultdict(list)
    factors: dict[str, set] = defaultdict(set)
    for bm, _coll, hf in samples:
        factors[bm].add(hf)
    for key in means:
        bm, _coll, hf = key
        if scope != "heap":
            groups[(bm,)].append(key)
        elif hf is None:
            for h in factors[bm]:
                groups[(bm, h)].append(key)
        else:
            groups[(bm, hf)].append(key)
    return {g: min(keys, key=lambda k: means[k]) for g, keys in groups.items()}


def _fill_geomeans(table: LboTable) -> None:
    by_col_hf: dict[tuple, list[LboCell]] = defaultdict(list)
    for c in table.cells:
        by_col_hf[(c.collector, c.heap_factor)].append(c)
    for key, cells in by_col_hf.items():
        usable = [c.lbo for c in cells if c.lbo is not None and c.lbo > 0]
        table.geomeans[key] = (geomean(usable), len(usable), sum(1 for c in cells if c.oom))
