"""Choose a reader by content, never by file name."""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from droidlag._native import looks_like_perfetto as _native_looks_like_perfetto
from droidlag.errors import InputError, ReadWarning
from droidlag.io.source import GZIP_MAGIC, gunzip, gunzip_head, read_bytes

PERFETTO = "perfetto"
SYSTRACE = "systrace"
ZIP = "zip"
ANR = "anr"
GFXINFO = "gfxinfo"
CHROME_JSON = "chrome-json"
LOGCAT = "logcat"
VIEW_HIERARCHY = "view-hierarchy"
ANDROID_LAYOUTS = "android-layouts"


def looks_like_perfetto(data: bytes, *, within: bool = False) -> bool:
    """A Perfetto trace is a sequence of `Trace.packet` (field 1, length-delimited) records: check the first ones.
    within: True only when the first three records were all checked inside `data` (a head of the file so short that
    they run past it decides nothing). The rule is the native core's, which `read_trace` also applies to a file's
    first bytes as it starts decoding them (`PerfettoDecoder.feed_file_if_perfetto`)."""
    return _native_looks_like_perfetto(data if isinstance(data, bytes) else bytes(data), within)


# Evidence of each text format, anchored at line starts so that prose about a format (READMEs) is not taken for it.
# One ftrace event line: TASK-TID [(TGID)] [CPU] [FLAGS] SECONDS: event: ... Every part is bounded so that a hostile
# long line cannot make the regex backtrack for minutes.
_FTRACE_LINE = re.compile(r"\s{0,40}.{1,64}?-\d{1,10}\s{1,8}(?:\(\s{0,8}[\d-]{1,10}\)\s{1,8})?\[\d{1,4}\]\s{1,8}"
                          r"(?:\S{1,8}\s{1,8})?\d{1,12}\.\d{1,9}:\s{1,8}[\w:]{1,64}:")
_MAX_SNIFF_LINE = 4096
# An event head anywhere in a line, after whitespace: a trace whose newlines were lost (a web page, a paste) runs its
# events together on one line; each head counts as an event line.
_FTRACE_HEAD = re.compile(r"(?<!\S)[^\s\[\]]{1,64}-\d{1,10}\s{1,8}(?:\(\s{0,8}[\d-]{1,10}\)\s{1,8})?\[\d{1,4}\]\s{1,8}"
                          r"(?:\S{1,8}\s{1,8})?\d{1,12}\.\d{1,9}:\s{1,8}[\w:]{1,64}:")
_ANR_MARK = re.compile(
    r"^(----- pid \d+ at |----- Waiting Channels: pid \d+|\"[^\"\n]*\" (daemon )?prio=\d+ tid=\d+|DALVIK THREADS"
    r"|Crash type: 'anr'|Subject: (Input dispatching|Broadcast of|executing service|ContentProvider)"
    r"|\"[^\"\n]*\" sysTid=\d+|sysTid=\d+\s|------ BLOCKED PROCESS WAIT-CHANNELS|------ VM TRACES)", re.M)
# logcat lines: threadtime (optionally with year/uid), time/brief/tag/thread, Android Studio; each bounded.
_LOGCAT_LINE = re.compile(
    r"^(?:(?:\d{4}-)?\d\d-\d\d\s{1,4}\d\d:\d\d:\d\d\.\d{1,9}\s{1,8}(?:[\w.]{1,16}\s{1,8})?\d{1,10}[\s-]{1,8}\d{1,10}"
    r"[\s/]|(?:\d\d-\d\d\s{1,4}\d\d:\d\d:\d\d\.\d{1,9}\s{1,8})?[VDIWEF][/(][^\n]{0,64}?\(\s{0,8}\d{1,10}(?::\s{0,8}\d{1,10})?\)"
    r"\s{0,4}:? )", re.M)
_LOGCAT_NEED = 5
# Each at a line start after any indentation: pastes in markdown and issues are often indented as a whole.
_GFXINFO_MARK = re.compile(r"^[ \t]{0,16}(?:\*\* Graphics info for pid \d+|Applications Graphics Acceleration Info:"
                           # the framestats marker, its dashes typeset or not (`—PROFILEDATA—` in blogs)
                           r"|[-\u2010-\u2015\u2212]{1,8} ?PROFILEDATA ?[-\u2010-\u2015\u2212]{1,8}[ \t]*\r?$"
                           r"|DUMP OF SERVICE graphicsstats:"
                           # a summary pasted without its process line: the two counts Android prints first
                           r"|Total frames rendered: \d+[ \t]*\r?\n[ \t]{0,16}Janky frames: \d+"
                           # the legacy per-frame table (GPU profiling on), its header and a first row of times
                           r"|Draw[ \t]+(?:Prepare[ \t]+)?Process[ \t]+Execute[ \t]*\r?\n[ \t]{0,16}\d{1,9}\.\d\d[ \t])",
                           re.M)
# The literals _GFXINFO_MARK's alternatives hold: the regex is tried only where one occurs (a line-anchored search
# over a thread dump's 256 kB head otherwise fails at every line, the largest cost of sniffing a dump).
_GFXINFO_LITERALS = ("** Graphics info for pid ", "Applications Graphics Acceleration Info:", "PROFILEDATA",
                     "DUMP OF SERVICE graphicsstats:", "Total frames rendered: ", "Process\tExecute", "Process Execute")


# `dumpsys gfxinfo framestats` rows pasted on their own (no `---PROFILEDATA---`, no header line): 14+ integer fields.
_FRAMESTATS_MIN_FIELDS = 14


def _framestats_rows_only(text: str) -> bool:
    """Two or more framestats rows of one width (14+ integer fields, the first a small flags value; one row of
    another width, a paste cut mid-row, allowed), making at least half of the text's non-blank lines: a paste of rows whose header line was left out. The gfxinfo reader reads
    them when their width fixes the columns, and otherwise says why it cannot."""
    if text.count(",") < 2 * (_FRAMESTATS_MIN_FIELDS - 1):
        return False
    from droidlag.io.gfxinfo import is_framestats_row
    rows = other = 0
    widths: dict[int, int] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if len(line) <= _MAX_SNIFF_LINE and is_framestats_row(line):
            fields = line.rstrip(",").split(",")
            if len(fields) >= _FRAMESTATS_MIN_FIELDS and 0 <= int(fields[0]) < 1 << 16:
                rows += 1
                widths[len(fields)] = widths.get(len(fields), 0) + 1
                continue
        other += 1
    # one width (a paste cut in its last row may leave one shorter row)
    return rows >= 2 and max(widths.values(), default=0) >= max(2, rows - 1) and rows >= other


def _is_gfxinfo(text: str) -> bool:
    """gfxinfo's marks (a process line, the section titles, a summary's first counts), or framestats rows alone."""
    if any(lit in text for lit in _GFXINFO_LITERALS) and _GFXINFO_MARK.search(text):
        return True
    return _framestats_rows_only(text)


# Every ftrace line holds its CPU field `[NNN]`: lines without one are not tried (a thread dump has few).
_CPU_FIELD = re.compile(r"\[\d{1,4}\]")
_CPU_FIELD_B = re.compile(rb"\[\d{1,4}\]")


def _events_on(line: str) -> int:
    """Event heads on an ftrace event line (its first _MAX_SNIFF_LINE characters): 1, or more when events were run
    together on it (newlines lost); 0 when the line is not an event line."""
    line = line[:_MAX_SNIFF_LINE]
    if "[" not in line or not _FTRACE_LINE.match(line):
        return 0
    return max(1, len(_FTRACE_HEAD.findall(line))) if line.count("[") > 1 else 1


def _has_ftrace_lines(text: str, need: int) -> bool:
    if len(_CPU_FIELD.findall(text)) < need:
        return False
    seen = 0
    for line in text.splitlines():
        seen += _events_on(line)
        if seen >= need:
            return True
    return False


# A header-less text is read as ftrace when it opens with an event line and event lines are a clear majority of its
# first lines (blank and `#` lines aside). Perfetto's trace processor takes a text that opens like an event line (a
# leading space: TASK is right-aligned) for systrace; the majority lets a few other lines through (a kernel print
# whose text runs over several lines: Perfetto's own bad_print test data) for the reader to skip, each warned with its
# line, while prose that quotes a line or two opens with prose.
_TALLY_LINES = 256          # the bounded sample: lines looked at


class FtraceTally:
    """The first _TALLY_LINES lines of a header-less text (blank and `#` lines aside) as ftrace events or not."""

    def __init__(self, text: str, *, whole: bool = True) -> None:
        """whole=False: stop at the first line when it is not an event (the answer is no; sniffing every text)."""
        self.events = 0                  # events (several on a line when run together)
        self.event_lines = 0
        self.other_lines = 0
        self.first_other: tuple[int, str] | None = None   # (file line, text) of the first line that is not an event
        self.opens_with_event: bool | None = None
        self.capped = False              # the text has more lines than were looked at
        for number, line in _numbered_lines(text, _TALLY_LINES + 1):
            if number > _TALLY_LINES:     # the rest of the text, in one piece
                self.capped = bool(line.strip())
                break
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            n = _events_on(line)
            if self.opens_with_event is None:
                self.opens_with_event = n > 0
                if not n and not whole:
                    break
            if n:
                self.events += n
                self.event_lines += 1
                continue
            self.other_lines += 1
            if self.first_other is None:
                self.first_other = number, line

    def is_ftrace(self) -> bool:
        return bool(self.opens_with_event) and self.events >= 2 and self.event_lines > self.other_lines

    def refusal(self) -> str | None:
        """Why the text is not read as header-less ftrace, when some of its lines look like ftrace events; None when
        none does (then it simply is no format droidlag reads) or when it is read."""
        if not self.events or self.is_ftrace():
            return None
        counted = self.event_lines + self.other_lines
        got = (f"{self.event_lines} of the {counted} non-blank lines among its first {_TALLY_LINES}" if self.capped
               else f"{self.event_lines} of its {counted} non-blank lines") + " look like ftrace events"
        if not self.opens_with_event:
            why = "it does not open with one"
        elif self.events < 2:
            why = "that is only 1 event"
        else:
            why = "they are not most of its lines"
        if self.first_other is not None:
            number, line = self.first_other
            shown = line.strip()
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            why += f" (line {number} is not an event: {shown!r})"
        return (f"{got}, but {why}; a text without a `# tracer:` header line is read as ftrace only when it opens "
                "with an event line and event lines are most of its lines (2 events at least): put `# tracer: nop` "
                "on its first line to read it as a trace anyway")

    @property
    def first_other_line(self) -> int | None:
        return self.first_other[0] if self.first_other is not None else None


def _numbered_lines(text: str, limit: int) -> Iterator[tuple[int, str]]:
    """(file line, line) for the first `limit` lines of text, lines ended as the readers end them (LF, CR LF, CR)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return enumerate(text.split("\n", limit)[:limit], 1)


def _all_ftrace_lines(text: str) -> bool:
    """A header-less ftrace text (copied from a trace, a question, a bug; Perfetto's test data): it opens with an
    event line and event lines (on lines of their own, or run together on one line) are most of its first lines.
    Prose that quotes a line or two opens with prose."""
    if len(_CPU_FIELD.findall(text, 0, 1 << 16)) < 2:
        return False
    return FtraceTally(text, whole=False).is_ftrace()


def _is_logcat(text: str) -> bool:
    """Several logcat-formatted lines, or one ART (or Dalvik) GC line in a logcat format the GC reader knows, its
    prefix starting the line (a log cut down to its GC lines, in any `-v` format, pasted in code or markdown)."""
    seen = 0
    for _ in _LOGCAT_LINE.finditer(text):
        seen += 1
        if seen >= _LOGCAT_NEED:
            return True
    from droidlag.io.art_gc_log import logcat_gc_lines
    return logcat_gc_lines(text) > 0


def sniff_bytes(data: bytes) -> str | None:
    """The kind of content: one of the constants above, or None for no format droidlag reads."""
    if data[:4] == b"PK\x03\x04":
        return ZIP
    if looks_like_perfetto(data):
        return PERFETTO
    head = data[:262144]
    stripped_b = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    from droidlag.io.systrace_html import atrace_marker
    if atrace_marker(head[:4096]) is not None:   # atrace's output, its status lines before `TRACE:` or not
        return SYSTRACE
    if b"\x00" in head[:4096]:
        return None
    text = head.decode("utf-8", "replace")
    stripped = stripped_b[:64].decode("utf-8", "replace")
    if stripped.startswith("# tracer:"):
        return SYSTRACE
    if stripped.lower().startswith(("<!doctype html", "<html")):
        low = text.lower()
        if "linuxperfdata" in low or 'class="trace-data"' in low or "class='trace-data'" in low:
            return SYSTRACE
    if stripped.startswith("{") and '"traceevents"' in text.lower():
        return CHROME_JSON
    if _has_ftrace_lines(text, 5) or _all_ftrace_lines(text):   # prose quotes a line or two, a trace many
        return SYSTRACE
    if _is_gfxinfo(text):
        return GFXINFO
    if _ANR_MARK.search(text):
        return ANR
    from droidlag.io.anr_paste import has_anr_header, looks_like_anr_paste
    if _is_logcat(text):   # a log with an ANR block, am_anr or watchdog lines is read by the hang reader
        return ANR if has_anr_header(text) else LOGCAT
    if looks_like_anr_paste(text):   # pasted reports: Play Console, Crashlytics, APM SDKs, frames, markdown
        return ANR
    from droidlag.io.view_hierarchy import sniff_hierarchy
    if sniff_hierarchy(head):   # last: a thread dump or gfxinfo that quotes a view dump stays what it is
        return VIEW_HIERARCHY
    return None


def _html_head(head: bytes) -> bool:
    from droidlag.io.systrace_html import looks_like_html
    return looks_like_html(head)


def html_with_trace_blocks(data: bytes) -> bool:
    """A saved web page whose systrace blocks lie past the sniffed head (after the viewer's script)."""
    import io

    from droidlag.io.systrace_html import looks_like_html, stream_has_trace_blocks
    return looks_like_html(data[:4096]) and stream_has_trace_blocks(io.BytesIO(data))


def sniff_file(path: str | Path, head: bytes) -> str | None:
    """The kind of a file from its (decompressed) head; a page that opens like HTML is scanned further, as a
    stream, for systrace blocks."""
    kind = sniff_bytes(head)
    if kind is None:
        from droidlag.io.systrace_html import file_has_trace_blocks, looks_like_html
        if looks_like_html(head) and file_has_trace_blocks(path):
            return SYSTRACE
        _refuse_near_ftrace(path, head)
    return kind


NOT_A_FORMAT = ("not a format droidlag reads (expected a Perfetto trace, systrace/atrace, thread dump, gfxinfo, logcat "
                "or bugreport)")


def _refuse_near_ftrace(path: str | Path, head: bytes) -> None:
    """InputError saying why, for a text none of the formats took although some of its lines look like ftrace events
    (a header-less trace that breaks the rule of _all_ftrace_lines): how many did, and the first line that did not."""
    if b"\x00" in head[:4096] or _CPU_FIELD_B.search(head, 0, 1 << 16) is None:
        return
    tally = FtraceTally(head[:262144].decode("utf-8", "replace"))
    reason = tally.refusal()
    if reason is not None:
        raise InputError(path, f"not a format droidlag reads: {reason}", line=tally.first_other_line)


def sniff_path(path: str | Path) -> str | None:
    """The kind of a user's file from its first bytes (gunzipped when gzip), without reading it whole."""
    from droidlag.io.source import read_head
    head = read_head(path)
    if head[:2] == GZIP_MAGIC:
        head = gunzip_head(head, path)
    return sniff_file(path, head)


def load(path: str | Path) -> tuple[str, bytes, list[ReadWarning]]:
    """Read a file, undo gzip, and name its kind. InputError for files no reader can use."""
    data = read_bytes(path)
    warnings: list[ReadWarning] = []
    if data[:2] == GZIP_MAGIC:
        # tell what it is from the first bytes before expanding it all: junk is refused without a bomb's cost
        head = gunzip_head(data, path)
        if sniff_bytes(head) is None and not _html_head(head):
            raise InputError(path, "gzip file holds no format droidlag reads")
        data = gunzip(data, path, warnings)
        if not data or data.isspace():
            raise InputError(path, "gzip file holds no data")
    kind = sniff_bytes(data)
    if kind is None and html_with_trace_blocks(data):
        kind = SYSTRACE
    if kind is None:
        _refuse_near_ftrace(path, data[:262144])
        raise InputError(path, NOT_A_FORMAT)
    return kind, data, warnings
