"""Root-cause labels (ours: explicit rules over the critical threads, the chain and the header numbers), checked in
this order, each with the evidence that fired it and a mechanism `key` (events with the same key share a root
cause, see cluster.py):
1. a foreground-service contract timeout in the reason (`startForeground()` not called in time): app_specific;
2. storage_sync (WAM): fsync/`FileDescriptor.sync`, SharedPreferences `commit` writes and `apply` flushes
   (`QueuedWork`), prefs loads from disk, SQLite connection-pool waits, commits and opens, file-system syscalls on
   the waiting thread (`access`, `open`, `exists`...), ext4/f2fs/jbd2/discard kernel frames;
3. insufficient_memory: blocking-GC waits, reclaim/swap wait channels, low MemAvailable;
4. system_lock_contention: the chain waits for a system-service monitor (ActivityManagerService,
   WindowManagerGlobalLock, PowerManagerService, ...) or another framework/runtime lock (`android.*` classes,
   `Class<android.app.ContextImpl>`), whatever process holds it;
5. slow_binder_peer: the chain ends in a binder call; the peer service is named from the proxy class;
6. an idle main thread (`nativePollOnce`, nothing blocked): unknown - the stacks do not show the cause;
7. no stack at all (a logcat ANR block alone): app_specific when the app's own CPU share says it was busy, else
   unknown;
8. app_specific: the rest (app or SDK code: CPU work, SDK locks and waits, sleeps, child processes), with the
   frame in the app's code that it waited in."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypedDict

from droidlag.hangs.features import UNKNOWN_KEY
from droidlag.hangs.waitfor import (
    ABSENT,
    BINDER_SERVICES,
    HANDWRITTEN_PROXIES,
    ChainStep,
    Node,
    is_idle,
    java_names,
    waits_in,
)
from droidlag.models.dumps import ThreadDump


class HeaderNumbers(TypedDict, total=False):
    """What the ANR header and the dump say about the device when it hung (each None when not said): the numbers
    the memory and CPU rules read, and the features' generic terms."""

    abi: str | None
    reason: str | None
    cpu_total_pct: float | None
    mem_available_ratio: float | None   # MemAvailable / MemTotal
    memory_kb: dict[str, int] | None
    load: tuple[float, ...] | None
    app_cpu_pct: float | None           # the ANR'ing app's own row of the header's CPU table
    psi_memory_full_avg10: float | None


# A framework lock on the chain (system_lock_contention): its address and class, who holds it, where it is awaited.
LockEvidence = TypedDict("LockEvidence", {"lock": str | None, "class": str | None, "holder": str,
                                          "waiter_frame": str | None})


class CauseEvidence(TypedDict, total=False):
    """Why a cause was chosen: `key` names the mechanism (events with the same key share a root cause; None when
    nothing groups them), `words` says it in a sentence; the other keys are the facts each rule found."""

    key: str | None
    words: str
    thread: str | None                  # the thread whose stack fired a storage or memory rule
    frame: str | None                   # the frame (or state line) that fired it
    wchan: str
    state: str
    psi_memory_full_avg10: float
    mem_available_ratio: float
    memory_kb: dict[str, int] | None
    locks: list[LockEvidence]
    chain: list[str]
    peer: str                           # slow_binder_peer: the service, its method, the peer node
    method: str | None
    node: str
    call_frame: str | None
    how: str
    reason: str
    idle: bool
    main_absent: bool
    no_stack: bool
    app_cpu_pct: float
    top_frames: list[str]
    kernel_state: str
    app_frame: str | None


Cause = tuple[str, CauseEvidence]

STORAGE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("sharedprefs_apply", re.compile(r"android\.app\.QueuedWork\.|QueuedWork\.(?:waitToFinish|processPendingWork|"
                                     r"addFinisher)")),
    ("sharedprefs_commit", re.compile(r"SharedPreferencesImpl.*(?:writeToFile|commitToMemory|\$EditorImpl\.commit)")),
    # com.android.internal is hidden from apps: in an app process the framework's XML map writer is SharedPreferences'
    ("sharedprefs_write", re.compile(r"com\.android\.internal\.util\.(?:XmlUtils\.writeMapXml|FastXmlSerializer)")),
    ("sharedprefs_load", re.compile(r"SharedPreferencesImpl\.awaitLoadedLocked|SharedPreferencesImpl\.loadFromDisk")),
    ("sqlite_pool", re.compile(r"SQLiteConnectionPool.*waitForConnection")),
    ("sqlite_commit", re.compile(r"SQLiteSession\.(?:commit|endTransaction)|SQLiteConnection\.nativeExecute|"
                                 r"SQLiteDatabase\.endTransaction")),
    ("sqlite_open", re.compile(r"SQLiteConnection\.nativeOpen|SQLiteDatabase\.openDatabase|"
                               r"SQLiteOpenHelper\.getWritableDatabase")),
    ("fsync", re.compile(r"FileDescriptor\.sync|\bfsync\b|fdatasync|FileChannelImpl\.force|Linux\.fsync|"
                         r"do_fsync|vfs_fsync")),
    ("kernel_io", re.compile(r"jbd2_log_wait_commit|ext4_sync_file|f2fs_sync_file|f2fs_issue_checkpoint|"
                             r"blkdev_issue_discard|submit_bio_wait|wait_on_page_writeback|filemap_write_and_wait")),
)
# File-system syscalls count only at the top of the waiting thread (the call it is in), not anywhere below.
FILE_SYSCALL = re.compile(r"__faccessat|faccessat|Linux_access|Linux\.access|Linux\.open|Linux\.stat|Linux\.mkdir|"
                          r"UnixFileSystem\.(?:checkAccess|getBooleanAttributes|createDirectory|getLength)|"
                          r"File\.(?:exists|mkdirs?|isDirectory|length)|__openat|\bopenat\b|__statfs|fstatat|mkdirat")
STORAGE = re.compile("|".join(p.pattern for _, p in STORAGE_RULES))
MEMORY = re.compile(
    r"WaitForGcToComplete|WaitingForGcToComplete|WaitingPerformingGc|Heap::CollectGarbageInternal|"
    r"swap_readpage|__alloc_pages|try_to_free_pages|shrink_(?:node|zone|inactive_list|page_list)|"
    r"lowmem|throttle_direct_reclaim|congestion_wait|mem_cgroup_")
SYSTEM_MONITOR = re.compile(
    r"com\.android\.server\.|ActivityManagerService|WindowManagerGlobalLock|PowerManagerService|"
    r"PackageManagerService|ActivityTaskManagerService|InputManagerService|^(?:java\.lang\.Class<)?android\.|"
    r"^(?:java\.lang\.Class<)?com\.android\.internal\.")
SYSTEM_PROCESS = "system_server"
LOW_MEMORY_RATIO = 0.05
# PSI `full` memory stall share over 10 s from which memory counts as a cause (ours; lmkd treats a full stall of
# 700 ms per second as critical, 10% is well short of that yet far above an idle device's ~0%).
PSI_MEMORY_FULL_PCT = 10.0
APP_BUSY_CPU_PCT = 40.0
FGS_TIMEOUT = re.compile(r"startForeground|ForegroundServiceDidNotStart|foreground service .*did not", re.I)
_PROXY = re.compile(r"([\w$.]+?)\$Stub\$Proxy\.(\w+)|\b(I[A-Z]\w+)\$Stub\$Proxy")
_HANDWRITTEN = re.compile(r"\b(" + "|".join(re.escape(c) for c in HANDWRITTEN_PROXIES) + r")\.(\w+)")
FRAMEWORK = re.compile(r"^(?:android\.|androidx\.|java\.|javax\.|kotlin\.|kotlinx\.|sun\.|libcore\.|dalvik\.|"
                        r"com\.android\.|jdk\.|org\.apache\.harmony|com\.google\.android\.gms\.internal\.)")
_WEBVIEW = re.compile(r"WebViewChromiumFactoryProvider|WebViewFactory\.getProvider|WebSettings\.getDefaultUserAgent|"
                      r"BrowserStartupController|WebViewChromium\.init|org\.chromium\.|libwebviewchromium|"
                      r"libmonochrome|TrichromeLibrary|com\.google\.android\.webview")


def _thread_text(t: ThreadDump, depth: int = 30) -> list[str]:
    items = list(t.raw_frames[:depth])
    if t.state:
        items.append(t.state)
    if t.wchan:
        items.append(t.wchan)
    return items


def app_frame(t: ThreadDump | None) -> str | None:
    """The frame in the app's (or an SDK's) code nearest the top: the frame a person reads first. Framework wait
    primitives and platform code are skipped."""
    if t is None:
        return None
    for sym, text in java_names(t):
        if not FRAMEWORK.match(sym) and "." in sym:
            return text
    return None


UNKNOWN_PEER = "unknown binder peer"   # a binder call whose serving service the report does not name
# Peers that do not say which process serves the call: an unnamed one, and "a content provider" (the authority is
# an argument, not in the stack). Two calls to such a peer are not known to wait for the same thing.
UNNAMED_PEERS = frozenset({UNKNOWN_PEER, BINDER_SERVICES["IContentProvider"]})


def binder_peer(frames: list[str]) -> tuple[str, str | None]:
    """(peer service, called method) named from the `$Stub$Proxy` class of a binder call, or a proxy the framework
    writes by hand (HANDWRITTEN_PROXIES)."""
    for raw in frames[:12]:
        m = _PROXY.search(raw)
        if m:
            full = m.group(1) or m.group(3)
            iface = full.rsplit(".", 1)[-1]
            return BINDER_SERVICES.get(iface, f"{iface} service"), m.group(2)
        h = _HANDWRITTEN.search(raw)
        if h:
            iface = HANDWRITTEN_PROXIES[h.group(1)][0].rsplit(".", 1)[-1]
            return BINDER_SERVICES.get(iface, f"{iface} service"), h.group(2)
    return UNKNOWN_PEER, None


def _storage(looked: Sequence[ThreadDump]) -> Cause | None:
    waiting = {id(t): waits_in(t) for t in looked}
    for key, pat in STORAGE_RULES:   # rule by rule: the mechanism (an apply() flush) before what it waits on (fsync)
        for t in looked:
            w = waiting[id(t)]
            if key == "sqlite_pool" and not (w and pat.search(w[1])):
                continue   # a pool wait counts only where the thread is parked in it, not opening a connection
            for s in _thread_text(t):
                if pat.search(s):
                    return "storage_sync", {"thread": t.name, "frame": s, "key": f"storage:{key}",
                                            "words": _STORAGE_WORDS[key]}
    for t in looked:
        for sym, text in java_names(t)[:6] or [(f.symbol, f.text) for f in t.frames[:4]]:
            if FILE_SYSCALL.search(sym) or FILE_SYSCALL.search(text):
                return "storage_sync", {"thread": t.name, "frame": text, "key": "storage:file_syscall",
                                        "words": _STORAGE_WORDS["file_syscall"]}
        for f in t.frames[:3]:
            if f.kind == "native" and FILE_SYSCALL.search(f.symbol):
                return "storage_sync", {"thread": t.name, "frame": f.text, "key": "storage:file_syscall",
                                        "words": _STORAGE_WORDS["file_syscall"]}
    return None


_STORAGE_WORDS = {
    "sharedprefs_apply": "waits for SharedPreferences apply() writes to reach the disk (QueuedWork)",
    "sharedprefs_commit": "writes SharedPreferences to disk (commit)",
    "sharedprefs_write": "serializes SharedPreferences to XML for a disk write",
    "sharedprefs_load": "waits for SharedPreferences to load from disk",
    "sqlite_pool": "waits for a SQLite connection held by another thread",
    "sqlite_commit": "commits a SQLite transaction (disk sync)",
    "sqlite_open": "opens a SQLite database",
    "fsync": "waits for fsync",
    "kernel_io": "waits in the kernel's storage sync/discard path",
    "file_syscall": "waits in a file-system call on the main thread",
}


def _memory(looked: Sequence[ThreadDump], process_threads: Sequence[ThreadDump], header: HeaderNumbers) -> Cause | None:
    for t in looked:
        for s in _thread_text(t):
            if MEMORY.search(s):
                return "insufficient_memory", {"thread": t.name, "frame": s, "key": "memory:gc_wait",
                                               "words": "waits for the garbage collector or memory reclaim"}
    for t in process_threads:
        if t.wchan and t.kstate == "D" and MEMORY.search(t.wchan):   # wchan first: kstate parses the attributes
            return "insufficient_memory", {"thread": t.name or f"sysTid {t.sys_tid}", "wchan": t.wchan,
                                           "state": "D", "key": "memory:reclaim",
                                           "words": "a thread is stuck in memory reclaim"}
    psi = header.get("psi_memory_full_avg10")
    if psi is not None and psi >= PSI_MEMORY_FULL_PCT:
        return "insufficient_memory", {"psi_memory_full_avg10": psi, "key": "memory:pressure",
                                       "words": f"every task was stalled on memory {psi:g}% of the last 10 s "
                                                "(/proc/pressure/memory)"}
    ratio = header.get("mem_available_ratio")
    if ratio is not None and ratio < LOW_MEMORY_RATIO:
        return "insufficient_memory", {"mem_available_ratio": round(ratio, 4), "memory_kb": header.get("memory_kb"),
                                       "key": "memory:low", "words": "the device was low on memory"}
    return None


def _lock_contention(chain: list[ChainStep]) -> Cause | None:
    steps = [(s["node"], e) for s in chain[1:] if (e := s["edge"]) is not None and e.kind in ("monitor", "lock_owner")
             and (s["node"].process == SYSTEM_PROCESS or SYSTEM_MONITOR.search(e.lock_class or ""))]
    if not steps:
        return None
    first = steps[0][1].lock_class or "?"
    return "system_lock_contention", {
        "locks": [{"lock": e.lock, "class": e.lock_class, "holder": node.label(), "waiter_frame": e.frame}
                  for node, e in steps],
        "chain": [s["node"].label() for s in chain], "key": f"lock:{_norm_class(first)}",
        "words": f"waits for the framework lock {first} held by {_who(steps[0][0])}"}


def _norm_class(c: str) -> str:
    return re.sub(r"^java\.lang\.Class<(.*)>$", r"\1", c.strip())


def _binder(chain: list[ChainStep], blocked: ThreadDump | None) -> Cause | None:
    if len(chain) < 2:
        return None
    last = chain[-1]
    edge = last["edge"]
    if edge is None or edge.kind != "binder":
        return None
    waiter = chain[-2]["dump"]
    peer, method = binder_peer(waiter.raw_frames if waiter is not None else [])
    if peer == UNKNOWN_PEER and not last["node"].label().startswith("binder peer"):
        peer = last["node"].label()
    call = f"{peer}{'.' + method if method else ''}"
    return "slow_binder_peer", {"peer": peer, "method": method, "node": last["node"].label(),
                                "call_frame": edge.frame, "how": edge.how,
                                "key": f"binder:{call}", "words": f"waits for a binder call to {call}"}


def label_cause(chain: list[ChainStep], critical: list[ThreadDump], blocked: ThreadDump | None, header: HeaderNumbers,
                process_threads: Sequence[ThreadDump] = ()) -> Cause:
    """(cause, evidence) for one event. chain: steps {'node': Node, 'edge': Edge|None, 'dump': ThreadDump|None}.
    evidence['key'] names the mechanism (None: nothing to group by); evidence['words'] says it in a sentence."""
    reason = header.get("reason") or ""
    if FGS_TIMEOUT.search(reason):
        return "app_specific", {"reason": reason, "key": "app:fgs_timeout", "idle": bool(
            blocked is not None and (is_idle(blocked) or not blocked.raw_frames)),
            "words": "a foreground service did not call startForeground() in time (the app's contract)"}
    looked = list(critical) + [s["dump"] for s in chain[1:-1] if s["dump"] is not None and s["dump"] not in critical]
    looked += [blocked] if blocked is not None and blocked not in looked else []
    found = (_storage(looked) or _memory(looked, process_threads, header) or _lock_contention(chain)
             or _binder(chain, blocked))
    if found:
        return found
    if blocked is not None and blocked.state == ABSENT and len(chain) == 1:
        return _main_absent(blocked, process_threads, header)
    return _rest(chain, critical, blocked, header)


def stalled_thread(threads: list[ThreadDump]) -> ThreadDump | None:
    """The first of `threads` whose stack shows a storage or memory stall (the storage and memory rules)."""
    shown = [t for t in threads if t.raw_frames]
    found = _storage(shown) or _memory(shown, (), {})
    if found is None:
        return None
    name = found[1].get("thread")
    return next((t for t in shown if t.name == name), None)


def _main_absent(blocked: ThreadDump, process_threads: Sequence[ThreadDump], header: HeaderNumbers) -> Cause:
    """The paste shows other threads of the app but not its main thread: a storage or memory stall on a shown
    thread is what the reporter pasted; anything else leaves the cause unknown."""
    shown = [t for t in process_threads if t is not blocked and t.raw_frames]
    found = _storage(shown) or _memory(shown, process_threads, header)
    if found:
        cause, ev = found
        return cause, {**ev, "main_absent": True,
                       "words": f"the report does not show the main thread; {ev.get('thread')} {ev['words']}"}
    return "unknown", {"main_absent": True, "key": UNKNOWN_KEY,
                       "words": "the report does not show the main thread: the cause is not in it"}


def _rest(chain: list[ChainStep], critical: list[ThreadDump], blocked: ThreadDump | None,
          header: HeaderNumbers) -> Cause:
    crit = critical[0] if critical else None
    if blocked is not None and len(chain) == 1 and is_idle(blocked):
        if blocked.tid != 1 and blocked.name != "main":   # the report does not show the main thread at all
            return "unknown", {"key": UNKNOWN_KEY, "frame": blocked.raw_frames[0] if blocked.raw_frames else None,
                               "words": "the report does not show the main thread; the threads it shows are idle"}
        return "unknown", {"idle": True, "key": "idle", "frame": blocked.raw_frames[0] if blocked.raw_frames else None,
                           "words": "the main thread was idle (waiting for its next message) when the stacks were "
                                    "taken: the cause is not in the report"}
    if blocked is not None and not blocked.raw_frames and len(chain) == 1:
        cpu = header.get("app_cpu_pct")
        proc = chain[0]["node"].process
        if cpu is not None and cpu >= APP_BUSY_CPU_PCT and proc not in ("system", SYSTEM_PROCESS):
            # an app busy on its own CPU; system_server busy is the system's state, not an app defect
            return "app_specific", {"app_cpu_pct": cpu, "key": None, "no_stack": True,
                                    "words": f"no stacks in the report; the app used {cpu:g}% CPU (busy)"}
        return "unknown", {"no_stack": True, "key": None,
                           "words": "no stacks in the report: only its header or log lines, which do not show the cause"}
    top: list[str] = []
    for t in critical[:2]:
        top.extend(t.raw_frames[:5])
    ev: CauseEvidence = {"top_frames": top}
    if crit is not None and crit.kstate == "D":
        ev["kernel_state"] = "D (uninterruptible wait)"
    last = chain[-1]
    edge = last["edge"]
    site = app_frame(blocked) or app_frame(crit)
    ev["app_frame"] = site
    if edge is not None and edge.kind == "process":
        ev["key"], ev["words"] = "app:child_process", "waits for a child process it started"
    elif edge is not None and last["node"].state == ABSENT:
        what = edge.lock_class if edge.lock_class and not _GENERIC_LOCK.match(edge.lock_class) else None
        where = _frame_method(site) if site else None
        key = f"app:lock:{_norm_class(what)}" if what else (f"app:wait:{where}" if where else None)
        ev["key"] = key
        ev["words"] = (f"waits for {_who(last['node'])}" + (f" ({what})" if what else "")
                       + (f" in {where}" if where else ""))
    elif edge is not None:
        ev["key"] = f"app:lock:{_norm_class(edge.lock_class)}" if edge.lock_class else None
        ev["words"] = f"waits for {_who(last['node'])}"
    else:
        ev.update(_self_mechanism(crit or blocked))
    return "app_specific", ev


_GENERIC_LOCK = re.compile(r"^(?:java\.lang\.Object|java\.lang\.Class<.*>|java\.util\.concurrent\.\S+|"
                           r"java\.lang\.Thread|java\.lang\.ref\.\S+|\S*Lock)$")


def _who(node: Node) -> str:
    """A thread in words: its name and tid, and where the report does not show it, said so."""
    name = node.name or (f"thread {node.tid}" if node.tid is not None else "a thread")
    tid = f" (tid {node.tid})" if node.tid is not None and node.name else ""
    return name + tid + (" (not in the report)" if node.state == ABSENT else "")


def _callee(frame: str | None) -> str | None:
    if not frame:
        return None
    m = re.match(r"^(?:at )?([\w$.<>]+?)(?:\(|\+|$)", frame.split("(")[0] if frame.startswith("at ") else frame)
    return m.group(1) if m else None


def _self_mechanism(t: ThreadDump | None) -> CauseEvidence:
    names = [s for s, _ in java_names(t)] if t is not None else []
    text = " ".join(t.raw_frames[:40]) if t is not None else ""
    if names and names[0].startswith("java.lang.Thread.sleep"):
        return {"key": "app:sleep", "words": "sleeps on the main thread (Thread.sleep)"}
    if _WEBVIEW.search(text):
        return {"key": "app:webview_init", "words": "loads/initialises WebView (Chromium) on the main thread"}
    if re.search(r"ViewRootImpl\.performTraversals|ViewRootImpl\.performLayout|Choreographer\.doFrame|"
                 r"\.onLayoutChildren|\.onLayout\(|\.onMeasure\(|\.dispatchDraw\(", text):
        return {"key": "app:ui_frame", "words": "lays out or draws views on the main thread"}
    site = app_frame(t)
    return {"key": f"app:{_frame_method(site)}" if site else None,
            "words": f"runs in the app's code ({site})" if site else "runs in code the report does not show"}


def _frame_method(text: str) -> str:
    return re.sub(r"^(?:at )?([^\s(]+).*$", r"\1", text)
