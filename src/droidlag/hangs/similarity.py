"""The one similarity function between two events: S = weighted average of the Jaccard index of the generic token
sets (S_p) and the cosine of the specific term vectors (S_c).

Weights (ours, documented choice): `weighting="union"` weighs each family by the cardinality of the pair's union in
that family, |A_p u B_p| and |keys(a_c) u keys(b_c)|, so the family that says more about this pair counts more;
`weighting="equal"` gives both 1/2."""
from __future__ import annotations

from droidlag.hangs.features import Features


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|A n B| / (|A| + |B| - |A n B|); 1.0 for two empty sets."""
    if not a and not b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def cosine(a: dict[str, float], b: dict[str, float], na: float, nb: float) -> tuple[float, int]:
    """(a . b) / (|a| |b|) and the number of shared keys."""
    if len(a) > len(b):
        a, b = b, a
    dot = 0.0
    common = 0
    for k, v in a.items():
        w = b.get(k)
        if w is not None:
            dot += v * w
            common += 1
    if na == 0 or nb == 0:
        return (1.0 if na == nb else 0.0), common
    return dot / (na * nb), common


def similarity(a: Features, b: Features, weighting: str = "union") -> float:
    """S in [0, 1] between two events (see the module text for the weighting)."""
    sp = jaccard(a.generic, b.generic)
    sc, common = cosine(a.terms, b.terms, a.norm, b.norm)
    if weighting == "equal":
        return 0.5 * (sp + sc)
    wp = len(a.generic | b.generic)
    wc = len(a.terms) + len(b.terms) - common
    if wp + wc == 0:
        return 1.0
    return (wp * sp + wc * sc) / (wp + wc)
