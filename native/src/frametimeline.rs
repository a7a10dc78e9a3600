//! SurfaceFlinger FrameTimeline (TracePacket field 76) as table columns: the decoder's start events named with
//! Perfetto trace processor's strings (jank type, present type, prediction type, jank severity), and the pairing of
//! starts with ends by cookie that the TraceBuilder applies to every reader's FrameTimeline events.
//!
//! Enum values come as the wire's u64 and are looked at as the table's int64: the value 2**63 (i64::MIN) stands for
//! an absent field, as the int64 columns did before this ran natively.

use crate::arrow_table::{Table, TableBuilder};
use crate::hash::FastMap;
use crate::perfetto::FtStart;

/// JankType bits in the order trace processor lists them when several are set.
const JANK_TYPE_NAMES: [(i64, &str); 15] = [
    (2, "SurfaceFlinger Scheduling"),
    (4, "Prediction Error"),
    (8, "Display HAL"),
    (16, "SurfaceFlinger CPU Deadline Missed"),
    (32, "SurfaceFlinger GPU Deadline Missed"),
    (64, "App Deadline Missed"),
    (4096, "App Resynced Jitter"),
    (128, "Buffer Stuffing"),
    (256, "Unknown Jank"),
    (512, "SurfaceFlinger Stuffing"),
    (1024, "Dropped Frame"),
    (2048, "Non Animating"),
    (8192, "Display not ON"),
    (16384, "ModeChange in progress"),
    (32768, "PowerModeChange in progress"),
];
const JANK_NONE: i64 = 1;
const PRESENT_TYPE_NAMES: [&str; 6] =
    ["Unspecified Present", "On-time Present", "Late Present", "Early Present", "Dropped Frame", "Unknown Present"];
const PREDICTION_TYPE_NAMES: [&str; 4] =
    ["Unspecified Prediction", "Valid Prediction", "Expired Prediction", "Unknown Prediction"];
const JANK_SEVERITY_NAMES: [&str; 4] = ["Unknown", "None", "Partial", "Full"];
/// An absent field, in the int64 view of a value.
const NONE: i64 = crate::perfetto::FT_NONE;
/// Older traces lack the severity field: trace processor calls their JANK_NONE frames "None", the others "Unknown".
const NO_SEVERITY_JANK_NONE: i64 = NONE + 1;

/// The trace-processor name of a JankType bitmask: "None", "Unspecified", or the reasons joined by ", " (bits no
/// reason has are named in hex, as a negative number when the top bit is set).
pub fn jank_type_name(bits: i64) -> String {
    match bits {
        0 => "Unspecified".to_string(),
        JANK_NONE => "None".to_string(),
        _ => {
            let mut parts: Vec<String> =
                JANK_TYPE_NAMES.iter().filter(|(bit, _)| bits & bit != 0).map(|(_, l)| l.to_string()).collect();
            let known = JANK_TYPE_NAMES.iter().fold(JANK_NONE, |k, (bit, _)| k | bit);
            let rest = bits & !known;
            if rest > 0 {
                parts.push(format!("Unknown Jank Bits 0x{rest:x}"));
            } else if rest < 0 {
                parts.push(format!("Unknown Jank Bits 0x-{:x}", -(rest as i128)));
            }
            parts.join(", ")
        }
    }
}

/// An enum's name; a value out of the list's range takes the first name (trace processor's "Unspecified"/"Unknown").
fn enum_name(names: &[&str], v: i64) -> String {
    usize::try_from(v).ok().and_then(|i| names.get(i)).unwrap_or(&names[0]).to_string()
}

fn severity_name(v: i64) -> String {
    match v {
        NONE => "Unknown".to_string(),
        NO_SEVERITY_JANK_NONE => "None".to_string(),
        _ => enum_name(&JANK_SEVERITY_NAMES, v),
    }
}

/// Keys below this index a table in `Codes` (enum values, FrameTimeline members); any other goes through a map.
const SMALL: usize = 64;

/// The dictionary codes of one string column, made row by row: each distinct key named once (its code: its place
/// among the distinct values, in first-use order). Small keys index a table, others a map; null rows share one code.
struct Codes {
    small: [u32; SMALL],
    map: FastMap<i64, u32>,
    null: u32,
    distinct: Vec<Option<String>>,
    codes: Vec<u32>,
}

impl Codes {
    fn new(rows: usize) -> Self {
        Codes { small: [u32::MAX; SMALL], map: FastMap::default(), null: u32::MAX, distinct: Vec::new(),
                codes: Vec::with_capacity(rows) }
    }

    #[inline]
    fn push(&mut self, key: i64, name: impl FnOnce() -> Option<String>) {
        let slot = match usize::try_from(key) {
            Ok(k) if k < SMALL => &mut self.small[k],
            _ => self.map.entry(key).or_insert(u32::MAX),
        };
        if *slot == u32::MAX {
            *slot = self.distinct.len() as u32;
            self.distinct.push(name());
        }
        self.codes.push(*slot);
    }

    #[inline]
    fn push_null(&mut self) {
        if self.null == u32::MAX {
            self.null = self.distinct.len() as u32;
            self.distinct.push(None);
        }
        self.codes.push(self.null);
    }

    fn add_to(self, b: &mut TableBuilder, name: &str) {
        b.strings(name, &self.codes, self.distinct.len(), |c| self.distinct[c as usize].as_deref());
    }
}

const KINDS: [&str; 5] = ["", "expected", "actual", "expected", "actual"];
const SCOPES: [&str; 5] = ["", "display", "display", "surface", "surface"];

/// Which table `table` writes: the start rows (the FrameTimeline table's columns but dur and ended, plus the cookie:
/// what a TraceBuilder that also holds single events pairs), or the FrameTimeline table itself, given the trace's end (frames
/// without an end event run to it and are marked not ended).
#[derive(Clone, Copy)]
pub enum Shape {
    Starts,
    Final { trace_end: i64 },
}

/// The start events as a native table in the table's row order (`pair` with the end events: a repeated cookie's
/// earlier starts dropped, rows in time order): ints with null for an absent field, enum fields named for actual
/// frames and null for expected ones. One pass over the events in that order writes every column. Returns the table
/// and the number of rows without an end event.
pub fn table(starts: &[FtStart], end_cookie: &[i64], end_ts: &[i64], shape: Shape)
             -> Result<(Table, usize), arrow_schema::ArrowError> {
    let start_cookie: Vec<i64> = starts.iter().map(|e| e.cookie).collect();
    let start_ts: Vec<i64> = starts.iter().map(|e| e.ts).collect();
    let paired = pair(&start_cookie, &start_ts, end_cookie, end_ts);
    let order = &paired.take;
    let n = order.as_ref().map_or(starts.len(), Vec::len);
    let (mut ts, mut cookie) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut pid, mut token, mut dft) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut on_time, mut gpu) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let [mut kind, mut scope, mut jank, mut present, mut prediction, mut severity] =
        std::array::from_fn(|_| Codes::new(n));
    // layers: by the shared name's address (the decoder shares one Arc per distinct name), the last one remembered
    let mut layer = Codes::new(n);
    let mut last_layer: Option<(usize, u32)> = None;
    let mut row = |e: &FtStart| {
        ts.push(Some(e.ts));
        cookie.push(Some(e.cookie));
        pid.push(e.pid);
        token.push(e.token);
        dft.push(e.dft);
        on_time.push(e.on_time);
        gpu.push(e.gpu);
        let m = e.member as usize;
        kind.push(m as i64, || Some(KINDS.get(m).unwrap_or(&"").to_string()));
        scope.push(m as i64, || Some(SCOPES.get(m).unwrap_or(&"").to_string()));
        match &e.layer {
            None => layer.push_null(),
            Some(l) => {
                let addr = l.as_ptr() as usize;
                match last_layer {
                    Some((a, code)) if a == addr => layer.codes.push(code),
                    _ => {
                        layer.push(addr as i64, || Some(l.to_string()));
                        last_layer = Some((addr, *layer.codes.last().unwrap()));
                    }
                }
            }
        }
        if e.member != 2 && e.member != 4 {
            // an expected frame: its enum fields are null
            for c in [&mut jank, &mut present, &mut prediction, &mut severity] {
                c.push_null();
            }
            return;
        }
        let bits = e.jank;
        jank.push(bits, || (bits != NONE).then(|| jank_type_name(bits)));
        let p = e.present;
        present.push(p, || (p != NONE).then(|| enum_name(&PRESENT_TYPE_NAMES, p)));
        let q = e.prediction;
        prediction.push(q, || (q != NONE).then(|| enum_name(&PREDICTION_TYPE_NAMES, q)));
        let mut v = e.severity;
        if v == NONE && bits == JANK_NONE {
            v = NO_SEVERITY_JANK_NONE;
        }
        severity.push(v, || Some(severity_name(v)));
    };
    match order {
        Some(o) => o.iter().for_each(|&i| row(&starts[i as usize])),
        None => starts.iter().for_each(&mut row),
    }
    let unended = paired.found.iter().filter(|f| !**f).count();
    let mut b = TableBuilder::new();
    // ts and cookie are never null (i64::MIN is a value there)
    b.int64_opt("ts", &ts);
    match shape {
        Shape::Starts => {
            b.int64_opt("cookie", &cookie);
        }
        Shape::Final { trace_end } => {
            b.int64("dur", paired.durations(&start_ts, trace_end));
        }
    }
    kind.add_to(&mut b, "kind");
    scope.add_to(&mut b, "scope");
    b.int64("pid", pid);
    layer.add_to(&mut b, "layer_name");
    b.int64("token", token).int64("display_frame_token", dft);
    jank.add_to(&mut b, "jank_type");
    present.add_to(&mut b, "present_type");
    b.boolean("on_time_finish", on_time.into_iter());
    b.boolean("gpu_composition", gpu.into_iter());
    prediction.add_to(&mut b, "prediction_type");
    severity.add_to(&mut b, "jank_severity");
    if let Shape::Final { .. } = shape {
        b.boolean("ended", paired.found.iter().map(|&f| Some(f)).collect::<Vec<_>>().into_iter());
    }
    Ok((b.finish()?, unended))
}

/// How the start rows become the table's rows: a repeated cookie keeps its first place and takes its last start's
/// values; each row ends at the last end event of its cookie (file order), if any; rows in time order (stable).
pub struct Pairing {
    /// the start row each table row takes its values from, in table order; None when that is every row in order
    pub take: Option<Vec<i64>>,
    /// the end's timestamp, where found
    pub end: Vec<i64>,
    pub found: Vec<bool>,
}

impl Pairing {
    /// Each table row's duration, from the start rows' times `ts` (in their own order): its end, or the trace's end
    /// when it has none, minus its start; wrapping, and at least 0 (as the int64 columns computed it before).
    pub fn durations(&self, ts: &[i64], trace_end: i64) -> Vec<i64> {
        (0..self.end.len()).map(|r| {
            let start = ts[self.take.as_ref().map_or(r, |t| t[r] as usize)];
            let end = if self.found[r] { self.end[r] } else { trace_end };
            end.wrapping_sub(start).max(0)
        }).collect()
    }
}

/// Slots per cookie: SurfaceFlinger numbers its cookies from a counter, so a trace's cookies mostly fill a range
/// barely wider than their count, and a table indexed by cookie replaces a hash map (a tenth of the cost); cookies
/// spread wider (or a damaged trace's) go through a map.
enum CookieSlots {
    Dense { lo: i64, slot: Vec<u32> },
    Sparse(FastMap<i64, u32>),
}

impl CookieSlots {
    fn new(cookie: &[i64]) -> Self {
        let (Some(&lo), Some(&hi)) = (cookie.iter().min(), cookie.iter().max()) else {
            return CookieSlots::Sparse(FastMap::default());
        };
        let span = hi as i128 - lo as i128 + 1;
        if span <= (4 * cookie.len() + 1024) as i128 {
            CookieSlots::Dense { lo, slot: vec![u32::MAX; span as usize] }
        } else {
            CookieSlots::Sparse(FastMap::with_capacity_and_hasher(cookie.len(), Default::default()))
        }
    }

    /// The slot number a cookie was given, without giving one: None for a cookie no start has.
    #[inline]
    fn find(&self, c: i64) -> Option<u32> {
        let slot = match self {
            CookieSlots::Dense { lo, slot } => {
                if c < *lo { None } else { slot.get((c as i128 - *lo as i128) as usize).copied() }
            }
            CookieSlots::Sparse(m) => m.get(&c).copied(),
        };
        slot.filter(|&s| s != u32::MAX)
    }

    /// The slot of a cookie (u32::MAX while unset); None for a cookie outside a dense range.
    #[inline]
    fn get(&mut self, c: i64) -> Option<&mut u32> {
        match self {
            CookieSlots::Dense { lo, slot } => {
                let k = (c as i128 - *lo as i128) as usize;
                if c < *lo { None } else { slot.get_mut(k) }
            }
            CookieSlots::Sparse(m) => Some(m.entry(c).or_insert(u32::MAX)),
        }
    }
}

pub fn pair(cookie: &[i64], ts: &[i64], end_cookie: &[i64], end_ts: &[i64]) -> Pairing {
    // each cookie's row (first place) and the start it takes its values from (its last)
    let mut row_of = CookieSlots::new(cookie);
    let mut src: Vec<usize> = Vec::with_capacity(cookie.len());
    for (i, &c) in cookie.iter().enumerate() {
        let slot = row_of.get(c).expect("every start cookie is in the range");
        if *slot == u32::MAX {
            *slot = src.len() as u32;
            src.push(i);
        } else {
            src[*slot as usize] = i;
        }
    }
    if !(1..src.len()).all(|k| ts[src[k - 1]] <= ts[src[k]]) {
        // stable: equal times keep first-place order (a radix sort of the rows' times)
        let keys: Vec<i64> = src.iter().map(|&i| ts[i]).collect();
        src = crate::order::by_time(&keys).into_iter().map(|k| src[k as usize]).collect();
    }
    // each cookie's last end, by the same slots: end_of[slot] (an end whose cookie no start has is not needed)
    let mut end_of: Vec<Option<i64>> = vec![None; src.len()];
    for (&c, &t) in end_cookie.iter().zip(end_ts) {
        if let Some(s) = row_of.find(c) {
            end_of[s as usize] = Some(t);
        }
    }
    // rows were numbered by first place before the sort: a row's end is its first-place number's
    let ends: Vec<Option<i64>> = src.iter().map(|&i| row_of.find(cookie[i]).and_then(|s| end_of[s as usize])).collect();
    let identity = src.len() == cookie.len() && src.iter().enumerate().all(|(k, &i)| k == i);
    Pairing {
        take: (!identity).then(|| src.iter().map(|&i| i as i64).collect()),
        end: ends.iter().map(|e| e.unwrap_or(0)).collect(),
        found: ends.iter().map(Option::is_some).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jank_names_follow_trace_processor() {
        assert_eq!(jank_type_name(0), "Unspecified");
        assert_eq!(jank_type_name(1), "None");
        assert_eq!(jank_type_name(64 | 128), "App Deadline Missed, Buffer Stuffing");
        assert_eq!(jank_type_name(4096 | 64), "App Deadline Missed, App Resynced Jitter");
        assert_eq!(jank_type_name(1 << 20), "Unknown Jank Bits 0x100000");
    }

    #[test]
    fn repeated_cookie_keeps_first_place_and_last_values() {
        // cookies 7, 8, 7: row 0 is cookie 7 with the values of start 2; ends: 8 once, 7 twice (the last counts)
        let p = pair(&[7, 8, 7], &[10, 20, 5], &[7, 8, 7], &[30, 40, 50]);
        // rows: cookie 7 (ts 5, from start 2), cookie 8 (ts 20): already in time order
        assert_eq!(p.take, Some(vec![2, 1]));
        assert_eq!(p.end, vec![50, 40]);
        assert_eq!(p.found, vec![true, true]);
        // the same with cookies spread too wide for a table (the map path), and an end of a cookie no start has
        let (a, b) = (-(1i64 << 62), 1i64 << 61);
        let p = pair(&[a, b, a], &[10, 20, 5], &[a, b, a, 12345], &[30, 40, 50, 60]);
        assert_eq!(p.take, Some(vec![2, 1]));
        assert_eq!(p.end, vec![50, 40]);
        let q = pair(&[1, 2], &[10, 20], &[3], &[99]);
        assert_eq!(q.take, None);
        assert_eq!(q.found, vec![false, false]);
    }
}
