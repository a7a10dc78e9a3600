//! The text around a systrace's ftrace lines, done in one pass each rather than per line in Python: the legacy
//! report's JavaScript string escaping (`linuxPerfData = "...\n\` + newline) and the PROCESS DUMP `ps` listings.

/// Undoes JavaScript string escaping as the legacy systrace report wrote it. In order: CR LF becomes LF; `\n\` +
/// LF (an escaped newline then a line continuation) becomes one LF, so line numbers still match the file's lines;
/// a dangling `\` at the very end goes; then, left to right, `\` + LF (continuation) is removed, `\n \t \r \\ \"
/// \' \/ \0` become their characters, `\uXXXX` and `\xXX` the code point (a lone surrogate becomes U+FFFD), and
/// `\` before any other character leaves that character. A `\` with nothing after it stays.
///
/// Done in one pass over the text (the steps above as written took three passes and three copies of a legacy
/// report's whole ftrace text): every `\n\` + LF is a match of the second step wherever it stands (no two can
/// overlap), so at each `\` the pass asks whether such a match starts there (then it is one LF) or right after it
/// (then the escaped character is that LF: a continuation); any other escaped character is the text's own.
pub fn unescape_js(text: &str) -> String {
    let normalized;
    let s = if text.contains('\r') {
        normalized = text.replace("\r\n", "\n");
        normalized.as_str()
    } else {
        text
    };
    // the dangling `\` can be taken off first: a match of `\n\` + LF ends with LF, so that `\` is in none
    let s = s.strip_suffix('\\').unwrap_or(s);
    let b = s.as_bytes();
    let joined = |at: usize| b[at..].starts_with(b"\\n\\\n");
    let mut out = String::with_capacity(s.len());
    let mut seg = 0; // start of the text not yet copied
    while let Some(off) = s[seg..].find('\\') {
        let at = seg + off;
        out.push_str(&s[seg..at]);
        if joined(at) {
            out.push('\n');
            seg = at + 4;
            continue;
        }
        let next = at + 1;
        if next == b.len() {
            out.push('\\');
            seg = next;
            break;
        }
        if joined(next) {
            seg = next + 4; // `\` + the LF that match becomes: a line continuation
            continue;
        }
        let c = s[next..].chars().next().unwrap_or('\\');
        let mut used = c.len_utf8();
        match c {
            '\n' => {}
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0' => out.push('\0'),
            'u' | 'x' => {
                // hex digits are never `\`, so no match of `\n\` + LF lies inside them
                let width = if c == 'u' { 4 } else { 2 };
                let hex = s.get(next + 1..next + 1 + width).filter(|h| h.bytes().all(|d| d.is_ascii_hexdigit()));
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
        seg = next + used;
    }
    out.push_str(&s[seg..]);
    out
}

/// Where the JavaScript string literal that `text` opens ends: the byte index of the first `"` not escaped (not
/// after an odd run of `\`), or None when the string is not closed.
pub fn closing_quote(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(off) = text[from..].find('"') {
        let q = from + off;
        let backslashes = b[..q].iter().rev().take_while(|&&c| c == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(q);
        }
        from = q + 1;
    }
    None
}

/// The JavaScript string literal that `text` opens, unescaped (up to its closing quote, or all of `text` when it
/// is not closed), and whether it was closed.
pub fn js_string(text: &str) -> (String, bool) {
    match closing_quote(text) {
        Some(q) => (unescape_js(&text[..q]), true),
        None => (unescape_js(text), false),
    }
}

/// js_string of a block's raw bytes, when decoding them to text first would change nothing but their type: valid
/// UTF-8 without CR or NUL (the reader's decode_text turns CRs into LFs and drops NULs). Also whether the string's
/// first line is a continuation (`\` + LF: its text starts on the file's next line). None otherwise.
pub fn js_string_utf8(raw: &[u8]) -> Option<(String, bool, bool)> {
    if find_byte(raw, b'\r').is_some() || find_byte(raw, 0).is_some() {
        return None;
    }
    let text = std::str::from_utf8(raw).ok()?;
    let (body, closed) = js_string(text);
    Some((body, closed, text.starts_with("\\\n")))
}

/// The first `</script` + up to 8 whitespace characters + `>` at or after `start` (any case, as an HTML parser
/// ends a script block): (its start, its end). A trace block is megabytes long and a trace names `<idle>` and
/// `<...>` tasks on every other line, so the candidates (`</`) are found here rather than by a search per `<`.
pub fn find_script_end(buf: &[u8], start: usize) -> Option<(usize, usize)> {
    let mut i = start;
    while i < buf.len() {
        let lt = i + find_byte(&buf[i..], b'<')?;
        i = lt + 1;
        let rest = &buf[lt..];
        if rest.len() < 9 || rest[1] != b'/' || !rest[2..8].eq_ignore_ascii_case(b"script") {
            continue;
        }
        let mut k = 8;
        while k < rest.len() && k < 16 && matches!(rest[k], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
            k += 1;
        }
        if rest.get(k) == Some(&b'>') {
            return Some((lt, lt + k + 1));
        }
    }
    None
}

/// The first place of byte `c` in `hay`: 32 bytes at a time, each block tested without an early exit so that it
/// compiles to vector compares (a byte loop that stops at the first hit does not).
fn find_byte(hay: &[u8], c: u8) -> Option<usize> {
    let mut blocks = hay.chunks_exact(32);
    let mut at = 0;
    for block in blocks.by_ref() {
        if block.iter().fold(false, |any, &x| any | (x == c)) {
            return block.iter().position(|&x| x == c).map(|k| at + k);
        }
        at += 32;
    }
    blocks.remainder().iter().position(|&x| x == c).map(|k| at + k)
}

/// The first place of `needle` in `hay`: candidates are the places where the needle's first and last bytes both
/// stand, tested 32 at a time without an early exit (vector compares), each then checked whole. A plain search of
/// megabytes of trace text for a marker that is usually not there ran at 1-3 GB/s in Python (str.find, re).
pub fn find_literal(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let n = needle.len();
    if n == 0 {
        return Some(0);
    }
    let places = hay.len().checked_sub(n)? + 1; // candidate starts 0..places
    let (first, last) = (needle[0], needle[n - 1]);
    let mut i = 0;
    while i + 32 <= places {
        let a: &[u8; 32] = hay[i..i + 32].try_into().unwrap_or(&[0; 32]);
        let b: &[u8; 32] = hay[i + n - 1..i + n - 1 + 32].try_into().unwrap_or(&[0; 32]);
        let mut mask = 0u32;
        for k in 0..32 {
            mask |= (((a[k] == first) & (b[k] == last)) as u32) << k;
        }
        while mask != 0 {
            let k = mask.trailing_zeros() as usize;
            if &hay[i + k..i + k + n] == needle {
                return Some(i + k);
            }
            mask &= mask - 1;
        }
        i += 32;
    }
    (i..places).find(|&j| &hay[j..j + n] == needle)
}

/// The number of LF bytes in buf (a file line count kept across megabytes of a report).
pub fn count_newlines(buf: &[u8]) -> usize {
    // 32 bytes at a time into a bit mask (vector compares), whose bits are counted
    let mut blocks = buf.chunks_exact(32);
    let mut n = 0usize;
    for block in blocks.by_ref() {
        let block: &[u8; 32] = block.try_into().unwrap_or(&[0; 32]);
        let mut mask = 0u32;
        for k in 0..32 {
            mask |= ((block[k] == b'\n') as u32) << k;
        }
        n += mask.count_ones() as usize;
    }
    n + blocks.remainder().iter().filter(|&&c| c == b'\n').count()
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

    /// The rule as the doc states it, step by step (three passes), to check the one-pass version against.
    fn unescape_by_steps(text: &str) -> String {
        let s = text.replace("\r\n", "\n").replace("\\n\\\n", "\n");
        let s = s.strip_suffix('\\').unwrap_or(&s);
        let mut out = String::new();
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(e) = chars.next() else {
                out.push('\\');
                break;
            };
            match e {
                '\n' => {}
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                'u' | 'x' => {
                    let width = if e == 'u' { 4 } else { 2 };
                    let ahead: String = chars.clone().take(width).collect();
                    if ahead.chars().count() == width && ahead.bytes().all(|d| d.is_ascii_hexdigit()) {
                        let v = u32::from_str_radix(&ahead, 16).unwrap();
                        out.push(char::from_u32(v).unwrap_or('\u{FFFD}'));
                        for _ in 0..width {
                            chars.next();
                        }
                    } else {
                        out.push(e);
                    }
                }
                other => out.push(other),
            }
        }
        out
    }

    #[test]
    fn escapes_worked_by_hand() {
        // `\\n\` + LF: the second step matches from the second `\`, leaving `\` + LF, a continuation
        assert_eq!(unescape_js("a\\\\n\\\nb"), "ab");
        // an escaped backslash, then n: a backslash and an n
        assert_eq!(unescape_js("\\\\n"), "\\n");
        // CR LF inside the join, a lone CR kept, a `\` + CR LF continuation
        assert_eq!(unescape_js("x\\n\\\r\ny\rz\\\r\nw"), "x\ny\rzw");
        // `\u` cut by a join: not hex, so `u`, then the join's LF
        assert_eq!(unescape_js("\\u1\\n\\\n"), "u1\n");
        // a dangling `\` goes; `\\` at the end leaves one `\` (nothing after it)
        assert_eq!(unescape_js("ab\\"), "ab");
        assert_eq!(unescape_js("ab\\\\"), "ab\\");
        assert_eq!(unescape_js("\\u00e9\\x41\\é"), "éAé");
        assert_eq!(unescape_js("\\ud800"), "\u{FFFD}");
    }

    #[test]
    fn one_pass_matches_the_steps() {
        let alphabet = ['\\', '\\', '\\', 'n', '\n', '\r', 'u', 'x', '0', 'A', 'f', '"', 'é', ' '];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15; // fixed seed: the same strings every run
        for _ in 0..20000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 12) as usize;
            let mut x = state;
            let text: String = (0..len).map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                alphabet[(x >> 33) as usize % alphabet.len()]
            }).collect();
            assert_eq!(unescape_js(&text), unescape_by_steps(&text), "{text:?}");
        }
    }

    #[test]
    fn js_string_from_bytes_only_when_decoding_changes_nothing() {
        assert_eq!(js_string_utf8(b"\\\nx\\n\\\ny\";"), Some(("x\ny".to_string(), true, true)));
        assert_eq!(js_string_utf8("é\\\"".as_bytes()), Some(("é\"".to_string(), false, false)));
        assert_eq!(js_string_utf8(b"a\r\nb\""), None);
        assert_eq!(js_string_utf8(b"a\0b\""), None);
        assert_eq!(js_string_utf8(b"a\xffb\""), None);
    }

    #[test]
    fn js_string_ends_at_the_first_unescaped_quote() {
        assert_eq!(js_string("a\\\"b\"rest"), ("a\"b".to_string(), true));
        assert_eq!(js_string("a\\\\\"rest"), ("a\\".to_string(), true));
        assert_eq!(js_string("open \\\" only"), ("open \" only".to_string(), false));
        assert_eq!(closing_quote("\"x"), Some(0));
    }

    #[test]
    fn script_end_any_case_and_spaces() {
        let buf = b"<idle>-0 </scrip </ script> </SCRIPT \n >tail</script>";
        assert_eq!(find_script_end(buf, 0), Some((28, 40)));  // (checked against the reader's former regex)
        assert_eq!(find_script_end(buf, 29), Some((44, 53)));
        assert_eq!(find_script_end(b"</script         >", 0), None); // nine spaces: more than eight
        assert_eq!(find_script_end(b"</script>", 1), None);
        let long = [vec![b'a'; 100], b"</sCript>".to_vec()].concat();
        assert_eq!(find_script_end(&long, 3), Some((100, 109)));
        assert_eq!(count_newlines(b"a\nb\n\nc"), 3);
    }

    #[test]
    fn find_literal_agrees_with_a_plain_search() {
        // every place and length around the 32-byte blocks, against the standard library's substring search
        let hay: String = (0..200).map(|i| if i % 37 == 5 || i % 11 == 0 { 'a' } else { 'x' }).collect();
        for n in 1..6 {
            for start in 0..hay.len() - n {
                let needle = &hay[start..start + n];
                assert_eq!(find_literal(hay.as_bytes(), needle.as_bytes()), hay.find(needle), "{needle:?}");
            }
        }
        assert_eq!(find_literal(b"sched_wakeup: x", b" sched_waking: "), None);
        assert_eq!(find_literal(b"ab", b"abc"), None);
        let mut long = vec![b'.'; 1000];
        long[990..].copy_from_slice(b"linuxPerfD");
        assert_eq!(find_literal(&long, b"linuxPerfD"), Some(990));
        assert_eq!(find_literal(&long, b"linuxPerfDa"), None);
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
