"""SurfaceFlinger FrameTimeline events (TracePacket field 76) decoded straight from the protobuf wire format.

`frame_timeline_event` is a proto extension that the PyPI `perfetto` classes leave undecoded, so this module reads
its bytes by hand and names jank, present, prediction and severity values with Perfetto trace processor's strings.
"""
from __future__ import annotations

import struct

from droidlag.io.protowire import varint
from droidlag.models.trace_builder import TraceBuilder

# TracePacket field number of the FrameTimelineEvent extension.
FRAME_TIMELINE_FIELD = 76

# FrameTimelineEvent oneof members (field number -> (kind, scope)); 5 is FrameEnd.
_EXPECTED_DISPLAY, _ACTUAL_DISPLAY, _EXPECTED_SURFACE, _ACTUAL_SURFACE, _FRAME_END = 1, 2, 3, 4, 5
_KIND_SCOPE = {
    _EXPECTED_DISPLAY: ("expected", "display"),
    _ACTUAL_DISPLAY: ("actual", "display"),
    _EXPECTED_SURFACE: ("expected", "surface"),
    _ACTUAL_SURFACE: ("actual", "surface"),
}

# Field numbers inside each start message: (token, display_frame_token, pid, layer_name, present_type,
# on_time_finish, gpu_composition, jank_type, prediction_type, jank_severity_type); 0 = absent in that message.
_LAYOUT = {
    _EXPECTED_DISPLAY: (2, 0, 3, 0, 0, 0, 0, 0, 0, 0),
    _ACTUAL_DISPLAY: (2, 0, 3, 0, 4, 5, 6, 7, 8, 9),
    _EXPECTED_SURFACE: (2, 3, 4, 5, 0, 0, 0, 0, 0, 0),
    _ACTUAL_SURFACE: (2, 3, 4, 5, 6, 7, 8, 9, 10, 12),
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


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def read_fields(buf: bytes, pos: int, end: int) -> dict[int, int | bytes]:
    """The scalar fields of one message between pos and end: field number -> varint value (unsigned), bytes
    (length-delimited), or a float (fixed32). Repeated fields keep their last value, as proto2 does for scalars."""
    out: dict[int, int | bytes] = {}
    while pos < end:
        tag = buf[pos]
        if tag < 0x80:
            pos += 1
        else:
            tag, pos = varint(buf, pos)
        wire = tag & 7
        if wire == 0:
            b = buf[pos]
            if b < 0x80:
                out[tag >> 3] = b
                pos += 1
            else:
                out[tag >> 3], pos = varint(buf, pos)
        elif wire == 2:
            length, pos = varint(buf, pos)
            if pos + length > end:
                raise ValueError("length-delimited field runs past its message")
            out[tag >> 3] = buf[pos:pos + length]
            pos += length
        elif wire == 5:
            out[tag >> 3] = struct.unpack_from("<f", buf, pos)[0]
            pos += 4
        elif wire == 1:
            out[tag >> 3] = struct.unpack_from("<q", buf, pos)[0]
            pos += 8
        else:
            raise ValueError(f"unsupported wire type {wire}")
    if pos != end:
        raise ValueError("field runs past its message")
    return out


def decode_event(raw: bytes) -> tuple[int, dict[int, int | bytes]]:
    """One FrameTimelineEvent: (oneof field number 1-5, that member's fields). ValueError/IndexError if broken."""
    tag, pos = varint(raw, 0)
    if tag & 7 != 2:
        raise ValueError("FrameTimelineEvent member is not a message")
    length, pos = varint(raw, pos)
    end = pos + length
    if end > len(raw):
        raise ValueError("FrameTimelineEvent member runs past the event")
    return tag >> 3, read_fields(raw, pos, end)


class FrameTimelineDecoder:
    """Feeds FrameTimeline events to a TraceBuilder; counts what it had to skip and reports it once at the end."""

    def __init__(self, builder: TraceBuilder):
        self.builder = builder
        self.events = 0
        self.broken = 0
        self.incomplete = 0

    def feed(self, ts: int, raw: bytes) -> None:
        """One field-76 payload whose packet timestamp is ts (ns, already on the trace clock)."""
        self.events += 1
        try:
            member, f = decode_event(raw)
        except (ValueError, IndexError, struct.error):
            self.broken += 1
            return
        if member == _FRAME_END:
            cookie = f.get(1)
            if cookie is None:
                self.incomplete += 1
            else:
                self.builder.frame_timeline_end(ts, _signed64(cookie))
            return
        layout = _LAYOUT.get(member)
        if layout is None:
            self.broken += 1
            return
        self._start(ts, member, layout, f)

    def _start(self, ts: int, member: int, layout: tuple[int, ...], f: dict) -> None:
        token_f, dft_f, pid_f, layer_f, present_f, ontime_f, gpu_f, jank_f, pred_f, sev_f = layout
        cookie, token, pid = f.get(1), f.get(token_f), f.get(pid_f)
        if cookie is None or token is None or pid is None:
            # trace processor drops these too (frame_timeline_event_parser_errors)
            self.incomplete += 1
            return
        kind, scope = _KIND_SCOPE[member]
        dft = f.get(dft_f) if dft_f else None
        layer = f.get(layer_f) if layer_f else None
        jank_type = present = prediction = severity = None
        on_time = gpu = None
        if kind == "actual":
            bits = f.get(jank_f, 0)
            jank_type = jank_type_name(bits)
            present = _enum_name(PRESENT_TYPE_NAMES, f.get(present_f, 0))
            prediction = _enum_name(PREDICTION_TYPE_NAMES, f.get(pred_f, 0))
            sev = f.get(sev_f)
            # Older traces lack the severity field: trace processor calls JANK_NONE frames "None", others "Unknown".
            severity = _enum_name(JANK_SEVERITY_NAMES, sev) if sev is not None else (
                "None" if bits == _JANK_NONE else "Unknown")
            on_time = bool(f[ontime_f]) if ontime_f in f else None
            gpu = bool(f[gpu_f]) if gpu_f in f else None
        self.builder.frame_timeline_start(
            ts, _signed64(cookie), kind, scope, _signed64(pid), _signed64(token),
            display_frame_token=_signed64(dft) if dft is not None else None,
            layer_name=layer.decode("utf-8", "replace") if isinstance(layer, bytes) else None,
            jank_type=jank_type, present_type=present, on_time_finish=on_time, gpu_composition=gpu,
            prediction_type=prediction, jank_severity=severity)

    def finish(self) -> None:
        """Report skipped events as warnings (one per cause)."""
        if self.broken:
            self.builder.warn(f"{self.broken} of {self.events} FrameTimeline event(s) could not be decoded; skipped")
        if self.incomplete:
            self.builder.warn(f"{self.incomplete} FrameTimeline event(s) without cookie, token or pid; skipped")
