"""ART's garbage-collection log lines in any text (logcat in every `-v` format, Android Studio's logcat, a pasted
`flutter run` console, bugreports) -> a `GcLog` of `GcLogEvent`s.

The messages are ART's own log statements (art/runtime/gc/heap.cc, thread_list.cc, Android 5 to 14):
`<cause> <collector> GC freed N(SIZE) AllocSpace objects, N(SIZE) LOS objects, P% free, USED/TOTAL, paused D[,D]
total D` (newer ART modules: `SIZE AllocSpace bytes`; before Android 8 pauses were joined by ", "), `Waiting for a
blocking GC <cause>`, `Starting a blocking GC <cause>`, `WaitForGcToComplete blocked <cause> on <cause> for D` (older:
`blocked for D for cause <cause>`), `Clamp target GC heap from SIZE to SIZE`, `Forcing collection of SoftReferences
for SIZE allocation`, `Throwing OutOfMemoryError "Failed to allocate ..."` and `Suspending all threads took: D`.
Sizes are PrettySize (B, KB, MB, GB: powers of 1024), durations PrettyDuration (ns, us, ms, s).

Messages are found first (a search over the whole text for their fixed words, so a bugreport's 200,000 lines cost
one pass in C), then each hit's line prefix is read by the logcat format it is in; a prefix no format explains still
gives the event, without pid and time, and a warning says how many. Lines with the fixed words whose message does not
parse are skipped with a warning naming the line."""
from __future__ import annotations

import bisect
import calendar
import re
import zipfile
from collections import Counter, deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypedDict

from droidlag.errors import InputError, ReadWarning
from droidlag.models.gc import (
    CLAMP,
    COLLECTION,
    DALVIK_COLLECTOR,
    DALVIK_WAITED_ON,
    OOM,
    SOFT_REFS,
    STARTING_BLOCKING,
    SUSPEND_ALL,
    WAIT_DONE,
    WAITING_BLOCKING,
    ArtGcDump,
    CollectorStats,
    GcLog,
    GcLogEvent,
    generation_of,
)

_SIZE = r"\d+(?:\.\d+)?[KMGT]?B"
_DUR = r"\d+(?:\.\d+)?(?:ns|us|ms|s)"
# The fixed words every message has; a search over the text for each finds the candidate lines.
MARK_WORDS = (" GC freed ", "a blocking GC ", "WaitForGcToComplete blocked", "Clamp target GC heap from ",
              "Forcing collection of SoftReferences for ", 'Throwing OutOfMemoryError "Failed to allocate',
              "Suspending all threads took: ")
# Dalvik's (Android 4.1 to 4.4, dalvik/vm/alloc/Heap.cpp dvmCollectGarbageInternal and
# dvmWaitForConcurrentGcToComplete): `<reason> freed [<]NK, P% free NK/NK, paused Nms[+Nms], total Nms` and
# `WAIT_FOR_CONCURRENT_GC blocked Nms`. Older reasons (GC_FOR_MALLOC, GC_EXTERNAL_ALLOC: Android 2-4.0, another
# format) are found so that their lines are named as not understood, never passed over in silence.
DALVIK_WORDS = ("GC_FOR_ALLOC freed ", "GC_CONCURRENT freed ", "GC_EXPLICIT freed ", "GC_BEFORE_OOM freed ",
                "GC_FOR_MALLOC freed ", "GC_EXTERNAL_ALLOC freed ", "WAIT_FOR_CONCURRENT_GC blocked ")


_COLLECTION = re.compile(
    rf"(?P<cause>[A-Z][A-Za-z]*) (?P<collector>[a-z][a-z +]*?)(?: \(sampled\))? GC freed "
    rf"(?:(?P<objs>\d+)\((?P<bytes>{_SIZE})\) AllocSpace objects|(?P<bytes2>{_SIZE}) AllocSpace bytes), "
    rf"(?P<los>\d+)\((?P<losbytes>{_SIZE})\) LOS objects, "
    rf"(?P<free>\d+)% free, ?(?P<used>{_SIZE})(?:\([^)]*\))?/(?P<foot>{_SIZE}), "
    rf"paused (?P<pauses>{_DUR}(?:, ?{_DUR})*) total (?P<total>{_DUR})")
_BLOCKING = re.compile(r"(?P<what>Waiting for|Starting) a blocking GC (?P<cause>[A-Za-z]+)")
_WAIT_DONE = re.compile(rf"WaitForGcToComplete blocked (?:(?P<cause>[A-Za-z]+) on (?P<on>[A-Za-z]+) for "
                        rf"(?P<dur>{_DUR})|for (?P<dur2>{_DUR})(?: for cause (?P<cause2>[A-Za-z]+))?)")
_CLAMP = re.compile(rf"Clamp target GC heap from (?P<a>{_SIZE}) to (?P<b>{_SIZE})")
_SOFT = re.compile(rf"Forcing collection of SoftReferences for (?P<size>{_SIZE}) allocation")
_OOM = re.compile(rf"Throwing OutOfMemoryError \"Failed to allocate a (?P<n>\d+) byte allocation with \d+ free bytes "
                  rf"and {_SIZE} until OOM(?:, target footprint \d+, growth limit (?P<limit>\d+))?")
_SUSPEND = re.compile(rf"Suspending all threads took: (?P<dur>{_DUR})")
_DALVIK_GC = re.compile(r"(?P<reason>GC_[A-Z_]+) freed (?P<small><)?(?P<freed>\d+)K, (?P<free>\d+)% free "
                        r"(?P<used>\d+)K/(?P<foot>\d+)K, paused (?P<p1>\d+)ms(?:\+(?P<p2>\d+)ms)?, total (?P<total>\d+)ms")
_DALVIK_WAIT = re.compile(r"WAIT_FOR_CONCURRENT_GC blocked (?P<dur>\d+)ms")
# Heap.cpp's GcSpecs: which reasons collect only the app's heap (not the zygote's): isPartial.
_DALVIK_PARTIAL = {"GC_FOR_ALLOC": True, "GC_CONCURRENT": True, "GC_EXPLICIT": False, "GC_BEFORE_OOM": False}

# Line prefixes, one per logcat format (`logcat -v`: threadtime, time, brief, tag, thread, process, long; with
# year/uid/usec/epoch/monotonic/zone modifiers; Android Studio's old and new layouts). Each ends where the message
# begins.
_WHEN = r"(?:(?P<date>(?:\d{4}-)?\d\d-\d\d)\s+(?P<time>\d\d:\d\d:\d\d(?:\.\d+)?)|(?P<secs>\d+\.\d+))(?:\s+[+-]\d{4})?"
# Before a line's prefix: indentation, a comment or quote marker (`// `, `# `, `> `, a list's `* `) of a log pasted
# into code or markdown, or a word glued to the first digits (a pasted table's `timestamp37238.394 ...`).
_LEAD = r"^\s*(?:(?://+|#+|>+|\*)\s*|[A-Za-z]{1,16}(?=\d))?"
# Android Studio's dates: `2024-11-29` (3.x and later) or `11-29` without a year (1.x and 2.x).
_STUDIO_WHEN = r"(?P<date>(?:\d{4}-)?\d\d-\d\d)\s+(?P<time>\d\d:\d\d:\d\d(?:\.\d+)?)"
_PREFIXES = [
    re.compile(rf"{_LEAD}{_WHEN}\s+(?:(?P<uid>[\w.]+)\s+)?(?P<pid>\d+)\s+(?P<tid>\d+)\s+[VDIWEFAS]\s+(?P<tag>.*?)\s*:\s*$"),
    re.compile(rf"{_LEAD}{_STUDIO_WHEN}\s+(?P<pid>\d+)-(?P<tid>\d+)(?P<cols>\s.*?)?\s+[VDIWEFA]\s+$"),
    re.compile(rf"{_LEAD}{_STUDIO_WHEN}\s+(?P<pid>\d+)-(?P<tid>\d+)/(?P<package>\S+)\s+[VDIWEFA]/(?P<tag>.*?)\s*:\s*$"),
    re.compile(rf"(?:^\s*{_WHEN}\s+|^|[\s,\]])[VDIWEFA]/(?P<tag>[^\s(][^(]*?)\s*\(\s*(?P<pid>\d+)"
               r"(?::\s*(?P<tid>\d+))?\)\s*:\s*$"),
    re.compile(r"^\s*[VDIWEFA]\(\s*(?P<pid>\d+)(?::\s*(?P<tid>\d+))?\)\s*$"),
    re.compile(rf"(?:^\s*{_WHEN}\s+|^|[\s,\]])[VDIWEFA]/(?P<tag>[^\s(][^(:]*?)\s*:\s*$"),
]
_LONG_HEADER = re.compile(rf"^\[\s*{_WHEN}\s+(?:(?P<uid>[\w.]+):?\s+)?(?P<pid>\d+):\s*(?P<tid>0x[0-9a-fA-F]+|\d+)\s+"
                          r"[VDIWEFA]/(?P<tag>.*?)\s*\]\s*$")
_LINE_LEAD = re.compile(r"\s*(?:(?://+|#+|>+|\*)\s*)?")   # what may come before a brief or tag prefix
_UNREAD_TIME = re.compile(r"\d\d:\d\d:\d\d|\d{3,}\.\d{3}")
_DUMPSTATE_YEAR = re.compile(r"^== dumpstate: (\d{4})-\d\d-\d\d", re.M)
_SIZE_UNITS = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}
_DUR_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
DEFAULT_YEAR = 2000   # a leap year, so that a logged 02-29 is a valid date when the year is unknown
_EPOCH_MIN_S = 10**9
MAX_LINE = 8192       # a real GC line is under 400 characters; longer ones are junk and would cost regex time  # `-v epoch` seconds are past 2001; `-v monotonic` seconds since boot are far below


class _MessageFields(TypedDict, total=False):
    """The `GcLogEvent` fields a message carries (the line's prefix gives the rest)."""

    kind: str
    cause: str | None
    collector: str | None
    generation: str | None
    freed_objects: int | None
    freed_bytes: int | None
    freed_los_objects: int | None
    freed_los_bytes: int | None
    free_percent: int | None
    heap_used_bytes: int | None
    heap_footprint_bytes: int | None
    pauses_ns: tuple[int, ...]
    duration_ns: int | None
    blocked_on: str | None
    size_bytes: int | None
    heap_from_bytes: int | None
    heap_to_bytes: int | None
    heap_limit_bytes: int | None


class _PrefixFields(TypedDict, total=False):
    """The `GcLogEvent` fields a line's logcat prefix carries."""

    ts_ns: int | None
    pid: int
    tid: int
    tag: str | None
    package: str | None


class _CollectorFields(TypedDict, total=False):
    """The `CollectorStats` figures of one collector, gathered line by line."""

    iterations: int | None
    paused_ns: int | None
    paused_max_ns: int | None
    total_ns: int | None
    freed_objects: int | None
    freed_bytes: int | None


# A regex's named groups (groupdict): a group that did not take part is None.
_Groups = dict[str, str | None]


def size_bytes(s: str) -> int:
    """ART's PrettySize text (`6128KB`, `0B`, `1.5MB`) in bytes."""
    num = s.rstrip("KMGTB")
    return int(round(float(num) * _SIZE_UNITS[s[len(num):]]))


def duration_ns(s: str) -> int:
    """ART's PrettyDuration text (`76us`, `114.471ms`, `1.481s`) in ns."""
    num = s.rstrip("nsum")
    return int(round(float(num) * _DUR_UNITS[s[len(num):]]))


def _message(line: str) -> tuple[int, _MessageFields] | None:
    """(offset of the message in the line, event fields) or None when no message parses."""
    if " GC freed " in line:
        m = _COLLECTION.search(line)
        if not m:
            return None
        g = m.group
        fields = _MessageFields(kind=COLLECTION, cause=g("cause"), collector=g("collector"),
                      generation=generation_of(g("collector")),
                      freed_objects=int(g("objs")) if g("objs") else None,
                      freed_bytes=size_bytes(g("bytes") or g("bytes2")), freed_los_objects=int(g("los")),
                      freed_los_bytes=size_bytes(g("losbytes")), free_percent=int(g("free")),
                      heap_used_bytes=size_bytes(g("used")), heap_footprint_bytes=size_bytes(g("foot")),
                      pauses_ns=tuple(duration_ns(p.strip()) for p in g("pauses").split(",")),
                      duration_ns=duration_ns(g("total")))
        return m.start(), fields
    for rx, make in _SIMPLE:
        m = rx.search(line)
        if m:
            return m.start(), make(m)
    return None


def _dalvik_gc(m: re.Match[str]) -> _MessageFields:
    """A Dalvik collection: sizes in KB (`<1K` when under a KB: recorded as unknown), times in whole ms; the second
    pause is the concurrent collector's re-mark of dirty cards, both stop the world."""
    g = m.group
    reason, concurrent = g("reason"), g("p2") is not None
    partial = _DALVIK_PARTIAL.get(reason, False)
    collector = f"{DALVIK_COLLECTOR} " + ("partial " if partial else "") + ("concurrent " if concurrent else "") + \
        "mark sweep"
    pauses = [int(g("p1"))] + ([int(g("p2") or 0)] if concurrent else [])
    return {"kind": COLLECTION, "cause": reason, "collector": collector, "generation": generation_of(collector),
            "freed_bytes": None if g("small") else int(g("freed")) * 1024, "free_percent": int(g("free")),
            "heap_used_bytes": int(g("used")) * 1024, "heap_footprint_bytes": int(g("foot")) * 1024,
            "pauses_ns": tuple(p * 1_000_000 for p in pauses), "duration_ns": int(g("total")) * 1_000_000}


def _blocking(m: re.Match[str]) -> _MessageFields:
    return {"kind": WAITING_BLOCKING if m.group("what") == "Waiting for" else STARTING_BLOCKING,
            "cause": m.group("cause")}


def _wait_done(m: re.Match[str]) -> _MessageFields:
    if m.group("dur"):
        return {"kind": WAIT_DONE, "cause": m.group("cause"), "blocked_on": m.group("on"),
                "duration_ns": duration_ns(m.group("dur"))}
    return {"kind": WAIT_DONE, "cause": m.group("cause2"), "duration_ns": duration_ns(m.group("dur2"))}


def _clamp(m: re.Match[str]) -> _MessageFields:
    to = size_bytes(m.group("b"))
    return {"kind": CLAMP, "heap_from_bytes": size_bytes(m.group("a")), "heap_to_bytes": to, "heap_limit_bytes": to}


def _oom(m: re.Match[str]) -> _MessageFields:
    limit = m.group("limit")
    return {"kind": OOM, "size_bytes": int(m.group("n")), "heap_limit_bytes": int(limit) if limit else None}


_SIMPLE: list[tuple[re.Pattern[str], Callable[[re.Match[str]], _MessageFields]]] = [
    (_BLOCKING, _blocking),
    (_WAIT_DONE, _wait_done),
    (_CLAMP, _clamp),
    (_SOFT, lambda m: {"kind": SOFT_REFS, "size_bytes": size_bytes(m.group("size"))}),
    (_OOM, _oom),
    (_SUSPEND, lambda m: {"kind": SUSPEND_ALL, "duration_ns": duration_ns(m.group("dur"))}),
    (_DALVIK_GC, _dalvik_gc),
    (_DALVIK_WAIT, lambda m: {"kind": WAIT_DONE, "blocked_on": DALVIK_WAITED_ON,
                              "duration_ns": int(m.group("dur")) * 1_000_000}),
]


class _Clock:
    """Turns prefix times into ns and remembers which clock the log is on."""

    def __init__(self, year: int):
        self.year = year
        self.kind: str | None = None
        self.yearless = False   # some date was logged without a year

    def ns(self, g: _Groups) -> int | None:
        secs = g.get("secs")
        if secs:
            whole, _, frac = secs.partition(".")
            self.kind = self.kind or ("epoch" if int(whole) >= _EPOCH_MIN_S else "monotonic")
            return int(whole) * 1_000_000_000 + int((frac + "000000000")[:9])
        date, time_ = g.get("date"), g.get("time")
        if not date or not time_:
            return None
        parts = date.split("-")
        year = int(parts[0]) if len(parts) == 3 else self.year
        self.yearless = self.yearless or len(parts) != 3
        month, day = int(parts[-2]), int(parts[-1])
        hms, _, frac = time_.partition(".")
        h, mi, s = (int(x) for x in hms.split(":"))
        try:
            epoch_s = calendar.timegm((year, month, day, h, mi, s, 0, 0, 0))
        except (ValueError, OverflowError):
            return None
        if not (1 <= month <= 12 and 1 <= day <= 31 and h < 24 and mi < 60 and s < 62):
            return None
        self.kind = self.kind or "wall"
        return epoch_s * 1_000_000_000 + int((frac + "000000000")[:9])


def _prefix_fields(prefix: str, previous: str, clock: _Clock) -> tuple[_PrefixFields | None, bool]:
    """(pid, tid, tag, package and ts_ns from a line's prefix (or the `-v long` header line before it), whether the
    prefix was read only in part); None when no format explains the prefix. In part: the brief/tag forms found after
    text holding a time that no format read (a layout not known, its time and ids lost)."""
    if not prefix.strip():
        m = _LONG_HEADER.match(previous.strip()) if previous else None
        if not m:
            return {}, False
        g = m.groupdict()
        tid = g["tid"] or ""   # the header's pattern requires pid and tid
        return {"pid": int(g["pid"] or ""), "tid": int(tid, 16) if tid.startswith("0x") else int(tid),
                "tag": g["tag"] or None, "ts_ns": clock.ns(g)}, False
    m = _prefix_match(prefix)
    if m is None:
        return None, False
    g = m.groupdict()
    partial = not (g.get("time") or g.get("secs")) and bool(_UNREAD_TIME.search(prefix, 0, m.start() + 1))
    return _fields_of(g, clock), partial


def _prefix_match(prefix: str) -> re.Match[str] | None:
    for rx in _PREFIXES:
        m = rx.search(prefix)
        if m:
            return m
    return None


def _gc_lines(text: str) -> Iterator[tuple[int, str, int]]:
    """(line start, line, message offset) of each line with GC words whose message parses, in text order."""
    last = -1
    for hit in _mark_positions(text):
        start = text.rfind("\n", 0, hit) + 1
        if start == last:
            continue
        last = start
        end = text.find("\n", hit)
        line = text[start:len(text) if end < 0 else end].rstrip("\r")
        got = _message(line) if len(line) <= MAX_LINE else None
        if got is not None:
            yield start, line, got[0]


def logcat_gc_lines(text: str, need: int = 1) -> int:
    """How many of the text's GC lines (up to `need`) are logcat lines: a known logcat prefix, read whole, that
    starts the line (after indentation or a comment marker), or a `-v long` header on the line before. Prose that
    names a GC message has no such prefix (file detection takes one such line for a log, as it takes one
    threadtime GC line)."""
    seen = 0
    for start, line, offset in _gc_lines(text):
        prefix = line[:offset]
        if not prefix.strip():
            prev_start = text.rfind("\n", 0, max(0, start - 1)) + 1
            ok = start > 0 and bool(_LONG_HEADER.match(text[prev_start:start - 1].strip()))
        else:
            m = _prefix_match(prefix)
            ok = m is not None and bool(_LINE_LEAD.fullmatch(prefix[:m.start()]))
        seen += ok
        if seen >= need:
            break
    return seen


def _fields_of(g: _Groups, clock: _Clock) -> _PrefixFields:
    out: _PrefixFields = {"ts_ns": clock.ns(g)}
    pid, tid_ = g.get("pid"), g.get("tid")
    if pid:
        out["pid"] = int(pid)
    if tid_:
        out["tid"] = int(tid_)
    tag, package = g.get("tag"), g.get("package")
    cols = (g.get("cols") or "").split()
    if cols:   # Android Studio: "tag package", either column may be blank
        if len(cols) >= 2:
            tag, package = cols[0], cols[-1]
        elif "." in cols[0]:
            package = cols[0]
        else:
            tag = cols[0]
    out["tag"] = tag.strip() if tag and tag.strip() else None
    out["package"] = package if package and not package.startswith("pid-") else None
    return out


def year_of_bugreport(text: str) -> int | None:
    """The capture year from a bugreport's `== dumpstate: YYYY-MM-DD` header, if present."""
    m = _DUMPSTATE_YEAR.search(text, 0, 65536)
    return int(m.group(1)) if m else None


def _find_all(text: str, word: str) -> Iterator[int]:
    """Each position of `word` in `text`, in order, not overlapping (str.find: C speed)."""
    i = text.find(word)
    while i >= 0:
        yield i
        i = text.find(word, i + len(word))


def _mark_positions(text: str) -> list[int]:
    """Where the fixed words of GC messages occur, in text order (str.find per word: C speed, no regex engine)."""
    return sorted(i for word in MARK_WORDS + DALVIK_WORDS for i in _find_all(text, word))


class _Lines:
    """Line numbers of positions in a text, counted from the last one asked (positions asked in about text order
    cost one pass in all)."""

    def __init__(self, text: str):
        self.text, self.pos, self.line = text, 0, 1

    def at(self, pos: int) -> int:
        if pos >= self.pos:
            self.line += self.text.count("\n", self.pos, pos)
        else:
            self.line -= self.text.count("\n", pos, self.pos)
        self.pos = pos
        return self.line


class _Repeats:
    """A log is in time order. Where the time goes back by more than a second and the lines that follow repeat
    earlier ones word for word, the text holds a second copy of a stretch (a log pasted twice, a bugreport section
    repeating the tail of another): those lines are read once. Counted per line text, so a line genuinely logged
    several times in one millisecond keeps all its copies."""

    BACK_NS = 1_000_000_000

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        self.replayed: Counter[str] = Counter()
        self.max_ts: int | None = None
        self.replaying = False
        self.skipped: list[int] = []

    def is_repeat(self, line: str, ts: int | None, line_no: int) -> bool:
        if ts is None:
            return False
        back = self.max_ts is not None and ts < self.max_ts - self.BACK_NS
        if (back or self.replaying) and self.seen[line] > self.replayed[line]:
            self.replaying = True
            self.replayed[line] += 1
            self.skipped.append(line_no)
            return True
        self.replaying = False
        self.replayed.clear()
        self.seen[line] += 1
        self.max_ts = ts if self.max_ts is None else max(self.max_ts, ts)
        return False


def read_gc_log_text(text: str, source: str, year: int | None = None) -> GcLog:
    """Every ART GC line in `text` as events, in text order; repeated copies of a stretch of the log are read once
    (see _Repeats), with a warning. year: for dates logged without one (default: the bugreport header's year if
    the text has one)."""
    year = year or year_of_bugreport(text)
    log = GcLog(source=source, year=year or DEFAULT_YEAR, year_known=year is not None)
    clock = _Clock(year or DEFAULT_YEAR)
    repeats = _Repeats()
    lines, last_line_start = _Lines(text), -1
    unknown_prefix: list[int] = []
    for hit in _mark_positions(text):
        start = text.rfind("\n", 0, hit) + 1
        if start == last_line_start:
            continue   # two marks on one line
        last_line_start = start
        end = text.find("\n", hit)
        end = len(text) if end < 0 else end
        line_no = lines.at(start)
        line = text[start:end].rstrip("\r")
        if len(line) > MAX_LINE:
            log.warnings.append(ReadWarning(source, f"line of {len(line)} characters with GC words; skipped",
                                            line=line_no))
            continue
        got = _message(line)
        if got is None:
            log.warnings.append(ReadWarning(source, "GC log line not understood; skipped", line=line_no))
            continue
        offset, fields = got
        prev = ""
        if not line[:offset].strip() and start > 0:
            p_end = start - 1
            p_start = text.rfind("\n", 0, p_end) + 1
            prev = text[p_start:p_end]
        pf, partial = _prefix_fields(line[:offset], prev, clock)
        if pf is None or partial:
            unknown_prefix.append(line_no)
        pf = pf or {}
        if repeats.is_repeat(line, pf.get("ts_ns"), line_no):
            continue
        log.events.append(GcLogEvent(line=line_no, **pf, **fields))
    log.lines_scanned = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    log.clock = clock.kind
    log.year_known = log.year_known or (clock.kind == "wall" and not clock.yearless)
    if repeats.skipped:
        log.warnings.append(ReadWarning(source, f"{len(repeats.skipped)} GC line(s) repeat earlier lines after the "
                                                "time went back (a log copied twice, or a section repeating "
                                                "another): read once", line=repeats.skipped[0]))
    if unknown_prefix:
        log.warnings.append(ReadWarning(source, f"{len(unknown_prefix)} GC line(s) with a prefix in no known logcat "
                                                "format: read without process, thread or time (at most the tag "
                                                "and pid of a brief-form ending)",
                                        line=unknown_prefix[0]))
    return log


# ART's SIGQUIT dump (Heap::DumpForSigQuit, DumpGcPerformanceInfo): per-process GC totals since start.
_DUMP_START = re.compile(r"^----- pid (\d+) at ([^\n]{0,64}?) -----[ \t\r]*$", re.M)
_CMDLINE = re.compile(r"^Cmd line: ?([^\n\r]*)", re.M)
_HIST = re.compile(r"^Start Dumping histograms for (\d+) iterations for ([^\n\r]+?)\s*$", re.M)
_PAUSED = re.compile(r"^([a-z][^\n:]*?) paused:\s+Sum: (\S+) [^\n]*?Max: (\S+)\s*$", re.M)
_TOTAL = re.compile(r"^([a-z][^\n:]*?) total time: (\S+) mean time: \S+\s*$", re.M)
_FREED = re.compile(r"^([a-z][^\n:]*?) freed: (\d+) objects with total size (\S+)\s*$", re.M)
_HEAP = re.compile(r"^Heap: (\d+)% free, (\S+)/(\S+); \d+ objects", re.M)
_HEAP_TASK_DAEMON = re.compile(r'^"HeapTaskDaemon"[^\n]*\n((?:[ \t]+\|[^\n]*\n){1,8})', re.M)
_COLLECTOR_WORDS = re.compile(r"copying|sweep|compact|semispace|mark")
_WAITING_FOR_GC = re.compile(r'^"([^"\n]{0,200})"(?: daemon)? prio=\d+ tid=(\d+) (WaitingForGcToComplete|WaitingPerformingGc)',
                             re.M)
_SCHEDSTAT = re.compile(r"schedstat=\( ?(\d+) \d+ \d+ ?\)")
_TICKS = re.compile(r"utm=(\d+) stm=(\d+)(?:[^\n]*?HZ=(\d+))?")
_DUMP_TOTALS: list[tuple[str, re.Pattern[str], str | Callable[[str], int]]] = [   # (field, regex, parser)
    ("gc_count", re.compile(r"^Total GC count: (\d+)", re.M), int),
    ("gc_time_ns", re.compile(r"^Total GC time: (\S+)", re.M), "dur"),
    ("blocking_gc_count", re.compile(r"^Total blocking GC count: (\d+)", re.M), int),
    ("blocking_gc_time_ns", re.compile(r"^Total blocking GC time: (\S+)", re.M), "dur"),
    ("wait_for_gc_ns", re.compile(r"^Total time waiting for GC to complete: (\S+)", re.M), "dur"),
    ("mutator_paused_ns", re.compile(r"^Total mutator paused time: (\S+)", re.M), "dur"),
    ("max_memory_bytes", re.compile(r"^Max memory (\S+)", re.M), "size"),
    ("bytes_allocated", re.compile(r"^Total bytes allocated (\S+)", re.M), "size"),
    ("bytes_freed", re.compile(r"^Total bytes freed (\S+)", re.M), "size"),
]


def _value(text: str, how: str | Callable[[str], int]) -> int | None:
    try:
        if how == "dur":
            return 0 if text == "0" else duration_ns(text)
        if how == "size":
            return size_bytes(text)
        if isinstance(how, str):
            raise KeyError(how)   # no such unit
        return how(text)
    except (ValueError, KeyError):
        return None


def _collectors(block: str) -> list[CollectorStats]:
    stats: dict[str, _CollectorFields] = {}
    for m in _HIST.finditer(block):
        stats.setdefault(m.group(2), {})["iterations"] = int(m.group(1))
    for m in _PAUSED.finditer(block):
        one = stats.setdefault(m.group(1), {})
        one["paused_ns"], one["paused_max_ns"] = _value(m.group(2), "dur"), _value(m.group(3), "dur")
    for m in _TOTAL.finditer(block):
        stats.setdefault(m.group(1), {})["total_ns"] = _value(m.group(2), "dur")
    for m in _FREED.finditer(block):
        one = stats.setdefault(m.group(1), {})
        one["freed_objects"], one["freed_bytes"] = int(m.group(2)), _value(m.group(3), "size")
    # "JIT timings" and other histograms share the format: keep collectors only
    return [CollectorStats(name, **v) for name, v in stats.items() if _COLLECTOR_WORDS.search(name)]


def _daemon_cpu(block: str) -> int | None:
    at = block.find('\n"HeapTaskDaemon"')
    m = _HEAP_TASK_DAEMON.match(block, at + 1) if at >= 0 else None
    if not m:
        return None
    lines = m.group(1)
    ss = _SCHEDSTAT.search(lines)
    if ss and int(ss.group(1)) > 0:
        return int(ss.group(1))
    t = _TICKS.search(lines)
    if t:
        hz = int(t.group(3) or 100)
        return (int(t.group(1)) + int(t.group(2))) * 1_000_000_000 // max(1, hz)
    return None


def _dump(block: str, source: str, line: int, pid: int | None, when: str) -> ArtGcDump | None:
    d = ArtGcDump(source=source, line=line, pid=pid, time=when.strip() or None)
    cmd = _CMDLINE.search(block, 0, 4096)
    d.process = cmd.group(1).strip() if cmd else None
    threads_at = block.find("\nDALVIK THREADS")
    head = block[:threads_at] if threads_at >= 0 else block   # ART prints the heap section before the threads
    heap_at = head.find("\nHeap: ")
    head = head[heap_at:] if heap_at >= 0 else head
    for name, rx, how in _DUMP_TOTALS:
        m = rx.search(head)
        if m:
            setattr(d, name, _value(m.group(1), how))
    h = _HEAP.search(head)
    if h:
        d.heap_free_percent = int(h.group(1))
        d.heap_used_bytes, d.heap_total_bytes = _value(h.group(2), "size"), _value(h.group(3), "size")
    d.collectors = _collectors(head)
    if d.gc_count is None and not d.collectors and h is None:
        return None   # a native process or a dump without ART's heap section
    d.heap_task_daemon_cpu_ns = _daemon_cpu(block)
    if "WaitingForGcToComplete" in block or "WaitingPerformingGc" in block:
        d.threads_waiting_for_gc = [(m.group(1), int(m.group(2)) == 1, m.group(3))
                                    for m in _WAITING_FOR_GC.finditer(block)]
    return d


# The words that open ART's GC section (Heap::DumpGcPerformanceInfo) and its totals; with `----- pid `, the words
# by which a dump printed through logcat is found.
_GC_SECTION_WORDS = ("Dumping cumulative Gc timings", "Total GC count: ")
_DUMP_WORDS = ("----- pid ",) + _GC_SECTION_WORDS
_DUMP_END = re.compile(r"----- end (\d+) -----\s*$")
_HEADLESS_WARNING = ("ART process dump without its `----- pid N at TIME -----` header (pasted without it?): its GC "
                     "totals are read as one dump whose pid and time are unknown")
# Where a logcat entry's message may begin: after a `:` or `)` and one space (the tag's end), or after a run of
# blanks (Android Studio's column layout). The prefix before it must be one the log reader's _PREFIXES read whole.
_ENTRY_SPLIT = re.compile(r"[:)] ?|\s+")
# Splits tried per line: every prefix format ends at one of its first dozen (threadtime with year, uid, usec and zone,
# a tag of several words, a quote marker before it); a line with many `: ` before a dump's words (a grep'd or wrapped
# text) costs no more than that.
_ENTRY_SPLITS = 20
_PROCESS_FORM_TAG = re.compile(r"\s+\(([^()\n]*)\)\s*$")   # `-v process` puts the tag after the message
_LOOK_BACK = 500      # lines looked back from a dump's GC words printed through logcat, for the start of its entries
_FOREIGN_RUN = 500    # lines of other writers after which a dump printed through logcat is taken to have ended
_MAX_STRETCH_LINES = 20_000   # a dump's worth of lines: no dump printed through logcat is read past this many
# The shapes of the lines ART prints in a process dump (SignalCatcher's head, ClassLinker, InternTable, JavaVM,
# Heap::DumpForSigQuit and DumpGcPerformanceInfo with each collector's DumpPerformanceInfo, the oat files, the JIT, the
# suspend-all histogram, ThreadList::Dump), matched at a message's first non-blank: where a dump printed through
# logcat without its `----- pid` header ends (its writer's first entry of another shape).
_DUMP_LINE = re.compile(
    r"$|-----|\||at |- |native: |kernel: |\(|\"|#\d|/|DALVIK THREADS|"
    r"(?:Cmd line|Build fingerprint|ABI|Build type|Classes initialized|Intern table|JNI|Libraries|Heap):|"
    r"Zygote loaded classes=|Dumping |Done [Dd]umping |Start Dumping histograms |"
    r"Total |Mean GC |Free memory|Max memory |Zygote |Histogram of |Native bytes |Registered native bytes|"
    r"Peak-rss |Freed-bytes |Current |Memory used for |JIT |ProfileSaver |Running non JIT|"
    r"[^:\n]{1,120}:\s+(?:Sum|Avg): |"
    r"[a-z][^:\n]{0,80} (?:total time|freed|throughput|mean time|paused):")
# ART's totals after `Total GC count:` (Heap::DumpGcPerformanceInfo, Android 6 to 15): where a section's totals end.
_AFTER_COUNT = re.compile(r"Total (?:GC time|blocking GC count|blocking GC time|pre-OOME GC count|native bytes at "
                          r"last GC)|Histogram of |Native bytes total|Registered native bytes")
# ... and before it, from `Total time spent in GC` on: how far back a section pasted from its totals reaches.
_BEFORE_COUNT = re.compile(r"Total (?:time spent in GC|number of allocations|bytes allocated|bytes freed|memory |"
                           r"mutator paused time|time waiting for GC to complete)|Mean GC |Free memory|Max memory |"
                           r"Zygote space size ")
_TOTALS_LINES = 32    # lines looked at on either side of a `Total GC count:` for the rest of its totals


def _line_at(text: str, start: int) -> tuple[str, int]:
    """The line that starts at `start` (CR dropped) and where the next one starts."""
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    return text[start:end].rstrip("\r"), end + 1


def _entry(line: str) -> _Entry | None:
    """A logcat entry line read by the log reader's prefix formats (_PREFIXES, after the indentation or comment
    marker _LINE_LEAD allows): (where its message begins, the message, (tag, pid) of its writer); None for any
    other line."""
    for n, c in enumerate(_ENTRY_SPLIT.finditer(line, 0, min(len(line), 256))):
        if n == _ENTRY_SPLITS:
            break
        m = _prefix_match(line[:c.end()])
        if m is None or not _LINE_LEAD.fullmatch(line[:m.start()]):
            continue
        f = _fields_of(m.groupdict(), _Clock(DEFAULT_YEAR))
        at = c.end()
        if m.re is _PREFIXES[1]:   # Android Studio's columns: two blanks after the level, then the message
            at = min(at, len(line[:at].rstrip()) + 3)
        message, tag = line[at:], f.get("tag")
        if m.re is _PREFIXES[4]:   # `-v process`: `I( pid) message  (tag)`
            t = _PROCESS_FORM_TAG.search(message)
            message, tag = (message[:t.start()], t.group(1)) if t else (message, None)
        return at, message, (tag or f.get("package"), f.get("pid"))
    return None


_Writer = tuple[str | None, int | None]   # an entry's writer: its tag (or package) and pid
_Entry = tuple[int, str, _Writer]


def _entry_at(text: str, pos: int, seen: dict[int, _Entry | None]) -> _Entry | None:
    """_entry of the line starting at `pos`, each line read once however many stretches look at it."""
    if pos not in seen:
        line = _line_at(text, pos)[0]
        seen[pos] = _entry(line) if line.strip() else None
    return seen[pos]


def _is_continuation(line: str) -> bool:
    """A line that continues the logcat entry above it (a multi-line message shown once with its prefix)."""
    return not line.strip() or line[0] in " \t"


def _logcat_entry_of(text: str, hit: int, known: dict[int, int | None], seen: dict[int, _Entry | None]) -> int | None:
    """Where the logcat entry line starts whose message holds the dump words at `hit`: the hit's own line when its
    message begins with them, or the entry line that the hit's indented line continues. None when there is none.
    known: the answer for indented lines already walked over (each line is walked over once); seen: as _entry_at."""
    start = text.rfind("\n", 0, hit) + 1
    line, _ = _line_at(text, start)
    if line[:hit - start].strip():   # a prefix before the words: a logcat entry's, whose message they begin?
        e = _entry_at(text, start, seen)
        return start if e is not None and e[0] == hit - start else None
    walked = [start]
    got: int | None = None
    for _ in range(_LOOK_BACK):
        if start in known:
            got = known[start]
            break
        if start == 0:
            break
        start = text.rfind("\n", 0, start - 1) + 1
        line, _ = _line_at(text, start)
        if not _is_continuation(line):
            got = start if _entry_at(text, start, seen) is not None else None
            break
        walked.append(start)
    for w in walked:
        known[w] = got
    return got


def _dump_shaped(message: str) -> bool:
    """Whether an entry's message is a line ART prints in a process dump (_DUMP_LINE)."""
    return bool(_DUMP_LINE.match(message.strip()))


# One line of a dump printed through logcat: (its text without the logcat prefix, its line number, where it starts
# and where the next line starts in the text, whether it continues the entry above it).
_Taken = tuple[str, int, int, int, bool]


class _Stretch:
    """The lines of one writer (tag and pid) that make one dump printed through logcat, as _logcat_dumps takes them.
    With a `----- pid` header the stretch runs to its `----- end` line; without one (a GC section printed from
    `Cmd line:`, `Heap:` or its timings on) it ends before its writer's first entry that is no dump line
    (_DUMP_LINE) or its next `----- pid`, and after a `----- end`. Either way at most _MAX_STRETCH_LINES lines."""

    def __init__(self, writer: _Writer):
        self.writer = writer
        self.lines: list[_Taken] = []
        self.header_pid: str | None = None
        self.last = 0         # the line number of its last line
        self.done = False

    def takes(self, message: str) -> bool:
        """Whether the next entry of its writer, with this message, is part of the dump."""
        if self.header_pid is not None:
            return True
        return _dump_shaped(message) and not message.lstrip().startswith("----- pid ")

    def add(self, taken: _Taken) -> None:
        message, number, _, _, continued = taken
        self.lines.append(taken)
        self.last = number
        if not continued:
            h = _DUMP_START.match(message)
            if h:
                self.header_pid = h.group(1)
            end = _DUMP_END.match(message)
            if end and (self.header_pid is None or end.group(1) == self.header_pid):
                self.done = True
        if len(self.lines) >= _MAX_STRETCH_LINES:
            self.done = True

    def result(self) -> tuple[int, int, str, list[int]]:
        """(start and end of the stretch in the text, the dump's text with the indentation its continuation lines
        share undone, each of its lines' number in the text)."""
        out = [t[0] for t in self.lines]
        continued = [i for i, t in enumerate(self.lines) if t[4]]
        indent = min((len(out[i]) - len(out[i].lstrip(" \t")) for i in continued if out[i].strip()), default=0)
        for i in continued:
            out[i] = out[i][indent:]
        return self.lines[0][2], self.lines[-1][3], "\n".join(out) + "\n", [t[1] for t in self.lines]


def _lines_back(text: str, pos: int, count: int, floor: int) -> int:
    """Where the line starts `count` lines before the one at `pos`, or `floor` if that is later."""
    for _ in range(count):
        if pos <= floor:
            return floor
        pos = text.rfind("\n", 0, pos - 1) + 1
    return max(pos, floor)


class _Sweep:
    """The one pass of _logcat_dumps: the stretches open (one per writer), each writer's latest run of dump lines
    not in a stretch (a headless dump's start, at most _LOOK_BACK lines back), and the stretches read."""

    def __init__(self, text: str, triggers: list[int], seen: dict[int, _Entry | None]):
        self.text, self.triggers, self.seen = text, triggers, seen
        self.trigger_set = set(triggers)
        self.out: list[tuple[int, int, str, list[int]]] = []
        self.open: dict[_Writer, _Stretch] = {}
        self.latest: dict[str | None, _Stretch] = {}   # per tag, the stretch opened last (for entries without a pid)
        self.pending: dict[_Writer, deque[_Taken]] = {}
        self.last: _Stretch | deque[_Taken] | None = None   # where the last entry line went (its continuations too)
        self.horizon = -1   # past this line number no open stretch takes another line (_FOREIGN_RUN)

    def run(self) -> list[tuple[int, int, str, list[int]]]:
        text, triggers = self.text, self.triggers
        counter = _Lines(text)
        pos, number, k, reached = 0, 1, 0, -1
        while pos < len(text):
            while k < len(triggers) and triggers[k] < pos:
                k += 1
            if self.open and number > self.horizon:
                self.close_all()
            if not self.open:   # nothing open: on to the lines just before the next dump's first entry
                if k == len(triggers):
                    break
                lo = pos if reached == k else self.window(triggers[k], pos)
                reached = k
                if lo > pos:
                    self.pending.clear()
                    self.last = None
                    pos, number = lo, counter.at(lo)
            line, nxt = _line_at(text, pos)
            e = _entry_at(text, pos, self.seen)
            if e is not None:
                self.entry(e[1], e[2], (e[1], number, pos, nxt, False))
            elif _is_continuation(line):
                self.continuation((line, number, pos, nxt, True))
            else:   # neither an entry nor a continuation: every stretch ends here
                self.close_all()
                self.pending.clear()
                self.last = None
            pos, number = nxt, number + 1
        self.close_all()
        return sorted(self.out)

    def window(self, trigger: int, pos: int) -> int:
        """Where the pass resumes for the dump found at `trigger`: there for a `----- pid` header, else _LOOK_BACK
        lines before it (its writer's dump lines just before it are its start); never before `pos`."""
        e = self.seen.get(trigger)
        if e is not None and e[1].startswith("----- pid "):
            return max(trigger, pos)
        return _lines_back(self.text, trigger, _LOOK_BACK, pos)

    def close(self, s: _Stretch) -> None:
        if self.open.get(s.writer) is s:
            del self.open[s.writer]
            self.out.append(s.result())
        if self.last is s:
            self.last = None

    def close_all(self) -> None:
        for s in list(self.open.values()):
            self.close(s)

    def take(self, s: _Stretch, taken: _Taken) -> None:
        s.add(taken)
        self.horizon = max(self.horizon, taken[1] + _FOREIGN_RUN)
        self.last = s
        if s.done:
            self.close(s)

    def find(self, writer: _Writer) -> _Stretch | None:
        """The open stretch of a writer: of its tag and pid, or of its tag where either has no pid (a log mixing
        layouts with and without pids)."""
        s = self.open.get(writer)
        if s is None:
            tag, pid = writer
            s = self.latest.get(tag) if pid is None else self.open.get((tag, None))
        return s if s is not None and self.open.get(s.writer) is s else None

    def entry(self, message: str, writer: _Writer, taken: _Taken) -> None:
        number, pos = taken[1], taken[2]
        s = self.find(writer)
        if s is not None and (number - s.last > _FOREIGN_RUN or not s.takes(message)):
            self.close(s)
            s = None
        if s is None and pos in self.trigger_set:
            s = self.open[writer] = self.latest[writer[0]] = _Stretch(writer)
            for before in _trimmed(self.pending.pop(writer, deque()), number):
                s.add(before)
        if s is not None:
            self.take(s, taken)
        elif _dump_shaped(message) and not message.lstrip().startswith("-----"):
            buf = self.pending.setdefault(writer, deque())
            buf.append(taken)
            _trimmed(buf, number)
            self.last = buf
        else:
            self.pending.pop(writer, None)
            self.last = None

    def continuation(self, taken: _Taken) -> None:
        if isinstance(self.last, _Stretch):
            self.take(self.last, taken)
        elif self.last is not None:
            self.last.append(taken)


def _trimmed(buf: deque[_Taken], number: int) -> deque[_Taken]:
    """`buf` without its lines more than _LOOK_BACK lines before line `number` (nor a continuation left without its
    entry)."""
    while buf and (buf[0][1] < number - _LOOK_BACK or buf[0][4]):
        buf.popleft()
    return buf


def _logcat_dumps(text: str) -> list[tuple[int, int, str, list[int]]]:
    """Every ART process dump printed through logcat (an app printing its own traces to System.out, say) in `text`,
    with its logcat prefixes undone: (start and end of its stretch in `text`, the dump's text, each of its lines'
    number in `text`). A dump is found by an entry whose message begins with `----- pid `, `Dumping cumulative Gc
    timings` or `Total GC count: ` (or an indented line of such an entry); it is its writer's entries (and their
    indented continuation lines) from there, other writers' entries in between left out (see _Stretch for where it
    ends; it ends too after _FOREIGN_RUN lines in a row of other writers, or at a line that is neither an entry nor
    a continuation). Without a `----- pid` line its writer's dump lines (_DUMP_LINE) just before it, at most
    _LOOK_BACK lines back, are its start (`Cmd line:`, `Heap:`...).

    One pass (_Sweep) over the text from _LOOK_BACK lines before the first such entry to where the last stretch
    ends, each line read once however many writers print at once; stretches far apart are reached by a jump. A text
    whose dumps all start their lines costs three str.find passes."""
    hits = sorted(i for w in _DUMP_WORDS for i in _find_all(text, w) if i > 0 and text[i - 1] != "\n")
    seen: dict[int, _Entry | None] = {}   # the lines read as logcat entries (or not), by where they start
    known: dict[int, int | None] = {}
    triggers = sorted({at for hit in hits if (at := _logcat_entry_of(text, hit, known, seen)) is not None})
    return _Sweep(text, triggers, seen).run() if triggers else []


class _Spans:
    """Stretches of a text already read (`----- pid` blocks, dumps printed through logcat), never overlapping: which
    holds a position, and the stretch outside them around it."""

    def __init__(self, spans: list[tuple[int, int]], size: int):
        self.spans: list[tuple[int, int]] = []
        for a, b in sorted(spans):   # overlapping ones (two writers' dumps printed through logcat) as one
            if self.spans and a < self.spans[-1][1]:
                self.spans[-1] = (self.spans[-1][0], max(b, self.spans[-1][1]))
            else:
                self.spans.append((a, b))
        self.starts = [a for a, _ in self.spans]
        self.size = size

    def holds(self, pos: int) -> bool:
        k = bisect.bisect_right(self.starts, pos) - 1
        return k >= 0 and pos < self.spans[k][1]

    def gap(self, pos: int) -> tuple[int, int]:
        """The stretch outside every span that holds `pos` (a position outside them)."""
        k = bisect.bisect_right(self.starts, pos)
        lo = self.spans[k - 1][1] if k else 0
        return lo, self.starts[k] if k < len(self.starts) else self.size


def _line_start_from(text: str, pos: int) -> int:
    """`pos` if a line starts there, else where the next line starts."""
    if pos == 0 or text[pos - 1] == "\n":
        return pos
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl + 1


def _totals_end(text: str, count_at: int) -> int:
    """Where the line starts after the totals that follow the `Total GC count:` line at `count_at` (_AFTER_COUNT)."""
    _, pos = _line_at(text, count_at)
    for _ in range(_TOTALS_LINES):
        if pos >= len(text):
            return len(text)
        line, nxt = _line_at(text, pos)
        if not _AFTER_COUNT.match(line):
            break
        pos = nxt
    return min(pos, len(text))


def _totals_start(text: str, count_at: int, floor: int) -> int:
    """Where the totals before the `Total GC count:` line at `count_at` start (_BEFORE_COUNT), not before `floor`."""
    start = count_at
    for _ in range(_TOTALS_LINES):
        if start <= floor:
            break
        back = text.rfind("\n", 0, start - 1) + 1
        if back < floor or not _BEFORE_COUNT.match(_line_at(text, back)[0]):
            break
        start = back
    return start


def _first_line_with(text: str, words: tuple[str, ...], lo: int, hi: int) -> int | None:
    """Where the first line in [lo, hi) that starts with one of `words` starts; lo is a line start."""
    found = []
    for w in words:
        i = lo if text.startswith(w, lo, hi) else text.find("\n" + w, lo, hi) + 1
        if i > 0 or (i == 0 and lo == 0 and text.startswith(w, 0, hi)):
            found.append(i)
    return min(found, default=None)


def _headless_dumps(text: str, source: str, spans: _Spans, warnings: list[ReadWarning]) -> list[ArtGcDump]:
    """ART's GC section outside every `----- pid` block (`spans`): a dump pasted without its header, starting at
    `Cmd line:`, `Heap:` or the GC timings themselves, or what is left of a dump whose header was cut off. One dump
    per `Dumping cumulative Gc timings` (a `Total GC count:` without one before it in the same stretch starts its
    own); its pid and time are unknown (never guessed), said in a warning.

    ART prints the section (Heap::DumpGcPerformanceInfo) as `Dumping cumulative Gc timings`, each collector's
    histograms and figures, then the totals (`Total time spent in GC` ... `Total GC count:`, `Total GC time:`,
    `Total blocking GC count/time:`, `Histogram of ...`). A dump runs from the last `Cmd line:` (else `Heap:`) line
    before its section, else from where the stretch begins (the first), or from its own `Dumping cumulative Gc
    timings` (those after another section's totals; a lone `Total GC count:`: from the totals just before it); it
    ends where the next one begins, or at a `Cmd line:` or `Heap:` line after its totals, or where the stretch ends.
    The next one never starts before the totals of the one before end, so that no section gets the other's."""
    marks = sorted((i, w) for w in _GC_SECTION_WORDS for i in _find_all(text, w)
                   if (i == 0 or text[i - 1] == "\n") and not spans.holds(i))
    anchors: list[int] = []
    counts: list[bool] = []    # whether the dump's section is known only by a lone `Total GC count:`
    ends: list[int] = []       # where the dump's totals end (a section without its count: its first line's end)
    open_section = False
    for i, word in marks:
        if word == _GC_SECTION_WORDS[1] and open_section and spans.gap(anchors[-1]) == spans.gap(i):
            open_section = False   # the totals of the section opened before
            ends[-1] = _totals_end(text, i)
            continue
        anchors.append(i)
        counts.append(word == _GC_SECTION_WORDS[1])
        ends.append(_totals_end(text, i) if counts[-1] else _line_at(text, i)[1])
        open_section = word == _GC_SECTION_WORDS[0]
    starts = []
    for k, a in enumerate(anchors):
        lo, _ = spans.gap(a)
        if k and spans.gap(anchors[k - 1]) == spans.gap(a):   # after another dump's totals
            lo = min(max(lo, ends[k - 1]), a)
            begin = _totals_start(text, a, lo) if counts[k] else a
        else:
            begin = _line_start_from(text, lo)
        for word in ("Heap: ", "Cmd line:"):   # the later found wins: Cmd line opens a dump, Heap its GC part
            at = max((i for i in _find_all(text[lo:a], word) if lo + i == 0 or text[lo + i - 1] == "\n"), default=None)
            if at is not None:
                begin = lo + at
        starts.append(min(begin, a))
    out = []
    lines = _Lines(text)
    for k, (a, begin) in enumerate(zip(anchors, starts, strict=True)):
        _, hi = spans.gap(a)
        stop = starts[k + 1] if k + 1 < len(starts) and spans.gap(anchors[k + 1]) == spans.gap(a) else hi
        after = _first_line_with(text, ("Cmd line:", "Heap: "), max(ends[k], begin), stop)   # another dump's start
        if after is not None:
            stop = after
        line = lines.at(begin)
        d = _dump(text[begin:stop], source, line, None, "")
        if d is not None:
            out.append(d)
            warnings.append(ReadWarning(source, _HEADLESS_WARNING, line=line))
    return out


def _read_dumps(text: str, source: str, warnings: list[ReadWarning],
                exclude: list[tuple[int, int]]) -> list[ArtGcDump]:
    """The dumps of `text` with their `----- pid` headers, then its headless ones; `exclude`: stretches read
    elsewhere (dumps printed through logcat)."""
    out: list[ArtGcDump] = []
    read_elsewhere = _Spans(exclude, len(text))
    starts = []
    i = text.find("----- pid ")
    while i >= 0:   # str.find, then the full header checked where the words are (a multiline regex is slow)
        if (i == 0 or text[i - 1] == "\n") and not read_elsewhere.holds(i):
            m = _DUMP_START.match(text, i)
            if m:
                starts.append(m)
        i = text.find("----- pid ", i + 10)
    spans = list(exclude)
    excluded = sorted(a for a, _ in exclude)
    lines = _Lines(text)
    for k, m in enumerate(starts):
        stop = starts[k + 1].start() if k + 1 < len(starts) else len(text)
        j = bisect.bisect_left(excluded, m.end())   # a stretch read elsewhere after the header ends the block
        stop = min(stop, excluded[j]) if j < len(excluded) else stop
        end_words = f"----- end {m.group(1)} -----"
        end = text.find(end_words, m.end(), stop)
        spans.append((m.start(), end + len(end_words) if end >= 0 else stop))
        d = _dump(text[m.end():end if end >= 0 else stop], source, lines.at(m.start()), int(m.group(1)), m.group(2))
        if d is not None:
            out.append(d)
    return out + _headless_dumps(text, source, _Spans(spans, len(text)), warnings)


def read_gc_dumps_text(text: str, source: str, warnings: list[ReadWarning] | None = None) -> list[ArtGcDump]:
    """The GC part of every ART process dump in `text`, in text order: each `----- pid N at TIME -----` ...
    `----- end N -----` block; a GC section outside every block (a dump pasted without its header) as one dump of
    unknown pid and time, with a warning; and dumps printed through logcat (each line behind a logcat prefix, or
    the indented continuation of an entry), read once their prefixes are undone. warnings: where to add the
    reader's warnings."""
    warnings = warnings if warnings is not None else []
    printed = _logcat_dumps(text)
    out = _read_dumps(text, source, warnings, [(a, b) for a, b, _, _ in printed])
    for _, _, dump_text, numbers in printed:
        mine: list[ReadWarning] = []
        for d in _read_dumps(dump_text, source, mine, []):
            d.line = numbers[d.line - 1]
            out.append(d)
        warnings += [ReadWarning(w.path, w.message, line=numbers[w.line - 1] if w.line else None)
                     for w in mine]
    out.sort(key=lambda d: d.line)
    return out


def decode_text(data: bytes, source: str | Path = "<log>", warnings: list[ReadWarning] | None = None) -> str:
    """Log bytes as text: UTF-8 with a BOM dropped; undecodable bytes replaced (logs carry binary junk) and
    reported; every line-ending convention read as LF (droidlag.io.source.decode_text)."""
    from droidlag.io.source import decode_text as decode
    return decode(data, source, warnings if warnings is not None else []).lstrip("\ufeff")


def _texts(path: str | Path, data: bytes | None) -> tuple[list[tuple[str, str]], bool, list[ReadWarning]]:
    """(name, text) of a file (gzip undone) or of a bugreport zip's `bugreport*.txt` entries; whether it was a zip;
    warnings. InputError when nothing can be read."""
    from droidlag.io.archive import open_zip, safe_entries
    from droidlag.io.source import GZIP_MAGIC, gunzip, read_bytes

    warnings: list[ReadWarning] = []
    if data is None:
        data = read_bytes(path)
    if data[:2] == GZIP_MAGIC:
        data = gunzip(data, path, warnings)
    if data[:4] != b"PK\x03\x04":
        return [(str(path), decode_text(data, path, warnings))], False, warnings

    def wanted(info: zipfile.ZipInfo) -> bool:
        base = info.filename.lower().rsplit("/", 1)[-1]
        return base.startswith("bugreport") and base.endswith(".txt")

    texts = [(f"{path}!{name}", decode_text(raw, f"{path}!{name}", warnings)) for name, raw in safe_entries(path, open_zip(path, data), warnings,
                                                                                  wanted)]
    if not texts:
        raise InputError(path, "zip holds no bugreport text (bugreport*.txt) to read GC lines from")
    return texts, True, warnings


def read_device_gc(path: str | Path, data: bytes | None = None,
                   year: int | None = None) -> tuple[GcLog, list[ArtGcDump]]:
    """Everything ART says about GC in one file, decoded once: its GC log lines (a bugreport's repeated log tails
    read once) and the GC part of every process dump in it. InputError when the file cannot be read at all."""
    texts, zipped, warnings = _texts(path, data)
    logs = [read_gc_log_text(text, name, year) for name, text in texts]
    dumps = [d for name, text in texts for d in read_gc_dumps_text(text, name, warnings)]
    log = logs[0]
    for other in logs[1:]:
        log.events += other.events
        log.warnings += other.warnings
        log.lines_scanned += other.lines_scanned
    log.source = str(path)
    log.warnings[:0] = warnings
    return log, dumps


def read_gc_log(path: str | Path, data: bytes | None = None, year: int | None = None) -> GcLog:
    """The GC lines of a logcat or text file (gzip undone), or of a bugreport zip's main text."""
    return read_device_gc(path, data, year)[0]
