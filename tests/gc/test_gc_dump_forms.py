"""ART process dumps in two forms a new-user trial found read as nothing: a dump pasted without its `----- pid N at
TIME -----` header (it starts at `Cmd line:`, or at `Heap:`), and a dump an app printed through logcat (System.out:
every entry behind a logcat prefix, the lines of one entry indented below it). The dumps are written by hand on ART's
format (Heap::DumpGcPerformanceInfo, Runtime::DumpForSigQuit, Thread::Dump) with made-up figures, which are worked out
by hand in the comments."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from droidlag.cli import main
from droidlag.findings.narrative import gc_sentence
from droidlag.gc.device import summarize_gc_dumps
from droidlag.gc.evidence import hang_gc_from_dump
from droidlag.io import art_gc_log
from droidlag.io.art_gc_log import read_device_gc, read_gc_dumps_text
from droidlag.models.gc import ArtGcDump

KB, MB = 1024, 1024**2
PID = 4321

# What ART prints after the `----- pid` header (the header, and the `----- end` line after the threads, are added
# per test). Two collectors: 3 concurrent copying runs and 5 young ones, 8 in all.
HEAD = [
    "Cmd line: com.example.notes",
    "Build fingerprint: 'example/notes/notes:10/QQ1A.200105.002/6000000:user/release-keys'",
    "ABI: 'arm64'",
    "Build type: optimized",
    "Zygote loaded classes=9000 post zygote classes=400",
    "Intern table: 40000 strong; 500 weak",
    "JNI: CheckJNI is off; globals=600 (plus 40 weak)",
    "Libraries: libandroid.so libjavacore.so libopenjdk.so (3)",
]
GC_SECTION = [
    "Heap: 25% free, 12MB/16MB; 210000 objects",
    "Dumping cumulative Gc timings",
    "Start Dumping histograms for 3 iterations for concurrent copying",
    "ProcessMarkStack:\tSum: 30.500ms 99% C.I. 2ms-20ms Avg: 10.166ms Max: 20ms",
    "(Paused)FlipCallback:\tSum: 600us 99% C.I. 150us-300us Avg: 200us Max: 300us",
    "Done Dumping histograms",
    "concurrent copying paused:\tSum: 1.200ms 99% C.I. 200us-500us Avg: 400us Max: 500us",
    "concurrent copying total time: 45.300ms mean time: 15.100ms",
    "concurrent copying freed: 120000 objects with total size 9MB",
    "concurrent copying throughput: 2.6e+06/s / 198MB/s",
    "Start Dumping histograms for 5 iterations for young concurrent copying",
    "ProcessMarkStack:\tSum: 12ms 99% C.I. 1ms-4ms Avg: 2.400ms Max: 4ms",
    "Done Dumping histograms",
    "young concurrent copying paused:\tSum: 900us 99% C.I. 100us-250us Avg: 180us Max: 250us",
    "young concurrent copying total time: 20.700ms mean time: 4.140ms",
    "young concurrent copying freed: 80000 objects with total size 5632KB",
    "Total time spent in GC: 66ms",
    "Mean GC size throughput: 219MB/s",
    "Total number of allocations 400000",
    "Total bytes allocated 30MB",
    "Total bytes freed 14848KB",
    "Free memory 4MB",
    "Free memory until GC 4MB",
    "Free memory until OOME 500MB",
    "Total memory 16MB",
    "Max memory 512MB",
    "Zygote space size 3MB",
    "Total mutator paused time: 2.100ms",
    "Total time waiting for GC to complete: 3.500ms",
    "Total GC count: 8",
    "Total GC time: 66ms",
    "Total blocking GC count: 2",
    "Total blocking GC time: 12.400ms",
    "Histogram of GC count per 10000 ms: 0:5,1:2",
    "Histogram of blocking GC count per 10000 ms: 0:7",
    "Start Dumping histograms for 4 iterations for JIT timings",
    "Compiling:\tSum: 10ms 99% C.I. 1ms-4ms Avg: 2.500ms Max: 4ms",
    "Done Dumping histograms",
    "",
    "suspend all histogram:\tSum: 300us 99% C.I. 1us-50us Avg: 10us Max: 50us",
]
THREADS = [
    "DALVIK THREADS (2):",
    '"main" prio=5 tid=1 WaitingForGcToComplete',
    '  | group="main" sCount=1 dsCount=0 flags=1 obj=0x71d9a000 self=0x7a1c010800',
    f"  | sysTid={PID} nice=-10 cgrp=top-app sched=0/0 handle=0x7aa2e1fed0",
    "  | state=S schedstat=( 900000000 100000000 500 ) utm=80 stm=10 core=2 HZ=100",
    "  | stack=0x7fe0000000-0x7fe0002000 stackSize=8192KB",
    "  | held mutexes=",
    "  at java.util.ArrayList.add(ArrayList.java:467)",
    "  at com.example.notes.NoteList.load(NoteList.java:88)",
    "",
    '"HeapTaskDaemon" daemon prio=5 tid=7 WaitingForTaskProcessor',
    '  | group="system" sCount=1 dsCount=0 flags=1 obj=0x13000000 self=0x7a1c0a0000',
    "  | sysTid=4330 nice=4 cgrp=bg_non_interactive sched=0/0 handle=0x7a0f3fed50",
    "  | state=S schedstat=( 250000000 30000000 120 ) utm=20 stm=5 core=3 HZ=100",
    "  | stack=0x7a0f2fc000-0x7a0f2fe000 stackSize=1039KB",
    "  | held mutexes=",
    "  at java.lang.Object.wait(Native method)",
    "",
]
HEADER = f"----- pid {PID} at 2024-03-04 10:15:30 -----"
END = f"----- end {PID} -----"


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def _assert_totals(d: ArtGcDump) -> None:
    """The GC part of the dump above, by hand."""
    assert d.process == "com.example.notes"
    assert d.gc_count == 8 and d.gc_time_ns == 66_000_000              # 45.3 ms + 20.7 ms
    assert (d.blocking_gc_count, d.blocking_gc_time_ns) == (2, 12_400_000)
    assert d.wait_for_gc_ns == 3_500_000
    assert d.mutator_paused_ns == 2_100_000                              # 1.2 ms + 0.9 ms
    assert (d.heap_free_percent, d.heap_used_bytes, d.heap_total_bytes) == (25, 12 * MB, 16 * MB)
    assert d.max_memory_bytes == 512 * MB
    assert (d.bytes_allocated, d.bytes_freed) == (30 * MB, 14848 * KB)   # 9 MB + 5632 KB = 14848 KB
    cc = {c.name: c for c in d.collectors}
    assert set(cc) == {"concurrent copying", "young concurrent copying"}   # JIT timings is no collector
    full, young = cc["concurrent copying"], cc["young concurrent copying"]
    assert (full.iterations, full.paused_ns, full.paused_max_ns, full.total_ns) == (3, 1_200_000, 500_000,
                                                                                    45_300_000)
    assert (full.freed_objects, full.freed_bytes) == (120_000, 9 * MB)
    assert (young.iterations, young.paused_ns, young.paused_max_ns, young.total_ns) == (5, 900_000, 250_000,
                                                                                        20_700_000)
    assert (young.freed_objects, young.freed_bytes) == (80_000, 5632 * KB)
    assert d.heap_task_daemon_cpu_ns == 250_000_000                      # HeapTaskDaemon's schedstat run time
    assert d.threads_waiting_for_gc == [("main", True, "WaitingForGcToComplete")]


# --- a dump pasted without its `----- pid` header ------------------------------------------------------------------

def test_a_dump_without_its_header_is_read_with_pid_and_time_unknown(tmp_path: Path):
    text = _text(HEAD + GC_SECTION + THREADS)
    warnings: list = []
    dumps = read_gc_dumps_text(text, "pasted.txt", warnings)
    assert len(dumps) == 1
    d = dumps[0]
    _assert_totals(d)
    assert (d.pid, d.time, d.line) == (None, None, 1)   # nothing invented: not main's sysTid, no time
    assert len(warnings) == 1 and warnings[0].line == 1
    assert "----- pid" in warnings[0].message and "unknown" in warnings[0].message
    p = tmp_path / "anr.txt"   # the file reader hands the warning on with the log's
    p.write_text(text)
    log, dumps = read_device_gc(p)
    assert [d.gc_count for d in dumps] == [8] and [w.line for w in log.warnings] == [1]


def test_a_dump_pasted_from_its_heap_line_on():
    """No `Cmd line:` either: the process is unknown too; prose before the paste is not part of it."""
    text = _text(["The ANR trace showed this:", ""] + GC_SECTION[:-2])
    warnings: list = []
    (d,) = read_gc_dumps_text(text, "blog.md", warnings)
    assert (d.pid, d.process, d.gc_count, d.gc_time_ns) == (None, None, 8, 66_000_000)
    assert (d.heap_used_bytes, d.max_memory_bytes) == (12 * MB, 512 * MB)
    assert [c.iterations for c in d.collectors] == [3, 5]
    assert d.line == 3 and [w.line for w in warnings] == [3]   # from its Heap line


def test_the_headed_form_is_unchanged_beside_a_headless_one():
    """A headed dump reads as before (pid, time, no warning); a headless one after its `----- end` is a second dump,
    not merged into the first nor taken for the same process."""
    headed = [HEADER] + HEAD + GC_SECTION + THREADS + [END, ""]
    text = _text(headed + HEAD + GC_SECTION[:-2])
    warnings: list = []
    a, b = read_gc_dumps_text(text, "two.txt", warnings)
    _assert_totals(a)
    assert (a.pid, a.time, a.line) == (PID, "2024-03-04 10:15:30", 1)
    assert (b.pid, b.time, b.line) == (None, None, len(headed) + 1)
    assert b.gc_count == 8 and b.threads_waiting_for_gc == []
    assert [w.line for w in warnings] == [len(headed) + 1]   # only the headless one is warned about
    report = summarize_gc_dumps([a, b], "two.txt")
    assert report.dumps == 2 and sorted(p.pid or 0 for p in report.processes) == [0, PID]
    # the headed dump alone: no warning, as before
    only: list = []
    assert [d.pid for d in read_gc_dumps_text(_text(headed), "one.txt", only)] == [PID] and not only


def test_no_pid_dump_is_never_matched_to_a_hang():
    blocked = ArtGcDump("x", 1, pid=None, blocking_gc_count=2,
                        threads_waiting_for_gc=[("main", True, "WaitingForGcToComplete")])
    assert hang_gc_from_dump([blocked], None, None, "main", True) is None   # no pid is no match, not None == None
    text = _text(HEAD + GC_SECTION + THREADS)
    (d,) = read_gc_dumps_text(text, "pasted.txt")
    assert d.pid is None and d.blocking_gc_count == 2   # would be evidence, were it matched
    # a hang without a pid (None == None must not match), and one with main's sysTid as its pid
    assert hang_gc_from_dump([d], None, None, "main", True) is None
    assert hang_gc_from_dump([d], PID, None, "main", True) is None


def test_analyze_shows_the_headless_dump_without_giving_its_gc_to_the_hang(tmp_path: Path):
    from droidlag.findings import analyze
    from droidlag.report.findings_json import findings_dict

    p = tmp_path / "anr_pasted.txt"
    p.write_text(_text(HEAD + GC_SECTION + THREADS))
    f = analyze([p])
    d = findings_dict(f)
    (report,) = [r for r in d["gc"] if r["kind"] == "dump"]
    (proc,) = report["processes"]
    assert proc["pid"] is None and proc["pid_unknown"] is True and proc["collections"] == 8
    assert any("without" in n and "pid" in n for n in report["notes"])
    assert any("----- pid" in w for w in d["warnings"])
    for ev in f.hangs.events if f.hangs else []:
        assert "gc_in_dump" not in ev.evidence


# --- a dump printed through logcat ----------------------------------------------------------------------------------

def _dump_lines() -> list[str]:
    return [HEADER] + HEAD + GC_SECTION + THREADS + [END]


def _brief_with_continuations(lines: list[str], per_entry: int = 4) -> tuple[str, int]:
    """As an app's System.out prints reach a brief logcat view: each entry's first line behind `I/System.out: `, the
    entry's other lines indented by four blanks; a line of another tag between two entries. (text, header's line)."""
    out = ["I/ActivityManager: Start proc 4321:com.example.notes/u0a123 for activity"]
    for k in range(0, len(lines), per_entry):
        chunk = lines[k:k + per_entry]
        out.append("I/System.out: " + chunk[0])
        out += ["    " + ln for ln in chunk[1:]]
        if k == 8:
            out.append("W/Choreographer: Skipped 31 frames!  The application may be doing too much work")
    return _text(out), 2


def _every_line(prefix: str, lines: list[str]) -> tuple[str, int]:
    """As `adb logcat` prints them: every line its own entry behind `prefix`, with other writers' entries between
    (another tag; System.out of another pid, same tag: were its `Total GC time: 9s` taken in, the dump's first total
    after its Heap line would be 9 s, not 66 ms)."""
    out = ["03-04 10:15:29.900  1000  1020 I ActivityManager: dumping stack traces"]
    for k, ln in enumerate(lines):
        out.append(prefix + ln)
        if k % 10 == 5:
            out.append("03-04 10:15:30.101  1000  1020 W ActivityManager: Slow operation: 61ms")
            out.append("03-04 10:15:30.102  5555  5555 I System.out: Total GC time: 9s")
    return _text(out), 2


FORMS = {
    "brief, continuation lines indented": lambda: _brief_with_continuations(_dump_lines()),
    "threadtime": lambda: _every_line(f"03-04 10:15:30.100  {PID}  {PID} I System.out: ", _dump_lines()),
    "brief with pid": lambda: _every_line(f"I/System.out({PID}): ", _dump_lines()),
    "Android Studio": lambda: _every_line(f"2024-03-04 10:15:30.100 {PID}-{PID}/com.example.notes I/System.out: ",
                                          _dump_lines()),
    "time": lambda: _every_line(f"03-04 10:15:30.100 I/System.out({PID:5d}): ", _dump_lines()),
    "brief, in a markdown quote": lambda: _every_line(f"> I/System.out({PID:5d}): ", _dump_lines()),
    "Android Studio (columns)": lambda: _every_line(
        f"2024-03-04 10:15:30.100  {PID}-{PID}  System.out              com.example.notes                    I  ",
        _dump_lines()),
    "process (the tag after the message)": lambda: (_text(  # `-v process`: `I( pid) message  (tag)`
        ["I( 1000) dumping stack traces  (ActivityManager)"]
        + [f"I({PID:5d}) {ln}  (System.out)" for ln in _dump_lines()]), 2),
}


@pytest.mark.parametrize("form", FORMS)
def test_a_dump_printed_through_logcat_is_read_behind_its_prefixes(form: str):
    text, header_line = FORMS[form]()
    warnings: list = []
    (d,) = read_gc_dumps_text(text, "logcat.txt", warnings)
    _assert_totals(d)   # the other pid's `Total GC time: 9s` and the other tags' lines are not part of it
    assert (d.pid, d.time, d.line) == (PID, "2024-03-04 10:15:30", header_line)
    assert not warnings


def test_a_headless_dump_printed_through_logcat():
    """Both forms at once: the app printed its dump from `Cmd line:` on, through logcat."""
    text, _ = _every_line(f"03-04 10:15:30.100  {PID}  {PID} I System.out: ", HEAD + GC_SECTION)
    warnings: list = []
    (d,) = read_gc_dumps_text(text, "logcat.txt", warnings)
    assert (d.pid, d.process, d.gc_count, d.line) == (None, "com.example.notes", 8, 2)
    assert [w.line for w in warnings] == [2]


# --- the command ---------------------------------------------------------------------------------------------------

def test_gc_device_command_on_both_forms(tmp_path: Path, capsys):
    headless = tmp_path / "pasted_dump.txt"
    headless.write_text(_text(HEAD + GC_SECTION + THREADS))
    printed = tmp_path / "systemout_dump.txt"
    printed.write_text(_brief_with_continuations(_dump_lines())[0])
    assert main(["gc", "device", str(headless), str(printed), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert not out["skipped"]
    by = {Path(r["source"]).name: r for r in out["reports"]}
    assert set(by) == {headless.name, printed.name}
    for r in by.values():
        assert r["kind"] == "dump" and r["dumps"] == 1
        p = r["processes"][0]
        # 8 runs, 66 ms, paused 2.1 ms (longest 0.5 ms), waited 3.5 ms, 2 blocking GCs for 12.4 ms, freed 14848 KB,
        # 12 MB of a 512 MB limit used, main thread caught waiting
        assert (p["collections"], p["gc_wall_ns"], p["pause_total_ns"], p["pause_max_ns"]) == (8, 66_000_000,
                                                                                                2_100_000, 500_000)
        assert (p["blocked_ns"], p["blocking_started"], p["blocking_gc_ns"]) == (3_500_000, 2, 12_400_000)
        assert p["freed_bytes"] == 14848 * KB and p["freed_objects"] == 200_000
        assert p["heap"]["used_max_bytes"] == 12 * MB and p["heap"]["limit_bytes"] == 512 * MB
        assert p["by_kind"] == {"concurrent copying": 3, "young concurrent copying": 5}
        assert p["main_thread_waits"] == 1 and p["heap_task_daemon_cpu_ns"] == 250_000_000
    assert by[headless.name]["processes"][0]["pid"] is None
    assert by[headless.name]["processes"][0]["pid_unknown"] is True
    assert by[printed.name]["processes"][0]["pid"] == PID
    assert "pid_unknown" not in by[printed.name]["processes"][0]

    assert main(["gc", "device", str(headless), str(printed)]) == 0
    text = capsys.readouterr().out
    assert "com.example.notes (pid unknown): 8 GC runs" in text
    assert f"com.example.notes (pid {PID}): 8 GC runs" in text
    assert "None" not in text and "no GC data" not in text
    assert "without their `----- pid" in text   # the note says why the pid is unknown


def test_the_sentence_and_the_html_say_pid_unknown():
    from droidlag.report.gc_html import gc_section

    (d,) = read_gc_dumps_text(_text(HEAD + GC_SECTION), "pasted.txt")
    r = summarize_gc_dumps([d], "pasted.txt").to_dict()
    assert gc_sentence(r["processes"][0]).startswith("com.example.notes (pid unknown): ")
    html = gc_section([r])
    assert "<td>com.example.notes</td><td>unknown</td>" in html and "None" not in html


def test_two_processes_printing_their_dumps_at_once():
    """Two apps' System.out lines interleaved line by line in one threadtime logcat: each dump is read from its own
    writer's lines (the second app: 3 GCs, 9 ms, as its lines say)."""
    other = ["----- pid 5555 at 2024-03-04 10:15:31 -----", "Cmd line: com.example.other",
             "Heap: 50% free, 2MB/4MB; 1000 objects", "Dumping cumulative Gc timings", "Total GC count: 3",
             "Total GC time: 9ms", "----- end 5555 -----"]
    mine = _dump_lines()
    out = []
    for k, ln in enumerate(mine):
        out.append(f"03-04 10:15:30.100  {PID}  {PID} I System.out: {ln}")
        if k < len(other):
            out.append(f"03-04 10:15:31.100  5555  5555 I System.out: {other[k]}")
    a, b = read_gc_dumps_text(_text(out), "two.txt")
    _assert_totals(a)
    assert (a.pid, a.line, b.pid, b.line) == (PID, 1, 5555, 2)
    assert (b.process, b.gc_count, b.gc_time_ns, b.heap_used_bytes) == ("com.example.other", 3, 9_000_000, 2 * MB)


# --- two headless sections one after the other (review s27) ---------------------------------------------------------

# A second GC section as ART prints it (Heap::DumpGcPerformanceInfo), pasted from its `Dumping cumulative Gc timings`
# on (no `Cmd line:` nor `Heap:` line): 1 concurrent copying run of 15.1 ms (paused 400 us) and 2 young ones of
# 8.28 ms in all (paused 360 us in all, 200 us at most): 3 GCs, 23.38 ms, paused 760 us; no blocking GC.
SECOND_SECTION = [
    "Dumping cumulative Gc timings",
    "Start Dumping histograms for 1 iterations for concurrent copying",
    "ProcessMarkStack:\tSum: 11ms 99% C.I. 11ms-11ms Avg: 11ms Max: 11ms",
    "Done Dumping histograms",
    "concurrent copying paused:\tSum: 400us 99% C.I. 400us-400us Avg: 400us Max: 400us",
    "concurrent copying total time: 15.100ms mean time: 15.100ms",
    "concurrent copying freed: 30000 objects with total size 2MB",
    "Start Dumping histograms for 2 iterations for young concurrent copying",
    "ProcessMarkStack:\tSum: 6ms 99% C.I. 2ms-4ms Avg: 3ms Max: 4ms",
    "Done Dumping histograms",
    "young concurrent copying paused:\tSum: 360us 99% C.I. 160us-200us Avg: 180us Max: 200us",
    "young concurrent copying total time: 8.280ms mean time: 4.140ms",
    "young concurrent copying freed: 10000 objects with total size 512KB",
    "Total time spent in GC: 23.380ms",
    "Mean GC size throughput: 106MB/s",
    "Total number of allocations 90000",
    "Total bytes allocated 6MB",
    "Total bytes freed 2560KB",
    "Free memory 1MB",
    "Free memory until GC 1MB",
    "Free memory until OOME 250MB",
    "Total memory 4MB",
    "Max memory 256MB",
    "Total mutator paused time: 760us",
    "Total time waiting for GC to complete: 0",
    "Total GC count: 3",
    "Total GC time: 23.380ms",
    "Total blocking GC count: 0",
    "Total blocking GC time: 0",
    "Total pre-OOME GC count: 0",
]


def _assert_second(b: ArtGcDump) -> None:
    assert (b.pid, b.process, b.time) == (None, None, None)
    assert (b.gc_count, b.gc_time_ns) == (3, 23_380_000)                  # 15.1 ms + 8.28 ms
    assert (b.blocking_gc_count, b.blocking_gc_time_ns, b.wait_for_gc_ns) == (0, 0, 0)
    assert b.mutator_paused_ns == 760_000                                 # 400 us + 360 us
    assert (b.max_memory_bytes, b.bytes_allocated, b.bytes_freed) == (256 * MB, 6 * MB, 2560 * KB)   # 2 MB + 512 KB
    assert b.heap_used_bytes is None                                      # no Heap line: not the first dump's
    cc = {c.name: c for c in b.collectors}
    assert set(cc) == {"concurrent copying", "young concurrent copying"}
    assert (cc["concurrent copying"].iterations, cc["concurrent copying"].total_ns) == (1, 15_100_000)
    young = cc["young concurrent copying"]
    assert (young.iterations, young.paused_ns, young.paused_max_ns, young.total_ns) == (2, 360_000, 200_000, 8_280_000)
    assert b.threads_waiting_for_gc == [] and b.heap_task_daemon_cpu_ns is None


@pytest.mark.parametrize("between", [["", "(second process)"], THREADS], ids=["prose", "the first one's threads"])
def test_two_headless_sections_one_after_the_other_keep_their_own_totals(between: list[str]):
    """Neither gets the other's totals: the first (8 GCs, 66 ms) runs to the second's `Dumping cumulative Gc
    timings`, the second starts there, after the first's totals; what ART printed after the first's totals (its JIT
    timings, its threads) stays the first's."""
    text = _text(HEAD + GC_SECTION + between + SECOND_SECTION)
    warnings: list = []
    a, b = read_gc_dumps_text(text, "two_pasted.txt", warnings)
    second_line = len(HEAD) + len(GC_SECTION) + len(between) + 1
    assert (a.line, b.line) == (1, second_line)
    assert [w.line for w in warnings] == [1, second_line]
    assert (a.pid, a.process, a.gc_count, a.gc_time_ns) == (None, "com.example.notes", 8, 66_000_000)
    assert (a.blocking_gc_count, a.blocking_gc_time_ns, a.mutator_paused_ns) == (2, 12_400_000, 2_100_000)
    assert (a.heap_used_bytes, a.max_memory_bytes, a.bytes_freed) == (12 * MB, 512 * MB, 14848 * KB)
    assert [(c.name, c.iterations) for c in a.collectors] == [("concurrent copying", 3),
                                                              ("young concurrent copying", 5)]
    if between is THREADS:
        assert a.threads_waiting_for_gc == [("main", True, "WaitingForGcToComplete")]
        assert a.heap_task_daemon_cpu_ns == 250_000_000
    _assert_second(b)


def test_a_headless_section_pasted_after_another_from_its_cmd_line():
    """The second starts at its own `Cmd line:` (its process named), the first stops there."""
    text = _text(HEAD + GC_SECTION + ["Cmd line: com.example.other", "Heap: 75% free, 1MB/4MB; 9000 objects"]
                 + SECOND_SECTION)
    a, b = read_gc_dumps_text(text, "two_pasted.txt")
    assert (a.process, a.gc_count, a.gc_time_ns, a.heap_used_bytes) == ("com.example.notes", 8, 66_000_000, 12 * MB)
    assert (b.line, b.process, b.gc_count, b.gc_time_ns) == (len(HEAD) + len(GC_SECTION) + 1, "com.example.other",
                                                             3, 23_380_000)
    assert (b.heap_free_percent, b.heap_used_bytes, b.heap_total_bytes) == (75, 1 * MB, 4 * MB)


# --- dumps printed through logcat: how far each is read (review s27) -------------------------------------------------

def _writers_log(writers: int, rows: int) -> str:
    """`writers` System.out writers taking turns (threadtime): each one's first entry says `Total GC count: N` (a GC
    section printed without its header), its later ones are the app's own messages."""
    out = []
    for i in range(rows):
        w = i % writers
        msg = f"Total GC count: {w}" if i < writers else f"message {i} from writer {w}"
        out.append(f"03-04 10:15:{(i // 1000) % 60:02d}.{i % 1000:03d}  {3000 + w}  {3000 + w} I System.out: {msg}")
    return _text(out)


def _count_calls(monkeypatch, name: str) -> list[str]:
    """The argument of every call of art_gc_log.<name> (one-argument functions), the function itself kept."""
    calls: list[str] = []
    real = getattr(art_gc_log, name)

    def counted(arg: str):
        calls.append(arg)
        return real(arg)

    monkeypatch.setattr(art_gc_log, name, counted)
    return calls


def test_a_headless_stretch_ends_at_its_writers_first_line_that_is_no_dump_line(monkeypatch):
    """Each writer's stretch holds its one `Total GC count:` line (its next entry, `message ...`, is no dump line),
    and the lines read do not grow with the log: before, each stretch ran to the end of the log (fewer than 500
    writers taking turns never make a run of 500 other writers' lines)."""
    writers = 40
    read = _count_calls(monkeypatch, "_entry")
    for rows in (2_000, 4_000):
        read.clear()
        text = _writers_log(writers, rows)
        stretches = art_gc_log._logcat_dumps(text)
        assert [numbers for _, _, _, numbers in stretches] == [[w + 1] for w in range(writers)]
        assert [dump for _, _, dump, _ in stretches] == [f"Total GC count: {w}\n" for w in range(writers)]
        starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        assert [(a, b) for a, b, _, _ in stretches] == [(starts[w], starts[w + 1]) for w in range(writers)]
        # read once each: the writers' first lines, then their next ones (which end the stretches)
        assert len(read) == 2 * writers
        dumps = read_gc_dumps_text(text, "writers.txt")
        assert sorted(d.gc_count or 0 for d in dumps) == list(range(writers))


def test_a_dump_printed_through_logcat_without_its_end_is_read_a_dumps_worth_of_lines(monkeypatch):
    """A `----- pid` header whose `----- end` never comes: the stretch stops after _MAX_STRETCH_LINES lines of its
    writer (set to 60 here), however long its writer goes on."""
    monkeypatch.setattr(art_gc_log, "_MAX_STRETCH_LINES", 60)
    prefix = f"03-04 10:15:30.100  {PID}  {PID} I System.out: "
    lines = [HEADER] + HEAD + GC_SECTION + [f"app line {i}" for i in range(500)]
    (stretch,) = art_gc_log._logcat_dumps(_text(prefix + ln for ln in lines))
    assert stretch[3] == list(range(1, 61))
    assert stretch[2] == _text(lines[:49] + [f"app line {i}" for i in range(11)])   # 49 dump lines + 11
    (d,) = read_gc_dumps_text(_text(prefix + ln for ln in lines), "logcat.txt")
    assert (d.pid, d.gc_count, d.gc_time_ns) == (PID, 8, 66_000_000)


def test_a_headless_dump_printed_through_logcat_ends_with_its_dump_lines():
    """The app's own message after the section ends the dump: its later `Total GC time: 9s` is not read."""
    prefix = f"03-04 10:15:30.100  {PID}  {PID} I System.out: "
    lines = HEAD + GC_SECTION + ["notes loaded", "Total GC time: 9s"]
    ((_, _, dump, numbers),) = art_gc_log._logcat_dumps(_text(prefix + ln for ln in lines))
    assert numbers == list(range(1, len(HEAD) + len(GC_SECTION) + 1))
    assert dump == _text(HEAD + GC_SECTION)


def test_two_headless_dumps_printed_through_logcat_at_once():
    """Two apps printing their GC sections (from `Cmd line:` on, no header) line by line at once: each its own."""
    mine = [f"03-04 10:15:30.100  {PID}  {PID} I System.out: {ln}" for ln in HEAD + GC_SECTION]
    other = [f"03-04 10:15:30.200  5555  5555 I System.out: {ln}"
             for ln in ["Cmd line: com.example.other", "Heap: 75% free, 1MB/4MB; 9000 objects"] + SECOND_SECTION]
    out = []
    for k in range(max(len(mine), len(other))):
        out += mine[k:k + 1] + other[k:k + 1]
    a, b = read_gc_dumps_text(_text(out), "two.txt")
    assert (a.line, a.process, a.gc_count, a.gc_time_ns, a.heap_used_bytes) == (1, "com.example.notes", 8,
                                                                                 66_000_000, 12 * MB)
    assert (b.line, b.process, b.gc_count, b.gc_time_ns, b.heap_used_bytes) == (2, "com.example.other", 3,
                                                                                23_380_000, 1 * MB)


def test_a_line_with_many_splits_is_tried_a_bounded_number_of_times(monkeypatch):
    """A line with a dump's words after many `: ` (a grep'd or wrapped text) is tried as a logcat entry at its first
    _ENTRY_SPLITS splits only, not at every one in its first 256 characters."""
    tried = _count_calls(monkeypatch, "_prefix_match")
    line = "k: " * 85 + "Total GC count: 5"
    assert art_gc_log._entry(line) is None
    assert len(tried) == art_gc_log._ENTRY_SPLITS
    assert read_gc_dumps_text(_text([line] * 50), "grep.txt") == []
