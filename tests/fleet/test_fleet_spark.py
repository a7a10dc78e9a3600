"""The Spark engine (PySpark, local[2]) gives the same parsed inputs, clusters and statistics as the DuckDB path on
the same generated fleet. One Spark session for the module (its start-up is most of the cost)."""
from __future__ import annotations

import shutil

import duckdb
import pytest

from droidlag.fleet.ingest import ingest
from droidlag.fleet.pipeline import store_stats

pytestmark = [pytest.mark.corpus, pytest.mark.slow]


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.fail("the Spark engine needs Java 17+ on the PATH")
    from droidlag.fleet.spark import spark_session
    s = spark_session("local[2]")
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def _table(db, sql):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_spark_ingest_clusters_and_stats_equal_duckdb(spark, small_fleet, small_fleet_db, tmp_path):
    from droidlag.fleet.spark import spark_cluster, spark_parsed, spark_stats
    folder, truth = small_fleet
    db = tmp_path / "spark.duckdb"
    s = ingest([folder], db, manifest=folder / "manifest.csv", parser=lambda files: spark_parsed(spark, files))
    assert s.events == len(truth["events"])
    for sql in ("SELECT content_hash, format, device_id, status, events, sessions FROM inputs ORDER BY 1",
                "SELECT event_id, device_id, kind, app, ts, cause, signature FROM events ORDER BY 1",
                "SELECT * FROM sessions ORDER BY 1", "SELECT * FROM devices ORDER BY 1"):
        assert _table(db, sql) == _table(small_fleet_db, sql), sql
    sql = "SELECT signature, cluster_id FROM features ORDER BY 1"
    for candidates in ("banded", "minhashlsh"):   # band keys joined in Spark SQL; Spark ML's MinHashLSH
        con = duckdb.connect(str(db))
        con.execute("UPDATE features SET cluster_id = NULL")
        con.execute("DELETE FROM clusters")
        con.close()
        run = spark_cluster(db, spark, candidates=candidates)
        assert run.candidates > 0 and run.new_signatures == run.signatures
        assert _table(db, sql) == _table(small_fleet_db, sql), candidates
        assert _table(db, "SELECT * FROM clusters ORDER BY 1") == _table(small_fleet_db,
                                                                          "SELECT * FROM clusters ORDER BY 1")
    assert spark_stats(db, spark) == store_stats(small_fleet_db)
