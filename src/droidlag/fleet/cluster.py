"""Root-cause clusters over a whole fleet, incremental and at scale. The clustering unit is the distinct feature
signature (a million events of a fleet share far fewer signatures). Candidates come from MinHash LSH bands bucketed
with numpy (never all pairs); every candidate is verified with the one exact similarity S of droidlag.hangs; pairs
with S > threshold are joined (connected components).

Incremental and stable: signatures that already have a cluster id keep it, and pairs between two of them are not
looked at again. A new signature joins the existing cluster it is similar enough to (the lowest id when it touches
several: clusters are never merged after the fact, so ids stay stable across runs). Components of new signatures
only get fresh ids after the highest id in use, the component with more events first (ties: lowest signature)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from droidlag.hangs.cluster import UnionFind
from droidlag.hangs.config import HangsConfig
from droidlag.hangs.features import Features
from droidlag.hangs.similarity import similarity

_PRIME = np.uint64((1 << 61) - 1)
# Copies of a term of weight 1 among the weighted tokens.
TERM_COPIES = 8
# Bands of the 128-value MinHash: 8 bands of 16 rows make a pair a candidate with probability 1 - (1 - J^16)^8:
# 0.99 at J = 0.95, 0.80 at J = 0.9, 0.14 at J = 0.78 (the same stack in another app).
FLEET_BANDS = 8
# Within one LSH bucket, each member is paired with the next this many members (all pairs in buckets this small).
BUCKET_REACH = 64


@dataclass
class ClusterRun:
    """What one clustering pass did: signatures seen and new, candidate pairs, exact comparisons, clusters added."""

    signatures: int = 0
    new_signatures: int = 0
    candidates: int = 0
    compared: int = 0
    new_clusters: int = 0


def _hash64(token: str) -> int:
    import hashlib
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")


def weighted_tokens(f: Features, cache: dict[str, int] | None = None) -> tuple[list[int], list[int]]:
    """The tokens MinHash summarizes, as (64-bit hash, copies) pairs: each generic token once, and each term
    repeated in proportion to its weight (round(weight * TERM_COPIES), at least once; copy i of a term hashes to
    h + i * golden). Their Jaccard index then follows the weighted overlap that S measures: the same stack in
    another app (a process term of weight 1 differs) falls well below the near duplicates (a deep frame of
    weight 0.03 differs), so the bands can tell them apart."""
    cache = {} if cache is None else cache
    hashes, copies = [], []
    for t in f.generic:
        h = cache.get(t)
        if h is None:
            h = cache[t] = _hash64("g\0" + t)
        hashes.append(h)
        copies.append(1)
    for k, v in f.terms.items():
        h = cache.get(k)
        if h is None:
            h = cache[k] = _hash64("t\0" + k)
        hashes.append(h)
        copies.append(max(1, int(round(abs(v) * TERM_COPIES))))
    return hashes, copies


def weighted_token_strings(f: Features) -> list[str]:
    """The same weighted tokens as strings (copy i of term k is "k#i"), for engines that hash on their own."""
    out = ["g\0" + t for t in sorted(f.generic)]
    for k, v in sorted(f.terms.items()):
        out.extend(f"t\0{k}#{i}" for i in range(max(1, int(round(abs(v) * TERM_COPIES)))))
    return out


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MINHASH_ROWS = 512   # signatures hashed per numpy batch (bounds memory: rows x tokens x num_perm)


def minhash(feats: list[Features], num_perm: int, seed: int) -> np.ndarray:
    """(n, num_perm) uint64 MinHash signatures of the weighted tokens: min over tokens of (a*x + b) mod 2^64, a and
    b drawn from seed; computed a batch of signatures at a time."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, int(_PRIME), size=num_perm, dtype=np.uint64) | np.uint64(1)
    b = rng.integers(0, int(_PRIME), size=num_perm, dtype=np.uint64)
    out = np.empty((len(feats), num_perm), dtype=np.uint64)
    cache: dict[str, int] = {}
    for start in range(0, len(feats), MINHASH_ROWS):
        hashes: list[int] = []
        copies: list[int] = []
        lengths = []
        for f in feats[start:start + MINHASH_ROWS]:
            h, c = weighted_tokens(f, cache)
            if not h:
                h, c = [0], [1]
            hashes.extend(h)
            copies.extend(c)
            lengths.append(sum(c))
        hs = np.asarray(hashes, dtype=np.uint64)
        cs = np.asarray(copies, dtype=np.int64)
        base = np.repeat(hs, cs)
        # copy index within each term: 0..c-1
        idx = np.arange(len(base)) - np.repeat(np.cumsum(cs) - cs, cs)
        x = base + idx.astype(np.uint64) * _GOLDEN
        v = a[None, :] * x[:, None] + b[None, :]
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        out[start:start + len(lengths)] = np.minimum.reduceat(v, offsets, axis=0)
    return out


def band_keys(sigs: np.ndarray, bands: int) -> np.ndarray:
    """(bands, n) uint64: one key per row and band of the MinHash matrix (a rare key collision only adds a
    candidate: verification is exact)."""
    rows = sigs.shape[1] // bands
    mix = np.arange(1, rows + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    out = np.empty((bands, sigs.shape[0]), dtype=np.uint64)
    for bnd in range(bands):
        chunk = sigs[:, bnd * rows:(bnd + 1) * rows]
        out[bnd] = np.bitwise_xor.reduce(chunk * mix[None, :], axis=1) ^ chunk[:, 0]
    return out


def bucket_pairs(key: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Candidate pairs (m, 2) int64 from one band's keys: rows with the same key form a bucket; within a bucket
    ordered by id, each row is paired with the next BUCKET_REACH rows (smaller id first). ids: int64, ascending. The
    one bucketing routine of both engines (the embedded path per band, Spark per band within a shuffle partition)."""
    if len(ids) < 2:
        return np.empty((0, 2), dtype=np.int64)
    order = np.argsort(key, kind="stable")
    sk, si = key[order], ids[order]
    found = []
    for d in range(1, min(BUCKET_REACH, len(ids) - 1) + 1):
        same = sk[d:] == sk[:-d]
        if not same.any():
            break
        i = np.nonzero(same)[0]
        found.append(np.stack([si[i], si[i + d]], axis=1))
    return np.concatenate(found) if found else np.empty((0, 2), dtype=np.int64)


def unique_pairs(pairs: np.ndarray) -> np.ndarray:
    """The distinct rows of an (m, 2) array of non-negative int64 pairs, sorted."""
    if len(pairs) == 0:
        return np.empty((0, 2), dtype=np.int64)
    n = int(pairs.max()) + 1
    codes = np.unique(pairs[:, 0] * n + pairs[:, 1])
    return np.stack([codes // n, codes % n], axis=1)


def lsh_pairs(sigs: np.ndarray, bands: int) -> np.ndarray:
    """Candidate pairs (m, 2) int64, i < j, unique: rows sharing all of a band's values, in any band; within a
    bucket (ordered by row index), each row with the next BUCKET_REACH rows."""
    n = sigs.shape[0]
    if n < 2:
        return np.empty((0, 2), dtype=np.int64)
    ids = np.arange(n, dtype=np.int64)
    found = [bucket_pairs(keys, ids) for keys in band_keys(sigs, bands)]
    return unique_pairs(np.concatenate(found))


class FeatureMatrix:
    """The signatures' features as sparse rows (scipy CSR): term weights, term presence, generic presence, with
    their sizes and norms, so S of many pairs is computed at once."""

    def __init__(self, feats: list[Features]):
        from scipy.sparse import csr_matrix
        vocab: dict[str, int] = {}
        gvocab: dict[str, int] = {}
        rows_t, cols_t, vals_t, rows_g, cols_g = [], [], [], [], []
        for i, f in enumerate(feats):
            for k, v in f.terms.items():
                rows_t.append(i)
                cols_t.append(vocab.setdefault(k, len(vocab)))
                vals_t.append(v)
            for t in f.generic:
                rows_g.append(i)
                cols_g.append(gvocab.setdefault(t, len(gvocab)))
        n = len(feats)
        self.w = csr_matrix((vals_t, (rows_t, cols_t)), shape=(n, max(1, len(vocab))), dtype=np.float64)
        self.b = self.w.copy()
        self.b.data[:] = 1.0
        self.g = csr_matrix((np.ones(len(rows_g)), (rows_g, cols_g)), shape=(n, max(1, len(gvocab))))
        self.n_terms = np.diff(self.w.indptr).astype(np.float64)
        self.n_generic = np.diff(self.g.indptr).astype(np.float64)
        self.norm = np.array([f.norm for f in feats], dtype=np.float64)

    def similarities(self, x: np.ndarray, y: np.ndarray, weighting: str) -> np.ndarray:
        """S of each pair (x[i], y[i]), as droidlag.hangs.similarity computes it (up to float rounding)."""
        def rowdot(m):
            return np.asarray(m[x].multiply(m[y]).sum(axis=1)).ravel()
        inter = rowdot(self.g)
        wp = self.n_generic[x] + self.n_generic[y] - inter
        sp = np.where(wp > 0, inter / np.where(wp > 0, wp, 1), 1.0)
        nx, ny = self.norm[x], self.norm[y]
        both = nx * ny
        sc = np.where(both > 0, rowdot(self.w) / np.where(both > 0, both, 1), np.where(nx == ny, 1.0, 0.0))
        if weighting == "equal":
            return 0.5 * (sp + sc)
        wc = self.n_terms[x] + self.n_terms[y] - rowdot(self.b)
        total = wp + wc
        return np.where(total > 0, (wp * sp + wc * sc) / np.where(total > 0, total, 1), 1.0)


# Pairs verified per sparse batch (bounds the memory of the row products), and the band around the threshold
# inside which the scalar S decides (float sums in another order may differ in the last bits).
VERIFY_BATCH = 100_000
EDGE_EPS = 1e-9


def accepted(feats: list[Features], pairs: np.ndarray, threshold: float, weighting: str,
             mat: FeatureMatrix | None = None) -> np.ndarray:
    """Boolean mask of the pairs whose exact S > threshold: S in sparse batches, and the scalar S of droidlag.hangs
    for pairs within EDGE_EPS of the threshold."""
    mat = mat or FeatureMatrix(feats)
    out = np.zeros(len(pairs), dtype=bool)
    for start in range(0, len(pairs), VERIFY_BATCH):
        chunk = pairs[start:start + VERIFY_BATCH]
        s = mat.similarities(chunk[:, 0], chunk[:, 1], weighting)
        near = np.abs(s - threshold) <= EDGE_EPS
        ok = (s > threshold) & ~near
        for k in np.nonzero(near)[0].tolist():
            x, y = chunk[k]
            ok[k] = similarity(feats[int(x)], feats[int(y)], weighting) > threshold
        out[start:start + len(chunk)] = ok
    return out


def verified_edges(feats: list[Features], pairs: np.ndarray, old: list[int | None], threshold: float,
                   weighting: str, uf: UnionFind, run: ClusterRun) -> None:
    """Join the candidate pairs whose exact S > threshold (see `accepted`); pairs of two already-clustered
    signatures are skipped."""
    if len(pairs) == 0:
        return
    is_old = np.array([o is not None for o in old])
    pairs = pairs[~(is_old[pairs[:, 0]] & is_old[pairs[:, 1]])]
    run.compared += len(pairs)
    for x, y in pairs[accepted(feats, pairs, threshold, weighting)].tolist():
        uf.union(x, y)


def assign_ids(keys: list[str], weights: list[int], old: list[int | None], uf: UnionFind) -> list[int]:
    """Cluster id of each signature (see the module text for the rules)."""
    comps: dict[int, list[int]] = {}
    for i in range(len(keys)):
        comps.setdefault(uf.find(i), []).append(i)
    labels: list[int | None] = list(old)
    fresh = []
    for members in comps.values():
        olds = [o for o in (old[i] for i in members) if o is not None]
        if olds:
            for i in members:
                if labels[i] is None:
                    labels[i] = min(olds)
        else:
            fresh.append(members)
    nxt = max((x for x in old if x is not None), default=-1) + 1
    fresh.sort(key=lambda m: (-sum(weights[i] for i in m), min(keys[i] for i in m)))
    for members in fresh:
        for i in members:
            labels[i] = nxt
        nxt += 1
    return [int(x) for x in labels]   # type: ignore[arg-type]


def cluster_signatures(keys: list[str], feats: list[Features], weights: list[int], old: list[int | None],
                       config: HangsConfig, edges: np.ndarray | None = None) -> tuple[list[int], ClusterRun]:
    """Cluster ids of every signature. keys: the signature keys; weights: events per signature; old: the id each
    already has (None: new). edges: pairs another engine already verified (S > threshold, not both old); by
    default candidates come from this module's MinHash LSH and are verified here."""
    run = ClusterRun(signatures=len(keys), new_signatures=sum(1 for o in old if o is None))
    uf = UnionFind(len(keys))
    if edges is not None:
        run.compared = len(edges)
        for x, y in edges.tolist():
            uf.union(x, y)
    elif run.new_signatures:
        pairs = lsh_pairs(minhash(feats, config.num_perm, config.seed), FLEET_BANDS)
        run.candidates = len(pairs)
        verified_edges(feats, pairs, old, config.threshold, config.weighting, uf, run)
    labels = assign_ids(keys, weights, old, uf)
    run.new_clusters = len(set(labels) - {o for o in old if o is not None})
    return labels, run


def exact_labels(feats: list[Features], config: HangsConfig) -> list[int]:
    """The all-pairs baseline (components of S > threshold over every pair): the F1 reference on a sample."""
    n = len(feats)
    uf = UnionFind(n)
    for x in range(n):
        for y in range(x + 1, n):
            if uf.find(x) != uf.find(y) and similarity(feats[x], feats[y], config.weighting) > config.threshold:
                uf.union(x, y)
    return [uf.find(i) for i in range(n)]


def pairwise_f1(truth: list[int], got: list[int], weights: list[int] | None = None) -> float:
    """Pairwise F1 of a clustering against a reference: over pairs of events (weights: events per item) put together
    by either. 1.0 when neither puts any pair together."""
    from collections import Counter
    w = weights or [1] * len(truth)

    def together(labels_a: list, labels_b: list | None = None) -> int:
        c: Counter = Counter()
        for i, lab in enumerate(labels_a):
            key = (lab, labels_b[i]) if labels_b is not None else lab
            c[key] += w[i]
        return sum(v * (v - 1) // 2 for v in c.values())

    tp, t, g = together(truth, got), together(truth), together(got)
    if t == 0 and g == 0:
        return 1.0
    precision = tp / g if g else 1.0
    recall = tp / t if t else 1.0
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
