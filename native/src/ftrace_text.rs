//! ftrace text lines (`TASK-TID (TGID) [CPU] FLAGS SECONDS.FRACTION: event: args`, as systrace/atrace captures
//! print them) into the columns the TraceBuilder takes. Container formats (HTML, zlib, JS strings) are undone on the
//! Python side (droidlag.io.systrace_html) before the text comes here, one section at a time.
//!
//! Each line's head is split by hand with the rules of the reader's former regex: the task name runs to the first
//! `-TID` after which the rest of the head parses (names may hold spaces and dashes), the TGID column may be absent
//! or dashed, the flags column may be absent (2012-era kernels). Each event's arguments are parsed by the rules of
//! the kernel's print format, greedy where a comm may hold spaces.

use crate::hash::{FastMap as HashMap, TidSet};

use crate::atrace::Parsed;
use crate::perfetto::{SchedStream, MAX_CPU};

pub const NONE: i64 = i64::MIN;
const NS_PER_S: i64 = 1_000_000_000;
const CLONE_THREAD: i64 = 0x10000;
const CPUIDLE_EXIT: i64 = 4294967295;
pub const MAX_DETAILED_WARNINGS: i64 = 5;

/// A change to the builder's thread table, in line order: (tid, pid, name, overwrite the name).
pub type ThreadOp = (i64, Option<i64>, Option<String>, bool);

/// What the parser hands over; column groups share one length each.
#[derive(Default)]
pub struct TextOut {
    pub sw: [Vec<i64>; 5], // ts, cpu, prev tid, prev_state (index into states), next tid
    pub states: Vec<String>,
    state_index: HashMap<String, i64>,
    pub wk: [Vec<i64>; 4], // ts, tid, target cpu (NONE), waker tid
    pub blocked_ts: Vec<i64>,
    pub blocked_tid: Vec<i64>,
    pub blocked: Vec<i32>, // each reason's (function, io_wait) as its place in `payloads`
    pub payloads: crate::states::Payloads,
    /// (ts, tid, debug_id, to_proc, to_thread, reply, flags, code): the TraceBuilder's own row order
    pub binder_tx: [Vec<i64>; 8],
    pub binder_rx: [Vec<i64>; 3],
    /// (ts, dev, sector, nr_sectors, bytes, rwbs, tid, comm)
    pub block_issue: Vec<(i64, i64, i64, i64, i64, String, Option<i64>, String)>,
    /// (ts, dev, sector, nr_sectors, rwbs, error)
    pub block_complete: Vec<(i64, i64, i64, i64, String, i64)>,
    pub events: Parsed,
    pub seq: i64,
    pub processes: Vec<i64>,
    pub metadata: Vec<(String, String)>,
}

pub struct TextParser {
    pub out: TextOut,
    pub skip_wakeup: bool,
    pub events: i64,
    pub unhandled: Vec<(String, i64)>,
    unhandled_index: HashMap<String, usize>,
    pub malformed: i64,
    pub lost_events: i64,
    pub first_bad_line: Option<i64>,
    /// (line, text) of the first MAX_DETAILED_WARNINGS malformed lines not yet handed over
    pub bad_lines: Vec<(i64, String)>,
    /// Lines that held several events run together (a trace whose newlines a web page or a paste lost), each split
    /// at its event heads: (line, events read on it) of the first MAX_DETAILED_WARNINGS, then the totals.
    pub run_together: Vec<(i64, i64)>,
    pub run_together_lines: i64,
    pub run_together_events: i64,
    first_ignored: Option<i64>,
    last_ignored: Option<i64>,
    pub thread_ops: Vec<ThreadOp>,
    pub min_ts: Option<i64>,
    pub max_ts: Option<i64>,
    tgid_of: HashMap<i64, i64>,
    named: TidSet,
    comm_named: TidSet,
}

/// The parts of a line's head.
struct Head<'a> {
    task: &'a str,
    tid: i64,
    tgid: Option<i64>,
    cpu: i64,
    secs: &'a str,
    frac: &'a str,
    event: &'a str,
    args: &'a str,
}

#[inline]
fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Digits at s[i..]: the end index (> i) or None.
#[inline]
fn digits(s: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    while j < s.len() && s[j].is_ascii_digit() {
        j += 1;
    }
    (j > i).then_some(j)
}

/// One or more whitespace characters at s[i..]: the end index or None.
#[inline]
fn spaces(s: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    while j < s.len() && is_ws(s[j]) {
        j += 1;
    }
    (j > i).then_some(j)
}

#[inline]
fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && is_ws(s[i]) {
        i += 1;
    }
    i
}

/// ftrace's stand-ins for a task whose comm it did not keep (`<...>`, or `<pid>` where the tracer prints the pid):
/// not a name, so a later comm (a sched_switch's) names the thread.
fn placeholder_comm(task: &str) -> bool {
    task == "<...>" || task.strip_prefix('<').and_then(|t| t.strip_suffix('>')).is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
}

fn int(s: &str) -> Option<i64> {
    s.parse::<i64>().ok()
}

/// `\d+` at the start of s: (value, rest).
fn lead_uint(s: &str) -> Option<(i64, &str)> {
    let end = digits(s.as_bytes(), 0)?;
    Some((s[..end].parse::<i64>().ok()?, &s[end..]))
}

/// `-?\d+` at the start of s: (value, rest).
fn lead_int(s: &str) -> Option<(i64, &str)> {
    let neg = s.starts_with('-');
    let start = neg as usize;
    let end = digits(s.as_bytes(), start)?;
    Some((s[..end].parse::<i64>().ok()?, &s[end..]))
}

/// `[0-9a-fA-F]+` at the start of s: (value, rest).
fn lead_hex(s: &str) -> Option<(i64, &str)> {
    let end = s.bytes().position(|c| !c.is_ascii_hexdigit()).unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    Some((u64::from_str_radix(&s[..end], 16).ok()? as i64, &s[end..]))
}

/// The head of an ftrace line after the task's dash at `dash`, or None when it does not parse from there.
fn head_after_dash<'a>(line: &'a str, task_start: usize, dash: usize) -> Option<Head<'a>> {
    let s = line.as_bytes();
    let tid_end = digits(s, dash + 1)?;
    let mut i = spaces(s, tid_end)?;
    let mut tgid = None;
    if s.get(i) == Some(&b'(') {
        // optional `(TGID)` / `(-----)` followed by whitespace; when it does not fit, the regex tries without it
        let j = skip_ws(s, i + 1);
        let k = if s.get(j) == Some(&b'-') {
            let mut k = j;
            while k < s.len() && s[k] == b'-' {
                k += 1;
            }
            Some((k, None))
        } else {
            digits(s, j).map(|k| (k, Some(&line[j..k])))
        };
        if let Some((k, value)) = k {
            let k2 = skip_ws(s, k);
            if s.get(k2) == Some(&b')') {
                if let Some(after) = spaces(s, k2 + 1) {
                    if s.get(after) == Some(&b'[') {
                        tgid = value.map(|v| v.parse::<i64>().unwrap_or(NONE));
                        i = after;
                    }
                }
            }
        }
    }
    if s.get(i) != Some(&b'[') {
        return None;
    }
    let cpu_end = digits(s, i + 1)?;
    if s.get(cpu_end) != Some(&b']') {
        return None;
    }
    let cpu = line[i + 1..cpu_end].parse::<i64>().ok()?;
    let i = spaces(s, cpu_end + 1)?;
    // optional flags (1-8 characters, no whitespace, ':' or '['), then the timestamp; without flags if that fails
    let mut flag_end = i;
    while flag_end < s.len() && flag_end - i < 9 && !is_ws(s[flag_end]) && s[flag_end] != b':' && s[flag_end] != b'[' {
        flag_end += 1;
    }
    if flag_end > i && flag_end - i <= 8 {
        if let Some(after) = spaces(s, flag_end) {
            if let Some(h) = tail(line, after) {
                return Some(Head { task: &line[task_start..dash], tid: int(&line[dash + 1..tid_end])?, tgid, cpu, ..h });
            }
        }
    }
    let h = tail(line, i)?;
    Some(Head { task: &line[task_start..dash], tid: int(&line[dash + 1..tid_end])?, tgid, cpu, ..h })
}

/// `SECONDS.FRACTION:\s+event:\s?args` at line[i..].
fn tail(line: &str, i: usize) -> Option<Head<'_>> {
    let s = line.as_bytes();
    let secs_end = digits(s, i)?;
    if s.get(secs_end) != Some(&b'.') {
        return None;
    }
    let frac_end = digits(s, secs_end + 1)?;
    if s.get(frac_end) != Some(&b':') {
        return None;
    }
    let ev_start = spaces(s, frac_end + 1)?;
    let mut ev_end = ev_start;
    while ev_end < s.len() && (s[ev_end].is_ascii_alphanumeric() || s[ev_end] == b'_' || s[ev_end] >= 0x80) {
        ev_end += 1;
    }
    if ev_end == ev_start || s.get(ev_end) != Some(&b':') {
        return None;
    }
    let mut a = ev_end + 1;
    if a < s.len() && is_ws(s[a]) {
        a += 1;
    }
    Some(Head {
        task: "", tid: 0, tgid: None, cpu: 0, secs: &line[i..secs_end], frac: &line[secs_end + 1..frac_end],
        event: &line[ev_start..ev_end], args: &line[a..],
    })
}

/// Where a further event head starts in `line` at or after `from` (events run together on one line, as a web page
/// or a paste that lost the newlines shows a trace), or None. Each `[` after `from` is tried as the CPU column: back
/// from it over whitespace, an optional `(TGID)` column, the PID's digits and its dash to the whitespace before the
/// task name (the last word: a run-on line cannot tell a name's spaces from the previous event's arguments), and the
/// head must parse from there (`TASK-PID [CPU] [FLAGS] SECS.FRAC: event:`), so an argument holding a `[` is not
/// taken for one. Lines without a `[` after `from` (most events) cost one byte scan.
fn next_head(line: &str, from: usize) -> Option<usize> {
    let s = line.as_bytes();
    if !s[from..].contains(&b'[') {
        return None; // most events: one memchr (native parse of 57 MB: 125 -> 140 ms; read_trace within noise)
    }
    let mut i = from;
    while let Some(off) = s[i..].iter().position(|&c| c == b'[') {
        let open = i + off;
        i = open + 1;
        if let Some((task, dash)) = head_start_before(s, from, open) {
            if head_after_dash(line, task, dash).is_some() {
                return Some(task);
            }
        }
    }
    None
}

/// (task start, dash) of the head whose CPU column opens at `open`, by the bytes before it (see next_head).
fn head_start_before(s: &[u8], from: usize, open: usize) -> Option<(usize, usize)> {
    let back_ws = |mut k: usize| {
        while k > from && is_ws(s[k - 1]) {
            k -= 1;
        }
        k
    };
    let mut k = back_ws(open);
    if k == open || k == from {
        return None;
    }
    if s[k - 1] == b')' {
        // `(TGID)` or `(-----)`: back to its `(` (at most 16 bytes), then the whitespace before it
        let lo = k.saturating_sub(18).max(from);
        let paren = lo + s[lo..k - 1].iter().rposition(|&c| c == b'(')?;
        let k2 = back_ws(paren);
        if k2 == paren || k2 == from {
            return None;
        }
        k = k2;
    }
    let digits_end = k;
    while k > from && s[k - 1].is_ascii_digit() {
        k -= 1;
    }
    if k == digits_end || k == from || s[k - 1] != b'-' {
        return None;
    }
    let dash = k - 1;
    let mut t = dash;
    while t > from && !is_ws(s[t - 1]) {
        t -= 1;
    }
    (t < dash).then_some((t, dash))
}

/// The line's head, or None when it is not an ftrace event line.
fn parse_head(line: &str) -> Option<Head<'_>> {
    let s = line.as_bytes();
    let start = skip_ws(s, 0);
    // the task takes at least one character; its dash is the first one after which the head parses
    let mut from = start + 1;
    while from < s.len() {
        let dash = from + s[from..].iter().position(|&c| c == b'-')?;
        if let Some(h) = head_after_dash(line, start, dash) {
            return Some(h);
        }
        from = dash + 1;
    }
    None
}

fn timestamp_ns(secs: &str, frac: &str) -> Option<i64> {
    let frac = &frac[..frac.len().min(9)];
    let f: i64 = frac.parse().ok()?;
    let scale = 10i64.pow(9 - frac.len() as u32);
    secs.parse::<i64>().ok()?.checked_mul(NS_PER_S)?.checked_add(f * scale)
}

/// What a handler made of a line's arguments.
enum Done {
    Ok,         // counts in the time range
    NotTimed,   // an event, but not one that widens the time range (the 2012 clock-sync dummy at 0.0)
    Malformed,
}

impl TextParser {
    pub fn new(skip_wakeup: bool) -> Self {
        TextParser {
            out: TextOut::default(),
            skip_wakeup,
            events: 0,
            unhandled: Vec::new(),
            unhandled_index: HashMap::default(),
            malformed: 0,
            lost_events: 0,
            first_bad_line: None,
            bad_lines: Vec::new(),
            run_together: Vec::new(),
            run_together_lines: 0,
            run_together_events: 0,
            first_ignored: None,
            last_ignored: None,
            thread_ops: Vec::new(),
            min_ts: None,
            max_ts: None,
            tgid_of: HashMap::default(),
            named: TidSet::default(),
            comm_named: TidSet::default(),
        }
    }

    /// tid belongs to process tgid, known from outside the text (a process dump); nothing to hand over.
    pub fn note_tgid(&mut self, tid: i64, tgid: i64) {
        self.tgid_of.insert(tid, tgid);
    }

    /// tid belongs to process tgid (TGID column, procfs dump, new thread).
    pub fn set_tgid(&mut self, tid: i64, tgid: i64) {
        self.tgid_of.insert(tid, tgid);
        self.thread_ops.push((tid, Some(tgid), None, false));
    }

    fn see(&mut self, ts: i64) {
        if self.min_ts.is_none_or(|m| ts < m) {
            self.min_ts = Some(ts);
        }
        if self.max_ts.is_none_or(|m| ts > m) {
            self.max_ts = Some(ts);
        }
    }

    fn bad(&mut self, text: &str, lineno: i64) {
        self.malformed += 1;
        if self.first_bad_line.is_none() {
            self.first_bad_line = Some(lineno);
        }
        if self.malformed <= MAX_DETAILED_WARNINGS {
            let t = text.trim();
            self.bad_lines.push((lineno, t.chars().take(120).collect()));
        }
    }

    /// Every line of `text`; `first_line` is the file line of its first line (1 when file lines do not apply).
    pub fn parse(&mut self, text: &str, first_line: i64) {
        self.first_ignored = None;
        self.last_ignored = None;
        let mut owned = String::new();
        let has_cr = text.as_bytes().contains(&b'\r'); // one scan of the text rather than one per line
        for (k, raw) in text.split('\n').enumerate() {
            let lineno = first_line + k as i64;
            // CRLF captures (adb of old, Windows): a CR left on a line would end up in slice names
            let line: &str = if has_cr && raw.as_bytes().contains(&b'\r') {
                owned.clear();
                owned.extend(raw.chars().filter(|&c| c != '\r'));
                &owned
            } else {
                raw
            };
            self.line(line, lineno);
        }
        for ts in [self.first_ignored, self.last_ignored].into_iter().flatten() {
            self.see(ts);
        }
    }

    /// One line: its event, and the events run on after it on the same line (split at each further event head
    /// `TASK-PID [CPU] FLAGS SECS.FRAC: event:`, noted for a warning). A `#` line that runs on into events (the
    /// header block and the trace collapsed together) keeps its events.
    fn line(&mut self, line: &str, lineno: i64) {
        let mut rest = line;
        if line.trim_start().starts_with('#') {
            match next_head(line, 0) {
                Some(p) => rest = &line[p..],
                None => return,
            }
        }
        let mut read = 0i64;
        loop {
            let Some(h) = parse_head(rest) else {
                self.not_an_event(rest, lineno);
                break;
            };
            let args_at = h.args.as_ptr() as usize - rest.as_ptr() as usize;
            let next = next_head(rest, args_at);
            // the event's own text: up to the next head (its head parses again, its arguments end there)
            let (h, this) = match next {
                None => (Some(h), rest),
                Some(p) => {
                    let this = rest[..p].trim_end();
                    (parse_head(this), this)
                }
            };
            match h {
                Some(h) => self.event(h, this, lineno),
                None => self.not_an_event(this, lineno),
            }
            read += 1;
            match next {
                Some(p) => rest = &rest[p..],
                None => break,
            }
        }
        if read > 1 || (read == 1 && rest.len() != line.len()) {
            self.run_together_lines += 1;
            self.run_together_events += read;
            if self.run_together_lines <= MAX_DETAILED_WARNINGS {
                self.run_together.push((lineno, read));
            }
        }
    }

    /// One event, its head parsed from `line`.
    fn event(&mut self, h: Head, line: &str, lineno: i64) {
        self.events += 1;
        self.task(&h);
        let Some(ts) = timestamp_ns(h.secs, h.frac) else {
            self.bad(line, lineno);
            return;
        };
        let done = match h.event {
            "sched_switch" => self.sched_switch(ts, h.cpu, h.args),
            "sched_waking" | "sched_wakeup_new" => self.sched_waking(ts, h.tid, h.args),
            "sched_wakeup" => {
                if self.skip_wakeup {
                    Done::Ok
                } else {
                    self.sched_waking(ts, h.tid, h.args)
                }
            }
            "sched_blocked_reason" => self.sched_blocked_reason(ts, h.args),
            "tracing_mark_write" | "0" => self.atrace(ts, h.tid, h.args, lineno),
            "print" => self.print(ts, h.tid, h.args, lineno),
            "cpu_frequency" => self.cpu_counter(ts, h.args, "cpufreq"),
            "cpu_idle" => self.cpu_counter(ts, h.args, "cpuidle"),
            "binder_transaction" => self.binder_transaction(ts, h.tid, h.args),
            "binder_transaction_received" => self.binder_received(ts, h.tid, h.args),
            "block_rq_issue" => self.block_issue(ts, h.tid, h.args),
            "block_rq_complete" => self.block_complete(ts, h.args),
            "task_rename" => self.task_rename(h.args),
            "task_newtask" => self.task_newtask(h.tid, h.args),
            "sched_process_exit" => self.process_exit(h.args),
            other => {
                // ignored events only matter for the time range; ftrace text is in time order, so the first
                // and the last one are enough
                match self.unhandled_index.get(other) {
                    Some(&i) => self.unhandled[i].1 += 1,
                    None => {
                        self.unhandled_index.insert(other.to_string(), self.unhandled.len());
                        self.unhandled.push((other.to_string(), 1));
                    }
                }
                if self.first_ignored.is_none() {
                    self.first_ignored = Some(ts);
                }
                self.last_ignored = Some(ts);
                return;
            }
        };
        match done {
            Done::Ok => self.see(ts),
            Done::NotTimed => {}
            Done::Malformed => self.bad(&format!("{}: {}", h.event, h.args), lineno),
        }
    }

    /// A line's task: its process from the TGID column and its name, the first time the thread shows them.
    fn task(&mut self, h: &Head) {
        if let Some(tgid) = h.tgid {
            if tgid != NONE && !self.tgid_of.contains_key(&h.tid) {
                self.set_tgid(h.tid, tgid);
            }
        }
        if h.tid != 0 && !self.named.contains(h.tid) {
            let task = h.task.trim();
            if !placeholder_comm(task) {
                self.named.insert(h.tid);
                self.thread_ops.push((h.tid, None, Some(task.to_string()), false));
            }
        }
    }

    /// A comm seen in an event's arguments: names the thread if nothing named it before.
    fn comm(&mut self, tid: i64, comm: &str) {
        if tid != 0 && !comm.is_empty() && !placeholder_comm(comm) && self.comm_named.insert(tid) {
            self.thread_ops.push((tid, None, Some(comm.to_string()), false));
        }
    }

    fn not_an_event(&mut self, line: &str, lineno: i64) {
        let s = line.trim();
        if s.is_empty() || s.starts_with('#') {
            return;
        }
        if let Some((tgid, tid)) = procfs_line(s) {
            // catapult's `echo /proc/[0-9]*/task/[0-9]*` dump: tid -> tgid
            self.set_tgid(tid, tgid);
            return;
        }
        if let Some(n) = lost_events(s) {
            self.lost_events += n;
            return;
        }
        self.bad(line, lineno);
    }

    // ---- scheduling ---------------------------------------------------------------------------------------
    /// `prev_comm=C prev_pid=P prev_prio=N prev_state=S ==> next_comm=C next_pid=P` (comms may hold spaces).
    fn sched_switch(&mut self, ts: i64, cpu: i64, args: &str) -> Done {
        let Some(rest) = args.strip_prefix("prev_comm=") else { return Done::Malformed };
        // prev_comm is greedy: the last ` prev_pid=` after which the rest parses
        let mut found = None;
        let mut end = rest.len();
        while let Some(at) = rfind_field(&rest[..end], " prev_pid=") {
            if let Some(v) = switch_rest(&rest[at + 10..]) {
                found = Some((&rest[..at], v));
                break;
            }
            end = at;
        }
        let Some((prev_comm, (prev, state, next_comm, next))) = found else { return Done::Malformed };
        let code = match self.out.state_index.get(state) {
            Some(&c) => c,
            None => {
                let c = self.out.states.len() as i64;
                self.out.states.push(state.to_string());
                self.out.state_index.insert(state.to_string(), c);
                c
            }
        };
        let sw = &mut self.out.sw;
        sw[0].push(ts);
        sw[1].push(cpu);
        sw[2].push(prev);
        sw[3].push(code);
        sw[4].push(next);
        self.comm(prev, prev_comm);
        self.comm(next, next_comm);
        Done::Ok
    }

    /// `comm=C pid=P prio=N [success=N] [target_cpu=N]`: the woken thread is in the arguments, the line's own
    /// task is the waker (tid 0: idle/interrupt).
    fn sched_waking(&mut self, ts: i64, waker: i64, args: &str) -> Done {
        let Some((comm, pid, rest)) = comm_pid(args, "comm=", " pid=") else { return Done::Malformed };
        let Some(rest) = rest.strip_prefix(" prio=") else { return Done::Malformed };
        let Some((_, mut rest)) = lead_int(rest) else { return Done::Malformed };
        if let Some(r) = rest.strip_prefix(" success=") {
            if let Some((_, r)) = lead_uint(r) {
                rest = r;
            }
        }
        let target = rest.strip_prefix(" target_cpu=").and_then(lead_uint).map(|(v, _)| v).unwrap_or(NONE);
        let wk = &mut self.out.wk;
        wk[0].push(ts);
        wk[1].push(pid);
        wk[2].push(target);
        wk[3].push(waker);
        self.comm(pid, comm);
        Done::Ok
    }

    /// `pid=P iowait=N caller=FUNCTION+OFFSET/SIZE`: the offset goes.
    fn sched_blocked_reason(&mut self, ts: i64, args: &str) -> Done {
        let Some((pid, rest)) = args.strip_prefix("pid=").and_then(lead_uint) else { return Done::Malformed };
        let Some((iowait, rest)) = rest.strip_prefix(" iowait=").and_then(lead_uint) else { return Done::Malformed };
        let Some(rest) = rest.strip_prefix(" caller=") else { return Done::Malformed };
        let end = rest.bytes().position(|c| c == b'+' || is_ws(c)).unwrap_or(rest.len());
        let caller = &rest[..end];
        self.out.blocked_ts.push(ts);
        self.out.blocked_tid.push(pid);
        let id = self.out.payloads.id((!caller.is_empty()).then_some(caller), iowait != 0);
        self.out.blocked.push(id);
        Done::Ok
    }

    // ---- atrace -------------------------------------------------------------------------------------------
    /// tracing_mark_write (and the 2012 kernels' `0:`) carry an atrace payload: B|pid|name, E, C|..., ...
    fn atrace(&mut self, ts: i64, tid: i64, args: &str, lineno: i64) -> Done {
        let mut chars = args.chars();
        let first = chars.next();
        let second = chars.next();
        if second.is_some_and(|c| c != '|') {
            if let Some(sync) = args.strip_prefix("trace_event_clock_sync:") {
                for part in sync.split_whitespace() {
                    if let Some((key, value)) = part.split_once('=') {
                        if !value.is_empty() {
                            self.out.metadata.push((format!("clock_sync_{key}"), value.to_string()));
                        }
                    }
                }
                // the 2012 reports end with a dummy line at time 0.0
                return if ts == 0 { Done::NotTimed } else { Done::Ok };
            }
            return Done::Ok; // a plain-text print: no slice semantics
        }
        if first.is_some_and(|c| "BESFCGHNI".contains(c)) {
            self.out.seq += 1;
            self.out.events.payload(ts, tid, args, self.out.seq, Some(lineno));
        }
        Done::Ok
    }

    /// ftrace `print` events put the writer's ip before the payload: `tracing_mark_write: B|..` or `0x..: B|..`.
    fn print(&mut self, ts: i64, tid: i64, args: &str, lineno: i64) -> Done {
        let mut args = args;
        if let Some(rest) = args.strip_prefix("tracing_mark_write: ") {
            args = rest;
        } else if args.starts_with("0x") {
            if let Some(i) = args.find(": ") {
                if i > 0 {
                    args = &args[i + 2..];
                }
            }
        }
        self.atrace(ts, tid, args, lineno)
    }

    // ---- CPU frequency and idle ---------------------------------------------------------------------------
    /// `state=N cpu_id=N`: counter "cpufreq" in kHz, or "cpuidle", the idle state entered (-1 when the CPU
    /// leaves idle: the kernel prints (u32)-1).
    fn cpu_counter(&mut self, ts: i64, args: &str, name: &str) -> Done {
        let Some((state, rest)) = args.strip_prefix("state=").and_then(lead_uint) else { return Done::Malformed };
        let Some((cpu, _)) = rest.strip_prefix(" cpu_id=").and_then(lead_uint) else { return Done::Malformed };
        let value = if name == "cpuidle" && state == CPUIDLE_EXIT { -1.0 } else { state as f64 };
        self.out.events.counter(ts, name, value, Some(cpu), None);
        Done::Ok
    }

    // ---- binder -------------------------------------------------------------------------------------------
    fn binder_transaction(&mut self, ts: i64, tid: i64, args: &str) -> Done {
        let r = (|| {
            let (did, r) = lead_uint(args.strip_prefix("transaction=")?)?;
            let (_, r) = lead_uint(r.strip_prefix(" dest_node=")?)?;
            let (to_proc, r) = lead_uint(r.strip_prefix(" dest_proc=")?)?;
            let (to_thread, r) = lead_uint(r.strip_prefix(" dest_thread=")?)?;
            let (reply, r) = lead_uint(r.strip_prefix(" reply=")?)?;
            let (flags, r) = lead_hex(r.strip_prefix(" flags=0x")?)?;
            let (code, _) = lead_hex(r.strip_prefix(" code=0x")?)?;
            Some((did, to_proc, to_thread, reply, flags, code))
        })();
        let Some((did, to_proc, to_thread, reply, flags, code)) = r else { return Done::Malformed };
        let nz = |v: i64| if v != 0 { v } else { NONE };
        let row = [ts, tid, did, nz(to_proc), nz(to_thread), (reply != 0) as i64, flags, code];
        for (c, v) in self.out.binder_tx.iter_mut().zip(row) {
            c.push(v);
        }
        Done::Ok
    }

    fn binder_received(&mut self, ts: i64, tid: i64, args: &str) -> Done {
        let Some((did, _)) = args.strip_prefix("transaction=").and_then(lead_uint) else { return Done::Malformed };
        for (c, v) in self.out.binder_rx.iter_mut().zip([ts, tid, did]) {
            c.push(v);
        }
        Done::Ok
    }

    // ---- block I/O ----------------------------------------------------------------------------------------
    /// `maj,min rwbs bytes (cmd) sector + nr [comm]`. Older kernels print 0 bytes for file-system requests; then
    /// bytes come from nr_sectors. A request without a sector ((u64)-1) gets sector -1.
    fn block_issue(&mut self, ts: i64, tid: i64, args: &str) -> Done {
        let r = (|| {
            let (dev, rwbs, r) = dev_rwbs(args)?;
            let (nbytes, r) = lead_uint(r.strip_prefix(' ')?)?;
            let r = r.strip_prefix(" (")?;
            // `\(.*?\)`: the first `) ` after which the rest parses
            let mut from = 0;
            loop {
                let close = from + r[from..].find(')')?;
                if let Some(v) = sector_nr(&r[close + 1..]) {
                    let (sector, nr, rest) = v;
                    let rest = rest.strip_prefix(" [")?;
                    let end = rest.rfind(']')?;
                    return Some((dev, rwbs, nbytes, sector, nr, &rest[..end]));
                }
                from = close + 1;
            }
        })();
        let Some((dev, rwbs, nbytes, sector, nr, comm)) = r else { return Done::Malformed };
        let size = if nbytes != 0 { nbytes } else { nr * 512 };
        self.out.block_issue.push((ts, dev, sector, nr, size, rwbs.to_string(), (tid != 0).then_some(tid),
                                   comm.to_string()));
        Done::Ok
    }

    fn block_complete(&mut self, ts: i64, args: &str) -> Done {
        let r = (|| {
            let (dev, rwbs, r) = dev_rwbs(args)?;
            let r = r.strip_prefix(" (")?;
            let mut from = 0;
            loop {
                let close = from + r[from..].find(')')?;
                if let Some((sector, nr, rest)) = sector_nr(&r[close + 1..]) {
                    if let Some((error, rest)) = rest.strip_prefix(" [").and_then(lead_int) {
                        if rest.starts_with(']') {
                            return Some((dev, rwbs, sector, nr, error));
                        }
                    }
                }
                from = close + 1;
            }
        })();
        let Some((dev, rwbs, sector, nr, error)) = r else { return Done::Malformed };
        self.out.block_complete.push((ts, dev, sector, nr, rwbs.to_string(), error));
        Done::Ok
    }

    // ---- thread names -------------------------------------------------------------------------------------
    /// `pid=P oldcomm=C newcomm=C oom_score_adj=N`: the new name wins (threads are usually renamed right after
    /// creation: pool thread -> its role).
    fn task_rename(&mut self, args: &str) -> Done {
        let r = (|| {
            let (pid, r) = lead_uint(args.strip_prefix("pid=")?)?;
            let r = r.strip_prefix(" oldcomm=")?;
            let oom = r.rfind(" oom_score_adj=")?;
            let new_at = r[..oom].rfind(" newcomm=")?;
            Some((pid, &r[new_at + 9..oom]))
        })();
        let Some((pid, newcomm)) = r else { return Done::Malformed };
        self.named.insert(pid);
        self.thread_ops.push((pid, None, Some(newcomm.to_string()), true));
        Done::Ok
    }

    /// `pid=P comm=C clone_flags=HEX ...`: a new thread joins its creator's process (CLONE_THREAD); otherwise it
    /// starts a process of its own.
    fn task_newtask(&mut self, tid: i64, args: &str) -> Done {
        let r = (|| {
            let (new, r) = lead_uint(args.strip_prefix("pid=")?)?;
            let r = r.strip_prefix(" comm=")?;
            let mut end = r.len();
            while let Some(at) = r[..end].rfind(" clone_flags=") {
                if let Some((flags, _)) = lead_hex(&r[at + 13..]) {
                    return Some((new, &r[..at], flags));
                }
                end = at;
            }
            None
        })();
        let Some((new, comm, flags)) = r else { return Done::Malformed };
        let name = (!comm.is_empty()).then(|| comm.to_string());
        if flags & CLONE_THREAD != 0 {
            let tgid = self.tgid_of.get(&tid).copied();
            self.thread_ops.push((new, tgid, name, false));
            if let Some(t) = tgid {
                self.tgid_of.insert(new, t);
            }
        } else {
            self.out.processes.push(new);
            self.set_tgid(new, new);
            self.thread_ops.push((new, None, name, false));
        }
        Done::Ok
    }

    /// `comm=C pid=P prio=N`
    fn process_exit(&mut self, args: &str) -> Done {
        let Some((comm, pid, _)) = comm_pid(args, "comm=", " pid=") else { return Done::Malformed };
        self.thread_ops.push((pid, None, (!comm.is_empty()).then(|| comm.to_string()), false));
        Done::Ok
    }
}

/// The parser's scheduling events as one stream in the thread-state pass's narrow columns (perfetto::SchedStream,
/// which TraceBuilder.sched_stream takes in one step): switches, then wakings (sched_wakeup's too), then blocked
/// reasons, each group in line order; a switch's prev_state as its index into `TextOut::states`. A CPU number no
/// device has (a damaged line) leaves its event out, counted, as TraceBuilder._keep_sched_chunk does; a waking
/// without a target_cpu keeps its event, with no CPU (i32::MIN).
pub fn sched_stream(sw: [Vec<i64>; 5], wk: [Vec<i64>; 4], blocked_ts: Vec<i64>, blocked_tid: Vec<i64>,
                    blocked: Vec<i32>) -> SchedStream {
    let n = sw[0].len() + wk[0].len() + blocked_ts.len();
    let mut s = SchedStream {
        ts: Vec::with_capacity(n), kind: Vec::with_capacity(n), cpu: Vec::with_capacity(n), a: Vec::with_capacity(n),
        b: Vec::with_capacity(n), switch_state: Vec::with_capacity(sw[0].len()),
        blocked_index: blocked, bad_cpu: 0, range: None,
        counts: (sw[0].len(), wk[0].len(), blocked_ts.len()),
    };
    for t in [&sw[0], &wk[0], &blocked_ts] {
        if let (Some(&lo), Some(&hi)) = (t.iter().min(), t.iter().max()) {
            s.range = Some(s.range.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        }
    }
    let mut push = |kind: u8, ts: i64, cpu: i64, a: i64, b: i64| {
        if cpu != NONE && !(0..=MAX_CPU).contains(&cpu) {
            s.bad_cpu += 1;
            return false;
        }
        s.ts.push(ts);
        s.kind.push(kind);
        s.cpu.push(if cpu == NONE { i32::MIN } else { cpu as i32 });
        s.a.push(a);
        s.b.push(b);
        true
    };
    let mut states = Vec::with_capacity(sw[0].len());
    for i in 0..sw[0].len() {
        if push(0, sw[0][i], sw[1][i], sw[2][i], sw[4][i]) {
            states.push(sw[3][i]);
        }
    }
    for i in 0..wk[0].len() {
        push(1, wk[0][i], wk[2][i], wk[1][i], wk[3][i]);
    }
    for (&ts, &tid) in blocked_ts.iter().zip(&blocked_tid) {
        push(2, ts, NONE, tid, NONE);
    }
    s.switch_state = states;
    s
}

/// The last place of `field` (a ` key=` of a few bytes) in s: a byte loop back from the end, which for an event's
/// arguments (a hundred bytes) costs less than setting up the standard library's substring search each time.
#[inline]
fn rfind_field(s: &str, field: &str) -> Option<usize> {
    let (h, f) = (s.as_bytes(), field.as_bytes());
    let first = *f.first()?;
    let mut i = h.len().checked_sub(f.len())?;
    loop {
        if h[i] == first && h[i..].starts_with(f) {
            return Some(i);
        }
        if i == 0 {
            return None;
        }
        i -= 1;
    }
}

/// `prev_pid`'s digits onwards of a sched_switch: (prev, prev_state, next_comm, next).
fn switch_rest(r: &str) -> Option<(i64, &str, &str, i64)> {
    let (prev, r) = lead_int(r)?;
    let r = r.strip_prefix(" prev_prio=")?;
    let (_, r) = lead_int(r)?;
    let r = r.strip_prefix(" prev_state=")?;
    let end = r.bytes().position(is_ws).unwrap_or(r.len());
    if end == 0 {
        return None;
    }
    let state = &r[..end];
    let r = r[end..].strip_prefix(" ==> next_comm=")?;
    let mut stop = r.len();
    while let Some(at) = rfind_field(&r[..stop], " next_pid=") {
        if let Some((next, _)) = lead_int(&r[at + 10..]) {
            return Some((prev, state, &r[..at], next));
        }
        stop = at;
    }
    None
}

/// `PREFIX comm SEP digits`, the comm greedy (the last SEP followed by digits): (comm, value, rest).
fn comm_pid<'a>(args: &'a str, prefix: &str, sep: &str) -> Option<(&'a str, i64, &'a str)> {
    let r = args.strip_prefix(prefix)?;
    let mut end = r.len();
    while let Some(at) = rfind_field(&r[..end], sep) {
        if let Some((v, rest)) = lead_uint(&r[at + sep.len()..]) {
            return Some((&r[..at], v, rest));
        }
        end = at;
    }
    None
}

/// `maj,min rwbs` at the start of a block event: (dev, rwbs, rest).
fn dev_rwbs(args: &str) -> Option<(i64, &str, &str)> {
    let (major, r) = lead_uint(args)?;
    let (minor, r) = lead_uint(r.strip_prefix(',')?)?;
    let r = r.strip_prefix(' ')?;
    let end = r.bytes().position(is_ws).unwrap_or(r.len());
    Some(((major << 20) | minor, &r[..end], &r[end..]))
}

/// ` sector + nr` (after the command's parenthesis): (sector, nr, rest); a sector of (u64)-1 is -1.
fn sector_nr(r: &str) -> Option<(i64, i64, &str)> {
    let r = r.strip_prefix(' ')?;
    let end = digits(r.as_bytes(), 0)?;
    let sector: u128 = r[..end].parse().ok()?;
    let sector = if sector >= u64::MAX as u128 { -1 } else { i64::try_from(sector).ok()? };
    let (nr, rest) = lead_uint(r[end..].strip_prefix(" + ")?)?;
    Some((sector, nr, rest))
}

/// `/proc/TGID/task/TID` (catapult's procfs dump), the line stripped: (tgid, tid).
fn procfs_line(s: &str) -> Option<(i64, i64)> {
    let r = s.strip_prefix('/').unwrap_or(s).strip_prefix("proc/")?;
    let (tgid, r) = lead_uint(r)?;
    let (tid, r) = lead_uint(r.strip_prefix("/task/")?)?;
    r.trim().is_empty().then_some((tgid, tid))
}

/// `CPU:N [LOST N EVENTS]` anywhere in the line: N lost.
fn lost_events(s: &str) -> Option<i64> {
    let mut from = 0;
    while let Some(at) = s[from..].find("CPU:") {
        let i = from + at + 4;
        let b = s.as_bytes();
        let j = skip_ws(b, i);
        if let Some(k) = digits(b, j) {
            if let Some(r) = s[k..].strip_prefix(" [LOST ") {
                if let Some((n, r)) = lead_uint(r) {
                    if r.starts_with(" EVENTS]") {
                        return Some(n);
                    }
                }
            }
        }
        from = i;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfind_field_finds_the_last_place() {
        assert_eq!(rfind_field("a prev_pid=1 b prev_pid=2", " prev_pid="), Some(14));
        assert_eq!(rfind_field(" prev_pid=", " prev_pid="), Some(0));
        assert_eq!(rfind_field("prev_pid=", " prev_pid="), None);
        assert_eq!(rfind_field("", " x"), None);
    }

    #[test]
    fn comms_holding_field_names_stay_whole() {
        // each comm holds the text of the field after it; the greedy rule takes the last place the rest parses
        let mut p = TextParser::new(false);
        p.parse(concat!(
            "a-7 [001] d..2 1.000000: sched_switch: prev_comm=a prev_pid=9 x prev_pid=7 prev_prio=120 ",
            "prev_state=S ==> next_comm=b next_pid=3 y next_pid=5 next_prio=120\n",
            "a-7 [001] d..2 1.000001: sched_waking: comm=c pid=4 z pid=6 prio=120 target_cpu=002\n"), 1);
        assert_eq!(p.events, 2);
        assert_eq!(p.malformed, 0);
        assert_eq!((p.out.sw[2][0], p.out.sw[4][0]), (7, 5));
        assert_eq!((p.out.wk[1][0], p.out.wk[2][0], p.out.wk[3][0]), (6, 2, 7));
        let names: Vec<_> = p.thread_ops.iter().filter_map(|(t, _, n, _)| n.clone().map(|n| (*t, n))).collect();
        // the task column names 7 first; each comm then names its thread once (the builder keeps the first)
        let want = [(7, "a"), (7, "a prev_pid=9 x"), (5, "b next_pid=3 y"), (6, "c pid=4 z")];
        assert_eq!(names, want.map(|(t, n)| (t, n.to_string())).to_vec());
    }
}
