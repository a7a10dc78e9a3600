"""Perfetto protobuf traces into the Trace model, through the `perfetto` PyPI package's generated classes.

Reads process_tree, system_info/cpu_info, ftrace bundles (compact_sched and regular events: sched, atrace print,
binder, block, cpufreq/idle, task names), thread-track TrackEvent slices and FrameTimeline (field 76). Timestamps
are put on the boot clock (the trace clock of Android captures). A truncated or corrupt file is read packet by packet
up to the first broken record, with a warning naming the byte offset.
"""
from __future__ import annotations

from bisect import bisect_right

from google.protobuf.message import DecodeError
from google.protobuf.unknown_fields import UnknownFieldSet
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from droidlag.errors import InputError
from droidlag.io.perfetto_frametimeline import FRAME_TIMELINE_FIELD, FrameTimelineDecoder
from droidlag.io.perfetto_ftrace import FtraceDecoder, prev_state_encoding
from droidlag.io.protowire import try_varint
from droidlag.models.trace import Trace
from droidlag.models.trace_builder import TraceBuilder

BOOTTIME = 6                     # BuiltinClock.BUILTIN_CLOCK_BOOTTIME, Perfetto's default trace clock
_SEQ_INCREMENTAL_STATE_CLEARED = 1
_TYPE_SLICE_BEGIN, _TYPE_SLICE_END = 1, 2
_FTRACE_CLOCK_UNSPECIFIED = 0


def read_perfetto(data: bytes, path: str) -> Trace:
    """Read a Perfetto trace (protobuf bytes, already gunzipped) into a Trace; times in ns on the boot clock.

    Raises InputError when no packet can be read; anything skipped or salvaged is in `Trace.warnings`."""
    builder = TraceBuilder("perfetto", path)
    _PacketReader(builder, parse_packets(data, path, builder)).run()
    # The decoded protobuf (about 2-3x the file in upb's arena) is unreferenced by now, before build() allocates
    # the tables.
    return builder.build()


# ---- the packet stream ------------------------------------------------------------------------------------------
def parse_packets(data: bytes, path: str, builder: TraceBuilder) -> list:
    """All TracePackets of the file. When the whole file does not parse, salvage record by record and warn with
    the byte offset where reading stopped. InputError when no packet at all can be read."""
    trace = pb.Trace()
    try:
        trace.ParseFromString(data)
        packets = trace.packet
    except (DecodeError, ValueError, RuntimeError):
        packets, stop, why = salvage_packets(data)
        if packets:
            builder.warn(f"trace is truncated or corrupt: {why} at byte {stop} of {len(data)}; "
                         f"read the {len(packets)} packet(s) before it", offset=stop)
    if not len(packets):
        raise InputError(path, "no Perfetto trace packets could be read (not a Perfetto trace, or corrupt from "
                         "the first byte)", offset=0)
    return packets


def salvage_packets(data: bytes) -> tuple[list, int, str]:
    """Walk the top-level records (Trace.packet = field 1, length-delimited) and parse each packet on its own.
    Returns (packets, byte offset of the first record that could not be read, why)."""
    packets = []
    pos, n = 0, len(data)
    view = memoryview(data)
    while pos < n:
        if data[pos] != 0x0A:
            return packets, pos, f"unexpected field tag 0x{data[pos]:02x}"
        v = try_varint(data, pos + 1)
        if v is None:
            return packets, pos, "record length cut off"
        length, start = v
        if start + length > n:
            return packets, pos, f"record of {length} bytes runs past the end of the file"
        p = pb.TracePacket()
        try:
            p.ParseFromString(view[start:start + length])
        except (DecodeError, ValueError, RuntimeError):
            return packets, pos, "packet does not decode"
        packets.append(p)
        pos = start + length
    return packets, pos, "end of data"


# ---- clocks -----------------------------------------------------------------------------------------------------
class ClockConverter:
    """Puts timestamps of other builtin clocks (MONOTONIC, REALTIME, ...) on the boot clock using the trace's
    clock snapshots: each value takes the offset of the latest snapshot at or before it (the first, if none)."""

    def __init__(self) -> None:
        self._snapshots: list[dict[int, int]] = []
        self._offsets: dict[int, tuple[list[int], list[int]] | None] = {}
        self.unconvertible: set[int] = set()

    def add_snapshot(self, snapshot) -> None:
        self._snapshots.append({c.clock_id: c.timestamp for c in snapshot.clocks})
        self._offsets.clear()

    def to_boot(self, clock_id: int, ts: int) -> int:
        """ts (ns on clock_id) on the boot clock; unchanged when no snapshot relates the two clocks."""
        if clock_id == BOOTTIME:
            return ts
        table = self._offsets.get(clock_id, False)
        if table is False:
            pairs = sorted((s[clock_id], s[BOOTTIME] - s[clock_id]) for s in self._snapshots
                           if clock_id in s and BOOTTIME in s)
            table = ([p[0] for p in pairs], [p[1] for p in pairs]) if pairs else None
            self._offsets[clock_id] = table
        if table is None:
            self.unconvertible.add(clock_id)
            return ts
        at, off = table
        i = bisect_right(at, ts)
        return ts + off[i - 1 if i else 0]


# ---- packets ----------------------------------------------------------------------------------------------------
class _Sequence:
    """Per-sequence incremental state: interned strings and packet defaults (cleared with the sequence)."""

    __slots__ = ("event_names", "kernel_symbols", "clock_id", "track_uuid", "thread")

    def __init__(self) -> None:
        self.event_names: dict[int, str] = {}
        self.kernel_symbols: dict[int, str] = {}
        self.clock_id: int | None = None
        self.track_uuid: int | None = None
        self.thread: tuple[int, int] | None = None     # (tid, pid) from a legacy ThreadDescriptor packet


class _PacketReader:
    """One pass over the packets after a short pre-pass for clocks and the kernel version."""

    def __init__(self, builder: TraceBuilder, packets) -> None:
        self.b = builder
        self.packets = packets
        self.clocks = ClockConverter()
        self.seqs: dict[int, _Sequence] = {}
        self.names: list[tuple[int, int, int | None, str]] = []   # (ts, tid, pid, name): process_tree / renames
        self.track_threads: dict[int, tuple[int, int]] = {}       # track uuid -> (tid, pid)
        self.track_events: list[tuple] = []                        # (ts, seq, uuid, type, name)
        self.frametimeline = FrameTimelineDecoder(builder)
        self.ftrace: FtraceDecoder | None = None
        self.foreign_clock_events = 0

    def run(self) -> None:
        kinds = self._prepass()
        self.ftrace = FtraceDecoder(self.b, prev_state_encoding(self.b.metadata.get("kernel")))
        for p, kind in zip(self.packets, kinds):
            self._packet(p, kind)
        self.packets = None
        self._finish()

    def _prepass(self) -> list:
        """The data kind of every packet; reads clock snapshots and system info first, since the packets that
        need them (FrameTimeline on MONOTONIC, sched_switch states) may come before them in the file."""
        kinds = []
        for p in self.packets:
            kind = p.WhichOneof("data")
            kinds.append(kind)
            if kind == "clock_snapshot":
                self.clocks.add_snapshot(p.clock_snapshot)
            elif kind == "system_info":
                self._system_info(p.system_info)
        return kinds

    def _seq(self, p) -> _Sequence:
        sid = p.trusted_packet_sequence_id
        seq = self.seqs.get(sid)
        if seq is None or p.incremental_state_cleared or p.sequence_flags & _SEQ_INCREMENTAL_STATE_CLEARED:
            old = seq
            seq = self.seqs[sid] = _Sequence()
            if old is not None:    # defaults and the thread descriptor outlive a clear in practice
                seq.clock_id, seq.track_uuid, seq.thread = old.clock_id, old.track_uuid, old.thread
        return seq

    def _ts(self, p, seq: _Sequence) -> int:
        """The packet's timestamp on the boot clock, ns."""
        clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else (seq.clock_id or BOOTTIME)
        return self.clocks.to_boot(clock, p.timestamp) if clock != BOOTTIME else p.timestamp

    def _packet(self, p, kind: str | None) -> None:
        if (kind is None and p.HasField("timestamp") and not p.HasField("interned_data")
                and not p.HasField("trace_packet_defaults")):
            self._frame_timeline(p)     # kept lean: FrameTimeline packets are numerous
            return
        seq = self._seq(p)
        if p.HasField("interned_data"):
            self._interned(p.interned_data, seq)
        if p.HasField("trace_packet_defaults"):
            d = p.trace_packet_defaults
            if d.HasField("timestamp_clock_id"):
                seq.clock_id = d.timestamp_clock_id
            if d.HasField("track_event_defaults") and d.track_event_defaults.HasField("track_uuid"):
                seq.track_uuid = d.track_event_defaults.track_uuid
        if kind == "ftrace_events":
            self._ftrace_bundle(p.ftrace_events, seq)
        elif kind is None and p.HasField("timestamp"):
            self._frame_timeline(p)
        elif kind == "process_tree":
            self._process_tree(p.process_tree, self._ts(p, seq))
        elif kind == "track_event":
            self._track_event(p, seq)
        elif kind == "track_descriptor":
            self._track_descriptor(p.track_descriptor)
        elif kind == "thread_descriptor":
            t = p.thread_descriptor
            seq.thread = (t.tid, t.pid)
            self.b.thread(t.tid, t.pid or None, t.thread_name or None)
        elif kind == "cpu_info":
            for i, cpu in enumerate(p.cpu_info.cpus):
                if len(cpu.frequencies):
                    self.b.cpu_max_frequency(cpu.processor if cpu.HasField("processor") else i,
                                             max(cpu.frequencies))

    def _frame_timeline(self, p) -> None:
        """Field 76 of a packet with no known payload, if it has one."""
        for f in UnknownFieldSet(p):
            if f.field_number == FRAME_TIMELINE_FIELD and f.wire_type == 2:
                clock = p.timestamp_clock_id
                if not clock:
                    seq = self.seqs.get(p.trusted_packet_sequence_id)
                    clock = (seq.clock_id if seq else None) or BOOTTIME
                ts = p.timestamp
                self.frametimeline.feed(ts if clock == BOOTTIME else self.clocks.to_boot(clock, ts), f.data)

    @staticmethod
    def _interned(d, seq: _Sequence) -> None:
        for e in d.event_names:
            seq.event_names[e.iid] = e.name
        for s in d.kernel_symbols:
            seq.kernel_symbols[s.iid] = s.str.decode("utf-8", "replace")

    # ---- packet kinds ---------------------------------------------------------------------------------------
    def _system_info(self, si) -> None:
        """Device metadata: build fingerprint, device, kernel release, Android SDK, architecture."""
        md = self.b.metadata
        fp = si.android_build_fingerprint
        if fp and "/" in fp:          # some builds write an error message here instead
            md["build"] = fp
            parts = fp.split("/")
            if len(parts) >= 3:
                md["device"] = parts[2].split(":")[0]
        if si.HasField("utsname"):
            u = si.utsname
            if u.release:
                md["kernel"] = u.release
            if u.machine:
                md["arch"] = u.machine
        if si.android_sdk_version:
            md["android_sdk"] = str(si.android_sdk_version)
        if si.tracing_service_version:
            md["perfetto_version"] = si.tracing_service_version

    def _ftrace_bundle(self, bundle, seq: _Sequence) -> None:
        ft = self.ftrace
        cpu = bundle.cpu
        if bundle.lost_events:
            ft.lost_bundles += 1
        shift = 0
        if bundle.ftrace_clock != _FTRACE_CLOCK_UNSPECIFIED and bundle.ftrace_timestamp and bundle.boot_timestamp:
            # a non-boot ftrace clock (e.g. global): the bundle gives one matching pair of readings
            shift = bundle.boot_timestamp - bundle.ftrace_timestamp
        if bundle.HasField("compact_sched"):
            ft.compact_sched(cpu, bundle.compact_sched, shift)
        if len(bundle.event):
            ft.events(cpu, bundle.event, seq.kernel_symbols, shift)

    def _process_tree(self, pt, ts: int) -> None:
        b = self.b
        for proc in pt.processes:
            name = proc.cmdline[0] if len(proc.cmdline) else None
            b.process(proc.pid, name or None, proc.ppid if proc.HasField("ppid") else None)
        for t in pt.threads:
            b.thread(t.tid, t.tgid or None)
            if t.name:
                self.names.append((ts, t.tid, t.tgid or None, t.name))

    def _track_descriptor(self, td) -> None:
        b = self.b
        if td.HasField("thread"):
            t = td.thread
            self.track_threads[td.uuid] = (t.tid, t.pid)
            b.thread(t.tid, t.pid or None, t.thread_name or None)
        elif td.HasField("process"):
            pr = td.process
            b.process(pr.pid, pr.process_name or (pr.cmdline[0] if len(pr.cmdline) else None))

    def _track_event(self, p, seq: _Sequence) -> None:
        te = p.track_event
        typ = te.type
        if typ not in (_TYPE_SLICE_BEGIN, _TYPE_SLICE_END):
            return
        clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else (seq.clock_id or BOOTTIME)
        if clock >= 64:     # sequence-scoped (incremental) clocks are not supported
            self.foreign_clock_events += 1
            return
        name = te.name if te.HasField("name") else seq.event_names.get(te.name_iid, f"iid {te.name_iid}")
        uuid = te.track_uuid if te.HasField("track_uuid") else seq.track_uuid
        self.track_events.append((self._ts(p, seq), uuid, seq.thread, typ, name))

    # ---- end ------------------------------------------------------------------------------------------------
    def _finish(self) -> None:
        b = self.b
        self.ftrace.finish()
        self.frametimeline.finish()
        self._emit_track_events()
        # Authoritative names (process_tree, task_rename) in time order; comms only fill what is still unnamed.
        for _ts, tid, pid, name in sorted(self.names + [(ts, tid, None, n) for ts, tid, n in self.ftrace.renames],
                                         key=lambda r: r[0]):
            b.thread(tid, pid, name, overwrite_name=True)
        for tid, comm in self.ftrace.comms.items():
            if comm:
                b.thread(tid, None, comm)
        if self.clocks.unconvertible:
            b.warn(f"timestamps on clock(s) {sorted(self.clocks.unconvertible)} have no clock snapshot relating "
                   "them to the boot clock; used as they are")
        if self.foreign_clock_events:
            b.warn(f"{self.foreign_clock_events} track event(s) on sequence-scoped clocks skipped")

    def _emit_track_events(self) -> None:
        """Thread-track slices become thread slices; events on process or async tracks are counted, not read."""
        b = self.b
        skipped = 0
        for ts, uuid, seq_thread, typ, name in self.track_events:
            thread = self.track_threads.get(uuid) if uuid is not None else seq_thread
            if thread is None:
                skipped += 1
                continue
            tid, pid = thread
            if typ == _TYPE_SLICE_BEGIN:
                b.slice_begin(ts, tid, name, pid or None)
            else:
                b.slice_end(ts, tid)
        if skipped:
            b.warn(f"{skipped} track-event slice event(s) not on a thread track skipped")
