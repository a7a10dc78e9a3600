"""The native thread-dump scan (native/src/dump.rs) under io.anr: indented runs sorted into frames, attribute lines,
lock lines and unrecognised lines; top-level lines the reader would ignore dropped; frames kept as one text until a
caller needs them as lines. Facts are checked by counting lines of the text independently."""
from __future__ import annotations

from pathlib import Path

from droidlag._native import dump_run_lines, dump_scan
from droidlag.io.anr import _header_line, decode, parse_dump, read_anr
from droidlag.models.dumps import AnrHeader

TEXT = """----- pid 10 at 2020-01-01 10:00:00 -----
Cmd line: com.example
Total number of allocations 123
MarkingPhase:\tSum: 1.2ms 99% C.I. 1us-2us Avg: 1us Max: 2us

"main" prio=5 tid=1 Blocked
  | group="main" sCount=1 obj=0x72
  | sysTid=10 nice=0
  at a.B.c(B.java:1)
  - waiting to lock <0x1> (a java.lang.Object) held by thread 2

  native: #00 pc 00001 /system/lib64/libc.so (syscall+28)
  something odd
  (no managed stack frames)
"t2" prio=5 tid=2 Runnable
  at a.B.d(B.java:2)
  - locked <0x1> (a java.lang.Object)
----- end 10 -----
"""


def test_scan_sorts_a_thread_stack_by_hand():
    items = dump_scan(TEXT, 100)
    tops = [(it[0], it[1]) for it in items if len(it) in (2, 3)]
    # the GC and allocation summary lines are dropped: the reader ignores them in any state
    assert tops == [(101, "----- pid 10 at 2020-01-01 10:00:00 -----"), (102, "Cmd line: com.example"),
                    (106, '"main" prio=5 tid=1 Blocked'), (115, '"t2" prio=5 tid=2 Runnable'),
                    (118, "----- end 10 -----")]
    header = next(it for it in items if len(it) == 3 and it[0] == 106)[2]
    assert header == ("main", False, 5, 1, None, "Blocked")
    run = next(it for it in items if len(it) == 9 and it[0] == 107)
    first, frames, nframes, attrs, locks, unknown, first_unknown, start, end = run
    assert frames == "at a.B.c(B.java:1)\nnative: #00 pc 00001 /system/lib64/libc.so (syscall+28)" and nframes == 2
    assert attrs == ['| group="main" sCount=1 obj=0x72', "| sysTid=10 nice=0"]
    assert locks == [("- waiting to lock <0x1> (a java.lang.Object) held by thread 2", 1, 110)]
    assert (unknown, first_unknown) == (1, 113)
    raw = dump_run_lines(TEXT, start, end)
    assert raw[0] == '  | group="main" sCount=1 obj=0x72' and raw[-1] == "  (no managed stack frames)" and len(raw) == 7


def test_parsed_threads_from_the_scan():
    unit = parse_dump(TEXT, "x")
    main, t2 = unit.processes[0].threads
    assert main.raw_frames == ["at a.B.c(B.java:1)", "native: #00 pc 00001 /system/lib64/libc.so (syscall+28)"]
    assert [(lk.action, lk.addr, lk.held_by, lk.frame_index, lk.line) for lk in main.locks] == [
        ("waiting to lock", "0x1", 2, 0, 10)]
    assert main.sys_tid == 10 and main.obj == "0x72"
    assert [(lk.action, lk.frame_index) for lk in t2.locks] == [("locked", 0)]
    assert any("1 unrecognised line" in w.message and w.line == 13 for w in unit.warnings)


def test_frames_stay_one_text_until_used():
    t = parse_dump(TEXT, "x").processes[0].threads[1]
    assert t._frames_text == "at a.B.d(B.java:2)" and t.has_frames()
    assert "B.java:2" in t.frames_text() and t._frames_text is not None   # a word search does not split
    assert t.raw_frames == ["at a.B.d(B.java:2)"] and t._frames_text is None
    t.raw_frames.append("at a.B.e(B.java:3)")   # once split, the list is the frames
    assert t.frames_text() == "at a.B.d(B.java:2)\nat a.B.e(B.java:3)" and len(t.frames) == 2


def _dump_files(corpus: Path) -> list[Path]:
    out = [p for p in sorted((corpus / "anr").glob("*.txt")) if b"\n\"main\" prio=" in p.read_bytes()]
    assert len(out) >= 10
    return out


def test_dropped_lines_are_ones_the_reader_ignores(corpus: Path):
    """Every top-level line the scan drops, found by splitting the text in Python, is one the reader's header rules
    ignore (tried on an empty header) and no other line kind of the reader opens it: a thread header, a dash line,
    the xCrash `+++` end, a process line (`sysTid=`, `Cmd line:`, `ABI:`, `Build fingerprint:`), an unindented
    frame."""
    dropped = 0
    for p in _dump_files(corpus):
        text = decode(p.read_bytes(), str(p), [])
        kept = {it[0] for it in dump_scan(text, 0) if len(it) in (2, 3)}
        for no, line in enumerate(text.split("\n"), start=1):
            if not line or line[0] in " \t" or no in kept:
                continue
            dropped += 1
            assert line[0] not in '"-+', (p, no, line)
            assert not line.startswith(("sysTid=", "Cmd line: ", "ABI: ", "Build fingerprint: ", "at ")), (p, no)
            assert not _header_line(AnrHeader(), line), (p, no, line)
    assert dropped > 1000   # the corpus dumps' GC summaries: a test that dropped nothing would prove nothing


def test_thread_and_frame_counts_match_the_text(corpus: Path):
    """Threads and frames of the runtime dumps counted by substring: a thread per line opening with a quote and
    naming prio= or sysTid=, a frame per indented line under a thread header whose stripped text opens with an ART
    frame's form (`at `, `native: #NN`, old `#NN pc`, `kernel:`). Files where a frame line follows another top-level
    line (a wrapped line, a damaged copy) are left to the salvage tests."""
    checked = 0
    for p in _dump_files(corpus):
        text = decode(p.read_bytes(), str(p), [])
        headers = frames = damaged = 0
        top = ""
        for ln in text.split("\n"):
            if ln[:1] not in (" ", "\t"):
                top = ln or top
                headers += ln.startswith('"') and ('" prio=' in ln or '" daemon prio=' in ln or '" sysTid=' in ln)
            elif ln.lstrip().startswith(("at ", "native: #", "#", "kernel:")):
                frames += top.startswith('"')
                damaged += not top.startswith('"')
        units = read_anr(p)
        threads = [t for u in units for q in u.processes for t in q.threads if q.kind != "wchan"]
        assert len(threads) == headers, p.name
        if not damaged:
            assert sum(len(t.raw_frames) for t in threads) == frames, p.name
            checked += 1
    assert checked >= 25
