"""The fleet store: one DuckDB file, no server. The schema is documented in docs/fleet.md; every table exports to
Parquet. Events keep their parsed features once per distinct signature (`features`), which is also where cluster ids
live, so a million events that share ten thousand signatures store ten thousand feature rows."""
from __future__ import annotations

from pathlib import Path

import duckdb

from droidlag.errors import InputError

SCHEMA_VERSION = 1

TABLES = ("devices", "inputs", "events", "sessions", "features", "clusters", "meta")

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS devices (
    device_id VARCHAR PRIMARY KEY, model VARCHAR, hardware VARCHAR, android_version VARCHAR,
    build_fingerprint VARCHAR, storage_total_kb BIGINT, storage_used_kb BIGINT, uptime_s DOUBLE, cohort VARCHAR);
CREATE TABLE IF NOT EXISTS inputs (
    content_hash VARCHAR PRIMARY KEY, path VARCHAR, format VARCHAR, device_id VARCHAR, status VARCHAR,
    reason VARCHAR, bytes BIGINT, events INTEGER, sessions INTEGER, warnings INTEGER, batch INTEGER);
CREATE TABLE IF NOT EXISTS events (
    event_id VARCHAR PRIMARY KEY, content_hash VARCHAR, device_id VARCHAR, kind VARCHAR, app VARCHAR,
    ts TIMESTAMP, cause VARCHAR, signature VARCHAR, deadlock BOOLEAN, reason_kind VARCHAR);
CREATE TABLE IF NOT EXISTS sessions (
    session_id VARCHAR PRIMARY KEY, content_hash VARCHAR, device_id VARCHAR, app VARCHAR, ts TIMESTAMP,
    frames BIGINT, slow_frames BIGINT, frozen_frames BIGINT);
CREATE TABLE IF NOT EXISTS features (
    signature VARCHAR PRIMARY KEY, generic VARCHAR[], term_keys VARCHAR[], term_weights DOUBLE[],
    cluster_id INTEGER);
CREATE TABLE IF NOT EXISTS clusters (
    cluster_id INTEGER PRIMARY KEY, representative VARCHAR, signatures INTEGER, cause VARCHAR);
"""


def connect(path: str | Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) the store at path and make sure its tables exist. InputError naming the file for a
    file that is not a DuckDB database, or a DuckDB database that is not a droidlag fleet store (a mistyped --db is
    never written to)."""
    path = Path(path)
    if read_only and not path.exists():
        raise FileNotFoundError(f"{path}: no fleet store here (run `droidlag fleet ingest ... --db {path}`)")
    try:
        con = duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as e:
        raise InputError(path, f"cannot be opened as a fleet store (a DuckDB file): {str(e).splitlines()[0]}") from None
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if (read_only or tables) and "meta" not in tables:
        con.close()
        raise InputError(path, "a DuckDB database that is not a droidlag fleet store (no `meta` table); "
                               "give --db a new file or one `droidlag fleet ingest` made")
    if read_only:
        return con
    con.execute(_DDL)
    con.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
    return con


def export_parquet(con: duckdb.DuckDBPyConnection, out_dir: str | Path) -> list[Path]:
    """Write every table as out_dir/<table>.parquet (zstd); returns the files written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for t in TABLES:
        f = out / f"{t}.parquet"
        con.execute(f"COPY {t} TO '{_quote(f)}' (FORMAT PARQUET, COMPRESSION ZSTD)")
        files.append(f)
    return files


def _quote(p: Path) -> str:
    return str(p).replace("'", "''")


def table_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Row count of each table."""
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES}
