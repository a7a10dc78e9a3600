"""Log shapes a new-user trial found unread or half read: Android Studio 1.x/2.x lines without a year, `-v tag` and
`-v epoch`/`uid` lines and logs pasted in code comments (file detection), Android 5-6's single-line blocking waits in
the text summary, and Dalvik's GC lines (dalvik/vm/alloc/Heap.cpp). Lines written by hand from the formats; values
worked out by hand."""
from __future__ import annotations

from droidlag.findings.narrative import gc_sentence
from droidlag.gc.device import DALVIK_NOTE, LOG_NOTE, summarize_gc_log
from droidlag.io.art_gc_log import read_gc_log_text

KB, MB = 1024, 1024**2

STUDIO_OLD = (
    "03-04 10:00:01.250 4000-4000/com.example.app I/art: Alloc sticky concurrent mark sweep GC freed 10(1KB) "
    "AllocSpace objects, 0(0B) LOS objects, 1% free, 90MB/91MB, paused 3.5ms total 20ms\n"
    "03-04 10:00:02.000 4000-4021/com.example.app I/art: WaitForGcToComplete blocked for 120.5ms for cause Alloc\n")


def test_android_studio_lines_without_a_year_give_pid_thread_package_and_time():
    log = read_gc_log_text(STUDIO_OLD, "x")
    a, b = log.events
    assert (b.pid, b.tid, b.package, b.tag) == (4000, 4021, "com.example.app", "art")
    assert (a.tid, b.duration_ns, b.cause) == (4000, 120_500_000, "Alloc")
    assert b.ts_ns - a.ts_ns == 750_000_000          # 10:00:02.000 - 10:00:01.250
    assert log.clock == "wall" and not log.year_known   # 2000 assumed, said in the notes
    assert not log.warnings


def test_a_prefix_whose_time_no_format_reads_is_warned_about():
    text = "2024/03/04 10:00:02 4000 I/art: WaitForGcToComplete blocked for 12ms for cause Alloc\n"
    log = read_gc_log_text(text, "x")
    assert log.events[0].ts_ns is None and log.events[0].tag == "art"
    assert [(w.line, w.message.split(" GC line")[0]) for w in log.warnings] == [(1, "1")]


def test_a_glued_word_before_an_epoch_uid_prefix_is_passed_over():
    text = ("stamp100.500 10240  3426  4670 I 1.syncthingfor: WaitForGcToComplete blocked Alloc on HeapTrim "
            "for 63.5ms\n")
    e = read_gc_log_text(text, "x").events[0]
    assert (e.pid, e.tid, e.tag, e.ts_ns, e.blocked_on) == (3426, 4670, "1.syncthingfor", 100_500_000_000, "HeapTrim")


def test_single_line_waits_of_android_5_are_counted_and_said():
    text = (",I/art     ( 700): WaitForGcToComplete blocked for 150ms for cause Explicit\n"
            ",I/art     ( 700): WaitForGcToComplete blocked for 7.5ms for cause Alloc\n")
    p = summarize_gc_log(read_gc_log_text(text, "x")).processes[0]
    assert (p.blocking_waits, p.blocked_ns) == (2, 157_500_000)
    assert "blocking GC stalled 1 thread(s) 2 times, 158 ms of waiting" in gc_sentence(p.to_dict())


def test_a_logged_wait_end_after_its_start_is_one_wait():
    text = ("01-02 03:04:05.000  10  11 I app: Waiting for a blocking GC Alloc\n"
            "01-02 03:04:05.020  10  11 I app: WaitForGcToComplete blocked Alloc on Background for 20ms\n"
            "01-02 03:04:05.100  10  12 I app: WaitForGcToComplete blocked Alloc on Background for 9ms\n")
    p = summarize_gc_log(read_gc_log_text(text, "x")).processes[0]
    assert (p.blocking_waits, p.blocked_ns) == (2, 29_000_000)   # thread 11 once, thread 12 once (no start line)
    assert {t.tid: (t.waits, t.completed) for t in p.threads} == {11: (1, 1), 12: (1, 1)}


DALVIK = (
    "D/dalvikvm( 1959): GC_CONCURRENT freed 1511K, 22% free 19523K/24832K, paused 5ms+3ms, total 33ms\n"
    "D/dalvikvm( 1959): WAIT_FOR_CONCURRENT_GC blocked 16ms\n"
    "D/dalvikvm( 1959): GC_FOR_ALLOC freed <1K, 3% free 18048K/18524K, paused 13ms, total 14ms\n"
    "D/dalvikvm( 1959): GC_EXPLICIT freed 89K, 17% free 15805K/19020K, paused 2ms+5ms, total 63ms\n"
    "D/dalvikvm(  300): GC_CONCURRENT freed 1049K, 65% free 3571K/9991K, external 4703K/5261K, paused 2ms+2ms\n")


def test_dalvik_lines_are_read_as_heap_cpp_logs_them():
    log = read_gc_log_text(DALVIK, "x")
    c, w, a, x = log.events
    assert (c.pid, c.cause, c.collector, c.generation) == (1959, "GC_CONCURRENT",
                                                           "dalvik partial concurrent mark sweep", "partial")
    assert (c.freed_bytes, c.free_percent, c.heap_used_bytes, c.heap_footprint_bytes) == (
        1511 * KB, 22, 19523 * KB, 24832 * KB)
    assert (c.pauses_ns, c.duration_ns) == ((5_000_000, 3_000_000), 33_000_000)
    assert (w.kind, w.duration_ns) == ("wait_done", 16_000_000)
    assert (a.collector, a.freed_bytes, a.pauses_ns) == ("dalvik partial mark sweep", None, (13_000_000,))
    assert (x.collector, x.generation) == ("dalvik concurrent mark sweep", "full")
    # the Android 2-4.0 form (", external ...", no total) is named, not passed over
    assert [(w.line, w.message) for w in log.warnings] == [(5, "GC log line not understood; skipped")]
    r = summarize_gc_log(log)
    p = r.processes[0]
    assert (p.collections, p.pauses, p.pause_total_ns, p.gc_wall_ns) == (3, 5, 28_000_000, 110_000_000)
    assert (p.blocking_waits, p.blocked_ns, p.freed_bytes) == (1, 16_000_000, 1600 * KB)
    assert DALVIK_NOTE in r.notes and LOG_NOTE not in r.notes
