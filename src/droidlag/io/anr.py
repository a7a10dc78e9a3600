"""Reader for ANR/SNR thread dumps: ART and Dalvik `traces.txt`, ApplicationExitInfo traces (Waiting Channels,
native-only dumps), ANR/`Subject:` headers, xCrash ANR tombstones, watchdog lines and the dump sections of bugreport
text. Salvages every complete thread of a damaged file and records warnings with line numbers."""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from droidlag._native import dump_run_lines, dump_scan, dump_thread_header
from droidlag.errors import InputError, ReadWarning
from droidlag.io.anr_paste import Paste, canonicalize, needs_canonicalizing
from droidlag.models.dumps import AnrHeader, BinderTransaction, DumpUnit, LockLine, ProcessDump, ThreadDump

_PID_START = re.compile(r"^----- pid (\d+) at (.*?) -----\s*$")
_WCHAN_START = re.compile(r"^----- Waiting Channels: pid (\d+) at (.*?) -----\s*$")
_PID_END = re.compile(r"^----- end (\d+) -----")
_SECTION = re.compile(r"^------ (.*?) ------[ \t]*$", re.M)
_LOCK = re.compile(
    r"^- (waiting to lock|locked|waiting on|parking to wait for|sleeping on)\s*"
    r"(?:<(0x[0-9a-fA-F]+)>)?\s*(?:\(a ([^)]*)\))?"
    r"(?:.*?held by (?:thread |threadid=|tid=)(\d+)(?: \(([^)]*)\))?)?")
_KV = re.compile(r"(\w+)=(\([^)]*\)|\S+)")
_WCHAN_LINE = re.compile(r"^sysTid=(\d+)\s+(?:state=(\S+)\s+)?(.*)$")
_XCRASH_PID = re.compile(r"^pid: (\d+)(?:, tid: \d+)?(?:, name: .*?)?\s+>>> (.*?) <<<")
# ActivityManager writes `ANR in <process>` and, when it knows it, ` (<component>)` (AOSP ProcessErrorStateRecord /
# AppErrors): nothing else follows the name. A sentence that says "ANR in my production app" names no process.
_ANR_IN = re.compile(r"^(?:.*\s)?ANR in (\S+)[ \t]*(?:\(.*)?$")
# A process name is a package-like name (a dot, or `pkg:suffix`), or `system`: a bare capitalised word is a component
# class, as in Bugsnag's issue titles (`ANR in MainActivity`), and names no process.
_CLASS_NAME = re.compile(r"^[A-Z][\w$]*$")
_PID_LINE = re.compile(r"^PID: (\d+)")
_LOAD = re.compile(r"^Load: ([\d.]+) / ([\d.]+) / ([\d.]+)")
_CPU_ROW = re.compile(r"^\s*\+?(\d+(?:\.\d+)?)% (\d+)/(\S+?): ")
_CPU_TOTAL = re.compile(r"^\s*(\d+(?:\.\d+)?)% TOTAL:")
_MEM_KB = re.compile(r"^\s*(\w[\w()]*?):?\s+(\d+) kB\s*$")
_MEM_KB2 = re.compile(r"^(Rss\w*Kb|VmSwapKb|RssHwmKb): (\d+)\s*$")
_D_STATE = re.compile(r"have D state thread\(tid:(\d+) name:([^)]*)\)")
_BINDER_TR = re.compile(r"(?:outgoing|incoming|pending) transaction \d+: \S+ from (\d+):(\d+) to (\d+):(\d+)")
_BR_WCHAN = re.compile(r"^(\d+)\s+(\S+)\s*(\S*)\s*$")
# A stripped stack line starting with one of these is a frame, kept raw (parsed on demand by the model).
_FRAME_PREFIXES = ("at ", "native:", "#", "kernel:")

# Cap on the warnings one file may produce; the last one says how many more were dropped.
MAX_WARNINGS = 50

THREAD_STATES_LOCK = frozenset({"waiting to lock"})


def decode(data: bytes, source: str, warnings: list[ReadWarning]) -> str:
    """Bytes to text with one line convention: invalid UTF-8 is replaced (and reported with its line), CR LF and
    lone CR become LF, NUL bytes are dropped."""
    return _decode(data, source, warnings, 0)


def _decode(data: bytes, source: str, warnings: list[ReadWarning], lines_before: int) -> str:
    """decode() of bytes that start a line; the invalid-UTF-8 warning (one per file) counts lines from
    lines_before + 1."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = lines_before + data.count(b"\n", 0, e.start) + 1
        text = data.decode("utf-8", "replace")
        if not any(w.message.startswith("invalid UTF-8") for w in warnings):
            warnings.append(ReadWarning(source, "invalid UTF-8 (mixed encoding?); undecodable bytes replaced",
                                        line=line))
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text


class _Warn:
    """Collects warnings with a cap, so a garbage file cannot flood the report."""

    def __init__(self, source: str, out: list[ReadWarning]):
        self.source, self.out, self.dropped = source, out, 0

    def __call__(self, message: str, line: int | None) -> None:
        if len(self.out) < MAX_WARNINGS:
            self.out.append(ReadWarning(self.source, message, line=line))
        else:
            self.dropped += 1

    def close(self) -> None:
        if self.dropped:
            self.out.append(ReadWarning(self.source, f"{self.dropped} more warnings not shown"))


# A thread header, as native/src/dump.rs reads it: (name, daemon, prio, tid, sysTid, state), the numbers as int or,
# when not plain digits, as text for int()'s rules.
_Header = tuple[str, bool, "int | str | None", "int | str | None", "int | str | None", str]


def _thread_from_header(h: _Header) -> ThreadDump:
    name, daemon, prio, tid, sys_tid, state = h
    # numbers come as int when plain digits (nearly always); any other text follows int()'s rules
    return ThreadDump(name, tid if tid is None or type(tid) is int else _int(tid),   # type: ignore[arg-type]
                      sys_tid if sys_tid is None or type(sys_tid) is int else _int(sys_tid),   # type: ignore[arg-type]
                      state, None, daemon, prio if prio is None or type(prio) is int else _int(prio))  # type: ignore[arg-type]


def _parse_thread_header(line: str) -> ThreadDump | None:
    """A thread header line (`"main" prio=5 tid=1 Blocked`, `"Binder:474_2" sysTid=474`, `"x" daemon prio=5 (not
    attached)`): the name up to the first `" prio=`/`" daemon prio=`/`" sysTid=` (else the last quote), then
    `daemon`, `prio=`, `tid=`, `sysTid=` tokens; the other `=`-free tokens are the state words. None without a
    closing quote."""
    h = dump_thread_header(line)
    return None if h is None else _thread_from_header(h)


def _float(s: str) -> float | None:
    try:
        return float(s.strip())
    except ValueError:
        return None


def _int(s: str) -> int | None:
    try:
        return int(s)
    except ValueError:
        return None


def _parse_lock(s: str, frame_index: int, line: int) -> LockLine | None:
    m = _LOCK.match(s)
    if not m:
        return None
    held = int(m.group(4)) if m.group(4) else None
    return LockLine(m.group(1), m.group(2), m.group(3), held, m.group(5), frame_index, line)


# First characters of the header lines recognised by their start; any other line can only be one of the lines
# recognised by a substring (`ANR in`, watchdog, CPU percentages, memory sizes).
_HEADER_STARTS = frozenset("SPRLpCA")


def _header_line(h: AnrHeader, line: str) -> bool:
    """Read one header line (ANR header, Subject, xCrash, watchdog, memory); True when it was one."""
    c = line[:1]
    if c not in _HEADER_STARTS and "ANR in " not in line and "WATCHDOG" not in line and "%" not in line \
            and "kB" not in line and "Kb" not in line:
        return False
    if c == "S" and line.startswith("Subject: "):
        _subject(h, line[9:].strip())
        return True
    if "ANR in " in line:
        m = _ANR_IN.match(line)
        if m:
            if not _CLASS_NAME.match(m.group(1)):
                h.process = m.group(1)
            return True
    if c in _HEADER_STARTS and _header_by_start(h, c, line):
        return True
    return _header_by_content(h, line)


def _subject(h: AnrHeader, subject: str) -> None:
    h.subject = subject
    if h.reason is None:
        h.reason = subject
    if ("Blocked in" in subject or subject.startswith("Watchdog")) and h.watchdog is None:
        h.watchdog = subject


def _header_by_start(h: AnrHeader, c: str, line: str) -> bool:
    """The header lines known by their first words: PID, D-state, Reason, PSI, Load, xCrash pid/type/ABI."""
    if c == "P":
        return _pid_line(h, line)
    if c == "R" and line.startswith("Reason: "):
        h.reason = line[8:].strip()
        return True
    if c == "L" and line.startswith("Load: "):
        m = _LOAD.match(line)
        if m:
            h.load = (float(m.group(1)), float(m.group(2)), float(m.group(3)))
            return True
    if c == "p" and line.startswith("pid: "):
        m = _XCRASH_PID.match(line)
        if m:
            h.pid, h.process = int(m.group(1)), m.group(2)
            return True
    if c == "C" and line.startswith("Crash type: "):
        h.crash_type = line[12:].strip().strip("'")
        return True
    if c == "A" and line.startswith("ABI: ") and h.abi is None:
        h.abi = line[5:].strip().strip("'")
        return True
    return False


def _pid_line(h: AnrHeader, line: str) -> bool:
    m = _PID_LINE.match(line)
    if m:
        h.pid = int(m.group(1))
        return True
    m = _D_STATE.search(line)
    if m:
        h.d_state_threads.append(f"{m.group(2)} (tid {m.group(1)})")
        return True
    if line.startswith("PSI memory full avg10: "):   # written by io.anr_paste from a pressure block
        h.psi_memory_full_avg10 = _float(line[23:])
        return True
    return False


def _header_by_content(h: AnrHeader, line: str) -> bool:
    """The header lines known by what they hold: watchdog kill, CPU usage rows and total, memory sizes."""
    if "WATCHDOG KILLING SYSTEM PROCESS" in line:
        h.watchdog = line.split("WATCHDOG KILLING SYSTEM PROCESS:", 1)[-1].strip()
        return True
    if "%" in line:
        m = _CPU_TOTAL.match(line)
        if m:
            h.cpu_total_pct = float(m.group(1))
            return True
        m = _CPU_ROW.match(line)
        if m:
            h.cpu_usage.append((float(m.group(1)), int(m.group(2)), m.group(3)))
            return True
    if "kB" in line or "Kb" in line:
        m = _MEM_KB.match(line) or _MEM_KB2.match(line)
        if m and m.group(1) not in h.memory_kb:
            h.memory_kb[m.group(1)] = int(m.group(2))
            return True
    return False


class _DumpReader:
    """The state of one pass over a dump's lines: the open process, thread and Waiting Channels block. The stack
    lines of a thread (most of a dump) are taken in parse_dump's own loop; every other line comes here."""

    def __init__(self, unit: DumpUnit, warn: _Warn):
        self.unit, self.h, self.warn = unit, unit.header, warn
        self.proc: ProcessDump | None = None
        self.thread: ThreadDump | None = None
        self.nframes = 0              # frames of the open thread so far
        self.attrs: list[str] = []    # thread.raw_attrs while thread is not None
        self.wchan: dict[int, tuple[str | None, str]] | None = None
        self.unknown = 0
        self.first_unknown: int | None = None

    def run(self, frames: str, nframes: int, attrs: list[str], locks: list[tuple[str, int, int]], unknown: int,
            first_unknown: int | None) -> None:
        """A run of indented lines of the open thread, sorted by the native scan: its frames (one newline-joined
        text), attribute lines, lock lines (text, frames of the run before it, line) and the count of unrecognised
        lines."""
        t = self.thread
        assert t is not None
        base = self.nframes - 1
        for text, before, line_no in locks:
            lk = _parse_lock(text, base + before, line_no)
            if lk is not None:
                t.locks.append(lk)
        if nframes:
            if self.nframes:
                t.raw_frames.extend(frames.split("\n"))
            else:
                t.set_frames_text(frames)
            self.nframes += nframes
        if attrs:
            if self.attrs:
                self.attrs.extend(attrs)
            else:   # the scan's own list becomes the thread's
                t.raw_attrs = self.attrs = attrs
        if unknown:
            self.unknown += unknown
            if self.first_unknown is None:
                self.first_unknown = first_unknown

    def _lock(self, s: str, line_no: int) -> None:
        lk = _parse_lock(s, self.nframes - 1, line_no)
        if lk is not None and self.thread is not None:
            self.thread.locks.append(lk)

    def line(self, line: str, line_no: int) -> None:
        """A line that does not start with white space."""
        c = line[0]
        if c == "-":
            self._dash_line(line, line_no)
        elif c == "+" and line.startswith("+++ +++"):
            # xCrash: the ART dump ends at the `+++` separator; logcat, fds and memory info follow.
            self._end_process()
        elif not self._process_line(c, line, line_no):
            if self.thread is not None and c == "a" and line.startswith("at "):
                self.thread.raw_frames.append(line)
                self.nframes += 1
            elif self.proc is None or self.thread is None:
                _header_line(self.h, line)

    def _set_thread(self, t: ThreadDump | None) -> None:
        self.thread = t
        if t is not None:
            self.nframes, self.attrs = len(t.raw_frames), t.raw_attrs

    def _end_process(self) -> None:
        if self.proc is not None:
            self.proc.complete = True
        self.proc = None
        self._set_thread(None)

    def thread_header(self, line: str, line_no: int, h: _Header | None) -> None:
        """A line opening with a quote, read by the native scan (h: None when it is no header)."""
        if h is None:
            self.warn(f"unreadable thread header skipped: {line[:80]!r}", line_no)
            self._set_thread(None)
            return
        t = _thread_from_header(h)
        if self.proc is None:
            # xCrash and bare dumps: threads without a `----- pid` line belong to an implicit process.
            self.proc = ProcessDump(pid=self.h.pid, cmdline=self.h.process or "", line=line_no, kind="implicit")
            self.unit.processes.append(self.proc)
        t.line = line_no
        self.proc.threads.append(t)
        self.thread, self.nframes, self.attrs = t, 0, t.raw_attrs

    def _dash_line(self, line: str, line_no: int) -> None:
        """`----- pid`, `----- end`, `----- Waiting Channels`, `--- --- ---`, a lock line, else a header line."""
        if line.startswith("----- pid "):
            m = _PID_START.match(line)
            if m:
                self._open_process(ProcessDump(pid=int(m.group(1)), time=m.group(2), line=line_no))
                return
        elif line.startswith("----- end "):
            self.wchan = None
            self._end_process()
            return
        elif line.startswith("----- Waiting Channels: pid "):
            m = _WCHAN_START.match(line)
            if m:
                pid = int(m.group(1))
                self._open_process(ProcessDump(pid=pid, time=m.group(2), kind="wchan", line=line_no))
                self.wchan = self.unit.wait_channels.setdefault(pid, {})
                return
        elif line.startswith("--- --- ---"):
            return
        elif line.startswith("- ") and self.thread is not None:
            self._lock(line, line_no)
            return
        _header_line(self.h, line)

    def _open_process(self, proc: ProcessDump) -> None:
        old = self.proc
        if proc.kind != "wchan" and old is not None and not old.complete and old.kind != "implicit":
            self.warn(f"dump of pid {old.pid} has no end line (truncated); kept {len(old.threads)} threads", old.line)
        self.proc = proc
        self.unit.processes.append(proc)
        self._set_thread(None)
        self.wchan = None

    def _process_line(self, c: str, line: str, line_no: int) -> bool:
        """The lines of a process block: a Waiting Channels row, `Cmd line`, `ABI`, `Build fingerprint`."""
        proc = self.proc
        if c == "s" and line.startswith("sysTid=") and proc is not None and proc.kind == "wchan":
            m = _WCHAN_LINE.match(line)
            if m and self.wchan is not None:
                tid, st, ch = int(m.group(1)), m.group(2), m.group(3).strip()
                self.wchan[tid] = (st, ch)
                proc.threads.append(ThreadDump(name="", sys_tid=tid, kstate=st, wchan=ch, line=line_no))
            return True
        if c == "C" and line.startswith("Cmd line: "):
            if proc is None:
                proc = self.proc = ProcessDump(pid=self.h.pid, line=line_no, kind="implicit")
                self.unit.processes.append(proc)
            proc.cmdline = line[10:].strip()
            return True
        if c == "A" and line.startswith("ABI: ") and proc is not None:
            proc.abi = line[5:].strip().strip("'")
            return True
        if c == "B" and line.startswith("Build fingerprint: ") and proc is not None:
            proc.fingerprint = line[19:].strip().strip("'")
            return True
        return False

    def finish(self) -> None:
        """End-of-text warnings, Waiting Channels merged into the stacks, pids and command lines filled in."""
        proc, unit, h = self.proc, self.unit, self.h
        if proc is not None and not proc.complete and proc.kind not in ("implicit", "wchan"):
            self.warn(f"dump of pid {proc.pid} has no end line (truncated); kept {len(proc.threads)} threads",
                      proc.line)
        if self.unknown:
            self.warn(f"{self.unknown} unrecognised line(s) inside thread stacks ignored", self.first_unknown)
        _merge_wait_channels(unit)
        for p in unit.processes:
            if p.pid is None:
                mt = p.main_thread
                if mt is not None and mt.sys_tid is not None:
                    p.pid = mt.sys_tid
            if not p.cmdline and h.process and (p.pid == h.pid or h.pid is None):
                p.cmdline = h.process
        self.warn.close()


def parse_dump(text: str, source: str, line_offset: int = 0, unit: DumpUnit | None = None) -> DumpUnit:
    """Parse one dump text (a file or a bugreport section) into a DumpUnit. Line numbers in warnings count from
    `line_offset` + 1. Never raises on bad content: incomplete threads and blocks are kept and reported."""
    unit = unit or DumpUnit(source=source)
    unit.nbytes += len(text)
    r = _DumpReader(unit, _Warn(unit.source, unit.warnings))
    _feed(r, text, line_offset)
    r.finish()
    return unit


def _feed(r: _DumpReader, text: str, line_offset: int) -> None:
    """The lines of `text` (lines numbered from line_offset + 1) into the reader. The native scan
    (native/src/dump.rs) splits the text into top-level lines, which the reader's state machine reads one by one,
    and runs of indented lines, which are a thread's stack (frames, attribute and lock lines, most of a dump) when a
    thread is open and header lines (a CPU table, memory sizes) otherwise."""
    h = r.h
    for item in dump_scan(text, line_offset):
        n = len(item)
        if n == 2:
            r.line(item[1], item[0])
        elif n == 3:
            r.thread_header(item[1], item[0], item[2])
        elif r.thread is not None:
            r.run(item[1], item[2], item[3], item[4], item[5], item[6])
        else:
            for line in dump_run_lines(text, item[7], item[8]):
                _header_line(h, line)


def _merge_wait_channels(unit: DumpUnit) -> None:
    """A Waiting Channels block followed by a stack dump of the same pid describes the same threads: copy the
    kernel state and wait channel onto the dumped threads and drop the separate block."""
    dumped = {p.pid for p in unit.processes if p.kind != "wchan"}
    if not any(p.kind == "wchan" and p.pid in dumped for p in unit.processes):
        return
    keep = []
    for p in unit.processes:
        if p.kind == "wchan" and p.pid in dumped:
            continue
        if p.kind != "wchan" and p.pid in unit.wait_channels:
            chans = unit.wait_channels[p.pid]
            for t in p.threads:
                st = chans.get(t.sys_tid) if t.sys_tid is not None else None
                if st is not None:
                    t.wchan = st[1]
                    if t.kstate is None and st[0]:
                        t.kstate = st[0]
        keep.append(p)
    unit.processes[:] = keep


def parse_binder_state(text: str, line_offset: int = 0) -> list[BinderTransaction]:
    """Pending transactions from `/sys/kernel/debug/binder/transactions` or `state` text."""
    out: list[BinderTransaction] = []
    if "transaction" not in text:
        return out
    for i, line in enumerate(text.split("\n")):
        if "transaction" in line and " from " in line:
            m = _BINDER_TR.search(line)
            if m:
                fp, ft, tp, tt = (int(x) for x in m.groups())
                out.append(BinderTransaction(fp, ft, tp, tt, line_offset + i + 1))
    return out


def parse_process_wchan(text: str) -> dict[int, tuple[str | None, str]]:
    """The bugreport's `BLOCKED PROCESS WAIT-CHANNELS` table: pid -> (None, wchan)."""
    out: dict[int, tuple[str | None, str]] = {}
    for line in text.split("\n"):
        m = _BR_WCHAN.match(line)
        if m and m.group(3):
            out[int(m.group(1))] = (None, m.group(3))
    return out


def split_sections(text: str) -> Iterator[tuple[str, int, str]]:
    """Bugreport-style `------ TITLE ------` sections as (title, first line number, body), one at a time (a body is
    a copy of its part of the text: all of them at once would hold the text twice); the text before the first title
    comes with title ''."""
    prev_title, prev_start, prev_line = "", 0, 0
    line_no = 0
    pos = 0
    for m in _SECTION.finditer(text):
        line_no += text.count("\n", pos, m.start())
        pos = m.start()
        yield prev_title, prev_line, text[prev_start:m.start()]
        prev_title, prev_start, prev_line = m.group(1), m.end(), line_no
    yield prev_title, prev_line, text[prev_start:]


def parse_text(text: str, source: str) -> list[DumpUnit]:
    """All dump units in a text: one per `VM TRACES` section of bugreport text, else one for the whole text.
    Wait-channel tables and binder state found in other sections are attached to every unit."""
    if "\n------ " not in text and not text.startswith("------ "):
        return [parse_dump(text, source)]
    units: list[DumpUnit] = []
    binder: list[BinderTransaction] = []
    proc_wchan: dict[int, tuple[str | None, str]] = {}
    loose: list[tuple[int, str]] = []
    for title, line0, body in split_sections(text):
        if "VM TRACES" in title:
            u = parse_dump(body, f"{source}#{title.split('(')[0].strip()}", line_offset=line0 + 1)
            u.snapshot = "JUST NOW" in title
            units.append(u)
        elif "BLOCKED PROCESS WAIT-CHANNELS" in title:
            proc_wchan.update(parse_process_wchan(body))
        elif title.startswith("BINDER TRANSACTIONS") or title.startswith("BINDER STATE"):
            binder.extend(parse_binder_state(body, line0 + 1))
        elif not title or "ANR" in title or "WATCHDOG" in title.upper():
            loose.append((line0, body))
    for line0, body in loose:
        if "----- pid " in body or '"main"' in body or "Waiting Channels" in body:
            units.append(parse_dump(body, source, line_offset=line0))
    return finish_units(units, source, len(text), binder, proc_wchan)


def finish_units(units: list[DumpUnit], source: str, nbytes: int, binder: list[BinderTransaction],
                 proc_wchan: dict[int, tuple[str | None, str]]) -> list[DumpUnit]:
    """The last step of reading a sectioned text (whole or streamed): an empty unit when no dump was found (its
    sections still count), and the text's binder transactions and per-process wait channels given to every unit."""
    if not units:
        u = DumpUnit(source=source)
        u.nbytes = nbytes
        units.append(u)
    for u in units:
        u.binder.extend(binder)
        for pid, v in proc_wchan.items():
            u.wait_channels.setdefault(pid, {}).setdefault(pid, v)
    return units


def read_anr(path: str | Path, data: bytes | None = None) -> list[DumpUnit]:
    """Read a thread-dump text file (or bugreport text) into dump units. InputError when nothing in it is a dump."""
    from droidlag.io.source import GZIP_MAGIC, gunzip, read_bytes

    source = str(path)
    if data is None:
        units = _read_runtime_dump(Path(path))
        if units is not None:
            return units
        data = read_bytes(path)
    warnings: list[ReadWarning] = []
    if data[:2] == GZIP_MAGIC:
        data = gunzip(data, path, warnings)
    text = decode(data, source, warnings)
    del data   # the text is what parsing needs: a 200 MB dump is not held twice (the caller may still hold it)
    pasted = None
    if needs_canonicalizing(text):
        # a pasted report (Play Console, Crashlytics, APM, logcat, markdown...): rewritten into traces.txt form
        pasted = canonicalize(text)
        text = pasted.text
        warnings.extend(ReadWarning(source, n, line=k) for k, n in pasted.line_notes)
        warnings.extend(ReadWarning(source, n) for n in pasted.notes)
    units = parse_text(text, source)
    if not any(u.processes or u.wait_channels or not u.header.is_empty() for u in units):
        raise InputError(path, _nothing_read(pasted))
    units[0].warnings[:0] = warnings
    if pasted is not None:
        units[0].pasted = True
    return units


# Bytes read at a time by the streaming path (then up to the end of the line).
STREAM_BLOCK = 4 << 20


class _NotRuntimeDump(Exception):
    """The streamed file turned out to hold bugreport sections: it is read whole after all."""


def _read_runtime_dump(path: Path) -> list[DumpUnit] | None:
    """A plain runtime dump (uncompressed, opening with `----- pid`) read a block at a time, so that its text is
    never held whole beside the model (a 200 MB traces.txt). None when the file is anything else (or holds a
    bugreport section line after all): the caller reads it whole. Same units and warnings as the whole-text path:
    blocks end at a newline, so decoding, newline conversion and line numbers are the same."""
    from droidlag.io.source import GZIP_MAGIC, MAX_INPUT_BYTES
    try:
        if not path.is_file() or path.stat().st_size > MAX_INPUT_BYTES:
            return None
        fh = open(path, "rb")
    except OSError:
        return None
    with fh:
        first = fh.read(STREAM_BLOCK)
        if first[:2] == GZIP_MAGIC or not first.lstrip().startswith(b"----- pid "):
            return None
        source = str(path)
        unit = DumpUnit(source=source)
        warnings: list[ReadWarning] = []
        r = _DumpReader(unit, _Warn(source, unit.warnings))
        try:
            for text, lines_before in _streamed_blocks(fh, first, unit, warnings):
                _feed(r, text, lines_before)
        except _NotRuntimeDump:
            return None
        r.finish()
    if not (unit.processes or unit.wait_channels or not unit.header.is_empty()):
        raise InputError(path, _nothing_read(None))
    unit.warnings[:0] = warnings
    return [unit]


def _streamed_blocks(fh: BinaryIO, block: bytes, unit: DumpUnit,
                    warnings: list[ReadWarning]) -> Iterator[tuple[str, int]]:
    """The file's text a block at a time (each ending at a newline), with the number of text lines before it."""
    lines_before = 0   # of the bytes (for the invalid-UTF-8 warning)
    text_lines = 0     # of the text (a lone CR is a line break too)
    while block:
        if not block.endswith(b"\n"):
            block += fh.readline()
        text = _decode(block, unit.source, warnings, lines_before)
        if text.startswith("------ ") or "\n------ " in text:
            raise _NotRuntimeDump
        unit.nbytes += len(text)
        yield text, text_lines
        text_lines += text.count("\n") + (0 if text.endswith("\n") else 1)
        lines_before += block.count(b"\n")
        block = fh.read(STREAM_BLOCK)


def _nothing_read(pasted: Paste | None) -> str:
    if pasted is None:
        return "no thread dump, Waiting Channels block or ANR header found"
    why = ("no thread header, stack frame, ANR header (ANR in / Reason / am_anr), watchdog line or ANR title found "
           "in any pasted form (traces.txt, Play Console, Crashlytics, Sentry, Bugsnag, logcat)")
    return why + "".join(f"; {n}" for n in pasted.notes)
