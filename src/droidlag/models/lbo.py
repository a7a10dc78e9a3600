"""The format-free view of LBO (lower-bound overhead) results: one record per benchmark invocation, with each cost
metric's total and the part attributable to the garbage collector (Cai et al., ISPASS 2022)."""
from __future__ import annotations

from dataclasses import dataclass, field

# Metric names used across droidlag, with their units: wall clock and task clock in nanoseconds, counters as counts.
METRICS = ("wall", "task_clock", "cycles", "instructions")
METRIC_UNITS = {"wall": "ns", "task_clock": "ns", "cycles": "count", "instructions": "count"}


@dataclass(frozen=True)
class Cost:
    """One metric of one invocation: the total and what can be charged to the collector (pauses for wall clock,
    GC threads' CPU for task clock and counters). Units as in METRIC_UNITS."""

    total: float
    gc: float

    @property
    def distilled(self) -> float:
        """Total minus attributable GC cost: what the run would cost with an ideal (free) collector, at best."""
        return self.total - self.gc


@dataclass(frozen=True)
class Invocation:
    """One invocation (one JVM process, timed iteration after warm-up) of a benchmark with a collector at a heap
    size. `heap_factor` is the multiple of the benchmark's minimum heap; `heap_mb` the memory actually available
    (None where the source does not say). An out-of-memory invocation has `oom=True`, one that did not finish in the
    harness's time limit `timeout=True` (a collector thrashing at a tiny heap); neither has costs."""

    benchmark: str
    collector: str
    heap_factor: float | None
    invocation: int
    costs: dict[str, Cost] = field(default_factory=dict)
    heap_mb: float | None = None
    oom: bool = False
    pauses: int | None = None
    source: str = ""
    timeout: bool = False

    @property
    def failed(self) -> bool:
        """No usable costs: out of memory or out of time."""
        return self.oom or self.timeout

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = {"benchmark": self.benchmark, "collector": self.collector, "heap_factor": self.heap_factor,
                   "heap_mb": self.heap_mb, "invocation": self.invocation,
                   "status": "oom" if self.oom else "timeout" if self.timeout else "ok", "pauses": self.pauses}
        for name, c in self.costs.items():
            d[name] = c.total
            d[f"{name}.gc"] = c.gc
        return d
