"""The two feature families of an event (Lin et al.): F_p, generic discretized tokens compared as sets (Jaccard), and
F_c, specific terms (Java functions, native libraries and symbols, kernel functions, lock count, chain length,
process names) compared as weighted term vectors (cosine).

Ours: a frame's term weight decays with its depth, `frame_decay ** depth` (the top of the critical stack says most
about the cause; deep framework frames are shared by every hang), and process names weigh 1 like a top frame."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from droidlag.hangs.normalize import (
    UNKNOWN_NAME,
    java_symbol,
    native_lib,
    native_symbol,
    state_word,
    unobfuscated_method,
)
from droidlag.models.dumps import Frame, ThreadDump

UNKNOWN_KEY = "unknown"
MIN_FRAMES = 2   # fewer frames on the critical and blocked threads together: too little to compare


@dataclass(frozen=True, slots=True)
class Features:
    """generic: the F_p token set; terms: the F_c term -> weight map; norm: |terms| (Euclidean).
    key (ours): the root-cause mechanism the cause rules found (`storage:sharedprefs_apply`, `binder:<service>`,
    `app:wait:<lock class>`...); vectors with the same key share a cluster. UNKNOWN_KEY: no stack to compare (an
    empty or near-empty stack), never similar to anything; such events go to the "unknown" bucket."""

    generic: frozenset[str]
    terms: dict[str, float]
    norm: float
    key: str | None = None

    def signature(self) -> tuple[object, ...]:
        """Identical signatures are identical events for clustering (collapsed before any pair is compared)."""
        return (tuple(sorted(self.generic)), tuple(sorted((k, round(v, 6)) for k, v in self.terms.items())), self.key)


def frame_term(f: Frame, process: str | None = None) -> str | None:
    """The F_c term of a frame: `j:` Java symbol, `n:` library!symbol, `k:` kernel function (all normalized).
    A Java name an obfuscator gave (`a.b.c`, see `unobfuscated_method`) means something only inside one app's build:
    its term is qualified by the process (`j:a.b.c@com.app`), and without a process it is an unknown token (None: no
    term), so two apps' `a.a.a` never count as the same code."""
    if f.kind == "java":
        sym = java_symbol(f.symbol)
        if UNKNOWN_NAME in unobfuscated_method(sym):
            return f"j:{sym}@{process}" if process else None
        return "j:" + sym
    if f.kind == "kernel":
        return "k:" + f.symbol
    sym = native_symbol(f.symbol) if f.symbol else ""
    lib = native_lib(f.lib)
    if not sym or sym == "???":
        return "n:" + lib
    return "n:" + lib + "!" + sym


def _bucket(value: float | None, edges: tuple[float, ...], name: str) -> str | None:
    if value is None:
        return None
    for e in edges:
        if value < e:
            return f"{name}<{e:g}"
    return f"{name}>={edges[-1]:g}"


def reason_kind(reason: str | None) -> str | None:
    """Discretized ANR reason: input, broadcast, service, provider, watchdog or other."""
    if not reason:
        return None
    r = reason.lower()
    for key, kind in (("input dispatching", "input"), ("broadcast", "broadcast"), ("executing service", "service"),
                      ("service", "service"), ("contentprovider", "provider"), ("provider", "provider"),
                      ("blocked in", "watchdog")):
        if key in r:
            return kind
    return "other"


def event_features(kind: str, chain_threads: Sequence[tuple[str, ThreadDump | None]], critical: Sequence[ThreadDump],
                   edge_kinds: Sequence[str], deadlock: bool, header: Mapping[str, object], frame_decay: float = 0.75,
                   max_frames: int = 40) -> Features:
    """Features of one event. chain_threads: (process name, thread or None for a remote peer) along the chain;
    critical: the critical threads (their stacks weigh fully); header: abi, reason, cpu_total_pct,
    mem_available_ratio (numbers from the dump/header when present)."""
    generic = generic_tokens(kind, chain_threads, critical, edge_kinds, deadlock, header)
    terms = specific_terms(chain_threads, critical, frame_decay, max_frames)
    norm = math.sqrt(sum(v * v for v in terms.values()))
    return Features(frozenset(generic), terms, norm)


def generic_tokens(kind: str, chain_threads: Sequence[tuple[str, ThreadDump | None]], critical: Sequence[ThreadDump],
                   edge_kinds: Sequence[str], deadlock: bool, header: Mapping[str, object]) -> set[str]:
    """F_p: the event's discretized tokens (kind, deadlock, chain length, edge kinds, thread states, ABI, reason
    kind, CPU and available-memory buckets)."""
    generic = {f"kind:{kind}", f"deadlock:{'yes' if deadlock else 'no'}", f"chain_len:{min(len(chain_threads), 4)}"}
    generic.update(f"edge:{ek}" for ek in sorted(set(edge_kinds)))
    blocked = chain_threads[0][1] if chain_threads else None
    if blocked is not None:
        generic.add(f"blocked_state:{state_word(blocked.state)}")
    for t in critical:
        generic.add(f"critical_state:{state_word(t.state)}")
        if t.kstate:
            generic.add(f"critical_kstate:{t.kstate}")
    if chain_threads and chain_threads[-1][1] is None:
        generic.add("critical:remote")
    if header.get("abi"):
        generic.add(f"abi:{header['abi']}")
    reason = header.get("reason")
    rk = reason_kind(reason if isinstance(reason, str) else None)
    if rk:
        generic.add(f"reason:{rk}")
    for name, edges, token in (("cpu_total_pct", (25.0, 50.0, 75.0, 100.0), "cpu"),
                               ("mem_available_ratio", (0.05, 0.1, 0.2, 0.4), "mem_avail")):
        value = header.get(name)
        b = _bucket(float(value) if isinstance(value, (int, float)) else None, edges, token)
        if b:
            generic.add(b)
    return generic


def specific_terms(chain_threads: Sequence[tuple[str, ThreadDump | None]], critical: Sequence[ThreadDump],
                   frame_decay: float = 0.75, max_frames: int = 40) -> dict[str, float]:
    """F_c: process names along the chain, the critical stacks' frames and native libraries (weight decaying with
    depth), the blocked thread's own top frames when it is not critical, the lock count and the chain length."""
    terms: dict[str, float] = {}

    def add(term: str | None, w: float) -> None:
        if term is not None:
            terms[term] = terms.get(term, 0.0) + w

    seen_procs: set[str] = set()
    proc_of: dict[int, str] = {}
    locks = 0
    for proc, t in chain_threads:
        if proc and proc not in seen_procs:
            seen_procs.add(proc)
            add("p:" + proc, 1.0)
        if t is not None:
            locks += sum(1 for lk in t.locks if lk.action == "locked")
            proc_of[id(t)] = proc
    for t in critical:
        for depth, f in enumerate(t.frames[:max_frames]):
            add(frame_term(f, proc_of.get(id(t))), frame_decay ** depth)
            if f.kind == "native" and f.lib:
                add("lib:" + native_lib(f.lib), 0.5 * frame_decay ** depth)
    # The blocked thread's own top frames, when it is not itself critical: what it was doing when it waited.
    blocked = chain_threads[0][1] if chain_threads else None
    if blocked is not None and all(blocked is not c for c in critical):
        for depth, f in enumerate(blocked.frames[:8]):
            term = frame_term(f, chain_threads[0][0])
            add(None if term is None else "b" + term, 0.5 * frame_decay ** depth)
    add(f"locks:{min(locks, 5)}", 0.5)
    add(f"waitlen:{min(len(chain_threads), 5)}", 0.5)
    return terms
