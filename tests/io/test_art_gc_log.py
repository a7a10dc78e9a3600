"""The ART GC log reader on the real corpus (every GC line read, counted independently) and on each logcat format
written from `logcat -v` documentation and ART's log statements."""
from __future__ import annotations

from pathlib import Path

import pytest

from droidlag.errors import InputError
from droidlag.io.art_gc_log import duration_ns, read_gc_log, read_gc_log_text, size_bytes
from tests_gc_helpers import GC_FILES, count_by_words

MB = 1024**2


def _files(corpus: Path) -> list[Path]:
    files = sorted((corpus / "gc").glob("art_logcat_*.txt"))
    assert files, "corpus/gc has no logcat files"
    return files


def test_every_gc_line_of_the_corpus_is_read(corpus: Path):
    """The files hold only GC lines (SOURCES.md): every line is read, as an event or, where a file holds the same
    stretch twice, as a repeat named in a warning. Per family the events equal a plain substring count of the
    distinct stretch, file by file; line totals as SOURCES.md's table states them."""
    totals: dict[str, int] = {}
    for p in _files(corpus):
        raw = p.read_bytes().decode("utf-8")
        lines = [ln for ln in raw.split("\n") if ln.strip()]
        assert len(lines) == GC_FILES[p.name], p.name
        for k, v in count_by_words(lines).items():
            totals[k] = totals.get(k, 0) + v
        half = len(lines) // 2
        doubled = len(lines) % 2 == 0 and half > 100 and lines[:half] == lines[half:]
        distinct = lines[:half] if doubled else lines
        log = read_gc_log(p)
        assert len(log.events) == len(distinct), p.name
        expected = count_by_words(distinct)
        assert log.counts() == {k: v for k, v in expected.items() if v}, p.name
        if doubled:   # the FishIT capture holds its 1,595 lines twice over
            assert [(w.line, w.message.split(" GC line")[0]) for w in log.warnings] == [(half + 1, str(half))]
        else:
            assert not log.warnings, (p.name, [str(w) for w in log.warnings])
    # SOURCES.md "Lines per GC kind": 325 collections, 1,152 + 13 waiting, 864 starting, 840 WaitForGcToComplete,
    # 65 clamps, 25 forced SoftReference collections; 3,284 lines in all.
    assert totals == {"collection": 325, "waiting_blocking": 1165, "starting_blocking": 864, "wait_done": 840,
                      "clamp": 65, "soft_refs": 25}
    assert sum(totals.values()) == 3284


def test_a_repeated_stretch_is_read_once_and_same_millisecond_lines_are_kept():
    a = "01-02 03:04:05.100  10  11 I app: Starting a blocking GC Alloc"
    b = "01-02 03:04:07.200  10  12 I app: WaitForGcToComplete blocked Alloc on Background for 20ms"
    c = "01-02 03:04:01.000  10  13 I app: Waiting for a blocking GC Alloc"   # earlier time, but a new line
    log = read_gc_log_text("\n".join([a, a, b, a, a, b, c]) + "\n", "x")
    assert [e.line for e in log.events] == [1, 2, 3, 7]
    assert log.warnings[0].line == 4 and log.warnings[0].message.startswith("3 GC line(s) repeat")


def test_prefixes_give_process_thread_and_time(corpus: Path):
    for p in _files(corpus):
        log = read_gc_log(p)
        assert all(e.pid is not None for e in log.events), p.name
        if "HabitV8" in p.name:   # a `flutter run` console: brief format, no thread id, no time
            assert all(e.tid is None and e.ts_ns is None for e in log.events)
        else:
            assert all(e.tid is not None and e.ts_ns is not None for e in log.events), p.name
            assert log.clock == "wall"


def test_values_of_lines_read_by_hand(corpus: Path):
    habit = read_gc_log(corpus / "gc" / "art_logcat_JayMass5800_HabitV8_error2.txt").events
    # line 6: Clamp target GC heap from 351MB to 256MB; line 7: "... 0% free, 255MB/256MB, paused 295us,6.951ms
    # total 1.481s"
    assert (habit[5].kind, habit[5].heap_from_bytes, habit[5].heap_limit_bytes) == ("clamp", 351 * MB, 256 * MB)
    e = habit[6]
    assert (e.cause, e.collector, e.generation) == ("Background", "concurrent mark compact", "full")
    assert e.pauses_ns == (295_000, 6_951_000) and e.duration_ns == 1_481_000_000
    assert (e.freed_objects, e.freed_bytes, e.freed_los_objects, e.freed_los_bytes) == (None, 62 * MB, 141, 53 * MB)
    assert (e.free_percent, e.heap_used_bytes, e.heap_footprint_bytes) == (0, 255 * MB, 256 * MB)
    assert habit[10].kind == "wait_done" and habit[10].cause == "Alloc" and habit[10].blocked_on == "Alloc"
    assert habit[10].duration_ns == 23_223_000
    fish = read_gc_log(corpus / "gc" / "art_logcat_karlokarate_FishIT-Player_logcat_030.txt").events[0]
    assert (fish.pid, fish.tid, fish.tag, fish.package) == (7425, 7434, "ishit.player.v2", "com.fishit.player.v2")
    assert fish.freed_objects == 76531 and fish.freed_bytes == 6128 * 1024 and fish.pauses_ns == (500_000, 42_000)
    oreo = read_gc_log(corpus / "gc" / "art_logcat_Fortochca_logs.txt").events[0]
    assert oreo.tag == "zygote" and oreo.process is None   # Oreo logs apps under the zygote tag
    assert oreo.pauses_ns == (266_000,) and oreo.duration_ns == 104_313_000


def test_bugreport_zip_gives_the_lines_of_its_logs(corpus: Path):
    """The sailfish bugreport's GC lines are the 21 extracted into corpus/gc (from its text line 205,433 on), dated
    with the bugreport's year."""
    zips = sorted((corpus / "bugreport").glob("bugreport-*.zip"))
    assert zips, "no bugreport zip in the corpus"
    log = read_gc_log(zips[0])
    extracted = read_gc_log(corpus / "gc" / "art_logcat_sailfish_android10.txt")
    assert [(e.kind, e.pid, e.tid, e.duration_ns) for e in log.events] == \
        [(e.kind, e.pid, e.tid, e.duration_ns) for e in extracted.events]
    assert log.events[0].line == 205_433
    assert log.year == 2020 and log.year_known


FORMATS = {
    # logcat -v threadtime, with -v uid (a bugreport's logcat sections)
    "threadtime+uid": "01-02 03:04:05.678 10123  4321  4330 I com.example.app: "
                      "Background young concurrent copying GC freed 1000(2MB) AllocSpace objects, 3(1024KB) LOS "
                      "objects, 40% free, 12MB/20MB, paused 1.500ms,20us total 150.250ms",
    "threadtime+year+usec": "2024-01-02 03:04:05.678901  4321  4330 I example.app: Waiting for a blocking GC Alloc",
    "time": "01-02 03:04:05.678 I/example.app( 4321): Starting a blocking GC Alloc",
    "brief": "I/example.app( 4321): WaitForGcToComplete blocked Alloc on Background for 12.5ms",
    "thread": "I( 4321: 4330) Clamp target GC heap from 300MB to 256MB",
    "process": "I( 4321) Forcing collection of SoftReferences for 2MB allocation  (example.app)",
    "epoch": "1700000000.123  4321  4330 I example.app: Suspending all threads took: 6.2ms",
    "monotonic": "   145.669  4321  4330 I example.app: Suspending all threads took: 6.2ms",
    "studio-old": "2024-01-02 03:04:05.678 4321-4330/com.example.app I/art: Explicit concurrent mark sweep GC freed "
                  "500(30KB) AllocSpace objects, 0(0B) LOS objects, 33% free, 20MB/30MB, paused 2.1ms total 90ms",
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_each_logcat_format(fmt: str):
    log = read_gc_log_text(FORMATS[fmt] + "\n", fmt)
    assert len(log.events) == 1 and not log.warnings, [str(w) for w in log.warnings]
    e = log.events[0]
    assert e.pid == 4321
    if fmt not in ("time", "brief", "process"):
        assert e.tid == 4330
    if fmt in ("brief", "thread", "process"):
        assert e.ts_ns is None
    else:
        assert e.ts_ns is not None
    assert log.clock == {"epoch": "epoch", "monotonic": "monotonic"}.get(fmt, None if e.ts_ns is None else "wall")


def test_long_format_takes_the_header_line():
    text = ("[ 01-02 03:04:05.678  4321: 4330 I/example.app ]\n"
            "WaitForGcToComplete blocked Alloc on HeapTrim for 9.001ms\n\n")
    e = read_gc_log_text(text, "long").events[0]
    assert (e.pid, e.tid, e.tag, e.duration_ns, e.blocked_on) == (4321, 4330, "example.app", 9_001_000, "HeapTrim")


def test_older_and_vendor_message_forms():
    text = "\n".join([
        # Android 5-7: tag art, pauses joined by ", ", old WaitForGcToComplete wording
        "I/art     ( 1000): Background partial concurrent mark sweep GC freed 10(1KB) AllocSpace objects, 0(0B) LOS "
        "objects, 20% free, 40MB/50MB, paused 5.001ms, 2.5ms total 300.5ms",
        "I/art     ( 1000): WaitForGcToComplete blocked for 7.5ms for cause DisableMovingGc",
        # a vendor build adds (M:...,L:...) after the used size and drops a space
        "I  Alloc concurrent copying GC freed 362KB AllocSpace bytes, 5(148KB) LOS objects, 14% free,549MB(M:180MB,"
        "L:368MB)/645MB, paused 149us,277us total 2.002s",
        'W app: Throwing OutOfMemoryError "Failed to allocate a 2000 byte allocation with 100 free bytes and 99KB '
        'until OOM, target footprint 805306368, growth limit 805306368" (VmSize 1 kB)',
    ])
    ev = read_gc_log_text(text, "old").events
    assert [e.kind for e in ev] == ["collection", "wait_done", "collection", "oom"]
    assert ev[0].generation == "partial" and ev[0].pauses_ns == (5_001_000, 2_500_000) and ev[0].tag == "art"
    assert ev[0].process is None
    assert ev[1].cause == "DisableMovingGc" and ev[1].duration_ns == 7_500_000
    assert ev[2].heap_used_bytes == 549 * MB and ev[2].heap_footprint_bytes == 645 * MB
    assert ev[3].heap_limit_bytes == 805306368 and ev[3].size_bytes == 2000


def test_units():
    assert [size_bytes(s) for s in ("0B", "12KB", "3MB", "1GB")] == [0, 12 * 1024, 3 * MB, 1024**3]
    assert [duration_ns(s) for s in ("5ns", "76us", "1.5ms", "1.481s")] == [5, 76_000, 1_500_000, 1_481_000_000]


def test_a_damaged_line_is_a_warning_with_its_line_and_the_rest_is_read():
    text = ("01-02 03:04:05.678  4321  4330 I app: Background concurrent copying GC freed 1(1KB) AllocSpace objects,"
            "\n01-02 03:04:05.679  4321  4330 I app: Waiting for a blocking GC Alloc\n")
    log = read_gc_log_text(text, "cut.txt")
    assert [e.kind for e in log.events] == ["waiting_blocking"] and log.events[0].line == 2
    assert [(w.line, "not understood" in w.message) for w in log.warnings] == [(1, True)]


def test_missing_file_is_an_input_error(tmp_path: Path):
    with pytest.raises(InputError):
        read_gc_log(tmp_path / "nope.txt")


def test_hostile_long_line_is_skipped_quickly():
    junk = "a " * 200_000 + " GC freed " + "b " * 10
    log = read_gc_log_text(junk + "\nI/app( 1): Waiting for a blocking GC Alloc\n", "junk.txt")
    assert [e.kind for e in log.events] == ["waiting_blocking"]
    assert log.warnings[0].line == 1 and "skipped" in log.warnings[0].message
