//! Block requests (block_rq_issue) paired with their completions (block_rq_complete): one row per issue, as the
//! TraceBuilder's block table has them. A completion closes the latest open issue of its (dev, sector) before it, and
//! the other issues still open there stay open for good: a request requeued and issued again completes once, for its
//! last issue.

use crate::hash::FastMap as HashMap;

pub const NONE: i64 = i64::MIN;

/// block_rq_issue: (ts, dev, sector, nr_sectors, bytes, rwbs, tid, comm).
pub type Issue = (i64, i64, i64, i64, i64, String, Option<i64>, Option<String>);
/// block_rq_complete: (ts, dev, sector, nr_sectors, rwbs, error).
pub type Complete = (i64, i64, i64, i64, String, i64);

/// The direction of a request from its rwbs flags: a pure cache flush ("F" with no data) is no write.
pub fn direction(rwbs: &str, nr_sectors: i64) -> &'static str {
    let has = |c: char| rwbs.contains(c);
    if has('F') && nr_sectors == 0 {
        "flush"
    } else if has('D') {
        "discard"
    } else if has('W') {
        "write"
    } else if has('R') {
        "read"
    } else if has('F') {
        "flush"
    } else {
        "other"
    }
}

/// The issues in time order (stable) and each one's duration (NONE: never completed). Issues and completions are
/// taken in time order, an issue before a completion at the same time, each kind in its own order at equal times.
pub fn pair(mut issues: Vec<Issue>, completes: &[Complete]) -> (Vec<Issue>, Vec<i64>) {
    issues.sort_by_key(|e| e.0); // stable
    let mut done: Vec<usize> = (0..completes.len()).collect();
    done.sort_by_key(|&j| completes[j].0); // stable
    let mut dur = vec![NONE; issues.len()];
    let mut open: HashMap<(i64, i64), Vec<usize>> = HashMap::default();
    let (mut i, mut k) = (0usize, 0usize);
    while i < issues.len() || k < done.len() {
        let issue_next = k == done.len() || (i < issues.len() && issues[i].0 <= completes[done[k]].0);
        if issue_next {
            open.entry((issues[i].1, issues[i].2)).or_default().push(i);
            i += 1;
            continue;
        }
        let c = &completes[done[k]];
        k += 1;
        if let Some(stack) = open.get_mut(&(c.1, c.2)) {
            if let Some(x) = stack.pop() {
                // (damaged times whose difference overflows leave the request without a duration)
                dur[x] = c.0.checked_sub(issues[x].0).unwrap_or(NONE);
                stack.clear();
            }
        }
    }
    (issues, dur)
}

/// The block table (BLOCK_SCHEMA's columns, in its order).
pub fn table(issues: Vec<Issue>, dur: Vec<i64>) -> Result<crate::arrow_table::Table, arrow_schema::ArrowError> {
    use crate::arrow_table::{StringViews, NULL_VIEW};
    let n = issues.len();
    let mut cols: [Vec<i64>; 5] = std::array::from_fn(|_| Vec::with_capacity(n));
    let mut tid = Vec::with_capacity(n);
    let [mut rwbs, mut dir, mut comm] = std::array::from_fn(|_| StringViews::with_capacity(n));
    for e in &issues {
        for (c, v) in cols.iter_mut().zip([e.0, e.1, e.2, e.3, e.4]) {
            c.push(v);
        }
        tid.push(e.6.unwrap_or(NONE));
        let v = rwbs.view(&e.5);
        rwbs.push(v);
        let v = dir.view(direction(&e.5, e.3));
        dir.push(v);
        let v = e.7.as_deref().map_or(NULL_VIEW, |s| comm.view(s));
        comm.push(v);
    }
    let [ts, dev, sector, nr, nbytes] = cols;
    let mut t = crate::arrow_table::TableBuilder::new();
    t.int64_values("ts", ts).int64("dur", dur).int64_values("dev", dev).int64_values("sector", sector)
        .int64_values("nr_sectors", nr).int64_values("bytes", nbytes);
    t.views("rwbs", rwbs).views("direction", dir).int64("tid", tid).views("comm", comm);
    t.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue(ts: i64, sector: i64) -> Issue {
        (ts, 8, sector, 8, 4096, "WS".to_string(), Some(1), None)
    }

    #[test]
    fn a_completion_closes_the_latest_open_issue_of_its_sector_and_forgets_the_others() {
        // sector 100 issued at 10 and again at 20 (requeued), completed at 30: the issue at 20 takes it, 10 stays open;
        // sector 200 issued at 5, completed at 5 (same time: the issue first); a completion of no open issue is ignored
        let issues = vec![issue(20, 100), issue(10, 100), issue(5, 200)];
        let done = vec![(30, 8, 100, 8, "WS".to_string(), 0), (5, 8, 200, 8, "WS".to_string(), 0),
                        (40, 8, 100, 8, "WS".to_string(), 0)];
        let (sorted, dur) = pair(issues, &done);
        assert_eq!(sorted.iter().map(|e| e.0).collect::<Vec<_>>(), vec![5, 10, 20]);
        assert_eq!(dur, vec![0, NONE, 10]);
    }

    #[test]
    fn directions_follow_the_rwbs_flags() {
        assert_eq!(direction("FWS", 0), "flush");
        assert_eq!(direction("FWS", 8), "write");
        assert_eq!(direction("DS", 8), "discard");
        assert_eq!(direction("RA", 8), "read");
        assert_eq!(direction("F", 8), "flush");
        assert_eq!(direction("N", 0), "other");
    }
}
