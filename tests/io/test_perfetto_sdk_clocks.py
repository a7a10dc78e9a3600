"""Track events on sequence-scoped clocks (ClockSnapshot clock ids 64-127), as the Perfetto SDK writes them (apps with
the SDK or androidx tracing-perfetto, Android's own track events): at each reset of its incremental state a writer
emits one packet with SEQ_INCREMENTAL_STATE_CLEARED, TracePacketDefaults.timestamp_clock_id = 64 and a ClockSnapshot
pairing BOOTTIME with clock 64 (is_incremental, unit_multiplier_ns); every later packet's timestamp is a delta, in
those units, from the last timestamp on clock 64 of the same sequence; a timestamp that would go back is written
absolute, with timestamp_clock_id BOOTTIME (or clock 65, absolute, in the same units). These rules are the SDK's
(src/tracing/internal/track_event_internal.cc, ResetIncrementalState and NewTracePacket) and clock_snapshot.proto's;
the expected times below are worked out by hand from them."""
from __future__ import annotations

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from test_perfetto_tp_cases import _read, _slices

BOOTTIME, INCREMENTAL, ABSOLUTE = 6, 64, 65
SEQ_INCREMENTAL_STATE_CLEARED = 1
BEGIN, END, INSTANT = 1, 2, 3


def _reset(seq: int, boot_ns: int, unit_ns: int = 1, track: int = 11, tid: int = 42, pid: int = 40) -> list:
    """The SDK's reset: defaults + clock snapshot in one packet, then the thread track's descriptor (delta 0)."""
    p = pb.TracePacket(trusted_packet_sequence_id=seq, timestamp=0, sequence_flags=SEQ_INCREMENTAL_STATE_CLEARED)
    p.trace_packet_defaults.timestamp_clock_id = INCREMENTAL
    p.trace_packet_defaults.track_event_defaults.track_uuid = track
    p.clock_snapshot.clocks.add(clock_id=BOOTTIME, timestamp=boot_ns)
    p.clock_snapshot.clocks.add(clock_id=INCREMENTAL, timestamp=boot_ns // unit_ns, is_incremental=True,
                                unit_multiplier_ns=unit_ns)
    if unit_ns > 1:
        p.clock_snapshot.clocks.add(clock_id=ABSOLUTE, timestamp=boot_ns // unit_ns, is_incremental=False,
                                    unit_multiplier_ns=unit_ns)
    d = pb.TracePacket(trusted_packet_sequence_id=seq, timestamp=0)
    d.track_descriptor.uuid = track
    d.track_descriptor.thread.pid, d.track_descriptor.thread.tid = pid, tid
    d.track_descriptor.thread.thread_name = f"sdk-{tid}"
    return [p, d]


def _event(seq: int, ts: int, typ: int, name: str | None = None, **packet: object) -> pb.TracePacket:
    p = pb.TracePacket(trusted_packet_sequence_id=seq, timestamp=ts, **packet)  # type: ignore[arg-type]
    p.track_event.type = typ
    if name is not None:
        p.track_event.name = name
    return p


def test_incremental_timestamps_are_deltas_from_the_snapshot_and_each_other():
    # snapshot at boot 5,000,000; deltas 1000, 250, 500, 2000 -> 5,001,000 / 5,001,250 / 5,001,750 / 5,003,750
    t = _read(*_reset(7, 5_000_000), _event(7, 1000, BEGIN, "outer"), _event(7, 250, BEGIN, "inner"),
              _event(7, 500, END), _event(7, 2000, END))
    assert _slices(t, "ts", "dur", "name", "depth", "tid", "pid") == [
        (5_001_000, 2750, "outer", 0, 42, 40), (5_001_250, 500, "inner", 1, 42, 40)]
    assert not [w for w in t.warnings if "clock" in w.message]


def test_a_unit_multiplier_scales_deltas_and_the_absolute_clock():
    # microsecond units: snapshot at boot 9,000,000 ns = 9000 us; deltas 3 us and 4 us; an instant at clock 65
    # (absolute, us) 9010 -> 9,010,000 ns; a packet on BOOTTIME itself does not move the incremental clock
    t = _read(*_reset(3, 9_000_000, unit_ns=1000), _event(3, 3, BEGIN, "a"),
              _event(3, 9010, INSTANT, "abs", timestamp_clock_id=ABSOLUTE),
              _event(3, 8_000_000, INSTANT, "boot", timestamp_clock_id=BOOTTIME), _event(3, 4, END))
    assert _slices(t, "ts", "dur", "name") == [(8_000_000, 0, "boot"), (9_003_000, 4000, "a"),
                                               (9_010_000, 0, "abs")]


def test_sequences_keep_their_own_clocks_and_a_reset_starts_again():
    t = _read(*_reset(1, 1_000_000, tid=10), *_reset(2, 2_000_000, track=12, tid=20),
              _event(1, 100, BEGIN, "s1"), _event(2, 100, BEGIN, "s2"), _event(1, 100, END), _event(2, 300, END),
              *_reset(1, 7_000_000, tid=10), _event(1, 5, INSTANT, "after reset"))
    assert _slices(t, "ts", "dur", "name", "tid") == [
        (1_000_100, 100, "s1", 10), (2_000_100, 300, "s2", 20), (7_000_005, 0, "after reset", 10)]


def test_a_sequence_clock_no_snapshot_defined_is_counted_not_read():
    d = pb.TracePacket(trusted_packet_sequence_id=5, timestamp=0)
    d.trace_packet_defaults.timestamp_clock_id = INCREMENTAL
    d.track_descriptor.uuid = 11
    d.track_descriptor.thread.pid, d.track_descriptor.thread.tid = 40, 42
    d.trace_packet_defaults.track_event_defaults.track_uuid = 11
    t = _read(d, _event(5, 10, INSTANT, "lost"))
    assert t.slices.height == 0
    assert any("1 track event(s) on sequence-scoped clocks skipped" in w.message for w in t.warnings)
    # the clock of another sequence does not serve it
    t = _read(*_reset(1, 1_000_000), d, _event(5, 10, INSTANT, "lost"))
    assert t.slices.height == 0


def test_a_chrome_trace_excerpt_on_clock_65():
    """Rebuilt from the Chrome trace excerpt in Chromium OS's tast test gpucuj (TestTraceSimple, trace_test.go): a
    snapshot pairs BOOTTIME 2491717086881 with clock 64 (absolute) and clock 65 (incremental), both in microseconds
    and read 2491718272 (Chrome's clocks are not the boot clock); the sequence defaults to clock 65; a thread track
    descriptor at delta 0; then ThreadPool_RunTask begins 7 us later, its name interned in the same packet. That test
    expects the begin at 2491717086881 + 7 * 1000 ns on the boot clock."""
    snap = pb.TracePacket(trusted_packet_sequence_id=3, sequence_flags=SEQ_INCREMENTAL_STATE_CLEARED,
                          previous_packet_dropped=1)
    snap.clock_snapshot.clocks.add(clock_id=BOOTTIME, timestamp=2491717086881)
    snap.clock_snapshot.clocks.add(clock_id=64, timestamp=2491718272, unit_multiplier_ns=1000)
    snap.clock_snapshot.clocks.add(clock_id=65, timestamp=2491718272, is_incremental=True, unit_multiplier_ns=1000)
    snap.trace_packet_defaults.timestamp_clock_id = 65
    snap.trace_packet_defaults.track_event_defaults.track_uuid = 9964562508143186970
    desc = pb.TracePacket(trusted_packet_sequence_id=3, timestamp=0)
    desc.track_descriptor.uuid = 9964562508143186970
    desc.track_descriptor.parent_uuid = 9964562508143196990
    desc.track_descriptor.thread.pid, desc.track_descriptor.thread.tid = 7111, 12068
    desc.track_descriptor.thread.thread_name = "ThreadPoolForegroundWorker"
    ev = pb.TracePacket(trusted_packet_sequence_id=3, timestamp=7, sequence_flags=2)
    ev.track_event.type = BEGIN
    ev.track_event.name_iid = 1
    ev.interned_data.event_names.add(iid=1, name="ThreadPool_RunTask")
    t = _read(snap, desc, ev)
    assert _slices(t, "ts", "name", "tid", "pid", "closed") == [(2491717086881 + 7000, "ThreadPool_RunTask", 12068,
                                                                  7111, False)]
    assert t.threads[12068].name == "ThreadPoolForegroundWorker"


def test_after_a_lost_packet_the_sequences_events_wait_for_its_next_reset():
    """A packet lost on the sequence (the next one says previous_packet_dropped) leaves the incremental clock's value
    unknown: trace processor skips the packets that need the sequence's state until its next reset. Here the lost
    packet carried a delta of 500: read on, 'B' would land 500 ns early."""
    needs = 2   # SEQ_NEEDS_INCREMENTAL_STATE
    t = _read(*_reset(7, 5_000_000), _event(7, 1000, INSTANT, "A", sequence_flags=needs),
              # (a packet with delta 500 was lost here)
              _event(7, 500, INSTANT, "B", sequence_flags=needs, previous_packet_dropped=1),
              _event(7, 100, INSTANT, "C", sequence_flags=needs),
              *_reset(7, 6_000_000), _event(7, 10, INSTANT, "D", sequence_flags=needs))
    assert _slices(t, "ts", "name") == [(5_001_000, "A"), (6_000_010, "D")]
    assert any("2 track event(s) skipped after a lost packet" in w.message for w in t.warnings)


def test_a_time_past_64_bits_is_skipped_with_a_warning_not_wrapped():
    """A unit of 2^62 ns: the snapshot reads 0 units at boot 9,000,000; a delta of 4 units is 2^64 ns, past an int64:
    that event is skipped and the clock does not move, so the next (delta 0) is at the snapshot's time."""
    t = _read(*_reset(3, 9_000_000, unit_ns=1 << 62), _event(3, 4, INSTANT, "far"), _event(3, 0, INSTANT, "near"))
    assert _slices(t, "ts", "name") == [(9_000_000, "near")]
    assert any("1 track event(s) skipped: their time on a sequence-scoped clock does not fit" in w.message
               for w in t.warnings)


def test_a_sequence_clock_needs_a_sequence():
    """Sequence-scoped clocks are only valid within a trusted_packet_sequence_id; trace processor refuses them on
    sequence 0."""
    t = _read(*_reset(0, 1_000_000), _event(0, 10, INSTANT, "no sequence"))
    assert t.slices.height == 0
