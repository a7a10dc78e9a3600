//! Thread-state intervals from the merged sched stream (switch, waking, blocked reason), one pass per thread.
//!
//! Per thread it is a small state machine: a switch closes the open interval of prev (which goes to prev_state)
//! and of next (which goes Running); a waking closes a sleeping interval (anything but Running/R/R+) and opens R;
//! a blocked reason closes a D interval, opens R, and names the function of the thread's latest closed D interval.
//! Between two switches of a thread only the first waking (or, after D, the first waking or blocked reason)
//! changes anything.

pub const SWITCH: i64 = 0;
pub const WAKING: i64 = 1;
pub const BLOCKED: i64 = 2;
pub const NONE: i64 = i64::MIN;
pub const CAT_RUNNABLE: u8 = 0;
pub const CAT_D: u8 = 1;
pub const CAT_OTHER: u8 = 2;

pub struct Input<'a> {
    pub ts: &'a [i64],
    pub kind: &'a [i64],
    pub cpu: &'a [i64],
    pub a: &'a [i64],
    pub b: &'a [i64],
    pub aux: &'a [i64],
}

#[derive(Default)]
pub struct Rows {
    pub ts: Vec<i64>,
    pub dur: Vec<i64>,
    pub tid: Vec<i64>,
    pub state: Vec<i64>,
    pub cpu: Vec<i64>,
    pub waker: Vec<i64>,
    pub blocked: Vec<i64>, // index into the blocked-reason payloads, -1 none
}

/// One thread's view of one event: 16 bytes, the rest is read from the event (sorted position p = pos / 2; an odd
/// pos is the IN side of a switch).
struct Action {
    tid: i64,
    pos: u64,
}

/// cat: category of each state code; running / runnable: the codes of "Running" and "R". Open intervals run to
/// `end` (ns).
pub fn derive(inp: &Input, cat: &[u8], running: i64, runnable: i64, end: i64) -> Rows {
    let n = inp.ts.len();
    // events by (ts, kind), ties in insertion order: packed keys sorted in place (the index makes each key unique, so
    // an unstable sort gives the stable order) rather than indices compared through the columns
    let mut keys: Vec<(i64, u64)> = (0..n).map(|i| (inp.ts[i], ((inp.kind[i] as u64) << 32) | i as u64)).collect();
    keys.sort_unstable();
    let order: Vec<u32> = keys.iter().map(|k| k.1 as u32).collect();
    drop(keys);
    // one action per (thread, event): a switch gives prev an OUT and next an IN; tid 0 (idle) gets none
    let mut acts: Vec<Action> = Vec::with_capacity(n + n / 2);
    for (p, &i) in order.iter().enumerate() {
        let i = i as usize;
        let pos = 2 * p as u64;
        if inp.kind[i] == SWITCH {
            if inp.a[i] != 0 {
                acts.push(Action { tid: inp.a[i], pos });
            }
            if inp.b[i] != 0 {
                acts.push(Action { tid: inp.b[i], pos: pos + 1 });
            }
        } else {
            acts.push(Action { tid: inp.a[i], pos });
        }
    }
    acts.sort_unstable_by_key(|x| (x.tid, x.pos));
    // (ts, kind, state, cpu, waker, aux) of an action
    let view = |x: &Action| -> (i64, i64, i64, i64, i64, i64) {
        let i = order[(x.pos / 2) as usize] as usize;
        let kind = inp.kind[i];
        if kind == SWITCH {
            if x.pos % 2 == 0 {
                (inp.ts[i], kind, inp.aux[i], NONE, NONE, NONE)
            } else {
                (inp.ts[i], kind, running, inp.cpu[i], NONE, NONE)
            }
        } else {
            let waking = kind == WAKING;
            (inp.ts[i], kind, runnable, if waking { inp.cpu[i] } else { NONE }, if waking { inp.b[i] } else { NONE },
             inp.aux[i])
        }
    };
    let cat_of = |code: i64| -> u8 { cat.get(code as usize).copied().unwrap_or(CAT_OTHER) };
    let mut out = Rows::default();
    let mut j = 0;
    while j < acts.len() {
        let tid = acts[j].tid;
        let first_row = out.ts.len();
        let mut seg_cat = CAT_OTHER;
        let mut triggered = false;
        let mut latest_d: Option<usize> = None;
        let mut k = j;
        while k < acts.len() && acts[k].tid == tid {
            let (x_ts, x_kind, x_state, x_cpu, x_waker, x_aux) = view(&acts[k]);
            let is_sw = x_kind == SWITCH;
            if is_sw || k == j {
                seg_cat = if is_sw { cat_of(x_state) } else { CAT_OTHER };
                triggered = false;
            }
            let trig = (x_kind == WAKING && seg_cat != CAT_RUNNABLE) || (x_kind == BLOCKED && seg_cat == CAT_D);
            let effective = is_sw || (trig && !triggered);
            if trig {
                triggered = true;
            }
            if effective {
                if out.ts.len() > first_row {
                    let prev = out.ts.len() - 1;
                    out.dur[prev] = x_ts - out.ts[prev];
                    if cat_of(out.state[prev]) == CAT_D {
                        latest_d = Some(prev);
                    }
                }
                out.ts.push(x_ts);
                out.dur.push(end - x_ts);
                out.tid.push(tid);
                out.state.push(x_state);
                out.cpu.push(if x_kind == BLOCKED { NONE } else { x_cpu });
                out.waker.push(x_waker);
                out.blocked.push(-1);
            }
            if x_kind == BLOCKED {
                if let Some(row) = latest_d {
                    out.blocked[row] = x_aux;
                }
            }
            k += 1;
        }
        j = k;
    }
    out
}
