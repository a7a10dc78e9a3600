"""Reader for ANR/SNR thread dumps: ART and Dalvik `traces.txt`, ApplicationExitInfo traces (Waiting Channels,
native-only dumps), ANR/`Subject:` headers, xCrash ANR tombstones, watchdog lines and the dump sections of bugreport
text. Salvages every complete thread of a damaged file and records warnings with line numbers."""
from __future__ import annotations

import re
from pathlib import Path

from droidlag.errors import InputError, ReadWarning
from droidlag.io.anr_paste import canonicalize, needs_canonicalizing
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
_ANR_IN = re.compile(r"^(?:.*\s)?ANR in (\S+)")
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
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        text = data.decode("utf-8", "replace")
        warnings.append(ReadWarning(source, "invalid UTF-8 (mixed encoding?); undecodable bytes replaced", line=line))
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


# The usual headers in one match: ART/Dalvik (`"main" prio=5 tid=1 Blocked`, `"x" prio=5 (not attached)`, `"y"
# daemon prio=5 tid=9 Native (still starting up)`) and native-only (`"Binder:474_2" sysTid=474`), quote-free name,
# no `=` in the state words. Any other shape goes through the token loop below, which these agree with on every
# line they accept (the state is the words that hold no `=`, joined by one space).
_THREAD_HEADER = re.compile(r'"((?:[^" ][^"]*)?)"( daemon)? prio=(\d+) (?:tid=(\d+) )?([^"=]*)')
_NATIVE_HEADER = re.compile(r'"((?:[^" ][^"]*)?)" sysTid=(\d+)')


def _parse_thread_header(line: str) -> ThreadDump | None:
    m = _THREAD_HEADER.fullmatch(line)
    if m:
        name, daemon, prio, tid, state = m.groups()
        if state.isalpha():   # one word (`Blocked`), the usual case
            if state != "daemon":
                return ThreadDump(name, None if tid is None else int(tid), None, state, None, daemon is not None,
                                  int(prio))
        else:
            words = state.split()
            if "daemon" not in words:
                return ThreadDump(name, None if tid is None else int(tid), None, " ".join(words), None,
                                  daemon is not None, int(prio))
    elif '" sysTid=' in line:
        m = _NATIVE_HEADER.fullmatch(line)
        if m:
            return ThreadDump(m.group(1), None, int(m.group(2)))
    return _header_by_tokens(line)


def _header_by_tokens(line: str) -> ThreadDump | None:
    """Any thread header shape: the name up to the first `" prio=`/`" daemon prio=`/`" sysTid=` (else the last
    quote), then `daemon`, `prio=`, `tid=`, `sysTid=` tokens; the other `=`-free tokens are the state words."""
    end = -1
    for marker in ('" prio=', '" daemon prio=', '" sysTid='):
        end = line.find(marker)
        if end > 0:
            break
    if end <= 0:
        end = line.rfind('"')
        if end <= 0:
            return None
    t = ThreadDump(name=line[1:end])
    state_words = []
    for tok in line[end + 1:].split():
        if tok == "daemon":
            t.daemon = True
        elif tok.startswith("prio="):
            t.prio = _int(tok[5:])
        elif tok.startswith("tid="):
            t.tid = _int(tok[4:])
        elif tok.startswith("sysTid="):
            t.sys_tid = _int(tok[7:])
        elif "=" in tok:
            continue
        else:
            state_words.append(tok)
    t.state = " ".join(state_words)
    return t


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
        h.subject = line[9:].strip()
        if h.reason is None:
            h.reason = h.subject
        if ("Blocked in" in h.subject or h.subject.startswith("Watchdog")) and h.watchdog is None:
            h.watchdog = h.subject
        return True
    if "ANR in " in line:
        m = _ANR_IN.match(line)
        if m:
            h.process = m.group(1)
            return True
    if c == "P":
        m = _PID_LINE.match(line)
        if m:
            h.pid = int(m.group(1))
            return True
        m = _D_STATE.search(line)
        if m:
            h.d_state_threads.append(f"{m.group(2)} (tid {m.group(1)})")
            return True
    if c == "R" and line.startswith("Reason: "):
        h.reason = line[8:].strip()
        return True
    if c == "P" and line.startswith("PSI memory full avg10: "):   # written by io.anr_paste from a pressure block
        h.psi_memory_full_avg10 = _float(line[23:])
        return True
    if c == "L" and line.startswith("Load: "):
        m = _LOAD.match(line)
        if m:
            h.load = tuple(float(x) for x in m.groups())
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


def parse_dump(text: str, source: str, line_offset: int = 0, unit: DumpUnit | None = None) -> DumpUnit:
    """Parse one dump text (a file or a bugreport section) into a DumpUnit. Line numbers in warnings count from
    `line_offset` + 1. Never raises on bad content: incomplete threads and blocks are kept and reported."""
    unit = unit or DumpUnit(source=source)
    unit.nbytes += len(text)
    warn = _Warn(source, unit.warnings)
    h = unit.header
    proc: ProcessDump | None = None
    thread: ThreadDump | None = None
    wchan: dict[int, tuple[str | None, str]] | None = None
    frames: list[str] = []  # thread.raw_frames while thread is not None
    attrs: list[str] = []  # thread.raw_attrs while thread is not None
    unknown = 0
    first_unknown = None
    for i, line in enumerate(text.split("\n")):
        if not line:
            continue
        c = line[0]
        if c == " " or c == "\t":
            # Stack lines are most of a dump: the frame kinds are told apart by one tuple startswith.
            if thread is not None:
                s = line.lstrip()
                if s.startswith(_FRAME_PREFIXES):
                    frames.append(s)
                    continue
                c2 = s[:1]
                if c2 == "|":
                    attrs.append(s)  # parsed by the model on first use of the fields it sets
                elif c2 == "-" and s.startswith("- "):
                    lk = _parse_lock(s, len(frames) - 1, line_offset + i + 1)
                    if lk is not None:
                        thread.locks.append(lk)
                elif c2 == "(" or c2 == "" or s.startswith("NOTE:"):
                    pass
                else:
                    unknown += 1
                    if first_unknown is None:
                        first_unknown = line_offset + i + 1
                continue
            _header_line(h, line)
            continue
        if c == '"':
            t = _parse_thread_header(line)
            if t is None:
                warn(f"unreadable thread header skipped: {line[:80]!r}", line_offset + i + 1)
                thread = None
                continue
            if proc is None:
                # xCrash and bare dumps: threads without a `----- pid` line belong to an implicit process.
                proc = ProcessDump(pid=h.pid, cmdline=h.process or "", line=line_offset + i + 1, kind="implicit")
                unit.processes.append(proc)
            t.line = line_offset + i + 1
            proc.threads.append(t)
            thread, frames, attrs = t, t.raw_frames, t.raw_attrs
            continue
        if c == "-":
            if line.startswith("----- pid "):
                m = _PID_START.match(line)
                if m:
                    if proc is not None and not proc.complete and proc.kind != "implicit":
                        warn(f"dump of pid {proc.pid} has no end line (truncated); kept {len(proc.threads)} threads",
                             proc.line)
                    proc = ProcessDump(pid=int(m.group(1)), time=m.group(2), line=line_offset + i + 1)
                    unit.processes.append(proc)
                    thread, wchan = None, None
                    continue
            elif line.startswith("----- end "):
                m = _PID_END.match(line)
                if proc is not None:
                    proc.complete = True
                if wchan is not None:
                    wchan = None
                proc, thread = (None, None)
                continue
            elif line.startswith("----- Waiting Channels: pid "):
                m = _WCHAN_START.match(line)
                if m:
                    pid = int(m.group(1))
                    proc = ProcessDump(pid=pid, time=m.group(2), kind="wchan", line=line_offset + i + 1)
                    unit.processes.append(proc)
                    wchan = unit.wait_channels.setdefault(pid, {})
                    thread = None
                    continue
            elif line.startswith("--- --- ---"):
                continue
            elif line.startswith("- ") and thread is not None:
                lk = _parse_lock(line, len(frames) - 1, line_offset + i + 1)
                if lk is not None:
                    thread.locks.append(lk)
                continue
            _header_line(h, line)
            continue
        if c == "+" and line.startswith("+++ +++"):
            # xCrash: the ART dump ends at the `+++` separator; logcat, fds and memory info follow.
            if proc is not None:
                proc.complete = True
            proc, thread = None, None
            continue
        if c == "s" and line.startswith("sysTid=") and proc is not None and proc.kind == "wchan":
            m = _WCHAN_LINE.match(line)
            if m:
                tid, st, ch = int(m.group(1)), m.group(2), m.group(3).strip()
                wchan[tid] = (st, ch)
                proc.threads.append(ThreadDump(name="", sys_tid=tid, kstate=st, wchan=ch, line=line_offset + i + 1))
            continue
        if c == "C" and line.startswith("Cmd line: "):
            if proc is None:
                proc = ProcessDump(pid=h.pid, line=line_offset + i + 1, kind="implicit")
                unit.processes.append(proc)
            proc.cmdline = line[10:].strip()
            continue
        if c == "A" and line.startswith("ABI: ") and proc is not None:
            proc.abi = line[5:].strip().strip("'")
            continue
        if c == "B" and line.startswith("Build fingerprint: ") and proc is not None:
            proc.fingerprint = line[19:].strip().strip("'")
            continue
        if thread is not None and c == "a" and line.startswith("at "):
            frames.append(line)
            continue
        if proc is None or thread is None:
            _header_line(h, line)
    if proc is not None and not proc.complete and proc.kind not in ("implicit", "wchan"):
        warn(f"dump of pid {proc.pid} has no end line (truncated); kept {len(proc.threads)} threads", proc.line)
    if unknown:
        warn(f"{unknown} unrecognised line(s) inside thread stacks ignored", first_unknown)
    _merge_wait_channels(unit)
    for p in unit.processes:
        if p.pid is None:
            mt = p.main_thread
            if mt is not None and mt.sys_tid is not None:
                p.pid = mt.sys_tid
        if not p.cmdline and h.process and (p.pid == h.pid or h.pid is None):
            p.cmdline = h.process
    warn.close()
    return unit


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
    out = []
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


def split_sections(text: str) -> list[tuple[str, int, str]]:
    """Bugreport-style `------ TITLE ------` sections as (title, first line number, body); the text before the first
    title is returned with title ''."""
    out = []
    prev_title, prev_start, prev_line = "", 0, 0
    line_no = 0
    pos = 0
    for m in _SECTION.finditer(text):
        line_no += text.count("\n", pos, m.start())
        pos = m.start()
        out.append((prev_title, prev_line, text[prev_start:m.start()]))
        prev_title, prev_start, prev_line = m.group(1), m.end(), line_no
    out.append((prev_title, prev_line, text[prev_start:]))
    return out


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
    if not units:
        u = DumpUnit(source=source)
        u.nbytes = len(text)
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
        data = read_bytes(path)
    warnings: list[ReadWarning] = []
    if data[:2] == GZIP_MAGIC:
        data = gunzip(data, path, warnings)
    text = decode(data, source, warnings)
    pasted = None
    if needs_canonicalizing(text):
        # a pasted report (Play Console, Crashlytics, APM, logcat, markdown...): rewritten into traces.txt form
        pasted = canonicalize(text)
        text = pasted.text
        warnings.extend(ReadWarning(source, n) for n in pasted.notes)
    units = parse_text(text, source)
    if not any(u.processes or u.wait_channels or not u.header.is_empty() for u in units):
        raise InputError(path, _nothing_read(pasted))
    units[0].warnings[:0] = warnings
    if pasted is not None:
        units[0].pasted = True
    return units


def _nothing_read(pasted) -> str:
    if pasted is None:
        return "no thread dump, Waiting Channels block or ANR header found"
    why = ("no thread header, stack frame, ANR header (ANR in / Reason / am_anr), watchdog line or ANR title found "
           "in any pasted form (traces.txt, Play Console, Crashlytics, Sentry, Bugsnag, logcat)")
    return why + "".join(f"; {n}" for n in pasted.notes)
