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

import calendar
import re
from pathlib import Path

from droidlag.errors import InputError, ReadWarning
from droidlag.models.gc import (
    CLAMP,
    COLLECTION,
    OOM,
    SOFT_REFS,
    STARTING_BLOCKING,
    SUSPEND_ALL,
    WAIT_DONE,
    WAITING_BLOCKING,
    GcLog,
    GcLogEvent,
)

_SIZE = r"\d+(?:\.\d+)?[KMGT]?B"
_DUR = r"\d+(?:\.\d+)?(?:ns|us|ms|s)"
# The fixed words every message has; one search over the text finds the candidate lines.
MARKS = re.compile(r" GC freed |a blocking GC |WaitForGcToComplete blocked|Clamp target GC heap from |"
                   r"Forcing collection of SoftReferences for |Throwing OutOfMemoryError \"Failed to allocate|"
                   r"Suspending all threads took: ")

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

# Line prefixes, one per logcat format (`logcat -v`: threadtime, time, brief, tag, thread, process, long; with
# year/uid/usec/epoch/monotonic/zone modifiers; Android Studio's old and new layouts). Each ends where the message
# begins.
_WHEN = r"(?:(?P<date>(?:\d{4}-)?\d\d-\d\d)\s+(?P<time>\d\d:\d\d:\d\d(?:\.\d+)?)|(?P<secs>\d+\.\d+))(?:\s+[+-]\d{4})?"
_PREFIXES = [
    re.compile(rf"^\s*{_WHEN}\s+(?:(?P<uid>[\w.]+)\s+)?(?P<pid>\d+)\s+(?P<tid>\d+)\s+[VDIWEFAS]\s+(?P<tag>.*?)\s*:\s*$"),
    re.compile(r"^\s*(?P<date>\d{4}-\d\d-\d\d)\s+(?P<time>\d\d:\d\d:\d\d(?:\.\d+)?)\s+(?P<pid>\d+)-(?P<tid>\d+)"
               r"(?P<cols>\s.*?)?\s+[VDIWEFA]\s+$"),
    re.compile(r"^\s*(?P<date>\d{4}-\d\d-\d\d)\s+(?P<time>\d\d:\d\d:\d\d(?:\.\d+)?)\s+(?P<pid>\d+)-(?P<tid>\d+)/"
               r"(?P<package>\S+)\s+[VDIWEFA]/(?P<tag>.*?)\s*:\s*$"),
    re.compile(rf"(?:^\s*{_WHEN}\s+|^|[\s,\]])[VDIWEFA]/(?P<tag>[^\s(][^(]*?)\s*\(\s*(?P<pid>\d+)"
               r"(?::\s*(?P<tid>\d+))?\)\s*:\s*$"),
    re.compile(r"^\s*[VDIWEFA]\(\s*(?P<pid>\d+)(?::\s*(?P<tid>\d+))?\)\s*$"),
    re.compile(rf"(?:^\s*{_WHEN}\s+|^|[\s,\]])[VDIWEFA]/(?P<tag>[^\s(][^(:]*?)\s*:\s*$"),
]
_LONG_HEADER = re.compile(rf"^\[\s*{_WHEN}\s+(?:(?P<uid>[\w.]+):?\s+)?(?P<pid>\d+):\s*(?P<tid>0x[0-9a-fA-F]+|\d+)\s+"
                          r"[VDIWEFA]/(?P<tag>.*?)\s*\]\s*$")
_DUMPSTATE_YEAR = re.compile(r"^== dumpstate: (\d{4})-\d\d-\d\d", re.M)
_SIZE_UNITS = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}
_DUR_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
DEFAULT_YEAR = 2000   # a leap year, so that a logged 02-29 is a valid date when the year is unknown
_EPOCH_MIN_S = 10**9  # `-v epoch` seconds are past 2001; `-v monotonic` seconds since boot are far below


def size_bytes(s: str) -> int:
    """ART's PrettySize text (`6128KB`, `0B`, `1.5MB`) in bytes."""
    num = s.rstrip("KMGTB")
    return int(round(float(num) * _SIZE_UNITS[s[len(num):]]))


def duration_ns(s: str) -> int:
    """ART's PrettyDuration text (`76us`, `114.471ms`, `1.481s`) in ns."""
    num = s.rstrip("nsum")
    return int(round(float(num) * _DUR_UNITS[s[len(num):]]))


def _generation(collector: str) -> str:
    words = collector.split()
    if "young" in words or "sticky" in words:
        return "young"
    if "partial" in words:
        return "partial"
    return "full"


def _message(line: str) -> tuple[int, dict] | None:
    """(offset of the message in the line, event fields) or None when no message parses."""
    if " GC freed " in line:
        m = _COLLECTION.search(line)
        if not m:
            return None
        g = m.group
        fields = dict(kind=COLLECTION, cause=g("cause"), collector=g("collector"),
                      generation=_generation(g("collector")),
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


def _blocking(m: re.Match) -> dict:
    return {"kind": WAITING_BLOCKING if m.group("what") == "Waiting for" else STARTING_BLOCKING,
            "cause": m.group("cause")}


def _wait_done(m: re.Match) -> dict:
    if m.group("dur"):
        return {"kind": WAIT_DONE, "cause": m.group("cause"), "blocked_on": m.group("on"),
                "duration_ns": duration_ns(m.group("dur"))}
    return {"kind": WAIT_DONE, "cause": m.group("cause2"), "duration_ns": duration_ns(m.group("dur2"))}


def _clamp(m: re.Match) -> dict:
    to = size_bytes(m.group("b"))
    return {"kind": CLAMP, "heap_from_bytes": size_bytes(m.group("a")), "heap_to_bytes": to, "heap_limit_bytes": to}


def _oom(m: re.Match) -> dict:
    limit = m.group("limit")
    return {"kind": OOM, "size_bytes": int(m.group("n")), "heap_limit_bytes": int(limit) if limit else None}


_SIMPLE = [
    (_BLOCKING, _blocking),
    (_WAIT_DONE, _wait_done),
    (_CLAMP, _clamp),
    (_SOFT, lambda m: {"kind": SOFT_REFS, "size_bytes": size_bytes(m.group("size"))}),
    (_OOM, _oom),
    (_SUSPEND, lambda m: {"kind": SUSPEND_ALL, "duration_ns": duration_ns(m.group("dur"))}),
]


class _Clock:
    """Turns prefix times into ns and remembers which clock the log is on."""

    def __init__(self, year: int):
        self.year = year
        self.kind: str | None = None
        self.yearless = False   # some date was logged without a year

    def ns(self, g: dict) -> int | None:
        if g.get("secs"):
            secs = g["secs"]
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
            secs = calendar.timegm((year, month, day, h, mi, s, 0, 0, 0))
        except (ValueError, OverflowError):
            return None
        if not (1 <= month <= 12 and 1 <= day <= 31 and h < 24 and mi < 60 and s < 62):
            return None
        self.kind = self.kind or "wall"
        return secs * 1_000_000_000 + int((frac + "000000000")[:9])


def _prefix_fields(prefix: str, previous: str, clock: _Clock) -> dict | None:
    """pid, tid, tag, package and ts_ns from a line's prefix (or the `-v long` header line before it); None when
    no format explains the prefix."""
    if not prefix.strip():
        m = _LONG_HEADER.match(previous.strip()) if previous else None
        if not m:
            return {}
        g = m.groupdict()
        tid = g["tid"]
        return {"pid": int(g["pid"]), "tid": int(tid, 16) if tid.startswith("0x") else int(tid),
                "tag": g["tag"] or None, "ts_ns": clock.ns(g)}
    for rx in _PREFIXES:
        m = rx.search(prefix)
        if m:
            return _fields_of(m.groupdict(), clock)
    return None


def _fields_of(g: dict, clock: _Clock) -> dict:
    out: dict = {"ts_ns": clock.ns(g)}
    if g.get("pid"):
        out["pid"] = int(g["pid"])
    if g.get("tid"):
        out["tid"] = int(g["tid"])
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


def read_gc_log_text(text: str, source: str, year: int | None = None, dedupe: bool = False) -> GcLog:
    """Every ART GC line in `text` as events, in text order. year: for dates logged without one (default: the
    bugreport header's year if the text has one). dedupe: drop a timed line identical to an earlier one (a
    bugreport repeats log tails in several sections)."""
    year = year or year_of_bugreport(text)
    log = GcLog(source=source, year=year or DEFAULT_YEAR, year_known=year is not None)
    clock = _Clock(log.year)
    seen: set[str] = set()
    line_no, counted_to, last_line_start = 1, 0, -1
    unknown_prefix: list[int] = []
    for hit in MARKS.finditer(text):
        start = text.rfind("\n", 0, hit.start()) + 1
        if start == last_line_start:
            continue   # two marks on one line
        last_line_start = start
        end = text.find("\n", hit.end())
        end = len(text) if end < 0 else end
        line_no += text.count("\n", counted_to, start)
        counted_to = start
        line = text[start:end].rstrip("\r")
        got = _message(line)
        if got is None:
            log.warnings.append(ReadWarning(source, "GC log line not understood; skipped", line=line_no))
            continue
        offset, fields = got
        if dedupe and line in seen:
            continue
        prev = ""
        if not line[:offset].strip() and start > 0:
            p_end = start - 1
            p_start = text.rfind("\n", 0, p_end) + 1
            prev = text[p_start:p_end]
        pf = _prefix_fields(line[:offset], prev, clock)
        if pf is None:
            unknown_prefix.append(line_no)
            pf = {}
        if dedupe and pf.get("ts_ns") is not None:
            seen.add(line)
        log.events.append(GcLogEvent(line=line_no, **pf, **fields))
    log.lines_scanned = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    log.clock = clock.kind
    log.year_known = log.year_known or (clock.kind == "wall" and not clock.yearless)
    if unknown_prefix:
        log.warnings.append(ReadWarning(source, f"{len(unknown_prefix)} GC line(s) with a prefix in no known logcat "
                                                "format: read without process, thread or time",
                                        line=unknown_prefix[0]))
    return log


def decode_text(data: bytes) -> str:
    """Log bytes as text: UTF-8 with a BOM dropped; undecodable bytes replaced (logs carry binary junk)."""
    return data.decode("utf-8", "replace").lstrip("\ufeff")


def read_gc_log(path: str | Path, data: bytes | None = None, year: int | None = None) -> GcLog:
    """The GC lines of a logcat or text file (gzip undone), or of a bugreport zip's main text. InputError when the
    file cannot be read at all."""
    from droidlag.io.source import GZIP_MAGIC, gunzip, read_bytes

    warnings: list[ReadWarning] = []
    if data is None:
        data = read_bytes(path)
    if data[:2] == GZIP_MAGIC:
        data = gunzip(data, path, warnings)
    if data[:4] == b"PK\x03\x04":
        return _read_zip(path, data, year)
    log = read_gc_log_text(decode_text(data), str(path), year)
    log.warnings[:0] = warnings
    return log


def _read_zip(path: str | Path, data: bytes, year: int | None) -> GcLog:
    """A bugreport zip: the GC lines of its main `bugreport*.txt` entry (all logcat sections, deduplicated)."""
    from droidlag.io.archive import open_zip, safe_entries

    warnings: list[ReadWarning] = []
    zf = open_zip(path, data)

    def wanted(info) -> bool:
        base = info.filename.lower().rsplit("/", 1)[-1]
        return base.startswith("bugreport") and base.endswith(".txt")

    logs = [read_gc_log_text(decode_text(raw), f"{path}!{name}", year, dedupe=True)
            for name, raw in safe_entries(path, zf, warnings, wanted)]
    if not logs:
        raise InputError(path, "zip holds no bugreport text (bugreport*.txt) to read GC lines from")
    log = logs[0]
    for other in logs[1:]:
        log.events += other.events
        log.warnings += other.warnings
        log.lines_scanned += other.lines_scanned
    log.source = str(path)
    log.warnings[:0] = warnings
    return log
