"""The Perfetto export decodes back to the same tracks, slices, times and arguments."""
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from droidlag.report.perfetto_export import TimelineMark, export_marks


def test_marks_round_trip_through_the_perfetto_proto():
    marks = [
        TimelineMark("droidlag: jank (com.app)", "SR 23.4 ms", 5_000_000, 23_400_000, {"cause": "binder", "share": 0.62}),
        TimelineMark("droidlag: jank (com.app)", "FF 812.0 ms", 90_000_000, 812_000_000, {"frames": 1}),
        TimelineMark("droidlag: ANR", "ANR in com.app", 1_000_000_000, 0, {"blocked": True}),
    ]
    trace = pb.Trace()
    trace.ParseFromString(export_marks(marks))
    descriptors = {p.track_descriptor.uuid: p.track_descriptor.name for p in trace.packet if p.HasField("track_descriptor")}
    assert sorted(descriptors.values()) == ["droidlag: ANR", "droidlag: jank (com.app)"]
    events = [(p.timestamp, p.track_event) for p in trace.packet if p.HasField("track_event")]
    begins = [(ts, e.name, descriptors[e.track_uuid]) for ts, e in events if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN]
    ends = [ts for ts, e in events if e.type == pb.TrackEvent.TYPE_SLICE_END]
    instants = [(ts, e.name) for ts, e in events if e.type == pb.TrackEvent.TYPE_INSTANT]
    assert begins == [(5_000_000, "SR 23.4 ms", "droidlag: jank (com.app)"),
                      (90_000_000, "FF 812.0 ms", "droidlag: jank (com.app)")]
    assert sorted(ends) == [28_400_000, 902_000_000]
    assert instants == [(1_000_000_000, "ANR in com.app")]
    sr = next(e for _, e in events if e.name == "SR 23.4 ms")
    args = {a.name: (a.string_value or a.double_value) for a in sr.debug_annotations}
    assert args == {"cause": "binder", "share": 0.62}
    assert all(p.timestamp_clock_id == 6 for p in trace.packet if p.HasField("track_event"))
