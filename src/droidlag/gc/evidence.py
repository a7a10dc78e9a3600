"""GC as evidence for the analyses above it: which frames overlapped a blocking GC on their own threads (from the
trace's GC slices), and whether a hang's blocked thread was stalled by GC in the log of the same capture or caught
waiting for one in its process dump."""
from __future__ import annotations

import calendar
import re

import numpy as np
import polars as pl

from droidlag.gc.device import GcConfig, blocking_events
from droidlag.gc.trace import blocking_slices
from droidlag.models.gc import STARTING_BLOCKING, WAIT_DONE, WAITING_BLOCKING, ArtGcDump, GcLog
from droidlag.models.trace import Trace

_DUMP_TIME = re.compile(r"^(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?")


def _overlaps(idx: tuple[np.ndarray, np.ndarray, list[str]], a: int, b: int) -> list[tuple[int, int, str]]:
    s, e, names = idx
    j = int(np.searchsorted(s, b, side="left"))
    out = []
    for k in range(j - 1, -1, -1):
        if e[k] > a:
            out.append((int(s[k]), int(e[k]), names[k]))
        elif s[k] + 60_000_000_000 < a:   # no GC slice lasts a minute: nothing earlier can reach the frame
            break
    return out[::-1]


def _frame_gc(row: dict, index: dict, threads: dict) -> str | None:
    a, b = row["start_ns"], row["end_ns"]
    found = []
    for role in ("ui_tid", "render_tid"):
        tid = row.get(role)
        if tid is None or tid not in index:
            continue
        for s, e, name in _overlaps(index[tid], a, b):
            found.append({"thread": threads.get(tid) or str(tid), "tid": tid, "slice": name,
                          "overlap_ns": min(b, e) - max(a, s), "start_ns": s, "dur_ns": e - s})
    if not found:
        return None
    import json
    return json.dumps({"blocking_gc_ns": sum(f["overlap_ns"] for f in found), "slices": found[:8]})


def frames_with_gc(trace: Trace, frames: pl.DataFrame) -> pl.DataFrame:
    """frames plus a `gc_blocking` column: JSON text naming the GC waits and GC runs on the frame's main thread or
    RenderThread that overlapped the frame, with the overlap in ns; null when none did."""
    if not frames.height or "ui_tid" not in frames.columns:
        return frames
    index = blocking_slices(trace)
    if not index:
        return frames.with_columns(pl.lit(None, dtype=pl.Utf8).alias("gc_blocking"))
    names = {tid: t.name for tid, t in trace.threads.items()}
    col = [_frame_gc(r, index, names)
           for r in frames.select("start_ns", "end_ns", "ui_tid", "render_tid").iter_rows(named=True)]
    return frames.with_columns(pl.Series("gc_blocking", col, dtype=pl.Utf8))


def dump_time_ns(text: str) -> int | None:
    """A thread dump's `YYYY-MM-DD HH:MM:SS[.fff]` time in ns on the same naive clock as logcat times."""
    m = _DUMP_TIME.match(text.strip()) if text else None
    if not m:
        return None
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac = int(((m.group(7) or "") + "000000000")[:9])
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) * 1_000_000_000 + frac


def hang_gc(log: GcLog, pid: int | None, tid: int | None, dump_time: str | None,
            config: GcConfig | None = None) -> dict | None:
    """What the log says about GC blocking the hung thread: its blocking-GC lines in the `hang_window_ns` before the
    dump (or, without a dump time, anywhere in the log, said so). None when there are none."""
    config = config or GcConfig()
    if pid is None or log.clock != "wall":
        return None
    at = dump_time_ns(dump_time or "")
    if at is not None and not log.year_known:
        return None   # a year-less log cannot be placed against a dated dump
    lo, hi = (at - config.hang_window_ns, at) if at is not None else (-(1 << 62), 1 << 62)
    evs = blocking_events(log, pid, tid, lo, hi)
    if not evs:
        return None
    waited = sum(e.duration_ns or 0 for e in evs if e.kind == WAIT_DONE)
    return {
        "window": f"{config.hang_window_ns // 1_000_000_000} s before the dump" if at is not None else "whole log",
        "waits": sum(e.kind == WAITING_BLOCKING for e in evs),
        "blocking_gcs_started": sum(e.kind == STARTING_BLOCKING for e in evs),
        "waited_ns": waited,
        "causes": sorted({e.cause for e in evs if e.cause}),
        "thread_known": all(e.tid is not None for e in evs),
        "lines": [e.line for e in evs[:10]],
    }


def hang_gc_from_dump(dumps: list[ArtGcDump], pid: int | None, dump_time: str | None, thread_name: str | None,
                      thread_is_main: bool) -> dict | None:
    """What the hung process's own dump says about GC: whether the blocked thread was caught waiting for a GC, and
    the process's blocking-GC totals since it started. None unless one of them is there (the thread waiting, or at
    least one blocking GC). A dump without a pid (read without its `----- pid` header) is never matched."""
    if pid is None:
        return None
    mine = [d for d in dumps if d.pid is not None and d.pid == pid]
    if not mine:
        return None
    d = next((x for x in reversed(mine) if dump_time and x.time == dump_time), mine[-1])
    waiting = next((state for name, main, state in d.threads_waiting_for_gc
                    if (thread_is_main and main) or (thread_name is not None and name == thread_name)), None)
    if waiting is None and not d.blocking_gc_count:
        return None
    out: dict = {"blocked_thread_state": waiting, "blocking_gc_count": d.blocking_gc_count,
                 "blocking_gc_time_ns": d.blocking_gc_time_ns, "wait_for_gc_ns": d.wait_for_gc_ns,
                 "gc_count": d.gc_count, "gc_time_ns": d.gc_time_ns, "dump_line": d.line}
    if d.heap_used_bytes is not None and d.max_memory_bytes:
        out["heap_used_of_max"] = round(d.heap_used_bytes / d.max_memory_bytes, 4)
    return out
