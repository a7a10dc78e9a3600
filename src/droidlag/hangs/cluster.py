"""Root-cause clusters: identical signatures collapse first; vectors with the same mechanism key (`mechanism_key`:
the cause rules' key made comparable across report formats) are joined without a similarity test, and a key with
unknown names joins the one key it agrees with; then pairs with S > threshold are joined (union-find, i.e.
connected components), never across two different keys. Candidate pairs come from MinHash LSH over each event's tokens (generic tokens and
term keys), so 10k events need no all-pairs pass; every candidate is verified with the exact S. `method="all_pairs"`
is the exact baseline. Each cluster gets its centroid, the K members nearest to and furthest from it, and a
representative (the nearest).

Several vectors per event (a deadlock cycle has one critical thread per member, spec step 3): `owners[i]` names the
event of vector i. Vectors are clustered, never events, so a deadlock's threads do not pull their clusters together;
an event then belongs to every cluster one of its vectors landed in. A cluster's members, size and order count
events, each once; its centroid weighs each event equally (an event's vectors in the cluster share weight 1), and an
event's distance to the centroid is that of its nearest vector in the cluster."""
from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from droidlag.hangs.causes import FRAMEWORK, UNNAMED_PEERS
from droidlag.hangs.features import UNKNOWN_KEY, Features
from droidlag.hangs.normalize import UNKNOWN_NAME, is_unknown_name, unobfuscated_class, unobfuscated_method
from droidlag.hangs.similarity import similarity
from droidlag.hangs.waitfor import java_names
from droidlag.models.dumps import ThreadDump

_PRIME = (1 << 61) - 1


@dataclass
class Cluster:
    """members, nearest, furthest, representative: owner (event) indices; vectors: the vector indices it holds."""

    id: int
    members: list[int]
    nearest: list[int] = field(default_factory=list)
    furthest: list[int] = field(default_factory=list)
    representative: int = -1
    vectors: list[int] = field(default_factory=list)
    unknown: bool = False   # the bucket of events with no stack to compare: not a root-cause cluster


@dataclass
class Clustering:
    """labels: the cluster id of each vector (of each event when every event has one vector)."""

    labels: list[int]
    clusters: list[Cluster]
    pairs_compared: int = 0
    unique_signatures: int = 0


class UnionFind:
    """Disjoint sets over 0..n-1; a set's root is its smallest member (so cluster ids follow first appearance)."""

    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        p = self.parent
        while p[x] != x:
            p[x] = p[p[x]]
            x = p[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


# The methods of crash handling: java.lang.Thread.UncaughtExceptionHandler.uncaughtException and what handlers name
# their own steps (`handleUncaughtException`, `onUncaughtException`, `dispatchUncaughtException`).
_HANDLER_METHOD = re.compile(r"uncaughtexception", re.I)
# A helper that only waits (a latch, a future, a task): what it waits for is named by its caller.
_WAIT_HELPER = re.compile(r"^(?:await|wait)", re.I)
_PREFS_WRITES = ("storage:sharedprefs_write", "storage:sharedprefs_commit")


def mechanism_key(key: str | None, evidence: dict[str, object], blocked: ThreadDump | None,
                  waits: bool = False) -> str | None:
    """The cluster key of an event (ours): the cause rules' mechanism key, made comparable across reports.
    - A thread hung inside an uncaught exception handler is a crash in progress: the key is the handler it runs
      (`crash:<package of the innermost crash-handling frame>`: the crash reporter or the framework's handler), for
      app and binder mechanisms (the crash reporter's wait, or ActivityManager's
      handleApplicationCrash, is how the crash handling hangs).
    - `binder:<peer>`: the slow peer service is the cause, not the method called on it.
    - A SharedPreferences write on a thread other than the blocked one is an apply() flush the blocked thread waits
      for (commit() writes on its caller's thread; others wait for a write only through QueuedWork).
    - App keys: obfuscated names are unknown (`?`); an obfuscated lock class says nothing about which lock, so the
      key falls back to the app frames that wait for it; a wait helper (`await*`, `wait*`) or an obfuscated frame
      takes its caller too, which says what is waited for.
    - A stack of bare method names (Bugsnag, Sentry: `addBreadcrumb`, `onStateChange (NativeBridge.kt:122)`) gets an
      app key with the class unknown or taken from the file (`?.addBreadcrumb`); waits: the blocked thread waits for
      another (the chain goes on). Keys with unknown names are matched to full ones in `cluster_features`."""
    if key == UNKNOWN_KEY:
        return key
    if key is None or key.startswith(("app:", "binder:")):
        handler = crash_handler(blocked)
        if handler:
            return "crash:" + handler
    if key is None:
        site = bare_site(blocked)
        return None if site is None else ("app:wait:" if waits else "app:") + site
    if key.startswith("binder:") and evidence.get("peer"):
        return _binder_key(str(evidence["peer"]), blocked)
    if key in _PREFS_WRITES and blocked is not None and evidence.get("thread") not in (None, blocked.name):
        return "storage:sharedprefs_apply"
    return _app_key(key, blocked)


def _binder_key(peer: str, blocked: ThreadDump | None) -> str | None:
    """`binder:<peer>`. A peer the report does not name (or a content provider,
    whose authority the stack does not show) is no evidence that two calls wait for the same service (the
    trial of 2026-11-28 found eight unrelated ANRs in one cluster): such a call is named by the app code that made
    it, as a wait helper is by its caller; with no app frame, by the call alone (nothing else is known); with an
    obfuscated one, not at all (similarity decides)."""
    if peer not in UNNAMED_PEERS:
        return f"binder:{peer}"
    frames = app_frames(blocked)
    if not frames:
        return f"binder:{peer}"
    site = _site(frames[0], blocked)
    return None if is_unknown_name(site.split("<-")[0]) else f"binder:{peer}<-{site}"


def _app_key(key: str, blocked: ThreadDump | None) -> str | None:
    """An app key with obfuscated names unknown; None when no name in it is known (it says nothing)."""
    if key.startswith("app:lock:"):
        cls = unobfuscated_class(key[len("app:lock:"):])
        if not is_unknown_name(cls):
            return "app:lock:" + cls
        frames = app_frames(blocked)
        out = "app:lock:" + ("<-".join(frames[:2]) if frames else cls)
    elif key.startswith("app:wait:"):
        out = "app:wait:" + _site(key[len("app:wait:"):], blocked)
    elif key.startswith("app:") and "." in key:
        out = "app:" + _site(key[len("app:"):], blocked)
    else:
        return key
    return out if _knows_a_name(out.split(":", 2)[-1]) else None


def _knows_a_name(site: str) -> bool:
    """True when a key's frames know a name past the top-level domain (`com.?.?` knows none)."""
    return any(p not in ("", UNKNOWN_NAME) for f in site.split("<-") for p in re.split(r"[.$]", f)[1:])


def crash_handler(t: ThreadDump | None) -> str | None:
    """The package of the crash-handling code a thread runs in (its innermost frame whose method handles an uncaught
    exception), or None when it handles no crash."""
    if t is None:
        return None
    for sym, _ in java_names(t):
        parts = sym.split(".")
        if len(parts) > 2 and _HANDLER_METHOD.search(parts[-1]):
            return unobfuscated_class(".".join(parts[:-1])).rsplit(".", 1)[0]
    return None


_NO_FILE = re.compile(r"^(?:Unknown Source|SourceFile|unavailable|lambda|Native [Mm]ethod|r8-map-id)", re.I)
_SOURCE_FILE = re.compile(r"^([A-Z][\w$]*)\.(?:java|kt|scala|groovy)\b")


def bare_site(t: ThreadDump | None) -> str | None:
    """For a stack whose Java frames are all bare method names (no class): its top Java frame as `Class.method`, the
    class taken from the source file name, or `?` when the frame names no file."""
    if t is None:
        return None
    java = [f for f in t.frames if f.kind == "java"]
    if not java or any("." in f.symbol for f in java):
        return None
    top = java[0]
    m = None if _NO_FILE.match(top.location or "") else _SOURCE_FILE.match(top.location or "")
    return f"{m.group(1) if m else UNKNOWN_NAME}.{top.symbol}"


# Methods every callback or task has: with no class known, such a name says nothing about the code.
_GENERIC_METHODS = frozenset({"run", "call", "invoke", "get", "accept", "apply", "execute", "handleMessage",
                              "dispatchMessage", "onReceive", "doInBackground", "onChanged", "<init>", "<clinit>"})


def key_matches(partial: str, full: str) -> bool:
    """True when a key with unknown names (`?`) agrees with another key on every name both know: same kind, same
    number of frames, each method equal or unknown, each class equal, unknown, or a shorter (simple) name that ends
    the other. A frame that knows only a generic method name (`?.run`) matches nothing."""
    kp, _, sp = partial.rpartition(":")
    kf, _, sf = full.rpartition(":")
    if kp != kf or "." not in sp:
        return False
    fp, ff = sp.split("<-"), sf.split("<-")
    if any(f.startswith(UNKNOWN_NAME + ".") and f[2:] in _GENERIC_METHODS for f in fp):
        return False
    return len(fp) == len(ff) and all(_frame_matches(a, b) for a, b in zip(fp, ff))


def _frame_matches(a: str, b: str) -> bool:
    if UNKNOWN_NAME in (a, b):   # a frame the paste cut
        return True
    ca, _, ma = a.rpartition(".")
    cb, _, mb = b.rpartition(".")
    if UNKNOWN_NAME not in (ma, mb) and ma != mb:
        return False
    pa, pb = ca.split("."), cb.split(".")
    n = min(len(pa), len(pb))
    if pa == [UNKNOWN_NAME] or pb == [UNKNOWN_NAME]:
        return True
    return all(x == y or UNKNOWN_NAME in (x, y) for x, y in zip(pa[-n:], pb[-n:]))


def app_frames(t: ThreadDump | None) -> list[str]:
    """The thread's frames in app (or SDK) code, innermost first, with obfuscated names unknown."""
    if t is None:
        return []
    return [unobfuscated_method(sym) for sym, _ in java_names(t) if "." in sym and not FRAMEWORK.match(sym)]


def _site(site: str, blocked: ThreadDump | None) -> str:
    """An app frame of a key, with its caller when it is a wait helper or obfuscated; `<-?` when the paste ends at
    that frame (the caller was cut: unknown)."""
    name = unobfuscated_method(site)
    if not (_WAIT_HELPER.match(name.rsplit(".", 1)[-1]) or is_unknown_name(name)):
        return name
    frames = app_frames(blocked)
    if name not in frames:
        return name
    k = frames.index(name)
    if k + 1 < len(frames):
        return "<-".join(frames[k:k + 2])
    names = java_names(blocked) if blocked is not None else []
    return name + "<-" + UNKNOWN_NAME if names and unobfuscated_method(names[-1][0]) == name else name


def _tokens(f: Features) -> list[str]:
    return list(f.generic) + list(f.terms)


def minhash_signatures(feats: list[Features], num_perm: int = 128, seed: int = 0) -> np.ndarray:
    """MinHash of each event's token set: an (n, num_perm) uint64 array (deterministic for a given seed)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, _PRIME, size=num_perm, dtype=np.uint64)
    b = rng.integers(0, _PRIME, size=num_perm, dtype=np.uint64)
    out = np.empty((len(feats), num_perm), dtype=np.uint64)
    cache: dict[str, int] = {}
    for i, f in enumerate(feats):
        hs = []
        for t in _tokens(f):
            h = cache.get(t)
            if h is None:
                h = zlib.crc32(t.encode()) | (zlib.adler32(t.encode()) << 32)
                cache[t] = h
            hs.append(h)
        x = np.array(hs or [0], dtype=np.uint64)
        # (a*x + b) mod 2^64, then folded: universal enough for LSH bucketing, and fully vectorized.
        v = a[:, None] * x[None, :] + b[:, None]
        out[i] = v.min(axis=1)
    return out


def _lsh_candidates(sigs: np.ndarray, bands: int) -> set[tuple[int, int]]:
    n, k = sigs.shape
    rows = k // bands
    pairs: set[tuple[int, int]] = set()
    for bnd in range(bands):
        chunk = np.ascontiguousarray(sigs[:, bnd * rows:(bnd + 1) * rows])
        keys = chunk.view(np.dtype((np.void, chunk.dtype.itemsize * rows))).ravel()
        order = np.argsort(keys, kind="stable")
        sk = keys[order]
        start = 0
        for j in range(1, n + 1):
            if j == n or sk[j] != sk[start]:
                if j - start > 1:
                    grp = order[start:j].tolist()
                    g0 = grp[0]
                    # Chain members of a bucket to its first member and to each other only once per band;
                    # verification below skips pairs already in one component.
                    for x in grp[1:]:
                        pairs.add((g0, x) if g0 < x else (x, g0))
                    if len(grp) <= 64:
                        for ii in range(1, len(grp)):
                            for jj in range(ii + 1, len(grp)):
                                x, y = grp[ii], grp[jj]
                                pairs.add((x, y) if x < y else (y, x))
                start = j
    return pairs


def cluster_features(feats: list[Features], threshold: float = 0.95, method: str = "lsh", weighting: str = "union",
                     k_review: int = 100, num_perm: int = 128, bands: int = 32, seed: int = 0,
                     owners: list[int] | None = None) -> Clustering:
    """Cluster feature vectors by S > threshold. method: 'lsh' (candidates from MinHash LSH, verified exactly) or
    'all_pairs' (every pair of distinct signatures). owners: the event of each vector (default: one vector per
    event, owners[i] = i). Labels (one per vector) are cluster ids ordered by cluster size in events (0 = largest;
    ties by the lowest vector index)."""
    n = len(feats)
    if n == 0:
        return Clustering([], [])
    if owners is None:
        owners = list(range(n))
    elif len(owners) != n:
        raise ValueError(f"owners has {len(owners)} entries for {n} vectors")
    uniq, of_event = _collapse(feats)
    uf = UnionFind(len(uniq))
    unknown, keys = _join_keys(feats, uniq, uf)
    compared = _join_similar(feats, uniq, uf, unknown, threshold, method, weighting, num_perm, bands, seed, keys)
    labels, clusters = _assemble(feats, owners, of_event, uf, unknown, k_review, weighting)
    return Clustering(labels, clusters, compared, len(uniq))


def _collapse(feats: list[Features]) -> tuple[list[int], list[int]]:
    """(the first vector of each distinct signature, the signature index of each vector)."""
    sig_index: dict[tuple[object, ...], int] = {}
    uniq: list[int] = []
    of_event: list[int] = []
    for i, f in enumerate(feats):
        s = f.signature()
        u = sig_index.get(s)
        if u is None:
            u = sig_index[s] = len(uniq)
            uniq.append(i)
        of_event.append(u)
    return uniq, of_event


def _join_keys(feats: list[Features], uniq: list[int], uf: UnionFind) -> tuple[set[int], dict[int, str]]:
    """Union the signatures with the same mechanism key (one root cause, no similarity test), then each key with
    unknown names (`?`) with the one component whose key agrees with it on every known name (`key_matches`; left
    alone when several do). Returns (the signatures of the unknown bucket, component root -> key)."""
    m = len(uniq)
    unknown = {u for u in range(m) if feats[uniq[u]].key == UNKNOWN_KEY}
    by_key: dict[str, int] = {}
    for u in range(m):
        k = feats[uniq[u]].key
        if k and k != UNKNOWN_KEY:
            if k in by_key:
                uf.union(by_key[k], u)
            else:
                by_key[k] = u
    index = _KeyIndex(by_key)
    for k, u in by_key.items():
        if UNKNOWN_NAME not in k:
            continue
        roots = {uf.find(by_key[other]) for other in index.candidates(k) if other != k and key_matches(k, other)}
        if len(roots) == 1:
            uf.union(roots.pop(), u)
    keys: dict[int, str] = {}
    for k, u in by_key.items():   # a component's key: a full one where it has one
        r = uf.find(u)
        if r not in keys or UNKNOWN_NAME in keys[r]:
            keys[r] = k
    return unknown, keys


class _KeyIndex:
    """Keys by (kind, number of frames, first frame's method), so a key with unknown names is compared with the keys
    it could match, not with all (an obfuscated fleet has thousands)."""

    def __init__(self, keys: Iterable[str]):
        self.by_method: dict[tuple[str, int, str], list[str]] = {}
        self.by_shape: dict[tuple[str, int], list[str]] = {}
        for k in keys:
            kind, n, method = _key_shape(k)
            self.by_method.setdefault((kind, n, method), []).append(k)
            self.by_shape.setdefault((kind, n), []).append(k)

    def candidates(self, key: str) -> list[str]:
        kind, n, method = _key_shape(key)
        if method == UNKNOWN_NAME:
            return self.by_shape.get((kind, n), [])
        return self.by_method.get((kind, n, method), []) + self.by_method.get((kind, n, UNKNOWN_NAME), [])


def _key_shape(key: str) -> tuple[str, int, str]:
    kind, _, site = key.rpartition(":")
    frames = site.split("<-")
    return kind, len(frames), frames[0].rpartition(".")[2]


def _assemble(feats: list[Features], owners: list[int], of_event: list[int], uf: UnionFind, unknown: set[int],
              k_review: int, weighting: str) -> tuple[list[int], list[Cluster]]:
    """Labels and clusters: ordered by size in events (ties by the lowest vector index), the unknown bucket last."""
    n = len(feats)
    groups: dict[int, list[int]] = {}
    bucket: list[int] = []
    for i in range(n):
        if of_event[i] in unknown:
            bucket.append(i)
        else:
            groups.setdefault(uf.find(of_event[i]), []).append(i)
    # Each group's vectors are in increasing index order, so g[0] is its lowest vector index.
    events_of = {r: sorted(set(owners[i] for i in g)) for r, g in groups.items()}
    ordered = sorted(groups, key=lambda r: (-len(events_of[r]), groups[r][0]))
    labels = [0] * n
    clusters: list[Cluster] = []
    for cid, r in enumerate(ordered):
        vecs = groups[r]
        for i in vecs:
            labels[i] = cid
        c = Cluster(cid, events_of[r], vectors=vecs)
        _review(c, feats, owners, k_review, weighting)
        clusters.append(c)
    if bucket:   # last, whatever its size: events with nothing to compare are no root-cause cluster
        cid = len(clusters)
        for i in bucket:
            labels[i] = cid
        members = sorted(set(owners[i] for i in bucket))
        clusters.append(Cluster(cid, members, members[:k_review], members[:k_review], members[0], bucket,
                                unknown=True))
    return labels, clusters


def _join_similar(feats: list[Features], uniq: list[int], uf: UnionFind, unknown: set[int], threshold: float,
                  method: str, weighting: str, num_perm: int, bands: int, seed: int, keys: dict[int, str]) -> int:
    """Union the pairs of distinct signatures with S > threshold (all pairs, or LSH candidates verified exactly);
    the unknown bucket takes no part, and two components with different mechanism keys are never joined (the cause
    rules told them apart). keys: component root -> key, kept up to date. Returns the number of pairs compared."""
    m = len(uniq)
    compared = 0

    def join(x: int, y: int) -> None:
        rx, ry = uf.find(x), uf.find(y)
        kx, ky = keys.get(rx), keys.get(ry)
        if rx == ry or (kx and ky and kx != ky):
            return
        uf.union(rx, ry)
        k = kx or ky
        if k:
            keys[uf.find(rx)] = k

    if method == "all_pairs":
        for x in range(m):
            if x in unknown:
                continue
            fx = feats[uniq[x]]
            for y in range(x + 1, m):
                if y in unknown:
                    continue
                compared += 1
                if similarity(fx, feats[uniq[y]], weighting) > threshold:
                    join(x, y)
        return compared
    sigs = minhash_signatures([feats[i] for i in uniq], num_perm, seed)
    for x, y in sorted(_lsh_candidates(sigs, bands)):
        if x in unknown or y in unknown or uf.find(x) == uf.find(y):
            continue
        compared += 1
        if similarity(feats[uniq[x]], feats[uniq[y]], weighting) > threshold:
            join(x, y)
    return compared


def centroid(feats: list[Features], members: list[int], weights: list[float] | None = None) -> Features:
    """The weighted mean of the members' unit term vectors and the generic tokens held by at least half of the total
    weight. weights: one per member (default 1 each; an event's several vectors in one cluster share weight 1)."""
    import math
    if weights is None:
        weights = [1.0] * len(members)
    terms: dict[str, float] = {}
    counts: dict[str, float] = {}
    for i, w in zip(members, weights):
        f = feats[i]
        inv = w / f.norm if f.norm else 0.0
        for k, v in f.terms.items():
            terms[k] = terms.get(k, 0.0) + v * inv
        for t in f.generic:
            counts[t] = counts.get(t, 0.0) + w
    n = sum(weights)
    terms = {k: v / n for k, v in terms.items()}
    gen = frozenset(t for t, c in counts.items() if 2 * c >= n - 1e-9)
    return Features(gen, terms, math.sqrt(sum(v * v for v in terms.values())))


def _review(c: Cluster, feats: list[Features], owners: list[int], k: int, weighting: str) -> None:
    if len(c.members) == 1:
        c.nearest, c.furthest, c.representative = list(c.members), list(c.members), c.members[0]
        return
    per_event: dict[int, int] = {}
    for i in c.vectors:
        per_event[owners[i]] = per_event.get(owners[i], 0) + 1
    cen = centroid(feats, c.vectors, [1.0 / per_event[owners[i]] for i in c.vectors])
    # Identical feature objects have identical scores: score each once. An event scores by its nearest vector.
    cache: dict[int, float] = {}
    best: dict[int, float] = {}
    for i in c.vectors:
        key = id(feats[i])
        s = cache.get(key)
        if s is None:
            s = cache[key] = similarity(feats[i], cen, weighting)
        o = owners[i]
        if o not in best or s > best[o]:
            best[o] = s
    scored = sorted(((s, o) for o, s in best.items()), key=lambda x: (-x[0], x[1]))
    c.nearest = [o for _, o in scored[:k]]
    c.furthest = [o for _, o in sorted(scored, key=lambda x: (x[0], x[1]))[:k]]
    c.representative = c.nearest[0]
