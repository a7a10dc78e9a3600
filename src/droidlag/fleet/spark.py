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
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from droidlag.fleet.cluster import (
    FLEET_BANDS,
    ClusterRun,
    FeatureMatrix,
    accepted,
    band_keys,
    bucket_pairs,
    cluster_signatures,
    minhash,
    unique_pairs,
    weighted_token_strings,
)
from droidlag.fleet.parse import ParsedInput, parse_input
from droidlag.fleet.pipeline import SIGNATURES, features_of, save_clusters
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


# Local mode runs the executors in the driver's JVM, and a fleet pipeline there is many short queries: the JIT's
# optimising tier (C2) cost about a third of the JVM's CPU time at 100k events and paid back nothing within the run
# (CPU 17.9 s against 25.8 s for clustering and statistics, side by side; the same wall time on a shared machine).
# On a cluster the driver only plans and the executors keep their defaults.
LOCAL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"


def spark_session(master: str = "local[2]"):
    """A Spark session for droidlag (UTC times, no UI, few shuffle partitions, the quick JIT tier in local mode;
    executors use this Python)."""
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
            .config("spark.driver.extraJavaOptions", LOCAL_JVM_OPTIONS if master.startswith("local") else "")
            .getOrCreate())


def spark_parsed(spark, files: list[Path]) -> Iterator[ParsedInput]:
    """parse_input over the files on the executors, results streamed back in file order."""
    n = max(1, min(len(files), spark.sparkContext.defaultParallelism * 4))
    rdd = spark.sparkContext.parallelize([str(f) for f in files], n)
    yield from rdd.map(parse_input).toLocalIterator()


class SparkEngine:
    """The statistics' SQL on Spark over the store's tables (registered as views from a Parquet export). Not
    cached: the four queries each scan the Parquet once, and building Spark's in-memory cache cost more than
    those scans (cold statistics about 2x slower with it, measured side by side at 100k events)."""

    epoch = "unix_micros(CAST(ts AS TIMESTAMP)) / 1000000.0"

    def __init__(self, spark, parquet_dir: str | Path):
        self.spark = spark
        for t in ("devices", "events", "sessions", "features"):   # the tables the statistics read
            spark.read.parquet(str(Path(parquet_dir) / f"{t}.parquet")).createOrReplaceTempView(t)

    def rows(self, sql: str) -> list[tuple]:
        t = self.spark.sql(sql).toArrow()   # columnar to the driver: no Row object per row
        return list(zip(*(c.to_pylist() for c in t.columns)))

    def rows_many(self, queries: dict[str, str]) -> dict[str, list[tuple]]:
        """The queries as concurrent Spark jobs (one driver thread each): their stages are small and mostly one
        task, so run one after another they leave the other cores idle and wait on each other's planning."""
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=len(queries)) as pool:
            futures = {name: pool.submit(self.rows, sql) for name, sql in queries.items()}
            return {name: f.result() for name, f in futures.items()}


def _signatures_table(con) -> pa.Table:
    """load_signatures' rows as an Arrow table straight from the store (no Python object per signature)."""
    rel = con.sql(SIGNATURES)
    return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()   # DuckDB 2 / 1.x


def _broadcast_features(spark, table: pa.Table):
    """The signatures' feature columns and clustered flags (row i: signature i) as one Arrow IPC broadcast."""
    cols = table.select(["generic", "term_keys", "term_weights"]).append_column(
        "clustered", pc.is_valid(table.column("cluster_id")))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, cols.schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as w:
        w.write_table(cols)
    return spark.sparkContext.broadcast(sink.getvalue().to_pybytes())


def _batch_features(batch: pa.RecordBatch | pa.Table) -> list[Features]:
    cols = (batch.column("generic").to_pylist(), batch.column("term_keys").to_pylist(),
            batch.column("term_weights").to_pylist())
    return [features_of(g, k, w) for g, k, w in zip(*cols)]


class _WorkerFeatures:
    """A Python worker's copy of the broadcast signatures, built once per broadcast (Spark reuses its Python
    workers across tasks and stages): Features, clustered flags, and the sparse matrix when first needed."""

    _current: _WorkerFeatures | None = None

    def __init__(self, bc, token: str):
        t = pa.ipc.open_stream(bc.value).read_all()
        self.token = token
        self.feats = _batch_features(t)
        self.clustered = t.column("clustered").to_numpy(zero_copy_only=False)
        self._mat: FeatureMatrix | None = None

    @property
    def mat(self) -> FeatureMatrix:
        if self._mat is None:
            self._mat = FeatureMatrix(self.feats)
        return self._mat

    @classmethod
    def get(cls, bc, token: str) -> _WorkerFeatures:
        if cls._current is None or cls._current.token != token:
            cls._current = None
            cls._current = cls(bc, token)
        return cls._current


def _band_key_stage(spark, n: int, bc, token: str, config: HangsConfig):
    """MinHash band keys (the embedded path's numpy code and seed) of each batch of signature ids, on the
    executors: one row (band, key, id, clustered) per signature and band."""
    num_perm, seed = config.num_perm, config.seed

    def keys(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        wf = _WorkerFeatures.get(bc, token)
        for b in batches:
            ids = b.column("id").to_numpy()
            if not len(ids):
                continue
            bk = band_keys(minhash([wf.feats[i] for i in ids.tolist()], num_perm, seed), FLEET_BANDS).view(np.int64)
            yield pa.RecordBatch.from_arrays(
                [pa.array(np.repeat(np.arange(FLEET_BANDS, dtype=np.int32), len(ids))), pa.array(bk.ravel()),
                 pa.array(np.tile(ids.astype(np.int32), FLEET_BANDS)),
                 pa.array(np.tile(wf.clustered[ids], FLEET_BANDS))],
                names=["band", "key", "id", "clustered"])

    parts = max(1, min(spark.sparkContext.defaultParallelism, n // 1000 + 1))
    return spark.range(0, n, 1, parts).mapInArrow(keys, "band INT, key BIGINT, id INT, clustered BOOLEAN")


def _bucket_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow over a partition holding whole (band, key) buckets: the embedded path's bucket_pairs per band;
    pairs of two already-clustered signatures are dropped."""
    t = pa.Table.from_batches(list(batches), schema=_BAND_KEY_SCHEMA)
    if t.num_rows < 2:
        return
    band, key = t.column("band").to_numpy(), t.column("key").to_numpy()
    ids = t.column("id").to_numpy().astype(np.int64)
    clustered = np.zeros(int(ids.max()) + 1, dtype=bool)
    clustered[ids] = t.column("clustered").to_numpy(zero_copy_only=False)
    for b in np.unique(band):
        sel = np.nonzero(band == b)[0]
        sel = sel[np.argsort(ids[sel], kind="stable")]
        pairs = bucket_pairs(key[sel], ids[sel])
        pairs = pairs[~(clustered[pairs[:, 0]] & clustered[pairs[:, 1]])]
        if len(pairs):
            yield pa.RecordBatch.from_arrays([pa.array(pairs[:, 0].astype(np.int32)),
                                              pa.array(pairs[:, 1].astype(np.int32))], names=["x", "y"])


_BAND_KEY_SCHEMA = pa.schema([("band", pa.int32()), ("key", pa.int64()), ("id", pa.int32()),
                              ("clustered", pa.bool_())])
_PAIR_SCHEMA = pa.schema([("x", pa.int32()), ("y", pa.int32())])


def _verify_stage(pairs, bc, token: str, config: HangsConfig, counted):
    """mapInArrow over a partition of candidate pairs (all copies of a pair in one partition): distinct pairs,
    then the embedded path's verification (sparse batched S, scalar S at the threshold's edge); only edges leave."""
    threshold, weighting = config.threshold, config.weighting

    def verify(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        t = pa.Table.from_batches(list(batches), schema=_PAIR_SCHEMA)
        if t.num_rows == 0:
            return
        cand = unique_pairs(np.stack([t.column("x").to_numpy(), t.column("y").to_numpy()], axis=1).astype(np.int64))
        counted.add(len(cand))
        wf = _WorkerFeatures.get(bc, token)
        edges = cand[accepted(wf.feats, cand, threshold, weighting, wf.mat)]
        yield pa.RecordBatch.from_arrays([pa.array(edges[:, 0].astype(np.int32)),
                                          pa.array(edges[:, 1].astype(np.int32))], names=["x", "y"])

    return pairs.repartition(pairs.sparkSession.sparkContext.defaultParallelism, "x").mapInArrow(verify, "x INT, y INT")


def _ml_candidates(spark, feats: list[Features], old: list[int | None], config: HangsConfig):
    """Candidate pairs (DataFrame x < y) from Spark ML's MinHashLSH (OR over NUM_HASH_TABLES single hashes) and its
    approximate self-join under MAX_JACCARD_DISTANCE. Exact, but with no AND-bands its collisions grow with the
    square of a root cause's variants: for small fleets."""
    from pyspark.ml.feature import HashingTF, MinHashLSH
    rows = [(i, weighted_token_strings(f), old[i] is not None) for i, f in enumerate(feats)]
    df = spark.createDataFrame(rows, "id INT, tokens ARRAY<STRING>, clustered BOOLEAN")
    df = HashingTF(inputCol="tokens", outputCol="v", numFeatures=HASH_FEATURES, binary=True).transform(df)
    model = MinHashLSH(inputCol="v", outputCol="h", numHashTables=NUM_HASH_TABLES, seed=config.seed).fit(df)
    joined = model.approxSimilarityJoin(df, df, MAX_JACCARD_DISTANCE, distCol="d")
    return joined.where("datasetA.id < datasetB.id AND NOT (datasetA.clustered AND datasetB.clustered)") \
        .selectExpr("datasetA.id AS x", "datasetB.id AS y")


def spark_edges(spark, table: pa.Table, config: HangsConfig, candidates: str = "banded") -> tuple[np.ndarray, int]:
    """Verified edges (S > threshold, not both already clustered) among the signatures of `table` (the store's
    SIGNATURES query as Arrow; row i is signature i), in one Spark job. Candidates (default "banded"): MinHash band
    keys of batches of signatures on the executors, a shuffle by (band, key) that brings each bucket into one
    partition, and there the embedded path's bucket_pairs (each row of a bucket with the next BUCKET_REACH rows by
    id): the same candidate set as droidlag.fleet.cluster.lsh_pairs, so the same clusters. Or "minhashlsh": Spark
    ML's MinHashLSH. A shuffle by pair then brings all copies of a pair together, and the exact S runs there; only
    the edges come back (as Arrow). Python runs only in Arrow batches (mapInArrow), the signatures reach the
    executors once as a broadcast. Returns (edges (m, 2) sorted, distinct candidates)."""
    bc = _broadcast_features(spark, table)
    token = uuid.uuid4().hex
    counted = spark.sparkContext.accumulator(0)
    if candidates == "minhashlsh":
        cols = [table.column(c).to_pylist() for c in ("generic", "term_keys", "term_weights", "cluster_id")]
        feats = [features_of(g, k, w) for g, k, w, _ in zip(*cols)]
        cand = _ml_candidates(spark, feats, cols[3], config)
    else:
        cand = _band_key_stage(spark, table.num_rows, bc, token, config) \
            .repartition(spark.sparkContext.defaultParallelism, "band", "key") \
            .mapInArrow(_bucket_batches, "x INT, y INT")
    got = _verify_stage(cand, bc, token, config, counted).toArrow()
    bc.unpersist()
    edges = np.stack([got.column("x").to_numpy(), got.column("y").to_numpy()], axis=1).astype(np.int64)
    return unique_pairs(edges), int(counted.value)


def spark_cluster(db: str | Path, spark, config: HangsConfig | None = None, candidates: str = "banded") -> ClusterRun:
    """cluster_store on Spark: the same incremental ids; candidates: 'banded' or 'minhashlsh' (see spark_edges)."""
    config = config or HangsConfig()
    con = connect(db)
    try:
        table = _signatures_table(con)
        keys = table.column("signature").to_pylist()
        weights = table.column("events").to_pylist()
        old = table.column("cluster_id").to_pylist()
        if all(o is not None for o in old):
            return ClusterRun(signatures=len(keys))
        edges, n_candidates = spark_edges(spark, table, config, candidates)
        labels, run = cluster_signatures(keys, [], weights, old, config, edges=edges)
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
