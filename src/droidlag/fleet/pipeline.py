"""The fleet pipeline on the embedded engine: clustering the store's signatures (incremental, ids stable) and the
statistics, over DuckDB. The Spark engine (spark.py) runs the same steps and shares their code."""
from __future__ import annotations

from pathlib import Path

import duckdb

from droidlag.fleet.cluster import ClusterRun, cluster_signatures
from droidlag.fleet.stats import fleet_stats
from droidlag.fleet.store import connect
from droidlag.hangs.config import HangsConfig
from droidlag.hangs.features import Features


class DuckDbEngine:
    """Runs the statistics' SQL on the store itself."""

    epoch = "epoch(ts)"

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    def rows(self, sql: str) -> list[tuple]:
        return self.con.execute(sql).fetchall()


def load_signatures(con) -> tuple[list[str], list[Features], list[int], list[int | None]]:
    """(keys, features, events per signature, current cluster id) of every signature, ordered by key."""
    return _unpack(con.execute(SIGNATURES).fetchall())


# Every signature with its features, cluster id and events, ordered by key.
SIGNATURES = """
    SELECT f.signature, f.generic, f.term_keys, f.term_weights, f.cluster_id, count(e.event_id) AS events
    FROM features f LEFT JOIN events e ON e.signature = f.signature
    GROUP BY ALL ORDER BY f.signature"""


def _unpack(rows) -> tuple[list[str], list[Features], list[int], list[int | None]]:
    keys, feats, weights, old = [], [], [], []
    for sig, gen, tk, tw, cid, n in rows:
        keys.append(sig)
        feats.append(features_of(gen, tk, tw))
        weights.append(int(n))
        old.append(None if cid is None else int(cid))
    return keys, feats, weights, old


def features_of(generic: list[str], term_keys: list[str], term_weights: list[float]) -> Features:
    """A signature's Features from its stored columns (the norm recomputed from the term weights)."""
    import math
    terms = dict(zip(term_keys, term_weights))
    return Features(frozenset(generic), terms, math.sqrt(sum(v * v for v in terms.values())))


# Ties broken by name, so that the same clusters give the same table on every engine and run.
_CLUSTERS = """
    INSERT INTO clusters
    WITH sig AS (SELECT f.cluster_id, f.signature, count(*) AS n FROM features f
                 JOIN events e ON e.signature = f.signature GROUP BY f.cluster_id, f.signature),
         rep AS (SELECT cluster_id, signature,
                        row_number() OVER (PARTITION BY cluster_id ORDER BY n DESC, signature) AS rk,
                        count(*) OVER (PARTITION BY cluster_id) AS sigs FROM sig),
         cau AS (SELECT f.cluster_id, e.cause, count(*) AS n FROM features f
                 JOIN events e ON e.signature = f.signature GROUP BY f.cluster_id, e.cause),
         top AS (SELECT cluster_id, cause, row_number() OVER (PARTITION BY cluster_id ORDER BY n DESC, cause) AS rk
                 FROM cau)
    SELECT r.cluster_id, r.signature, r.sigs, t.cause FROM rep r
    JOIN top t ON t.cluster_id = r.cluster_id AND t.rk = 1 WHERE r.rk = 1"""


def save_clusters(con, keys: list[str], labels: list[int]) -> None:
    """Write each signature's cluster id and rebuild the clusters table (representative: the signature with the
    most events; cause: the majority cause of its events), in one transaction."""
    import pyarrow as pa
    table = pa.table({"signature": keys, "cluster_id": pa.array(labels, pa.int32())})
    con.begin()
    try:
        con.register("new_labels", table)
        con.execute("UPDATE features SET cluster_id = n.cluster_id FROM new_labels n "
                    "WHERE features.signature = n.signature")
        con.unregister("new_labels")
        con.execute("DELETE FROM clusters")
        con.execute(_CLUSTERS)
        con.commit()
    except BaseException:
        con.rollback()
        raise


def cluster_store(db: str | Path, config: HangsConfig | None = None) -> ClusterRun:
    """Give every signature without a cluster id one (joining existing clusters when similar enough)."""
    config = config or HangsConfig()
    con = connect(db)
    try:
        keys, feats, weights, old = load_signatures(con)
        labels, run = cluster_signatures(keys, feats, weights, old, config)
        if run.new_signatures:
            save_clusters(con, keys, labels)
        return run
    finally:
        con.close()


def store_stats(db: str | Path, seed: int = 0) -> dict:
    """fleet_stats over the store, read-only."""
    con = connect(db, read_only=True)
    try:
        return fleet_stats(DuckDbEngine(con), seed)
    finally:
        con.close()
