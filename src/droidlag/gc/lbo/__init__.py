"""The lower-bound-overhead (LBO) method of Cai et al. (ISPASS 2022), as Sareen et al. (ISMM 2024) apply it: distilled
costs, per-heap baselines, LBO with Fieller confidence intervals, geometric means (`analysis`); the published
figures and trends to hold results against (`papers`); a JVM harness that produces results here (`harness`)."""
from droidlag.gc.lbo.analysis import LboCell, LboConfig, LboTable, fieller_ratio_ci, geomean, heap_factors, lbo_tables

__all__ = ["LboCell", "LboConfig", "LboTable", "fieller_ratio_ci", "geomean", "heap_factors", "lbo_tables"]
