"""FrameTimeline frames on real traces (issue 12, item 2): one frame per app surface frame (layer + token), every
one of them; a surface frame without its end event is incomplete and kept out of the counts; a slow frame outside
the sched data gets no cause. Expected counts come from corpus/traces/SOURCES.md (a separate decoder) or from a
hand-written wire-format walk in this file, never from droidlag's reader."""
from __future__ import annotations

import dataclasses

import polars as pl

from conftest import corpus_file
from droidlag.frames import analyze_frames
from droidlag.io import read_trace
from droidlag.report.frames_json import summary_dict

NOWINANDROID = "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace"
PIXEL6A = "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace"
# SOURCES.md, file 10: app surface-frame jank types of nowinandroid (1,068 actual surface frames)
NOWINANDROID_JANK = {"None": 1004, "Buffer Stuffing": 47, "App Deadline Missed": 12,
                     "App Deadline Missed, Buffer Stuffing": 5}


# ---- a minimal protobuf walk, independent of droidlag's native decoder -------------------------------------
def _varint(b: bytes, i: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        c = b[i]
        i += 1
        out |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return out, i


def _fields(b: bytes):
    """(field number, wire type, value or bytes, start, end) of each field of one message."""
    i = 0
    while i < len(b):
        start = i
        key, i = _varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wt}")
        yield f, wt, v, start, i


def _frame_timeline_events(data: bytes):
    """(packet start, packet end, event field, cookie, jank bits) for every FrameTimelineEvent (TracePacket field
    76: 4 = actual surface frame start with jank_type field 9, 5 = frame end)."""
    for f, _, packet, start, end in _fields(data):
        if f != 1:
            continue
        for pf, _, ev, _, _ in _fields(packet):
            if pf != 76:
                continue
            for ef, _, body, _, _ in _fields(ev):
                if ef in (4, 5):
                    inner = {g: v for g, _, v, _, _ in _fields(body)}
                    yield start, end, ef, inner.get(1), inner.get(9)


def test_every_app_surface_frame_is_a_frame(corpus):
    trace = read_trace(corpus_file(corpus, NOWINANDROID))
    r = analyze_frames(trace)
    s = summary_dict(r.summary)
    assert s["frames"] + s["incomplete_frames"] == sum(NOWINANDROID_JANK.values()) == 1068
    # the jank types of all frames (complete or not) are FrameTimeline's, one for one
    got = r.frames.group_by("ft_jank_type").len().to_dicts()
    assert {d["ft_jank_type"]: d["len"] for d in got} == NOWINANDROID_JANK
    agree = s["frametimeline_agreement"]
    assert agree["frametimeline_app_jank"] == 12 + 5
    # system_server (pid 1265) drew three transition layers per vsync: each layer is its own row, all counted
    layers = {(d["pid"], d["layer"]): d["frames"] for d in agree["by_layer"]}
    assert sum(1 for (pid, _) in layers if pid == 1265) >= 3
    assert sum(layers.values()) == s["frames"]


def _with_second_layer(trace, pid: int, layer: str):
    """The trace with every surface frame of `pid` presented on one more layer (same token), the copy late with
    App Deadline Missed: what systemui's status bar and navigation bar look like in one vsync."""
    ft = trace.frame_timeline
    rows = ft.filter((pl.col("scope") == "surface") & (pl.col("pid") == pid))
    copy = rows.with_columns(pl.lit(layer).alias("layer_name"),
                             pl.when(pl.col("kind") == "actual").then(pl.lit("App Deadline Missed"))
                             .otherwise(pl.col("jank_type")).alias("jank_type"),
                             pl.when(pl.col("kind") == "actual").then(pl.lit("Late Present"))
                             .otherwise(pl.col("present_type")).alias("present_type"))
    return dataclasses.replace(trace, frame_timeline=pl.concat([ft, copy]).sort("ts")), rows


def test_two_layers_of_one_process_in_one_vsync_are_two_frames(corpus):
    trace = read_trace(corpus_file(corpus, PIXEL6A))
    app = 7663      # androidx.benchmark...target: its doFrames carry vsync ids that FrameTimeline rows match
    before = analyze_frames(trace)
    doubled, rows = _with_second_layer(trace, app, "TX - second layer#1")
    n_actual = rows.filter(pl.col("kind") == "actual").height
    assert n_actual == 2
    after = analyze_frames(doubled)
    assert after.summary.frames == before.summary.frames + n_actual
    f = after.frames.filter(pl.col("pid") == app)
    assert f.filter(pl.col("layer_name") == "TX - second layer#1").height == n_actual
    # the original layer kept its own (clean) verdict: the janky copy did not overwrite it
    orig = f.filter(pl.col("layer_name").str.starts_with("TX - androidx"))
    assert orig.height == n_actual and (orig["ft_jank_type"] == "None").all()
    ft_frames = after.frames.filter(pl.col("ft_jank_type").is_not_null()).height
    surface_actual = doubled.frame_timeline.filter((pl.col("scope") == "surface") & (pl.col("kind") == "actual"))
    assert ft_frames == surface_actual.height
    assert after.summary.frametimeline_agreement["frametimeline_app_jank"] == 1 + n_actual


def test_frame_without_end_event_is_incomplete_not_frozen(corpus, tmp_path):
    data = corpus_file(corpus, NOWINANDROID).read_bytes()
    events = list(_frame_timeline_events(data))
    starts = {cookie: bits for _, _, f, cookie, bits in events if f == 4}
    # an App Deadline Missed surface frame (jank bit 64) in the middle of the trace: cut its frame_end packet
    adm = [c for c, bits in starts.items() if bits and bits & 64]
    victim = adm[len(adm) // 2]
    ends = [(a, b) for a, b, f, cookie, _ in events if f == 5 and cookie == victim]
    assert len(ends) == 1
    a, b = ends[0]
    cut = tmp_path / "cut.perfetto-trace"
    cut.write_bytes(data[:a] + data[b:])
    whole = summary_dict(analyze_frames(read_trace(corpus_file(corpus, NOWINANDROID))).summary)
    r = analyze_frames(read_trace(cut))
    s = summary_dict(r.summary)
    assert s["incomplete_frames"] == whole["incomplete_frames"] + 1
    assert s["frames"] == whole["frames"] - 1
    assert s["ff"] == s["ff_naive"] == 0
    assert s["frame_time_ms"]["max"] == whole["frame_time_ms"]["max"]     # not the run to the trace end
    assert s["frametimeline_agreement"]["frametimeline_app_jank"] == 12 + 5 - 1
    inc = r.frames.filter(~pl.col("complete"))
    assert inc.height == s["incomplete_frames"] and (inc["verdict"] == "incomplete").all()


def test_slow_frame_outside_the_sched_data_gets_no_cause(corpus):
    trace = read_trace(corpus_file(corpus, PIXEL6A))
    r = analyze_frames(trace)
    slow = r.frames.filter(pl.col("verdict") == "SR")
    assert slow.height == 1 and r.causes.filter(pl.col("frame_id") == slow["frame_id"][0]).height > 0
    end = slow["end_ns"][0]
    # the same trace with the sched data starting after the slow frame ended (a ring buffer that lost its start)
    cut = dataclasses.replace(trace, thread_states=trace.thread_states.filter(pl.col("ts") > end + 1_000_000))
    r2 = analyze_frames(cut)
    slow2 = r2.frames.filter(pl.col("verdict") == "SR")
    assert slow2.height == 1
    fid = slow2["frame_id"][0]
    assert r2.causes.filter(pl.col("frame_id") == fid).height == 0
    assert slow2["cause_note"][0] == "not possible: no sched data in this window"
    assert r2.summary.sections["causes_not_possible_frames"] == 1
    assert summary_dict(r2.summary)["causes"] == []


def test_slow_frame_with_no_data_of_its_threads_gets_no_cause(corpus):
    """nowinandroid has no sched data; a slow frame whose threads have no atrace slice in its window has nothing
    to name as its cause (checked here on the slice table directly)."""
    trace = read_trace(corpus_file(corpus, NOWINANDROID))
    r = analyze_frames(trace)
    slow = r.frames.filter(pl.col("verdict") == "SR")
    for row in slow.iter_rows(named=True):
        tids = [t for t in (row["ui_tid"], row["render_tid"]) if t is not None]
        inside = trace.slices.filter(pl.col("tid").is_in(tids) & (pl.col("ts") < row["end_ns"])
                                     & (pl.col("ts") + pl.col("dur") > row["start_ns"])).height
        n_causes = r.causes.filter(pl.col("frame_id") == row["frame_id"]).height
        if inside == 0:
            assert n_causes == 0 and row["cause_note"].startswith("not possible: no sched data and no atrace")
        else:
            assert n_causes >= 1 and row["cause_note"] is None
    assert r.summary.sections["causes_not_possible_frames"] >= 1


def test_doframes_without_vsync_ids_are_not_counted_twice(corpus):
    """The same trace with the vsync ids cut from doFrame/DrawFrame names (older atrace): FrameTimeline cannot be
    matched, and its surface frames must not be added beside the doFrames they belong to."""
    import re
    trace = read_trace(corpus_file(corpus, PIXEL6A))
    names = trace.slices["name"].to_list()
    n_do = sum(1 for n in names if re.fullmatch(r"Choreographer#doFrame( \d+)?", n or ""))
    cut = trace.slices.with_columns(pl.col("name").str.replace(r"^(Choreographer#doFrame|DrawFrames?) \d+$", "${1}"))
    r = analyze_frames(dataclasses.replace(trace, slices=cut))
    outer = analyze_frames(trace).summary.frames
    assert r.summary.frames == outer <= n_do
    assert any("carry no vsync id" in n for n in r.notes)


def test_app_is_found_by_its_layer_package_when_the_trace_names_no_process(corpus):
    """nowinandroid has no process tree: `--app <package>` finds the app's surface frames by the package
    SurfaceFlinger puts in its layer names, and leaves the other apps' out."""
    from droidlag.frames import FramesConfig
    trace = read_trace(corpus_file(corpus, NOWINANDROID))
    assert trace.process_name(9305) is None
    r = analyze_frames(trace, FramesConfig(app="com.google.samples.apps.nowinandroid.demo"))
    assert set(r.frames["process"].to_list()) == {"com.google.samples.apps.nowinandroid.demo"}
    assert 9305 in set(r.frames["pid"].to_list()) and 4586 not in set(r.frames["pid"].to_list())
    # the splash screen layer names the app but belongs to the process that draws it (systemui): not the app's
    assert not r.frames.filter(pl.col("layer_name").str.contains("Splash Screen")).height
    ft = trace.frame_timeline.filter((pl.col("kind") == "actual") & (pl.col("scope") == "surface"))
    splash_jank = ft.filter(pl.col("layer_name").str.contains("Splash Screen")
                            & pl.col("jank_type").str.contains("App Deadline Missed")).height
    assert r.summary.frametimeline_agreement["frametimeline_app_jank"] == 12 + 5 - splash_jank == 16


def test_doframe_still_open_at_the_end_is_incomplete():
    """A doFrame whose end is not in the trace (capture stopped mid-frame) runs to the trace end in the slice
    table; as a frame it is incomplete: no verdict, not in the counts or the worst frame time."""
    from frames_fixtures import APP, MS, UI, new_builder, smooth_frames
    b = new_builder()
    t = smooth_frames(b, 10 * MS, 6)
    b.atrace(t, UI, f"B|{APP}|Choreographer#doFrame")      # never ended
    b.counter(t + 3_000 * MS, "idle", 0, pid=APP)            # the trace goes on for 3 s
    r = analyze_frames(b.build())
    s = summary_dict(r.summary)
    assert s["frames"] == 6 and s["incomplete_frames"] == 1
    assert s["sr_naive"] == 0 and s["ff_naive"] == 0 and s["frame_time_ms"]["max"] < 16


def test_headline_names_the_slices_that_took_the_time_without_sched(corpus):
    """No sched data: the headline's cause is the app's own work, and it names the main-thread slices that took
    the slow frames' time (Compose's measure/layout and recomposition in this app)."""
    from droidlag.findings.narrative import frames_headlines
    trace = read_trace(corpus_file(corpus, NOWINANDROID))
    r = analyze_frames(trace)
    comps = summary_dict(r.summary)["app_work_components_ms"]
    main_names = set(trace.slices.filter(pl.col("tid") == 9305)["name"].to_list())
    assert comps and set(comps) <= main_names
    assert "AndroidOwner:measureAndLayout" in comps      # the top slice of SOURCES.md's list
    text = frames_headlines(r, "t")[0].text
    assert "the slices that took it: " in text and list(comps)[0] in text
