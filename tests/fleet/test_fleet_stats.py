"""Statistics and clusters of a generated fleet recover what the generator planted; each expected value comes from
the generator's truth.json, counted in plain Python, never from the store."""
from __future__ import annotations

import math

import duckdb
import numpy as np
import pytest

from droidlag.fleet.cluster import lsh_pairs, minhash, pairwise_f1
from droidlag.fleet.pipeline import cluster_store, store_stats
from droidlag.fleet.stats import zipf_fit
from droidlag.hangs.features import Features

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def stats(small_fleet_db) -> dict:
    return store_stats(small_fleet_db)


def test_zipf_fit_of_an_exact_power_law_is_exact():
    counts = [10 ** (3 - 1.5 * math.log10(r)) for r in range(1, 40)]
    z = zipf_fit(counts)   # type: ignore[arg-type]
    assert z["a"] == pytest.approx(1.5) and z["b"] == pytest.approx(3.0) and z["r2"] == pytest.approx(1.0)


def test_zipf_parameters_recovered(small_fleet, stats):
    _, truth = small_fleet
    z = stats["apps"]["zipf"]
    # Stated tolerance: a within 0.05, b within 0.1 (the fit uses apps with >= 5 ANRs; counts are rounded).
    assert abs(z["a"] - truth["params"]["zipf_a"]) < 0.05
    assert abs(z["b"] - truth["params"]["zipf_b"]) < 0.1
    ranked = sorted(truth["app_anr"].values(), reverse=True)
    assert stats["apps"]["top10_share"] == pytest.approx(sum(ranked[:10]) / sum(ranked))
    assert stats["apps"]["anr_apps"] == len(ranked)


def test_per_phone_counts_and_correlations_match_the_truth(small_fleet, stats):
    _, truth = small_fleet
    phones = sorted(truth["phones"], key=lambda p: p["device_id"])
    anr = [p["anr"] for p in phones]
    snr = [p["snr"] for p in phones]
    assert stats["events"]["anr"] == sum(anr) and stats["events"]["snr"] == sum(snr)
    assert stats["prevalence"]["all"]["anr_per_phone"]["max"] == max(anr)
    assert stats["prevalence"]["all"]["events_per_phone"]["share_zero"] == pytest.approx(
        sum(1 for a, s in zip(anr, snr) if a + s == 0) / len(phones))
    c = stats["correlations"]
    assert c["anr_snr_per_phone"] == pytest.approx(np.corrcoef(anr, snr)[0, 1])
    slow = [p["slow_frames"] for p in phones]
    frozen = [p["frozen_frames"] for p in phones]
    assert c["sr_ff_per_phone"] == pytest.approx(np.corrcoef(slow, frozen)[0, 1])
    # The planted shared propensity makes them correlate strongly.
    assert c["anr_snr_per_phone"] > 0.6 and c["sr_ff_per_phone"] > 0.6


def test_cause_shares_follow_the_planted_groups(small_fleet, stats):
    _, truth = small_fleet
    cause_of = {i: t["cause"] for i, t in enumerate(x for x in truth["templates"] if x["kind"] == "anr")}
    snr_cause = [t["cause"] for t in truth["templates"] if t["kind"] == "snr"]
    want: dict[str, int] = {}
    for e in truth["events"]:
        c = cause_of[e["group"]] if e["kind"] == "anr" else snr_cause[-1 - e["group"]]
        want[c] = want.get(c, 0) + 1
    assert {k: v["events"] for k, v in stats["causes"].items()} == want


def test_clusters_match_planted_root_cause_and_app(small_fleet, small_fleet_db):
    """Process names are specific features (paper), so a planted cluster is one template in one app."""
    folder, truth = small_fleet
    con = duckdb.connect(str(small_fleet_db), read_only=True)
    got = dict(con.execute("SELECT i.path, f.cluster_id FROM events e JOIN inputs i USING (content_hash) "
                           "JOIN features f USING (signature)").fetchall())
    planted = {str(folder / e["path"]): (e["group"], e["app"]) for e in truth["events"]}
    keys = sorted(planted)
    assert pairwise_f1([planted[k] for k in keys], [got[k] for k in keys]) >= 0.99   # type: ignore[misc]
    # Near-duplicate stacks (a dropped deep frame) were joined: fewer clusters than signatures.
    n_sig, n_clu = con.execute("SELECT count(*), count(DISTINCT cluster_id) FROM features").fetchall()[0]
    assert n_clu < n_sig


def test_cohort_change_covers_the_planted_fix(small_fleet, stats):
    _, truth = small_fleet
    comp = stats["cohorts"]["comparison"]
    assert (comp["before"], comp["after"]) == ("a-before", "b-after")
    phones = truth["phones"]
    for kind in ("anr", "snr"):
        a = [p[kind] for p in phones if p["cohort"] == "a-before"]
        b = [p[kind] for p in phones if p["cohort"] == "b-after"]
        assert comp[f"{kind}_change"] == pytest.approx(np.mean(b) / np.mean(a) - 1)
        lo, hi = comp[f"{kind}_change_ci95"]
        assert lo < comp[f"{kind}_change"] < hi


def test_incremental_clustering_keeps_ids_and_joins_new_events(small_fleet, tmp_path):
    from droidlag.fleet.ingest import ingest
    folder, truth = small_fleet
    db = tmp_path / "inc.duckdb"
    files = sorted(folder.glob("phone-*/*_*.txt"))
    half = len(files) // 2
    ingest(files[:half], db, jobs=1)
    cluster_store(db)
    con = duckdb.connect(str(db))
    before = dict(con.execute("SELECT signature, cluster_id FROM features").fetchall())
    con.close()
    ingest(files[half:], db, jobs=1)
    run = cluster_store(db)
    con = duckdb.connect(str(db), read_only=True)
    after = dict(con.execute("SELECT signature, cluster_id FROM features").fetchall())
    assert {s: after[s] for s in before} == before   # ids stable across runs
    assert run.new_signatures == len(after) - len(before) > 0
    # A new event of a (template, app) already seen before joins that cluster.
    rows = con.execute("SELECT i.path, f.cluster_id FROM events e JOIN inputs i USING (content_hash) "
                       "JOIN features f USING (signature)").fetchall()
    planted = {str(folder / e["path"]): (e["group"], e["app"]) for e in truth["events"]}
    old_paths = {str(f) for f in files[:half]}
    old_cluster = {planted[p]: c for p, c in rows if p in old_paths}
    joined = [(old_cluster[planted[p]], c) for p, c in rows if p not in old_paths and planted[p] in old_cluster]
    assert joined and sum(a == b for a, b in joined) / len(joined) >= 0.99


def test_lsh_finds_identical_and_never_all_pairs():
    f = [Features(frozenset({"a", "b", str(i % 5)}), {f"t{i % 5}": 1.0}, 1.0) for i in range(50)]
    pairs = lsh_pairs(minhash(f, 64, 0), 16)
    same = {(i, j) for i in range(50) for j in range(i + 1, 50) if i % 5 == j % 5}
    assert same <= {tuple(p) for p in pairs.tolist()}
    assert len(pairs) < 50 * 49 // 2


def test_pairwise_f1_hand_counted():
    # truth pairs: (0,1), (2,3); got pairs: (0,1), (1,2)... got = {0,1,2} together: (0,1),(0,2),(1,2)
    assert pairwise_f1([0, 0, 1, 1], [0, 0, 0, 1]) == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
