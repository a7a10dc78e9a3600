"""Thread-state intervals from a sched stream (switch, waking, blocked reason), for all threads at once in the native
core (`droidlag._native.thread_states`).

Per thread it is a small state machine: a switch closes the open interval of prev (which goes to prev_state) and of
next (which goes Running); a waking closes a sleeping interval (anything but Running/R/R+) and opens R; a blocked
reason closes a D interval, opens R, and names the function of the thread's latest closed D interval. Between two
switches of a thread only the first waking (or, after D, the first waking or blocked reason) changes anything."""
from __future__ import annotations

import numpy as np
import polars as pl

from droidlag._native import thread_states as _native_thread_states
from droidlag.models.trace import THREAD_STATE_SCHEMA

# Event kinds in the merged sched stream; the order breaks ties at equal timestamps (switch before waking).
SWITCH, WAKING, BLOCKED = 0, 1, 2
# Stands for None in the integer sched columns (cpu, waker); no real tid, cpu or timestamp takes it.
NONE = np.iinfo(np.int64).min
RUNNING = "Running"
# Thread-state categories deciding what a waking or a blocked reason does to the interval it finds open.
_CAT_RUNNABLE, _CAT_D, _CAT_OTHER = 0, 1, 2


def derive_thread_states(ts: np.ndarray, kind: np.ndarray, cpu: np.ndarray, a: np.ndarray, b: np.ndarray,
                         aux: np.ndarray, state_codes: dict[str, int], blocked_payload: list[tuple],
                         end: int) -> pl.DataFrame:
    """Intervals (THREAD_STATE_SCHEMA) from sched columns in insertion order (sorted here by time, then kind, ties
    kept in insertion order): for a switch a=prev tid, b=next tid, aux=prev_state code, cpu=cpu; for a waking
    a=tid, b=waker, cpu=target cpu; for a blocked reason a=tid, aux=index into blocked_payload [(function,
    io_wait)]. Open intervals run to `end` (ns)."""
    names = list(state_codes)
    cat = bytes(_CAT_RUNNABLE if s in (RUNNING, "R", "R+") else _CAT_D if s.startswith("D") else _CAT_OTHER
                for s in names)
    c = [np.ascontiguousarray(x, dtype=np.int64) for x in (ts, kind, cpu, a, b, aux)]
    r = _native_thread_states(c[0], c[1], c[2], c[3], c[4], c[5], cat, state_codes[RUNNING], state_codes["R"], end)
    del c
    if not r["ts"]:
        return pl.DataFrame(schema=THREAD_STATE_SCHEMA)
    col = lambda k: np.frombuffer(r[k], dtype=np.int64)  # noqa: E731
    blocked = col("blocked")
    fn: list = [None] * len(blocked)
    io: list = [None] * len(blocked)
    for row in np.flatnonzero(blocked >= 0).tolist():
        fn[row], io[row] = blocked_payload[int(blocked[row])]

    def nullable(arr: np.ndarray, dtype) -> pl.Series:
        s = pl.Series(arr)
        return s.set(s == NONE, None).cast(dtype) if (arr == NONE).any() else s.cast(dtype)

    return pl.DataFrame({
        "ts": pl.Series(col("ts")), "dur": pl.Series(col("dur")), "tid": pl.Series(col("tid")),
        "state": pl.Series(names, dtype=pl.Utf8).gather(col("state")),
        "cpu": nullable(col("cpu"), pl.Int32), "blocked_function": pl.Series(fn, dtype=pl.Utf8),
        "io_wait": pl.Series(io, dtype=pl.Boolean), "waker_tid": nullable(col("waker"), pl.Int64),
    }, schema=THREAD_STATE_SCHEMA)
