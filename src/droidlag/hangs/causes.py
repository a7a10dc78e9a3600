"""Root-cause labels (ours: explicit rules over the critical threads, the chain and the header numbers), checked in
this order, each with the evidence that fired it and a mechanism `key` (events with the same key share a root
cause, see cluster.py):
1. a foreground-service contract timeout in the reason (`startForeground()` not called in time): app_specific;
2. storage_sync (WAM): fsync/`FileDescriptor.sync`, SharedPreferences `commit` writes and `apply` flushes
   (`QueuedWork`, or apply()'s latch under the editor), prefs loads from disk, SQLite connection-pool waits, commits
   and opens, file-system syscalls on the waiting thread (`access`, `open`, `exists`...), ext4/f2fs/jbd2/discard
   kernel frames;
3. insufficient_memory: blocking-GC waits, reclaim/swap wait channels, low MemAvailable;
4. system_lock_contention: the chain waits for a system-service monitor (ActivityManagerService,
   WindowManagerGlobalLock, PowerManagerService, ...) or another framework/runtime lock (`android.*` classes,
   `Class<android.app.ContextImpl>`), whatever process holds it;
5. slow_binder_peer: the chain ends in a binder call; the peer service is named from the proxy class;
6. an idle main thread (in MessageQueue.next or its poll, Java or native-only; nothing blocked): unknown - the
   stacks do not show the cause;
7. no stack at all (a logcat ANR block alone): app_specific when the app's own CPU share says it was busy, else
   unknown;
8. app_specific: the rest (app or SDK code: CPU work, SDK locks and waits, a whole dump's wait no shown thread
   answers, crash handling, WebView, sleeps, child processes), with the frame it waited in and whose code that is
   (the app's, a named library's, the framework's: code_owner)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypedDict

from droidlag.hangs.features import UNKNOWN_KEY
from droidlag.hangs.waitfor import (
    ABSENT,
    BINDER_SERVICES,
    GENERIC_WAITS,
    HANDWRITTEN_PROXIES,
    ChainStep,
    Edge,
    Node,
    bare,
    is_idle,
    java_names,
    wait_run,
    waited_for,
    waited_lock,
    waits_in,
    whom_object,
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
# WebView's own start-up: the provider loaded (AOSP WebViewFactory, WebSettings.getDefaultUserAgent, which loads it),
# Chromium's browser process and native library started (WebViewChromiumFactoryProvider, WebViewChromiumAwInit,
# AwBrowserProcess, BrowserStartupController, LibraryLoader). Other WebView frames are WebView at work.
_WEBVIEW_INIT = re.compile(r"WebViewChromiumFactoryProvider|WebViewFactory\.|WebSettings\.getDefaultUserAgent|"
                           r"BrowserStartupController|WebViewChromium\.init|WebViewChromiumAwInit|"
                           r"AwBrowserProcess\.|library_loader\.LibraryLoader|WebViewLibraryLoader")
_WEBVIEW_CODE = re.compile(r"^(?:org\.chromium\.|com\.android\.webview\.chromium\.)")
# WebView's native code: the WebView (or Chrome, Trichrome) APK, or its library where the stack names it.
_WEBVIEW_LIB = re.compile(r"com\.google\.android\.webview|com\.android\.webview|com\.android\.chrome|com\.chrome\.|"
                          r"trichromelibrary|libwebviewchromium|libmonochrome")
# Chromium's AwContentsClientBridge hands a JavaScript dialog (alert, confirm, prompt, beforeunload) to the app's
# WebChromeClient and passes its answer back to the page (confirmJsResult / cancelJsResult).
_JS_DIALOG = re.compile(r"AwContentsClientBridge\.(?:native)?(?:[Cc]onfirmJsResult|[Cc]ancelJsResult|handleJs\w*)")
# Libraries an app links whose package names say whose code a frame is (each library's documented package): their
# frames are that library's code, not the app's.
LIBRARIES = (
    ("com.google.android.gms.", "Google Play services"), ("com.google.firebase.", "Firebase"),
    ("com.google.android.play.core.", "Play Core"), ("com.google.common.", "Guava"),
    ("com.google.android.exoplayer2.", "ExoPlayer"), ("org.chromium.", "WebView (Chromium)"),
    ("com.bugsnag.", "Bugsnag"), ("io.sentry.", "Sentry"), ("com.crashlytics.", "Crashlytics"),
    ("io.fabric.", "Fabric"), ("com.facebook.", "Facebook"), ("okhttp3.", "OkHttp"), ("okio.", "Okio"),
    ("retrofit2.", "Retrofit"), ("com.squareup.", "Square"), ("io.reactivex.", "RxJava"),
    ("com.appboy.", "Braze (Appboy)"), ("com.braze.", "Braze"), ("com.launchdarkly.", "LaunchDarkly"),
    ("com.pushwoosh.", "Pushwoosh"), ("com.unity3d.", "Unity"), ("io.flutter.", "Flutter"),
    ("com.microsoft.intune.", "Microsoft Intune"), ("com.onesignal.", "OneSignal"), ("com.clevertap.", "CleverTap"),
    ("com.instabug.", "Instabug"), ("com.newrelic.", "New Relic"), ("com.adjust.sdk.", "Adjust"),
    ("com.appsflyer.", "AppsFlyer"), ("com.mopub.", "MoPub"),
)


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


def code_owner(sym: str, process: str | None) -> str | None:
    """Whose code a Java frame (`pkg.Class.method`) is, in words: a library LIBRARIES names, the app's (in the
    process's package), the framework's, the app's (its package starts with the process's first two package names),
    another library's (the process is named and the package is not its own); None when the report names no app
    process to tell the app from a library."""
    for prefix, name in LIBRARIES:
        if sym.startswith(prefix):
            return f"{name} code"
    package = (process or "").split(":", 1)[0]
    if "." in package and sym.startswith(package + "."):
        return "the app's code"   # also a system app's own com.android.* code
    if FRAMEWORK.match(sym):
        return "framework code"
    app = package.split(".")
    if len(app) < 2:
        return None
    return "the app's code" if sym.split(".")[:2] == app[:2] else "library code"


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
            hit = _storage_hit(key, pat, t, waiting[id(t)])
            if hit is not None:
                return "storage_sync", {"thread": t.name, "frame": hit, "key": f"storage:{key}",
                                        "words": _STORAGE_WORDS[key]}
    for t in looked:
        hit = _file_syscall(t)
        if hit is not None:
            return "storage_sync", {"thread": t.name, "frame": hit, "key": "storage:file_syscall",
                                    "words": _STORAGE_WORDS["file_syscall"]}
    return None


def _storage_hit(key: str, pat: re.Pattern[str], t: ThreadDump, w: tuple[str, str] | None) -> str | None:
    """The frame (or state line) of `t` that fires storage rule `key`, or None."""
    if key == "sqlite_pool" and not (w and pat.search(w[1])):
        return None   # a pool wait counts only where the thread is parked in it, not opening a connection
    for s in _thread_text(t):
        if pat.search(s):
            return s
    return _prefs_latch_wait(t) if key == "sharedprefs_apply" else None


# SharedPreferencesImpl's editor waits on a latch in two places (AOSP SharedPreferencesImpl, Android 5 to 14):
# commit() for its own write (`EditorImpl.commit`, the commit rule), and apply()'s `awaitCommit` runnable
# (`EditorImpl$1.run`), which QueuedWork.waitToFinish runs when an activity or service stops or a service starts.
_PREFS_EDITOR = re.compile(r"SharedPreferencesImpl\$Edit(?!orImpl\.commit\b)")


def _prefs_latch_wait(t: ThreadDump) -> str | None:
    """A CountDownLatch wait called from SharedPreferences' editor other than commit(): apply()'s awaitCommit (also
    when the paste cut the frame's name, `SharedPreferencesImpl$Edit`). Its frame, or None."""
    names = java_names(t)
    k = wait_run(names)
    if not k or k >= len(names) or not any("CountDownLatch" in sym for sym, _ in names[:k]):
        return None
    return names[k][1] if _PREFS_EDITOR.search(names[k][1]) else None


def _file_syscall(t: ThreadDump) -> str | None:
    """A file-system syscall at the top of `t` (the call it is in): its frame, or None."""
    for sym, text in java_names(t)[:6] or [(f.symbol, f.text) for f in t.frames[:4]]:
        if FILE_SYSCALL.search(sym) or FILE_SYSCALL.search(text):
            return text
    for f in t.frames[:3]:
        if f.kind == "native" and FILE_SYSCALL.search(f.symbol):
            return f.text
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
    return _rest(chain, critical, blocked, header, process_threads)


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
          header: HeaderNumbers, process_threads: Sequence[ThreadDump] = ()) -> Cause:
    crit = critical[0] if critical else None
    quiet = _idle_or_no_stack(chain, blocked, header)
    if quiet is not None:
        return quiet
    top: list[str] = []
    for t in critical[:2]:
        top.extend(t.raw_frames[:5])
    ev: CauseEvidence = {"top_frames": top}
    if crit is not None and crit.kstate == "D":
        ev["kernel_state"] = "D (uninterruptible wait)"
    last = chain[-1]
    edge = last["edge"]
    process = chain[0]["node"].process
    site = app_frame(blocked) or app_frame(crit)
    ev["app_frame"] = site
    if edge is not None and edge.kind == "process":
        ev["key"], ev["words"] = "app:child_process", "waits for a child process it started"
    elif edge is not None and last["node"].state == ABSENT:
        ev.update(_absent_wait_words(last["node"], edge, site, process))
    elif edge is not None:
        ev["key"] = f"app:lock:{_norm_class(edge.lock_class)}" if edge.lock_class else None
        ev["words"] = f"waits for {_who(last['node'])}"
        ev["app_frame"] = app_frame(last["dump"])   # the holder's own frame, where the chain ends
    else:
        ev.update(_self_mechanism(crit or blocked, process, process_threads))
    return "app_specific", ev


def _idle_or_no_stack(chain: list[ChainStep], blocked: ThreadDump | None, header: HeaderNumbers) -> Cause | None:
    """An idle main thread, or a report with no stack: what the report cannot show (None for the rest)."""
    if blocked is None or len(chain) != 1:
        return None
    if is_idle(blocked):
        if blocked.tid != 1 and blocked.name != "main":   # the report does not show the main thread at all
            return "unknown", {"key": UNKNOWN_KEY, "frame": blocked.raw_frames[0] if blocked.raw_frames else None,
                               "words": "the report does not show the main thread; the threads it shows are idle"}
        return "unknown", {"idle": True, "key": "idle", "frame": blocked.raw_frames[0] if blocked.raw_frames else None,
                           "words": "the main thread was idle (waiting for its next message) when the stacks were "
                                    "taken: the cause is not in the report"}
    if blocked.raw_frames:
        return None
    cpu = header.get("app_cpu_pct")
    proc = chain[0]["node"].process
    if cpu is not None and cpu >= APP_BUSY_CPU_PCT and proc not in ("system", SYSTEM_PROCESS):
        # an app busy on its own CPU; system_server busy is the system's state, not an app defect
        return "app_specific", {"app_cpu_pct": cpu, "key": None, "no_stack": True,
                                "words": f"no stacks in the report; the app used {cpu:g}% CPU (busy)"}
    return "unknown", {"no_stack": True, "key": None,
                       "words": "no stacks in the report: only its header or log lines, which do not show the cause"}


def _absent_wait_words(node: Node, edge: Edge, site: str | None, process: str) -> CauseEvidence:
    """Key and words of a wait for a thread the report does not show (a named holder, or whom a wait waits for)."""
    what = edge.lock_class if edge.lock_class and not _GENERIC_LOCK.match(edge.lock_class) else None
    where = _frame_method(site) if site else None
    key = f"app:lock:{_norm_class(what)}" if what else (f"app:wait:{where}" if where else None)
    return {"key": key, "words": f"waits for {_who(node)}" + (f" ({what})" if what else "") + _in_code(where, process)}


def _in_code(where: str | None, process: str) -> str:
    """` in <frame> (<whose code>)`, or '' with no frame."""
    if not where:
        return ""
    owner = code_owner(where, process)
    return f" in {where}" + (f" ({owner})" if owner else "")


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


def _self_mechanism(t: ThreadDump | None, process: str, process_threads: Sequence[ThreadDump] = ()) -> CauseEvidence:
    """Key and words of a critical thread that waits for no other thread the report shows: it sleeps, waits for a
    result or a wake-up no shown thread is seen to give, handles a crash, runs WebView, lays out views, or runs the
    code its top frames show."""
    if t is None:
        return {"key": None, "words": "runs in code the report does not show"}
    names = [s for s, _ in java_names(t)]
    if names and bare(names[0]).startswith("java.lang.Thread.sleep"):
        return {"key": "app:sleep", "words": "sleeps on the main thread (Thread.sleep)"}
    w = waits_in(t)
    if w is not None and w[0] == "wait":
        return _unshown_wait(t, process, process_threads)
    text = " ".join(t.raw_frames[:40])
    found = _crash_words(t, process) or _webview_words(t, text)
    if found is not None:
        return found
    if re.search(r"ViewRootImpl\.performTraversals|ViewRootImpl\.performLayout|Choreographer\.doFrame|"
                 r"\.onLayoutChildren|\.onLayout\(|\.onMeasure\(|\.dispatchDraw\(", text):
        return {"key": "app:ui_frame", "words": "lays out or draws views on the main thread"}
    site = app_frame(t)
    if site is None:
        return {"key": None, "words": _no_app_frame_words(t, process)}
    owner = code_owner(_frame_method(site), process) or "app or library code"
    return {"key": f"app:{_frame_method(site)}", "words": f"runs in {owner} ({site})"}


def _unshown_wait(t: ThreadDump, process: str, process_threads: Sequence[ThreadDump]) -> CauseEvidence:
    """A thread of a whole dump waiting (a future, a latch, a monitor's notify...) for a thread the dump does not
    point to: whom it waits for, from its frames or the object it waits on, and the thread holding that object's
    monitor where one is shown."""
    lk = waited_lock(t)
    who = waited_for(t)
    if lk is not None and who in GENERIC_WAITS:
        who = whom_object(lk)
    what = lk.cls if lk is not None and lk.cls and not _GENERIC_LOCK.match(lk.cls) else None
    site = app_frame(t)
    where = _frame_method(site) if site else None
    holder = next((o for o in process_threads if lk is not None and lk.addr and o is not t and any(
        x.action == "locked" and x.addr == lk.addr for x in o.locks)), None)
    seen = (f"; {holder.name} (tid {holder.tid}) holds the monitor it waits on" if holder is not None
            else "; no thread of the dump is shown doing it")
    return {"key": f"app:lock:{_norm_class(what)}" if what else (f"app:wait:{where}" if where else None),
            "words": f"waits for {who}" + _in_code(where, process) + seen}


# A method that handles an uncaught exception (Thread.UncaughtExceptionHandler.uncaughtException and what handlers
# name their steps); the JVM's own dispatch to the handler (ThreadGroup, Thread.dispatchUncaughtException) is not one.
_HANDLER_METHOD = re.compile(r"uncaughtexception", re.I)
_DISPATCH = ("java.lang.ThreadGroup.", "java.lang.Thread.")


def _crash_words(t: ThreadDump, process: str) -> CauseEvidence | None:
    """A thread running crash handling: the handlers it is in (innermost first) and whose code they are."""
    names = java_names(t)
    handlers = [sym for sym, _ in names if "." in sym and _HANDLER_METHOD.search(sym.rsplit(".", 1)[1])
                and not sym.startswith(_DISPATCH)]
    if not handlers:
        return None
    said = [f"{h} ({code_owner(h, process) or 'app or library code'})" for h in dict.fromkeys(handlers)][:2]
    site = app_frame(t)
    return {"key": f"app:{_frame_method(site)}" if site else None,
            "words": "handles an uncaught exception (a crash in progress) in " + ", called from ".join(said)
                     + f"; top frame {_frame_method(names[0][1])}"}


def _webview_words(t: ThreadDump, text: str) -> CauseEvidence | None:
    """WebView on the main thread, named by what its frames show: its start-up (provider and Chromium loading
    frames, anywhere on the stack), native code of the WebView APK with no Java frame or symbol (nothing more is
    known), a JavaScript dialog's answer passed back to the page, or other Chromium code at the top of the stack's
    non-framework frames."""
    if _WEBVIEW_INIT.search(text):
        return {"key": "app:webview_init", "words": "loads/initialises WebView (Chromium) on the main thread"}
    site = app_frame(t)
    web = _frame_method(site) if site else ""
    if not web and not java_names(t) and any(_WEBVIEW_LIB.search(f.location) for f in t.frames[:12]
                                             if f.kind == "native"):
        # grouped with start-up, which is what the main thread mostly runs of WebView's native code (loading and
        # starting Chromium); the words say it is not confirmed
        return {"key": "app:webview_init", "words": "runs in WebView's (Chromium's) native code on the main thread, "
                                                    "most likely its start-up (loading Chromium); not confirmed: the "
                                                    "report shows no symbol or Java frame for it"}
    if not _WEBVIEW_CODE.match(web):
        return None
    if _JS_DIALOG.search(text):
        return {"key": "app:webview_js_dialog", "words": "WebView (Chromium) passes a JavaScript dialog's answer back "
                                                         f"to the page on the main thread ({web})"}
    return {"key": f"app:{web}", "words": f"runs WebView (Chromium) code on the main thread ({web})"}


def _no_app_frame_words(t: ThreadDump, process: str) -> str:
    """What a stack with no frame outside the framework runs: its top Java method and whose code it is (a system
    app's own `com.android.*` code is the app's), else its top native frame."""
    names = java_names(t)
    if names:
        sym = bare(names[0][0])
        owner = code_owner(sym, process) or "framework code"
        return f"runs in {owner} ({sym})" + ("" if owner == "the app's code" else "; the stack shows no app or library "
                                                                                   "frame")
    f = t.frames[0] if t.frames else None
    if f is None:
        return "runs in code the report does not show"
    if f.kind == "native":
        sym = re.sub(r"\(.*$|\+\d+$", "", f.symbol)
        return f"runs in native code (top frame {sym + ' (' + f.lib + ')' if sym and sym != '???' else f.lib})"
    return f"runs in the kernel ({f.symbol})"


def _frame_method(text: str) -> str:
    return re.sub(r"^(?:at )?([^\s(]+).*$", r"\1", text)
