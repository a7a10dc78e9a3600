"""`ingest(paths, db)`: many devices' files into the store. Files are parsed in worker processes (parse.py), then
written batch by batch, each batch in one transaction: a kill mid-batch leaves the store as it was before that
batch, and a rerun skips what committed (inputs are keyed by content hash, so the same content twice adds nothing)
and does the rest.

Which device a file belongs to: the manifest CSV's row for it when one is given (columns `path`, `device_id`, and
optionally `model`, `hardware`, `android_version`, `cohort`, `time`); else the first folder below the ingested
folder (one folder per phone); else the file itself (`file:` + its content hash). Facts the file states about its
phone (build fingerprint, model, Android version, storage, uptime) fill the device's row where the manifest is
silent."""
from __future__ import annotations

import csv
import hashlib
import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from droidlag.errors import InputError
from droidlag.fleet.parse import ParsedInput, parse_input, parse_time
from droidlag.fleet.store import connect
from droidlag.io.archive import is_tar
from droidlag.io.budget import run_budget
from droidlag.io.inputs import ARCHIVE_KINDS, discover, expand_archives, walk
from droidlag.io.source import GZIP_MAGIC
from droidlag.io.tempfiles import run_temp_dir

DEVICE_FIELDS = ("model", "hardware", "android_version", "build_fingerprint", "storage_total_kb", "storage_used_kb",
                 "uptime_s", "cohort")


@dataclass
class IngestSummary:
    """What one ingest did: files seen, already in the store, added; events and sessions added; skipped and failed
    files with their reasons; bytes parsed and seconds taken."""

    files: int = 0
    already: int = 0
    added: int = 0   # of which `empty` hold no event and no session
    events: int = 0
    sessions: int = 0
    bytes: int = 0
    seconds: float = 0.0
    batches: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    empty: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)   # about the run's own inputs (the manifest)

    def to_dict(self) -> dict:
        return {"files": self.files, "already_in_store": self.already, "added": self.added, "events": self.events,
                "sessions": self.sessions, "bytes": self.bytes, "seconds": round(self.seconds, 3),
                "batches": self.batches,
                "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
                "failed": [{"path": p, "reason": r} for p, r in self.failed],
                "empty": [{"path": p, "reason": r} for p, r in self.empty], "notes": list(self.notes),
                "skipped_by_reason": dict(Counter(r for _, r in self.skipped))}


def read_manifest(path: str | Path) -> dict[str, dict]:
    """Manifest rows keyed by resolved file path (paths relative to the manifest's folder), each with its line number
    (`_line`). InputError (file, line) for a manifest without `path` and `device_id` columns, with an empty device
    id, or with a `time` that is not a date and time."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as e:
        raise InputError(path, f"cannot read manifest: {e.strerror or e}") from None
    reader = csv.DictReader(text.splitlines())
    cols = set(reader.fieldnames or [])
    if not {"path", "device_id"} <= cols:
        raise InputError(path, "manifest needs the columns path and device_id", line=1)
    out: dict[str, dict] = {}
    for lineno, row in enumerate(reader, start=2):
        if not (row.get("device_id") or "").strip() or not (row.get("path") or "").strip():
            raise InputError(path, "row without path or device_id", line=lineno)
        f = Path(row["path"])
        if not f.is_absolute():
            f = path.parent / f
        t = (row.get("time") or "").strip()
        if t and parse_time(t) is None:
            raise InputError(path, f"time {t!r} is not YYYY-MM-DD HH:MM:SS[.ffffff]", line=lineno)
        out[str(f.resolve())] = {k: v.strip() for k, v in row.items() if k and v and v.strip()} | {"_line": lineno}
    return out


def _manifest_notes(manifest: str | Path, rows: dict[str, dict]) -> list[str]:
    """A manifest row naming a file that does not exist is said, not dropped (rows naming files that exist but were
    not among the paths given are fine: a manifest may cover more than one ingest)."""
    return [f"{manifest}:{row['_line']}: names {f}, which does not exist" for f, row in rows.items()
            if not Path(f).exists()]


def _files(paths: Iterable[str | Path], manifest_path: str | Path | None) -> list[tuple[Path, str | None]]:
    """(file, device folder name or None) for every file to ingest; the manifest itself is left out."""
    skip = str(Path(manifest_path).resolve()) if manifest_path else None
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            for f in walk(p):
                if f.suffix.lower() == ".md" or str(f.resolve()) == skip:
                    continue
                rel = f.relative_to(p).parts
                out.append((f, rel[0] if len(rel) > 1 else None))
        else:
            out.append((p, None))
    return out


@dataclass
class _Origin:
    """Where a file to parse came from: its device folder, and for an archive's entry the archive (whose manifest
    row, device folder or own identity the entry inherits: a bundle is one phone's) and the name shown."""

    folder: str | None = None
    archive: Path | None = None
    archive_id: str | None = None
    display: str | None = None


def _looks_archived(f: Path) -> bool:
    """Cheap first test (512 bytes) before the sniff that tells a plain zip or tar from a bugreport or a gzip'd text."""
    try:
        with open(f, "rb") as fh:
            head = fh.read(512)
    except OSError:
        return False
    return head[:4] == b"PK\x03\x04" or head[:2] == GZIP_MAGIC or is_tar(head)


def _expand(listed: list[tuple[Path, str | None]], tmp: Path,
            summary: IngestSummary) -> tuple[list[Path], dict[str, _Origin]]:
    """The files to parse, with archives (plain zip, tar, tar.gz; not bugreports) replaced by their entries,
    extracted under tmp within the run's budget as `analyze` does; entries that are not inputs are said skipped."""
    files: list[Path] = []
    origin: dict[str, _Origin] = {}
    for f, folder in listed:
        items = discover([f]) if _looks_archived(f) else []
        if not items or items[0].kind not in ARCHIVE_KINDS:
            files.append(f)
            origin[str(f)] = _Origin(folder)
            continue
        archive_id = f"archive:{(file_hash(f) or '')[:16]}"
        for item in expand_archives(items, tmp):
            shown = item.display or str(item.path)
            if item.status == "pending":
                files.append(item.path)
                origin[str(item.path)] = _Origin(folder, f, archive_id, shown)
            elif item.kind not in ARCHIVE_KINDS or item.status != "analyzed":
                summary.skipped.append((shown, item.reason or "not usable"))
    return files, origin


def _device_row(parsed: ParsedInput, where: _Origin, manifest: dict[str, dict]) -> dict:
    row = dict(manifest.get(str(Path(where.archive or parsed.path).resolve()), {}))
    device_id = (row.get("device_id") or where.folder or where.archive_id
                 or f"file:{parsed.content_hash[:16]}")
    dev = {"device_id": device_id}
    for k in DEVICE_FIELDS:
        dev[k] = row.get(k) if row.get(k) is not None else parsed.meta.get(k)
    for k in ("storage_total_kb", "storage_used_kb"):
        dev[k] = int(dev[k]) if dev[k] is not None else None
    dev["uptime_s"] = float(dev["uptime_s"]) if dev["uptime_s"] is not None else None
    dev["_time"] = parse_time(row.get("time"))
    return dev


_UPSERT_DEVICE = ("INSERT INTO devices SELECT * FROM _ingest_rows ON CONFLICT (device_id) DO UPDATE SET "
                  + ", ".join(f"{k} = coalesce(devices.{k}, excluded.{k})" for k in DEVICE_FIELDS))


def _write_batch(con: duckdb.DuckDBPyConnection, batch: list[tuple[ParsedInput, dict]], batch_no: int,
                 pause: Callable[[], None] | None = None) -> None:
    """One transaction: devices, inputs, events, sessions and new feature rows of the batch."""
    devices: dict[str, dict] = {}
    feats: dict[str, tuple] = {}
    inputs, events, sessions = [], [], []
    for parsed, dev in batch:
        if parsed.status == "ok":   # a skipped or failed file says nothing about a phone
            d = devices.setdefault(dev["device_id"], dict(dev))
            for k in DEVICE_FIELDS:
                if d.get(k) is None:
                    d[k] = dev[k]
        h = parsed.content_hash
        inputs.append((h, parsed.path, parsed.format, dev["device_id"], parsed.status, parsed.reason, parsed.bytes,
                       len(parsed.events), len(parsed.sessions), parsed.warnings, batch_no))
        for i, e in enumerate(parsed.events):
            events.append((f"{h[:16]}:{i}", h, dev["device_id"], e["kind"], e["app"], e["ts"] or dev["_time"],
                           e["cause"], e["signature"], e["deadlock"], e["reason_kind"]))
            feats.setdefault(e["signature"], (e["signature"], e["generic"], e["term_keys"], e["term_weights"], None))
        for i, s in enumerate(parsed.sessions):
            sessions.append((f"{h[:16]}:s{i}", h, dev["device_id"], s["app"], dev["_time"], s["frames"],
                             s["slow_frames"], s["frozen_frames"]))
    con.begin()
    try:
        if devices:
            _insert(con, "devices", [tuple(d[k] for k in ("device_id",) + DEVICE_FIELDS) for d in devices.values()],
                    _UPSERT_DEVICE)
        _insert(con, "inputs", inputs)
        if pause is not None:   # tests: a kill lands here, mid-transaction
            pause()
        _insert(con, "events", events)
        _insert(con, "sessions", sessions)
        _insert(con, "features", list(feats.values()))
        con.commit()
    except BaseException:
        con.rollback()
        raise


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple], sql: str | None = None) -> None:
    """rows into table in one statement over an Arrow table (executemany runs one statement per row: it was most
    of the driver's time); columns typed as the store's, so that empty or all-null columns cast cleanly."""
    if not rows:
        return
    schema = _schema(con, table)
    data = pa.table([pa.array(col, type=t) for col, t in zip(zip(*rows), schema.types)], schema=schema)
    con.register("_ingest_rows", data)
    try:
        con.execute(sql or f"INSERT OR IGNORE INTO {table} SELECT * FROM _ingest_rows")
    finally:
        con.unregister("_ingest_rows")


_ARROW_TYPES = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "INTEGER": pa.int32(), "DOUBLE": pa.float64(),
                "BOOLEAN": pa.bool_(), "TIMESTAMP": pa.timestamp("us"), "VARCHAR[]": pa.list_(pa.string()),
                "DOUBLE[]": pa.list_(pa.float64())}


def _schema(con: duckdb.DuckDBPyConnection, table: str) -> pa.Schema:
    cols = con.execute(f"DESCRIBE {table}").fetchall()
    return pa.schema([(name, _ARROW_TYPES[typ]) for name, typ, *_ in cols])


def _parsed(files: list[Path], jobs: int) -> Iterator[ParsedInput]:
    if jobs <= 1 or len(files) < 4:
        yield from map(parse_input, files)
        return
    # spawned, not forked: the parent holds DuckDB's and polars' thread pools, and a child forked while one of their
    # threads holds a lock waits on it for ever (seen: ingest hung after an earlier in-process CLI run)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield from pool.map(parse_input, files, chunksize=max(1, min(64, len(files) // (jobs * 8))))


def ingest(paths: Iterable[str | Path], db: str | Path, manifest: str | Path | None = None, jobs: int | None = None,
           batch_size: int = 500, progress: Callable[[int, int], None] | None = None,
           parser: Callable[[list[Path]], Iterable[ParsedInput]] | None = None) -> IngestSummary:
    """Add every file under paths to the store at db (see the module text). jobs: worker processes (default: the
    cores); progress(files_done, bytes_done) after each file; parser: parses the files in order on another engine
    (Spark's executors) instead of local worker processes. Empty paths with a manifest: the files it names.
    Returns what was added, skipped and why."""
    t0 = time.perf_counter()
    rows = read_manifest(manifest) if manifest else {}
    # no paths: the files the manifest names (those missing are said in the notes)
    listed = _files(list(paths) or [f for f in rows if Path(f).exists()], manifest)
    summary = IngestSummary(notes=_manifest_notes(manifest, rows) if manifest else [])
    with run_budget(), run_temp_dir() as tmp:
        to_parse, origin = _expand(listed, Path(tmp), summary)
        summary.files = len(to_parse) + len(summary.skipped)
        _ingest_files(to_parse, origin, db, rows, summary, jobs, batch_size, progress, parser)
    summary.seconds = time.perf_counter() - t0
    return summary


def _ingest_files(to_parse: list[Path], origin: dict[str, _Origin], db: str | Path, rows: dict[str, dict],
                  summary: IngestSummary, jobs: int | None, batch_size: int, progress: Callable[[int, int], None] | None,
                  parser: Callable[[list[Path]], Iterable[ParsedInput]] | None) -> None:
    """Parse the files (workers or the given engine) and write them to the store batch by batch."""
    con = connect(db)
    try:
        known = {r[0] for r in con.execute("SELECT content_hash FROM inputs").fetchall()}
        batch_no = (con.execute("SELECT coalesce(max(batch), 0) FROM inputs").fetchall()[0][0] or 0) + 1
        pause = _test_pause()
        batch: list[tuple[ParsedInput, dict]] = []
        done = 0
        files, summary.already = _new_files(to_parse, known)
        parsed_all = parser(files) if parser is not None else _parsed(files, jobs or os.cpu_count() or 1)
        for parsed in parsed_all:
            done += 1
            where = origin.get(parsed.path, _Origin())
            if where.display:   # an archive's entry is stored and reported by its name, not its temporary file
                parsed.path = where.display
            summary.bytes += parsed.bytes
            if progress is not None:
                progress(done, summary.bytes)
            if parsed.status == "failed" and not parsed.content_hash:
                summary.failed.append((parsed.path, parsed.reason or "unreadable"))
                continue
            if parsed.content_hash in known:   # the same content twice in this run
                summary.already += 1
                continue
            known.add(parsed.content_hash)
            _account(summary, parsed)
            batch.append((parsed, _device_row(parsed, where, rows)))
            if len(batch) >= batch_size:
                _write_batch(con, batch, batch_no, pause)
                batch, batch_no, summary.batches = [], batch_no + 1, summary.batches + 1
        if batch:
            _write_batch(con, batch, batch_no, pause)
            summary.batches += 1
    finally:
        con.close()


def file_hash(path: Path) -> str | None:
    """SHA-256 of a file's bytes, streamed (None when unreadable: the parser reports why)."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def _new_files(files: list[Path], known: set[str]) -> tuple[list[Path], int]:
    """The files whose content is not in the store yet (hashing is far cheaper than parsing), and how many are.
    An empty store knows none: nothing is read twice (the workers hash what they parse)."""
    if not known:
        return files, 0
    new = [f for f in files if file_hash(f) not in known]
    return new, len(files) - len(new)


def _account(summary: IngestSummary, parsed: ParsedInput) -> None:
    if parsed.status == "ok":
        summary.added += 1
        summary.events += len(parsed.events)
        summary.sessions += len(parsed.sessions)
        if parsed.reason:   # read and stored, but it holds nothing: not a skipped file
            summary.empty.append((parsed.path, parsed.reason))
    elif parsed.status == "skipped":
        summary.skipped.append((parsed.path, parsed.reason or "not usable"))
    else:
        summary.failed.append((parsed.path, parsed.reason or "unreadable"))


def _test_pause() -> Callable[[], None] | None:
    """DROIDLAG_FLEET_PAUSE_IN_BATCH=FILE: the kill -9 test's hook; inside a batch's transaction, create FILE and
    sleep, so the test can kill the process there."""
    flag = os.environ.get("DROIDLAG_FLEET_PAUSE_IN_BATCH")
    if not flag:
        return None

    def pause() -> None:
        Path(flag).touch()
        time.sleep(60)
    return pause
