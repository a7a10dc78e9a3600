//! Binder transactions paired with their receipt and reply: one row per call, as the TraceBuilder's binder table
//! has them. A call is received by the thread whose binder_transaction_received names its debug id; a reply sent by
//! that thread closes the latest call still waiting on it (nested calls unwind in order).

use std::collections::HashMap as StdHashMap;
use crate::hash::FastMap as HashMap;

pub const NONE: i64 = i64::MIN;
const TF_ONE_WAY: i64 = 0x01;

/// binder_transaction events (ts, tid, debug_id, to_proc, to_thread, reply 0/1, flags, code; None as NONE) and
/// binder_transaction_received events (ts, tid, debug_id).
pub struct Events<'a> {
    pub tx: [&'a [i64]; 8],
    pub rx: [&'a [i64]; 3],
}

/// The binder table's columns (NONE for null), and the replies whose call began before the trace.
#[derive(Default)]
pub struct Calls {
    pub ts: Vec<i64>,
    pub dur: Vec<i64>,
    pub client_tid: Vec<i64>,
    pub client_pid: Vec<i64>,
    pub server_tid: Vec<i64>,
    pub server_pid: Vec<i64>,
    pub received_ts: Vec<i64>,
    pub reply_ts: Vec<i64>,
    pub oneway: Vec<bool>,
    pub code: Vec<i64>,
    pub flags: Vec<i64>,
    pub debug_id: Vec<i64>,
    pub unmatched_replies: i64,
}

impl Calls {
    /// The binder table (BINDER_SCHEMA's columns, in its order; NONE as null), the columns moved into it.
    pub fn table(self) -> Result<crate::arrow_table::Table, arrow_schema::ArrowError> {
        let mut t = crate::arrow_table::TableBuilder::new();
        t.int64("ts", self.ts).int64("dur", self.dur).int64("client_tid", self.client_tid)
            .int64("client_pid", self.client_pid).int64("server_tid", self.server_tid)
            .int64("server_pid", self.server_pid).int64("received_ts", self.received_ts)
            .int64("reply_ts", self.reply_ts).bool_values("oneway", &self.oneway)
            .int64("code", self.code).int64("flags", self.flags).int64("debug_id", self.debug_id);
        t.finish()
    }
}

/// Transactions in order of (ts, tid, debug_id, ...), ties in insertion order; the first receipt of a debug id
/// counts. thread_pid: each known thread's process (NONE when unknown).
pub fn pair<S: std::hash::BuildHasher>(ev: &Events, thread_pid: &StdHashMap<i64, i64, S>) -> Calls {
    let [ts, tid, did, to_proc, to_thread, reply, flags, code] = ev.tx;
    let mut received: HashMap<i64, (i64, i64)> = HashMap::default();
    for i in 0..ev.rx[0].len() {
        received.entry(ev.rx[2][i]).or_insert((ev.rx[0][i], ev.rx[1][i]));
    }
    // by time (order.rs' sort), equal times by the other fields, then by index: a stable sort by the whole tuple
    let order = crate::order::by_time_then(ts, |i| (tid[i], did[i], to_proc[i], to_thread[i], reply[i], flags[i], code[i]));
    let pid_of = |t: i64| thread_pid.get(&t).copied().unwrap_or(NONE);
    let mut out = Calls::default();
    let calls = reply.iter().filter(|&&r| r == 0).count();
    for c in [&mut out.ts, &mut out.dur, &mut out.client_tid, &mut out.client_pid, &mut out.server_tid, &mut out.server_pid,
              &mut out.received_ts, &mut out.reply_ts, &mut out.code, &mut out.flags, &mut out.debug_id] {
        c.reserve_exact(calls);
    }
    out.oneway.reserve_exact(calls);
    let mut pending: HashMap<i64, Vec<usize>> = HashMap::default(); // server tid -> rows awaiting its reply
    for i in order {
        let i = i as usize;
        let rx = received.get(&did[i]).copied();
        if reply[i] != 0 {
            match pending.get_mut(&tid[i]).and_then(|st| st.pop()) {
                None => out.unmatched_replies += 1,
                Some(row) => {
                    out.reply_ts[row] = ts[i];
                    if let Some((rts, _)) = rx {
                        out.dur[row] = rts - out.ts[row];
                    }
                }
            }
            continue;
        }
        let oneway = flags[i] & TF_ONE_WAY != 0;
        let server = match rx {
            Some((_, t)) => t,
            None => to_thread[i],
        };
        let row = out.ts.len();
        out.ts.push(ts[i]);
        out.dur.push(NONE);
        out.client_tid.push(tid[i]);
        out.client_pid.push(pid_of(tid[i]));
        out.server_tid.push(server);
        out.server_pid.push(if server != NONE && server != 0 { pid_of(server) } else { to_proc[i] });
        out.received_ts.push(rx.map(|r| r.0).unwrap_or(NONE));
        out.reply_ts.push(NONE);
        out.oneway.push(oneway);
        out.code.push(code[i]);
        out.flags.push(flags[i]);
        out.debug_id.push(did[i]);
        if !oneway {
            if let Some((_, t)) = rx {
                pending.entry(t).or_default().push(row);
            }
        }
    }
    out
}
