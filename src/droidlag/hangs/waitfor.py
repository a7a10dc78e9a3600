"""The wait-for graph of one dump: a node per thread (or remote process where the peer thread is unknown), an edge
T_i -> T_j when T_i is blocked by T_j (monitor contention, lock owner, binder call, thread join). Every thread has at
most one outgoing edge, its innermost blocker, so chains and cycles (deadlocks) are simple walks."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from droidlag.models.dumps import BinderTransaction, Frame, LockLine, ProcessDump, ThreadDump

# Native Bp<Interface> proxies -> the process that serves them (for binder calls made from native code).
NATIVE_SERVICES = (
    ("SurfaceComposer", "surfaceflinger"), ("GraphicBufferProducer", "surfaceflinger"),
    ("DisplayEventConnection", "surfaceflinger"), ("CameraService", "cameraserver"), ("Camera", "cameraserver"),
    ("MediaPlayerService", "mediaserver"), ("MediaPlayer", "mediaserver"), ("MediaRecorder", "mediaserver"),
    ("MediaExtractor", "media.extractor"), ("MediaCodec", "media.codec"), ("AudioFlinger", "audioserver"),
    ("AudioPolicyService", "audioserver"), ("AudioTrack", "audioserver"), ("ServiceManager", "servicemanager"),
    ("InputFlinger", "inputflinger"), ("Vold", "vold"), ("Keystore", "keystore"), ("Drm", "mediadrmserver"),
)
# Java interfaces of well-known binder services -> the service (the process is system_server unless named).
BINDER_SERVICES = {
    "IActivityManager": "ActivityManagerService (system_server)", "IActivityTaskManager":
    "ActivityTaskManagerService (system_server)", "IPackageManager": "PackageManagerService (system_server)",
    "IWindowManager": "WindowManagerService (system_server)", "IWindowSession": "WindowManagerService (system_server)",
    "IUserManager": "UserManagerService (system_server)", "IAudioService": "AudioService (system_server)",
    "INotificationManager": "NotificationManagerService (system_server)", "IPowerManager":
    "PowerManagerService (system_server)", "IConnectivityManager": "ConnectivityService (system_server)",
    "IAccountManager": "AccountManagerService (system_server)", "IContentProvider": "a content provider",
    "IInAppBillingService": "Google Play billing (com.android.vending)", "IVold": "vold",
    "IStorageManager": "StorageManagerService (system_server)", "ILocationManager": "LocationManagerService "
    "(system_server)", "ITelephony": "phone (com.android.phone)", "IClipboard": "ClipboardService (system_server)",
    "IInputMethodManager": "InputMethodManagerService (system_server)", "IAlarmManager": "AlarmManagerService "
    "(system_server)", "IJobScheduler": "JobSchedulerService (system_server)", "IServiceManager": "servicemanager",
}
# Binder proxies the framework writes by hand instead of AIDL's `I<Name>$Stub$Proxy` (AOSP frameworks/base: the
# content provider one in every release; the activity manager, application thread and service manager ones before
# Android 8): proxy class -> (interface, the class whose onTransact serves it).
HANDWRITTEN_PROXIES = {
    "android.content.ContentProviderProxy": ("android.content.IContentProvider", "android.content.ContentProviderNative"),
    "android.app.ActivityManagerProxy": ("android.app.IActivityManager", "android.app.ActivityManagerNative"),
    "android.app.ApplicationThreadProxy": ("android.app.IApplicationThread", "android.app.ApplicationThreadNative"),
    "android.os.ServiceManagerProxy": ("android.os.IServiceManager", "android.os.ServiceManagerNative"),
}
_SERVERS = {iface: server for iface, server in HANDWRITTEN_PROXIES.values()}
_BP = re.compile(r"Bp([A-Za-z_]+)")
ABSENT = "absent"   # Node.state of a thread the report names (held by thread N) but does not show

# What a thread waits in, when no holder is named (partial reports): the run of wait frames at the top of its Java
# frames (or, for a native-only stack, the top native frames). Thread.sleep and an idle Looper are not waits for
# another thread.
_IDLE_JAVA = ("android.os.MessageQueue.nativePollOnce", "android.os.MessageQueue.next")
# What MessageQueue.next itself calls while it fetches the next message (AOSP MessageQueue.java, 4.4 to 14:
# Binder.flushPendingCommands before polling, nativePollOnce, SystemClock.uptimeMillis to compare the message's
# time): a Looper thread caught in one of these right above MessageQueue.next is between messages.
_NEXT_CALLEES = frozenset({"android.os.MessageQueue.nativePollOnce", "android.os.SystemClock.uptimeMillis",
                           "android.os.Binder.flushPendingCommands"})
# The native side of MessageQueue.nativePollOnce (AOSP android_os_MessageQueue.cpp: the JNI function, then
# NativeMessageQueue::pollOnce -> Looper::pollOnce -> Looper::pollInner -> epoll_wait), mangled or not; above it
# only the Looper, epoll and syscall frames (and the kernel's) of a thread waiting for its next message.
_NATIVE_POLL = re.compile(r"NativeMessageQueue(?:::|\d+)pollOnce|MessageQueue_nativePollOnce")
_POLL_PLUMBING = re.compile(r"^(?:\?\?\?)?$|epoll|Looper(?:::|\d+)poll(?:Inner|Once)|^syscall\b|^__kernel_")
_CHILD_JAVA = re.compile(r"(?:UNIXProcess|ProcessManager\$ProcessImpl|ProcessImpl|java\.lang\.Process)\.waitFor"
                         r"|ProcessManager\.exec|UNIXProcess\.forkAndExec|ProcessImpl\.forkAndExec")
_WAIT_JAVA = re.compile(
    r"^(?:java\.lang\.Object\.wait|java\.lang\.Thread\.parkFor\$?|sun\.misc\.Unsafe\.park|jdk\.internal\.misc\.Unsafe\.park"
    r"|java\.util\.concurrent\.locks\.LockSupport\.park\w*|java\.util\.concurrent\.\S+\.(?:await\w*|get|acquire\w*)"
    r"|java\.lang\.Thread\.join|\S*SQLiteConnectionPool\.(?:waitForConnection|\S+ waitForConnection)"
    r"|android\.app\.QueuedWork\.waitToFinish|android\.app\.SharedPreferencesImpl\.awaitLoadedLocked)$")
# Below a wait primitive, the concurrency library's own frames are still the wait: java.util.concurrent (the AQS
# internals, CountDownLatch, FutureTask, the blocking queues) and Guava's AbstractFuture, also when R8 renamed its
# class (`com.google.common.util.concurrent.a.get (AbstractFuture.java:369)`).
_WAIT_MACHINERY = re.compile(r"^java\.util\.concurrent\.|^com\.google\.common\.util\.concurrent\.AbstractFuture")
_WAIT_NATIVE = re.compile(r"pthread_mutex_lock|MutexLockWithTimeout|__futex_wait_ex|pthread_cond_(?:timed)?wait"
                          r"|pthread_join|__pthread_cond_timedwait|sem_wait")
_ART_INTERNAL_WAIT = re.compile(r"art::(?:Monitor::Wait|Monitor::Lock|Object_wait|Thread::Park|Unsafe_park)")
# Android 5-7 (ART) and Dalvik park a thread by Object.wait on a lock of its own, under Thread.parkFor: the dump shows
# `- waiting on <X> (a java.lang.Object)` and `- locked <X>` (Dalvik: `(a java.lang.VMThread) held by tid=<self>`).
# That monitor is the thread's own, never what it waits for; the frames below parkFor say that.
_PARK_FOR = ("java.lang.Thread.parkFor", "java.lang.Thread.parkFor$")
_SERVING_JAVA = ("android.os.Binder.execTransact",)


@dataclass(frozen=True, slots=True)
class Node:
    """A wait-for graph node. remote: a process known only as a binder peer (tid unknown)."""

    process: str
    pid: int | None
    tid: int | None
    sys_tid: int | None
    name: str | None
    state: str | None
    remote: bool = False

    def to_dict(self) -> dict[str, str | int | None]:
        return {"process": self.process, "pid": self.pid, "tid": self.tid, "sys_tid": self.sys_tid,
                "name": self.name, "state": self.state}

    def label(self) -> str:
        proc = self.process or "process not named"
        where = f"{proc}({self.pid})" if self.pid is not None else proc
        if self.remote and self.state == ABSENT:
            who = self.name or (f"thread {self.tid}" if self.tid is not None else "?")
            return f"{where}:{who} (not in the report)"
        if self.remote:
            return where
        tid = f"[tid={self.tid}]" if self.tid is not None else (f"[sysTid={self.sys_tid}]" if self.sys_tid else "")
        return f"{where}:{self.name}{tid}" + (" (not in the report)" if self.state == ABSENT else "")


@dataclass(frozen=True, slots=True)
class Edge:
    """Why a thread waits for another: kind is 'monitor' (held by N), 'lock_owner' (another stack shows
    `- locked` on the awaited address), 'binder' or 'join'; how says how the peer was found."""

    kind: str
    lock: str | None = None
    lock_class: str | None = None
    frame: str | None = None
    how: str = ""

    def to_dict(self) -> dict[str, str | None]:
        return {"kind": self.kind, "lock": self.lock, "lock_class": self.lock_class, "frame": self.frame,
                "how": self.how}


class ChainStep(TypedDict):
    """One step of a walk from the blocked thread: the node, the edge into it (None for the first), and its thread
    dump (None for a remote process or an absent thread)."""

    node: Node
    edge: Edge | None
    dump: ThreadDump | None


class _Nodes(list):  # type: ignore[type-arg]
    """A graph's nodes, where a dumped thread's node is made on first use: most threads of a dump are never on a
    chain, so their Node (and the attribute parse its sys_tid needs) is never built. Indexing is the only access
    the analyses use; None marks a node not made yet."""

    def __init__(self, threads: dict[int, tuple[ProcessDump, ThreadDump]]):
        super().__init__()
        self.threads = threads

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        v = list.__getitem__(self, i)
        if v is None:
            p, t = self.threads[i]
            v = Node(p.cmdline, p.pid, t.tid, t.sys_tid, t.name, t.state or t.kstate)
            list.__setitem__(self, i, v)
        return v


@dataclass
class WaitForGraph:
    nodes: list[Node] = field(default_factory=list)
    out: dict[int, tuple[int, Edge]] = field(default_factory=dict)
    threads: dict[int, tuple[ProcessDump, ThreadDump]] = field(default_factory=dict)
    index: dict[int, int] = field(default_factory=dict)  # id(ThreadDump) -> node

    def node_of(self, thread: ThreadDump) -> int | None:
        return self.index.get(id(thread))

    def walk(self, start: int) -> tuple[list[tuple[int, Edge | None]], list[int]]:
        """Follow edges from `start`: the chain as (node, edge into it) and the cycle's nodes ([] if none)."""
        chain: list[tuple[int, Edge | None]] = [(start, None)]
        seen = {start: 0}
        cur = start
        while cur in self.out:
            nxt, edge = self.out[cur]
            if nxt in seen:
                return chain, [n for n, _ in chain[seen[nxt]:]]
            seen[nxt] = len(chain)
            chain.append((nxt, edge))
            cur = nxt
        return chain, []

    def cycles(self) -> list[list[int]]:
        """Every deadlock cycle once, members in edge order starting from the lowest node index."""
        found: dict[frozenset[int], list[int]] = {}
        state: dict[int, int] = {}
        for s in list(self.out):
            if s in state:
                continue
            path: list[int] = []
            pos: dict[int, int] = {}
            cur = s
            while cur in self.out and cur not in state:
                state[cur] = 1
                pos[cur] = len(path)
                path.append(cur)
                cur = self.out[cur][0]
                if cur in pos:
                    cyc = path[pos[cur]:]
                    k = cyc.index(min(cyc))
                    cyc = cyc[k:] + cyc[:k]
                    found.setdefault(frozenset(cyc), cyc)
                    break
        return list(found.values())


def is_serving(f: Frame) -> bool:
    """A frame where a binder thread executes an incoming call; frames below it belong to an outer context."""
    if f.kind == "java":
        return f.symbol in _SERVING_JAVA or f.symbol.endswith("$Stub.onTransact")
    if f.kind == "native":
        s = f.symbol
        return ("IPCThreadState14executeCommand" in s or "BBinder8transact" in s
                or "IPCThreadState::executeCommand" in s or "BBinder::transact" in s)
    return False


def is_binder_call(f: Frame) -> bool:
    """A frame of an outgoing synchronous binder call (not an idle pool thread waiting for work)."""
    if f.kind == "java":
        return f.symbol in ("android.os.BinderProxy.transact", "android.os.BinderProxy.transactNative")
    if f.kind == "native":
        s = f.symbol
        return ("IPCThreadState8transact" in s or "IPCThreadState15waitForResponse" in s or "BpBinder8transact" in s
                or "IPCThreadState::transact" in s or "IPCThreadState::waitForResponse" in s
                or "BpBinder::transact" in s or s.startswith("android.os.BinderProxy.transact"))
    return False


def _may_block(t: ThreadDump) -> bool:
    """False when blocker(t) is None for certain without parsing a frame: no `waiting to lock` line, no `waiting on`
    line under a `java.lang.Thread.join` frame, and no frame text that can be an outgoing binder call (every
    is_binder_call symbol holds `transact` or `waitForResponse`). Most threads of a dump (idle in Object.wait,
    sleeping, polling) are known idle here."""
    waits_on = False
    for lk in t.locks:
        if lk.action == "waiting to lock":
            return True
        waits_on = waits_on or lk.action == "waiting on"
    text = t.frames_text()
    return "transact" in text or "waitForResponse" in text or (waits_on and "java.lang.Thread.join" in text)


def blocker(t: ThreadDump) -> tuple[str, LockLine | int] | None:
    """The innermost reason `t` waits: ('monitor', LockLine), ('join', LockLine) or ('binder', frame index)."""
    if not _may_block(t):
        return None   # most threads of a dump: their frames need not be parsed to know it
    frames = t.frames
    stop = len(frames)
    for i, f in enumerate(frames):
        if is_serving(f):
            stop = i
            break
    lim = max(stop, 1)
    for lk in t.locks:
        if lk.action == "waiting to lock" and lk.frame_index < lim:
            return "monitor", lk
    for f in frames[:min(stop, 4)]:
        if f.kind == "java" and f.symbol == "java.lang.Thread.join":
            for lk in t.locks:
                if lk.action == "waiting on" and lk.frame_index < lim:
                    return "join", lk
            break
    for i in range(stop):
        if is_binder_call(frames[i]):
            return "binder", i
    return None


def first_java(t: ThreadDump) -> int | None:
    """Index of the first Java frame (native frames above it are the JNI/ART plumbing of that call)."""
    for i, f in enumerate(t.frames):
        if f.kind == "java":
            return i
    return None


def is_idle(t: ThreadDump) -> bool:
    """A Looper thread waiting for its next message (an idle main thread when the ANR was dumped): in
    MessageQueue.next, or in what it calls to fetch the message (_NEXT_CALLEES: Dalvik dumps show
    `SystemClock.uptimeMillis` above it), or - a native-only stack - in the Looper's epoll wait under
    NativeMessageQueue::pollOnce."""
    names = java_names(t)
    if not names:
        return _native_idle(t)
    k = 0
    while k < len(names) and names[k][0] in _NEXT_CALLEES:
        k += 1
    if k == len(names):   # the paste ends there: only nativePollOnce says which loop it is
        return names[0][0] == _IDLE_JAVA[0]
    return names[k][0] == _IDLE_JAVA[1]


def _native_idle(t: ThreadDump) -> bool:
    """A native-only stack polling the Java MessageQueue: NativeMessageQueue::pollOnce (or the JNI function), with
    only Looper/epoll/syscall and kernel frames above it."""
    for f in t.frames[:12]:
        if f.kind == "kernel":
            continue
        if f.kind != "native":
            return False
        if _NATIVE_POLL.search(f.symbol):
            return True
        if not _POLL_PLUMBING.search(f.symbol):
            return False
    return False


def bare(sym: str) -> str:
    """A Java symbol without ART's `!` mark (`java.lang.Object.wait!`: a native method of Android 5-7 dumps)."""
    return sym[:-1] if sym.endswith("!") else sym


def waits_in(t: ThreadDump) -> tuple[str, str] | None:
    """What `t` waits for when no holder is named: ('process', frame) for a child process, ('wait', frame) for a
    lock, condition, future or connection another thread must release (the outermost frame of the wait: the
    primitives and the concurrency library's frames under them); None for running, sleeping or idle."""
    native = _native_wait(t)
    if native is not None:
        return "wait", native
    names = java_names(t)
    if not names:
        found = _native_only_wait(t)
        return ("wait", found) if found else None
    for sym, text in names[:6]:
        if _CHILD_JAVA.search(sym):
            return "process", text
    if is_idle(t) or bare(names[0][0]).startswith("java.lang.Thread.sleep"):
        return None
    k = wait_run(names)
    return ("wait", names[k - 1][1]) if k else None


def _native_wait(t: ThreadDump) -> str | None:
    """A JNI call that waits in native code (a mutex) before any Java frame returns: its outermost native wait frame
    (pthread_mutex_lock rather than the futex under it)."""
    found = None
    for f in t.frames[:6]:
        if f.kind != "native":
            break
        if _WAIT_NATIVE.search(f.symbol):
            found = f.text
    return found


def _native_only_wait(t: ThreadDump) -> str | None:
    """A stack with no Java method at all: its outermost native or ART-internal wait frame."""
    found = None
    for f in t.frames[:6]:
        if f.kind == "native" and (_WAIT_NATIVE.search(f.symbol) or _ART_INTERNAL_WAIT.search(f.symbol)):
            found = f.text
    return found


def wait_run(names: list[tuple[str, str]]) -> int:
    """How many of the top Java frames are the wait: a wait primitive first (Object.wait, park, a latch's await,
    a future's get...), then every primitive or concurrency-library frame under it (_WAIT_MACHINERY); 0 when the
    top frame is no wait."""
    if not names or not _WAIT_JAVA.match(bare(names[0][0])):
        return 0
    k = 1
    while k < len(names) and _in_wait(names[k]):
        k += 1
    return k


def _in_wait(name: tuple[str, str]) -> bool:
    sym = bare(name[0])
    return bool(_WAIT_JAVA.match(sym) or _WAIT_MACHINERY.match(sym) or "(AbstractFuture.java" in name[1])


def waited_for(t: ThreadDump) -> str:
    """Whom `t` waits for, in words, from its wait frames (_WAITED_FOR): first the frame that called the wait (a
    SharedPreferences write, a future's get), then the wait's own frames from the outermost (CountDownLatch.await
    before the AbstractQueuedSynchronizer.acquire it runs on); for a native-only stack, its wait frame."""
    names = java_names(t)
    k = wait_run(names)
    frames = ([names[k][1]] if k < len(names) else []) + [text for _, text in reversed(names[:k])]
    if not k:
        native = _native_wait(t) or (None if names else _native_only_wait(t))
        frames = [native] if native else []
    for frame in frames:
        for pat, who in _WAITED_FOR:
            if pat.search(frame):
                return who
    return "the thread it waits for"


def is_park_lock(t: ThreadDump, lk: LockLine) -> bool:
    """The `waiting on` line of Android 5-7's and Dalvik's Thread.parkFor: the thread's own park lock, which it
    also holds (see _PARK_FOR), not what it waits for."""
    i = lk.frame_index
    frames = t.frames
    if lk.action != "waiting on" or not 0 <= i < len(frames) - 1:
        return False
    return bare(frames[i].symbol) == "java.lang.Object.wait" and frames[i + 1].symbol in _PARK_FOR


def waited_lock(t: ThreadDump) -> LockLine | None:
    """The `waiting on` / `parking to wait for` line naming the object `t` waits on (with its class), not its own
    park lock."""
    return next((x for x in t.locks if x.action in ("waiting on", "parking to wait for") and x.cls
                 and not is_park_lock(t, x)), None)


_OAT_SYMBOL = re.compile(r"^([A-Za-z_$][\w$]*(?:\.[\w$<>-]+)+)(?:\+\d+)?$")


def java_names(t: ThreadDump) -> list[tuple[str, str]]:
    """(symbol, frame text) of the Java methods on the stack, innermost first: the Java frames, or for a native-only
    stack (Play Console's native form) the compiled methods of `.oat`/`.odex` frames (`java.lang.Object.wait+52`)."""
    out = [(f.symbol, f.text) for f in t.frames if f.kind == "java"]
    if out:
        return out
    for f in t.frames:
        if f.kind == "native" and f.lib.endswith((".oat", ".odex", ".vdex")):
            m = _OAT_SYMBOL.match(f.symbol)
            if m:
                out.append((m.group(1), f.text))
    return out


def _proxy_method(frames: list[Frame], start: int) -> tuple[str, str] | None:
    for f in frames[start:start + 8]:
        if "$Stub$Proxy." in f.symbol and f.kind in ("java", "native"):   # native: a compiled (.oat) proxy method
            sym = re.sub(r"\+\d+$", "", f.symbol) if f.kind == "native" else f.symbol
            iface, method = sym.rsplit(".", 1)
            return iface[: -len("$Stub$Proxy")], method
        if f.kind == "java" and "Proxy." in f.symbol:
            cls, method = f.symbol.rsplit(".", 1)
            if cls in HANDWRITTEN_PROXIES:
                return HANDWRITTEN_PROXIES[cls][0], method
    return None


def _serves(t: ThreadDump, iface: str, method: str | None) -> bool:
    frames = t.frames
    targets = {iface + "$Stub.onTransact", _SERVERS.get(iface, iface) + ".onTransact"}
    for k, f in enumerate(frames):
        if f.kind == "java" and f.symbol in targets:
            return method is None or (k > 0 and frames[k - 1].method_name == method)
    return False


def _native_service(frames: list[Frame], start: int) -> str | None:
    for f in frames[start:start + 8]:
        if f.kind != "native":
            continue
        m = _BP.search(f.symbol)
        if m and m.group(1) != "Binder":
            name = m.group(1)
            for key, proc in NATIVE_SERVICES:
                if name.startswith(key):
                    return proc
    return None


def _short(cmdline: str) -> str:
    return cmdline.rsplit("/", 1)[-1] if cmdline.startswith("/") else cmdline


def build_wait_for_graph(processes: list[ProcessDump],
                         transactions: Sequence[BinderTransaction] = (), partial: bool = False) -> WaitForGraph:
    """The wait-for graph over `processes` (one dump per pid). Self-edges (old Dalvik dumps name the waiting
    thread as the holder) are dropped. A holder the dump names but does not show (`held by thread 44` in a partial
    report) is a node of its own, state 'absent'. partial (a pasted report, not a whole dump): a thread waiting in a
    lock, condition, future or connection pool with no holder shown waits for a thread absent from the report; one
    waiting for a child process, for that process."""
    return _GraphBuilder(processes, transactions, partial).build()


class _GraphBuilder:
    """The phases of one graph: a node per dumped thread, then each thread's one outgoing edge (its innermost
    blocker: a lock or join, a binder call, or - with no blocker - a named worker thread's work (NAMED_WORKERS) or a
    partial report's wait); nodes for remote processes and absent holders are added as edges name them."""

    def __init__(self, processes: list[ProcessDump], transactions: Sequence[BinderTransaction], partial: bool):
        self.processes, self.partial = processes, partial
        self.g = WaitForGraph()
        index, threads = self.g.index, self.g.threads
        n = 0
        for p in processes:
            for t in p.threads:
                index[id(t)] = n
                threads[n] = (p, t)
                n += 1
        nodes = _Nodes(threads)
        nodes.extend([None] * n)
        self.g.nodes = nodes
        self.remote: dict[tuple[int | None, str], int] = {}      # (pid, name) -> a remote process's node
        self.absent: dict[tuple[int | None, int], int] = {}      # (pid, tid) -> a named holder the dump does not show
        self.by_sys: dict[tuple[int | None, int], ThreadDump] = {}
        self.by_pid: dict[int | None, ProcessDump] = {}
        for p in processes:
            self.by_pid.setdefault(p.pid, p)
            if not transactions:
                continue   # by_sys serves only the kernel's transaction records
            for t in p.threads:
                if t.sys_tid is not None:
                    self.by_sys[(p.pid, t.sys_tid)] = t
        self.pending: dict[tuple[int | None, int | None], BinderTransaction] = {
            (tr.from_pid, tr.from_tid): tr for tr in transactions}

    def build(self) -> WaitForGraph:
        for p in self.processes:
            for t in p.threads:
                if not t.locks and not t.has_frames():
                    continue
                b = blocker(t)
                if b is None:
                    if not _named_worker_wait(self.g, p, t) and self.partial:
                        _absent_wait(self.g, p, t, self.remote_node)
                    continue
                kind, info = b
                if isinstance(info, LockLine):
                    self._lock_edge(p, t, kind, info)
                else:
                    self._binder_edge(p, t, info)
        return self.g

    def remote_node(self, pid: int | None, name: str) -> int:
        key = (pid, name)
        if key not in self.remote:
            self.remote[key] = len(self.g.nodes)
            self.g.nodes.append(Node(name, pid, None, None, None, None, remote=True))
        return self.remote[key]

    def _absent_holder(self, p: ProcessDump, tid: int, name: str | None) -> int:
        key = (p.pid, tid)
        if key not in self.absent:
            self.absent[key] = len(self.g.nodes)
            self.g.nodes.append(Node(p.cmdline, p.pid, tid, None, name, ABSENT, remote=True))
        return self.absent[key]

    def _lock_edge(self, p: ProcessDump, t: ThreadDump, kind: str, lk: LockLine) -> None:
        """A monitor or join wait: the holder named by the dump, else the thread object joined, else the thread
        whose stack shows `- locked` on the awaited address."""
        src = self.g.index[id(t)]
        target = None
        how = ""
        if lk.held_by is not None:
            target = p.thread_by_tid(lk.held_by)
            how = "held by"
        elif kind == "join" and lk.addr:
            target = next((o for o in p.threads if o.obj == lk.addr), None)
            how = "thread object"
        if target is None and kind == "monitor" and lk.addr:
            target = next((o for o in p.threads if o is not t and any(
                x.action == "locked" and x.addr == lk.addr for x in o.locks)), None)
            how = "locked by"
            kind_e = "lock_owner"
        else:
            kind_e = kind
        frame = t.frames[lk.frame_index].text if 0 <= lk.frame_index < len(t.frames) else None
        if target is None and lk.held_by is not None:
            # named by the dump, not shown in it (a partial report): the holder is still the critical thread
            self.g.out[src] = (self._absent_holder(p, lk.held_by, lk.held_by_name),
                               Edge("monitor", lk.addr, lk.cls, frame, "held by (absent)"))
            return
        if target is None or target is t:
            return
        self.g.out[src] = (self.g.index[id(target)], Edge(kind_e, lk.addr, lk.cls, frame, how))

    def _binder_edge(self, p: ProcessDump, t: ThreadDump, i: int) -> None:
        """A binder call at frame i: the kernel's transaction record names the peer thread; else the `$Stub$Proxy`
        method names the serving thread, process or service; else a native Bp proxy names the service."""
        src = self.g.index[id(t)]
        frame_text = t.frames[i].text
        tr = self.pending.get((p.pid, t.sys_tid))
        if tr is not None:
            peer = self.by_sys.get((tr.to_pid, tr.to_tid))
            if peer is not None:
                self.g.out[src] = (self.g.index[id(peer)], Edge("binder", frame=frame_text, how="transaction record"))
            else:
                rp = self.by_pid.get(tr.to_pid)
                self.g.out[src] = (self.remote_node(tr.to_pid, rp.cmdline if rp else ""),
                                   Edge("binder", frame=frame_text, how="transaction record"))
            return
        pm = _proxy_method(t.frames, i)
        if pm is not None:
            self.g.out[src] = self._proxy_target(p, pm, frame_text)
            return
        svc = _native_service(t.frames, i)
        if svc is not None:
            served = next((q for q in self.processes if _short(q.cmdline) == svc), None)
            self.g.out[src] = (self.remote_node(served.pid if served else None, svc),
                               Edge("binder", frame=frame_text, how="native proxy"))
            return
        self.g.out[src] = (self.remote_node(None, "binder peer (unknown)"),
                           Edge("binder", frame=frame_text, how="unknown"))

    def _proxy_target(self, p: ProcessDump, pm: tuple[str, str], frame_text: str) -> tuple[int, Edge]:
        """The one thread serving the proxy's method in another process, else the one process serving it, else the
        service the interface names."""
        iface, method = pm
        cands = [(q, o) for q in self.processes if q is not p for o in q.threads if _serves(o, iface, method)]
        if len(cands) == 1:
            return (self.g.index[id(cands[0][1])],
                    Edge("binder", frame=frame_text, how=f"serving {iface.rsplit('.', 1)[-1]}.{method}"))
        procs = {id(q): q for q, _ in cands}
        if len(procs) == 1:
            q = next(iter(procs.values()))
            return self.remote_node(q.pid, q.cmdline), Edge("binder", frame=frame_text, how=f"process serving {method}")
        short = iface.rsplit(".", 1)[-1]
        return (self.remote_node(None, BINDER_SERVICES.get(short, short + " service")),
                Edge("binder", frame=frame_text, how=f"interface {short}"))


def _absent_wait(g: WaitForGraph, p: ProcessDump, t: ThreadDump, remote_node: Callable[[int | None, str], int]) -> None:
    """Edge from a thread of a partial report that waits with no holder shown to the absent thread (or child
    process) it waits for: named by the object it waits on where the dump names one (not the thread's own park
    lock), else by its wait frames (waited_for)."""
    w = waits_in(t)
    if w is None:
        return
    kind, frame = w
    src = g.index[id(t)]
    if kind == "process":
        g.out[src] = (remote_node(None, "a child process"), Edge("process", frame=frame, how="waits for a child process"))
        return
    lk = waited_lock(t)
    what = lk.cls if lk is not None else None
    who = waited_for(t)
    if what is not None and who in GENERIC_WAITS:
        who = whom_object(lk)
    key = len(g.nodes)
    g.nodes.append(Node(p.cmdline, p.pid, None, None, who, ABSENT, remote=True))
    g.out[src] = (key, Edge("wait", lk.addr if lk else None, what, frame, "no holder in the report"))


def whom_object(lk: LockLine | None) -> str:
    """Whom a thread waiting on an object waits for, named by the object's class: a `parking to wait for` object is
    a java.util.concurrent synchronizer (named as _WAITED_FOR names its frames); an Object.wait monitor is notified
    by another thread."""
    cls = (lk.cls if lk is not None else None) or "?"
    if lk is not None and lk.action == "parking to wait for":
        for pat, who in _WAITED_FOR:
            if pat.search(cls.replace("$", ".")):
                return who
        return f"the thread expected to unpark it ({cls})"
    return f"the thread expected to notify it ({cls})"


# Whom a wait waits for, in words, from the frames of the wait (waited_for): the most specific first. A shared
# acquire of AbstractQueuedSynchronizer is a latch's or a semaphore's (ReentrantReadWriteLock's read lock is named by
# its own frame above it); a plain acquire is a lock's.
_WAITED_FOR = (
    (re.compile(r"waitForConnection"), "the thread holding a SQLite connection"),
    (re.compile(r"QueuedWork|SharedPreferencesImpl"), "the SharedPreferences writer thread"),
    (re.compile(r"FutureTask|Future\.get|\.get\("), "the thread computing the awaited result"),
    (re.compile(r"CountDownLatch"), "the thread expected to count down the latch"),
    (re.compile(r"Thread\.join|pthread_join"), "the thread being joined"),
    (re.compile(r"FinalizerReference|runFinalization"), "the finalizer thread (FinalizerDaemon)"),
    (re.compile(r"Semaphore"), "the thread expected to release a permit (a semaphore)"),
    (re.compile(r"(?:Blocking|Synchronous|Transfer)Queue\.|BlockingDeque\."),
     "the thread expected to hand it an item (a blocking queue)"),
    (re.compile(r"ReentrantLock|ReadWriteLock|AbstractQueuedSynchronizer\.acquire(?!Shared)|mutex|Mutex"),
     "the holder of the lock"),
    (re.compile(r"AbstractQueuedSynchronizer\.(?:do)?[aA]cquireShared"),
     "the thread expected to release it (a latch or a semaphore)"),
    (re.compile(r"Object\.wait|pthread_cond|ConditionObject|LockSupport|Unsafe\.park|futex|Monitor::Wait"),
     "the thread expected to wake it"),
)
GENERIC_WAITS = frozenset({_WAITED_FOR[-1][1], "the thread it waits for"})
QUEUED_WORK_THREAD = "queued-work-looper"   # AOSP QueuedWork's writer thread (Android 8+)
# Waits whose worker AOSP runs on a thread of its own name, so a whole dump shows whom the waiter waits for:
# (frame marker, the worker thread's name, how it is found).
NAMED_WORKERS = (
    # SharedPreferences apply() flushes: QueuedWork.waitToFinish waits for QueuedWork's writer thread (Android 8+)
    ("QueuedWork.waitToFinish", QUEUED_WORK_THREAD, "QueuedWork's writer thread"),
    # System.runFinalization -> FinalizerReference.finalizeAllEnqueued waits until the FinalizerDaemon has run the
    # finalizers queued before it (libcore FinalizerReference, Daemons)
    ("FinalizerReference.finalizeAllEnqueued", "FinalizerDaemon", "the finalizer thread"),
)


def _named_worker_wait(g: WaitForGraph, p: ProcessDump, t: ThreadDump) -> bool:
    """A thread waiting on work AOSP runs on a named thread (NAMED_WORKERS: a QueuedWork flush, a finalization)
    waits for that thread when the dump shows it. True when the edge was added."""
    text = t.frames_text()   # raw frame lines: no need to parse them to know most threads are not such a wait
    for marker, worker_name, how in NAMED_WORKERS:
        if t.name == worker_name or marker not in text:
            continue
        w = waits_in(t)
        if w is None or not any(marker in frame for _, frame in java_names(t)[:14]):
            continue
        worker = next((o for o in p.threads if o.name == worker_name), None)
        if worker is not None:
            g.out[g.index[id(t)]] = (g.index[id(worker)], Edge("wait", frame=w[1], how=how))
            return True
    return False
