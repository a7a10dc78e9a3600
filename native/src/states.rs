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

/// The merged sched stream in insertion order, as narrow as each column allows (33 bytes an event, not 48: the
/// stream of a long trace is the largest thing held while its thread states are derived). cpu: i32::MIN for none.
pub struct Input<'a> {
    pub ts: &'a [i64],
    pub kind: &'a [u8],
    pub cpu: &'a [i32],
    pub a: &'a [i64],
    pub b: &'a [i64],
    pub aux: &'a [i32],
}

#[derive(Default)]
pub struct Rows {
    pub ts: Vec<i64>,
    pub dur: Vec<i64>,
    pub tid: Vec<i64>,
    pub state: Vec<u32>, // state codes below 2^30 (Action keeps 30 bits)
    pub cpu: Vec<i32>, // i32::MIN for none
    pub waker: Vec<i64>,
    // the few rows named by a blocked reason, ascending, and the index of its payload (narrow columns and a sparse
    // pair: the rows of a long trace are the largest thing held while they are written)
    pub blocked_rows: Vec<i64>,
    pub blocked_payload: Vec<i64>,
}

impl Rows {
    /// The thread-state table (THREAD_STATE_SCHEMA's columns, in its order), the columns moved into it. names: each
    /// state code's name (the categorical's values); payloads: (function, io_wait) of each of `blocked_payload`,
    /// in its order (only those the rows name).
    pub fn table(self, names: &[&str], payloads: &[(Option<String>, Option<bool>)])
                 -> Result<crate::arrow_table::Table, arrow_schema::ArrowError> {
        let n = self.ts.len();
        // row -> 1 + its payload's place in `payloads`, 0 (null) for the rows no blocked reason names
        let mut pick: Vec<u32> = vec![0; if self.blocked_rows.is_empty() { 0 } else { n }];
        for (j, &row) in self.blocked_rows.iter().enumerate() {
            if let Some(p) = pick.get_mut(row as usize) {
                *p = j as u32 + 1;
            }
        }
        let payload = |c: u32| if c == 0 { None } else { payloads.get(c as usize - 1) };
        let mut t = crate::arrow_table::TableBuilder::new();
        t.int64("ts", self.ts).int64("dur", self.dur).int64("tid", self.tid);
        // a code past the names is an error of the table, not UB
        t.categorical("state", names, self.state)?;
        t.int32("cpu", self.cpu);
        if self.blocked_rows.is_empty() {
            // no blocked reason names a row (most traces): columns of nulls, nothing gathered
            t.nulls("blocked_function", &arrow_schema::DataType::Utf8View, n).nulls("io_wait", &arrow_schema::DataType::Boolean, n);
        } else {
            // the functions as views, each payload's made once (the rows no blocked reason names are null)
            let mut function = crate::arrow_table::StringViews::with_capacity(n);
            let mut views = vec![crate::arrow_table::UNSET_VIEW; self.blocked_rows.len() + 1]; // (pick <= that)
            for &c in &pick {
                let v = &mut views[c as usize];
                if *v == crate::arrow_table::UNSET_VIEW {
                    *v = match payload(c).and_then(|p| p.0.as_deref()) {
                        Some(f) => function.view(f),
                        None => crate::arrow_table::NULL_VIEW,
                    };
                }
                function.push(*v);
            }
            t.views("blocked_function", function).opt_bools("io_wait", n, |k| payload(pick[k]).and_then(|p| p.1));
        }
        t.int64("waker_tid", self.waker);
        t.finish()
    }
}

/// The blocked reasons' distinct (function, io_wait) payloads, each stored once and named by its place: a trace's
/// thousands of blocked reasons name a few dozen kernel functions, and only the distinct payloads cross to Python
/// (as a list of tuples the sched stream's blocked indices point into), not one tuple per reason. The functions are
/// interned as slice names are (`atrace::Strings`).
#[derive(Default)]
pub struct Payloads {
    functions: crate::atrace::Strings,
    places: crate::hash::FastMap<(u32, bool), i32>,
    list: Vec<(u32, bool)>, // (function id, 0 for none; io_wait)
}

impl Payloads {
    /// The place of (function, io_wait), stored the first time.
    pub fn id(&mut self, function: Option<&str>, io_wait: bool) -> i32 {
        let key = (self.functions.opt_id(function), io_wait);
        let list = &mut self.list;
        *self.places.entry(key).or_insert_with(|| {
            list.push(key);
            // (fewer distinct payloads than events, and the sched stream's indices are 32-bit)
            i32::try_from(list.len() - 1).expect("more distinct blocked reasons than 32-bit indices")
        })
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// The payload at place i: (function, io_wait).
    pub fn get(&self, i: usize) -> (Option<&str>, bool) {
        let (f, io_wait) = self.list[i];
        (self.functions.get(f), io_wait)
    }

    /// Every payload in order of place (what crosses to Python).
    pub fn tuples(&self) -> Vec<(Option<&str>, bool)> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }

    /// Forgets the payloads from place n on (a packet that failed to decode leaves nothing behind; their functions
    /// stay interned, unnamed by any payload).
    pub fn truncate(&mut self, n: usize) {
        for key in self.list.drain(n.min(self.list.len())..) {
            self.places.remove(&key);
        }
    }
}

/// A multiplicative hash for integer keys (thread ids): the standard library's SipHash guards against crafted keys
/// at a cost per lookup that dominates a pass over millions of events; a tid table needs none of that.
#[derive(Default)]
struct IntHasher(u64);

impl std::hash::Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_i64(&mut self, v: i64) {
        self.0 = (self.0.rotate_left(5) ^ v as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type IntMap<V> = std::collections::HashMap<i64, V, std::hash::BuildHasherDefault<IntHasher>>;

/// One thread's view of one event: what the state machine reads, copied out of the event columns once, in 24 bytes
/// (the actions of a long trace are the largest thing held while its states are derived): the event kind rides in
/// the top two bits of the state code, and `extra` is the waker of a waking or the payload index of a blocked
/// reason (an event has one or neither).
#[derive(Clone, Copy, Default)]
struct Action {
    ts: i64,
    extra: i64,
    kind_state: u32,
    cpu: i32,
}

const _: () = assert!(std::mem::size_of::<Action>() == 24);
const STATE_BITS: u32 = 30;
const STATE_MASK: u32 = (1 << STATE_BITS) - 1;

impl Action {
    fn new(ts: i64, kind: u8, state: i32, cpu: i32, extra: i64) -> Action {
        Action { ts, extra, kind_state: ((kind as u32) << STATE_BITS) | (state as u32 & STATE_MASK), cpu }
    }
    fn kind(&self) -> i64 {
        (self.kind_state >> STATE_BITS) as i64
    }
    fn state(&self) -> i32 {
        (self.kind_state & STATE_MASK) as i32
    }
}

/// A state code as stored in an Action (NONE and out-of-range values as i32::MIN).
fn small(v: i64) -> i32 {
    i32::try_from(v).ok().filter(|&x| x != i32::MIN).unwrap_or(i32::MIN)
}

/// Each thread's actions in time order, threads in tid order: everything the state machine needs, so the event
/// columns can be let go before the (larger) output is written.
pub struct Actions {
    acts: Vec<Action>,
    runs: Vec<(i64, usize, usize)>, // (tid, start, end) in acts
}

/// Thread ids numbered in first-seen order: by a direct table (4 bytes per tid up to the largest) when every tid of
/// the stream is small and the table no larger than a few bytes per event (Android's tids are below pid_max, 32768 on
/// most devices), else by a hash map (large pid_max, damaged input).
enum ThreadNumbers {
    Table(Vec<u32>), // tid -> number + 1, 0 for unseen
    Map(IntMap<usize>),
}

const TABLE_TIDS: i64 = 1 << 20;

/// The size of a table indexed by tid (the largest tid + 1) when every tid the stream gives an action to is small
/// and the table no larger than a few bytes per event, else None.
fn table_size(inp: &Input) -> Option<usize> {
    // one pass: the largest such tid, and whether any is out of range (as unsigned: a negative one is too)
    let (mut top, mut over) = (0u64, 0u64);
    for i in 0..inp.ts.len() {
        let a = inp.a[i] as u64;
        let b = if inp.kind[i] as i64 == SWITCH { inp.b[i] as u64 } else { 0 };
        top = top.max(a).max(b);
        over |= (a >= TABLE_TIDS as u64) as u64 | (b >= TABLE_TIDS as u64) as u64;
    }
    (over == 0 && (top as usize) < 4 * inp.ts.len() + (1 << 16)).then_some(top as usize + 1)
}

impl ThreadNumbers {
    fn new(inp: &Input) -> Self {
        match table_size(inp) {
            Some(size) => ThreadNumbers::Table(vec![0; size]),
            None => ThreadNumbers::Map(IntMap::default()),
        }
    }

    #[inline(always)]
    fn get(&mut self, tid: i64, new: impl FnOnce() -> usize) -> usize {
        match self {
            ThreadNumbers::Table(t) => {
                let slot = &mut t[tid as usize];
                if *slot == 0 {
                    *slot = new() as u32 + 1;
                }
                *slot as usize - 1
            }
            ThreadNumbers::Map(m) => *m.entry(tid).or_insert_with(new),
        }
    }
}

/// The event's actions: a switch gives prev an OUT and next an IN (tid 0, idle, gets none); a waking or a blocked
/// reason gives its thread one.
#[inline(always)]
fn event_actions(inp: &Input, i: usize, running: i32, runnable: i32, mut f: impl FnMut(i64, Action)) {
    let (ts, kind) = (inp.ts[i], inp.kind[i]);
    if kind as i64 == SWITCH {
        if inp.a[i] != 0 {
            f(inp.a[i], Action::new(ts, kind, inp.aux[i], i32::MIN, 0));
        }
        if inp.b[i] != 0 {
            f(inp.b[i], Action::new(ts, kind, running, inp.cpu[i], 0));
        }
    } else if kind as i64 == WAKING {
        f(inp.a[i], Action::new(ts, kind, runnable, inp.cpu[i], inp.b[i]));
    } else {
        f(inp.a[i], Action::new(ts, kind, runnable, i32::MIN, inp.aux[i] as i64));
    }
}

/// running / runnable: the codes of "Running" and "R".
pub fn actions(inp: &Input, running: i64, runnable: i64) -> Actions {
    let (running, runnable) = (small(running), small(runnable));
    actions_by_table(inp, running, runnable).unwrap_or_else(|| actions_by_numbers(inp, running, runnable))
}

/// `actions` for any tids: the threads numbered in first-seen order (ThreadNumbers).
fn actions_by_numbers(inp: &Input, running: i32, runnable: i32) -> Actions {
    // one action per (thread, event) to per-thread runs (threads in tid order, each run in time order) by a
    // counting sort: a first pass over the events as they are (in order of memory) numbers the threads and counts
    // their actions, a second in time order writes each action to its thread's next slot
    let mut no = ThreadNumbers::new(inp);
    let mut tids: Vec<i64> = Vec::new();
    let mut counts: Vec<usize> = Vec::new();
    for i in 0..inp.ts.len() {
        event_actions(inp, i, running, runnable, |tid, _| {
            let k = no.get(tid, || {
                tids.push(tid);
                counts.push(0);
                tids.len() - 1
            });
            counts[k] += 1;
        });
    }
    let mut by_tid: Vec<usize> = (0..tids.len()).collect();
    by_tid.sort_unstable_by_key(|&k| tids[k]);
    let mut next = vec![0usize; tids.len()]; // next free slot of each thread's run
    let mut runs: Vec<(i64, usize, usize)> = Vec::with_capacity(tids.len()); // (tid, start, end)
    let mut at = 0;
    for &k in &by_tid {
        next[k] = at;
        runs.push((tids[k], at, at + counts[k]));
        at += counts[k];
    }
    // events by (ts, kind), ties in insertion order (a radix sort of the timestamps; equal ones, rare, by kind)
    let order = crate::order::by_time_then(inp.ts, |i| inp.kind[i]);
    let mut acts: Vec<Action> = Vec::with_capacity(at);
    let slots = acts.spare_capacity_mut();
    for &i in &order {
        event_actions(inp, i as usize, running, runnable, |tid, act| {
            let k = no.get(tid, || unreachable!("every thread was numbered by the first pass"));
            slots[next[k]].write(act);
            next[k] += 1;
        });
    }
    let filled = by_tid.iter().zip(&runs).all(|(&k, run)| next[k] == run.2);
    Actions { acts: filled_slots(acts, at, filled), runs }
}

/// The actions array once the second pass wrote it: each thread wrote its actions one after another from the start
/// of its run, and `filled` says each stopped exactly at the run's end, so every slot of 0..at was written once
/// (the array is not zeroed first: it is the largest thing the pass makes).
fn filled_slots(mut acts: Vec<Action>, at: usize, filled: bool) -> Vec<Action> {
    assert!(filled && acts.capacity() >= at, "the passes over the sched stream disagree on the actions");
    // SAFETY: the runs tile 0..at and each was written whole (checked above), within the capacity
    unsafe { acts.set_len(at) };
    acts
}

/// `actions` when the tids are small (table_size; Android's are below pid_max): each thread's next free slot kept
/// in a table indexed by tid directly, which the counting pass fills with counts, and the runs in tid order read off
/// the table, with no numbering of the threads and no sort of them. None when the tids do not allow it.
fn actions_by_table(inp: &Input, running: i32, runnable: i32) -> Option<Actions> {
    let n = inp.ts.len();
    if n >= (u32::MAX / 2) as usize {
        return None; // a thread's count could pass the table's 32 bits
    }
    let mut next: Vec<u32> = vec![0; table_size(inp)?];
    for i in 0..n {
        // (table_size checked every a, and every b of a switch, to be in 0..the table's size)
        if inp.kind[i] as i64 == SWITCH {
            next[inp.a[i] as usize] += (inp.a[i] != 0) as u32;
            next[inp.b[i] as usize] += (inp.b[i] != 0) as u32;
        } else {
            next[inp.a[i] as usize] += 1;
        }
    }
    let mut runs: Vec<(i64, usize, usize)> = Vec::new(); // (tid, start, end)
    let mut at = 0usize;
    for (tid, slot) in next.iter_mut().enumerate() {
        if *slot != 0 {
            let count = *slot as usize;
            runs.push((tid as i64, at, at + count));
            *slot = at as u32;
            at += count;
        }
    }
    let order = crate::order::by_time_then(inp.ts, |i| inp.kind[i]);
    let mut acts: Vec<Action> = Vec::with_capacity(at);
    let slots = acts.spare_capacity_mut();
    for &i in &order {
        event_actions(inp, i as usize, running, runnable, |tid, act| {
            let slot = &mut next[tid as usize];
            slots[*slot as usize].write(act);
            *slot += 1;
        });
    }
    let filled = runs.iter().all(|&(tid, _, end)| next[tid as usize] as usize == end);
    Some(Actions { acts: filled_slots(acts, at, filled), runs })
}

/// The intervals of the actions. cat: category of each state code. Open intervals run to `end` (ns).
pub fn derive(actions: &Actions, cat: &[u8], end: i64) -> Rows {
    let (acts, runs, at) = (&actions.acts, &actions.runs, actions.acts.len());
    let cat_of = |code: i64| -> u8 { cat.get(code as usize).copied().unwrap_or(CAT_OTHER) };
    // at most one row per action: reserved once (pages never written are never resident), no growth by copying
    let mut out = Rows {
        ts: Vec::with_capacity(at), dur: Vec::with_capacity(at), tid: Vec::with_capacity(at),
        state: Vec::with_capacity(at), cpu: Vec::with_capacity(at), waker: Vec::with_capacity(at),
        blocked_rows: Vec::new(), blocked_payload: Vec::new(),
    };
    for &(tid, j, stop) in runs {
        // the row opened last on this thread: (row, its start, whether it is a D row)
        let mut open: Option<(usize, i64, bool)> = None;
        let mut seg_cat = CAT_OTHER;
        let mut triggered = false;
        let mut latest_d: Option<usize> = None;
        for (k, x) in acts[j..stop].iter().enumerate() {
            let (x_ts, x_kind, x_state) = (x.ts, x.kind(), x.state());
            let x_cat = cat_of(x_state as i64);
            let x_aux = x.extra;
            let is_sw = x_kind == SWITCH;
            if is_sw || k == 0 {
                seg_cat = if is_sw { x_cat } else { CAT_OTHER };
                triggered = false;
            }
            let trig = (x_kind == WAKING && seg_cat != CAT_RUNNABLE) || (x_kind == BLOCKED && seg_cat == CAT_D);
            let effective = is_sw || (trig && !triggered);
            triggered |= trig;
            if effective {
                if let Some((prev, prev_ts, prev_d)) = open {
                    out.dur[prev] = x_ts - prev_ts;
                    if prev_d {
                        latest_d = Some(prev);
                    }
                }
                open = Some((out.ts.len(), x_ts, x_cat == CAT_D));
                out.ts.push(x_ts);
                out.dur.push(end - x_ts);
                out.tid.push(tid);
                out.state.push(x_state as u32);
                out.cpu.push(if x_kind == BLOCKED { i32::MIN } else { x.cpu });
                out.waker.push(if x_kind == WAKING { x.extra } else { NONE });
            }
            if x_kind == BLOCKED {
                if let Some(row) = latest_d {
                    // a thread's latest D row only moves forward: a repeat names the same row as the last pair
                    if out.blocked_rows.last() == Some(&(row as i64)) {
                        *out.blocked_payload.last_mut().unwrap() = x_aux;
                    } else {
                        out.blocked_rows.push(row as i64);
                        out.blocked_payload.push(x_aux);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct-table path gives the same actions, runs in the same order, as the numbered path, on a stream of
    /// random events (repeated tids, equal timestamps, switches of a thread to itself, tid 0).
    #[test]
    fn table_path_is_the_numbered_path() {
        let mut x: u64 = 7;
        let mut rnd = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let n = 3000;
        let ts: Vec<i64> = (0..n).map(|_| rnd(500) as i64 * 1000).collect();
        let kind: Vec<u8> = (0..n).map(|_| rnd(3) as u8).collect();
        let cpu: Vec<i32> = (0..n).map(|_| rnd(8) as i32).collect();
        let a: Vec<i64> = (0..n).map(|_| rnd(40) as i64).collect();
        let b: Vec<i64> = (0..n).map(|_| rnd(40) as i64).collect();
        let aux: Vec<i32> = (0..n).map(|_| rnd(6) as i32).collect();
        let inp = Input { ts: &ts, kind: &kind, cpu: &cpu, a: &a, b: &b, aux: &aux };
        let fast = actions_by_table(&inp, 0, 1).expect("small tids take the table");
        let slow = actions_by_numbers(&inp, 0, 1);
        assert_eq!(fast.runs, slow.runs);
        let flat = |v: &[Action]| v.iter().map(|x| (x.ts, x.extra, x.kind_state, x.cpu)).collect::<Vec<_>>();
        assert_eq!(flat(&fast.acts), flat(&slow.acts));
        assert!(fast.runs.len() > 30 && fast.acts.len() > n);
    }

    /// Each distinct payload is stored once, in first-seen order, and a truncation forgets exactly what came after.
    #[test]
    fn payloads_are_stored_once_and_truncated() {
        let mut p = Payloads::default();
        let seq = [(Some("a"), false), (None, false), (Some("a"), true), (Some("a"), false), (None, true), (None, false)];
        let ids: Vec<i32> = seq.iter().map(|&(f, w)| p.id(f, w)).collect();
        assert_eq!(ids, vec![0, 1, 2, 0, 3, 1]);
        assert_eq!(p.get(2), (Some("a"), true));
        p.truncate(2);
        assert_eq!(p.len(), 2);
        // stored again, in the new order: a map still naming the old places would give 2 and 3 without storing
        assert_eq!(p.id(None, true), 2, "a forgotten payload is stored again");
        assert_eq!(p.id(Some("a"), true), 3);
        assert_eq!(p.len(), 4);
        assert_eq!(p.get(2), (None, true));
        assert_eq!(p.get(3), (Some("a"), true));
        assert_eq!(p.id(Some("a"), false), 0, "what came before the truncation stays");
        assert_eq!(p.id(None, false), 1);
        assert_eq!(p.len(), 4);
    }
}
