"""Thread-state intervals from a sched stream (switch, waking, blocked reason), for all threads at once with numpy.

Per thread it is a small state machine: a switch closes the open interval of prev (which goes to prev_state) and of
next (which goes Running); a waking closes a sleeping interval (anything but Running/R/R+) and opens R; a blocked
reason closes a D interval, opens R, and names the function of the thread's latest closed D interval. Between two
switches of a thread only the first waking (or, after D, the first waking or blocked reason) changes anything,
which is what lets numpy do it without a per-event Python loop."""
from __future__ import annotations

import numpy as np
import polars as pl

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
    """Intervals (THREAD_STATE_SCHEMA) from time-sorted sched columns: for a switch a=prev tid, b=next tid,
    aux=prev_state code, cpu=cpu; for a waking a=tid, b=waker, cpu=target cpu; for a blocked reason a=tid,
    aux=index into blocked_payload [(function, io_wait)]. Open intervals run to `end` (ns)."""
    names = list(state_codes)
    running, runnable_r = state_codes[RUNNING], state_codes["R"]

    # One action per (thread, event): a switch gives prev an OUT and next an IN; tid 0 (idle) gets none.
    pos = np.arange(len(ts), dtype=np.int64) * 2
    sw = kind == SWITCH
    out_m = sw & (a != 0)
    in_m = sw & (b != 0)
    other = ~sw
    n_none = lambda m: np.full(int(m.sum()), NONE, dtype=np.int64)  # noqa: E731
    act_tid = np.concatenate((a[out_m], b[in_m], a[other]))
    act_pos = np.concatenate((pos[out_m], pos[in_m] + 1, pos[other]))
    act_ts = np.concatenate((ts[out_m], ts[in_m], ts[other]))
    act_kind = np.concatenate((np.full(int(out_m.sum()), SWITCH), np.full(int(in_m.sum()), SWITCH),
                               kind[other]))
    act_state = np.concatenate((aux[out_m], np.full(int(in_m.sum()), running),
                                np.full(int(other.sum()), runnable_r)))
    act_cpu = np.concatenate((n_none(out_m), cpu[in_m], np.where(kind[other] == WAKING, cpu[other], NONE)))
    act_waker = np.concatenate((n_none(out_m), n_none(in_m), np.where(kind[other] == WAKING, b[other], NONE)))
    act_aux = np.concatenate((n_none(out_m), n_none(in_m), aux[other]))
    del ts, kind, cpu, a, b, aux, pos, sw, out_m, in_m, other
    o = np.lexsort((act_pos, act_tid))
    tid, t, k, st = act_tid[o], act_ts[o], act_kind[o], act_state[o]
    c, w, x = act_cpu[o], act_waker[o], act_aux[o]
    del o, act_tid, act_pos, act_ts, act_kind, act_state, act_cpu, act_waker, act_aux
    n = len(tid)
    if not n:
        return pl.DataFrame(schema=THREAD_STATE_SCHEMA)

    # Segments: a thread's actions from one switch to the next (or from its first action).
    is_sw = k == SWITCH
    new_tid = np.ones(n, dtype=bool)
    new_tid[1:] = tid[1:] != tid[:-1]
    seg_start = is_sw | new_tid
    seg = np.cumsum(seg_start) - 1
    cat_of_code = np.array([_CAT_RUNNABLE if s in (RUNNING, "R", "R+") else _CAT_D if s.startswith("D")
                            else _CAT_OTHER for s in names], dtype=np.int8)
    first = np.flatnonzero(seg_start)
    seg_cat = np.where(is_sw[first], cat_of_code[st[first]], _CAT_OTHER)   # no switch yet: nothing open
    cat = seg_cat[seg]
    trigger = ((k == WAKING) & (cat != _CAT_RUNNABLE)) | ((k == BLOCKED) & (cat == _CAT_D))
    n_trig = np.cumsum(trigger)
    before_seg = (n_trig - trigger)[first][seg]
    effective = is_sw | (trigger & (n_trig - before_seg == 1))

    rows = np.flatnonzero(effective)
    r_tid, r_ts = tid[rows], t[rows]
    r_end = np.empty(len(rows), dtype=np.int64)
    r_end[:-1] = r_ts[1:]
    r_end[-1] = end
    last_of_tid = np.ones(len(rows), dtype=bool)
    last_of_tid[:-1] = r_tid[1:] != r_tid[:-1]
    r_end[last_of_tid] = end
    r_state = st[rows]
    r_cpu = np.where(k[rows] == BLOCKED, NONE, c[rows])
    r_waker = w[rows]

    # Blocked reasons: each names the thread's latest D interval closed at or before it (the last one wins).
    fn: list = [None] * len(rows)
    io: list = [None] * len(rows)
    blocked = np.flatnonzero(k == BLOCKED)
    if len(blocked):
        is_d = cat_of_code[r_state] == _CAT_D
        closes_d = is_d & ~last_of_tid                     # closed by the thread's next effective action
        mark = np.full(n, -1, dtype=np.int64)
        d_rows = np.flatnonzero(closes_d)
        mark[rows[d_rows + 1]] = d_rows
        latest = np.maximum.accumulate(mark)
        payload = blocked_payload
        for i in blocked.tolist():
            row = int(latest[i])
            if row >= 0 and r_tid[row] == tid[i]:
                fn[row], io[row] = payload[int(x[i])]

    def nullable(arr: np.ndarray, dtype) -> pl.Series:
        s = pl.Series(arr)
        return s.set(s == NONE, None).cast(dtype) if (arr == NONE).any() else s.cast(dtype)

    return pl.DataFrame({
        "ts": pl.Series(r_ts), "dur": pl.Series(r_end - r_ts), "tid": pl.Series(r_tid),
        "state": pl.Series(names, dtype=pl.Utf8).gather(r_state),
        "cpu": nullable(r_cpu, pl.Int32), "blocked_function": pl.Series(fn, dtype=pl.Utf8),
        "io_wait": pl.Series(io, dtype=pl.Boolean), "waker_tid": nullable(r_waker, pl.Int64),
    }, schema=THREAD_STATE_SCHEMA)

