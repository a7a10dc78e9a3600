"""The fleet pipeline on Apache Spark (PySpark), for fleets one machine cannot hold: ingest parsing on the
executors, LSH candidate joins with Spark ML's MinHashLSH and exact verification on the executors, and the
statistics' SQL in Spark SQL. Started locally (`local[2]`) by default and in the tests; `master` points it at a
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

from droidlag.fleet.cluster import ClusterRun, cluster_signatures, weighted_token_strings
from droidlag.fleet.parse import ParsedInput, parse_input
from droidlag.fleet.pipeline import load_signatures, save_clusters
from droidlag.fleet.stats import fleet_stats
from droidlag.fleet.store import connect, export_parquet
from droidlag.hangs.config import HangsConfig
from droidlag.hangs.features import Features
from droidlag.hangs.similarity import similarity

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

    def rows(self, sql: str) -> list[tuple]:
        return [tuple(r) for r in self.spark.sql(sql).collect()]


def spark_edges(spark, feats: list[Features], old: list[int | None], config: HangsConfig) -> tuple[np.ndarray, int]:
    """Verified edges (S > threshold) among the signatures: MinHashLSH's approximate similarity self-join gives
    the candidates, the exact S runs on the executors. Returns (edges (m, 2), candidates)."""
    from pyspark.ml.feature import HashingTF, MinHashLSH
    rows = [(i, weighted_token_strings(f), old[i] is not None) for i, f in enumerate(feats)]
    df = spark.createDataFrame(rows, "id INT, tokens ARRAY<STRING>, clustered BOOLEAN")
    df = HashingTF(inputCol="tokens", outputCol="v", numFeatures=HASH_FEATURES, binary=True).transform(df)
    model = MinHashLSH(inputCol="v", outputCol="h", numHashTables=NUM_HASH_TABLES, seed=config.seed).fit(df)
    joined = model.approxSimilarityJoin(df, df, MAX_JACCARD_DISTANCE, distCol="d")
    cand = joined.where("datasetA.id < datasetB.id AND NOT (datasetA.clustered AND datasetB.clustered)") \
        .select("datasetA.id", "datasetB.id").rdd.map(tuple)
    bc = spark.sparkContext.broadcast([(sorted(f.generic), list(f.terms.items()), f.norm) for f in feats])
    threshold, weighting = config.threshold, config.weighting

    def verify(part):
        import math  # noqa: F401 - executors rebuild Features from plain tuples
        fs = [Features(frozenset(g), dict(t), n) for g, t, n in bc.value]
        for x, y in part:
            yield x, y, similarity(fs[x], fs[y], weighting) > threshold

    checked = cand.mapPartitions(verify).collect()
    edges = np.array(sorted((x, y) for x, y, ok in checked if ok), dtype=np.int64).reshape(-1, 2)
    return edges, len(checked)


def spark_cluster(db: str | Path, spark, config: HangsConfig | None = None) -> ClusterRun:
    """cluster_store on Spark: the same incremental ids, candidates from MinHashLSH."""
    config = config or HangsConfig()
    con = connect(db)
    try:
        keys, feats, weights, old = load_signatures(con)
        if not any(o is None for o in old):
            return ClusterRun(signatures=len(keys))
        edges, candidates = spark_edges(spark, feats, old, config)
        labels, run = cluster_signatures(keys, feats, weights, old, config, edges=edges)
        run.candidates = candidates
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
