"""Findings as a Perfetto trace: one named track per kind of verdict, slices on the original trace's time base,
so a user opens `findings.perfetto-trace` in the Perfetto UI (alone, or beside the original capture)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

# Boot-time clock: what ftrace and FrameTimeline timestamps use on Android, so marks line up with the capture.
CLOCK_BOOTTIME = 6
_SEQUENCE_ID = 0x64726F69  # "droi": any fixed id; all our packets are one sequence


@dataclass(frozen=True)
class TimelineMark:
    """One verdict on the timeline: a slice of `dur` ns at `ts` ns (0 dur: an instant) on a named track."""

    track: str
    name: str
    ts: int
    dur: int = 0
    args: dict = field(default_factory=dict)


def _uuid(name: str) -> int:
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "little") >> 1


def _annotate(event: pb.TrackEvent, args: dict) -> None:
    for key, value in args.items():
        a = event.debug_annotations.add()
        a.name = str(key)
        if isinstance(value, bool):
            a.bool_value = value
        elif isinstance(value, int):
            a.int_value = value
        elif isinstance(value, float):
            a.double_value = value
        else:
            a.string_value = str(value)


def export_marks(marks: list[TimelineMark]) -> bytes:
    """Serialize marks into a Perfetto protobuf trace (bytes). Tracks appear in first-use order."""
    builder = TraceProtoBuilder()
    tracks: dict[str, int] = {}
    for m in marks:
        if m.track not in tracks:
            tracks[m.track] = _uuid(m.track)
            pkt = builder.add_packet()
            pkt.trusted_packet_sequence_id = _SEQUENCE_ID
            pkt.track_descriptor.uuid = tracks[m.track]
            pkt.track_descriptor.name = m.track
    for m in sorted(marks, key=lambda m: (m.ts, -m.dur)):
        uuid = tracks[m.track]
        begin = builder.add_packet()
        begin.timestamp = int(m.ts)
        begin.timestamp_clock_id = CLOCK_BOOTTIME
        begin.trusted_packet_sequence_id = _SEQUENCE_ID
        begin.track_event.track_uuid = uuid
        begin.track_event.name = m.name
        _annotate(begin.track_event, m.args)
        if m.dur <= 0:
            begin.track_event.type = pb.TrackEvent.TYPE_INSTANT
            continue
        begin.track_event.type = pb.TrackEvent.TYPE_SLICE_BEGIN
        end = builder.add_packet()
        end.timestamp = int(m.ts + m.dur)
        end.timestamp_clock_id = CLOCK_BOOTTIME
        end.trusted_packet_sequence_id = _SEQUENCE_ID
        end.track_event.track_uuid = uuid
        end.track_event.type = pb.TrackEvent.TYPE_SLICE_END
    return builder.serialize()
