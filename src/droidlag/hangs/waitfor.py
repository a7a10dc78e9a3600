"""The wait-for graph of one dump: a node per thread (or remote process where the peer thread is unknown), an edge
T_i -> T_j when T_i is blocked by T_j (monitor contention, lock owner, binder call, thread join). Every thread has at
most one outgoing edge, its innermost blocker, so chains and cycles (deadlocks) are simple walks."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from droidlag.models.dumps import BinderTransaction, Frame, ProcessDump, ThreadDump

# Native Bp<Interface> proxies -> the process that serves them (for binder calls made from native code).
NATIVE_SERVICES = (
    ("SurfaceComposer", "surfaceflinger"), ("GraphicBufferProducer", "surfaceflinger"),
    ("DisplayEventConnection", "surfaceflinger"), ("CameraService", "cameraserver"), ("Camera", "cameraserver"),
    ("MediaPlayerService", "mediaserver"), ("MediaPlayer", "mediaserver"), ("MediaRecorder", "mediaserver"),
    ("MediaExtractor", "media.extractor"), ("MediaCodec", "media.codec"), ("AudioFlinger", "audioserver"),
    ("AudioPolicyService", "audioserver"), ("AudioTrack", "audioserver"), ("ServiceManager", "servicemanager"),
    ("InputFlinger", "inputflinger"), ("Vold", "vold"), ("Keystore", "keystore"), ("Drm", "mediadrmserver"),
)
_BP = re.compile(r"Bp([A-Za-z_]+)")
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

    def to_dict(self) -> dict:
        return {"process": self.process, "pid": self.pid, "tid": self.tid, "sys_tid": self.sys_tid,
                "name": self.name, "state": self.state}

    def label(self) -> str:
        if self.remote:
            return f"{self.process or '?'}({self.pid if self.pid is not None else '?'})"
        return f"{self.process}({self.pid}):{self.name}[tid={self.tid}]"


@dataclass(frozen=True, slots=True)
class Edge:
    """Why a thread waits for another: kind is 'monitor' (held by N), 'lock_owner' (another stack shows
    `- locked` on the awaited address), 'binder' or 'join'; how says how the peer was found."""

    kind: str
    lock: str | None = None
    lock_class: str | None = None
    frame: str | None = None
    how: str = ""

    def to_dict(self) -> dict:
        return {"kind": self.kind, "lock": self.lock, "lock_class": self.lock_class, "frame": self.frame,
                "how": self.how}


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
        found: dict[frozenset, list[int]] = {}
        state: dict[int, int] = {}
        for s in list(self.out):
            if s in state:
                continue
            path, pos = [], {}
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
        return "IPCThreadState14executeCommand" in f.symbol or "BBinder8transact" in f.symbol
    return False


def is_binder_call(f: Frame) -> bool:
    """A frame of an outgoing synchronous binder call (not an idle pool thread waiting for work)."""
    if f.kind == "java":
        return f.symbol in ("android.os.BinderProxy.transact", "android.os.BinderProxy.transactNative")
    if f.kind == "native":
        s = f.symbol
        return "IPCThreadState8transact" in s or "IPCThreadState15waitForResponse" in s or "BpBinder8transact" in s
    return False


def blocker(t: ThreadDump) -> tuple[str, object] | None:
    """The innermost reason `t` waits: ('monitor', LockLine), ('join', LockLine) or ('binder', frame index)."""
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


def _proxy_method(frames: list[Frame], start: int) -> tuple[str, str] | None:
    for f in frames[start:start + 6]:
        if f.kind == "java" and "$Stub$Proxy." in f.symbol:
            iface, method = f.symbol.rsplit(".", 1)
            return iface[: -len("$Stub$Proxy")], method
    return None


def _serves(t: ThreadDump, iface: str, method: str | None) -> bool:
    frames = t.frames
    target = iface + "$Stub.onTransact"
    for k, f in enumerate(frames):
        if f.kind == "java" and f.symbol == target:
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


def snapshot(processes: list[ProcessDump]) -> list[ProcessDump]:
    """One dump per pid (the last one: the most advanced state of a hang), stack dumps only."""
    by_pid: dict[object, ProcessDump] = {}
    for p in processes:
        by_pid[p.pid if p.pid is not None else id(p)] = p
    return list(by_pid.values())


def build_wait_for_graph(processes: list[ProcessDump],
                         transactions: list[BinderTransaction] | tuple = ()) -> WaitForGraph:
    """The wait-for graph over `processes` (one dump per pid). Self-edges (old Dalvik dumps name the waiting
    thread as the holder) are dropped."""
    g = WaitForGraph()
    for p in processes:
        for t in p.threads:
            g.index[id(t)] = len(g.nodes)
            g.threads[len(g.nodes)] = (p, t)
            g.nodes.append(Node(p.cmdline, p.pid, t.tid, t.sys_tid, t.name, t.state or t.kstate))
    remote: dict[tuple, int] = {}

    def remote_node(pid: int | None, name: str) -> int:
        key = (pid, name)
        if key not in remote:
            remote[key] = len(g.nodes)
            g.nodes.append(Node(name, pid, None, None, None, None, remote=True))
        return remote[key]

    by_sys = {}
    by_pid = {}
    for p in processes:
        by_pid.setdefault(p.pid, p)
        for t in p.threads:
            if t.sys_tid is not None:
                by_sys[(p.pid, t.sys_tid)] = t
    pending = {(tr.from_pid, tr.from_tid): tr for tr in transactions}

    for p in processes:
        for t in p.threads:
            if not t.raw_frames and not t.locks:
                continue
            b = blocker(t)
            if b is None:
                continue
            src = g.index[id(t)]
            kind, info = b
            if kind in ("monitor", "join"):
                lk = info
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
                if target is None or target is t:
                    continue
                frame = t.frames[lk.frame_index].text if 0 <= lk.frame_index < len(t.frames) else None
                g.out[src] = (g.index[id(target)], Edge(kind_e, lk.addr, lk.cls, frame, how))
                continue
            # binder
            i = info
            frame_text = t.frames[i].text
            tr = pending.get((p.pid, t.sys_tid))
            if tr is not None:
                peer = by_sys.get((tr.to_pid, tr.to_tid))
                if peer is not None:
                    g.out[src] = (g.index[id(peer)], Edge("binder", frame=frame_text, how="transaction record"))
                else:
                    rp = by_pid.get(tr.to_pid)
                    g.out[src] = (remote_node(tr.to_pid, rp.cmdline if rp else ""),
                                  Edge("binder", frame=frame_text, how="transaction record"))
                continue
            pm = _proxy_method(t.frames, i)
            if pm is not None:
                iface, method = pm
                cands = [(q, o) for q in processes if q is not p for o in q.threads if _serves(o, iface, method)]
                if len(cands) == 1:
                    g.out[src] = (g.index[id(cands[0][1])],
                                  Edge("binder", frame=frame_text, how=f"serving {iface.rsplit('.', 1)[-1]}.{method}"))
                    continue
                procs = {id(q): q for q, _ in cands}
                if len(procs) == 1:
                    q = next(iter(procs.values()))
                    g.out[src] = (remote_node(q.pid, q.cmdline), Edge("binder", frame=frame_text,
                                                                     how=f"process serving {method}"))
                    continue
                g.out[src] = (remote_node(None, iface.rsplit(".", 1)[-1] + " service"),
                              Edge("binder", frame=frame_text, how="interface"))
                continue
            svc = _native_service(t.frames, i)
            if svc is not None:
                q = next((q for q in processes if _short(q.cmdline) == svc), None)
                g.out[src] = (remote_node(q.pid if q else None, svc),
                              Edge("binder", frame=frame_text, how="native proxy"))
                continue
            g.out[src] = (remote_node(None, "binder peer (unknown)"), Edge("binder", frame=frame_text, how="unknown"))
    return g
