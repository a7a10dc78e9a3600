//! SurfaceFlinger FrameTimeline (TracePacket field 76) as table columns: the decoder's start events named with
//! Perfetto trace processor's strings (jank type, present type, prediction type, jank severity), and the pairing of
//! starts with ends by cookie that the TraceBuilder applies to every reader's FrameTimeline events.
//!
//! Enum values come as the wire's u64 and are looked at as the table's int64: the value 2**63 (i64::MIN) stands for
//! an absent field, as the int64 columns did before this ran natively.

use crate::arrow_table::{StringViews, Table, TableBuilder, NULL_VIEW, UNSET_VIEW};
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

/// One string column written row by row from a key per row: each distinct key named once (its view kept: small keys
/// in a table, others in a map), a row then costs a lookup and a view.
struct Codes {
    small: [u128; SMALL],
    map: FastMap<i64, u128>,
    column: StringViews,
}

impl Codes {
    fn new(rows: usize) -> Self {
        Codes { small: [UNSET_VIEW; SMALL], map: FastMap::default(), column: StringViews::with_capacity(rows) }
    }

    /// A row of the key's name (None: null), `name` asked the first time the key is met.
    #[inline]
    fn push(&mut self, key: i64, name: impl FnOnce() -> Option<String>) {
        let slot = match usize::try_from(key) {
            Ok(k) if k < SMALL => &mut self.small[k],
            _ => self.map.entry(key).or_insert(UNSET_VIEW),
        };
        if *slot == UNSET_VIEW {
            *slot = match name() {
                Some(s) => self.column.view(&s),
                None => NULL_VIEW,
            };
        }
        self.column.push(*slot);
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
/// frames and null for expected ones. One pass over the rows writes every column (strings as views: each distinct
/// value named once). Returns the table and the number of rows without an end event.
pub fn table(starts: &[FtStart], end_cookie: &[i64], end_ts: &[i64], shape: Shape)
             -> Result<(Table, usize), arrow_schema::ArrowError> {
    let rows = rows(starts.len(), |i| starts[i].cookie, |i| starts[i].ts, end_cookie, end_ts);
    let n = rows.src.len();
    // column by column over the rows' starts (tight loops: one pass writing every column cost more), a block of rows
    // at a time (the block's starts stay in cache from one column's loop to the next: the starts are 104 bytes each)
    let e: Vec<&FtStart> = rows.src.iter().map(|&i| &starts[i as usize]).collect();
    let [mut ts, mut second, mut pid, mut token, mut dft] = std::array::from_fn(|_| Vec::with_capacity(n));
    let (mut on_time, mut gpu): (Vec<Option<bool>>, Vec<Option<bool>>) = (Vec::with_capacity(n), Vec::with_capacity(n));
    // a member's kind and scope ("" past the list), views made once
    let (mut kind, mut scope) = (StringViews::with_capacity(n), StringViews::with_capacity(n));
    let mut member_views = [(0u128, 0u128); 8];
    for (m, v) in member_views.iter_mut().enumerate() {
        *v = (kind.view(KINDS.get(m).unwrap_or(&"")), scope.view(SCOPES.get(m).unwrap_or(&"")));
    }
    // layers: by the shared name's address (the decoder shares one Arc per distinct name), the last one remembered
    let mut layer = StringViews::with_capacity(n);
    let mut layer_views: FastMap<usize, u128> = FastMap::default();
    let mut last_layer: (usize, u128) = (0, NULL_VIEW);
    let [mut jank, mut present, mut prediction, mut severity] = std::array::from_fn(|_| Codes::new(n));
    const BLOCK: usize = 128;
    for (base, block) in (0..n).step_by(BLOCK).zip(e.chunks(BLOCK)) {
        ts.extend(block.iter().map(|e| e.ts));
        match shape {
            // second: cookie or dur
            Shape::Starts => second.extend(block.iter().map(|e| e.cookie)),
            Shape::Final { trace_end } => {
                let (end, found) = (&rows.end[base..base + block.len()], &rows.found[base..base + block.len()]);
                second.extend(block.iter().zip(end).zip(found).map(|((e, &end), &found)| {
                    (if found { end } else { trace_end }).wrapping_sub(e.ts).max(0)
                }))
            }
        }
        pid.extend(block.iter().map(|e| e.pid));
        token.extend(block.iter().map(|e| e.token));
        dft.extend(block.iter().map(|e| e.dft));
        on_time.extend(block.iter().map(|e| e.on_time));
        gpu.extend(block.iter().map(|e| e.gpu));
        for e in block {
            let (k, s) = member_views[(e.member as usize).min(7)];
            kind.push(k);
            scope.push(s);
        }
        for e in block {
            let v = match &e.layer {
                None => NULL_VIEW,
                Some(l) => {
                    let addr = l.as_ptr() as usize;
                    if addr != last_layer.0 {
                        last_layer = (addr, *layer_views.entry(addr).or_insert_with(|| layer.view(l)));
                    }
                    last_layer.1
                }
            };
            layer.push(v);
        }
        for e in block {
            if e.member != 2 && e.member != 4 {
                // an expected frame: its enum fields are null
                for c in [&mut jank, &mut present, &mut prediction, &mut severity] {
                    c.column.push(NULL_VIEW);
                }
                continue;
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
        }
    }
    let unended = rows.found.iter().filter(|f| !**f).count();
    let mut b = TableBuilder::new();
    // ts and cookie are never null (i64::MIN is a value there)
    b.int64_values("ts", ts);
    match shape {
        Shape::Starts => b.int64_values("cookie", second),
        Shape::Final { .. } => b.int64("dur", second),
    };
    b.views("kind", kind).views("scope", scope).int64("pid", pid).views("layer_name", layer);
    b.int64("token", token).int64("display_frame_token", dft);
    b.views("jank_type", jank.column).views("present_type", present.column);
    b.opt_bools("on_time_finish", n, |k| on_time[k]).opt_bools("gpu_composition", n, |k| gpu[k]);
    b.views("prediction_type", prediction.column).views("jank_severity", severity.column);
    if let Shape::Final { .. } = shape {
        b.bool_values("ended", &rows.found);
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
    /// Slots for the n cookies `cookie(0..n)`.
    fn new(n: usize, cookie: impl Fn(usize) -> i64) -> Self {
        if n == 0 {
            return CookieSlots::Sparse(FastMap::default());
        }
        let (lo, hi) = (0..n).fold((i64::MAX, i64::MIN), |(lo, hi), i| (lo.min(cookie(i)), hi.max(cookie(i))));
        let span = hi as i128 - lo as i128 + 1;
        if span <= (4 * n + 1024) as i128 {
            CookieSlots::Dense { lo, slot: vec![u32::MAX; span as usize] }
        } else {
            CookieSlots::Sparse(FastMap::with_capacity_and_hasher(n, Default::default()))
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

/// The table's rows of the n starts `cookie(i)`, `ts(i)`, in table order (see `Pairing`).
pub struct Rows {
    /// the start each row takes its values from
    pub src: Vec<u32>,
    /// the end's timestamp, where found (else 0)
    pub end: Vec<i64>,
    pub found: Vec<bool>,
}

pub fn rows(n: usize, cookie: impl Fn(usize) -> i64, ts: impl Fn(usize) -> i64, end_cookie: &[i64], end_ts: &[i64]) -> Rows {
    assert!(n < u32::MAX as usize, "more FrameTimeline starts than 32-bit indices");
    // each cookie's slot (its first place) and the start it takes its values from (its last)
    let mut slot_of = CookieSlots::new(n, &cookie);
    let mut src: Vec<u32> = Vec::with_capacity(n);
    for i in 0..n {
        let slot = slot_of.get(cookie(i)).expect("every start cookie is in the range");
        if *slot == u32::MAX {
            *slot = src.len() as u32;
            src.push(i as u32);
        } else {
            src[*slot as usize] = i as u32;
        }
    }
    // each slot's last end (an end whose cookie no start has is not needed)
    let mut end = vec![0i64; src.len()];
    let mut found = vec![false; src.len()];
    for (&c, &t) in end_cookie.iter().zip(end_ts) {
        if let Some(s) = slot_of.find(c) {
            end[s as usize] = t;
            found[s as usize] = true;
        }
    }
    if (1..src.len()).all(|k| ts(src[k - 1] as usize) <= ts(src[k] as usize)) {
        return Rows { src, end, found };
    }
    // stable: equal times keep first-place order (slots are numbered by first place)
    let keys: Vec<i64> = src.iter().map(|&i| ts(i as usize)).collect();
    let order = crate::order::by_time(&keys);
    Rows {
        src: order.iter().map(|&s| src[s as usize]).collect(),
        end: order.iter().map(|&s| end[s as usize]).collect(),
        found: order.iter().map(|&s| found[s as usize]).collect(),
    }
}

pub fn pair(cookie: &[i64], ts: &[i64], end_cookie: &[i64], end_ts: &[i64]) -> Pairing {
    let r = rows(cookie.len(), |i| cookie[i], |i| ts[i], end_cookie, end_ts);
    let identity = r.src.len() == cookie.len() && r.src.iter().enumerate().all(|(k, &i)| k == i as usize);
    Pairing {
        take: (!identity).then(|| r.src.iter().map(|&i| i as i64).collect()),
        end: r.end,
        found: r.found,
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

    /// The table of crafted starts, worked by hand: a repeated cookie (first place, last values), rows put in time
    /// order, an expected frame's enum fields null, an actual frame's named, a frame without an end running to the
    /// trace's end, a layer name long enough for the views' data buffer, an absent field null.
    #[test]
    fn table_of_crafted_starts() {
        use arrow_array::{Array, BooleanArray, Int64Array, StringViewArray};
        let layer: std::sync::Arc<str> = "TX - com.example.app/com.example.app.MainActivity#0".into();
        let start = |ts, cookie, member, jank: Option<i64>, layer: Option<std::sync::Arc<str>>| FtStart {
            ts, clock: 6, cookie, member, pid: 42, token: cookie * 10, dft: if member == 1 { NONE } else { 7 }, layer,
            jank: jank.unwrap_or(NONE), present: jank.map_or(NONE, |_| 2), on_time: jank.map(|_| false), gpu: None,
            prediction: jank.map_or(NONE, |_| 1), severity: NONE,
        };
        let starts = vec![
            start(300, 1, 3, None, Some(layer.clone())),                  // expected surface frame, cookie 1
            start(100, 2, 4, Some(64 | 128), Some(layer.clone())),        // actual surface frame, cookie 2
            start(200, 1, 1, None, None),                                 // cookie 1 again: its values, first place
            start(250, 3, 4, Some(1), Some(layer.clone())),               // actual, no jank, no end event
        ];
        let (t, unended) = table(&starts, &[2, 1, 1, 99], &[180, 290, 260, 5], Shape::Final { trace_end: 1000 }).unwrap();
        let c = |name: &str| t.batch().column_by_name(name).unwrap().clone();
        let ints = |name: &str| c(name).as_any().downcast_ref::<Int64Array>().unwrap().iter().collect::<Vec<_>>();
        let strs = |name: &str| {
            let a = c(name);
            let a = a.as_any().downcast_ref::<StringViewArray>().unwrap();
            a.iter().map(|v| v.map(str::to_string)).collect::<Vec<_>>()
        };
        let s = |v: &str| Some(v.to_string());
        // rows by time: cookie 2 (100), cookie 1 (200, the third start's values), cookie 3 (250)
        assert_eq!(ints("ts"), [Some(100), Some(200), Some(250)]);
        assert_eq!(ints("dur"), [Some(80), Some(60), Some(750)]); // ends 180, 260 (the last of cookie 1), trace end
        assert_eq!(unended, 1);
        assert_eq!(strs("kind"), [s("actual"), s("expected"), s("actual")]);
        assert_eq!(strs("scope"), [s("surface"), s("display"), s("surface")]);
        assert_eq!(strs("layer_name"), [s(&layer), None, s(&layer)]);
        assert_eq!(strs("jank_type"), [s("App Deadline Missed, Buffer Stuffing"), None, s("None")]);
        assert_eq!(strs("present_type"), [s("Late Present"), None, s("Late Present")]);
        assert_eq!(strs("prediction_type"), [s("Valid Prediction"), None, s("Valid Prediction")]);
        assert_eq!(strs("jank_severity"), [s("Unknown"), None, s("None")]);
        assert_eq!(ints("display_frame_token"), [Some(7), None, Some(7)]);
        assert_eq!(ints("token"), [Some(20), Some(10), Some(30)]);
        let on_time = c("on_time_finish");
        let on_time = on_time.as_any().downcast_ref::<BooleanArray>().unwrap();
        assert_eq!(on_time.iter().collect::<Vec<_>>(), [Some(false), None, Some(false)]);
        assert_eq!(c("gpu_composition").null_count(), 3);
        let ended = c("ended");
        let ended = ended.as_any().downcast_ref::<BooleanArray>().unwrap();
        assert_eq!(ended.iter().collect::<Vec<_>>(), [Some(true), Some(true), Some(false)]);
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
