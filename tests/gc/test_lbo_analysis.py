"""The LBO analysis: Fieller intervals checked against the delta method and a bootstrap, baselines, OOM cells,
geomeans, heap-factor spacing, and the checks on Sareen et al.'s Table 5."""
from __future__ import annotations

import math

import numpy as np
import pytest

from droidlag.gc.lbo import fieller_ratio_ci, geomean, heap_factors, lbo_tables
from droidlag.gc.lbo.papers import implied_rest_geomean, side_by_side, table5_checks, trend_checks
from droidlag.models.lbo import Cost, Invocation


def test_heap_factors_match_the_public_runner_spacing():
    # The spec quotes running-ng's nine factors with range 6.
    assert [round(h, 3) for h in heap_factors(9, 6.0)] == [1.0, 1.417, 1.893, 2.429, 3.024, 3.679, 4.393, 5.167, 6.0]
    assert heap_factors(5, 3.0, spread_factor=0) == pytest.approx([1.0, 1.5, 2.0, 2.5, 3.0])


def test_fieller_agrees_with_the_delta_method_when_variance_is_small():
    a, b, va, vb = 110.0, 100.0, 0.04, 0.09
    lo, hi = fieller_ratio_ci(a, b, va, vb, 0.0, df=1e9)
    r = a / b
    se = math.sqrt(va / b**2 + a**2 * vb / b**4)  # delta method, independent means
    assert lo == pytest.approx(r - 1.959964 * se, abs=1e-4)
    assert hi == pytest.approx(r + 1.959964 * se, abs=1e-4)


def test_fieller_hand_worked_and_unbounded():
    # a=12, b=10, var_a=var_b=1, cov=0, t(df=1e9)=1.96: g = 1.96^2/100; roots of (a - r b)^2 = t^2 (va + r^2 vb).
    t = 1.959963984540054
    lo, hi = fieller_ratio_ci(12.0, 10.0, 1.0, 1.0, 0.0, df=1e9)
    # Solve the quadratic (b^2 - t^2 vb) r^2 - 2ab r + (a^2 - t^2 va) = 0 directly.
    qa, qb, qc = 100 - t * t, -240.0, 144 - t * t
    roots = sorted(np.roots([qa, qb, qc]).real)
    assert (lo, hi) == pytest.approx(tuple(roots), rel=1e-9)
    lo, hi = fieller_ratio_ci(12.0, 1.0, 1.0, 1.0, 0.0, df=1e9)  # baseline not significantly above zero
    assert math.isnan(lo) and math.isinf(hi)


def test_fieller_covers_like_a_bootstrap():
    """On samples like our runs (5 invocations each), the interval contains the bootstrap's middle 95% of the
    ratio of means for the most part: a different route to the same quantity."""
    rng = np.random.default_rng(15)
    x, y = rng.normal(130, 2, 5), rng.normal(100, 1.5, 5)
    from droidlag.gc.lbo.analysis import _cell_ci
    lo, hi = _cell_ci(x, y, False, 0.95)
    boots = [rng.choice(x, 5).mean() / rng.choice(y, 5).mean() for _ in range(4000)]
    b_lo, b_hi = np.percentile(boots, [2.5, 97.5])
    assert lo < x.mean() / y.mean() < hi
    # t with few df is wider than the bootstrap (which underestimates spread at n=5), but of the same order.
    assert lo <= b_lo and hi >= b_hi and (hi - lo) < 3 * (b_hi - b_lo)


def _inv(bm, coll, hf, i, total, gc, oom=False):
    costs = {} if oom else {"task_clock": Cost(total, gc)}
    return Invocation(bm, coll, hf, i, costs, oom=oom)


def test_baseline_lbo_oom_and_geomean():
    invs = []
    for i, noise in enumerate((-1.0, 0.0, 1.0)):
        # bench A at 2x: Serial distilled 100, G1 distilled 110 (concurrent barriers), Z OOM.
        invs += [_inv("A", "Serial", 2.0, i, 130 + noise, 30), _inv("A", "G1", 2.0, i, 160 + noise, 50),
                 _inv("A", "Z", 2.0, i, 0, 0, oom=True)]
        invs += [_inv("B", "Serial", 2.0, i, 220 + noise, 20), _inv("B", "G1", 2.0, i, 250 + noise, 45),
                 _inv("B", "Z", 2.0, i, 300 + noise, 90)]
    t = lbo_tables(invs)["task_clock"]
    a_g1 = t.cell("A", "G1", 2.0)
    assert a_g1.baseline_collector == "Serial" and a_g1.lbo == pytest.approx(160 / 100)
    assert a_g1.low < 1.6 < a_g1.high
    assert t.cell("A", "Z", 2.0).oom and t.cell("A", "Z", 2.0).lbo is None
    # B: baseline min(200, 205, 210) = Serial's 200.
    assert t.cell("B", "Z", 2.0).lbo == pytest.approx(300 / 200)
    assert t.geomeans[("G1", 2.0)][0] == pytest.approx(math.sqrt(1.6 * 250 / 200))
    assert t.geomeans[("Z", 2.0)] == (pytest.approx(1.5), 1, 1)  # A's OOM cell left out, and counted


def test_heap_independent_no_gc_run_is_a_baseline_at_every_factor():
    invs = [_inv("A", "Epsilon", None, i, 90 + i, 0) for i in range(3)]
    invs += [_inv("A", "Serial", h, i, 120 + i, 20) for h in (1.5, 3.0) for i in range(3)]
    t = lbo_tables(invs)["task_clock"]
    assert t.cell("A", "Serial", 1.5).baseline_collector == "Epsilon"
    assert t.cell("A", "Serial", 3.0).lbo == pytest.approx(121 / 91)


def test_geomean():
    assert geomean([1.0, 4.0]) == 2.0 and geomean([]) is None


def test_table5_published_figures_are_consistent():
    checks = table5_checks()
    assert checks and all(c.holds for c in checks)
    # The CC geomean over ten apps 1.301 with Gmail 1.370 and Instagram 1.333 leaves the other eight at
    # (1.301^10 / (1.370 * 1.333))^(1/8), computed here by hand in logs.
    rest = math.exp((10 * math.log(1.301) - math.log(1.370) - math.log(1.333)) / 8)
    assert implied_rest_geomean(1.301, [1.370, 1.333], 10) == pytest.approx(rest)
    assert 1.28 < rest < 1.30


def test_trend_checks_say_what_the_numbers_show():
    invs = []
    for i in range(3):
        for h, g1, z in ((1.5, 200, 260), (3.0, 150, 180)):
            invs += [Invocation("A", "Serial", h, i, {"wall": Cost(110 + i, 10), "task_clock": Cost(110 + i, 10)}),
                     Invocation("A", "G1", h, i, {"wall": Cost(g1 * 0.6 + i, 5), "task_clock": Cost(g1 + i, 60)}),
                     Invocation("A", "Z", h, i, {"wall": Cost(z * 0.6 + i, 1), "task_clock": Cost(z + i, 90)})]
    tables = lbo_tables(invs)
    checks = {c.claim: c.holds for c in trend_checks(tables)}
    sbs = side_by_side(tables)
    assert sbs["heap_factor"] == 1.5  # 1.5 and 3.0 measured: 1.5 is nearer 2
    # Z at 1.5x: mean total 261 over Serial's mean distilled task clock 111 - 10 = 101.
    assert sbs["ours"]["task_clock"]["Z"] == pytest.approx(261 / 101)
    assert checks["task_clock: Z LBO falls as the heap grows (1.50x to 3.00x)"] is True
    assert any(k.startswith("Z (concurrent) costs more in task clock") and v for k, v in checks.items())
    assert any("low-pause collectors" in k and v for k, v in checks.items())


def test_timed_out_cells_are_shown_and_excluded():
    invs = [_inv("A", "Serial", 1.0, i, 120 + i, 20) for i in range(3)]
    invs += [Invocation("A", "Z", 1.0, 0, {}, timeout=True)]
    t = lbo_tables(invs)["task_clock"]
    z = t.cell("A", "Z", 1.0)
    assert z.oom and z.n_timeout == 1 and z.n_oom == 0 and z.lbo is None
    assert t.geomeans[("Z", 1.0)] == (None, 0, 1)
    from droidlag.report.gc_lbo import cell_text
    assert cell_text(z) == "T/O(1/1)"
