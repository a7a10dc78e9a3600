"""The thread-dump model: processes, threads, frames and lock lines as read from ART/Dalvik dumps, Waiting Channels
blocks and ANR headers. Frames and a thread's `| k=v` attribute lines are kept as their raw text and parsed on
demand, so reading stays fast."""
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


def _int(s: str) -> int | None:
    try:
        return int(s)
    except ValueError:
        return None


def _value_at(s: str, i: int) -> str:
    """The value of a `| k=v k=(a b c)` attribute starting at `i`: up to the next space, or the whole `( ... )`."""
    if s.startswith("(", i):
        j = s.find(")", i)
        return s[i:j + 1] if j > 0 else s[i:]
    j = s.find(" ", i)
    return s[i:j] if j > 0 else s[i:]


class ThreadDump:
    """One thread of one process dump. tid: the dump's thread id (`tid=N`), sys_tid: the Linux tid; state: the
    VM state word (`Blocked`, `MONITOR`, `Native`...), kstate: the kernel state letter (`state=D`).

    The `| k=v ...` attribute lines are kept raw (`raw_attrs`, in dump order) and read on first access of the
    fields they set, like `raw_frames`: sys_tid, and separately obj/kstate/utm/stm/schedstat. A value set on the
    object (the header's `sysTid=`, a Waiting Channels state) counts as set before the attribute lines that follow
    it and after those before it, exactly as if every line had been applied when read. Behaves as the former
    dataclass: same constructor, fields, equality and repr."""

    __slots__ = ("name", "tid", "_sys_tid", "state", "_kstate", "daemon", "prio", "_obj", "_utm", "_stm",
                 "_schedstat", "wchan", "_raw_frames", "_frames_text", "locks", "line", "_frames", "raw_attrs",
                 "_sys_done", "_rest_done")
    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value (as the dataclass was)

    def __init__(self, name: str, tid: int | None = None, sys_tid: int | None = None, state: str = "",
                 kstate: str | None = None, daemon: bool = False, prio: int | None = None, obj: str | None = None,
                 utm: int | None = None, stm: int | None = None, schedstat: tuple[int, ...] | None = None,
                 wchan: str | None = None, raw_frames: list[str] | None = None, locks: list[LockLine] | None = None,
                 line: int = 0, _frames: list[Frame] | None = None, raw_attrs: list[str] | None = None):
        self.name = name
        self.tid = tid
        self._sys_tid = sys_tid
        self.state = state
        self._kstate = kstate
        self.daemon = daemon
        self.prio = prio
        self._obj = obj
        self._utm = utm
        self._stm = stm
        self._schedstat = schedstat
        self.wchan = wchan
        self._raw_frames = [] if raw_frames is None else raw_frames
        self._frames_text: str | None = None   # the frames as one text (the reader's form), split on first use
        self.locks = [] if locks is None else locks
        self.line = line
        self._frames = _frames
        self.raw_attrs = [] if raw_attrs is None else raw_attrs
        self._sys_done = self._rest_done = 0  # how many of raw_attrs each field group has applied

    # -- the attribute lines, applied on demand (a key counts only where its first occurrence in a line starts a
    # word; an integer value starting with `(` is not an integer either way) --

    def _apply_sys(self) -> None:
        attrs = self.raw_attrs
        for k in range(self._sys_done, len(attrs)):
            s = attrs[k]
            if "sysTid=" in s:
                i = s.find("sysTid=")
                if i == 0 or s[i - 1] in " |":
                    j = s.find(" ", i + 7)
                    self._sys_tid = _int(s[i + 7:j] if j > 0 else s[i + 7:])
        self._sys_done = len(attrs)

    def _apply_rest(self) -> None:
        attrs = self.raw_attrs
        for k in range(self._rest_done, len(attrs)):
            s = attrs[k]
            if "obj=" in s:
                i = s.find("obj=")
                if i == 0 or s[i - 1] in " |":
                    self._obj = _value_at(s, i + 4)
            if "state=" in s:
                i = s.find("state=")
                if i == 0 or s[i - 1] in " |":
                    self._kstate = _value_at(s, i + 6)
                if "utm=" in s:
                    i = s.find("utm=")
                    if i == 0 or s[i - 1] in " |":
                        j = s.find(" ", i + 4)
                        self._utm = _int(s[i + 4:j] if j > 0 else s[i + 4:])
                if "stm=" in s:
                    i = s.find("stm=")
                    if i == 0 or s[i - 1] in " |":
                        j = s.find(" ", i + 4)
                        self._stm = _int(s[i + 4:j] if j > 0 else s[i + 4:])
                if "schedstat=(" in s:
                    i = s.find("schedstat=")
                    if i == 0 or s[i - 1] in " |":
                        v = _value_at(s, i + 10)
                        if v.startswith("("):
                            parts = v.strip("()").split()
                            try:
                                self._schedstat = tuple(map(int, parts))
                            except ValueError:
                                self._schedstat = tuple(n for n in map(_int, parts) if n is not None)
        self._rest_done = len(attrs)

    @property
    def sys_tid(self) -> int | None:
        if self._sys_done != len(self.raw_attrs):
            self._apply_sys()
        return self._sys_tid

    @sys_tid.setter
    def sys_tid(self, v: int | None) -> None:
        if self._sys_done != len(self.raw_attrs):
            self._apply_sys()
        self._sys_tid = v

    @property
    def obj(self) -> str | None:
        if self._rest_done != len(self.raw_attrs):
            self._apply_rest()
        return self._obj

    @obj.setter
    def obj(self, v: str | None) -> None:
        if self._rest_done != len(self.raw_attrs):
            self._apply_rest()
        self._obj = v

    @property
    def kstate(self) -> str | None:
        if self._rest_done != len(self.raw_attrs):
            self._apply_rest()
        return self._kstate

    @kstate.setter
    def kstate(self, v: str | None) -> None:
        if self._rest_done != len(self.raw_attrs):
            self._apply_rest()
        self._kstate = v

    @property
    def utm(self) -> int | None:
        if self._rest_done != len(self.raw_attrs):
            self._apply_rest()
        return self._utm

    @utm.setter
    def utm(self, v: int | None) -> None:
        if self._rest_done != len(self.raw_attrs):
            self._apply_rest()
        self._utm = v

    @property
    def stm(self) -> int | None:
        if self._rest_done != len(self.raw_attrs):
            self._apply_rest()
        return self._stm

    @stm.setter
    def stm(self, v: int | None) -> None:
        if self._rest_done != len(self.raw_attrs):
            self._apply_rest()
        self._stm = v

    @property
    def schedstat(self) -> tuple[int, ...] | None:
        if self._rest_done != len(self.raw_attrs):
            self._apply_rest()
        return self._schedstat

    @schedstat.setter
    def schedstat(self, v: tuple[int, ...] | None) -> None:
        if self._rest_done != len(self.raw_attrs):
            self._apply_rest()
        self._schedstat = v

    # -- the raw frames: the reader hands them over as one newline-joined text (one string per thread, not one per
    # frame); most threads of a dump are only searched for a word, which frames_text() does without splitting --

    @property
    def raw_frames(self) -> list[str]:
        """The stripped frame lines, innermost first."""
        if self._frames_text is not None:
            self._raw_frames = self._frames_text.split("\n")
            self._frames_text = None
        return self._raw_frames

    @raw_frames.setter
    def raw_frames(self, v: list[str]) -> None:
        self._raw_frames, self._frames_text = v, None

    def set_frames_text(self, text: str) -> None:
        """The raw frames as one text, joined by newlines (a frame line holds none); '' for no frames."""
        self._raw_frames, self._frames_text = [], text or None

    def frames_text(self) -> str:
        """The raw frames joined by newlines: a word search over every frame line of the thread."""
        if self._frames_text is not None:
            return self._frames_text
        return "\n".join(self._raw_frames)

    def has_frames(self) -> bool:
        return self._frames_text is not None or bool(self._raw_frames)

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

    _FIELDS = ("name", "tid", "sys_tid", "state", "kstate", "daemon", "prio", "obj", "utm", "stm", "schedstat",
               "wchan", "raw_frames", "locks", "line", "_frames")

    def _astuple(self) -> tuple[object, ...]:
        return tuple(getattr(self, f) for f in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ThreadDump) and other.__class__ is self.__class__:
            return self._astuple() == other._astuple()
        return NotImplemented

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self._FIELDS) + ")"


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
    psi_memory_full_avg10: float | None = None   # % of the last 10 s all tasks stalled on memory (/proc/pressure)
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
    pasted: bool = False   # read from a pasted report (rewritten by io.anr_paste), not a raw dump
