//! The hot loop of the ART/Dalvik thread-dump reader (`droidlag.io.anr`): a dump's text split into its top-level
//! lines (thread headers, `----- pid` blocks, ANR header lines: few, read by the Python state machine) and the runs
//! of indented lines between them (stack frames, `| k=v` attribute lines, lock lines: most of a dump), each run
//! already sorted into frames, attributes, lock lines and unrecognised lines, so that Python touches a stack line
//! only as an element of a list.

/// Python's `str.isspace` for one character (what `str.lstrip()` strips): the ASCII controls \t..\r and \x1c..\x1f,
/// space, and the Unicode spaces and separators.
pub fn py_space(c: char) -> bool {
    matches!(c, '\t'..='\r' | '\x1c'..='\x1f' | ' ' | '\u{85}' | '\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}'
        | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}')
}

fn lstrip(s: &str) -> &str {
    // ASCII white space byte by byte (the usual indentation), then any Unicode space after it char by char
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && matches!(b[i], 9..=13 | 0x1c..=0x1f | b' ') {
        i += 1;
    }
    if i < b.len() && !b[i].is_ascii() {
        return s[i..].trim_start_matches(py_space);
    }
    &s[i..]
}

/// A lock line of a run: its stripped text, how many frames of the run come before it, its line number.
pub struct Lock<'a> {
    pub text: &'a str,
    pub frames_before: usize,
    pub line: i64,
}

/// One run of indented lines (between two top-level lines).
pub struct Run<'a> {
    pub first_line: i64,
    pub frames: Vec<&'a str>,
    pub attrs: Vec<&'a str>,
    pub locks: Vec<Lock<'a>>,
    pub unknown: i64,
    pub first_unknown: Option<i64>,
    /// Byte range of the run in the text (its raw lines, for a run no thread is open for).
    pub start: usize,
    pub end: usize,
}

/// A number field of a thread header: an int when it is plain ASCII digits, else its text (Python's int() rules,
/// signs, underscores and other scripts' digits, are applied by the reader), None when absent.
pub enum Num<'a> {
    Int(i64),
    Text(&'a str),
}

/// A thread header (`"main" prio=5 tid=1 Blocked`, `"Binder:474_2" sysTid=474`, `"x" daemon prio=5 (not
/// attached)`): the name up to the first `" prio=` / `" daemon prio=` / `" sysTid=` (else the last quote), then the
/// `daemon`, `prio=`, `tid=` and `sysTid=` tokens (the last of each counts); the other tokens without `=` are the
/// state words, joined by one space.
pub struct Header<'a> {
    pub name: &'a str,
    pub daemon: bool,
    pub prio: Option<Num<'a>>,
    pub tid: Option<Num<'a>>,
    pub sys_tid: Option<Num<'a>>,
    pub state: String,
}

fn num(s: &str) -> Num<'_> {
    if !s.is_empty() && s.len() <= 18 && s.bytes().all(|b| b.is_ascii_digit()) {
        Num::Int(s.parse().unwrap_or(0))
    } else {
        Num::Text(s)
    }
}

/// A thread header line (it opens with a quote), or None when it has no closing quote.
pub fn thread_header(line: &str) -> Option<Header<'_>> {
    let mut end: Option<usize> = None;
    for marker in ["\" prio=", "\" daemon prio=", "\" sysTid="] {
        match line.find(marker) {
            Some(i) if i > 0 => {
                end = Some(i);
                break;
            }
            _ => {}
        }
    }
    let end = match end {
        Some(i) => i,
        None => match line.rfind('"') {
            Some(i) if i > 0 => i,
            _ => return None,
        },
    };
    let mut h = Header { name: &line[1..end], daemon: false, prio: None, tid: None, sys_tid: None,
                         state: String::new() };
    for tok in line[end + 1..].split(py_space).filter(|t| !t.is_empty()) {
        if tok == "daemon" {
            h.daemon = true;
        } else if let Some(v) = tok.strip_prefix("prio=") {
            h.prio = Some(num(v));
        } else if let Some(v) = tok.strip_prefix("tid=") {
            h.tid = Some(num(v));
        } else if let Some(v) = tok.strip_prefix("sysTid=") {
            h.sys_tid = Some(num(v));
        } else if tok.contains('=') {
            continue;
        } else {
            if !h.state.is_empty() {
                h.state.push(' ');
            }
            h.state.push_str(tok);
        }
    }
    Some(h)
}

pub enum Item<'a> {
    Top(i64, &'a str),
    Thread(i64, &'a str, Option<Header<'a>>),
    Run(Run<'a>),
}

const FRAME_PREFIXES: [&str; 4] = ["at ", "native:", "#", "kernel:"];

/// The text's lines in order, as top-level lines and runs of indented lines (a line indented by a space or a tab;
/// empty lines are skipped and do not end a run). Line numbers count from line_offset + 1.
pub fn scan(text: &str, line_offset: i64) -> Vec<Item<'_>> {
    let mut out: Vec<Item> = Vec::new();
    let mut run: Option<Run> = None;
    let mut pos = 0usize;
    let mut no = line_offset;
    let n = text.len();
    while pos < n {
        let end = memchr_nl(text.as_bytes(), pos).unwrap_or(n);
        let line = &text[pos..end];
        no += 1;
        let start = pos;
        pos = end + 1;
        let Some(&c) = line.as_bytes().first() else { continue };
        if c != b' ' && c != b'\t' {
            if ignored(c, line) {
                continue;
            }
            if let Some(r) = run.take() {
                out.push(Item::Run(r));
            }
            if c == b'"' {
                out.push(Item::Thread(no, line, thread_header(line)));
            } else {
                out.push(Item::Top(no, line));
            }
            continue;
        }
        let r = run.get_or_insert_with(|| Run { first_line: no, frames: Vec::new(), attrs: Vec::new(),
                                                locks: Vec::new(), unknown: 0, first_unknown: None, start, end });
        r.end = end;
        let s = lstrip(line);
        if FRAME_PREFIXES.iter().any(|p| s.starts_with(p)) {
            r.frames.push(s);
        } else if s.starts_with('|') {
            r.attrs.push(s);
        } else if s.starts_with("- ") {
            r.locks.push(Lock { text: s, frames_before: r.frames.len(), line: no });
        } else if s.is_empty() || s.starts_with('(') || s.starts_with("NOTE:") {
        } else {
            r.unknown += 1;
            r.first_unknown.get_or_insert(no);
        }
    }
    if let Some(r) = run.take() {
        out.push(Item::Run(r));
    }
    out
}

/// Openings of the top-level lines the reader reads (io/anr.py's `_DumpReader.line`, `_process_line` and
/// `_header_by_start`): process lines, an unindented frame, the ANR header's lines known by their first words.
const READ_OPENINGS: [&str; 12] = ["sysTid=", "Cmd line: ", "ABI: ", "Build fingerprint: ", "at ", "Subject: ",
                                   "PID: ", "Reason: ", "Load: ", "pid: ", "Crash type: ", "PSI memory full avg10: "];

/// A top-level line the reader is sure to ignore, whatever its state: not a thread header nor a `-`/`+` line, no
/// opening the reader reads, and none of what `_header_line` looks for anywhere in a line (`ANR in`, `WATCHDOG`, a
/// D-state note, a memory size, a `%` in a line that can be a CPU row: `^\s*\+?\d`, where a non-ASCII character may
/// be a digit). The GC and heap summary lines of every process (`MarkingPhase: Sum: 1ms 99% C.I. ...`) are most of
/// these.
fn ignored(c: u8, line: &str) -> bool {
    if matches!(c, b'"' | b'-' | b'+') || READ_OPENINGS.iter().any(|o| line.starts_with(o))
        || line.contains("ANR in ") || line.contains("WATCHDOG") || line.contains("have D state thread(")
        || line.contains("kB") || line.contains("Kb") {
        return false;
    }
    if line.contains('%') {
        if let Some(ch) = lstrip(line).chars().next() {
            if ch == '+' || ch.is_ascii_digit() || !ch.is_ascii() {
                return false;
            }
        }
    }
    true
}

/// The non-empty raw lines of text[start..end] (a run read as header lines when no thread is open).
pub fn lines(text: &str, start: usize, end: usize) -> Vec<&str> {
    text.get(start..end.min(text.len())).unwrap_or("").split('\n').filter(|l| !l.is_empty()).collect()
}

fn memchr_nl(b: &[u8], from: usize) -> Option<usize> {
    b[from..].iter().position(|&x| x == b'\n').map(|i| i + from)
}
