"""FrameTimeline (TracePacket field 76) decoding from hand-made wire bytes: member layouts, trace-processor names,
negative int64 values, and broken payloads counted rather than raised."""
from __future__ import annotations

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from droidlag.io.perfetto import read_perfetto
from droidlag.io.perfetto_frametimeline import jank_type_name


def _varint(v: int) -> bytes:
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _field(number: int, value: int | bytes) -> bytes:
    if isinstance(value, bytes):
        return _varint(number << 3 | 2) + _varint(len(value)) + value
    return _varint(number << 3) + _varint(value)


def _packet(ts: int, member: int, fields: list[tuple[int, int | bytes]]) -> bytes:
    """A serialized TracePacket {timestamp, trusted_packet_sequence_id, 76: FrameTimelineEvent{member: {...}}}."""
    body = b"".join(_field(n, v) for n, v in fields)
    event = _field(member, body)
    return (pb.TracePacket(timestamp=ts, trusted_packet_sequence_id=3).SerializeToString()
            + _field(76, event))


def _trace(*packets: bytes) -> bytes:
    return b"".join(_field(1, p) for p in packets)


def test_jank_type_names_follow_trace_processor():
    assert jank_type_name(0) == "Unspecified"
    assert jank_type_name(1) == "None"
    assert jank_type_name(64) == "App Deadline Missed"
    assert jank_type_name(64 | 128) == "App Deadline Missed, Buffer Stuffing"
    assert jank_type_name(4 | 16) == "Prediction Error, SurfaceFlinger CPU Deadline Missed"
    assert jank_type_name(2 | 8 | 512 | 1024) == ("SurfaceFlinger Scheduling, Display HAL, SurfaceFlinger Stuffing, "
                                                  "Dropped Frame")
    assert jank_type_name(256) == "Unknown Jank"


def test_display_and_surface_frames_pair_start_and_end_by_cookie():
    data = _trace(
        _packet(1000, 1, [(1, 7), (2, 500), (3, 600)]),                             # expected display
        _packet(1100, 2, [(1, 8), (2, 500), (3, 600), (4, 2), (5, 0), (6, 1), (7, 16), (8, 1), (9, 3)]),
        _packet(900, 3, [(1, 9), (2, 42), (3, 500), (4, 1234), (5, b"app/Activity#0")]),
        _packet(950, 4, [(1, -5), (2, 42), (3, 500), (4, 1234), (5, b"app/Activity#0"), (6, 2), (7, 0), (8, 0),
                         (9, 64 | 128), (10, 1)]),
        _packet(1016, 5, [(1, 7)]), _packet(1130, 5, [(1, 8)]), _packet(916, 5, [(1, 9)]),
        _packet(990, 5, [(1, -5)]),
    )
    t = read_perfetto(data, "mem")
    rows = {(r["kind"], r["scope"]): r for r in t.frame_timeline.iter_rows(named=True)}
    assert len(rows) == 4 and not t.warnings
    ad = rows[("actual", "display")]
    assert (ad["ts"], ad["dur"], ad["pid"], ad["token"]) == (1100, 30, 600, 500)
    assert (ad["jank_type"], ad["present_type"], ad["on_time_finish"], ad["gpu_composition"]) == \
        ("SurfaceFlinger CPU Deadline Missed", "Late Present", False, True)
    assert (ad["prediction_type"], ad["jank_severity"]) == ("Valid Prediction", "Full")
    asf = rows[("actual", "surface")]
    assert (asf["dur"], asf["layer_name"], asf["display_frame_token"]) == (40, "app/Activity#0", 500)
    assert asf["jank_type"] == "App Deadline Missed, Buffer Stuffing"
    assert asf["jank_severity"] == "Unknown"     # no severity field, not JANK_NONE
    assert rows[("expected", "surface")]["jank_type"] is None
    assert rows[("expected", "display")]["dur"] == 16


def test_broken_and_incomplete_frame_events_are_counted_in_warnings():
    data = _trace(
        _packet(1000, 2, [(1, 8), (3, 600)]),                     # actual display without a token
        pb.TracePacket(timestamp=5, trusted_packet_sequence_id=3).SerializeToString() + _field(76, b"\x12\x7f\x08"),
        _packet(1000, 1, [(1, 7), (2, 500), (3, 600)]),
    )
    t = read_perfetto(data, "mem")
    assert t.frame_timeline.height == 1
    msgs = " ".join(w.message for w in t.warnings)
    assert "could not be decoded" in msgs and "without cookie, token or pid" in msgs
