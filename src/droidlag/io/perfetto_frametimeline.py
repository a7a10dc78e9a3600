"""SurfaceFlinger FrameTimeline events (TracePacket field 76): the native decoder reads their bytes; this module
names jank, present, prediction and severity values with Perfetto trace processor's strings.
"""
from __future__ import annotations

from collections.abc import Iterator

# FrameTimelineEvent oneof members (field number -> (kind, scope)); 5 is FrameEnd.
_EXPECTED_DISPLAY, _ACTUAL_DISPLAY, _EXPECTED_SURFACE, _ACTUAL_SURFACE = 1, 2, 3, 4
_KIND_SCOPE = {
    _EXPECTED_DISPLAY: ("expected", "display"),
    _ACTUAL_DISPLAY: ("actual", "display"),
    _EXPECTED_SURFACE: ("expected", "surface"),
    _ACTUAL_SURFACE: ("actual", "surface"),
}

# JankType bits in the order trace processor lists them when several are set.
JANK_TYPE_NAMES: tuple[tuple[int, str], ...] = (
    (2, "SurfaceFlinger Scheduling"),
    (4, "Prediction Error"),
    (8, "Display HAL"),
    (16, "SurfaceFlinger CPU Deadline Missed"),
    (32, "SurfaceFlinger GPU Deadline Missed"),
    (64, "App Deadline Missed"),
    (4096, "App Resynced Jitter"),
    (128, "Buffer Stuffing"),
    (256, "Unknown Jank"),
    (512, "SurfaceFlinger Stuffing"),
    (1024, "Dropped Frame"),
    (2048, "Non Animating"),
    (8192, "Display not ON"),
    (16384, "ModeChange in progress"),
    (32768, "PowerModeChange in progress"),
)
PRESENT_TYPE_NAMES = ("Unspecified Present", "On-time Present", "Late Present", "Early Present", "Dropped Frame",
                      "Unknown Present")
PREDICTION_TYPE_NAMES = ("Unspecified Prediction", "Valid Prediction", "Expired Prediction", "Unknown Prediction")
JANK_SEVERITY_NAMES = ("Unknown", "None", "Partial", "Full")

_JANK_NONE = 1
_jank_cache: dict[int, str] = {}


def jank_type_name(bits: int) -> str:
    """The trace-processor name of a JankType bitmask: "None", "Unspecified", or reasons joined by ", "."""
    name = _jank_cache.get(bits)
    if name is None:
        if bits == 0:
            name = "Unspecified"
        elif bits == _JANK_NONE:
            name = "None"
        else:
            parts = [label for bit, label in JANK_TYPE_NAMES if bits & bit]
            known = sum(bit for bit, _ in JANK_TYPE_NAMES) | _JANK_NONE
            if bits & ~known:
                parts.append(f"Unknown Jank Bits 0x{bits & ~known:x}")
            name = ", ".join(parts)
        _jank_cache[bits] = name
    return name


def _enum_name(names: tuple[str, ...], value: int | None) -> str | None:
    if value is None:
        return None
    return names[value] if 0 <= value < len(names) else names[0]


def frame_timeline_rows(cols: dict[str, list]) -> Iterator[tuple]:
    """The decoder's FrameTimeline start columns (member 1-4, raw enum values) as the positional arguments of
    TraceBuilder.frame_timeline_start, with trace processor's names."""
    for (ts, cookie, member, pid, token, dft, layer, bits, present, on_time, gpu, prediction,
         severity) in zip(*(cols[k] for k in ("ts", "cookie", "member", "pid", "token", "display_frame_token",
                                               "layer_name", "jank_type", "present_type", "on_time_finish",
                                               "gpu_composition", "prediction_type", "jank_severity"))):
        kind, scope = _KIND_SCOPE[member]
        jank_type = present_name = prediction_name = severity_name = None
        if kind == "actual":
            jank_type = jank_type_name(bits)
            present_name = _enum_name(PRESENT_TYPE_NAMES, present)
            prediction_name = _enum_name(PREDICTION_TYPE_NAMES, prediction)
            # Older traces lack the severity field: trace processor calls JANK_NONE frames "None", others "Unknown".
            severity_name = _enum_name(JANK_SEVERITY_NAMES, severity) if severity is not None else (
                "None" if bits == _JANK_NONE else "Unknown")
        yield (ts, cookie, kind, scope, pid, token, dft, layer, jank_type, present_name, on_time, gpu,
               prediction_name, severity_name)
