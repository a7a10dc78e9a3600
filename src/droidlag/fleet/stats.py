"""The paper's population statistics (Lin et al., TMC 2023; ../shared/spec/fleet.md) and Android vitals' measures,
from a fleet store. The heavy part is a handful of SQL aggregations written once in the SQL both engines speak
(DuckDB and Spark SQL; the one function they spell differently comes from the engine); the small aggregates they
return are finished here in plain Python and numpy, so both engines give the same numbers.

Definitions (ours where the paper is silent): an event's time is its dump's time; a ten-day window is counted from
the fleet's first event; "interval" is between consecutive events of one phone; ANR -> SNR is from an ANR to the next
SNR on the same phone. Zipf: least squares of log10(count) on log10(rank), log10(count) = b - a log10(rank), over the apps with at
least ZIPF_MIN_COUNT ANRs (and, beside it, over every app). Android vitals: user-perceived ANR rate is the share of phones with an
input-dispatch ANR (vitals counts per daily active user; a fleet upload has no activity data, so phones stand in for
users), bad-behaviour threshold 0.47%; a session is slow when half or more of its frames are janky, frozen when 0.1%
or more of its frames took 700 ms or longer."""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Protocol

import numpy as np

# events.app of a report that names no process (a Play Console paste without its title): not an app
UNKNOWN_APP = "?"

TEN_DAYS_S = 10 * 86400
VITALS_ANR_BAD_RATE = 0.0047
SLOW_SESSION_SHARE = 0.5
FROZEN_SESSION_SHARE = 0.001
BOOTSTRAP = 1000
# Counts are integers: the many apps with one or two ANRs flatten the tail of log(count) against log(rank) and pull
# the slope down (a Zipf law with a = 1.41 fits as 1.28 over all apps). The headline fit uses apps with at least
# this many ANRs; the fit over every app is reported beside it.
ZIPF_MIN_COUNT = 5


class Engine(Protocol):
    """Runs SQL over the store's tables (devices, events, sessions, features) and returns rows as tuples."""

    epoch: str   # SQL for seconds since 1970 of column `ts`

    def rows(self, sql: str) -> list[tuple]: ...

    # Optional: rows_many(queries: dict[str, str]) -> dict[str, list[tuple]], the queries run together (Spark runs
    # them concurrently: each is a few small single-task stages, so one at a time leaves a core idle).


def queries(epoch: str) -> dict[str, str]:
    """The aggregations, in SQL common to DuckDB and Spark. epoch: the engine's spelling of ts in seconds. Their
    rows are put in order here (`_rows`), not in SQL: a global ORDER BY is a sampling job and a range shuffle more
    in Spark, and the order is only needed for identical float sums."""
    return {
        "devices": """
            SELECT d.device_id, d.model, d.android_version, d.cohort,
                   coalesce(e.anr, 0), coalesce(e.snr, 0), coalesce(e.ui_anr, 0),
                   coalesce(s.frames, 0), coalesce(s.slow, 0), coalesce(s.frozen, 0),
                   coalesce(s.sessions, 0), coalesce(s.slow_sessions, 0), coalesce(s.frozen_sessions, 0)
            FROM devices d
            LEFT JOIN (SELECT device_id, sum(CASE WHEN kind = 'anr' THEN 1 ELSE 0 END) AS anr,
                              sum(CASE WHEN kind = 'snr' THEN 1 ELSE 0 END) AS snr,
                              sum(CASE WHEN kind = 'anr' AND reason_kind = 'input' THEN 1 ELSE 0 END) AS ui_anr
                       FROM events GROUP BY device_id) e ON e.device_id = d.device_id
            LEFT JOIN (SELECT device_id, sum(frames) AS frames, sum(slow_frames) AS slow,
                              sum(coalesce(frozen_frames, 0)) AS frozen, count(*) AS sessions,
                              sum(CASE WHEN frames > 0 AND slow_frames >= %(slow)s * frames THEN 1 ELSE 0 END)
                                  AS slow_sessions,
                              sum(CASE WHEN frames > 0 AND coalesce(frozen_frames, 0) >= %(frozen)s * frames
                                       THEN 1 ELSE 0 END) AS frozen_sessions
                       FROM sessions GROUP BY device_id) s ON s.device_id = d.device_id
""".replace("%(slow)s", str(SLOW_SESSION_SHARE))
                               .replace("%(frozen)s", str(FROZEN_SESSION_SHARE)),
        # Per ten-day window: phones with an event of each kind (grouping(kind) = 0) and of either kind (= 1).
        "windows": f"""
            SELECT w, kind, grouping(kind), count(DISTINCT device_id) FROM (
                SELECT device_id, kind,
                       CAST(floor(({epoch} - (SELECT min({epoch}) FROM events)) / {TEN_DAYS_S}) AS BIGINT) AS w
                FROM events WHERE ts IS NOT NULL) t
            GROUP BY GROUPING SETS ((w, kind), (w))""",
        # Seconds between consecutive events of a kind on a phone ('between'), and from an ANR to the next SNR on
        # the same phone ('anr_to_snr').
        "intervals": f"""
            SELECT what, kind, dt FROM (
                SELECT 'between' AS what, kind, t - prev AS dt FROM (
                    SELECT kind, {epoch} AS t,
                           lag({epoch}) OVER (PARTITION BY device_id, kind ORDER BY ts, event_id) AS prev
                    FROM events WHERE ts IS NOT NULL) x
                WHERE prev IS NOT NULL
                UNION ALL
                SELECT 'anr_to_snr' AS what, kind, next_snr - t AS dt FROM (
                    SELECT kind, {epoch} AS t,
                           min(CASE WHEN kind = 'snr' THEN {epoch} END) OVER (
                               PARTITION BY device_id ORDER BY ts, event_id
                               ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS next_snr
                    FROM events WHERE ts IS NOT NULL) y
                WHERE kind = 'anr' AND next_snr IS NOT NULL) z""",
        # Events per (app, kind), per cause, and per (cluster, cause), in one pass; g tells the three apart.
        "events": """
            SELECT grouping(e.app) + 2 * grouping(f.cluster_id) AS g, e.app, e.kind, f.cluster_id, e.cause, count(*)
            FROM events e LEFT JOIN features f ON f.signature = e.signature
            GROUP BY GROUPING SETS ((e.app, e.kind), (e.cause), (f.cluster_id, e.cause))""",
    }


# The grouping set of each row of the "events" query.
_BY_APP, _BY_CLUSTER, _BY_CAUSE = 2, 1, 3


def fleet_stats(engine: Engine, seed: int = 0) -> dict:
    """Every statistic of fleet.md as one JSON-ready dictionary (see the module text for definitions)."""
    q = queries(engine.epoch)
    many = getattr(engine, "rows_many", None)
    got = many(q) if many is not None else {name: engine.rows(sql) for name, sql in q.items()}

    def rows(name: str) -> list[tuple]:
        return sorted(got[name], key=_row_key)

    devs = rows("devices")
    per_event = rows("events")
    out: dict = {"devices": len(devs)}
    out["events"] = _event_totals(devs)
    out["prevalence"] = _prevalence(devs)
    out["ten_day_windows"] = _windows(rows("windows"), len(devs))
    out["correlations"] = _correlations(devs)
    out["intervals"] = _intervals(rows("intervals"))
    out["apps"] = _apps([(app, kind, n) for g, app, kind, _, _, n in per_event if g == _BY_APP])
    out["clusters"] = _clusters([(cid, cause, n) for g, _, _, cid, cause, n in per_event
                                 if g == _BY_CLUSTER and cid is not None])
    out["causes"] = _shares({c or "unlabelled": n for g, _, _, _, c, n in per_event if g == _BY_CAUSE})
    out["cohorts"] = _cohorts(devs, seed)
    out["vitals"] = _vitals(devs)
    return out


def _row_key(row: tuple) -> tuple:
    """Sort key of a result row: column by column, NULL first."""
    return tuple((v is not None, v if v is not None else 0) for v in row)


def _event_totals(devs: list[tuple]) -> dict:
    return {"anr": int(sum(r[4] for r in devs)), "snr": int(sum(r[5] for r in devs)),
            "sessions": int(sum(r[10] for r in devs))}


def _summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    a = np.asarray(values, dtype=float)
    return {"n": int(a.size), "mean": float(a.mean()), "median": float(np.median(a)), "max": float(a.max()),
            "share_zero": float((a == 0).mean())}


def _prevalence(devs: list[tuple]) -> dict:
    """Events per phone: overall, per model, per Android version (ANR, SNR, both)."""
    def block(rows: list[tuple]) -> dict:
        return {"phones": len(rows), "anr_per_phone": _summary([r[4] for r in rows]),
                "snr_per_phone": _summary([r[5] for r in rows]),
                "events_per_phone": _summary([r[4] + r[5] for r in rows]),
                "share_with_anr_or_snr": _ratio(sum(1 for r in rows if r[4] + r[5] > 0), len(rows))}
    by_model: dict[str, list] = defaultdict(list)
    by_version: dict[str, list] = defaultdict(list)
    for r in devs:
        by_model[r[1] or "unknown"].append(r)
        by_version[r[2] or "unknown"].append(r)
    return {"all": block(devs), "by_model": {k: block(v) for k, v in sorted(by_model.items())},
            "by_android_version": {k: block(v) for k, v in sorted(by_version.items())}}


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def _windows(rows: list[tuple], phones: int) -> dict:
    """Share of phones with an ANR, an SNR, or either, in each ten-day window."""
    per: dict[int, dict] = defaultdict(dict)
    for w, kind, either, n in rows:
        per[int(w)]["any" if either else kind] = _ratio(n, phones)
    windows = [{"window": w, "anr": per[w].get("anr", 0.0), "snr": per[w].get("snr", 0.0),
                "any": per[w].get("any", 0.0)} for w in sorted(per)]
    anys = [w["any"] for w in windows]
    return {"windows": windows, "mean_share_any": float(np.mean(anys)) if anys else None}


def pearson(x: list[float], y: list[float]) -> float | None:
    """Sample correlation coefficient; None when either side is constant or there are fewer than 3 points."""
    if len(x) < 3:
        return None
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.std() == 0 or b.std() == 0:
        return None
    return float(np.corrcoef(a, b)[0, 1])


def _correlations(devs: list[tuple]) -> dict:
    by_model: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0])
    for r in devs:
        m = by_model[r[1] or "unknown"]
        m[0] += r[4]
        m[1] += r[5]
        m[2] += r[8]
        m[3] += r[9]
    ms = list(by_model.values())
    with_frames = [r for r in devs if r[7] > 0]
    return {"anr_snr_per_phone": pearson([r[4] for r in devs], [r[5] for r in devs]),
            "anr_snr_per_model": pearson([m[0] for m in ms], [m[1] for m in ms]),
            "sr_ff_per_phone": pearson([r[8] for r in with_frames], [r[9] for r in with_frames]),
            "sr_ff_per_model": pearson([m[2] for m in ms], [m[3] for m in ms])}


def _days(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    a = np.asarray(values, dtype=float) / 86400.0
    return {"n": int(a.size), "median_days": float(np.median(a)), "mean_days": float(a.mean()),
            "p90_days": float(np.quantile(a, 0.9))}


def _intervals(rows: list[tuple]) -> dict:
    by: dict[tuple[str, str], list[float]] = defaultdict(list)
    for what, kind, dt in rows:
        by[what, kind].append(float(dt))
    return {"between_anrs": _days(by.get(("between", "anr"), [])), "between_snrs": _days(by.get(("between", "snr"), [])),
            "anr_to_next_snr": _days(by.get(("anr_to_snr", "anr"), []))}


def zipf_fit(counts: list[int], min_count: int = 1) -> dict:
    """Least squares of log10(count) on log10(rank) (counts sorted high to low, ranks over every app, the fit over
    apps with at least min_count events): a (minus the slope), b (the intercept), R^2; None below three apps."""
    c = [x for x in sorted((x for x in counts if x > 0), reverse=True) if x >= min_count]
    if len(c) < 3:
        return {"a": None, "b": None, "r2": None, "apps": len(c)}
    x = np.log10(np.arange(1, len(c) + 1, dtype=float))
    y = np.log10(np.asarray(c, dtype=float))
    slope, intercept = np.polyfit(x, y, 1)
    pred = intercept + slope * x
    ss_res = float(((y - pred) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    return {"a": float(-slope), "b": float(intercept), "r2": 1.0 - ss_res / ss_tot if ss_tot else 1.0,
            "apps": len(c)}


def _apps(rows: list[tuple]) -> dict:
    """ANRs per app, ranked, with the Zipf fits and the top-10 share. ANRs whose report names no app are counted
    apart (`unnamed_app_anrs`): they are not one app, so they take no rank and no part in the fits."""
    anr: Counter[str] = Counter()
    unnamed = 0
    for app, kind, n in rows:
        if kind != "anr":
            continue
        if app in (None, "", UNKNOWN_APP):
            unnamed += int(n)
        else:
            anr[app] += int(n)
    ranked = sorted(anr.items(), key=lambda kv: (-kv[1], kv[0]))
    total = sum(anr.values())
    counts = [n for _, n in ranked]
    return {"anr_apps": len(ranked), "unnamed_app_anrs": unnamed, "zipf": zipf_fit(counts, ZIPF_MIN_COUNT),
            "zipf_all_apps": zipf_fit(counts),
            "top10_share": _ratio(sum(n for _, n in ranked[:10]), total),
            "top": [{"app": a, "anr": n} for a, n in ranked[:20]], "ranked_counts": counts}


def _shares(counts: dict[str, int]) -> dict:
    total = sum(counts.values())
    return {k: {"events": int(v), "share": _ratio(v, total)} for k, v in sorted(counts.items(), key=lambda kv: -kv[1])}


def _clusters(rows: list[tuple]) -> dict:
    size: Counter = Counter()
    causes: dict[int, Counter] = defaultdict(Counter)
    for cid, cause, n in rows:
        size[int(cid)] += int(n)
        causes[int(cid)][cause] += int(n)
    total = sum(size.values())
    ranked = sorted(size.items(), key=lambda kv: (-kv[1], kv[0]))
    top3 = sum(n for _, n in ranked[:3])
    return {"clusters": len(ranked), "events": total, "top3_share": _ratio(top3, total),
            "dominant": [{"cluster": c, "events": n, "share": _ratio(n, total),
                          "cause": causes[c].most_common(1)[0][0]} for c, n in ranked[:10]]}


def bootstrap_ci(x: list[float], y: list[float], stat: Callable[[np.ndarray, np.ndarray], float], seed: int,
                 level: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap CI of stat(x, y) resampling each group (BOOTSTRAP draws, seeded)."""
    if len(x) < 2 or len(y) < 2:
        return None
    rng = np.random.default_rng(seed)
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    draws = []
    for _ in range(BOOTSTRAP):
        v = stat(rng.choice(a, a.size), rng.choice(b, b.size))
        if math.isfinite(v):
            draws.append(v)
    if not draws:
        return None
    lo, hi = np.quantile(draws, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


def _change(a: np.ndarray, b: np.ndarray) -> float:
    return float(b.mean() / a.mean() - 1.0) if a.mean() else float("nan")


def _cohorts(devs: list[tuple], seed: int) -> dict:
    """Per cohort: ANR and SNR per phone (mean, 95% CI); for two cohorts, the relative change of the second
    (alphabetical) against the first with a bootstrap CI."""
    groups: dict[str, list[tuple]] = defaultdict(list)
    for r in devs:
        if r[3]:
            groups[r[3]].append(r)
    out: dict = {}
    for name, rows in sorted(groups.items()):
        out[name] = {"phones": len(rows)}
        for k, col in (("anr", 4), ("snr", 5)):
            v = np.asarray([r[col] for r in rows], dtype=float)
            half = 1.96 * v.std(ddof=1) / math.sqrt(v.size) if v.size > 1 else None
            out[name][f"{k}_per_phone"] = {"mean": float(v.mean()),
                                           "ci95": [float(v.mean() - half), float(v.mean() + half)] if half is not None
                                           else None}
    if len(groups) == 2:
        (na, ra), (nb, rb) = sorted(groups.items())
        comp: dict = {"before": na, "after": nb}
        for k, col in (("anr", 4), ("snr", 5)):
            x, y = [r[col] for r in ra], [r[col] for r in rb]
            change = _change(np.asarray(x, float), np.asarray(y, float))
            # no events before: a relative change is undefined (None, never NaN, which JSON cannot hold)
            comp[f"{k}_change"] = change if math.isfinite(change) else None
            comp[f"{k}_change_ci95"] = bootstrap_ci(x, y, _change, seed)
        out["comparison"] = comp
    return out


def _vitals(devs: list[tuple]) -> dict:
    phones = len(devs)
    ui = sum(1 for r in devs if r[6] > 0)
    sessions = sum(r[10] for r in devs)
    rate = _ratio(ui, phones)
    return {"user_perceived_anr_rate": rate, "anr_bad_behaviour_threshold": VITALS_ANR_BAD_RATE,
            "anr_over_threshold": (rate > VITALS_ANR_BAD_RATE) if rate is not None else None,
            "slow_session_share": _ratio(sum(r[11] for r in devs), sessions),
            "frozen_session_share": _ratio(sum(r[12] for r in devs), sessions),
            "sessions": int(sessions)}
