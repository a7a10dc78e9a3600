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
const NONE: i64 = i64::MIN;
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

/// A string column dictionary-coded: the distinct values (None for null) in first-use order, and each row's code.
#[derive(Default)]
struct Coded {
    distinct: Vec<Option<String>>,
    codes: Vec<u32>,
}

impl Coded {
    /// Codes each row's key, naming a key the first time it is seen (`name` returns None for a null).
    fn build<K: std::hash::Hash + Eq + Copy>(keys: impl Iterator<Item = K>, name: impl Fn(K) -> Option<String>) -> Coded {
        let mut out = Coded::default();
        let mut seen: FastMap<K, u32> = FastMap::default();
        out.codes = keys.map(|k| {
            *seen.entry(k).or_insert_with(|| {
                out.distinct.push(name(k));
                out.distinct.len() as u32 - 1
            })
        }).collect();
        out
    }

    fn add_to(self, b: &mut TableBuilder, name: &str) {
        b.strings(name, &self.codes, self.distinct.len(), |c| self.distinct[c as usize].as_deref());
    }
}

fn as_i64(v: Option<u64>) -> i64 {
    v.map_or(NONE, |x| x as i64)
}

/// The start events as a native table of TraceBuilder.frame_timeline_many's columns (the FrameTimeline table's but
/// dur and ended, plus the cookie; ints with null for an absent field, enum fields named for actual frames and null
/// for expected ones), in the table's row order (`pair` with the end events: a repeated cookie's earlier starts
/// dropped, rows in time order), so that the TraceBuilder's pairing finds them in order and gathers nothing. The
/// columns are written straight from the events in that order: no copy of the events.
pub fn start_table(starts: &[FtStart], end_cookie: &[i64], end_ts: &[i64]) -> Result<Table, arrow_schema::ArrowError> {
    let order: Option<Vec<i64>> = {
        let cookie: Vec<i64> = starts.iter().map(|e| e.cookie).collect();
        let ts: Vec<i64> = starts.iter().map(|e| e.ts).collect();
        pair(&cookie, &ts, end_cookie, end_ts).take
    };
    let rows = || -> Box<dyn Iterator<Item = &FtStart> + '_> {
        match &order {
            Some(o) => Box::new(o.iter().map(|&i| &starts[i as usize])),
            None => Box::new(starts.iter()),
        }
    };
    let actual = |e: &FtStart| e.member == 2 || e.member == 4;
    // an enum of an actual frame, or None (null) for an expected one
    let enum_of = |f: fn(&FtStart) -> Option<u64>| move |e: &FtStart| actual(e).then(|| as_i64(f(e)));
    let named = |v: i64, name: fn(i64) -> String| (v != NONE).then(|| name(v));
    let jank = enum_of(|e| e.jank);
    let ints = |f: fn(&FtStart) -> i64| -> Vec<i64> { rows().map(f).collect() };
    // ts and cookie are never null (i64::MIN is a value there)
    let plain = |f: fn(&FtStart) -> i64| -> Vec<Option<i64>> { rows().map(|e| Some(f(e))).collect() };
    let mut b = TableBuilder::new();
    b.int64_opt("ts", &plain(|e| e.ts)).int64_opt("cookie", &plain(|e| e.cookie));
    Coded::build(rows().map(|e| e.member), |m| {
        Some(["", "expected", "actual", "expected", "actual"].get(m as usize).unwrap_or(&"").to_string())
    }).add_to(&mut b, "kind");
    Coded::build(rows().map(|e| e.member), |m| {
        Some(["", "display", "display", "surface", "surface"].get(m as usize).unwrap_or(&"").to_string())
    }).add_to(&mut b, "scope");
    b.int64("pid", ints(|e| e.pid));
    Coded::build(rows().map(|e| e.layer.as_deref()), |l| l.map(str::to_string)).add_to(&mut b, "layer_name");
    b.int64("token", ints(|e| e.token)).int64("display_frame_token", ints(|e| e.dft.unwrap_or(NONE)));
    Coded::build(rows().map(&jank), |v| v.and_then(|v| named(v, jank_type_name))).add_to(&mut b, "jank_type");
    Coded::build(rows().map(enum_of(|e| e.present)), |v| v.and_then(|v| named(v, |v| enum_name(&PRESENT_TYPE_NAMES, v))))
        .add_to(&mut b, "present_type");
    b.boolean("on_time_finish", rows().map(|e| e.on_time).collect::<Vec<_>>().into_iter());
    b.boolean("gpu_composition", rows().map(|e| e.gpu).collect::<Vec<_>>().into_iter());
    Coded::build(rows().map(enum_of(|e| e.prediction)),
                 |v| v.and_then(|v| named(v, |v| enum_name(&PREDICTION_TYPE_NAMES, v))))
        .add_to(&mut b, "prediction_type");
    Coded::build(
        rows().map(|e| {
            enum_of(|e| e.severity)(e).map(|v| if v == NONE && jank(e) == Some(JANK_NONE) { NO_SEVERITY_JANK_NONE } else { v })
        }),
        |v| v.map(severity_name),
    ).add_to(&mut b, "jank_severity");
    b.finish()
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

pub fn pair(cookie: &[i64], ts: &[i64], end_cookie: &[i64], end_ts: &[i64]) -> Pairing {
    // each cookie's row (first place) and the start it takes its values from (its last)
    let mut row_of: FastMap<i64, usize> = FastMap::with_capacity_and_hasher(cookie.len(), Default::default());
    let mut src: Vec<usize> = Vec::with_capacity(cookie.len());
    for (i, c) in cookie.iter().enumerate() {
        match row_of.get(c) {
            Some(&r) => src[r] = i,
            None => {
                row_of.insert(*c, src.len());
                src.push(i);
            }
        }
    }
    if !(1..src.len()).all(|k| ts[src[k - 1]] <= ts[src[k]]) {
        src.sort_by_key(|&i| ts[i]); // stable
    }
    let mut last_end: FastMap<i64, i64> = FastMap::with_capacity_and_hasher(end_cookie.len(), Default::default());
    for (c, t) in end_cookie.iter().zip(end_ts) {
        last_end.insert(*c, *t);
    }
    let ends: Vec<Option<i64>> = src.iter().map(|&i| last_end.get(&cookie[i]).copied()).collect();
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
        let q = pair(&[1, 2], &[10, 20], &[3], &[99]);
        assert_eq!(q.take, None);
        assert_eq!(q.found, vec![false, false]);
    }
}
