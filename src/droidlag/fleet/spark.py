"""The fleet pipeline on Apache Spark (PySpark), for fleets one machine cannot hold: ingest parsing on the
executors; LSH candidates from MinHash band keys computed on the executors and joined in Spark SQL (default: the
same candidates as the embedded path), or from Spark ML's MinHashLSH approximate self-join (`candidates=
"minhashlsh"`; OR-amplified only, so its collisions grow with the square of a root cause's variants: for small
fleets); exact verification on the executors; and the statistics' SQL in Spark SQL. Started locally (`local[2]`) by default and in the tests; `master` points it at a
cluster. The store stays the system of record: Spark reads its tables as Parquet and the driver writes results
back, so both engines give the same clusters and statistics on the same input (tested).

Spark needs Java 17+ and `pip install droidlag[spark]`."""
from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from droidlag.fleet.cluster import (
    BUCKET_REACH,
    FLEET_BANDS,
    ClusterRun,
    accepted,
    band_keys,
    cluster_signatures,
    minhash,
    weighted_token_strings,
)
from droidlag.fleet.parse import ParsedInput, parse_input
from droidlag.fleet.pipeline import load_signatures, save_clusters
from droidlag.fleet.stats import fleet_stats
from droidlag.fleet.store import connect, export_parquet
from droidlag.hangs.config import HangsConfig
from droidlag.hangs.features import Features

# MinHashLSH's OR-amplified tables over the weighted tokens (droidlag.fleet.cluster.weighted_token_strings), and
# the Jaccard distance under which a pair is a candidate. Exact S decides; this only has to keep the pairs with S
# above the threshold (near duplicates share ~99% of their weighted tokens; the same stack in another app ~78%).
NUM_HASH_TABLES = 8
MAX_JACCARD_DISTANCE = 0.15
HASH_FEATURES = 1 << 20


def spark_session(master: str = "local[2]"):
    """A Spark session for droidlag (UTC times, no UI, few shuffle partitions; executors use this Python)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:   # pragma: no cover - the extra is not installed
        raise RuntimeError("the Spark engine needs PySpark: pip install 'droidlag[spark]' (and Java 17+)") from e
    return (SparkSession.builder.master(master).appName("droidlag-fleet")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.driver.memory", "1g")
            .config("spark.sql.parquet.inferTimestampNTZ.enabled", "false")
            .getOrCreate())


def spark_parsed(spark, files: list[Path]) -> Iterator[ParsedInput]:
    """parse_input over the files on the executors, results streamed back in file order."""
    n = max(1, min(len(files), spark.sparkContext.defaultParallelism * 4))
    rdd = spark.sparkContext.parallelize([str(f) for f in files], n)
    yield from rdd.map(parse_input).toLocalIterator()


class SparkEngine:
    """The statistics' SQL on Spark over the store's tables (registered as views from a Parquet export)."""

    epoch = "unix_micros(CAST(ts AS TIMESTAMP)) / 1000000.0"

    def __init__(self, spark, parquet_dir: str | Path):
        self.spark = spark
        for t in ("devices", "events", "sessions", "features", "clusters"):
            spark.read.parquet(str(Path(parquet_dir) / f"{t}.parquet")).createOrReplaceTempView(t)

        spark.catalog.clearCache()
        for t in ("devices", "events", "sessions", "features"):
            spark.table(t).cache()

    def rows(self, sql: str) -> list[tuple]:
        return [tuple(r) for r in self.spark.sql(sql).collect()]


def _ml_candidates(spark, feats: list[Features], old: list[int | None], config: HangsConfig):
    """Candidate pairs from Spark ML's MinHashLSH (OR over NUM_HASH_TABLES single hashes) and its approximate
    self-join under MAX_JACCARD_DISTANCE. Exact, but with no AND-bands its collisions grow with the square of a
    root cause's variants: for small fleets."""
    from pyspark.ml.feature import HashingTF, MinHashLSH
    rows = [(i, weighted_token_strings(f), old[i] is not None) for i, f in enumerate(feats)]
    df = spark.createDataFrame(rows, "id INT, tokens ARRAY<STRING>, clustered BOOLEAN")
    df = HashingTF(inputCol="tokens", outputCol="v", numFeatures=HASH_FEATURES, binary=True).transform(df)
    model = MinHashLSH(inputCol="v", outputCol="h", numHashTables=NUM_HASH_TABLES, seed=config.seed).fit(df)
    joined = model.approxSimilarityJoin(df, df, MAX_JACCARD_DISTANCE, distCol="d")
    return joined.where("datasetA.id < datasetB.id AND NOT (datasetA.clustered AND datasetB.clustered)") \
        .select("datasetA.id", "datasetB.id").rdd.map(tuple)


def _banded_candidates(spark, feats: list[Features], old: list[int | None], config: HangsConfig):
    """The embedded path's candidates, computed on Spark: MinHash and band keys on the executors (the same
    functions and seed), then a self-join on (band, key) keeping, within a bucket ordered by id, each row with the
    next BUCKET_REACH rows. The same candidate set as droidlag.fleet.cluster.lsh_pairs, so the same clusters."""
    sc = spark.sparkContext
    bc = sc.broadcast([(sorted(f.generic), list(f.terms.items()), f.norm) for f in feats])
    num_perm, seed = config.num_perm, config.seed
    clustered = [o is not None for o in old]

    def keys(part):
        ids = list(part)
        if not ids:
            return
        fs = [Features(frozenset(bc.value[i][0]), dict(bc.value[i][1]), bc.value[i][2]) for i in ids]
        bk = band_keys(minhash(fs, num_perm, seed), FLEET_BANDS).view(np.int64)
        for b in range(FLEET_BANDS):
            for j, i in enumerate(ids):
                yield b, int(bk[b, j]), i, clustered[i]

    n = len(feats)
    slices = max(1, min(n // 2000 + 1, sc.defaultParallelism * 4))
    df = spark.createDataFrame(sc.parallelize(range(n), slices).mapPartitions(keys),
                               "band INT, key BIGINT, id INT, clustered BOOLEAN")
    df.createOrReplaceTempView("fleet_band_keys")
    pairs = spark.sql(f"""
        WITH r AS (SELECT band, key, id, clustered,
                          row_number() OVER (PARTITION BY band, key ORDER BY id) AS rk FROM fleet_band_keys)
        SELECT DISTINCT a.id AS x, b.id AS y FROM r a JOIN r b
          ON a.band = b.band AND a.key = b.key AND b.rk > a.rk AND b.rk - a.rk <= {BUCKET_REACH}
        WHERE NOT (a.clustered AND b.clustered)""")
    return pairs.rdd.map(lambda r: (min(r[0], r[1]), max(r[0], r[1])))


def spark_edges(spark, feats: list[Features], old: list[int | None], config: HangsConfig,
                candidates: str = "banded") -> tuple[np.ndarray, int]:
    """Verified edges (S > threshold) among the signatures: candidates from banded MinHash keys joined in Spark
    SQL (default) or from Spark ML's MinHashLSH (`candidates="minhashlsh"`); the exact S runs on the executors.
    Returns (edges (m, 2), candidates)."""
    cand = (_ml_candidates if candidates == "minhashlsh" else _banded_candidates)(spark, feats, old, config)
    bc = spark.sparkContext.broadcast([(sorted(f.generic), list(f.terms.items()), f.norm) for f in feats])
    threshold, weighting = config.threshold, config.weighting

    def verify(part):
        pairs = np.array(list(part), dtype=np.int64).reshape(-1, 2)
        if not len(pairs):
            return
        fs = [Features(frozenset(g), dict(t), n) for g, t, n in bc.value]
        # The embedded path's verification (sparse batches, scalar S at the threshold's edge); old-old pairs were
        # left out by the candidate query.
        ok = accepted(fs, pairs, threshold, weighting)
        yield from ((int(x), int(y), bool(k)) for (x, y), k in zip(pairs.tolist(), ok))

    checked = cand.mapPartitions(verify).collect()
    edges = np.array(sorted((x, y) for x, y, ok in checked if ok), dtype=np.int64).reshape(-1, 2)
    return edges, len(checked)


def spark_cluster(db: str | Path, spark, config: HangsConfig | None = None, candidates: str = "banded") -> ClusterRun:
    """cluster_store on Spark: the same incremental ids; candidates: 'banded' or 'minhashlsh' (see spark_edges)."""
    config = config or HangsConfig()
    con = connect(db)
    try:
        keys, feats, weights, old = load_signatures(con)
        if not any(o is None for o in old):
            return ClusterRun(signatures=len(keys))
        edges, n_candidates = spark_edges(spark, feats, old, config, candidates)
        labels, run = cluster_signatures(keys, feats, weights, old, config, edges=edges)
        run.candidates = n_candidates
        save_clusters(con, keys, labels)
        return run
    finally:
        con.close()


def spark_stats(db: str | Path, spark, seed: int = 0) -> dict:
    """fleet_stats with Spark SQL doing the aggregations over the store's Parquet export."""
    con = connect(db, read_only=True)
    try:
        with tempfile.TemporaryDirectory(prefix="droidlag-fleet-") as tmp:
            export_parquet(con, tmp)
            return fleet_stats(SparkEngine(spark, tmp), seed)
    finally:
        con.close()
