"""Parameters of the hang analysis, with the paper's defaults (S > 0.95, K = 100 review samples)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HangsConfig:
    """threshold: similarity above which two events share a root-cause cluster (paper: 0.95).
    weighting: 'union' (family weights = cardinality of the pair's union in each family) or 'equal'.
    k_review: nearest/furthest members kept per cluster for review (paper: K = 100).
    frame_decay: term weight multiplier per stack depth in the specific features (ours).
    method: 'lsh' (MinHash LSH candidates, exact verification) or 'all_pairs' (exact baseline).
    seed: MinHash seed (results are deterministic for a seed)."""

    threshold: float = 0.95
    weighting: str = "union"
    k_review: int = 100
    frame_decay: float = 0.75
    method: str = "lsh"
    num_perm: int = 128
    bands: int = 32
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {self.threshold}")
        if self.weighting not in ("union", "equal"):
            raise ValueError(f"weighting must be 'union' or 'equal', got {self.weighting!r}")
        if self.method not in ("lsh", "all_pairs"):
            raise ValueError(f"method must be 'lsh' or 'all_pairs', got {self.method!r}")
        if not 0.0 < self.frame_decay <= 1.0:
            raise ValueError(f"frame_decay must be in (0, 1], got {self.frame_decay}")
        if self.k_review < 1 or self.num_perm < 1 or self.bands < 1 or self.num_perm % self.bands:
            raise ValueError("k_review, num_perm, bands must be positive and bands must divide num_perm")
