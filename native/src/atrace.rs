//! atrace payloads (the text apps write to trace_marker: B|pid|name, E, S/F|pid|name|cookie, C|pid|name|value,
//! G/H|pid|track|name|cookie, N|pid|track|name, I|pid|name) into slice events and counter samples, and the
//! nesting of slice events into slices. Used by every trace reader through the TraceBuilder.

use std::collections::HashMap as StdHashMap;
use std::sync::Arc;
use crate::hash::{FastMap as HashMap, TidSet};

pub const K_BEGIN: u8 = 0;
pub const K_END: u8 = 1;
pub const K_ASYNC_START: u8 = 2;
pub const K_ASYNC_FINISH: u8 = 3;
pub const K_INSTANT: u8 = 4;

/// 2^63: the magnitude from which a float no longer converts to an int64.
const I64_BOUND: f64 = 9_223_372_036_854_775_808.0;

/// Strings stored once and named by number (0 stands for None): slice names, tracks and counter names repeat
/// thousands of times, and a number per event is what the nesting compares and the Python side gathers by.
#[derive(Default)]
pub struct Strings {
    pub list: Vec<Arc<str>>,
    index: HashMap<Arc<str>, u32>, // (the list's strings, shared: one allocation a string)
}

impl Strings {
    pub fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let shared: Arc<str> = Arc::from(s);
        self.list.push(Arc::clone(&shared));
        let i = self.list.len() as u32;
        self.index.insert(shared, i);
        i
    }

    pub fn opt_id(&mut self, s: Option<&str>) -> u32 {
        s.map_or(0, |s| self.id(s))
    }

    /// The string of an id (None for 0, or an id not stored).
    pub fn get(&self, id: u32) -> Option<&str> {
        id.checked_sub(1).and_then(|i| self.list.get(i as usize)).map(|s| &**s)
    }

    /// The id of `s` if it is stored, without storing it.
    pub fn find(&self, s: &str) -> Option<u32> {
        self.index.get(s).copied()
    }
}

/// Slice events (one row each), counter samples, first pid per thread, and what was skipped.
#[derive(Default)]
pub struct Parsed {
    pub ts: Vec<i64>,
    pub seq: Vec<i64>,
    pub tid: Vec<i64>,
    pub pid: Vec<Option<i64>>,
    pub kind: Vec<u8>,
    pub name: Vec<u32>,
    pub cookie: Vec<Option<i64>>,
    pub track: Vec<u32>,
    pub c_ts: Vec<i64>,
    pub c_name: Vec<u32>,
    pub strings: Strings,
    pub c_value: Vec<f64>,
    pub c_pid: Vec<Option<i64>>,
    pub c_cpu: Vec<Option<i64>>,
    pub threads: Vec<(i64, i64)>,
    thread_seen: TidSet,
    /// (what: "bad pid" | "too short" | "bad number", payload's first 80 characters, line)
    pub warnings: Vec<(&'static str, String, Option<i64>)>,
    pub min_ts: Option<i64>,
    pub max_ts: Option<i64>,
}

/// Python's int() on the text ASCII digits allow: surrounding whitespace, a sign, digits.
fn py_int(s: &str) -> Option<i64> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    t.parse::<i64>().ok()
}

fn py_float(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    // the special words compared without case and without a lowercased copy (a counter print allocated one)
    let bare = t.trim_start_matches(['+', '-']);
    if ["inf", "infinity", "nan"].iter().any(|w| bare.eq_ignore_ascii_case(w)) {
        return t.parse::<f64>().ok().or(Some(if t.starts_with('-') { f64::NEG_INFINITY } else { f64::INFINITY }));
    }
    if !t.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')) {
        return None;
    }
    t.parse::<f64>().ok()
}

/// The '|' separators of a payload: the positions of the first three, how many there are, the position of the last
/// (0 when there is none). Eight bytes at a time: a word with no '|' (most of a slice name) is passed over whole; a
/// word that holds one is looked at byte by byte.
fn separators(bytes: &[u8]) -> ([usize; 3], usize, usize) {
    let (mut first, mut count, mut last) = ([0usize; 3], 0usize, 0usize);
    let mut see = |i: usize| {
        if count < 3 {
            first[count] = i;
        }
        count += 1;
        last = i;
    };
    const ONES: u64 = 0x0101_0101_0101_0101;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for w in &mut words {
        // a zero byte in x is a '|' in w (the test is exact for whether there is one)
        let x = u64::from_le_bytes(w.try_into().unwrap()) ^ (ONES * b'|' as u64);
        if x.wrapping_sub(ONES) & !x & (ONES << 7) != 0 {
            for (k, &c) in w.iter().enumerate() {
                if c == b'|' {
                    see(at + k);
                }
            }
        }
        at += 8;
    }
    for (k, &c) in words.remainder().iter().enumerate() {
        if c == b'|' {
            see(at + k);
        }
    }
    (first, count, last)
}

impl Parsed {
    /// Lengths of the thread and warning lists (for a rollback).
    pub fn side_lens(&self) -> (usize, usize, Option<i64>, Option<i64>) {
        (self.threads.len(), self.warnings.len(), self.min_ts, self.max_ts)
    }

    /// Room for `scale` times the events and counter samples gathered so far (see Decoder::reserve_ahead).
    pub fn reserve_scaled(&mut self, scale: impl Fn(usize) -> usize) {
        let (e, c) = (scale(self.ts.len()), scale(self.c_ts.len()));
        self.ts.reserve(e);
        self.seq.reserve(e);
        self.tid.reserve(e);
        self.pid.reserve(e);
        self.kind.reserve(e);
        self.name.reserve(e);
        self.cookie.reserve(e);
        self.track.reserve(e);
        self.c_ts.reserve(c);
        self.c_name.reserve(c);
        self.c_value.reserve(c);
        self.c_pid.reserve(c);
        self.c_cpu.reserve(c);
    }

    /// Back to the given lengths: a packet that failed half-way leaves nothing behind.
    pub fn truncate(&mut self, events: usize, counters: usize, side: (usize, usize, Option<i64>, Option<i64>)) {
        self.ts.truncate(events);
        self.seq.truncate(events);
        self.tid.truncate(events);
        self.pid.truncate(events);
        self.kind.truncate(events);
        self.name.truncate(events);
        self.cookie.truncate(events);
        self.track.truncate(events);
        self.c_ts.truncate(counters);
        self.c_name.truncate(counters);
        self.c_value.truncate(counters);
        self.c_pid.truncate(counters);
        self.c_cpu.truncate(counters);
        for (tid, _) in self.threads.drain(side.0..) {
            self.thread_seen.remove(tid);
        }
        self.warnings.truncate(side.1);
        (self.min_ts, self.max_ts) = (side.2, side.3);
    }

    /// The slice events `keep` marks (a row per event), in order.
    pub fn retain_events(&mut self, keep: &[bool]) {
        use crate::perfetto::retain_rows;
        retain_rows(&mut self.ts, keep);
        retain_rows(&mut self.seq, keep);
        retain_rows(&mut self.tid, keep);
        retain_rows(&mut self.pid, keep);
        retain_rows(&mut self.kind, keep);
        retain_rows(&mut self.name, keep);
        retain_rows(&mut self.cookie, keep);
        retain_rows(&mut self.track, keep);
    }

    /// The counter samples `keep` marks, in order.
    pub fn retain_counters(&mut self, keep: &[bool]) {
        use crate::perfetto::retain_rows;
        retain_rows(&mut self.c_ts, keep);
        retain_rows(&mut self.c_name, keep);
        retain_rows(&mut self.c_value, keep);
        retain_rows(&mut self.c_pid, keep);
        retain_rows(&mut self.c_cpu, keep);
    }

    /// The time range seen starts no earlier than `t` (the payloads before it were left out).
    pub fn start_at(&mut self, t: i64) {
        match (self.min_ts, self.max_ts) {
            (_, Some(max)) if max < t => (self.min_ts, self.max_ts) = (None, None),
            (Some(min), _) if min < t => self.min_ts = Some(t),
            _ => {}
        }
    }

    fn see(&mut self, ts: i64) {
        if self.min_ts.is_none_or(|m| ts < m) {
            self.min_ts = Some(ts);
        }
        if self.max_ts.is_none_or(|m| ts > m) {
            self.max_ts = Some(ts);
        }
    }

    /// The counter samples gathered so far as the counter table (COUNTER_SCHEMA's columns, in its order), taken:
    /// in time order, ties in arrival order (a radix sort, skipped when they are in order; the
    /// table's order reached here rather than by a sort of the built table, which copied it). Also the number of
    /// samples whose CPU number does not fit the table's 32-bit column (left null).
    #[allow(clippy::type_complexity)]
    pub fn take_counters(&mut self) -> Result<(crate::arrow_table::Table, i64, Vec<(i32, i64)>), arrow_schema::ArrowError> {
        let (ts, name, value) = (std::mem::take(&mut self.c_ts), std::mem::take(&mut self.c_name), std::mem::take(&mut self.c_value));
        let (pid, cpu) = (std::mem::take(&mut self.c_pid), std::mem::take(&mut self.c_cpu));
        // None (and, as the int64 columns had it, i64::MIN) is null; so is a CPU number past the 32-bit column
        // (damaged input), counted for a warning
        let cpu32 = |c: Option<i64>| match c {
            None | Some(i64::MIN) => i32::MIN,
            Some(c) => i32::try_from(c).ok().filter(|&c| c != i32::MIN).unwrap_or(i32::MIN),
        };
        let bad_cpus = cpu.iter().filter(|&&c| cpu32(c) == i32::MIN && !matches!(c, None | Some(i64::MIN))).count() as i64;
        // column by column (tight loops: one pass over the rows reading five columns cost more), each gathered in
        // table order where the samples are not in it
        let order = (!ts.windows(2).all(|w| w[0] <= w[1])).then(|| crate::order::by_time(&ts));
        fn gather<T: Copy, U>(v: Vec<T>, order: &Option<Vec<u32>>, f: impl Fn(T) -> U) -> Vec<U> {
            match order {
                Some(o) => o.iter().map(|&i| f(v[i as usize])).collect(),
                None => v.into_iter().map(f).collect(),
            }
        }
        let cpufreq_max = self.cpufreq_max(&name, &cpu, &value, cpu32);
        let name = gather(name, &order, |x| x);
        let mut t = crate::arrow_table::TableBuilder::new();
        t.int64("ts", gather(ts, &order, |x| x))
            .views("name", views_by_id(&name, &self.strings))
            .float64("value", gather(value, &order, |x| x))
            .int32("cpu", gather(cpu, &order, cpu32))
            .int64("pid", gather(pid, &order, |p| p.unwrap_or(i64::MIN)));
        Ok((t.finish()?, bad_cpus, cpufreq_max))
    }

    /// Each CPU's highest "cpufreq" sample (kHz, truncated toward zero as Python's int() does), CPUs in ascending
    /// order, over the samples whose CPU the table keeps (`cpu32` not null) and whose value is a number below 2^63
    /// in magnitude (NaN, infinities and larger values are damage, not a frequency; the int64 keeps the rest): the CPU
    /// maximum a trace implies where it states none (TraceBuilder), computed here where the samples are, not by a
    /// filter of the built table (a string comparison over every sample and three copies to numpy).
    fn cpufreq_max(&self, name: &[u32], cpu: &[Option<i64>], value: &[f64], cpu32: impl Fn(Option<i64>) -> i32)
                   -> Vec<(i32, i64)> {
        let Some(id) = self.strings.find("cpufreq") else { return Vec::new() };
        let mut top: std::collections::BTreeMap<i32, f64> = std::collections::BTreeMap::new();
        for i in 0..name.len() {
            let (c, v) = (cpu32(cpu[i]), value[i]);
            if name[i] == id && c != i32::MIN && v.abs() < I64_BOUND {
                let t = top.entry(c).or_insert(v);
                *t = t.max(v);
            }
        }
        top.into_iter().map(|(c, v)| (c, v.trunc() as i64)).collect()
    }

    /// A counter sample from another source, in arrival order with the atrace ones.
    pub fn counter(&mut self, ts: i64, name: &str, value: f64, cpu: Option<i64>, pid: Option<i64>) {
        let id = self.strings.id(name);
        self.counter_id(ts, id, value, cpu, pid);
    }

    /// Room for n more counter samples.
    pub fn reserve_counters(&mut self, n: usize) {
        self.c_ts.reserve(n);
        self.c_name.reserve(n);
        self.c_value.reserve(n);
        self.c_pid.reserve(n);
        self.c_cpu.reserve(n);
    }

    /// A counter sample whose name is already in the string table (id from `strings.id`).
    pub fn counter_id(&mut self, ts: i64, id: u32, value: f64, cpu: Option<i64>, pid: Option<i64>) {
        self.see(ts);
        self.c_ts.push(ts);
        self.c_name.push(id);
        self.c_value.push(value);
        self.c_pid.push(pid);
        self.c_cpu.push(cpu);
    }

    #[allow(clippy::too_many_arguments)]
    pub fn event(&mut self, ts: i64, seq: i64, tid: i64, pid: Option<i64>, kind: u8, name: Option<&str>,
             cookie: Option<i64>, track: Option<&str>) {
        let (name, track) = (self.strings.opt_id(name), self.strings.opt_id(track));
        self.ts.push(ts);
        self.seq.push(seq);
        self.tid.push(tid);
        self.pid.push(pid);
        self.kind.push(kind);
        self.name.push(name);
        self.cookie.push(cookie);
        self.track.push(track);
    }

    fn warn(&mut self, what: &'static str, payload: &str, line: Option<i64>) {
        self.warnings.push((what, payload.chars().take(80).collect(), line));
    }

    /// One payload. Returns the number of slice-event sequence numbers used (0 or 1).
    pub fn payload(&mut self, ts: i64, tid: i64, payload: &str, seq: i64, line: Option<i64>) {
        self.see(ts);
        let payload = payload.trim_end_matches(['\n', '\0']);
        let Some(kind) = payload.chars().next() else { return };
        if kind == 'E' {
            self.event(ts, seq, tid, None, K_END, None, None, None);
            return;
        }
        // the '|' separators: the first three and the last, and how many (the parts are the text between them;
        // no list of parts is built: a print is read without allocating)
        let bytes = payload.as_bytes();
        let (first, count, last_sep) = separators(bytes);
        let n = count + 1;
        // part k (1..=2) in full; the last part
        let part = |k: usize| -> &str {
            let end = if k < count && k < 3 { first[k] } else { bytes.len() };
            &payload[first[k - 1] + 1..end]
        };
        let last_part = || &payload[last_sep + 1..];
        let pid = if n > 1 && !part(1).is_empty() {
            match py_int(part(1)) {
                Some(p) => Some(p),
                None => {
                    self.warn("bad pid", payload, line);
                    return;
                }
            }
        } else {
            None
        };
        if let Some(p) = pid {
            if self.thread_seen.insert(tid) {
                self.threads.push((tid, p));
            }
        }
        // the text from the start of part `from` (1..=3) to the end of the last part, or of the one before it when
        // `drop_last`: a slice of the payload
        let join = |from: usize, drop_last: bool| -> &str {
            let (a, b) = (first[from - 1] + 1, if drop_last { last_sep } else { bytes.len() });
            if a <= b { &payload[a..b] } else { "" }
        };
        let bad_number = |s: &mut Self| s.warn("bad number", payload, line);
        match kind {
            'B' if n >= 3 => self.event(ts, seq, tid, pid, K_BEGIN, Some(join(2, false)), None, None),
            'S' | 'F' if n >= 4 => match py_int(last_part()) {
                Some(c) => {
                    let k = if kind == 'S' { K_ASYNC_START } else { K_ASYNC_FINISH };
                    self.event(ts, seq, tid, pid, k, Some(join(2, true)), Some(c), None)
                }
                None => bad_number(self),
            },
            'C' if n >= 4 => match py_float(last_part()) {
                Some(v) => {
                    let id = self.strings.id(join(2, true));
                    self.c_ts.push(ts);
                    self.c_name.push(id);
                    self.c_value.push(v);
                    self.c_pid.push(pid);
                    self.c_cpu.push(None);
                }
                None => bad_number(self),
            },
            'G' | 'H' if n >= 5 => match py_int(last_part()) {
                Some(c) => {
                    let k = if kind == 'G' { K_ASYNC_START } else { K_ASYNC_FINISH };
                    self.event(ts, seq, tid, pid, k, Some(join(3, true)), Some(c), Some(part(2)))
                }
                None => bad_number(self),
            },
            // an end on a named track without the name (Android 14's Trace.asyncTraceForTrackEnd writes
            // H|pid|track|cookie): G/H pair by (pid, track, cookie), as trace processor pairs them
            'H' if n == 4 => match py_int(last_part()) {
                Some(c) => self.event(ts, seq, tid, pid, K_ASYNC_FINISH, None, Some(c), Some(part(2))),
                None => bad_number(self),
            },
            'N' if n >= 4 => {
                self.event(ts, seq, tid, pid, K_INSTANT, Some(join(3, false)), None, Some(part(2)))
            }
            'I' if n >= 3 => self.event(ts, seq, tid, pid, K_INSTANT, Some(join(2, false)), None, None),
            'B' | 'S' | 'F' | 'C' | 'G' | 'H' | 'N' | 'I' => self.warn("too short", payload, line),
            _ => {} // other payloads (T, U, plain text prints) carry no slice semantics
        }
    }
}

/// A String column of the strings `ids` name (0, or an id past the table: null), as views: each id's made the first
/// time a row names it.
fn views_by_id(ids: &[u32], strings: &Strings) -> crate::arrow_table::StringViews {
    use crate::arrow_table::{StringViews, NULL_VIEW, UNSET_VIEW};
    let mut col = StringViews::with_capacity(ids.len());
    let mut cache = vec![UNSET_VIEW; strings.list.len() + 1];
    cache[0] = NULL_VIEW;
    for &id in ids {
        let v = match cache.get_mut(id as usize) {
            Some(v) if *v == UNSET_VIEW => {
                *v = col.view(&strings.list[id as usize - 1]);
                *v
            }
            Some(v) => *v,
            None => NULL_VIEW,
        };
        col.push(v);
    }
    col
}

/// Slices nested from slice events: columns of the Trace's slice table (`i64::MIN` for null).
#[derive(Default)]
pub struct Slices {
    pub ts: Vec<i64>,
    pub dur: Vec<i64>,
    pub tid: Vec<i64>,
    pub pid: Vec<i64>,
    pub name: Vec<u32>, // string ids of the events' table (0: None)
    pub depth: Vec<i32>,
    pub parent: Vec<i64>,
    pub kind: Vec<u8>, // 0 thread, 1 async, 2 instant
    pub cookie: Vec<i64>,
    pub track: Vec<u32>,
    pub closed: Vec<bool>,
    pub unmatched_ends: i64,
    pub unclosed: i64,
}

const NULL: i64 = i64::MIN;
/// The slice kinds' names, by the codes of `Slices::kind`.
const KIND_NAMES: [&str; 3] = ["thread", "async", "instant"];
/// `Slices::dur` of a slice not closed (yet).
const OPEN: i64 = -1;

impl Slices {
    fn with_capacity(n: usize) -> Self {
        Slices {
            ts: Vec::with_capacity(n), dur: Vec::with_capacity(n), tid: Vec::with_capacity(n),
            pid: Vec::with_capacity(n), name: Vec::with_capacity(n), depth: Vec::with_capacity(n),
            parent: Vec::with_capacity(n), kind: Vec::with_capacity(n), cookie: Vec::with_capacity(n),
            track: Vec::with_capacity(n), closed: Vec::with_capacity(n), unmatched_ends: 0, unclosed: 0,
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn add(&mut self, ts: i64, tid: i64, pid: i64, name: u32, depth: i32, parent: i64, kind: u8, cookie: i64,
           track: u32, dur: i64) -> usize {
        let row = self.ts.len();
        self.ts.push(ts);
        self.dur.push(dur);
        self.tid.push(tid);
        self.pid.push(pid);
        self.name.push(name);
        self.depth.push(depth);
        self.parent.push(parent);
        self.kind.push(kind);
        self.cookie.push(cookie);
        self.track.push(track);
        self.closed.push(dur != OPEN);
        row
    }

    #[inline(always)]
    fn close(&mut self, row: usize, ts: i64) {
        self.dur[row] = ts.wrapping_sub(self.ts[row]);
        self.closed[row] = true;
    }

    /// The rows whose name holds U+FFFD (undecodable bytes replaced when the name was read).
    pub fn replaced_names(&self, strings: &Strings) -> i64 {
        // (U+FFFD is EF BF BD in UTF-8: a byte search first, the string search only where that byte is; the string
        // search alone cost a searcher set up per name, a tenth of the nesting on a trace of a thousand names)
        let has = |s: &str| s.as_bytes().contains(&0xEF) && s.contains('\u{FFFD}');
        let bad: Vec<bool> = std::iter::once(false).chain(strings.list.iter().map(|s| has(s))).collect();
        if !bad.contains(&true) {
            return 0;
        }
        self.name.iter().filter(|&&id| bad.get(id as usize).copied().unwrap_or(false)).count() as i64
    }

    /// The slice table (SLICE_SCHEMA's columns, in its order), the columns moved into it. Strings as views, each
    /// distinct one made once (by string id).
    pub fn table(self, strings: &Strings) -> Result<crate::arrow_table::Table, arrow_schema::ArrowError> {
        use crate::arrow_table::{StringViews, NULL_VIEW};
        let n = self.ts.len();
        let mut kind = StringViews::with_capacity(n);
        let kind_views: Vec<u128> = KIND_NAMES.iter().map(|k| kind.view(k)).collect();
        for &k in &self.kind {
            kind.push(kind_views.get(k as usize).copied().unwrap_or(NULL_VIEW));
        }
        let mut t = crate::arrow_table::TableBuilder::new();
        t.int64_values("id", (0..n as i64).collect())
            .int64("ts", self.ts)
            .int64("dur", self.dur)
            .int64("tid", self.tid)
            .int64("pid", self.pid)
            .views("name", views_by_id(&self.name, strings))
            .int32("depth", self.depth)
            .int64("parent_id", self.parent)
            .views("kind", kind)
            .int64("cookie", self.cookie)
            .views("track", views_by_id(&self.track, strings))
            .bool_values("closed", &self.closed);
        t.finish()
    }
}

/// Each thread's innermost open slice (row + 1, 0 for none): by a table indexed by tid when every tid is small (Android's
/// are below pid_max) and the table no larger than a few entries per event, else by a map. The rest of a thread's
/// stack is the chain of parents: a slice's parent is the one open when it began, open again when it ends.
enum OpenTop {
    Table(Vec<u32>),
    Map(HashMap<i64, u32>),
}

impl OpenTop {
    fn new(tids: &[i64]) -> Self {
        let top = tids.iter().fold(0u64, |m, &t| m.max(t as u64)); // (a negative tid is huge as unsigned)
        if top < (1 << 22) && (top as usize) < 4 * tids.len() + (1 << 16) {
            OpenTop::Table(vec![0; top as usize + 1])
        } else {
            OpenTop::Map(HashMap::default())
        }
    }

    #[inline(always)]
    fn slot(&mut self, tid: i64) -> &mut u32 {
        match self {
            OpenTop::Table(t) => &mut t[tid as usize],
            OpenTop::Map(m) => m.entry(tid).or_insert(0),
        }
    }

    #[inline(always)]
    fn get(&self, tid: i64) -> u32 {
        match self {
            OpenTop::Table(t) => t[tid as usize],
            OpenTop::Map(m) => m.get(&tid).copied().unwrap_or(0),
        }
    }
}

/// The key an async slice's start and finish share: (pid, track, name, cookie); track 0 for S/F, a named track's
/// for G/H.
type AsyncKey = (Option<i64>, u32, u32, Option<i64>);
/// (pid, track, cookie): what an H without a name names.
type TrackCookie = (Option<i64>, u32, Option<i64>);

fn async_key(ev: &Parsed, i: usize, pid: Option<i64>) -> AsyncKey {
    (pid, ev.track[i], ev.name[i], ev.cookie[i])
}

/// Nest slice events (sorted here by (ts, seq)) per thread: B opens a slice under the thread's open one, E closes
/// the innermost, S/F and G/H pair by (pid, track, name, cookie) (an S again while open is ignored; an H without a
/// name, as Android 14 writes it, closes the latest open G of its (pid, track, cookie)), I is an instant at the
/// thread's depth (or depth 0 on a named track). Slices still open at the end run to `end`. thread_pid: the pid of
/// a thread for B events that name none.
pub fn nest<S: std::hash::BuildHasher>(ev: &Parsed, thread_pid: &StdHashMap<i64, i64, S>, end: i64) -> Slices {
    assert!(ev.ts.len() < u32::MAX as usize, "more slice events than 32-bit rows");
    // by (ts, seq), ties in index order (a radix sort of the timestamps, see order.rs)
    let order = crate::order::by_time_then(&ev.ts, |i| ev.seq[i]);
    let mut out = Slices::with_capacity(ev.kind.iter().filter(|&&k| k != K_END).count());
    let mut top = OpenTop::new(&ev.tid);
    let mut async_open: HashMap<AsyncKey, usize> = HashMap::default();
    // G starts by (pid, track, cookie), latest last: what an H without a name closes
    let mut track_open: HashMap<TrackCookie, Vec<(AsyncKey, usize)>> = HashMap::default();
    for i in order {
        let i = i as usize;
        let (ts, tid, pid) = (ev.ts[i], ev.tid[i], ev.pid[i]);
        match ev.kind[i] {
            K_BEGIN => {
                let pid = pid.or_else(|| thread_pid.get(&tid).copied()).unwrap_or(NULL);
                let slot = top.slot(tid);
                let (depth, parent) = match *slot {
                    0 => (0, NULL),
                    r => (out.depth[r as usize - 1].wrapping_add(1), r as i64 - 1),
                };
                let row = out.add(ts, tid, pid, ev.name[i], depth, parent, 0, NULL, 0, OPEN);
                *slot = row as u32 + 1;
            }
            K_END => {
                let slot = top.slot(tid);
                match *slot {
                    0 => out.unmatched_ends += 1,
                    r => {
                        let row = r as usize - 1;
                        let parent = out.parent[row];
                        *slot = if parent == NULL { 0 } else { parent as u32 + 1 };
                        out.close(row, ts);
                    }
                }
            }
            K_ASYNC_START => {
                let key = async_key(ev, i, pid);
                if ev.track[i] == 0 && async_open.contains_key(&key) {
                    // S|pid|name|cookie again while it is open: ignored, as Catapult and trace processor do (the
                    // first one's F ends it)
                    continue;
                }
                let row = out.add(ts, tid, pid.unwrap_or(NULL), ev.name[i], 0, NULL, 1, ev.cookie[i].unwrap_or(NULL),
                                  ev.track[i], OPEN);
                async_open.insert(key, row);
                if ev.track[i] != 0 {
                    track_open.entry((pid, ev.track[i], ev.cookie[i])).or_default().push((key, row));
                }
            }
            K_ASYNC_FINISH if ev.track[i] != 0 && ev.name[i] == 0 => {
                // H|pid|track|cookie: the latest G of its (pid, track, cookie) still open
                if let Some(stack) = track_open.get_mut(&(pid, ev.track[i], ev.cookie[i])) {
                    while let Some((key, row)) = stack.pop() {
                        if async_open.get(&key) == Some(&row) {
                            async_open.remove(&key);
                            out.close(row, ts);
                            break;
                        }
                    }
                }
            }
            K_ASYNC_FINISH => {
                if let Some(row) = async_open.remove(&async_key(ev, i, pid)) {
                    out.close(row, ts);
                }
            }
            _ => {
                let (depth, parent) = match (ev.track[i], top.get(tid)) {
                    (0, r) if r != 0 => (out.depth[r as usize - 1].wrapping_add(1), r as i64 - 1),
                    _ => (0, NULL),
                };
                out.add(ts, tid, pid.unwrap_or(NULL), ev.name[i], depth, parent, 2, NULL, ev.track[i], 0);
            }
        }
    }
    for row in 0..out.ts.len() {
        if out.dur[row] < 0 {
            out.dur[row] = (end - out.ts[row]).max(0);
            out.unclosed += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, BooleanArray, Int32Array, Int64Array, StringViewArray};

    fn col<'a, T: 'static>(t: &'a crate::arrow_table::Table, name: &str) -> &'a T {
        t.batch().column_by_name(name).unwrap().as_any().downcast_ref::<T>().unwrap()
    }

    /// Slice events nested by hand: rows in time order, a thread's stack through B/E (depth, parent), an instant at
    /// the thread's depth, an async pair across threads, a begin whose pid comes from the thread map, an end with
    /// no begin, a slice still open at the end; the same with tids no table holds (negative: the map path).
    #[test]
    fn nesting_follows_each_threads_stack() {
        for shift in [0i64, -1000] {
            let mut ev = Parsed::default();
            let t = |tid: i64| tid + shift;
            // (ts, tid, pid, kind, name, cookie), in an order other than time's
            let events: [(i64, i64, Option<i64>, u8, Option<&str>, Option<i64>); 11] = [
                (10, 5, Some(100), K_BEGIN, Some("a"), None),
                (20, 5, Some(100), K_BEGIN, Some("b"), None),
                (60, 8, Some(300), K_ASYNC_FINISH, Some("s"), Some(9)),
                (25, 5, Some(100), K_INSTANT, Some("i"), None),
                (30, 5, None, K_END, None, None),
                (15, 6, None, K_BEGIN, Some("c"), None),
                (12, 7, Some(300), K_ASYNC_START, Some("s"), Some(9)),
                (35, 5, Some(100), K_BEGIN, Some("d"), None),
                (40, 5, None, K_END, None, None),
                (50, 5, None, K_END, None, None),
                (70, 5, None, K_END, None, None),
            ];
            for (seq, (ts, tid, pid, kind, name, cookie)) in events.into_iter().enumerate() {
                ev.event(ts, seq as i64, t(tid), pid, kind, name, cookie, None);
            }
            let thread_pid: StdHashMap<i64, i64> = [(t(6), 200)].into_iter().collect();
            let s = nest(&ev, &thread_pid, 100);
            // rows: a(10) s(12) c(15) b(20) i(25) d(35)
            assert_eq!(s.ts, vec![10, 12, 15, 20, 25, 35]);
            assert_eq!(s.dur, vec![40, 48, 85, 10, 0, 5]);
            assert_eq!(s.depth, vec![0, 0, 0, 1, 2, 1]);
            assert_eq!(s.parent, vec![NULL, NULL, NULL, 0, 3, 0]);
            assert_eq!(s.pid, vec![100, 300, 200, 100, 100, 100]);
            assert_eq!(s.kind, vec![0, 1, 0, 0, 2, 0]);
            assert_eq!(s.closed, vec![true, true, false, true, true, true]);
            assert_eq!((s.unmatched_ends, s.unclosed), (1, 1));
            let table = s.table(&ev.strings).unwrap();
            let names = col::<StringViewArray>(&table, "name");
            assert_eq!(names.iter().collect::<Vec<_>>(), ["a", "s", "c", "b", "i", "d"].map(Some));
            assert_eq!(col::<StringViewArray>(&table, "kind").value(1), "async");
            assert!(col::<StringViewArray>(&table, "track").is_null(0));
            assert!(col::<Int64Array>(&table, "parent_id").is_null(0));
            assert_eq!(col::<Int64Array>(&table, "cookie").value(1), 9);
            assert!(!col::<BooleanArray>(&table, "closed").value(2));
        }
    }

    /// Counter samples out of time order: the table in time order (ties in arrival order), names by id, a CPU number
    /// past 32 bits null and counted, absent pids null.
    #[test]
    fn counters_come_in_time_order_with_bad_cpus_counted() {
        let mut ev = Parsed::default();
        ev.counter(30, "x", 1.0, Some(1), None);
        ev.counter(10, "a counter name past twelve bytes", 2.0, Some(1 << 40), None);
        ev.counter(20, "x", 3.0, None, Some(7));
        ev.counter(20, "y", 4.0, Some(i32::MIN as i64), None);
        let (t, bad, _) = ev.take_counters().unwrap();
        assert_eq!(bad, 2); // 2^40 and i32::MIN (the column's null) do not fit
        assert_eq!(col::<Int64Array>(&t, "ts").values().to_vec(), vec![10, 20, 20, 30]);
        let names = col::<StringViewArray>(&t, "name");
        assert_eq!(names.iter().collect::<Vec<_>>(), ["a counter name past twelve bytes", "x", "y", "x"].map(Some));
        let cpu = col::<Int32Array>(&t, "cpu");
        assert_eq!((0..4).map(|i| cpu.is_valid(i).then(|| cpu.value(i))).collect::<Vec<_>>(), [None, None, None, Some(1)]);
        let pid = col::<Int64Array>(&t, "pid");
        assert_eq!((0..4).map(|i| pid.is_valid(i).then(|| pid.value(i))).collect::<Vec<_>>(), [None, Some(7), None, None]);
    }

    /// The separators counted one byte at a time, the plain way.
    fn plain(b: &[u8]) -> ([usize; 3], usize, usize) {
        let at: Vec<usize> = b.iter().enumerate().filter(|(_, &c)| c == b'|').map(|(i, _)| i).collect();
        let mut first = [0usize; 3];
        for (k, &i) in at.iter().take(3).enumerate() {
            first[k] = i;
        }
        (first, at.len(), at.last().copied().unwrap_or(0))
    }

    #[test]
    fn separators_match_a_byte_by_byte_count() {
        // every length 0..40 with '|' and its neighbours in the byte values ('{' '}' '|' ^ 1...), from a fixed
        // pseudo-random sequence, plus real payload shapes
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let alphabet = [b'|', b'}', b'{', b'}' ^ 0x80, 0x7c ^ 0x01, b'a', b'0', 0x00, 0xff, 0xfc];
        for len in 0..40 {
            for _ in 0..200 {
                let b: Vec<u8> = (0..len).map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                }).collect();
                assert_eq!(separators(&b), plain(&b), "{b:?}");
            }
        }
        for p in ["B|9305|Compose:recompose", "E|9305", "C|123|name|4.5", "G|1|track|a long slice name|77", "", "|"] {
            assert_eq!(separators(p.as_bytes()), plain(p.as_bytes()), "{p}");
        }
    }

    #[test]
    fn counter_values_read_as_python_float_reads_them() {
        // float() of each, worked by hand: special words in any case with any leading signs, whitespace around
        let inf = f64::INFINITY;
        for (text, want) in [("4.5", Some(4.5)), (" -2 ", Some(-2.0)), ("1e3", Some(1000.0)), ("INF", Some(inf)),
                             ("-Infinity", Some(-inf)), ("+inf", Some(inf)), ("-+iNf", Some(-inf)), ("x", None),
                             ("", None), ("infinit", None), ("1,5", None)] {
            assert_eq!(py_float(text), want, "{text:?}");
        }
        assert!(py_float("NaN").unwrap().is_nan() && py_float("-nan").unwrap().is_nan());
    }
}
