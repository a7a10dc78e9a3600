"""The Spark engine's bucket stage without Spark: band-key rows split into partitions that each hold whole (band, key)
buckets, as the shuffle leaves them, give back exactly the embedded path's candidate pairs (lsh_pairs), less the pairs
of two already-clustered signatures."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from droidlag.fleet.cluster import BUCKET_REACH, FLEET_BANDS, band_keys, lsh_pairs, minhash, unique_pairs
from droidlag.fleet.spark import _BAND_KEY_SCHEMA, _bucket_batches
from droidlag.hangs.features import Features


def _features(rng: np.random.Generator) -> list[Features]:
    out = []
    for i in range(400):
        # 100 copies of one stack (a bucket wider than BUCKET_REACH), then variants of a few stacks.
        base = 0 if i < 100 else int(rng.integers(1, 6))
        terms = {f"j:frame{base}.{k}": 0.5 / (k + 1) for k in range(12)}
        if i >= 100 and rng.random() < 0.7:
            terms.pop(f"j:frame{base}.{int(rng.integers(6, 12))}")
        terms[f"p:app{0 if i < 100 else int(rng.integers(0, 3))}"] = 1.0
        out.append(Features(frozenset({f"g{base}", "main"}), terms, float(np.sqrt(sum(v * v for v in terms.values())))))
    return out


def test_partitioned_buckets_give_the_embedded_candidates():
    rng = np.random.default_rng(7)
    feats = _features(rng)
    n = len(feats)
    sigs = minhash(feats, 128, 0)
    clustered = rng.random(n) < 0.3
    keys = band_keys(sigs, FLEET_BANDS).view(np.int64)
    band = np.repeat(np.arange(FLEET_BANDS, dtype=np.int32), n)
    key = keys.ravel()
    ids = np.tile(np.arange(n, dtype=np.int32), FLEET_BANDS)
    # Any partitioning by (band, key) and any row order inside a partition, in several Arrow batches.
    part = (band.astype(np.int64) * 1_000_003 + key) % 3
    got = []
    for p in range(3):
        sel = rng.permutation(np.nonzero(part == p)[0])
        batches = [pa.RecordBatch.from_arrays([pa.array(band[c]), pa.array(key[c]), pa.array(ids[c]),
                                               pa.array(clustered[ids[c]])], schema=_BAND_KEY_SCHEMA)
                   for c in np.array_split(sel, 4)]
        for b in _bucket_batches(iter(batches)):
            got.append(np.stack([b.column("x").to_numpy(), b.column("y").to_numpy()], axis=1).astype(np.int64))
    got_pairs = unique_pairs(np.concatenate(got))
    want = lsh_pairs(sigs, FLEET_BANDS)
    want = want[~(clustered[want[:, 0]] & clustered[want[:, 1]])]
    assert len(want) > 0 and np.array_equal(got_pairs, want)
    # The 100 identical stacks share every bucket: each is paired with the next BUCKET_REACH only, never all pairs.
    first = got_pairs[(got_pairs[:, 0] < 100) & (got_pairs[:, 1] < 100)]
    assert (first[:, 1] - first[:, 0]).max() == BUCKET_REACH
