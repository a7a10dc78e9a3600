"""The hang pipeline: dump units (models) -> events (blocked thread, wait-for chain, critical threads, deadlocks,
cause) -> root-cause clusters. `add_units(report, path, units, config)` per file, then `cluster_events(report,
config)`; reading the files is the findings layer's (`droidlag.findings.inputs.analyze_hangs(paths)`).

Which events a unit holds (ours): an ANR/xCrash header names the process; otherwise a traces.txt puts the ANR'ing
process first, so every pid dumped under the first process's command line is one event (repeated dumps of one pid
are one event, read from its last dump). A system_server first process with Watchdog frames, or a watchdog header,
is an SNR whose blocked thread is the one the watchdog names (else its HandlerChecker thread). `VM TRACES JUST NOW`
snapshots are not hangs: only their deadlocks become events. Every deadlock cycle not already on an event's chain
becomes an event of its own.

Several critical threads (a deadlock cycle, spec step 3): one feature vector per critical thread, built from the
wait-for chain from the blocked thread to that thread (the walk's prefix ending at it) and that thread's stack. All
vectors are clustered together; the event belongs to every cluster its vectors landed in (`clusters`, primary
first), and `cluster` stays the primary: the cluster of the first critical thread's vector (the first cycle member
the walk reaches)."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypedDict

from droidlag.errors import InputError, ReadWarning
from droidlag.hangs.causes import FRAMEWORK, CauseEvidence, HeaderNumbers, app_frame, label_cause, stalled_thread
from droidlag.hangs.cluster import cluster_features, mechanism_key
from droidlag.hangs.config import HangsConfig
from droidlag.hangs.features import MIN_FRAMES, UNKNOWN_KEY, Features, event_features
from droidlag.hangs.normalize import normalize_frame
from droidlag.hangs.waitfor import ABSENT, ChainStep, Edge, Node, WaitForGraph, build_wait_for_graph, java_names
from droidlag.models.dumps import DumpUnit, ProcessDump, ThreadDump

WATCHDOG_THREADS = ("main", "android.fg", "android.ui", "android.io", "android.display", "android.anim",
                    "android.anim.lf", "ActivityManager", "PowerManagerService", "PackageManager")
_PAREN = re.compile(r"\(([\w.]+)\)")


def critical_key(name: str | None, sys_tid: int | None, tid: int | None) -> str:
    """How evidence names a critical thread: names repeat across processes ("main"), so the tid goes with it."""
    return f"{name} (tid {sys_tid if sys_tid is not None else tid})"


class HangEvidence(TypedDict, total=False):
    """What an event's verdict rests on: the cause's evidence, the blocked and critical threads' top frames, the
    header's numbers where it gives them, kernel state, and (added by the findings layer) GC seen around the hang."""

    cause: CauseEvidence
    blocked_frames: list[str]
    app_frame: str | None
    critical_frames: dict[str, list[str]]   # critical_key(thread) -> its top frames
    reason: str
    load: tuple[float, ...]
    cpu_total_pct: float
    memory_kb: dict[str, int]
    abi: str
    d_state_threads: list[str]
    blocked_kernel_state: str
    blocked_wchan: str
    watchdog: str
    dump_time: str
    gc_blocking: dict[str, object]   # droidlag.gc.evidence.hang_gc
    gc_in_dump: dict[str, object]    # droidlag.gc.evidence.hang_gc_from_dump


class ClusterSummary(TypedDict):
    """One root-cause cluster of a report: its events (ids, each once), majority cause and the count of each cause,
    its mechanism key and signature (none for the unknown bucket), representative, nearest and furthest events."""

    id: int
    size: int
    cause: str
    causes: dict[str, int]
    unknown: bool
    key: str | None
    signature: list[str]
    representative: str
    members: list[str]
    nearest: list[str]
    furthest: list[str]
    evidence: CauseEvidence | None


@dataclass
class HangEvent:
    """One ANR or SNR: where it came from, the blocked thread, the wait-for chain to the critical thread(s), the
    deadlock cycle if any, the cause with its evidence, and (after clustering) its cluster ids.
    vectors: one feature vector per critical thread, in `critical_threads` order (one for a chain ending in a remote
    peer); features: the first of them. cluster: the primary cluster (of vectors[0]); clusters: every cluster of its
    vectors, primary first, each once; critical_clusters: the cluster of each vector."""

    id: str
    source: str
    kind: str
    process: str
    pid: int | None
    blocked_thread: Node
    critical_threads: list[Node]
    deadlock: list[Node] | None
    chain: list[ChainStep]
    cause: str
    evidence: HangEvidence
    features: Features
    cluster: int | None = None
    vectors: list[Features] = field(default_factory=list)
    clusters: list[int] = field(default_factory=list)
    critical_clusters: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.vectors:
            self.vectors = [self.features]

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id, "source": self.source, "kind": self.kind, "process": self.process, "pid": self.pid,
            "blocked_thread": self.blocked_thread.to_dict(),
            "critical_threads": [n.to_dict() for n in self.critical_threads],
            "deadlock": [n.to_dict() for n in self.deadlock] if self.deadlock else None,
            "chain": [{"thread": s["node"].to_dict(), "via": s["edge"].to_dict() if s["edge"] else None}
                      for s in self.chain],
            "cluster": self.cluster, "clusters": list(self.clusters), "cause": self.cause, "evidence": self.evidence,
        }


@dataclass
class HangReport:
    """Events, clusters (largest first), reader warnings and the files that could not be used."""

    events: list[HangEvent] = field(default_factory=list)
    clusters: list[ClusterSummary] = field(default_factory=list)
    warnings: list[ReadWarning] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    files: int = 0
    bytes_read: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The report as findings.json holds it (docs/findings-schema.md). Any: the JSON boundary, where the
        findings layer adds each event's graph and sentence to these dicts."""
        return {"events": [e.to_dict() for e in self.events], "clusters": self.clusters,
                "warnings": [w.to_dict() for w in self.warnings],
                "errors": [{"path": e.path, "line": e.line, "reason": e.reason} for e in self.errors],
                "files": self.files}


def _header_numbers(unit: DumpUnit, p: ProcessDump | None) -> HeaderNumbers:
    h = unit.header
    mem = h.memory_kb
    ratio = None
    if mem.get("MemTotal") and "MemAvailable" in mem:
        ratio = mem["MemAvailable"] / mem["MemTotal"]
    app_cpu = None
    for pct, pid, name in h.cpu_usage:   # the ANR'ing app's own row of the CPU table
        if (h.pid is not None and pid == h.pid) or (h.process and name == h.process):
            app_cpu = pct
            break
    return {"abi": h.abi or (p.abi if p else None) or None, "reason": h.reason, "cpu_total_pct": h.cpu_total_pct,
            "mem_available_ratio": ratio, "memory_kb": dict(mem) or None, "load": h.load, "app_cpu_pct": app_cpu,
            "psi_memory_full_avg10": h.psi_memory_full_avg10}


def _snapshot(processes: list[ProcessDump]) -> list[ProcessDump]:
    """One dump per (pid, command line): the last, the most advanced state of a hang; a managed (ART/Dalvik) dump
    is preferred over a later native-only (debuggerd) dump of the same process, which has no locks or Java frames."""
    by: dict[tuple[int, str] | int, ProcessDump] = {}
    for p in processes:
        key = (p.pid, p.cmdline) if p.pid is not None else id(p)
        old = by.get(key)
        if old is not None and _managed(old) and not _managed(p):
            continue
        by[key] = p
    return list(by.values())


def _managed(p: ProcessDump) -> bool:
    return any(t.tid is not None for t in p.threads)


def _is_snr(unit: DumpUnit, p: ProcessDump, g: WaitForGraph) -> bool:
    """An SNR needs evidence: a watchdog header or line, or a system_server dump where the watchdog runs its checks
    and the thread it names is blocked. An idle system_server dump (every dump has a Watchdog thread) is no SNR."""
    if p.cmdline != "system_server":
        return False
    if unit.header.watchdog:
        return True
    if not any("com.android.server.Watchdog" in raw for t in p.threads for raw in t.raw_frames[:12]):
        return False
    t = _snr_blocked(unit, p, g)
    return t is not None and (g.node_of(t) in g.out or (t.state or "").lower() in ("blocked", "monitor"))


_WATCHDOG_PART = re.compile(r"Blocked in (monitor [\w.$]+|handler on [\w. ]+?)(?: on [\w. ]+?)? \(")


def _watchdog_subject(text: str) -> str:
    """The monitors and handlers a watchdog line names, sorted, without durations (`monitor
    com.android.server.StorageManagerService`)."""
    parts = sorted(set(m.strip() for m in _WATCHDOG_PART.findall(text)))
    return "; ".join(parts)


def _header_process(unit: DumpUnit) -> ProcessDump:
    """A report with no stacks (a logcat `ANR in` block, `am_anr`, watchdog lines): the process it names, with its
    blocked thread (the one the watchdog names, else main) known by name only."""
    h = unit.header
    name: str = "main"
    tid: int | None = 1
    if h.watchdog:
        named = _PAREN.findall(h.watchdog)
        if named:
            name, tid = named[0], (1 if named[0] == "main" else None)
    proc = h.process or ("system_server" if h.watchdog else "")
    return ProcessDump(pid=h.pid, cmdline=proc, kind="header", threads=[ThreadDump(name, tid)])


def _snr_blocked(unit: DumpUnit, p: ProcessDump, g: WaitForGraph) -> ThreadDump | None:
    if unit.header.watchdog:
        for name in _PAREN.findall(unit.header.watchdog):
            t = next((t for t in p.threads if t.name == name), None)
            if t is not None:
                return t
    for t in p.threads:
        if any("Watchdog$HandlerChecker.run" in r for r in t.raw_frames[:12]) and g.node_of(t) in g.out:
            return t
    for name in WATCHDOG_THREADS:
        t = next((t for t in p.threads if t.name == name), None)
        if t is not None and g.node_of(t) in g.out:
            return t
    return p.main_thread


class _EventMaker:
    def __init__(self, unit: DumpUnit, g: WaitForGraph, config: HangsConfig):
        self.unit, self.g, self.config = unit, g, config
        self.count = 0

    def make(self, p: ProcessDump, blocked: ThreadDump, kind: str) -> HangEvent:
        g, unit = self.g, self.unit
        start = g.node_of(blocked)
        if start is None:
            raise ValueError(f"thread {blocked.name!r} is not in the wait-for graph")
        if blocked.state == ABSENT and start not in g.out:
            self._infer_stalled_edge(p, blocked, start)
        chain_idx, cycle = g.walk(start)
        steps: list[ChainStep] = [{"node": g.nodes[n], "edge": e, "dump": g.threads[n][1] if n in g.threads else None}
                                  for n, e in chain_idx]
        crit_idx = cycle if cycle else [chain_idx[-1][0]]
        critical = [g.threads[n][1] for n in crit_idx if n in g.threads]
        header = _header_numbers(unit, p)
        same_pid = [t for q in unit.processes if q.pid == p.pid for t in q.threads]
        vectors = self._vectors(kind, steps, chain_idx, crit_idx, bool(cycle), header)
        cause, cause_ev = label_cause(steps, critical, blocked, header, same_pid)
        frames_seen = len(blocked.raw_frames) + sum(len(t.raw_frames) for t in critical if t is not blocked)
        key = UNKNOWN_KEY if frames_seen < MIN_FRAMES and not cause_ev.get("key") else cause_ev.get("key")
        subject = _watchdog_subject(unit.header.watchdog) if kind == "snr" and unit.header.watchdog else None
        if subject:   # what the watchdog found blocked (the monitor or handler it names) is the SNR's mechanism
            key = "snr:" + subject
            cause_ev = {**cause_ev, "key": key}
        if not cycle:   # a deadlock's critical threads cluster by their own stacks (spec step 3)
            # mechanism_key reads the evidence as a plain dict[str, object]: a copy of the typed one
            mkey = mechanism_key(key, dict(cause_ev), blocked, waits=len(steps) > 1)
            vectors = [replace(v, key=mkey) for v in vectors]
        self.count += 1
        name = Path(unit.source.split("#")[0].split("!")[0]).name
        tid = blocked.tid if blocked.tid is not None else blocked.sys_tid
        return HangEvent(
            id=f"{name}:{p.pid}:{tid}:{self.count}", source=unit.source, kind=kind, process=p.cmdline, pid=p.pid,
            blocked_thread=g.nodes[start], critical_threads=[g.nodes[n] for n in crit_idx],
            deadlock=[g.nodes[n] for n in cycle] if cycle else None, chain=steps, cause=cause,
            evidence=_evidence(unit, p, blocked, _chain_end(steps, blocked, bool(cycle)), critical, cause_ev, header),
            features=vectors[0], vectors=vectors)

    def _infer_stalled_edge(self, p: ProcessDump, blocked: ThreadDump, start: int) -> None:
        """The paste leaves the main thread out but shows a thread stalled in storage or memory: that thread is what
        the reporter pasted as the one the ANR waited on (inferred, and said so)."""
        shown = stalled_thread([t for t in p.threads if t is not blocked])
        at = self.g.node_of(shown) if shown is not None else None
        if at is not None:
            self.g.out[start] = (at, Edge("inferred", how="the paste shows this thread stalled; the main "
                                                          "thread is not in the report"))

    def _vectors(self, kind: str, steps: list[ChainStep], chain_idx: list[tuple[int, Edge | None]],
                 crit_idx: list[int], deadlock: bool, header: HeaderNumbers) -> list[Features]:
        """One vector per critical thread: the chain from the blocked thread to it, and its stack (spec step 3)."""
        g = self.g
        pos = {n: k for k, (n, _) in enumerate(chain_idx)}
        vectors = []
        for n in crit_idx:
            prefix = steps[:pos[n] + 1]
            vectors.append(event_features(kind, [(s["node"].process, s["dump"]) for s in prefix],
                                          [g.threads[n][1]] if n in g.threads else [],
                                          [e.kind for s in prefix if (e := s["edge"])], deadlock, header,
                                          frame_decay=self.config.frame_decay))
        return vectors


def _chain_end(steps: list[ChainStep], blocked: ThreadDump, deadlock: bool) -> ThreadDump:
    """The thread an event's sentence ends at: the last thread of the chain when the report shows it (the holder the
    blocked thread waits for), else the blocked thread (its own stack; a deadlock's cycle; a peer not shown)."""
    end = steps[-1]["dump"] if len(steps) > 1 and not deadlock else None
    return end if end is not None else blocked


def _evidence(unit: DumpUnit, p: ProcessDump, blocked: ThreadDump, end: ThreadDump, critical: list[ThreadDump],
              cause_ev: CauseEvidence, header: HeaderNumbers) -> HangEvidence:
    """An event's evidence: the cause's, the top frames, and what the header and the dump say where they say it.
    app_frame: the frame in app or library code of the thread the chain ends at (`end`), which the event's sentence
    names last."""
    evidence: HangEvidence = {
        "cause": cause_ev, "blocked_frames": blocked.raw_frames[:6], "app_frame": app_frame(end),
        "critical_frames": {critical_key(t.name, t.sys_tid, t.tid): t.raw_frames[:8] for t in critical}}
    # the header's numbers, in this order, where given
    if (reason := header.get("reason")) is not None:
        evidence["reason"] = reason
    if (load := header.get("load")) is not None:
        evidence["load"] = load
    if (cpu := header.get("cpu_total_pct")) is not None:
        evidence["cpu_total_pct"] = cpu
    if (memory := header.get("memory_kb")) is not None:
        evidence["memory_kb"] = memory
    if (abi := header.get("abi")) is not None:
        evidence["abi"] = abi
    if unit.header.d_state_threads:
        evidence["d_state_threads"] = unit.header.d_state_threads
    if blocked.kstate:
        evidence["blocked_kernel_state"] = blocked.kstate
    if blocked.wchan:
        evidence["blocked_wchan"] = blocked.wchan
    if unit.header.watchdog:
        evidence["watchdog"] = unit.header.watchdog
    if p.time:   # lets the gatherer put the hang against the capture's GC log
        evidence["dump_time"] = p.time
    return evidence


def _targets(unit: DumpUnit, procs: list[ProcessDump]) -> list[ProcessDump]:
    """The processes the ANR/SNR is about: the header's pid or process, a watchdog's system_server, else the first
    process's command line (a traces.txt puts the ANR'ing process first)."""
    h = unit.header
    if h.pid is not None and any(p.pid == h.pid for p in procs):
        return [p for p in procs if p.pid == h.pid]
    if h.process and any(p.cmdline == h.process for p in procs):
        return [p for p in procs if p.cmdline == h.process]
    if h.watchdog:
        return [p for p in procs if p.cmdline == "system_server"]
    if h.pid is not None or h.process:
        return []
    first = unit.processes[0]
    return [p for p in procs if p.cmdline == first.cmdline]


def events_from_unit(unit: DumpUnit, config: HangsConfig | None = None) -> list[HangEvent]:
    """The ANR/SNR events of one dump unit (see the module text for the selection rules)."""
    procs = _event_processes(unit)
    if not procs:
        return []
    g = build_wait_for_graph(procs, unit.binder, partial=unit.pasted)
    maker = _EventMaker(unit, g, config or HangsConfig())
    events: list[HangEvent] = []
    covered: set[frozenset[int]] = set()   # deadlock cycles already on an event's chain (ids of their nodes)
    if not unit.snapshot:
        events = _target_events(unit, procs, g, maker)
        covered = {frozenset(id(n) for n in ev.deadlock) for ev in events if ev.deadlock}
    for cyc in g.cycles():
        key = frozenset(id(g.nodes[n]) for n in cyc)
        if key in covered:
            continue
        covered.add(key)
        blocked_proc, blocked = _deadlock_blocked(procs, g, cyc)
        kind = "snr" if blocked_proc.cmdline == "system_server" else "anr"
        events.append(maker.make(blocked_proc, blocked, kind))
    return events


def _event_processes(unit: DumpUnit) -> list[ProcessDump]:
    """The unit's processes as the events see them (one dump per process): a watchdog report's system_server named
    or added from the header, a stackless report's process from its header, a paste's unshown main thread added
    (absent). Empty when the unit holds nothing to make an event of."""
    procs = _snapshot(unit.processes)
    h = unit.header
    if h.watchdog and not unit.snapshot:
        # a watchdog report is about system_server: its pasted threads are system_server's, and when only other
        # processes are dumped (vold, a HAL), system_server is known by the thread the watchdog names
        for p in procs:
            if p.kind == "implicit" and not p.cmdline:
                p.cmdline = "system_server"
        if not any(p.cmdline == "system_server" for p in procs):
            procs.insert(0, _header_process(unit))
            unit.processes.insert(0, procs[0])
    if not procs:
        if unit.snapshot or h.is_empty():
            return []
        procs = [_header_process(unit)]
        unit.processes.append(procs[0])
    if unit.pasted:
        for p in procs:   # a paste of other threads: the ANR's main thread is there, only not shown
            if p.main_thread is None and p.kind != "header" and not (h.watchdog and p.cmdline == "system_server"):
                p.threads.insert(0, ThreadDump("main", 1, state=ABSENT))
    return procs


def _target_events(unit: DumpUnit, procs: list[ProcessDump], g: WaitForGraph, maker: _EventMaker) -> list[HangEvent]:
    """One event per process the ANR/SNR is about (each pid once): an SNR's blocked thread is the one the watchdog
    names, an ANR's the main thread (else the first thread)."""
    events: list[HangEvent] = []
    seen: set[int | None] = set()
    for p in _targets(unit, procs):
        if p.pid in seen:
            continue
        seen.add(p.pid)
        if _is_snr(unit, p, g):
            kind, blocked = "snr", _snr_blocked(unit, p, g)
        else:
            kind, blocked = "anr", p.main_thread
        if blocked is None:
            blocked = next((t for t in p.threads), None)
        if blocked is None or g.node_of(blocked) is None:
            continue
        events.append(maker.make(p, blocked, kind))
    return events


def _deadlock_blocked(procs: list[ProcessDump], g: WaitForGraph, cyc: list[int]) -> tuple[ProcessDump, ThreadDump]:
    """The blocked thread of a deadlock no event covers: the main thread whose walk ends in that cycle, else the
    cycle's first member."""
    cyc_set = set(cyc)
    for p in procs:
        mt = p.main_thread
        at = g.node_of(mt) if mt is not None else None
        if mt is None or at is None:
            continue
        _, c = g.walk(at)
        if c and set(c) == cyc_set:
            return p, mt
    return g.threads[cyc[0]]


def add_units(report: HangReport, path: str | Path, units: list[DumpUnit], config: HangsConfig) -> None:
    """The events of one file's dump units into `report` (with the units' warnings and size); a file read but
    holding no event is an error of the report, said, never dropped silently. Cluster with `cluster_events` once
    every file is in."""
    before = len(report.events)
    for u in units:
        report.bytes_read += u.nbytes
        report.warnings.extend(u.warnings)
        report.events.extend(events_from_unit(u, config))
    if len(report.events) == before and not any(u.snapshot for u in units):
        threads = sum(len(p.threads) for u in units for p in u.processes)
        report.errors.append(InputError(path, f"no ANR/SNR event: {threads} thread stack(s) and no ANR header, "
                                              "watchdog line or blocked thread in the file"))


def cluster_events(report: HangReport, config: HangsConfig) -> None:
    """Cluster the report's events (all their vectors together) and summarize each cluster (size and members in
    events, each once; majority cause; representative; nearest/furthest events)."""
    feats: list[Features] = []
    owners: list[int] = []
    for k, e in enumerate(report.events):
        feats.extend(e.vectors)
        owners.extend([k] * len(e.vectors))
    res = cluster_features(feats, config.threshold, config.method, config.weighting, config.k_review,
                           config.num_perm, config.bands, config.seed, owners=owners)
    at = 0
    for e in report.events:
        labs = res.labels[at:at + len(e.vectors)]
        at += len(e.vectors)
        e.critical_clusters = labs
        e.cluster = labs[0]
        e.clusters = list(dict.fromkeys(labs))
    report.clusters = []
    for c in res.clusters:
        causes = Counter(report.events[i].cause for i in c.members)
        cause = causes.most_common(1)[0][0]
        rep = report.events[c.representative]
        report.clusters.append({
            "id": c.id, "size": len(c.members), "cause": cause, "causes": dict(causes), "unknown": c.unknown,
            "key": None if c.unknown else rep.features.key, "signature": [] if c.unknown else _signature(rep),
            "representative": rep.id, "members": [report.events[i].id for i in c.members],
            "nearest": [report.events[i].id for i in c.nearest],
            "furthest": [report.events[i].id for i in c.furthest],
            "evidence": rep.evidence.get("cause"),
        })


def _signature(ev: HangEvent, n: int = 3) -> list[str]:
    """A cluster's signature: the top frames in app (or SDK) code of its representative's critical thread, else of
    its blocked thread, normalized; framework frames only when the stacks hold no app frame."""
    frames: list[str] = []
    for t in [s["dump"] for s in reversed(ev.chain) if s["dump"] is not None]:
        names = java_names(t)
        app = [text for sym, text in names if not FRAMEWORK.match(sym) and "." in sym]
        frames = [normalize_frame(x) for x in (app or [text for _, text in names] or t.raw_frames)[:n]]
        if frames:
            break
    return frames
