"""ANR reports as people paste them, rewritten into the ART `traces.txt` form that `io.anr.parse_dump` reads.

Recognised by content, line by line (never by file name), from what each format is:
- markdown and HTML wrapping: fences (``` ~~~), leading/trailing backticks, blockquote `>` marks, bold `**`,
  headings, `<details>`/`<summary>`/`<blockquote>` tags, HTML entities, GitHub's rewrite of `#01` into `owner/repo#1`;
- logcat prefixes (threadtime, time/brief `E/Tag(pid):`, Android Studio `pid-tid/pkg E/Tag:`, `E Tag: `), so an
  `ActivityManager: ANR in` block, an `am_anr` event line or `Watchdog:` lines read as the header they carry;
- thread headers: ART (`"main" prio=5 tid=1 Blocked`, also without `prio=` or with a lost leading quote),
  Play Console / Crashlytics (`main (blocked):tid=1 systid=N | waiting to lock ... held by thread 44`, on one line
  or two, `(native)` form), Sentry's `Thread: main`, ANR-WatchDog's `Thread: main (state = TIMED_WAITING)`,
  app-made `name (STATE)` headers, localized state words (Spanish, Portuguese, Russian, Chinese);
- frames: `at a.b.C.m(F.java:1)`, `at a.b.C.m (F.java:1)`, the same without `at` or numbered (`1 a.b.C.m(...)`,
  `1<TAB>...`, a number on its own line), full signatures (`a.B.RetType m(args)(SourceFile:1)`), bare method names in
  a stack (Sentry UI), native `#00 pc 0x... lib.so (fn + 28) (BuildId: ...)`, `native: pc ...` without `#NN`,
  Bugsnag `lib.so +0x1c  symbol`, Sentry `libc  0x1c  symbol`;
- lock lines in English and localized (`- <verb> <0x...> (a X) <held by words> N`: the holder is the number);
- stacks run together on one line (newlines lost): split at each frame, lock line and thread header (split_run_on).

Frames met before any thread header are the main thread's (a frames-only paste is the ANR's main stack); that is
said in the notes. `canonicalize` returns the rewritten text and notes (what was assumed, what was dropped)."""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

# --- line cleaning -------------------------------------------------------------------------------------------
_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})[\w+-]*\s*$")
_TAG = re.compile(r"</?(?:details|summary|blockquote|pre|code|p|br|b|i|em|strong)\b[^>]*>", re.I)
_LOGCAT_PREFIXES = (
    # threadtime: 01-08 16:28:22.877  1382 31144 W Tag: (optionally with a year, a uid)
    re.compile(r"^(?:\d{4}-)?\d\d-\d\d\s+\d\d:\d\d:\d\d\.\d+\s+(?:\S+\s+)?\d+\s+\d+\s+[VDIWEFA]\s+[^:]{1,64}?:\s?"),
    # Android Studio: 02-02 15:08:30.600 369-392/? E/ActivityManager:
    re.compile(r"^(?:\d{4}-)?\d\d-\d\d\s+\d\d:\d\d:\d\d\.\d+\s+\d+-\d+/\S*\s+[VDIWEFA]/[^:]{1,64}?:\s?"),
    # time / brief: 07-13 15:48:57.588: E/AndroidRuntime(20144):   or   E/Tag( 123):
    re.compile(r"^(?:(?:\d{4}-)?\d\d-\d\d\s+\d\d:\d\d:\d\d\.\d+:?\s+)?[VDIWEFA]/[^(:]{1,64}\(\s*\d+(?::\s*\d+)?\):\s?"),
    # logcat -v long: [ 01-08 16:28:22.877  1382: 1440 W/Tag ]
    re.compile(r"^\[ (?:\d{4}-)?\d\d-\d\d\s+\d\d:\d\d:\d\d\.\d+\s+\d+:\s*\d+\s+[VDIWEFA]/\S+\s*\]\s*$"),
    # Studio's newer columns / bare level+tag: "E ActivityManager: "
    re.compile(r"^[VDIWEF] (?:ActivityManager|Watchdog|AndroidRuntime|ANRManager|am_anr|SQLiteConnectionPool)"
               r"\s*:\s?"),
)
CUT_TAIL_FRAMES = 3
CUT_THREAD = "a thread cut at the top of the paste"
LOGGED = "\x01"   # marks a cleaned line that carried a logcat prefix
_BOLD = re.compile(r"(?<!\*)\*\*(?!\*)")
_GITHUB_REF = re.compile(r"^[\w.-]+/[\w.-]+#(\d+)(?=\s+pc\s)")

# --- thread headers ----------------------------------------------------------------------------------------------
STATE_WORDS = {
    # Java Thread.State / Crashlytics words -> ART state words
    "blocked": "Blocked", "waiting": "Waiting", "timed waiting": "TimedWaiting", "timed_waiting": "TimedWaiting",
    "native": "Native", "runnable": "Runnable", "sleeping": "Sleeping", "suspended": "Suspended",
    "new": "Starting", "terminated": "Terminated", "monitor": "Blocked", "wait": "Waiting", "timedwaiting":
    "TimedWaiting", "unknown": "",
    # localized Play Console state words
    "bloqueado": "Blocked", "bloqueada": "Blocked", "en espera": "Waiting", "esperando": "Waiting",
    "espera": "Waiting", "aguardando": "Waiting", "em espera": "Waiting", "espera temporizada": "TimedWaiting",
    "espera cronometrada": "TimedWaiting", "nativo": "Native", "nativa": "Native", "suspendido": "Suspended",
    "заблокирован": "Blocked", "заблокировано": "Blocked", "заблокирована": "Blocked", "ожидание": "Waiting",
    "ожидает": "Waiting", "ожидание с тайм-аутом": "TimedWaiting", "нативный": "Native", "собственный": "Native",
    "сон": "Sleeping", "已屏蔽": "Blocked", "已阻塞": "Blocked", "阻塞": "Blocked", "封鎖": "Blocked", "已封鎖": "Blocked",
    "等待": "Waiting", "等待中": "Waiting", "正在等待": "Waiting", "定时等待": "TimedWaiting", "计时等待": "TimedWaiting",
    "限時等待": "TimedWaiting", "原生": "Native", "本机": "Native", "睡眠": "Sleeping", "可运行": "Runnable",
}
_STATE_ALT = "|".join(sorted((re.escape(k) for k in STATE_WORDS), key=len, reverse=True))
# main (blocked):tid=1 systid=123 | waiting to lock ...   /  main (native): tid=1 systid=1   / Thread-3 (native)
# A name ending in a colon is a field label (dumpstate's `Command line: (unknown)`), not a thread.
_CRASHLYTICS_HEADER = re.compile(
    r"^(?P<name>[^\s\"|][^|]*?)(?<!:) \((?P<state>" + _STATE_ALT + r")\)\s*(?::\s*(?P<rest>tid=.*))?$", re.I)
_TID_LINE = re.compile(r"^tid=(?P<tid>\d+)(?:\s+systid=(?P<sys>\d+))?\s*(?:\|\s*(?P<lock>.*))?$", re.I)
_ANRWATCHDOG = re.compile(r"(?:^|\$)_?Thread: (?P<name>.+?) \(state = (?P<state>\w+)\)")
_SENTRY_THREAD = re.compile(r"^Thread: (?P<name>\S.*?)\s*$")
_ART_HEADER = re.compile(r'^"[^"]*"(?: daemon)? (?:prio=|tid=|sysTid=)')
_ART_LOST_QUOTE = re.compile(r'^(?P<name>[^\s"]+)" (?:daemon )?(?:prio|tid)=')

# --- frames ------------------------------------------------------------------------------------------------------
_NUMBERED = re.compile(r"^(?:\d{1,3}[\t ]+)(?=\S)")
_JAVA_AT = re.compile(r"^at\s*(?P<sym>[^\s(]+)\s?(?:\((?P<loc>[^()]*)\))?\s*(?P<tail>.*)$")
# a.b.C.m (File.java:12) / a.b.C.m(Native Method) / a.b.C.<init> (unavailable) / a.b.C.m(r8-map-id-x:1)
_JAVA_BARE = re.compile(r"^(?P<sym>[A-Za-z_$][\w$]*(?:\.[\w$<>-]+)+)\s?\((?P<loc>[^()]*)\)\s*$")
# com.a.B.RetType method(args)(SourceFile:12)
_JAVA_SIGNATURE = re.compile(r"^(?P<cls>(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*)\.(?:[\w$.\[\]<>]+ )(?P<m>[\w$<>]+)\([^()]*\)"
                             r"\((?P<loc>[^()]*)\)\s*$")
# Sentry UI bare names inside a stack: `addBreadcrumb`, `onStateChange (NativeBridge.kt:122)`
_BARE_METHOD = re.compile(r"^(?P<sym>[A-Za-z_$][\w$<>-]*)(?:\s?\((?P<loc>[^()]*)\))?$")
_NATIVE_PC = re.compile(r"^(?:native:\s*)?(?:#\s?(?P<n>\d+)\s+)?pc\s+(?:0x)?(?P<pc>[0-9a-fA-F]+)\s+(?P<rest>\S.*)$")
_BUGSNAG_NATIVE = re.compile(r"^(?P<lib>\S+\.(?:so|oat|odex|vdex|apk|art|dex)\S*)\s+\+0x(?P<pc>[0-9a-fA-F]+)"
                             r"(?:\s+(?P<sym>\S.*))?$")
_SENTRY_NATIVE = re.compile(r"^(?P<lib>[\w.-]+?)\s*0x(?P<pc>[0-9a-fA-F]+)\s+(?P<sym>[^\s(][^()]*)$")
# Bugsnag's GitHub integration: `QueuedWork.java:245 - android.app.QueuedWork.processPendingWork`
_BUGSNAG_GITHUB = re.compile(r"^(?P<loc>[\w$.-]+\.(?:java|kt|scala):-?\d+) - (?P<sym>[A-Za-z_$][\w$.<>-]+)$")
_SYM_SPACES = re.compile(r"\s\+\s(\d+)\)")

# --- lock lines --------------------------------------------------------------------------------------------------
_LOCK_LINE = re.compile(r"^-\s*(?P<verb>[^<]*?)\s*<(?P<addr>0x[0-9a-fA-F]+)>\s*(?:\((?:a |an |un |una |um |uma )?"
                        r"(?P<cls>[^)]*)\))?(?P<tail>.*)$")
_HOLDER = re.compile(r"(?:thread|tid=|threadid=|потоком|поток|线程|執行緒|subproceso|hilo|linha de execução|thread)"
                     r"\s*(?P<n>\d+)|(?P<n2>\d+)\s*(?:号线程|個執行緒)?\s*\)?\s*$", re.I)
_VERBS = (
    ("waiting to lock", ("waiting to lock", "esperando para bloquear", "esperando bloquear", "aguardando para bloquear",
                         "aguardando bloqueio", "ожидание блокировки", "ожидает блокировки", "等待锁定", "等待鎖定",
                         "正在等待锁定", "正在等待鎖定", "esperando el bloqueo", "esperando bloqueo")),
    ("parking to wait for", ("parking to wait for",)),
    ("waiting on", ("waiting on", "esperando en", "aguardando em", "ожидание на", "ожидание", "等待")),
    ("sleeping on", ("sleeping on",)),
    ("locked", ("locked", "bloqueado", "bloqueada", "заблокировано", "заблокирован", "已锁定", "已鎖定", "锁定", "鎖定")),
)
# Header-ish lines kept as they are (io.anr reads them at line start).
_KEEP_HEADER = re.compile(
    r"^(?:----- |Cmd line:|Build fingerprint:|ABI:|Subject:|ANR in |PID:|Reason:|Load:|Parent:|CPU usage from|"
    r"DALVIK THREADS|suspend all histogram|sysTid=\d+\s|\+\+\+ \+\+\+|Build type:|pid: \d+|Crash type:|\*\*\* WATCHDOG|Watchdog-Type:|"
    r"\d+(?:\.\d+)?% |\+\d+(?:\.\d+)?% |\w[\w()]*:?\s+\d+ kB\s*$|Rss\w*Kb:|---)")
_SUMMARY_REASON = re.compile(
    r"(?:^|\b)(?P<r>Input dispatching timed out.*|Broadcast of Intent.*|executing service \S+.*|"
    r"Context\.startForegroundService\(\) did not then call Service\.startForeground\(\).*|"
    r"ContentProvider not responding.*|Application Not Responding for at least \d+ ?ms.*|Background ANR.*|"
    r"Application did not respond.*|App(?:lication)? is not responding.*|No focused window.*|"
    r"does not have a focused window.*|Blocked in (?:handler|monitor) .*)$")
_AM_ANR = re.compile(r"am_anr\s*:?\s*\[(?P<user>\d+),(?P<pid>\d+),(?P<pkg>[^,\]]+),(?P<flags>\d+),(?P<r>[^\]]*)")
_PROCESS_PID = re.compile(r"^Process: (?P<p>[\w.:]+), PID: (?P<pid>\d+)")
_PACKAGE_FIELD = re.compile(r"^(?:package|process|Package|Process|processName|app\.package|package_name)"
                            r"\s*[:=]\s*(?P<p>[a-zA-Z]\w*(?:\.\w+)+)\b")
_PACKAGE_ANYWHERE = re.compile(r">>> ([a-z]\w*(?:\.\w+)+) <<<|/data/app/(?:~~[^/]+/)?([a-z]\w*(?:\.\w+)+)-[^/\s]+/"
                               r"|\b(?:cmp=|Process: |package: |executing service )([a-z]\w*(?:\.\w+)+)"
                               r"|(?:^|[\s(\[{])([a-z]\w*(?:\.\w+)+)/(?:[a-z]\w*\.)*\.?[A-Z]\w*")   # a component
_WATCHDOG_TAG = re.compile(r"^(?:(?:\d{4}-)?\d\d-\d\d\s+\d\d:\d\d:\d\d\.\d+\s+\d+\s+\d+\s+[VDIWEF]\s+|[VDIWEF]/)Watchdog\s*"
                           r"(?:\(\s*\d+\))?:", re.M)
SHARED_PACKAGES = ("com.google.android.webview", "com.android.webview", "com.android.chrome", "com.chrome.",
                   "com.google.android.trichromelibrary", "com.google.android.gms", "com.android.vending",
                   "com.google.android.gsf")
_SKIP_NUMBER_ONLY = re.compile(r"^\d{1,4}$")



@dataclass
class Paste:
    """The rewritten text, what kind of paste it looked like, and notes (assumptions, dropped lines)."""

    text: str
    notes: list[str] = field(default_factory=list)
    line_notes: list[tuple[int, str]] = field(default_factory=list)   # (line of the pasted text, note)
    frames: int = 0
    threads: int = 0
    implied_main: bool = False


def clean_line(raw: str) -> str | None:
    """One pasted line without markdown/HTML/logcat wrapping; None for a line that is only wrapping."""
    s = raw
    if "&" in s:
        s = html.unescape(s)
    if "<" in s:
        s = _TAG.sub("", s)
    if _FENCE.match(s):
        return None
    t = s.strip()
    # blockquote marks, headings, bold, backticks around or glued to the paste
    while t.startswith(">"):
        t = t[1:].lstrip()
    if t.startswith("#") and not t.startswith(("#0", "#1", "#2", "#3", "#4", "#5", "#6", "#7", "#8", "#9", "# ")):
        t = t.lstrip("#").lstrip()
    elif t.startswith("# ") or t.startswith("## ") or t.startswith("### "):
        t = t.lstrip("#").lstrip()
    t = t.strip("`").strip()
    if not t:
        return ""
    logged = False
    for rx in _LOGCAT_PREFIXES:
        m = rx.match(t) if "am_anr" not in t else None   # the event tag is what identifies an am_anr line
        if m:
            t = t[m.end():].strip()
            logged = True
            break
    if "**" in t:
        t = _BOLD.sub("", t).strip()
    m = _GITHUB_REF.match(t)
    if m:
        t = f"#{int(m.group(1)):02d}" + t[m.end():]
    return LOGGED + t if logged and t else t


_ART_TAIL = re.compile(r'^("[^"]*"(?: daemon)? (?:prio=\d+ )?(?:tid=\d+ )?)(\D.*?)\s*$')


def _english_state(line: str) -> str:
    """An ART header whose state is in a Play Console locale (`"main" tid=1 Заблокировано`) in ART's word."""
    m = _ART_TAIL.match(line)
    if m:
        st = _state(m.group(2))
        if st:
            return m.group(1) + st
    return line


def _state(word: str) -> str | None:
    return STATE_WORDS.get(word.strip().lower())


def lock_line(s: str) -> str | None:
    """A lock line in canonical English (`- waiting to lock <0x1> (a X) held by thread 44`), or None."""
    m = _LOCK_LINE.match(s)
    if not m:
        return None
    verb = m.group("verb").strip().lower()
    tail = m.group("tail") or ""
    action = None
    for canon, words in _VERBS:
        if any(verb.startswith(w) for w in words):
            action = canon
            break
    holder = None
    if tail.strip():
        h = _HOLDER.search(tail)
        if h:
            holder = h.group("n") or h.group("n2")
    if action is None:
        action = "waiting to lock" if holder else "waiting on"
    out = f"- {action} <{m.group('addr')}>"
    if m.group("cls"):
        out += f" (a {m.group('cls').strip()})"
    if holder and action == "waiting to lock":
        name = re.search(r"\(([^()]+)\)\s*$", tail)
        out += f" held by thread {holder}" + (f" ({name.group(1)})" if name and "tid=" in tail else "")
    return out


def native_frame(s: str, n: int) -> str | None:
    """A native frame in ART's `native: #NN pc HEX  LIB (SYM)` form, or None."""
    m = _NATIVE_PC.match(s)
    if m:
        rest = _SYM_SPACES.sub(r"+\1)", m.group("rest"))
        rest = re.sub(r"\((\S[^()]*?) \+ (\d+)\)", r"(\1+\2)", rest)
        num = int(m.group("n")) if m.group("n") is not None else n
        return f"native: #{num:02d} pc {m.group('pc').lower().zfill(16)}  {rest}"
    m = _BUGSNAG_NATIVE.match(s) or (_SENTRY_NATIVE.match(s) if "0x" in s and "." not in s.split("0x")[0][-1:]
                                     else None)
    if m:
        sym = (m.group("sym") or "").strip()
        sym = "" if sym in ("<unknown>", "null", "???") else sym
        return f"native: #{n:02d} pc {m.group('pc').lower().zfill(16)}  {m.group('lib')}" + (f" ({sym})" if sym
                                                                                           else "")
    return None


# A frame written as its bare qualified name, without `at` or a location (Crashlytics' and Firebase's copy of a
# stack: `android.os.BinderProxy.transactNative`): lower-case packages, a class that starts upper-case (nested and
# synthetic classes after `$`), then a method. Such a line opens a stack (after a thread header, or with another one
# below it); inside a stack, any dotted name is a frame.
BARE_FRAME = re.compile(r"(?:[a-z_][\w]*\.)+[A-Z][\w$]*(?:\.[A-Z][\w$]*)*\.(?:[a-z_$][\w$-]*|<c?l?init>)")


def java_frame(s: str, in_stack: bool, opener: bool = False) -> str | None:
    """A Java frame as `at sym(loc)`, or None. Bare method names count only inside a stack; a bare qualified name
    (BARE_FRAME) also where a stack may begin (`opener`: right after a thread header, or above another such line)."""
    if s.startswith("at") and (s.startswith("at ") or s.startswith("at\t")):
        m = _JAVA_AT.match(s)
        if m:
            loc, sym = m.group("loc"), m.group("sym")
            if loc is None and (m.group("tail") or ("." not in sym and not in_stack)):
                return None   # prose that starts with "at" ("at least 5 s ..."), not a frame
            return f"at {sym.rstrip('!')}({loc if loc is not None else 'Unknown Source'})"
        return None
    m = _JAVA_BARE.match(s)
    if m:
        return f"at {m.group('sym').rstrip('!')}({m.group('loc')})"
    m = _JAVA_SIGNATURE.match(s)
    if m:
        return f"at {m.group('cls')}.{m.group('m')}({m.group('loc')})"
    if in_stack and "." in s and " " not in s and re.fullmatch(r"[A-Za-z_$][\w$]*(?:\.[\w$<>-]+){2,}", s):
        return f"at {s}(Unknown Source)"   # a dotted frame without location, inside a stack
    if opener and BARE_FRAME.fullmatch(s):
        return f"at {s}(Unknown Source)"   # the first frame of a stack copied without `at` or locations
    m = _BUGSNAG_GITHUB.match(s)
    if m:
        return f"at {m.group('sym')}({m.group('loc')})"
    if in_stack:
        m = _BARE_METHOD.match(s)
        if m and m.group("sym") not in STATE_WORDS:
            return f"at {m.group('sym')}({m.group('loc') or 'Unknown Source'})"
    return None


class _Writer:
    """Builds the canonical text; opens an implied main thread when frames come before any header."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.paste = Paste("")
        self.in_thread = False
        self.thread_has_frames = False
        self.native_n = 0
        self.last_header_at = -1
        self.header_name: str | None = None
        self.consumed_next = False
        self.exception: str | None = None
        self.skipped_exception_frames = 0
        self.pool_waits: set[str] = set()
        self.logged = False
        self.skipped_log_frames = 0
        self.implied_at = 0
        self.psi: str | None = None   # the /proc/pressure block being read
        self.prose = 0
        self.stack_open = False   # the last stack line was a frame: bare method names may follow
        self.unread: list[str] = []   # code-like lines under a thread header that were not read as frames

    def header(self, name: str, tid: int | None, state: str, sys_tid: int | None = None,
               lock: str | None = None) -> None:
        if name == "main" and self.paste.implied_main and self.paste.threads == 1 and self.paste.frames <= 1:
            # a title line taken for a frame before the real main header (Crashlytics' issue title)
            del self.out[self.last_header_at:]
            self.paste.implied_main, self.paste.threads, self.paste.frames = False, 0, 0
            self.in_thread = False
        self._demote_cut_block()
        # a short header right before the full one (Play Console's summary line) is the same thread
        if self.in_thread and not self.thread_has_frames and self.header_name == name and self.last_header_at >= 0:
            del self.out[self.last_header_at:]
        tid_s = f" tid={tid}" if tid is not None else ""
        self.last_header_at = len(self.out)
        self.out.append(f'"{name}" prio=5{tid_s} {state}'.rstrip())
        if sys_tid is not None:
            self.out.append(f"  | sysTid={sys_tid}")
        if lock:
            ll = lock_line("- " + lock.lstrip("- "))
            if ll:
                self.out.append("  " + ll)
        self.in_thread, self.thread_has_frames, self.native_n = True, False, 0
        self.header_name, self.stack_open = name, False
        self.paste.threads += 1

    def _demote_cut_block(self) -> None:
        """Frames before the first real thread header are the cut end of a thread the paste began inside, not the
        main thread, when they are few (without ActivityThread.main), or when they end in `java.lang.Thread.run`
        (a started thread's bottom frame, never the main thread's, which ends in ActivityThread.main / ZygoteInit)."""
        if not (self.paste.implied_main and self.paste.threads == 1):
            return
        block = self.out[self.implied_at:]
        if not block or any("ActivityThread.main" in x for x in block):   # (fuzz find: an empty block)
            return
        frames = [x.strip() for x in block if x.strip().startswith("at ")]
        started = bool(frames) and frames[-1].startswith(("at java.lang.Thread.run(", "at java.lang.Thread.run "))
        if self.paste.frames > CUT_TAIL_FRAMES and not started:
            return
        self.out[self.implied_at] = f'"{CUT_THREAD}" prio=5'
        self.paste.implied_main = False
        self.paste.notes.append(f"{self.paste.frames} frame(s) before the first thread header are the cut end of "
                                "another thread, not the main thread")

    def art_header(self, line: str) -> None:
        name = line[1:].split('"', 1)[0]
        self._demote_cut_block()
        line = _english_state(line)
        if self.in_thread and not self.thread_has_frames and self.header_name == name and self.last_header_at >= 0:
            del self.out[self.last_header_at:]
        self.last_header_at = len(self.out)
        self.out.append(line)
        self.in_thread, self.thread_has_frames, self.native_n = True, False, 0
        self.header_name, self.stack_open = name, False
        self.paste.threads += 1

    def _ensure_thread(self) -> None:
        if not self.in_thread:
            self.implied_at = len(self.out)
            self.header("main", 1, "")
            self.paste.implied_main = True

    def frame(self, text: str) -> None:
        if not self.in_thread and self.logged:
            # a log's stray frames (StrictMode, printStackTrace without its header) are no thread's stack
            self.skipped_log_frames += 1
            return
        self._ensure_thread()
        self.out.append("  " + text)
        self.thread_has_frames = self.stack_open = True
        self.native_n += 1
        self.paste.frames += 1

    def attr(self, text: str) -> None:
        if self.in_thread:
            self.out.append("  " + text)

    def lock(self, text: str) -> None:
        self._ensure_thread()
        self.out.append("  " + text)

    def plain(self, text: str) -> None:
        self.out.append(text)


def _thread_header(w: _Writer, s: str, nxt: str | None) -> bool:
    """Write a thread header of any pasted form; True when `s` was one (and the consumed next line is noted)."""
    if s.startswith('"'):
        if not _ART_HEADER.match(s):
            return False
        w.art_header(s)
        return True
    m = _ART_LOST_QUOTE.match(s)
    if m:
        w.art_header('"' + s)
        return True
    m = _CRASHLYTICS_HEADER.match(s)
    if m:
        state = _state(m.group("state")) or ""
        rest = m.group("rest")
        if rest is None and nxt is not None and _TID_LINE.match(nxt):
            rest = nxt
            w.consumed_next = True
        tid = sys_tid = lock = None
        if rest:
            t = _TID_LINE.match(rest.strip())
            if t:
                tid = int(t.group("tid"))
                sys_tid = int(t.group("sys")) if t.group("sys") else None
                lock = t.group("lock")
        w.header(m.group("name").strip(), tid, state, sys_tid, lock)
        return True
    m = _ANRWATCHDOG.search(s)
    if m:
        name = m.group("name").strip()
        w.header(name, 1 if name == "main" else None, _state(m.group("state").replace("_", " ")) or "")
        return True
    m = _SENTRY_THREAD.match(s)
    if m and len(m.group("name")) < 64:
        name = m.group("name")
        w.header(name, 1 if name == "main" else None, "")
        return True
    return False


def _summary(w: _Writer, s: str, hdr: dict[str, str]) -> bool:
    """Header facts said in a paste's own words (summary lines, APM titles, am_anr, logcat crash lines)."""
    m = _AM_ANR.search(s)
    if m:
        hdr.setdefault("process", m.group("pkg").strip())
        hdr.setdefault("pid", m.group("pid"))
        hdr.setdefault("reason", m.group("r").strip())
        return True
    m = _PROCESS_PID.match(s)
    if m:
        hdr.setdefault("process", m.group("p"))
        hdr.setdefault("pid", m.group("pid"))
        return True
    m = _PACKAGE_FIELD.match(s)
    if m:
        hdr.setdefault("process", m.group("p"))
        return True
    m = _SUMMARY_REASON.search(s)
    if m and not s.startswith(("Reason:", "Subject:")):
        r = m.group("r").strip()
        if r.startswith("Blocked in"):
            hdr.setdefault("watchdog", r)
        hdr.setdefault("reason", r)
        return True
    return False


_EXCEPTION = re.compile(r"^(?:Caused by: |Exception in thread .*?)?(?:[a-z]\w*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)"
                        r"\b(?::|$)")
_ANR_TITLE = re.compile(r"ANR|NotResponding|\bAnr[A-Z]|AppNotResp", re.I)
_ANNOTATED = re.compile(r"^(?P<name>\S+) annotated stack trace:\s*$")


_POOL_WAIT = re.compile(r"unable to grant a connection to thread (?P<tid>\d+) \((?P<name>[^)]*)\) with flags \S+ for "
                        r"(?P<secs>[\d.]+) seconds")


def _line(w: _Writer, s: str, nxt: str | None, hdr: dict[str, str]) -> None:
    if _special(w, s):
        return
    _stack_or_header(w, s, nxt, hdr)


def _special(w: _Writer, s: str) -> bool:
    """Lines that change the reader's state: a pool-wait log line, an exception trace, a watchdog's annotated stack
    and the frames of an exception being skipped. True when `s` was one."""
    m = _POOL_WAIT.search(s)
    if m and m.group("tid") not in w.pool_waits:
        # AOSP SQLiteConnectionPool's own log line: that thread waited this long for a connection
        w.pool_waits.add(m.group("tid"))
        w.header(m.group("name"), int(m.group("tid")), "Waiting")
        w.frame("at android.database.sqlite.SQLiteConnectionPool.waitForConnection(SQLiteConnectionPool.java)")
        w.paste.notes.append(f"thread {m.group('tid')} ({m.group('name')}) waited {m.group('secs')} s for a SQLite "
                             "connection (SQLiteConnectionPool log line; its stack is not in the report)")
        return True
    m = _EXCEPTION.match(s)
    if m and not _ANR_TITLE.search(m.group(0)) and "_Thread:" not in s:
        # (an SDK's ANR exception - ANRError, ApplicationNotResponding, AnrException - is the report's title)
        # a Java exception's trace (a crash, a failed sysrq write) is not a thread's stack: its frames are skipped
        w.exception = s.split(":", 1)[0].replace("Caused by", "").strip() or s
        w.in_thread = False
        return True
    m = _ANNOTATED.match(s)
    if m:   # AOSP Watchdog: `watchdog.monitor annotated stack trace:` then the blocked thread's frames
        w.exception = None
        w.header(m.group("name"), None, "Blocked" if m.group("name") != "main" else "")
        return True
    if w.exception and (s.startswith("at ") or s.startswith("...")):
        w.skipped_exception_frames += 1
        return True
    return False


_PSI_BLOCK = re.compile(r"^-{3,} Output from /proc/pressure/(\w+) -{3,}")
_PSI_FULL = re.compile(r"^full avg10=([\d.]+)")


def _pressure(w: _Writer, s: str) -> bool:
    """Android 11+ ANR blocks print /proc/pressure/{memory,cpu,io}: the memory `full avg10` share is kept."""
    m = _PSI_BLOCK.match(s)
    if m:
        w.psi = m.group(1)
        return True
    if w.psi == "memory":
        m = _PSI_FULL.match(s)
        if m:
            w.plain(f"PSI memory full avg10: {m.group(1)}")
            return True
    return False


def _stack_or_header(w: _Writer, s: str, nxt: str | None, hdr: dict[str, str]) -> None:
    if _pressure(w, s):
        return
    if _KEEP_HEADER.match(s):
        w.plain(s)
        if s.startswith(("----- pid", "Cmd line:", "----- end")):
            w.in_thread = False
        return
    if s.startswith("|"):
        w.attr(s)
        return
    if s.startswith("-") and "<0x" in s:
        ll = lock_line(s)
        if ll:
            w.lock(ll)
            return
    if s.startswith("kernel:"):
        w.frame(s)
        return
    if _thread_header(w, s, nxt):
        w.exception = None
        return
    nf = native_frame(s, w.native_n if w.in_thread else 0)
    if nf:
        w.frame(nf)
        return
    if not s.startswith(("native:", "#")):
        s2 = _NUMBERED.sub("", s, count=1)
        opener = (w.in_thread and not w.thread_has_frames) or (nxt is not None and _bare_frame_line(nxt))
        jf = java_frame(s2, w.in_thread and w.stack_open, opener)
        if jf:
            w.frame(jf)
            return
    _not_a_stack_line(w, s, hdr)


def _not_a_stack_line(w: _Writer, s: str, hdr: dict[str, str]) -> None:
    """A line that is no frame, lock line or thread header: a header fact, or prose (dropped; a code-like line under
    a thread header is kept in `unread`, said in the notes)."""
    if _summary(w, s, hdr):
        return
    if "ANR in " in s or "WATCHDOG KILLING" in s:
        w.plain(s)   # header lines with a prefix (`ActivityManager: ANR in ...`) that io.anr reads mid-line
    else:
        w.prose += 1   # prose and UI residue are dropped: nothing below reads them
        if w.in_thread and not w.thread_has_frames and "." in s and " " not in s.strip():
            w.unread.append(s)   # a code-like line under a thread header, not read as a frame: said
    if _ends_stack(s):
        w.stack_open = False


def _bare_frame_line(line: str) -> bool:
    """A cleaned line that is one bare qualified frame name (BARE_FRAME)."""
    x = _NUMBERED.sub("", line.lstrip(LOGGED).strip(), count=1)
    return BARE_FRAME.fullmatch(x) is not None


def _ends_stack(s: str) -> bool:
    """Prose between stacks ends the current thread so that bare words after it are not taken as frames."""
    return len(s.split()) > 3 and not s.startswith(("at ", "native:", "#", "-", "|"))


def canonicalize(text: str) -> Paste:
    """Rewrite a pasted ANR report into traces.txt form (see the module text)."""
    w = _Writer()
    hdr: dict[str, str] = {}
    kept = _cleaned_lines(text, w.paste.line_notes)
    i = 0
    while i < len(kept):
        s = kept[i]
        w.logged = s.startswith(LOGGED)
        if w.logged:
            s = s[1:]
        if _SKIP_NUMBER_ONLY.match(s):   # console copies put frame numbers on their own lines
            i += 1
            continue
        nxt = kept[i + 1].lstrip(LOGGED) if i + 1 < len(kept) else None
        w.consumed_next = False
        _line(w, s, nxt, hdr)
        i += 2 if w.consumed_next else 1
    p = w.paste
    p.text = "\n".join(_header_lines(text, hdr, bool(p.threads or p.frames)) + w.out) + "\n"
    if p.implied_main:
        p.notes.append("frames without a thread header taken as the main thread's (tid=1)")
    if w.skipped_log_frames:
        p.notes.append(f"{w.skipped_log_frames} frame line(s) of the log outside any thread dump skipped")
    if w.unread:
        first = w.unread[0][:120]
        p.notes.append(f"{len(w.unread)} line(s) under a thread header not read as frames (first: {first!r})")
    if w.skipped_exception_frames:
        p.notes.append(f"{w.skipped_exception_frames} frame(s) of an exception trace ({w.exception or 'exception'}) "
                       "skipped: an exception's trace is not a thread's stack")
    return p


# A thread's stack run together on one line (a paste or a web page that lost its newlines: `"binder:1_1" tid=9 Native
# #00 pc 0x... libc.so (__ioctl+12) #01 pc ...`): the places where a stack line begins in the middle of a line, each
# after whitespace: a native frame (`#NN pc ADDR `, `native: #NN pc`, `native: pc`), a Java frame (`at a.b.C.m(`), a
# lock or wait line (`- waiting ...`, `- locked <`, `- parking ...`, `- sleeping on <`), or the next ART thread header
# (`"name" [daemon] [prio=N] tid=N`). Only these frame markers: a line with fewer than two of them is left alone.
_RUN_ON_SPLIT = re.compile(
    r"(?<!native:)\s+(?=(?:native:\s*)?#\d{2,3}\s+pc\s+(?:0x)?[0-9a-fA-F]{4,}\s)"
    r"|\s+(?=native:\s*pc\s+(?:0x)?[0-9a-fA-F]{4,}\s)"
    r"|\s+(?=at\s+[A-Za-z_$][\w$]*(?:\.[\w$<>-]+)+\s?\()"
    r"|\s+(?=-\s(?:waiting (?:to lock|on)|locked|parking to wait|sleeping on|blocked on)\s)"
    r"|\s+(?=\"[^\"]{1,128}\"(?:\sdaemon)?\s(?:prio=\d+\s)?tid=\d+\b)")
_RUN_ON_FRAME = re.compile(r"(?:^|\s)(?:(?:native:\s*)?#\d{2,3}\s+pc\s+(?:0x)?[0-9a-fA-F]{4,}\s"
                           r"|at\s+[A-Za-z_$][\w$]*(?:\.[\w$<>-]+)+\s?\((?:[^()\s]+:-?\d+|Native [Mm]ethod"
                           r"|Unknown Source)\))")


def split_run_on(line: str) -> list[str]:
    """A cleaned line cut where a stack line begins inside it (_RUN_ON_SPLIT), when it holds two frames or more;
    else the line alone."""
    if len(line) < 40 or line.count(" pc ") + line.count("at ") < 2:   # cheap: most lines hold one frame or none
        return [line]
    if len(_RUN_ON_FRAME.findall(line, 0, 1 << 16)) < 2:
        return [line]
    parts = [p for p in _RUN_ON_SPLIT.split(line) if p.strip()]
    return parts if len(parts) > 1 else [line]


def _cleaned_lines(text: str, line_notes: list[tuple[int, str]] | None = None) -> list[str]:
    """The non-empty cleaned lines; a watchdog kill line wrapped by the paste is joined with its continuation (the
    thread name in parentheses is on the next line); a stack run together on one line is split into its lines
    (split_run_on), noted in `line_notes` with the line."""
    kept: list[str] = []
    for n, raw in enumerate(text.split("\n"), 1):
        x = clean_line(raw)
        if not x:
            continue
        if len(x) < 40 or x.count(" pc ") + x.count("at ") < 2:   # split_run_on's cheap test, inline: most lines
            kept.append(x)
            continue
        logged = x.startswith(LOGGED)
        parts = split_run_on(x[1:] if logged else x)
        if len(parts) > 1 and line_notes is not None:
            line_notes.append((n, f"{len(parts)} stack lines run together on one line (newlines lost in the paste): "
                                  "split at each frame (`#NN pc`, `at `), lock line and thread header"))
        kept.extend(LOGGED + p if logged else p for p in parts)
    for k in range(len(kept) - 1):
        if "WATCHDOG KILLING" in kept[k] and "(" not in kept[k] and "(" in kept[k + 1]:
            kept[k], kept[k + 1] = kept[k] + kept[k + 1].lstrip(LOGGED), ""
    return [x for x in kept if x]


def _header_lines(text: str, hdr: dict[str, str], stacks: bool) -> list[str]:
    """Header lines in io.anr's words for the facts the paste said in its own (process, pid, reason, watchdog).
    A package named anywhere names the app only beside other ANR evidence (a stack, a reason, a pid): alone it made
    an "ANR in <package>" out of any text that mentions an app path (a `dumpsys gfxinfo` output read by `hangs`)."""
    evidence = stacks or any(hdr.get(k) for k in ("reason", "pid", "watchdog"))
    if evidence and not hdr.get("process") and "ANR in " not in text and "Cmd line:" not in text:
        for m in _PACKAGE_ANYWHERE.finditer(text):   # a package named anywhere: an app path, a component, a tombstone
            pkg = next(g for g in m.groups() if g)
            if not pkg.startswith(SHARED_PACKAGES):   # WebView, Play services: loaded into every app, not the app
                hdr["process"] = pkg
                break
    if not hdr.get("watchdog") and "WATCHDOG KILLING" not in text and "Subject: Blocked" not in text \
            and _WATCHDOG_TAG.search(text):
        # system_server's Watchdog logged (a sysrq dump, a kill cycle) without saying what was blocked
        hdr["watchdog"] = "Watchdog log lines (the report does not say what was blocked)"
    head = []
    if hdr.get("process") and "ANR in " not in text:
        head.append(f"ANR in {hdr['process']}")
    if hdr.get("pid") and "PID: " not in text:
        head.append(f"PID: {hdr['pid']}")
    if hdr.get("reason") and "Reason: " not in text and "Subject: " not in text:
        head.append(f"Reason: {hdr['reason']}")
    if hdr.get("watchdog") and "WATCHDOG KILLING" not in text and "Subject: Blocked" not in text:
        head.append(f"Subject: {hdr['watchdog']}")
    return head


_CANONICAL_START = re.compile(r"^----- (?:pid \d+ at |Waiting Channels: pid \d+)", re.M)
_RAW_ART = re.compile(r'^Cmd line: \S[^\n]*\n(?:[^\n]*\n){0,2000}?"main" (?:daemon )?prio=\d+ tid=1 ', re.M)
_WRAPPING = re.compile(r"^\s*(?:```|~~~|>\s|\*\*(?!\*))|&quot;|&lt;|&gt;", re.M)


def needs_canonicalizing(text: str) -> bool:
    """False for a raw traces.txt / bugreport (read as it is, fast); True for anything pasted or partial."""
    if "\n------ " in text or text.startswith("------ "):
        return False   # bugreport text: sections are read by io.anr.parse_text
    head = text.lstrip()[:4000]
    if head.startswith("----- pid "):
        return False   # a dump as written by the runtime
    if (_CANONICAL_START.search(text) or _RAW_ART.search(text)) and not _WRAPPING.search(head):
        return False   # a runtime dump inside a tool's file (xCrash tombstone, dropbox entry), not pasted
    return True


# Evidence that a text is an ANR report in some pasted form (for choosing the reader by content), anchored at line
# starts (after indentation, markdown marks or a logcat prefix) so that prose about ANRs is not taken for one.
_LINE_LEAD = r"^[ \t>`*]{0,12}(?:\d+[\t ]+)?(?:at\s+)?"
_FRAME_MARK = re.compile(
    _LINE_LEAD + r"(?:[A-Za-z_$][\w$]*(?:\.[\w$<>-]+){2,}\s?\((?:[^()\s]+:-?\d+|Native [Mm]ethod"
    r"|Unknown Source|unavailable(?::\d+)?)\)|(?:native:\s*)?#\d\d\s+pc\s+(?:0x)?[0-9a-f]{4,}\s"
    r"|[\w$.-]+\.(?:java|kt):-?\d+ - [\w$.]+$)",
    re.M | re.I)
_HEADER_MARK = re.compile(
    r"^[ \t>`*#]{0,12}(?:\"[^\"\n]*\" (?:daemon )?(?:prio|tid)=\d+|[\w.]*ApplicationNotResponding:|ANR(?:_EXCEPTION)?:|"
    r"\*\*\* WATCHDOG KILLING|[\w.-]+ \((?:blocked|native|waiting|timed waiting|runnable|sleeping)\):\s?tid=\d+)"
    r"|^.{0,160}?(?:\bANR in (?:[a-z]\w*(?:\.\w+)+|system)\b|\bam_anr\s*:?\s*\[\d+,\d+,|Blocked in (?:handler|monitor) "
    r"|unable to grant a connection to thread \d+|\(state = [A-Z_]+\))", re.M)


def has_anr_header(text: str) -> bool:
    """An `ANR in`, `am_anr`, watchdog, Crashlytics or ART thread header at a line start (logcat prefixes allowed)."""
    if _HEADER_MARK.search(text) is not None:
        return True
    # `ANR in XX` with a non-package name (redacted) still opens an ActivityManager block when a Reason line follows
    return _ANR_IN_ANY.search(text) is not None and _REASON_LINE.search(text) is not None


_ANR_IN_ANY = re.compile(r"^.{0,160}?\bANR in \S+", re.M)
_REASON_LINE = re.compile(r"^.{0,160}?\bReason: \S", re.M)


def looks_like_anr_paste(text: str) -> bool:
    """ANR evidence at line starts: an `ANR in`/watchdog/Crashlytics header or `am_anr` line, or two frame lines
    (Java with a location, or native `#NN pc`), or a stack run together on one line (split_run_on: a thread header
    or a frame, then frames, on one line), or three bare qualified frame names in a row (BARE_FRAME)."""
    if has_anr_header(text):
        return True
    n = 0
    for _ in _FRAME_MARK.finditer(text):
        n += 1
        if n >= 2:
            return True
    if n == 1 and sum(1 for x in text.splitlines() if x.strip()) <= 12:   # a one-frame paste
        return True
    return _has_run_on_stack(text) or _has_bare_frames(text)


BARE_FRAMES_MIN = 3


def _has_bare_frames(text: str) -> bool:
    """BARE_FRAMES_MIN lines in a row that are each a bare qualified frame name (a stack copied without `at` or
    locations)."""
    run = 0
    for line in text.splitlines():
        s = line.strip().strip("`>* \t")
        run = run + 1 if s and len(s) < 300 and BARE_FRAME.fullmatch(s) else 0
        if run >= BARE_FRAMES_MIN:
            return True
    return False


def _has_run_on_stack(text: str) -> bool:
    """A line that opens with an ART thread header or a frame and runs on into two more frames."""
    for line in text.splitlines():
        s = clean_line(line[:1 << 16]) or ""
        s = s.lstrip(LOGGED)
        if (_ART_HEADER.match(s) or _ART_LOST_QUOTE.match(s) or _RUN_ON_FRAME.match(s)) and \
                len(_RUN_ON_FRAME.findall(s)) >= 2 + bool(_RUN_ON_FRAME.match(s)):
            return True
    return False
