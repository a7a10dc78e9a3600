"""The thread-dump model: processes, threads, frames and lock lines as read from ART/Dalvik dumps, Waiting Channels
blocks and ANR headers. Frames are kept as their raw text and parsed on demand, so reading stays fast."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from droidlag.errors import ReadWarning

_JAVA_FRAME = re.compile(r"^at (\S+?)\((.*)\)\s*$")
_NATIVE_FRAME = re.compile(r"^(?:native: )?#\d+ pc [0-9a-fA-F]+\s+(\S+)(?:\s+\(offset [0-9a-fA-F]+\))?(?:\s+\((.*?)\))?")
_KERNEL_FRAME = re.compile(r"^kernel: ([A-Za-z_][\w.]*)")


@dataclass(frozen=True, slots=True)
class Frame:
    """One stack frame. kind: 'java', 'native' or 'kernel'; symbol: `pkg.Class.method`, the native symbol (offset
    kept; normalization drops it) or the kernel function; location: `File.java:42` or the library path."""

    kind: str
    symbol: str
    location: str
    text: str

    @property
    def method_name(self) -> str:
        """The last dotted part of a Java symbol (`doStep2` for `a.b.C$1.doStep2`)."""
        return self.symbol.rsplit(".", 1)[-1]

    @property
    def lib(self) -> str:
        """Library file name of a native frame (`libbinder.so`), else ''."""
        if self.kind != "native":
            return ""
        return self.location.rsplit("/", 1)[-1]


def parse_frame(text: str) -> Frame | None:
    """Parse one stripped frame line; None for lines that name no frame (`kernel: (couldn't read ...)`)."""
    if text.startswith("at "):
        m = _JAVA_FRAME.match(text)
        if m:
            return Frame("java", m.group(1), m.group(2), text)
        return Frame("java", text[3:].strip(), "", text)
    if text.startswith("kernel:"):
        m = _KERNEL_FRAME.match(text)
        return Frame("kernel", m.group(1), "", text) if m else None
    m = _NATIVE_FRAME.match(text)
    if m:
        sym = m.group(2) or ""
        return Frame("native", sym, m.group(1), text)
    return None


@dataclass(slots=True)
class LockLine:
    """A `- waiting to lock / locked / waiting on / parking to wait for / sleeping on` line under a frame.
    frame_index: index of the frame it follows (-1 when it comes before any frame); held_by: the dump's thread id
    of the owner when the line names it."""

    action: str
    addr: str | None
    cls: str | None
    held_by: int | None
    held_by_name: str | None
    frame_index: int
    line: int


@dataclass(slots=True)
class ThreadDump:
    """One thread of one process dump. tid: the dump's thread id (`tid=N`), sys_tid: the Linux tid; state: the
    VM state word (`Blocked`, `MONITOR`, `Native`...), kstate: the kernel state letter (`state=D`)."""

    name: str
    tid: int | None = None
    sys_tid: int | None = None
    state: str = ""
    kstate: str | None = None
    daemon: bool = False
    prio: int | None = None
    obj: str | None = None
    utm: int | None = None
    stm: int | None = None
    schedstat: tuple[int, ...] | None = None
    wchan: str | None = None
    raw_frames: list[str] = field(default_factory=list)
    locks: list[LockLine] = field(default_factory=list)
    line: int = 0
    _frames: list[Frame] | None = None

    @property
    def frames(self) -> list[Frame]:
        """Parsed frames, innermost first (parsed once, on first use)."""
        if self._frames is None:
            out = []
            for t in self.raw_frames:
                f = parse_frame(t)
                if f is not None:
                    out.append(f)
            self._frames = out
        return self._frames


@dataclass(slots=True)
class ProcessDump:
    """One `----- pid N at DATE -----` block (or a Waiting Channels block, kind 'wchan')."""

    pid: int | None
    cmdline: str = ""
    time: str = ""
    kind: str = "dump"
    threads: list[ThreadDump] = field(default_factory=list)
    line: int = 0
    complete: bool = False
    abi: str = ""
    fingerprint: str = ""

    @property
    def main_thread(self) -> ThreadDump | None:
        """The main thread, found by `tid=1` or `sysTid == pid`, never by name (some ROMs rename it)."""
        for t in self.threads:
            if t.tid == 1:
                return t
        for t in self.threads:
            if t.sys_tid is not None and t.sys_tid == self.pid:
                return t
        return None

    def thread_by_tid(self, tid: int) -> ThreadDump | None:
        for t in self.threads:
            if t.tid == tid:
                return t
        return None


@dataclass(slots=True)
class AnrHeader:
    """What the ANR/watchdog/xCrash header says: the process, the reason, load, CPU and memory numbers."""

    process: str | None = None
    pid: int | None = None
    reason: str | None = None
    subject: str | None = None
    load: tuple[float, ...] | None = None
    cpu_total_pct: float | None = None
    cpu_usage: list[tuple[float, int | None, str]] = field(default_factory=list)
    memory_kb: dict[str, int] = field(default_factory=dict)
    d_state_threads: list[str] = field(default_factory=list)
    watchdog: str | None = None
    crash_type: str | None = None
    abi: str | None = None

    def is_empty(self) -> bool:
        return not (self.process or self.pid or self.reason or self.subject or self.load or self.cpu_usage
                    or self.memory_kb or self.watchdog or self.crash_type)


@dataclass(frozen=True, slots=True)
class BinderTransaction:
    """A pending binder transaction from the kernel's `binder transactions`/`state` text."""

    from_pid: int
    from_tid: int
    to_pid: int
    to_tid: int
    line: int


@dataclass(slots=True)
class DumpUnit:
    """One readable unit: a dump file, or one section of a bugreport. snapshot: True when the dump was taken on
    request (`VM TRACES JUST NOW`) rather than for an ANR, so only deadlocks in it are events."""

    source: str
    processes: list[ProcessDump] = field(default_factory=list)
    header: AnrHeader = field(default_factory=AnrHeader)
    binder: list[BinderTransaction] = field(default_factory=list)
    wait_channels: dict[int, dict[int, tuple[str | None, str]]] = field(default_factory=dict)
    warnings: list[ReadWarning] = field(default_factory=list)
    snapshot: bool = False
    nbytes: int = 0
