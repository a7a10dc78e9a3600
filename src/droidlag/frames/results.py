"""What the frames analysis finds, as typed records: each slow frame's causes with their evidence, the trace's
summary. Times are integer (or, for means and percentiles, float) nanoseconds; shares are fractions, unrounded.
Milliseconds and rounding are the presentation's (`droidlag.report.frames_json` writes findings.json)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class BlockRequest:
    """One block request named as evidence: in flight while a path thread was in D state, or issued by one."""

    ts: int
    dur_ns: int | None          # None: its completion is not in the trace
    direction: str | None
    bytes: int
    tid: int | None
    comm: str | None
    overlap_ns: int             # its overlap with the path's D-state time
    why: str                    # in_flight_during_d | issued_by_path_thread


@dataclass
class BlockEvidence:
    """Block requests behind a frame's D-state time (block_io.py)."""

    requests: int
    bytes: int
    by_direction: dict[str, dict[str, int]]     # direction -> {requests, bytes}
    d_state_ns: int
    overlap_ns: int
    overlap_share: float                        # of the critical path
    top_requests: list[BlockRequest]
    normal: BlockBaseline | None = None         # the app's normal frames (set on the io cause only)


@dataclass
class BlockBaseline:
    """The block measure averaged over frames (sampled normal frames, or the slow ones)."""

    frames: int
    frames_with_requests: int
    mean_requests: float
    mean_bytes: float
    mean_overlap_ns: float
    mean_overlap_share: float


@dataclass
class PlacementCpu:
    """Time a frame's path ran badly placed on one CPU (placement.py)."""

    ns: int
    cpu_class: str | None
    mean_freq_pct: float | None
    idle_faster_cpus: list[int]


@dataclass
class SfMeasure:
    """SurfaceFlinger's main thread over one frame's composition window (compositor.py)."""

    share: float                        # window / (app path + window)
    window_ns: int
    states: dict[str, float] | None     # SF main thread's state shares of the window; None without sched
    cpu_ns: dict[int, int]


@dataclass
class SfBaseline:
    """SurfaceFlinger measures averaged over (sampled) normal frames with a composition window."""

    frames: int
    share: float
    window_ns: float
    states: dict[str, float] | None = None


@dataclass
class CompositorEvidence:
    """Why SurfaceFlinger was the cause: its composition window, states, CPUs, threads and slices. The late signal
    is FrameTimeline's jank types (compositor_late), or, without FrameTimeline, a composition longer than a vsync
    period (slow_composition: its duration and the period, ns)."""

    compositor_late: str | None
    slow_composition: tuple[int, int] | None
    window_source: str
    window_ns: int
    window_start_ns: int
    thread: str
    states: dict[str, float] | None
    cpu_ns: dict[str, int]              # "cpuN (class)" -> ns running
    threads_ns: dict[str, int]          # "name (tid)" -> ns on SF's critical path
    slices_ns: dict[str, int]           # SF main-thread slice name -> ns in the window
    critical_call_path: list[str]
    display_frame: dict[str, Any] | None = None   # token, jank_type, present_type (FrameTimeline)
    normal: SfBaseline | None = None
    app_path_ns: int | None = None
    verdict_note: str | None = None


@dataclass
class Components:
    """The slices that took a frame's time: each frame thread's critical call path and the slices with the most
    self time."""

    critical_call_path: dict[str, list[str]]    # main / render_thread -> slice names, outermost first
    components_ns: dict[str, int]


@dataclass
class CauseEvidence:
    """The evidence of one cause of one frame. Every factor cause has the path figures (path_ns, ns,
    cost_over_budget_ns, stands_out, times_normal) and the path's threads; the rest is the cause's own: binder
    servers, I/O functions and block requests, CPU placement, the app's components, SurfaceFlinger."""

    label: str | None
    path_ns: int | None = None
    ns: float | None = None                     # the factor's time on the critical path
    cost_over_budget_ns: float | None = None    # of it, the part over the frame's budget
    stands_out: bool | None = None
    times_normal: float | None = None           # share / normal share
    servers_ns: dict[str, int] | None = None    # binder: server thread -> ns
    blocked_functions_ns: dict[str, int] | None = None   # io: kernel function blocked in -> ns
    io_wait_intervals: int | None = None
    block: BlockEvidence | None = None
    placement: dict[int, PlacementCpu] | None = None
    threads_ns: dict[str, int] | None = None    # "name (tid)" -> ns on the critical path
    critical_call_path: dict[str, list[str]] | None = None
    components: Components | None = None        # app_work: the slices that took the time
    compositor: CompositorEvidence | None = None   # surfaceflinger
    stage: str | None = None                    # gfxinfo: the stage that took the most of the frame
    stage_ns: int | None = None
    frame_ns: int | None = None
    note: str | None = None


@dataclass
class FrameCause:
    """One cause of one frame, ranked (1 = leading). share: of the critical path (None without sched data);
    normal_share: the same share over the app's normal frames."""

    frame_id: int
    rank: int
    name: str
    share: float | None
    normal_share: float | None
    evidence: CauseEvidence


@dataclass
class CauseRank:
    """A cause over all SR/FF frames of a trace: in how many it stood, how many it led, what it cost."""

    name: str
    frames: int
    leading: int
    frames_pct: float | None
    cost_over_budget_ns: float | None
    mean_share: float | None
    mean_normal_share: float | None


@dataclass
class VsyncVerdicts:
    """Naive verdicts against the panel's period instead of 16.67 ms."""

    vsync_period_ns: int
    sr: int
    ff: int
    sr_pct: float | None


@dataclass
class Intervals:
    """Median gaps between consecutive SR/FF frames (start to start), and from each FF to the SR before it."""

    median_between_sr_ff_ns: float | None
    median_ff_to_preceding_sr_ns: float | None
    verdict_column: str


@dataclass
class FramesSummary:
    """Counts, rates (percent), frame-time percentiles (ns), causes ranked, intervals; `sections` holds the
    analysis' further sections in their findings.json order (block_io, compositor, refresh_rates, frame_pacing,
    paper_rollups, apps, gfxinfo_summaries, ...; docs/findings-schema.md)."""

    frames: int
    sr: int | None
    ff: int | None
    sr_pct: float | None
    ff_pct: float | None
    sr_naive: int | None        # None only for a gfxinfo summary without a HISTOGRAM (no per-frame data)
    ff_naive: int | None
    sr_naive_pct: float | None
    ff_naive_pct: float | None
    not_possible: int
    buffer_signal: str
    naive_vsync_period: VsyncVerdicts | None
    frame_time_ns: dict[str, float]             # p50, p90, p95, p99, max
    causes: list[CauseRank]
    intervals: Intervals | None
    not_possible_reason: str | None = None
    frametimeline_agreement: dict[str, Any] | None = None
    sections: dict[str, Any] = field(default_factory=dict)
    incomplete_frames: int = 0
    no_frames_reason: str | None = None
    # Choreographer callbacks that drew nothing (not frames: docs/frames.md), and how many for each reason
    skipped_callbacks: int = 0
    skipped_callbacks_by_reason: dict[str, int] = field(default_factory=dict)


@dataclass
class RefreshStretch:
    """One stretch of the trace at one refresh rate, with its complete frames and their SR count against its own
    period."""

    hz: float
    period_ns: int
    start_ns: int
    end_ns: int
    source: str | None
    frames: int
    sr_vsync: int


@dataclass
class ComponentTimes:
    """Slice name -> time (ns) summed over the slow frames whose cause is the app's own work, most first."""

    ns: dict[str, float]


@dataclass
class CompositorSummary:
    """SurfaceFlinger over the trace: its main thread, the frames with a composition window and their sources,
    how many were late, the frames given the `surfaceflinger` cause and their mean shares, normal frames per app."""

    sf_main_tid: int | None
    frames_with_window: int
    window_sources: list[str]
    late_signal_frames: int
    late_frametimeline_frames: int
    cause_sr_ff_frames: int
    cause_app_on_time_frames: int
    mean_share_sr_ff: float | None
    mean_share_app_on_time: float | None
    normal_by_pid: dict[str, SfBaseline] | None


@dataclass
class ProducerPacing:
    """The pacing of one producer thread of an app that draws without the Choreographer (pacing.py): its buffers,
    target interval, hitches over each factor of the target (count and percent of intervals), stutter runs,
    interval percentiles (ns), pauses."""

    pid: int
    process: str | None
    renderer: str | None
    producer_tid: int
    producer: str | None
    buffers: int
    intervals: int
    target_ns: int
    target_source: str
    over: dict[float, int]          # factor of the target -> intervals longer
    over_pct: dict[float, float]    # factor -> percent of the intervals
    stutter_runs: int
    longest_stutter_run: int
    interval_ns: dict[str, float]   # p50, p90, p99, max
    pauses: int
