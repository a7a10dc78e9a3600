"""CPU placement of critical work: time a frame's critical thread ran on a slower core (LITTLE or mid) or at a low
frequency while a faster core sat idle. The paper's big.LITTLE finding (Lin et al., TMC 2023, III: in 34% of cases
big cores idle while LITTLE cores are saturated) is about placement and frequency, not only saturation: a 20 ms
RenderThread frame on a LITTLE core at 75% of its clock with every big core idle lost time to placement.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from droidlag.frames.critical_path import CpuBusy
from droidlag.frames.results import PlacementCpu
from droidlag.models.trace import Trace


class CpuPlacement:
    """Answers, for a Running interval on a CPU, whether it ran slower than the device could have: on a core of a
    lower class than an idle one, or below `low_freq_fraction` of its top frequency while a core with a higher top
    frequency idled. Needs the cpu classes (from cpu_frequency maxima) and sched data."""

    def __init__(self, trace: Trace, busy: CpuBusy, big_idle_fraction: float, low_freq_fraction: float):
        self.busy = busy
        self.max_khz = dict(trace.cpu_max_freq_khz)
        self.cls = dict(trace.cpu_class)
        self.big = [c for c, k in self.cls.items() if k == "big"]
        self.idle_need = big_idle_fraction
        self.low = low_freq_fraction
        self._freq: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        c = trace.counters
        if c.height:
            f = c.filter((pl.col("name") == "cpufreq") & pl.col("cpu").is_not_null())
            for key, part in (f.partition_by("cpu", as_dict=True).items() if f.height else ()):
                part = part.sort("ts")
                self._freq[int(key[0])] = (part["ts"].to_numpy(), part["value"].to_numpy())

    @property
    def usable(self) -> bool:
        return bool(self.big) and len(set(self.cls.values())) >= 2

    def freq_at(self, cpu: int, t: int) -> float | None:
        got = self._freq.get(cpu)
        if got is None:
            return None
        ts, vals = got
        i = int(np.searchsorted(ts, t, side="right")) - 1
        return float(vals[i]) if i >= 0 else None

    def _idle(self, cpus: list[int], a: int, b: int) -> list[int]:
        return [c for c in cpus if 1.0 - self.busy.busy_fraction(c, a, b) >= self.idle_need]

    def check(self, cpu: int | None, a: int, b: int) -> dict[str, Any] | None:
        """Why the interval [a, b) on `cpu` was badly placed, or None when it was not (or cannot be told)."""
        if cpu is None or b <= a or not self.usable or cpu not in self.cls:
            return None
        kind = self.cls[cpu]
        if kind != "big":
            idle_big = self._idle([c for c in self.big if c != cpu], a, b)
            if idle_big:
                return {"cpu": cpu, "class": kind, "freq_pct": self._pct(cpu, a), "idle_faster": idle_big,
                        "why": f"on a {kind} core while big core(s) idled"}
        pct = self._pct(cpu, a)
        if pct is not None and pct < 100 * self.low:
            top = self.max_khz.get(cpu, 0)
            faster = [c for c, m in self.max_khz.items() if c != cpu and m >= top]
            idle = self._idle(faster, a, b)
            if idle:
                return {"cpu": cpu, "class": kind, "freq_pct": pct, "idle_faster": idle,
                        "why": f"at {pct:.0f}% of its top frequency while as fast core(s) idled"}
        return None

    def _pct(self, cpu: int, t: int) -> float | None:
        f = self.freq_at(cpu, t)
        top = self.max_khz.get(cpu)
        return round(100.0 * f / top, 1) if f is not None and top else None


def placement_evidence(hits: list[tuple[int, dict[str, Any]]]) -> dict[int, PlacementCpu]:
    """The badly placed intervals per CPU, most time first: ns, the CPU's class and mean frequency (% of its top),
    the faster cores that idled meanwhile."""
    by_cpu: dict[int, dict[str, Any]] = {}
    for dur, h in hits:
        d = by_cpu.setdefault(h["cpu"], {"ns": 0, "class": h["class"], "freq_pct": [], "idle_faster": set()})
        d["ns"] += dur
        if h["freq_pct"] is not None:
            d["freq_pct"].append(h["freq_pct"])
        d["idle_faster"].update(h["idle_faster"])
    return {c: PlacementCpu(d["ns"], d["class"], float(np.mean(d["freq_pct"])) if d["freq_pct"] else None,
                            sorted(d["idle_faster"]))
            for c, d in sorted(by_cpu.items(), key=lambda kv: -kv[1]["ns"])}
