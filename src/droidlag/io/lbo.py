"""Readers of LBO results: droidlag's own per-invocation schema (JSON lines or CSV, written by `droidlag gc run`),
and the logs of the LBO method's public tools: the distillation agent's "Tabulate Statistics" block and MMTk's
"MMTk Statistics Totals" block, in running-ng log files (`<bm>.<hfac*1000>.<heap MB>.<config>[.<suite>].log[.gz]`,
one invocation per prologue) or any console capture.

The schema (one object or row per invocation): `benchmark`, `collector`, `heap_factor`, `heap_mb`, `invocation`,
`status` (`ok`, `oom` or `timeout`), `pauses`, and per metric `<metric>` (total) and `<metric>.gc` (attributable to GC), with
metrics `wall` and `task_clock` in nanoseconds and `cycles`, `instructions` as counts (docs/gc-lbo.md).
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

from droidlag.errors import InputError, ReadWarning
from droidlag.models.lbo import METRICS, Cost, Invocation

TABULATE_HEAD = "Tabulate Statistics"
TABULATE_END = "End Tabulate Statistics"
MMTK_HEAD = "MMTk Statistics Totals"
MMTK_END = "End MMTk Statistics"
# perf event names the tools print, to droidlag's metric names.
COUNTER_NAMES = {"PERF_COUNT_SW_TASK_CLOCK": "task_clock", "PERF_COUNT_HW_CPU_CYCLES": "cycles",
                 "PERF_COUNT_HW_INSTRUCTIONS": "instructions"}
NS_PER_MS = 1_000_000
# Android logcat threadtime prefix (the ISMM'24 runner reads the block from logcat).
LOGCAT_PREFIX = re.compile(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d+\s+\d+\s+\d+\s+[VDIWEFA]\s+[^:]*:\s?")
RUNBMS_NAME = re.compile(r"^(?P<bm>\w+)\.(?P<hfac>\d+)\.(?P<size>\d+)\.(?P<config>[\w\-.:,]+?)\.log(\.gz)?$")
DACAPO_PASSED = re.compile(r"===== DaCapo \S+ (?P<bm>\S+) PASSED in (?P<ms>\d+) msec =====")
BENCH_STARTING = re.compile(r"===== (?:DaCapo \S+|BenchmarkRunner) (?P<bm>\S+) starting")
OOM = re.compile(r"OutOfMemoryError|Out of memory|Ran out of heap")
XMX = re.compile(r"-Xmx(\d+)([mMgG])")
USE_GC = re.compile(r"-XX:\+Use(\w+?)GC\b")
MMTK_PLAN = re.compile(r"MMTK_PLAN=(\w+)")
PROLOGUE = "mkdir -p PLOTTY_WORKAROUND"
SUFFIXES = (".jsonl", ".json", ".csv", ".log", ".gz", ".txt", ".md")


def read_lbo_results(path: str | Path) -> tuple[list[Invocation], list[ReadWarning]]:
    """Read every invocation under `path` (a results folder of `droidlag gc run`, a folder of running-ng logs, or
    one file). Raises InputError when nothing usable is found."""
    p = Path(path)
    if not p.exists():
        raise InputError(p, "no such file or folder")
    files = _result_files(p) if p.is_dir() else [p]
    invocations: list[Invocation] = []
    warnings: list[ReadWarning] = []
    for f in files:
        got, warn = read_lbo_file(f)
        invocations += got
        warnings += warn
    if not invocations:
        raise InputError(p, "no LBO results found (expected droidlag's results.jsonl/.csv, or logs with "
                            "'Tabulate Statistics' / 'MMTk Statistics Totals' blocks)")
    return invocations, warnings


def _result_files(folder: Path) -> list[Path]:
    """A `droidlag gc run` folder is read through its results.jsonl (its logs/ hold raw JVM output, not results);
    any other folder through every file with a results or log suffix."""
    if (folder / "results.jsonl").is_file():
        return [folder / "results.jsonl"]
    return sorted(f for f in folder.rglob("*") if f.is_file() and f.name.endswith(SUFFIXES))


def read_lbo_file(path: Path) -> tuple[list[Invocation], list[ReadWarning]]:
    """Read one file, choosing the format by its name and content."""
    text = _read_text(path)
    name = path.name.removesuffix(".gz")
    if name.endswith((".jsonl", ".json")):
        return _read_jsonl(path, text)
    if name.endswith(".csv"):
        return _read_csv(path, text)
    return read_tool_log(path, text)


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise InputError(path, f"cannot read: {e}") from e
    return raw.decode("utf-8", errors="replace")


class _RunMeta(TypedDict, total=False):
    """What a tool log says about its run (from the file name or its lines): benchmark, collector, heap size."""

    benchmark: str
    collector: str
    heap_factor: float
    heap_mb: float | None


# --- droidlag's own schema ---------------------------------------------------------------------------------------

def invocation_from_row(row: object, source: str) -> Invocation:
    """One invocation from a schema row (values may be strings, as in CSV). Raises ValueError/KeyError if broken."""
    if not isinstance(row, dict):
        raise TypeError("not an object")
    status = str(row.get("status", "ok")).strip().lower()
    oom, timeout = status == "oom", status == "timeout"
    costs: dict[str, Cost] = {}
    for m in METRICS:
        total, gc = _num(row.get(m)), _num(row.get(f"{m}.gc"))
        if total is not None:
            costs[m] = Cost(total, gc if gc is not None else 0.0)
    if not oom and not timeout and not costs:
        raise ValueError("no metric columns (wall, task_clock, cycles, instructions)")
    return Invocation(benchmark=str(row["benchmark"]), collector=str(row["collector"]),
                      heap_factor=_num(row.get("heap_factor")), invocation=int(float(row.get("invocation") or 0)),
                      costs=costs, heap_mb=_num(row.get("heap_mb")), oom=oom,
                      pauses=None if _num(row.get("pauses")) is None else int(_num(row.get("pauses")) or 0),
                      source=source, timeout=timeout)


def _num(v: object) -> float | None:
    if v is None or v == "":
        return None
    if not isinstance(v, (str, int, float)):
        raise TypeError(f"not a number: {v!r}")
    x = float(v)
    if math.isnan(x):
        return None
    return x


def _read_jsonl(path: Path, text: str) -> tuple[list[Invocation], list[ReadWarning]]:
    out: list[Invocation] = []
    warnings: list[ReadWarning] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(invocation_from_row(json.loads(line), f"{path}:{n}"))
        except (ValueError, KeyError, TypeError) as e:
            warnings.append(ReadWarning(str(path), f"skipped a row that is not an LBO invocation: {e}", line=n))
    return out, warnings


def _read_csv(path: Path, text: str) -> tuple[list[Invocation], list[ReadWarning]]:
    out: list[Invocation] = []
    warnings: list[ReadWarning] = []
    reader = csv.DictReader(io.StringIO(text))
    for row in reader:
        n = reader.line_num
        try:
            out.append(invocation_from_row(row, f"{path}:{n}"))
        except (ValueError, KeyError, TypeError) as e:
            warnings.append(ReadWarning(str(path), f"skipped a row that is not an LBO invocation: {e}", line=n))
    return out, warnings


# --- the public tools' logs --------------------------------------------------------------------------------------

def read_tool_log(path: Path, text: str) -> tuple[list[Invocation], list[ReadWarning]]:
    """Invocations from a running-ng log or console capture: one per statistics block; an invocation segment (from
    one running-ng prologue to the next) that ran out of memory and printed no block counts as an OOM invocation."""
    meta = _meta_from_name(path.name)
    lines = [LOGCAT_PREFIX.sub("", raw) for raw in text.splitlines()]
    out: list[Invocation] = []
    warnings: list[ReadWarning] = []
    for seg_start, seg_end in _segments(lines):
        seg_meta: _RunMeta = {**_meta_from_lines(lines[seg_start:seg_end]), **meta}
        blocks = list(_blocks(lines, seg_start, seg_end))
        for head, cols, vals, total_ms in blocks:
            inv = _block_invocation(path, head, cols, vals, total_ms, seg_meta, len(out), warnings)
            if inv is not None:
                out.append(inv)
        if not blocks and any(OOM.search(x) for x in lines[seg_start:seg_end]):
            out.append(_invocation(seg_meta, len(out), {}, None, f"{path}:{seg_start + 1}", oom=True))
    return out, warnings


def _segments(lines: list[str]) -> list[tuple[int, int]]:
    starts = [i for i, x in enumerate(lines) if x.startswith(PROLOGUE)] or [0]
    if starts[0] != 0:
        starts[0] = 0
    return list(zip(starts, starts[1:] + [len(lines)]))


def _blocks(lines: list[str], start: int, end: int) -> Iterator[tuple[int, list[str], list[str], float | None]]:
    """Yield (header line index, column names, values, 'Total time' ms or None) for each block in lines[start:end]."""
    i = start
    while i < end:
        line = lines[i]
        if "====" in line and ((TABULATE_HEAD in line and TABULATE_END not in line) or MMTK_HEAD in line):
            stop = TABULATE_END if TABULATE_HEAD in line else MMTK_END
            j = i + 1
            body = []
            while j < end and stop not in lines[j]:
                body.append(lines[j])
                j += 1
            total = next((float(m.group(1)) for b in body if (m := re.match(r"Total time:\s*([\d.]+)\s*ms", b))),
                         None)
            rows = [b.split() for b in body if b.strip() and not b.startswith("Total time:")]
            yield i, rows[0] if rows else [], rows[1] if len(rows) > 1 else [], total
            i = j
        i += 1


def _block_invocation(path: Path, head: int, cols: list[str], vals: list[str], total_ms: float | None, meta: _RunMeta,
                      index: int, warnings: list[ReadWarning]) -> Invocation | None:
    where = f"{path}:{head + 1}"
    if not cols or len(cols) != len(vals):
        warnings.append(ReadWarning(str(path), f"statistics block with {len(cols)} column names and {len(vals)} "
                                               "values: skipped", line=head + 1))
        return None
    try:
        row = {c: float(v) for c, v in zip(cols, vals)}
    except ValueError:
        warnings.append(ReadWarning(str(path), "statistics block with a non-numeric value: skipped", line=head + 1))
        return None
    costs = _costs_from_columns(row, total_ms)
    if "wall" not in costs:
        warnings.append(ReadWarning(str(path), "statistics block without time/time.other/time.stw: skipped",
                                    line=head + 1))
        return None
    pauses = int(row["pauses"]) if "pauses" in row else None
    return _invocation(meta, index, costs, pauses, where)


def _costs_from_columns(row: dict[str, float], total_ms: float | None) -> dict[str, Cost]:
    """`<c>.other` is the mutator (distilled) part, `<c>.stw` the stop-the-world part; `time` the wall total (ms)."""
    costs: dict[str, Cost] = {}
    for col in row:
        if not col.endswith(".stw"):
            continue
        base = col.removesuffix(".stw")
        if base == "freq" or f"{base}.other" not in row:
            continue  # frequencies (GHz) are not costs
        stw, other = row[col], row[f"{base}.other"]
        if base == "time":
            total = row.get("time", total_ms if total_ms is not None else other + stw)
            costs["wall"] = Cost(total * NS_PER_MS, stw * NS_PER_MS)
        else:
            costs[COUNTER_NAMES.get(base, base.lower())] = Cost(other + stw, stw)
    return costs


def _invocation(meta: _RunMeta, index: int, costs: dict[str, Cost], pauses: int | None, where: str,
                oom: bool = False) -> Invocation:
    return Invocation(benchmark=meta.get("benchmark", "?"), collector=meta.get("collector", "?"),
                      heap_factor=meta.get("heap_factor"), invocation=index, costs=costs,
                      heap_mb=meta.get("heap_mb"), oom=oom, pauses=pauses, source=where)


def _meta_from_name(name: str) -> _RunMeta:
    """running-ng names its logs `<bm>.<int(hfac*1000)>.<heap MB>.<config, '|' as '.'>.<suite>.log.gz`."""
    m = RUNBMS_NAME.match(name)
    if not m:
        return {}
    return {"benchmark": m["bm"], "heap_factor": int(m["hfac"]) / 1000, "heap_mb": float(m["size"]) or None,
            "collector": m["config"]}


def _meta_from_lines(lines: list[str]) -> _RunMeta:
    meta: _RunMeta = {}
    for line in lines:
        if "benchmark" not in meta and (m := DACAPO_PASSED.search(line) or BENCH_STARTING.search(line)):
            meta["benchmark"] = m["bm"]
        if "collector" not in meta and (m := USE_GC.search(line) or MMTK_PLAN.search(line)):
            meta["collector"] = m.group(1)
        if "heap_mb" not in meta and (m := XMX.search(line)):
            meta["heap_mb"] = float(m.group(1)) * (1024 if m.group(2) in "gG" else 1)
    return meta
