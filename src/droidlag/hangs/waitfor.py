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

# What a thread waits in, when no holder is named (partial reports): the first Java frame (or, for a native-only
# stack, the top native frames). Thread.sleep and an idle Looper are not waits for another thread.
_IDLE_JAVA = ("android.os.MessageQueue.nativePollOnce", "android.os.MessageQueue.next")
_CHILD_JAVA = re.compile(r"(?:UNIXProcess|ProcessManager\$ProcessImpl|ProcessImpl|java\.lang\.Process)\.waitFor"
                         r"|ProcessManager\.exec|UNIXProcess\.forkAndExec|ProcessImpl\.forkAndExec")
_WAIT_JAVA = re.compile(
    r"^(?:java\.lang\.Object\.wait|java\.lang\.Thread\.parkFor\$?|sun\.misc\.Unsafe\.park|jdk\.internal\.misc\.Unsafe\.park"
    r"|java\.util\.concurrent\.locks\.LockSupport\.park\w*|java\.util\.concurrent\.\S+\.(?:await\w*|get|acquire\w*)"
    r"|java\.lang\.Thread\.join|\S*SQLiteConnectionPool\.(?:waitForConnection|\S+ waitForConnection)"
    r"|android\.app\.QueuedWork\.waitToFinish|android\.app\.SharedPreferencesImpl\.awaitLoadedLocked)$")
_WAIT_NATIVE = re.compile(r"pthread_mutex_lock|MutexLockWithTimeout|__futex_wait_ex|pthread_cond_(?:timed)?wait"
                          r"|pthread_join|__pthread_cond_timedwait|sem_wait")
_ART_INTERNAL_WAIT = re.compile(r"art::(?:Monitor::Wait|Monitor::Lock|Object_wait|Thread::Park|Unsafe_park)")
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
    """A Looper thread waiting for its next message: an idle main thread when the ANR was dumped."""
    names = java_names(t)
    return bool(names) and names[0][0] in _IDLE_JAVA


def waits_in(t: ThreadDump) -> tuple[str, str] | None:
    """What `t` waits for when no holder is named: ('process', frame) for a child process, ('wait', frame) for a
    lock, condition, future or connection another thread must release; None for running, sleeping or idle."""
    names = java_names(t)
    native_wait = None
    for f in t.frames[:6]:   # a JNI call that waits in native code (a mutex) before any Java frame returns
        if f.kind != "native":
            break
        if _WAIT_NATIVE.search(f.symbol):
            native_wait = f.text   # the outermost wait frame: pthread_mutex_lock rather than the futex under it
    if native_wait is not None:
        return "wait", native_wait
    if not names:
        found = None
        for f in t.frames[:6]:
            if f.kind == "native" and (_WAIT_NATIVE.search(f.symbol) or _ART_INTERNAL_WAIT.search(f.symbol)):
                found = f.text
        return ("wait", found) if found else None
    for sym, text in names[:6]:
        if _CHILD_JAVA.search(sym):
            return "process", text
    if names[0][0] in _IDLE_JAVA or names[0][0].startswith("java.lang.Thread.sleep"):
        return None
    # wait primitives first, then the frame that called them
    k = 0
    while k < len(names) and _WAIT_JAVA.match(names[k][0]):
        k += 1
    if k:
        return "wait", names[k - 1][1]
    return None


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
    blocker: a lock or join, a binder call, or - with no blocker - a QueuedWork flush or a partial report's wait);
    nodes for remote processes and absent holders are added as edges name them."""

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
                    if not _queued_work_wait(self.g, p, t) and self.partial:
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
    process) it waits for."""
    w = waits_in(t)
    if w is None:
        return
    kind, frame = w
    src = g.index[id(t)]
    if kind == "process":
        g.out[src] = (remote_node(None, "a child process"), Edge("process", frame=frame, how="waits for a child process"))
        return
    lk = next((x for x in t.locks if x.action in ("waiting on", "parking to wait for") and x.cls), None)
    what = lk.cls if lk is not None else None
    if what is None:
        who = next((w for pat, w in _WAITED_FOR if pat.search(frame)), "the thread it waits for")
    else:
        who = f"holder of {what}"
    key = len(g.nodes)
    g.nodes.append(Node(p.cmdline, p.pid, None, None, who, ABSENT, remote=True))
    g.out[src] = (key, Edge("wait", lk.addr if lk else None, what, frame, "no holder in the report"))


# Whom a wait primitive waits for, in words (the frame it waits in -> the absent thread).
_WAITED_FOR = (
    (re.compile(r"waitForConnection"), "the thread holding a SQLite connection"),
    (re.compile(r"FutureTask|Future\.get|\.get\("), "the thread computing the awaited result"),
    (re.compile(r"CountDownLatch"), "the thread expected to count down the latch"),
    (re.compile(r"QueuedWork|SharedPreferencesImpl"), "the SharedPreferences writer thread"),
    (re.compile(r"Thread\.join|pthread_join"), "the thread being joined"),
    (re.compile(r"ReentrantLock|ReadWriteLock|AbstractQueuedSynchronizer\.acquire|Semaphore|mutex|Mutex"),
     "the holder of the lock"),
    (re.compile(r"Object\.wait|pthread_cond|ConditionObject|LockSupport|Unsafe\.park|futex|Monitor::Wait"),
     "the thread expected to wake it"),
)
QUEUED_WORK_THREAD = "queued-work-looper"   # AOSP QueuedWork's writer thread (Android 8+)


def _queued_work_wait(g: WaitForGraph, p: ProcessDump, t: ThreadDump) -> bool:
    """A thread waiting in `QueuedWork.waitToFinish` (SharedPreferences apply() flushes) waits for QueuedWork's
    writer thread when the dump shows it. True when the edge was added."""
    if t.name == QUEUED_WORK_THREAD or "QueuedWork.waitToFinish" not in t.frames_text():
        return False   # the frame texts java_names gives are raw frame lines: no need to parse them to know
    w = waits_in(t)
    if w is None or not any("QueuedWork.waitToFinish" in text for _, text in java_names(t)[:14]):
        return False
    writer = next((o for o in p.threads if o.name == QUEUED_WORK_THREAD), None)
    if writer is None:
        return False
    g.out[g.index[id(t)]] = (g.index[id(writer)], Edge("wait", frame=w[1], how="QueuedWork's writer thread"))
    return True
