"""FrameTimeline (TracePacket field 76) decoding from hand-made wire bytes: member layouts, trace-processor names,
negative int64 values, and broken payloads counted rather than raised."""
from __future__ import annotations

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from perfetto_wire import field

from droidlag.io.perfetto import read_perfetto


def _packet(ts: int, member: int, fields: list[tuple[int, int | bytes]]) -> bytes:
    """A serialized TracePacket {timestamp, trusted_packet_sequence_id, 76: FrameTimelineEvent{member: {...}}}."""
    body = b"".join(field(n, v) for n, v in fields)
    event = field(member, body)
    return (pb.TracePacket(timestamp=ts, trusted_packet_sequence_id=3).SerializeToString()
            + field(76, event))


def _trace(*packets: bytes) -> bytes:
    return b"".join(field(1, p) for p in packets)


def test_jank_type_names_follow_trace_processor():
    """Each JankType bitmask of an actual surface frame named as trace processor names it (names written by hand from
    its jank_type strings: reasons in its order, joined by ", "; unknown bits in hex)."""
    expected = {
        0: "Unspecified", 1: "None", 64: "App Deadline Missed", 64 | 128: "App Deadline Missed, Buffer Stuffing",
        4 | 16: "Prediction Error, SurfaceFlinger CPU Deadline Missed",
        2 | 8 | 512 | 1024: "SurfaceFlinger Scheduling, Display HAL, SurfaceFlinger Stuffing, Dropped Frame",
        256: "Unknown Jank", 4096 | 64: "App Deadline Missed, App Resynced Jitter",
        64 | 1 << 20: "App Deadline Missed, Unknown Jank Bits 0x100000",
    }
    packets = []
    for cookie, bits in enumerate(expected, start=1):
        packets.append(_packet(1000 + cookie, 4, [(1, cookie), (2, 42), (3, 500), (4, 1234), (9, bits)]))
        packets.append(_packet(2000 + cookie, 5, [(1, cookie)]))
    t = read_perfetto(_trace(*packets), "mem")
    assert dict(zip(t.frame_timeline["ts"].to_list(), t.frame_timeline["jank_type"].to_list())) == \
        {1000 + cookie: name for cookie, name in enumerate(expected.values(), start=1)}


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
        pb.TracePacket(timestamp=5, trusted_packet_sequence_id=3).SerializeToString() + field(76, b"\x12\x7f\x08"),
        _packet(1000, 1, [(1, 7), (2, 500), (3, 600)]),
    )
    t = read_perfetto(data, "mem")
    assert t.frame_timeline.height == 1
    msgs = " ".join(w.message for w in t.warnings)
    assert "could not be decoded" in msgs and "without cookie, token or pid" in msgs


def test_a_repeated_cookie_keeps_one_row_with_its_last_start_and_last_end():
    """Worked by hand: cookie 1 starts at 500 (token 10), cookie 2 at 300, cookie 1 again at 400 (token 11): two rows,
    cookie 1's with the second start's values; ends: cookie 1 at 900 then 950 (the last counts), cookie 2 none. Rows
    in time order: cookie 2 (300, no end: runs to the trace end 950), cookie 1 (400, 950 - 400)."""
    data = _trace(
        _packet(500, 3, [(1, 1), (2, 10), (3, 77), (4, 1234)]),
        _packet(300, 3, [(1, 2), (2, 20), (3, 78), (4, 1234)]),
        _packet(400, 3, [(1, 1), (2, 11), (3, 79), (4, 1234)]),
        _packet(900, 5, [(1, 1)]), _packet(950, 5, [(1, 1)]),
    )
    t = read_perfetto(data, "mem")
    ft = t.frame_timeline
    assert ft.select("ts", "dur", "token", "display_frame_token", "ended").rows() == \
        [(300, 650, 20, 78, False), (400, 550, 11, 79, True)]
    assert any("1 FrameTimeline frame(s) without an end event" in w.message for w in t.warnings)


def test_a_decoders_events_and_events_given_one_by_one_make_one_table():
    """A builder holding a decoder's FrameTimeline events and events given one by one pairs them as one set (worked
    by hand): cookie 1 starts at 500 (decoder; pid 1234, the expected surface frame's field 4) and ends at 700 (one by one) and 900 (decoder; the single events come
    first, so the decoder's end is the last); cookie 2 starts at 600 with no end and runs to the trace end, 900."""
    from droidlag._native import PerfettoDecoder
    from droidlag.models.trace_builder import TraceBuilder
    d = PerfettoDecoder()
    d.feed(_trace(_packet(500, 3, [(1, 1), (2, 10), (3, 77), (4, 1234)]), _packet(900, 5, [(1, 1)])))
    b = TraceBuilder("perfetto", "mem")
    b.frame_timeline_events(d.finish()["frame_timeline"])
    b.frame_timeline_start(600, cookie=2, kind="expected", scope="surface", pid=78, token=20)
    b.frame_timeline_end(700, cookie=1)
    t = b.build()
    assert t.frame_timeline.select("ts", "dur", "token", "pid", "ended").rows() == \
        [(500, 400, 10, 1234, True), (600, 300, 20, 78, False)]
