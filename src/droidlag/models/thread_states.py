"""Thread-state intervals from a sched stream (switch, waking, blocked reason), for all threads at once in the native
core (`droidlag._native.thread_state_actions`).

Per thread it is a small state machine: a switch closes the open interval of prev (which goes to prev_state) and of
next (which goes Running); a waking closes a sleeping interval (anything but Running/R/R+) and opens R; a blocked
reason closes a D interval, opens R, and names the function of the thread's latest closed D interval. Between two
switches of a thread only the first waking (or, after D, the first waking or blocked reason) changes anything."""
from __future__ import annotations

import numpy as np
import polars as pl

from droidlag._native import thread_state_actions
from droidlag.models import columns
from droidlag.models.trace import THREAD_STATE_SCHEMA

# Event kinds in the merged sched stream; the order breaks ties at equal timestamps (switch before waking).
SWITCH, WAKING, BLOCKED = 0, 1, 2
# Stands for None in the integer sched columns (cpu, waker); no real tid, cpu or timestamp takes it.
NONE = columns.NONE
# The sched columns' types as the native pass takes them (cpu: int32 min for None)
SCHED_DTYPES = (np.int64, np.uint8, np.int32, np.int64, np.int64, np.int32)
RUNNING = "Running"
# Thread-state categories deciding what a waking or a blocked reason does to the interval it finds open.
_CAT_RUNNABLE, _CAT_D, _CAT_OTHER = 0, 1, 2


def derive_thread_states(sched: list[np.ndarray], state_codes: dict[str, int], blocked_payload: list[tuple[str | None, bool | None]],
                         end: int) -> pl.DataFrame:
    """Intervals (THREAD_STATE_SCHEMA) from the sched columns [ts, kind, cpu, a, b, aux] (SCHED_DTYPES) in insertion order (sorted
    here by time, then kind, ties kept in insertion order): for a switch a=prev tid, b=next tid, aux=prev_state
    code, cpu=cpu; for a waking a=tid, b=waker, cpu=target cpu; for a blocked reason a=tid, aux=index into
    blocked_payload [(function, io_wait)]. Open intervals run to `end` (ns). The list is emptied: the columns are let
    go as soon as the native pass is done, before the table is built."""
    names = list(state_codes)
    cat = bytes(_CAT_RUNNABLE if s in (RUNNING, "R", "R+") else _CAT_D if s.startswith("D") else _CAT_OTHER
                for s in names)
    c = [np.ascontiguousarray(x, dtype=t) for x, t in zip(sched, SCHED_DTYPES)]
    sched.clear()
    actions = thread_state_actions(c[0], c[1], c[2], c[3], c[4], c[5], state_codes[RUNNING], state_codes["R"])
    del c       # the events are in the actions now: let them go before the intervals are written
    r = actions.derive(cat, end)
    del actions
    if not r["ts"]:
        return columns.empty(THREAD_STATE_SCHEMA)
    n = len(r["ts"]) // 8
    # the few rows a blocked reason names take their payload by a gather from the payloads with a null first (a
    # scatter into all-null columns held as much once done, and its first use in a process cost megabytes more)
    rows, payload = columns.int64(r["blocked_rows"]), columns.int64(r["blocked_payload"])
    if len(rows):
        pick = np.zeros(n, dtype=np.int64)
        pick[rows] = np.arange(1, len(rows) + 1)
        payloads = [blocked_payload[i] for i in payload.tolist()]
        fn = columns.take(pl.Series("blocked_function", [None, *(p[0] for p in payloads)], dtype=pl.Utf8), pick)
        io = columns.take(pl.Series("io_wait", [None, *(p[1] for p in payloads)], dtype=pl.Boolean), pick)
    else:
        fn = columns.nulls("blocked_function", pl.Utf8, n)
        io = columns.nulls("io_wait", pl.Boolean, n)
    return columns.frame({
        "ts": pl.Series(columns.int64(r["ts"])), "dur": pl.Series(columns.int64(r["dur"])),
        "tid": pl.Series(columns.int64(r["tid"])),
        "state": columns.take(pl.Series(names, dtype=pl.Categorical), columns.int32(r["state"])),
        "cpu": columns.nullable32(r["cpu"]), "blocked_function": fn, "io_wait": io,
        "waker_tid": columns.nullable(columns.int64(r["waker"]), pl.Int64),
    }, THREAD_STATE_SCHEMA)
