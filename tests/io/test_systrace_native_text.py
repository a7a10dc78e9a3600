"""The native passes over a systrace's non-ftrace text (PROCESS DUMP rows, JavaScript unescaping), checked against
routes that share nothing with them: regular expressions over the raw text, and the escaping grammar written out as
a regex substitution."""
from __future__ import annotations

import random
import re

from conftest import corpus_file
from droidlag._native import process_dump, unescape_js
from droidlag.io import read_trace

HTML_2012 = "systrace/catapult_android_systrace_2012_sched.html"

# A systrace report's PROCESS DUMP block, hand-made (no usable corpus capture has one) in the form catapult's
# android_process_data_agent writes: `PROCESS DUMP`, then a snapshot when tracing starts and another when it stops,
# each `ps -A -o USER,PID,PPID,VSIZE,RSS,WCHAN,ADDR=PC,S,NAME,COMM` followed by `ps -AT -o USER,PID,TID,CMD` (column
# titles as Perfetto's traceconv writes them). What real listings hold: kernel threads in brackets, a running task
# with a blank WCHAN, a process whose NAME (argv[0]) differs from its COMM, thread names with spaces, a process that
# ends (7301, `sh`) and one that starts (7302, `dumpsys`) between the snapshots.
_PS = "USER           PID  PPID     VSZ    RSS WCHAN            PC S NAME                        COMM\n"
_PS_T = "USER           PID   TID CMD\n"
_START = (
    _PS +
    "root             1     0 10943420  4360 do_epoll_wait      0 S init                        init\n"
    "root             2     0       0      0 kthreadd           0 S [kthreadd]                  [kthreadd]\n"
    "root             3     2       0      0 rescuer_thread     0 I [rcu_gp]                    [rcu_gp]\n"
    "root           700     1 14859068 98320 do_sys_poll        0 S zygote64                    main\n"
    "system        1290   700 18403512 301452 do_epoll_wait     0 S system_server               system_server\n"
    "u0_a88        4100   700 15210496 101232 do_epoll_wait     0 S com.example.feed            om.example.feed\n"
    "shell         7301  7290 10803300  3016 do_wait            0 S sh                          sh\n"
    "shell         7310  7301 10829948  3560                    0 R ps                          ps\n"
    + _PS_T +
    "root             1     1 init\n"
    "root             2     2 kthreadd\n"
    "root             3     3 rcu_gp\n"
    "root           700   700 main\n"
    "system        1290  1290 system_server\n"
    "system        1290  1302 Binder:1290_1\n"
    "system        1290  1350 android.display\n"
    "u0_a88        4100  4100 om.example.feed\n"
    "u0_a88        4100  4109 Jit thread pool\n"
    "u0_a88        4100  4115 RenderThread\n"
    "u0_a88        4100  4118 HeapTaskDaemon\n"
    "shell         7301  7301 sh\n"
    "shell         7310  7310 ps\n")
_STOP = (
    _PS +
    "root             1     0 10943420  4360 do_epoll_wait      0 S init                        init\n"
    "u0_a88        4100   700 15210496 104880 do_epoll_wait     0 S com.example.feed            om.example.feed\n"
    "shell         7302  7290 10812640  4100 binder_ioctl_write_read 0 S dumpsys           dumpsys\n"
    "shell         7311  7290 10829948  3544                    0 R ps                          ps\n"
    + _PS_T +
    "root             1     1 init\n"
    "u0_a88        4100  4100 om.example.feed\n"
    "u0_a88        4100  4115 RenderThread\n"
    "u0_a88        4100  4131 OkHttp Dispatcher\n"
    "shell         7302  7302 dumpsys\n"
    "shell         7302  7305 HwBinder:7302_1\n"
    "shell         7311  7311 ps\n")
PROCESS_DUMP = "PROCESS DUMP\n" + _START + _STOP


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


def test_process_dump_rows_are_the_listings_rows():
    threads, processes = _listings(PROCESS_DUMP)
    assert (len(threads), len(processes)) == (13 + 7, 8 + 4)         # counted by hand in the two snapshots
    rows = process_dump(PROCESS_DUMP)
    got_threads = [(pid, tid, " ".join((name or "").split())) for kind, pid, tid, name in rows if kind == 0]
    assert got_threads == [(pid, tid, " ".join(cmd.split())) for pid, tid, cmd in threads]
    assert [(pid, ppid) for kind, pid, ppid, _ in rows if kind == 1] == processes
    names = {pid: name for kind, pid, _, name in rows if kind == 1}
    # hand-read from the listing: kernel threads lose their brackets, a blank WCHAN does not shift the name, NAME
    # (not the 15-character COMM) names an app
    assert names[1] == "init" and names[2] == "kthreadd" and names[3] == "rcu_gp"
    assert names[7310] == "ps" and names[7311] == "ps" and names[700] == "zygote64"
    assert names[4100] == "com.example.feed" and names[7302] == "dumpsys"
    assert ("Jit thread pool" in {name for kind, _, _, name in rows if kind == 0})


# ftrace lines without a TGID column (as most systrace captures print them) from threads of both snapshots
_FTRACE_NO_TGID = (
    "# tracer: nop\n#\n# entries-in-buffer/entries-written: 6/6   #P:4\n#\n"
    "#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION\n#              | |       |   ||||       |         |\n"
    " om.example.feed-4100  [001] ...1   900.000100: tracing_mark_write: B|4100|Choreographer#doFrame\n"
    "    RenderThread-4115  [002] d..2   900.002000: sched_switch: prev_comm=RenderThread prev_pid=4115 "
    "prev_prio=110 prev_state=S ==> next_comm=HeapTaskDaemon next_pid=4118 next_prio=124\n"
    "   Binder:1290_1-1302  [000] d..2   900.003000: sched_switch: prev_comm=Binder:1290_1 prev_pid=1302 "
    "prev_prio=120 prev_state=S ==> next_comm=HwBinder:7302_1 next_pid=7305 next_prio=120\n"
    " OkHttp Dispatcher-4131 [003] d..2   900.004000: sched_switch: prev_comm=OkHttp Dispatcher prev_pid=4131 "
    "prev_prio=120 prev_state=S ==> next_comm=android.display next_pid=1350 next_prio=112\n"
    " om.example.feed-4100  [001] ...1   900.005100: tracing_mark_write: E|4100\n"
    "  Jit thread pool-4109 [001] d..2   900.006000: sched_switch: prev_comm=Jit thread pool prev_pid=4109 "
    "prev_prio=129 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n")


def test_process_dump_maps_every_listed_thread_in_the_trace(tmp_path):
    blocks = (PROCESS_DUMP, _FTRACE_NO_TGID, '{"traceEvents": []}\n')
    page = "<!DOCTYPE html>\n<html>\n<body>\n" + "".join(
        f'  <script class="trace-data" type="application/text">\n{b}  </script>\n' for b in blocks) + "</body></html>\n"
    path = tmp_path / "dump.html"
    path.write_text(page)
    threads, processes = _listings(PROCESS_DUMP)
    trace = read_trace(path)
    assert all(trace.process_of(tid) == pid for pid, tid, _ in threads)
    assert {pid for pid, _ in processes} <= set(trace.processes)
    assert all(trace.processes[pid].ppid == ppid for pid, ppid in processes)
    # the threads that switch in the ftrace block, by hand: each in the process its listing row names
    assert [trace.process_of(t) for t in (4115, 4118, 1302, 7305, 4131, 1350, 4109)] == \
        [4100, 4100, 1290, 7302, 4100, 1290, 4100]


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
