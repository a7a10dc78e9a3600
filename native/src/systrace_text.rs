//! The text around a systrace's ftrace lines, done in one pass each rather than per line in Python: the legacy
//! report's JavaScript string escaping (`linuxPerfData = "...\n\` + newline) and the PROCESS DUMP `ps` listings.

/// Undoes JavaScript string escaping as the legacy systrace report wrote it. In order: CR LF becomes LF; `\n\` +
/// LF (an escaped newline then a line continuation) becomes one LF, so line numbers still match the file's lines;
/// a dangling `\` at the very end goes; then, left to right, `\` + LF (continuation) is removed, `\n \t \r \\ \"
/// \' \/ \0` become their characters, `\uXXXX` and `\xXX` the code point (a lone surrogate becomes U+FFFD), and
/// `\` before any other character leaves that character. A `\` with nothing after it stays.
pub fn unescape_js(text: &str) -> String {
    let s = text.replace("\r\n", "\n").replace("\\n\\\n", "\n");
    let s = s.strip_suffix('\\').unwrap_or(&s);
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let mut chars = after.chars();
        let Some(c) = chars.next() else {
            out.push('\\');
            rest = "";
            break;
        };
        let mut used = c.len_utf8();
        match c {
            '\n' => {}
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0' => out.push('\0'),
            'u' | 'x' => {
                let width = if c == 'u' { 4 } else { 2 };
                let hex = after.get(1..1 + width).filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
                match hex {
                    Some(h) => {
                        let v = u32::from_str_radix(h, 16).unwrap_or(0xFFFD);
                        out.push(char::from_u32(v).unwrap_or('\u{FFFD}'));
                        used += width;
                    }
                    None => out.push(c),
                }
            }
            other => out.push(other), // \\ \" \' \/ and any other escaped character stand for themselves
        }
        rest = &after[used..];
    }
    out.push_str(rest);
    out
}

/// One row of a PROCESS DUMP: a `ps -T` thread row (Thread: pid, tid, command) or a `ps` process row (Process:
/// pid, ppid, name).
pub enum DumpRow {
    Thread { pid: i64, tid: i64, name: Option<String> },
    Process { pid: i64, ppid: i64, name: Option<String> },
}

const PS_STATES: &[u8] = b"RSDTZXIWtKPx";

/// The rows of systrace's PROCESS DUMP text, in order: a `ps` listing (USER PID PPID ... S NAME [COMM]) gives
/// process names and parents, a `ps -T` listing (USER PID TID CMD) maps threads to processes. Each listing starts
/// with its header line (first token USER, a PID column); rows before any header, rows of fewer than 3 tokens and
/// rows whose second or third token is not a 64-bit integer are not rows.
pub fn process_dump(text: &str) -> Vec<DumpRow> {
    let mut rows = Vec::new();
    let mut header: Option<(bool, bool, bool)> = None; // (TID listing, PPID listing, has COMM column)
    for line in text.split('\n') {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.len() < 3 {
            continue;
        }
        if tokens[0] == "USER" && tokens.contains(&"PID") {
            header = Some((tokens[2] == "TID", tokens[2] == "PPID", tokens[tokens.len() - 1] == "COMM"));
            continue;
        }
        let Some((tid_listing, ppid_listing, has_comm)) = header else { continue };
        let (Some(pid), Some(second)) = (int(tokens[1]), int(tokens[2])) else { continue };
        if tid_listing {
            let name = if tokens.len() > 3 { Some(tokens[3..].join(" ")) } else { None };
            rows.push(DumpRow::Thread { pid, tid: second, name });
        } else if ppid_listing {
            rows.push(DumpRow::Process { pid, ppid: second, name: ps_process_name(&tokens, has_comm) });
        }
    }
    rows
}

/// A decimal integer as Python's int() reads a ps column (optional sign; no other characters).
fn int(token: &str) -> Option<i64> {
    let digits = token.strip_prefix(['+', '-']).unwrap_or(token);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.strip_prefix('+').unwrap_or(token).parse().ok()
}

/// NAME follows the one-letter state column; WCHAN may be blank, so find the state rather than count columns.
/// Kernel threads print as `[kthreadd]`; the brackets go.
fn ps_process_name(tokens: &[&str], has_comm: bool) -> Option<String> {
    let n = tokens.len();
    for i in 5..n.saturating_sub(1) {
        let t = tokens[i].as_bytes();
        if t.len() == 1 && PS_STATES.contains(&t[0]) {
            let rest = if has_comm && n > i + 2 { &tokens[i + 1..n - 1] } else { &tokens[i + 1..] };
            let name = rest.join(" ");
            let name = match name.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
                Some(inner) => inner.to_string(),
                None => name,
            };
            return if name.is_empty() { None } else { Some(name) };
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(unescape_js("a\\n\\\nb"), "a\nb");
        assert_eq!(unescape_js("q\\\"x\\\\y\\u0041\\x42\\zend\\"), "q\"x\\yABzend");
        assert_eq!(unescape_js("\\uZZ"), "uZZ");
    }

    #[test]
    fn dump_rows() {
        let rows = process_dump("junk 1 2\nUSER PID TID CMD\nroot 10 11 main thread\nu0 x 3 a\n");
        assert_eq!(rows.len(), 1);
        match &rows[0] {
            DumpRow::Thread { pid, tid, name } => assert_eq!((*pid, *tid, name.as_deref()), (10, 11, Some("main thread"))),
            _ => panic!(),
        }
    }
}
