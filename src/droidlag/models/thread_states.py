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
    table = actions.derive(cat, end, names, blocked_payload)
    del actions
    return columns.table(table, THREAD_STATE_SCHEMA)
