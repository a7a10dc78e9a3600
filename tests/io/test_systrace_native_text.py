"""The native passes over a systrace's non-ftrace text (PROCESS DUMP rows, JavaScript unescaping), checked against
routes that share nothing with them: regular expressions over the raw file, and the escaping grammar written out as
a regex substitution."""
from __future__ import annotations

import gzip
import random
import re

from conftest import corpus_file
from droidlag._native import process_dump, unescape_js
from droidlag.io import read_trace

LIST_JANK = "traces/systrace_meizu_flyme_2019_list_jank.dataonly.html.gz"
HTML_2012 = "systrace/catapult_android_systrace_2012_sched.html"


def _listings(text: str) -> tuple[list[tuple[int, int, str]], list[tuple[int, int]]]:
    """`ps -T` rows (pid, tid, cmd) and `ps` rows (pid, ppid) of every listing in the raw text, by regex: a listing
    runs from its USER header to the first line that is not a row (a blank line or the end of the block)."""
    threads: list[tuple[int, int, str]] = []
    processes: list[tuple[int, int]] = []
    for header in re.finditer(r"^USER +PID +(TID|PPID)\b.*$", text, re.MULTILINE):
        body = text[header.end() + 1:]
        for line in body.split("\n"):
            m = re.match(r"^\S+ +(\d+) +(\d+)(?: +(.*?))? *$", line)
            if m is None:
                break
            if header.group(1) == "TID":
                threads.append((int(m.group(1)), int(m.group(2)), m.group(3) or ""))
            else:
                processes.append((int(m.group(1)), int(m.group(2))))
    return threads, processes


def _dump_block(text: str) -> str:
    start = text.index("PROCESS DUMP")
    return text[start:text.index("</script>", start)]


def test_process_dump_rows_are_the_listings_rows(corpus):
    text = gzip.decompress(corpus_file(corpus, LIST_JANK).read_bytes()).decode("utf-8", "replace")
    dump = _dump_block(text)
    threads, processes = _listings(dump)
    assert len(threads) > 5000 and len(processes) > 1000
    rows = process_dump(dump)
    got_threads = [(pid, tid, " ".join((name or "").split())) for kind, pid, tid, name in rows if kind == 0]
    assert got_threads == [(pid, tid, " ".join(cmd.split())) for pid, tid, cmd in threads]
    assert [(pid, ppid) for kind, pid, ppid, _ in rows if kind == 1] == processes
    names = {pid: name for kind, pid, _, name in rows if kind == 1}
    # hand-read from the listing: kernel threads lose their brackets, a blank WCHAN does not shift the name
    assert names[1] == "init" and names[2] == "kthreadd" and names[3] == "rcu_gp"
    assert names[24874] == "sample.tencent.matrix"


def test_process_dump_maps_every_listed_thread_in_the_trace(corpus):
    path = corpus_file(corpus, LIST_JANK)
    text = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
    threads, processes = _listings(_dump_block(text))
    trace = read_trace(path)
    assert all(trace.process_of(tid) == pid for pid, tid, _ in threads)
    assert {pid for pid, _ in processes} <= set(trace.processes)
    assert all(trace.processes[pid].ppid == ppid for pid, ppid in processes)


def test_process_dump_skips_what_is_not_a_row():
    text = ("stray 1 2 3\nUSER PID TID CMD\nroot 10 11 main thread\nroot x 3 a\nroot 4\n"
            "root 99999999999999999999 5 big\nUSER PID PPID VSZ RSS WCHAN ADDR S NAME\n"
            "root 2 0 0 0 kthreadd 0 S [kthreadd]\nu0_a1 7 1 1 1 0 0 R app name\n")
    assert process_dump(text) == [(0, 10, 11, "main thread"), (1, 2, 0, "kthreadd"), (1, 7, 1, "app name")]


# The escaping grammar of the legacy report, written as one regex substitution (the route the native pass replaced).
_ESCAPE = re.compile(r"\\(\n|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)", re.DOTALL)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "\n": "", "\\": "\\", '"': '"', "'": "'", "/": "/", "0": "\0"}


def _reference(s: str) -> str:
    s = s.replace("\r\n", "\n").replace("\\n\\\n", "\n")
    if s.endswith("\\"):
        s = s[:-1]

    def one(m: re.Match) -> str:
        c = m.group(1)
        if c in _SIMPLE:
            return _SIMPLE[c]
        return chr(int(c[1:], 16)) if c[0] in "ux" and len(c) > 1 else c
    return _ESCAPE.sub(one, s)


def test_unescape_matches_the_grammar_on_random_strings():
    rng = random.Random(13)
    alphabet = ["\\", "n", "\n", "\r", "u", "x", "0", "A", "f", '"', "'", "t", "é", "/", "z", "1", "\\n\\\n"]
    for _ in range(20_000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
        expected = _reference(s)
        if any(0xD800 <= ord(c) <= 0xDFFF for c in expected):
            continue      # a lone surrogate: the native pass writes U+FFFD (checked below)
        assert unescape_js(s) == expected, repr(s)
    assert unescape_js("a\\ud800b") == "a\ufffdb"


def test_unescape_of_the_2012_report_keeps_every_line(corpus):
    text = corpus_file(corpus, HTML_2012).read_bytes().decode("utf-8")
    start = text.index('linuxPerfData = "') + len('linuxPerfData = "')
    body = text[start:text.index('\\n";', start) + 2]
    out = unescape_js(body)
    # one output line per `\n\` continuation of the file, and the escaped quotes of the text come out plain
    assert out.count("\n") == body.count("\\n\\\n") + 1
    assert out.count('"') == body.count('\\"') and "\\" not in out.replace("\\\\", "")


# ---- the block scan (candidates found by plain search, confirmed by the markers' regexes) ----------------------
_FTRACE = "# tracer: nop\n          <idle>-0     [000] d..2   100.000000: sched_switch: prev_comm=swapper/0 " \
          "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=5 next_prio=120\n"


def _scan(page: str) -> tuple[str, list[str]] | None:
    import io

    from droidlag.io.systrace_html import stream_html_sections
    found = stream_html_sections(io.BytesIO(page.encode()), "mem.html", [], chunk=1 << 20)
    return None if found is None else (found[0], [s.kind for s in found[1]])


def test_block_end_is_found_in_any_case_after_decoys():
    page = ('<html><script class="trace-data">\n' + _FTRACE + "a </b> </scrip> </script-x>\n" + "</SCRIPT  >"
            + "<p>after</p>")
    kind, sections = _scan(page)
    assert kind == "html" and sections == ["ftrace"]


def test_both_marker_kinds_are_found_in_either_order():
    # the legacy marker is looked for only before the next tag: one after a tag must still be found, in its turn
    legacy_js = 'var linuxPerfData = "\\\n' + _FTRACE.replace("\n", "\\n\\\n") + '";\n'
    tag = '<script class="trace-data">\n' + _FTRACE + "</script>\n"
    assert _scan("<html><script>" + legacy_js + "</script>" + tag) == ("html", ["ftrace", "ftrace"])
    assert _scan("<html>" + tag + "<script>" + legacy_js + "</script>") == ("html", ["ftrace", "ftrace"])
    assert _scan("<html><script>" + legacy_js + "</script>") == ("html-legacy", ["ftrace"])
    assert _scan("<html><p>no trace here</p></html>") is None
