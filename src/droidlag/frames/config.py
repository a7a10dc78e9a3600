"""Parameters of the frames analysis, with the paper's defaults (Lin et al., TMC 2023; Android Vitals)."""
from __future__ import annotations

from dataclasses import dataclass

NS_PER_MS = 1_000_000


@dataclass(frozen=True)
class FramesConfig:
    """Thresholds in nanoseconds unless the name says otherwise.

    sr_threshold_ns: a frame longer than this is a slow-rendering (SR) frame (one 60 Hz budget, Android Vitals).
    ff_threshold_ns: a frame longer than this is a frozen frame (FF).
    vsync_period_ns: the panel's vsync period if known; None = estimate it from the trace (VSYNC counters,
        FrameTimeline), and report the period-based SR count beside the fixed 16.67 ms one.
    app: restrict to this package (process name); None = every app that renders frames.
    cause_min_share: a factor is a cause of a slow frame when it takes at least this fraction of the frame's
        critical path; causes are ranked by the time they cost the frame over its budget.
    cause_min_excess: a cause "stands out" (evidence, not a gate) when its share of the critical path exceeds its share over
        normal frames by at least this much (fraction of the path) ...
    cause_min_ratio: ... and is at least this many times the normal share.
    max_normal_frames: normal frames sampled (evenly) for the baseline shares; bounds the cost on long traces.
    wakeup_depth: how many wakeup/binder hops the cross-thread critical path follows.
    little_busy_fraction: LITTLE cores count as saturated when busy at least this fraction of the time ...
    big_idle_fraction: ... while at least one big core is idle at least this fraction.
    low_freq_fraction: critical work on a core running below this fraction of its top frequency while a faster
        core idles is a `cpu_placement` cause (as is work on a LITTLE/mid core while a big core idles).
    """

    sr_threshold_ns: int = 16_666_667
    ff_threshold_ns: int = 700 * NS_PER_MS
    vsync_period_ns: int | None = None
    app: str | None = None
    cause_min_share: float = 0.10
    cause_min_excess: float = 0.10
    cause_min_ratio: float = 2.0
    max_normal_frames: int = 300
    wakeup_depth: int = 3
    little_busy_fraction: float = 0.9
    big_idle_fraction: float = 0.5
    low_freq_fraction: float = 0.6

    def __post_init__(self) -> None:
        if self.sr_threshold_ns <= 0 or self.ff_threshold_ns <= self.sr_threshold_ns:
            raise ValueError("need 0 < sr_threshold_ns < ff_threshold_ns")
        if self.vsync_period_ns is not None and self.vsync_period_ns <= 0:
            raise ValueError("vsync_period_ns must be positive")
        if not 0 <= self.cause_min_share <= 1 or not 0 < self.low_freq_fraction <= 1:
            raise ValueError("cause_min_share in [0, 1] and low_freq_fraction in (0, 1]")
        if not 0 <= self.cause_min_excess <= 1 or self.cause_min_ratio < 1:
            raise ValueError("cause_min_excess in [0, 1] and cause_min_ratio >= 1")
