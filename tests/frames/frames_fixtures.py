"""Constructed traces for the frames tests: a small HWUI app drawn through TraceBuilder, the way readers fill it."""
from __future__ import annotations

from droidlag.models import TraceBuilder

MS = 1_000_000
APP, UI, RT = 100, 100, 101
SF_PID = 50


def new_builder(cpus_little=(0, 1, 2, 3), cpus_big=(4, 5, 6, 7)) -> TraceBuilder:
    b = TraceBuilder("test", "<constructed>")
    b.process(APP, "com.example.app")
    b.thread(UI, APP, "com.example.app")
    b.thread(RT, APP, "RenderThread")
    b.process(SF_PID, "/system/bin/surfaceflinger")
    b.thread(SF_PID, SF_PID, "surfaceflinger")
    for c in cpus_little:
        b.cpu_max_frequency(c, 1_800_000)
    for c in cpus_big:
        b.cpu_max_frequency(c, 2_800_000)
    return b


def slice_(b: TraceBuilder, tid: int, ts: int, dur: int, name: str, pid: int = APP) -> None:
    b.atrace(ts, tid, f"B|{pid}|{name}")
    b.atrace(ts + dur, tid, f"E|{pid}")


def frame(b: TraceBuilder, ts: int, ui_ms: float, rt_ms: float, vsync_id: int | None = None,
          measure_ms: float = 0.0, dequeue_ms: float = 0.0, component: str | None = None) -> tuple[int, int]:
    """One HWUI frame: doFrame [traversal [measure [component]] draw] on UI, DrawFrame [syncFrameState,
    dequeueBuffer, queueBuffer] on RT starting when the UI part ends. Returns (frame end, RenderThread start)."""
    ui = int(ui_ms * MS)
    rt = int(rt_ms * MS)
    suffix = f" {vsync_id}" if vsync_id is not None else ""
    b.atrace(ts, UI, f"B|{APP}|Choreographer#doFrame{suffix}")
    b.atrace(ts + 10_000, UI, f"B|{APP}|traversal")
    if measure_ms:
        m = int(measure_ms * MS)
        b.atrace(ts + 20_000, UI, f"B|{APP}|measure")
        if component:
            b.atrace(ts + 30_000, UI, f"B|{APP}|{component}")
            b.atrace(ts + 30_000 + m - 20_000, UI, "E")
        b.atrace(ts + 20_000 + m, UI, "E")
    b.atrace(ts + ui - 20_000, UI, "E")
    rt_start = ts + ui - 15_000
    b.atrace(ts + ui, UI, "E")
    b.atrace(rt_start, RT, f"B|{APP}|DrawFrame{'s' if vsync_id is not None else ''}{suffix}")
    b.atrace(rt_start + 1000, RT, f"B|{APP}|syncFrameState")
    b.atrace(rt_start + 200_000, RT, "E")
    dq = int(dequeue_ms * MS)
    b.atrace(rt_start + 300_000, RT, f"B|{APP}|dequeueBuffer")
    b.atrace(rt_start + 300_000 + dq + 50_000, RT, "E")
    b.atrace(rt_start + rt - 400_000, RT, f"B|{APP}|queueBuffer")
    b.atrace(rt_start + rt - 100_000, RT, "E")
    b.atrace(rt_start + rt, RT, "E")
    return rt_start + rt, rt_start


def smooth_frames(b: TraceBuilder, t0: int, n: int, period: int = 16_666_667, vsync0: int | None = None) -> int:
    """n normal frames (4 ms UI, 3 ms RT) one per vsync; returns the time after them."""
    for i in range(n):
        frame(b, t0 + i * period, 4, 3, vsync_id=None if vsync0 is None else vsync0 + i, measure_ms=1)
    return t0 + n * period


def run_on(b: TraceBuilder, tid: int, cpu: int, a: int, end: int, out_state: str = "S") -> None:
    """tid runs on cpu during [a, end) and then leaves in out_state."""
    b.sched_switch(a, cpu, 0, "R", tid)
    b.sched_switch(end, cpu, tid, out_state, 0)


def sched_smooth(b: TraceBuilder, t0: int, n: int, period: int = 16_666_667) -> None:
    """The UI and RenderThread of smooth_frames() running on big cores (4, 5) while they work."""
    for i in range(n):
        ts = t0 + i * period
        run_on(b, UI, 4, ts, ts + 4 * MS)
        b.sched_waking(ts + 4 * MS - 20_000, RT, 5, UI)
        run_on(b, RT, 5, ts + 4 * MS - 15_000, ts + 7 * MS)
        b.sched_waking(ts + period - 10_000, UI, 4, 0)
