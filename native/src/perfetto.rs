//! Perfetto TracePackets into columns: one pass over the packets (fed in chunks), per-sequence interned state,
//! ftrace bundles (compact_sched and FtraceEvent messages), atrace prints, process/thread descriptions, track
//! events, clock snapshots and FrameTimeline (field 76). The Python side (droidlag.io.perfetto) hands the columns
//! to the TraceBuilder. A packet that does not decode stops the reading; what it had added is rolled back, so the
//! result holds exactly the packets before the byte offset reported.

use std::sync::Arc;

use crate::hash::{FastMap as HashMap, FastSet as HashSet, TidSet};

use crate::atrace::Parsed;
use crate::wire::{lossy, repeated, text, Reader, Val, WireResult};

pub const BOOTTIME: u32 = 6;
const FRAME_TIMELINE_FIELD: u32 = 76;

/// TracePacket fields of the `data` oneof (perfetto_trace.proto): a packet with none of them and a timestamp is
/// read as a FrameTimeline packet.
const DATA_ONEOF: [u32; 86] = [
    1, 2, 4, 5, 6, 7, 9, 11, 33, 34, 35, 36, 37, 38, 39, 40, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 57, 60,
    61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 77, 78, 82, 83, 84, 86, 89, 90, 91, 95, 99, 100, 101,
    102, 103, 107, 109, 110, 111, 113, 115, 117, 118, 119, 120, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132,
    133, 134, 135, 138, 900,
];

/// DATA_ONEOF as a bitmap (bit f of word f / 64), to build PACKET_SLOT.
const DATA_ONEOF_BITS: [u64; 16] = {
    let mut bits = [0u64; 16];
    let mut i = 0;
    while i < DATA_ONEOF.len() {
        let f = DATA_ONEOF[i] as usize;
        bits[f / 64] |= 1 << (f % 64);
        i += 1;
    }
    bits
};


// Slots of the TracePacket fields read here (S_IGNORED: every other field).
const S_IGNORED: usize = 0;
const S_TIMESTAMP: usize = 1;
const S_CLOCK_ID: usize = 2;
const S_SEQ_ID: usize = 3;
const S_CLEARED: usize = 4;
const S_FLAGS: usize = 5;
const S_INTERNED: usize = 6;
const S_DEFAULTS: usize = 7;
const S_FRAME_TIMELINE: usize = 8;
const S_DATA: usize = 9; // any member of the data oneof
const S_DROPPED: usize = 10;
const S_COUNT: usize = 11;

/// A TracePacket field's slot by field number (numbers beyond the table share its last entry, which is ignored).
const PACKET_SLOT: [u8; 1024] = {
    let mut t = [S_IGNORED as u8; 1024];
    let mut f = 0;
    while f < 1023 {
        if DATA_ONEOF_BITS[f / 64] & (1 << (f % 64)) != 0 {
            t[f] = S_DATA as u8;
        }
        f += 1;
    }
    t[P_TIMESTAMP as usize] = S_TIMESTAMP as u8;
    t[P_TIMESTAMP_CLOCK_ID as usize] = S_CLOCK_ID as u8;
    t[P_TRUSTED_SEQ_ID as usize] = S_SEQ_ID as u8;
    t[P_INCREMENTAL_STATE_CLEARED as usize] = S_CLEARED as u8;
    t[P_SEQUENCE_FLAGS as usize] = S_FLAGS as u8;
    t[P_INTERNED_DATA as usize] = S_INTERNED as u8;
    t[P_TRACE_PACKET_DEFAULTS as usize] = S_DEFAULTS as u8;
    t[FRAME_TIMELINE_FIELD as usize] = S_FRAME_TIMELINE as u8;
    t[P_PREVIOUS_PACKET_DROPPED as usize] = S_DROPPED as u8;
    t
};

// TracePacket fields read here.
const P_FTRACE_EVENTS: u32 = 1;
const P_PROCESS_TREE: u32 = 2;
const P_CLOCK_SNAPSHOT: u32 = 6;
const P_TIMESTAMP: u32 = 8;
const P_TRUSTED_SEQ_ID: u32 = 10;
const P_TRACK_EVENT: u32 = 11;
const P_INTERNED_DATA: u32 = 12;
const P_SEQUENCE_FLAGS: u32 = 13;
const P_INCREMENTAL_STATE_CLEARED: u32 = 41;
const P_PREVIOUS_PACKET_DROPPED: u32 = 42;
const P_THREAD_DESCRIPTOR: u32 = 44;
const P_SYSTEM_INFO: u32 = 45;
const P_TIMESTAMP_CLOCK_ID: u32 = 58;
const P_TRACE_PACKET_DEFAULTS: u32 = 59;
const P_TRACK_DESCRIPTOR: u32 = 60;
const P_CPU_INFO: u32 = 67;
const P_TRACE_CONFIG: u32 = 33;
const P_COMPRESSED_PACKETS: u32 = 50;
const P_ZSTD_COMPRESSED_PACKETS: u32 = 133;
/// The first bytes of a zstd frame (RFC 8878): the tracing service's zstd compressor wrote its frames into field 50
/// before field 133 was given to them, so the content, not the field, says which codec it is.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
// Bounds on compressed packets, as io/budget.py bounds every other decompression: the bytes they may inflate to
// in one file (budget.MAX_STREAM_BYTES) and the ratio past a floor (budget.MAX_RATIO, budget.RATIO_FLOOR). Perfetto
// compresses a few hundred kB of packets at a time, at 5-10:1.
pub const MAX_INFLATED: u64 = 1 << 30;
pub const MAX_INFLATE_RATIO: u64 = 200;
pub const INFLATE_RATIO_FLOOR: u64 = 64 << 20;

const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;
/// TraceConfig.unique_session_name of the battery-tracing session, whose ftrace data trace processor keeps whole.
const BATTERY_SESSION: &str = "session_with_lightweight_battery_tracing";

// FtraceEvent fields (the `event` oneof members read here).
const FE_PRINT: u32 = 3;
const FE_SCHED_SWITCH: u32 = 4;
const FE_CPU_FREQUENCY: u32 = 11;
const FE_CPU_IDLE: u32 = 13;
const FE_SCHED_WAKEUP: u32 = 17;
const FE_SCHED_BLOCKED_REASON: u32 = 18;
const FE_SCHED_WAKING: u32 = 20;
const FE_BLOCK_RQ_ISSUE: u32 = 45;
const FE_BINDER_TRANSACTION: u32 = 50;
const FE_BINDER_TRANSACTION_RECEIVED: u32 = 51;
const FE_SCHED_WAKEUP_NEW: u32 = 114;
const FE_BLOCK_RQ_COMPLETE: u32 = 125;
const FE_TASK_NEWTASK: u32 = 235;
/// clone(2)'s flag for a thread of the caller's process (task_newtask.clone_flags)
const CLONE_THREAD: u64 = 0x10000;
const FE_TASK_RENAME: u32 = 236;

/// Per-sequence incremental state: interned strings and packet defaults.
#[derive(Default, Clone)]
struct Sequence {
    event_names: HashMap<u64, String>,
    kernel_symbols: HashMap<u64, String>,
    clock_id: Option<u32>,
    track_uuid: Option<u64>,
    thread: Option<(i64, i64)>, // (tid, pid) from a legacy ThreadDescriptor packet
    clocks: Vec<SeqClock>,      // sequence-scoped clocks (ids 64-127) its clock snapshots defined
    // a packet of the sequence was lost (previous_packet_dropped): its incremental state (clocks, interned data) is
    // unknown until the next reset, as trace processor holds it
    lost: bool,
}

/// A sequence-scoped clock (ClockSnapshot.Clock with an id of 64-127, valid only on the sequence that wrote the
/// snapshot; the Perfetto SDK's track events use one, incremental): its reading now, in its units, and the builtin
/// clock reading taken with it at the snapshot.
#[derive(Clone, Copy)]
struct SeqClock {
    id: u32,
    incremental: bool, // each packet's timestamp is a delta from the last one on this clock
    unit_ns: i64,      // unit_multiplier_ns (1 when absent)
    value: i64,        // the last timestamp on it (incremental clocks), in units
    at_snapshot: i64,  // its reading at the snapshot, in units
    builtin: (u32, i64), // (builtin clock, its reading in ns) at the snapshot: BOOTTIME when the snapshot has it
}

impl SeqClock {
    /// A packet's timestamp on this clock as (builtin clock, ns): incremental clocks move by it first.
    /// None when the time does not fit a signed 64-bit count of ns (damaged or hostile values): the clock does not
    /// move then.
    fn resolve(&mut self, ts: i64) -> Option<(u32, i64)> {
        let units = if self.incremental {
            if ts < 0 {
                return None; // a delta past 2^63 (the field is unsigned): no real delta
            }
            self.value.checked_add(ts)?
        } else {
            ts
        };
        let ns = units.checked_sub(self.at_snapshot)?.checked_mul(self.unit_ns)?.checked_add(self.builtin.1)?;
        if self.incremental {
            self.value = units;
        }
        Some((self.builtin.0, ns))
    }
}

/// First (lowest) and last id of sequence-scoped clocks.
const SEQ_CLOCK_FIRST: u32 = 64;
const SEQ_CLOCK_LAST: u32 = 127;

/// Process and thread declarations, in file order (the TraceBuilder lets the first pid/name win).
pub enum Decl {
    Process { pid: i64, name: Option<String>, ppid: Option<i64> },
    Thread { tid: i64, pid: Option<i64>, name: Option<String> },
}

/// A track-event slice begin, end or instant before its thread is known (tracks may be described after their
/// events).
struct TrackEvent {
    ts: i64,
    clock: u32,
    uuid: Option<u64>,
    seq_thread: Option<(i64, i64)>,
    kind: u8,
    name: String,
}

// TrackEvent.type values read here (track_event.proto): slice begin and end, and instants (trace processor makes an
// instant a slice of duration 0 on its track).
const TE_SLICE_BEGIN: u64 = 1;
const TE_SLICE_END: u64 = 2;
const TE_INSTANT: u64 = 3;

/// Everything the reader hands over. Column groups share one length each.
#[derive(Default)]
pub struct Out {
    // sched_switch: ts, cpu, prev tid, prev_state (kernel integer), next tid
    pub sw: [Vec<i64>; 5],
    // sched_waking / sched_wakeup_new: ts, tid, target cpu, waker tid
    pub wk: [Vec<i64>; 4],
    // sched_wakeup (used only when the trace has no sched_waking): ts, tid, target cpu, waker tid
    pub wakeup: [Vec<i64>; 4],
    pub idle: [Vec<i64>; 3], // ts, state, cpu
    pub freq: [Vec<i64>; 3], // ts, kHz, cpu
    // atrace prints, parsed (slice events, counters, thread pids, warnings)
    pub atrace: Parsed,
    pub print_seq: i64,
    pub comms: Vec<(i64, String)>, // first comm seen per tid, in order
    pub renames: Vec<(i64, i64, String)>, // (ts, tid, new comm): task_rename
    pub newtasks: Vec<(i64, i64, i64, bool)>, // (ts, new tid, creating tid, CLONE_THREAD): task_newtask
    pub names: Vec<(i64, u32, i64, Option<i64>, String)>, // (ts, clock, tid, pid, name): process_tree threads
    pub decls: Vec<Decl>,
    pub cpu_info: Vec<(Option<String>, i64, i64)>, // (processor, index, max kHz)
    pub metadata: Vec<(&'static str, String)>,
    pub kernel: Option<String>,
    // binder_transaction: ts, tid, debug_id, reply, flags, code, to_proc, to_thread
    // binder_transaction in the TraceBuilder's row order: ts, tid, debug_id, to_proc, to_thread, reply, flags, code
    pub binder_tx: [Vec<i64>; 8],
    pub binder_rx: [Vec<i64>; 3],
    pub blocked_ts: Vec<i64>,
    pub blocked_tid: Vec<i64>,
    pub blocked: Vec<i32>, // each reason's (function, io_wait) as its place in `payloads`
    pub payloads: crate::states::Payloads,
    // block_rq_issue: ts, dev, sector, nr_sector, rwbs, bytes, tid, comm
    // (in the TraceBuilder's row order: ts, dev, sector, nr_sectors, bytes, rwbs, tid, comm)
    pub block_issue: Vec<(i64, i64, i64, i64, i64, String, Option<i64>, Option<String>)>,
    pub block_complete: Vec<(i64, i64, i64, i64, String, i64)>,
    // FrameTimeline starts: ts (boot clock after finish), clock, cookie, member (1-4), pid, token,
    // display_frame_token, layer, jank bits, present, on_time, gpu, prediction, severity
    pub ft_start: Vec<FtStart>,
    pub ft_end: Vec<(i64, u32, i64)>, // ts, clock, cookie
    pub ft_events: i64,
    pub ft_broken: i64,
    pub ft_incomplete: i64,
    // track events on thread tracks, in file order: ts, tid, pid, TrackEvent.type (1 slice begin, 2 slice end,
    // 3 instant), name (None for an end)
    pub slices: Vec<(i64, i64, i64, u8, Option<String>)>,
    pub track_skipped: i64,
    pub foreign_clock_events: i64,
    pub lost_state_events: i64,     // track events skipped while their sequence's state was lost (a dropped packet)
    pub clock_overflow_events: i64, // track events whose time on a sequence clock does not fit 64 bits
    pub lost_bundles: i64,
    pub unresolved_callers: i64,
    pub saw_waking: bool,
    pub unconvertible_clocks: Vec<u32>,
    pub packets: i64,
    // ftrace events left out for being older than the time every CPU's data is whole from: (count, that time)
    pub before_valid: (i64, i64),
    pub compressed_packets: i64, // TracePacket.compressed_packets records inflated
    pub compressed_bytes: u64,   // their zlib bytes
    pub inflated_bytes: u64,     // and what they inflated to
    pub trace_configs: i64, // TraceConfig packets: one per capture, so more means traces concatenated
}

pub struct FtStart {
    pub ts: i64,
    pub cookie: i64,
    pub pid: i64,
    pub token: i64,
    // the optional numbers as the table's int64 view of the wire's u64: i64::MIN (FT_NONE) for an absent field
    // (8 bytes each where Option<u64> took 16: a trace holds thousands of starts until the table is made)
    pub dft: i64,
    pub jank: i64,
    pub present: i64,
    pub prediction: i64,
    pub severity: i64,
    pub layer: Option<Arc<str>>, // shared by the events of one layer
    pub clock: u32,
    pub member: u32,
    pub on_time: Option<bool>,
    pub gpu: Option<bool>,
}

/// An absent optional number of a FrameTimeline start (FtStart), as the table's int64 columns hold it.
pub const FT_NONE: i64 = i64::MIN;

/// Lengths of every output at a packet boundary, to roll back a packet that fails half-way.
struct Mark {
    lens: [usize; 32],
    wakeup_comms: usize,
    saw_waking: bool,
    counters: [i64; 9],
    atrace_side: (usize, usize, Option<i64>, Option<i64>),
}

/// The decoder state across packets and chunks.
pub struct Decoder {
    pub out: Out,
    seqs: HashMap<u32, Sequence>,
    running: HashMap<i64, i64>, // cpu -> tid last switched in (compact_sched has no prev_pid)
    comm_seen: TidSet,
    track_threads: HashMap<u64, (i64, i64)>,
    track_events: Vec<TrackEvent>,
    snapshots: Vec<HashMap<u32, i64>>,
    // comms of sched_wakeup events, applied at the end when the trace had no sched_waking: the first per thread not
    // named before (a later one could change nothing), with the set of their tids
    wakeup_comms: Vec<(i64, Vec<u8>)>,
    wakeup_comm_tids: TidSet,
    pending: Vec<u8>,       // bytes of a packet cut by the chunk boundary
    compact: CompactArrays, // scratch arrays of compact_sched
    event_spans: Vec<(usize, usize)>, // scratch: a bundle's FtraceEvent messages (start, end)
    caller_text: String, // scratch: an unresolved blocked-reason caller as text
    layers: HashSet<Arc<str>>, // FrameTimeline layer names
    first_bundle_cpus: HashSet<i64>, // CPUs whose first ftrace bundle was read
    valid_from: Option<i64>, // the time from which every CPU's ftrace data is whole (their first bundles say)
    battery_session: bool,   // the capture is Android's lightweight battery-tracing session
    inflated: Vec<u8>,      // scratch: the inflated bytes of compressed packets
    inflating: bool,        // decoding the packets inside compressed packets (they may not nest)
    packet_error: Option<String>, // why a packet failed, when more can be said than "does not decode"
    pub offset: u64,        // file offset of the first byte not yet framed
    pub stopped: Option<(u64, String)>,
}

impl Decoder {
    pub fn new() -> Self {
        Decoder {
            out: Out::default(),
            seqs: HashMap::default(),
            running: HashMap::default(),
            comm_seen: TidSet::default(),
            track_threads: HashMap::default(),
            track_events: Vec::new(),
            snapshots: Vec::new(),
            wakeup_comms: Vec::new(),
            wakeup_comm_tids: TidSet::default(),
            pending: Vec::new(),
            compact: CompactArrays::default(),
            event_spans: Vec::new(),
            caller_text: String::new(),
            layers: HashSet::default(),
            first_bundle_cpus: HashSet::default(),
            valid_from: None,
            battery_session: false,
            inflated: Vec::new(),
            inflating: false,
            packet_error: None,
            offset: 0,
            stopped: None,
        }
    }

    // ---- framing ---------------------------------------------------------------------------------------------
    /// After `done` of a file's `total` bytes: room in each event column for what the rest of the file holds at the
    /// same rate (its length so far times the bytes to come over the bytes read), so that the columns do not grow by
    /// doubling (each doubling copied the column: a twentieth of a sched-heavy trace's decode, and the old and new
    /// buffers together at each copy). The memory reserved and not written is not resident; at most RESERVE_AHEAD
    /// entries a column (8 MB of i64: a first chunk denser than the rest reserves little in all; past it a column
    /// grows by doubling, in place by mremap for large buffers).
    pub fn reserve_ahead(&mut self, done: u64, total: u64) {
        const RESERVE_AHEAD: usize = 1 << 20;
        if done == 0 || total <= done {
            return;
        }
        let ratio = (total - done) as f64 / done as f64;
        let scale = |n: usize| ((n as f64 * ratio * 1.1) as usize).min(RESERVE_AHEAD);
        let o = &mut self.out;
        for group in [&mut o.sw[..], &mut o.wk[..], &mut o.idle[..], &mut o.freq[..], &mut o.binder_tx[..],
                      &mut o.binder_rx[..]] {
            let n = scale(group[0].len());
            group.iter_mut().for_each(|c| c.reserve(n));
        }
        let n = scale(o.blocked_ts.len());
        o.blocked_ts.reserve(n);
        o.blocked_tid.reserve(n);
        o.ft_start.reserve(scale(o.ft_start.len()));
        o.ft_end.reserve(scale(o.ft_end.len()));
        o.atrace.reserve_scaled(scale);
    }

    /// Frames and decodes the complete packets of the next chunk of the file; a packet cut at the end waits for
    /// the next chunk.
    pub fn feed(&mut self, chunk: &[u8]) {
        if self.stopped.is_some() {
            return;
        }
        let mut used = 0;
        if !self.pending.is_empty() {
            // the record the last chunk cut is completed from this chunk's first bytes (its header, at most 11
            // bytes, then the rest of its length) and framed alone; the chunk itself is framed where it lies rather
            // than copied behind the pending bytes
            if record_end(&self.pending).is_none() {
                used = chunk.len().min(16);
                self.pending.extend_from_slice(&chunk[..used]);
            }
            if let Some(end) = record_end(&self.pending) {
                let k = end.saturating_sub(self.pending.len()).min(chunk.len() - used);
                self.pending.extend_from_slice(&chunk[used..used + k]);
                used += k;
            }
            let buf = std::mem::take(&mut self.pending);
            let framed = self.frame(&buf, false);
            if self.stopped.is_some() {
                return;
            }
            let left = buf.len() - framed; // a suffix of buf: bytes of this chunk if no more than `used`
            if left > used {
                // the record is still cut (the chunk ended first): all of the chunk is in it
                self.pending = buf;
                self.pending.drain(..framed);
                return;
            }
            used -= left;
            self.pending = buf;
            self.pending.clear();
        }
        let rest = &chunk[used..];
        let framed = self.frame(rest, false);
        if self.stopped.is_none() && framed < rest.len() {
            self.pending.extend_from_slice(&rest[framed..]);
        }
    }

    /// The end of the file: a packet still pending is cut off.
    pub fn finish_input(&mut self) {
        if self.stopped.is_none() && !self.pending.is_empty() {
            let buf = std::mem::take(&mut self.pending);
            self.frame(&buf, true);
        }
    }

    /// Walks Trace.packet records (field 1, length-delimited) from the start of buf; returns the bytes used.
    /// At the end of the data (last=true) a record that does not fit stops the reading.
    fn frame(&mut self, buf: &[u8], last: bool) -> usize {
        let mut pos = 0usize;
        let n = buf.len();
        while pos < n {
            let at = self.offset;
            if buf[pos] != 0x0A {
                self.stop(at, format!("unexpected field tag 0x{:02x}", buf[pos]));
                return pos;
            }
            let mut r = Reader { buf, pos: pos + 1 };
            let len = match r.varint() {
                Ok(v) => v as usize,
                Err(_) if !last && n - pos <= 11 => return pos,
                Err(_) => {
                    self.stop(at, "record length cut off".into());
                    return pos;
                }
            };
            let start = r.pos;
            // len is the file's word: compare against what is left, so a length near usize::MAX cannot wrap
            if len > n - start {
                if !last {
                    return pos;
                }
                self.stop(at, format!("record of {} bytes runs past the end of the file", len));
                return pos;
            }
            // a packet that fails leaves nothing behind: packet() rolls back what it had added
            match self.packet(&buf[start..start + len]) {
                Ok(n) => self.out.packets += n,
                Err(_) => {
                    let why = self.packet_error.take().unwrap_or_else(|| "packet does not decode".into());
                    self.stop(at, why);
                    return pos;
                }
            }
            let used = start + len - pos;
            self.offset += used as u64;
            pos = start + len;
        }
        pos
    }

    fn stop(&mut self, at: u64, why: String) {
        self.stopped = Some((at, why));
    }

    fn mark(&self) -> Mark {
        let o = &self.out;
        let lens = [
            o.sw[0].len(), o.sw[1].len(), o.sw[2].len(), o.sw[3].len(), o.sw[4].len(),
            o.wk[0].len(), o.wk[1].len(), o.wk[2].len(), o.wk[3].len(),
            o.wakeup[0].len(), o.wakeup[1].len(), o.wakeup[2].len(), o.wakeup[3].len(),
            o.idle[0].len(), o.idle[1].len(), o.idle[2].len(), o.freq[0].len(), o.freq[1].len(), o.freq[2].len(),
            o.atrace.ts.len() + (o.atrace.c_ts.len() << 32), o.comms.len(), o.renames.len() + (o.newtasks.len() << 32), o.names.len(), o.decls.len(), o.cpu_info.len(),
            o.metadata.len(), o.binder_tx[0].len(), o.binder_rx[0].len(), o.blocked.len() + (o.payloads.len() << 32),
            o.block_issue.len() + (o.block_complete.len() << 32), o.ft_start.len() + (o.ft_end.len() << 32),
            self.track_events.len() + (self.snapshots.len() << 32),
        ];
        Mark {
            lens,
            wakeup_comms: self.wakeup_comms.len(),
            atrace_side: o.atrace.side_lens(),
            saw_waking: o.saw_waking,
            counters: [o.ft_events, o.ft_broken, o.ft_incomplete, o.foreign_clock_events, o.lost_bundles,
                       o.unresolved_callers, o.trace_configs, o.lost_state_events, o.clock_overflow_events],
        }
    }

    fn rollback(&mut self, m: Mark) {
        let l = m.lens;
        let o = &mut self.out;
        for (i, c) in o.sw.iter_mut().enumerate() { c.truncate(l[i]); }
        for (i, c) in o.wk.iter_mut().enumerate() { c.truncate(l[5 + i]); }
        for (i, c) in o.wakeup.iter_mut().enumerate() { c.truncate(l[9 + i]); }
        for (tid, _) in self.wakeup_comms.drain(m.wakeup_comms..) {
            self.wakeup_comm_tids.remove(tid);
        }
        for (i, c) in o.idle.iter_mut().enumerate() { c.truncate(l[13 + i]); }
        for (i, c) in o.freq.iter_mut().enumerate() { c.truncate(l[16 + i]); }
        o.atrace.truncate(l[19] & 0xFFFF_FFFF, l[19] >> 32, m.atrace_side);
        for (tid, _) in o.comms.drain(l[20]..) {
            self.comm_seen.remove(tid);
        }
        o.renames.truncate(l[21] & 0xFFFF_FFFF);
        o.newtasks.truncate(l[21] >> 32);
        o.names.truncate(l[22]);
        o.decls.truncate(l[23]);
        o.cpu_info.truncate(l[24]);
        o.metadata.truncate(l[25]);
        o.binder_tx.iter_mut().for_each(|c| c.truncate(l[26]));
        o.binder_rx.iter_mut().for_each(|c| c.truncate(l[27]));
        o.blocked.truncate(l[28] & 0xFFFF_FFFF);
        o.blocked_ts.truncate(l[28] & 0xFFFF_FFFF);
        o.blocked_tid.truncate(l[28] & 0xFFFF_FFFF);
        o.payloads.truncate(l[28] >> 32);
        o.block_issue.truncate(l[29] & 0xFFFF_FFFF);
        o.block_complete.truncate(l[29] >> 32);
        o.ft_start.truncate(l[30] & 0xFFFF_FFFF);
        o.ft_end.truncate(l[30] >> 32);
        self.track_events.truncate(l[31] & 0xFFFF_FFFF);
        self.snapshots.truncate(l[31] >> 32);
        o.saw_waking = m.saw_waking;
        [o.ft_events, o.ft_broken, o.ft_incomplete, o.foreign_clock_events, o.lost_bundles, o.unresolved_callers,
         o.trace_configs, o.lost_state_events, o.clock_overflow_events] = m.counters;
    }

    // ---- packets ---------------------------------------------------------------------------------------------
    /// A packet's time on a sequence-scoped clock, or on a sequence whose state a lost packet left unknown (kept out
    /// of packet(), whose FrameTimeline path the compiler inlines whole only while packet() stays small): the
    /// sequence's clock moves (an incremental one) and gives the builtin clock and time. A track event the lost state
    /// leaves unreadable (its time on an incremental clock, or the packet says it needs the state), or whose time
    /// does not fit, is counted, not read. The packet of a clock snapshot does not move the clocks it defines (the
    /// first timestamp after it is relative to it); a clock no snapshot of the sequence defined is left as it is
    /// (its track events are counted later).
    #[inline(never)]
    fn sequence_time(&mut self, seq_id: u32, clock: u32, ts: Option<i64>, kind: u32, lost: bool, flags: u64)
                     -> SeqTime {
        let track = kind == P_TRACK_EVENT;
        let mut unreadable = lost && track && flags & SEQ_NEEDS_INCREMENTAL_STATE != 0;
        let mut time = SeqTime::Unchanged;
        if let (true, Some(ts), false) = ((SEQ_CLOCK_FIRST..=SEQ_CLOCK_LAST).contains(&clock), ts,
                                          kind == P_CLOCK_SNAPSHOT) {
            let seq = self.seqs.get_mut(&seq_id).unwrap();
            if let Some(c) = seq.clocks.iter_mut().find(|c| c.id == clock) {
                if lost && c.incremental {
                    unreadable = true;
                } else if let Some((b, t)) = c.resolve(ts) {
                    time = SeqTime::On(b, t);
                } else if track {
                    self.out.clock_overflow_events += 1;
                    return SeqTime::Unreadable;
                }
            }
        }
        if unreadable && track {
            self.out.lost_state_events += 1;
            return SeqTime::Unreadable;
        }
        time
    }

    /// Ftrace events older than `valid_from` are left out, as trace processor leaves them out of its tables by
    /// default: before it some CPU's older data was overwritten (a ring buffer), so the scheduling there is missing
    /// a CPU's switches and wakings and its thread states would be wrong. Names (comms, renames) are kept.
    fn drop_before_valid(&mut self) {
        let Some(t) = self.valid_from else { return };
        if self.battery_session {
            return; // trace processor keeps the battery-tracing session's ftrace data whole (b/344969928)
        }
        let o = &mut self.out;
        let mut dropped = 0i64;
        for group in [&mut o.sw[..], &mut o.wk[..], &mut o.wakeup[..], &mut o.idle[..], &mut o.freq[..],
                      &mut o.binder_tx[..], &mut o.binder_rx[..]] {
            if let Some(keep) = keep_from(&group[0], t, &mut dropped) {
                group.iter_mut().for_each(|c| retain_rows(c, &keep));
            }
        }
        if let Some(keep) = keep_from(&o.blocked_ts, t, &mut dropped) {
            retain_rows(&mut o.blocked_ts, &keep);
            retain_rows(&mut o.blocked_tid, &keep);
            retain_rows(&mut o.blocked, &keep);
        }
        let before = o.block_issue.len() + o.block_complete.len();
        o.block_issue.retain(|r| r.0 >= t);
        o.block_complete.retain(|r| r.0 >= t);
        dropped += (before - o.block_issue.len() - o.block_complete.len()) as i64;
        if let Some(keep) = keep_from(&o.atrace.ts, t, &mut dropped) {
            o.atrace.retain_events(&keep);
        }
        if let Some(keep) = keep_from(&o.atrace.c_ts, t, &mut dropped) {
            o.atrace.retain_counters(&keep);
        }
        o.atrace.start_at(t);
        o.before_valid = (dropped, t);
    }

    /// One TracePacket; the number of packets it held (1, or those inside compressed packets).
    fn packet(&mut self, buf: &[u8]) -> WireResult<i64> {
        let mut r = Reader::new(buf);
        // each field is put in its slot (the last of a field wins, as in protobuf) without branching on its number:
        // a packet's fields come in no order a branch predictor learns, and a match on them compiled to an indirect
        // jump that was the costliest instruction of a FrameTimeline packet
        let mut slots: [Option<(u32, Val)>; S_COUNT] = [None; S_COUNT];
        let mut ft_count = 0usize;
        while let Some((f, v)) = r.field()? {
            slots[PACKET_SLOT[(f as usize).min(PACKET_SLOT.len() - 1)] as usize] = Some((f, v));
            ft_count += (f == FRAME_TIMELINE_FIELD) as usize;
        }
        let val = |slot: usize| slots[slot].map(|(_, v)| v);
        let timestamp: Option<u64> = val(S_TIMESTAMP).map(|v| v.u64());
        let clock_id: Option<u32> = val(S_CLOCK_ID).map(|v| v.u64() as u32);
        let seq_id = val(S_SEQ_ID).map_or(0, |v| v.u64() as u32);
        let cleared = val(S_CLEARED).is_some_and(|v| v.u64() != 0);
        let dropped = val(S_DROPPED).is_some_and(|v| v.u64() != 0);
        let flags = val(S_FLAGS).map_or(0, |v| v.u64() as u32 as u64);
        let interned: Option<&[u8]> = val(S_INTERNED).map(|v| v.bytes());
        let defaults: Option<&[u8]> = val(S_DEFAULTS).map(|v| v.bytes());
        let data: Option<(u32, Val)> = slots[S_DATA];
        if let Some((P_COMPRESSED_PACKETS | P_ZSTD_COMPRESSED_PACKETS, v)) = data {
            return self.compressed_packets(v.bytes());
        }
        // FrameTimeline events: nearly always one a packet (the others, in order, only when there are more)
        let mut ft_first: Option<&[u8]> = None;
        let mut ft_rest: Vec<&[u8]> = Vec::new();
        if ft_count == 1 {
            if let Some(Val::Bytes(b)) = val(S_FRAME_TIMELINE) {
                ft_first = Some(b);
            }
        } else if ft_count > 1 {
            let mut r = Reader::new(buf);
            while let Some((f, v)) = r.field()? {
                if let (FRAME_TIMELINE_FIELD, Val::Bytes(b)) = (f, v) {
                    if ft_first.is_none() {
                        ft_first = Some(b);
                    } else {
                        ft_rest.push(b);
                    }
                }
            }
        }
        if data.is_none() && timestamp.is_some() && interned.is_none() && defaults.is_none() {
            // FrameTimeline packets are numerous: no sequence state is touched
            self.frame_timeline(ft_first, &ft_rest, timestamp.unwrap(), clock_id, seq_id);
            return Ok(1);
        }
        // the sequence's incremental state (cleared: interned data goes, defaults stay; a packet lost before this one
        // on a sequence seen before leaves the state unknown until the next clear)
        let new_seq = dropped && !self.seqs.contains_key(&seq_id);
        let seq = self.seqs.entry(seq_id).or_default();
        if cleared || flags & SEQ_INCREMENTAL_STATE_CLEARED != 0 {
            seq.event_names.clear();
            seq.kernel_symbols.clear();
            seq.lost = false;
        } else if dropped && !new_seq && seq_id != 0 {
            seq.lost = true;
        }
        let lost = seq.lost;
        if let Some(b) = interned {
            interned_data(b, seq)?;
        }
        if let Some(b) = defaults {
            packet_defaults(b, seq)?;
        }
        let seq_clock = seq.clock_id;
        let ts_raw = timestamp.unwrap_or(0) as i64;
        // the packet's clock: its own, else the sequence default, else the boot clock
        let clock = clock_id.unwrap_or(match seq_clock {
            Some(c) if c != 0 => c,
            _ => BOOTTIME,
        });
        let Some((kind, v)) = data else {
            if let Some(ts) = timestamp {
                self.frame_timeline(ft_first, &ft_rest, ts, clock_id, seq_id);
            }
            return Ok(1);
        };
        // a timestamp on a sequence-scoped clock: the sequence's clock moves (an incremental one) and gives the
        // builtin clock and time; the packet of a clock snapshot does not move the clocks it defines (the first
        // timestamp after it is relative to it)
        let (mut ts_raw, mut clock, mut clock_id) = (ts_raw, clock, clock_id);
        if lost || (SEQ_CLOCK_FIRST..=SEQ_CLOCK_LAST).contains(&clock) {
            match self.sequence_time(seq_id, clock, timestamp.map(|_| ts_raw), kind, lost, flags) {
                SeqTime::Unchanged => {}
                SeqTime::On(c, t) => (clock, ts_raw, clock_id) = (c, t, Some(c)),
                SeqTime::Unreadable => return Ok(1),
            }
        }
        // the lengths of the outputs, taken only here: what comes before adds nothing to them (a packet's fields
        // are all read before any is used; FrameTimeline events cannot fail), and most packets of some traces are
        // FrameTimeline packets, for which taking them cost more than the event
        if kind == P_TRACE_CONFIG {
            self.out.trace_configs += 1;
            self.battery_session |= trace_config_session(v.bytes()) == Some(BATTERY_SESSION.as_bytes());
            return Ok(1);
        }
        if !matches!(kind, P_FTRACE_EVENTS | P_PROCESS_TREE | P_TRACK_EVENT | P_TRACK_DESCRIPTOR | P_THREAD_DESCRIPTOR
                     | P_CPU_INFO | P_CLOCK_SNAPSHOT | P_SYSTEM_INFO) {
            return Ok(1); // not read here (perf samples, stats, logs...)
        }
        let mark = self.mark();
        let r = self.packet_data(kind, v, ts_raw, clock, clock_id, seq_id);
        if r.is_err() {
            self.rollback(mark);
        }
        r.map(|_| 1)
    }

    /// TracePacket.compressed_packets (written when the trace config asks for COMPRESSION_TYPE_DEFLATE) or
    /// zstd_compressed_packets: a zlib stream or a zstd frame of Trace.packet records, each read as a packet of the
    /// file. The packets before a broken one are kept
    /// (each rolls back alone); the reason is left in `packet_error` for the stop message. Inflated bytes count
    /// against MAX_INFLATED for the whole file and MAX_INFLATE_RATIO (past INFLATE_RATIO_FLOOR), as every
    /// decompression of the project is bounded (io/budget.py). Returns 0: the packets inside are counted here.
    #[cold]
    #[inline(never)]
    fn compressed_packets(&mut self, z: &[u8]) -> WireResult<i64> {
        if self.inflating {
            return self.packet_failed("compressed packets nested in compressed packets".into());
        }
        let mut buf = std::mem::take(&mut self.inflated);
        let compressed = self.out.compressed_bytes + z.len() as u64;
        let cap = MAX_INFLATED.min(INFLATE_RATIO_FLOOR.max(MAX_INFLATE_RATIO.saturating_mul(compressed)));
        let room = cap.saturating_sub(self.out.inflated_bytes) as usize;
        let inflated = if z.starts_with(&ZSTD_MAGIC) { inflate_zstd(z, &mut buf, room) } else {
            inflate_zlib(z, &mut buf, room)
        };
        let r = match inflated {
            Ok(()) => {
                self.out.compressed_packets += 1;
                self.out.compressed_bytes = compressed;
                self.out.inflated_bytes += buf.len() as u64;
                self.inflating = true;
                let r = self.inner_packets(&buf);
                self.inflating = false;
                r
            }
            Err(Inflate::PastCap) => self.packet_failed(format!(
                "compressed packets inflate past {cap} bytes (limit: {MAX_INFLATED} a file, {MAX_INFLATE_RATIO}:1 past \
                 {INFLATE_RATIO_FLOOR}); refused (possible decompression bomb)")),
            Err(Inflate::Broken(why)) => self.packet_failed(format!("compressed packets do not decompress: {why}")),
        };
        self.inflated = buf;
        r
    }

    /// The Trace.packet records of inflated compressed packets, each decoded as a packet and counted.
    fn inner_packets(&mut self, buf: &[u8]) -> WireResult<i64> {
        let mut r = Reader::new(buf);
        let mut index = 0usize;
        loop {
            let field = match r.field() {
                Ok(Some(field)) => field,
                Ok(None) => return Ok(0),
                Err(_) => return self.packet_failed(format!("compressed packets: record {} inside is cut off or \
                                                             malformed", index + 1)),
            };
            let (1, Val::Bytes(packet)) = field else {
                return self.packet_failed(format!("compressed packets: record {} inside is not a trace packet \
                                                   (field {})", index + 1, field.0));
            };
            match self.packet(packet) {
                Ok(n) => self.out.packets += n,
                Err(e) if self.packet_error.is_some() => return Err(e),
                Err(_) => return self.packet_failed(format!("packet {} inside compressed packets does not decode",
                                                            index + 1)),
            }
            index += 1;
        }
    }

    fn packet_failed(&mut self, why: String) -> WireResult<i64> {
        self.packet_error = Some(why);
        Err("compressed packets")
    }

    /// The data of a packet (the `data` oneof member `kind`); an error may leave part of it added.
    fn packet_data(&mut self, kind: u32, v: Val, ts_raw: i64, clock: u32, clock_id: Option<u32>, seq_id: u32)
                   -> WireResult<()> {
        match kind {
            P_FTRACE_EVENTS => self.ftrace_bundle(v.bytes(), seq_id)?,
            P_PROCESS_TREE => self.process_tree(v.bytes(), ts_raw, clock)?,
            P_TRACK_EVENT => self.track_event(v.bytes(), ts_raw, clock_id, seq_id)?,
            P_TRACK_DESCRIPTOR => self.track_descriptor(v.bytes())?,
            P_THREAD_DESCRIPTOR => {
                let (mut tid, mut pid, mut name) = (0i64, 0i64, None);
                let mut t = Reader::new(v.bytes());
                while let Some((f, v)) = t.field()? {
                    match f {
                        1 => pid = v.i32(),
                        2 => tid = v.i64(),
                        5 => name = Some(text(v.bytes())),
                        _ => {}
                    }
                }
                self.seqs.get_mut(&seq_id).unwrap().thread = Some((tid, pid));
                self.out.decls.push(Decl::Thread {
                    tid,
                    pid: nonzero(pid),
                    name: name.filter(|s| !s.is_empty()),
                });
            }
            P_CPU_INFO => self.cpu_info(v.bytes())?,
            P_CLOCK_SNAPSHOT => self.clock_snapshot(v.bytes(), seq_id)?,
            P_SYSTEM_INFO => self.system_info(v.bytes())?,
            _ => {}
        }
        Ok(())
    }

    #[inline(always)] // FrameTimeline packets are most of some traces' packets: no call per packet
    fn frame_timeline(&mut self, first: Option<&[u8]>, rest: &[&[u8]], ts: u64, clock_id: Option<u32>, seq_id: u32) {
        let Some(first) = first else { return };
        let clock = match clock_id {
            Some(c) if c != 0 => c,
            _ => match self.seqs.get(&seq_id).and_then(|s| s.clock_id) {
                Some(c) if c != 0 => c,
                _ => BOOTTIME,
            },
        };
        for raw in std::iter::once(first).chain(rest.iter().copied()) {
            self.out.ft_events += 1;
            match decode_ft_event(raw, &mut self.layers) {
                Ok(Some(FtEvent::End(cookie))) => self.out.ft_end.push((ts as i64, clock, cookie)),
                Ok(Some(FtEvent::Start(mut s))) => {
                    s.ts = ts as i64;
                    s.clock = clock;
                    self.out.ft_start.push(s)
                }
                Ok(None) => self.out.ft_incomplete += 1,
                Err(_) => self.out.ft_broken += 1,
            }
        }
    }

    fn system_info(&mut self, b: &[u8]) -> WireResult<()> {
        let mut r = Reader::new(b);
        let (mut fp, mut uts, mut sdk, mut version) = (None, None, 0u64, None);
        while let Some((f, v)) = r.field()? {
            match f {
                1 => uts = Some(v.bytes()),
                2 => fp = Some(text(v.bytes())),
                4 => version = Some(text(v.bytes())),
                5 => sdk = v.u64(),
                _ => {}
            }
        }
        let md = &mut self.out.metadata;
        if let Some(fp) = fp.filter(|s| s.contains('/')) {
            // some builds write an error message here instead
            let parts: Vec<&str> = fp.split('/').collect();
            let device = (parts.len() >= 3).then(|| parts[2].split(':').next().unwrap_or("").to_string());
            md.push(("build", fp.clone()));
            if let Some(d) = device {
                md.push(("device", d));
            }
        }
        if let Some(u) = uts {
            let mut r = Reader::new(u);
            let (mut release, mut machine) = (String::new(), String::new());
            while let Some((f, v)) = r.field()? {
                match f {
                    3 => release = text(v.bytes()),
                    4 => machine = text(v.bytes()),
                    _ => {}
                }
            }
            if !release.is_empty() {
                self.out.kernel = Some(release.clone());
                md.push(("kernel", release));
            }
            if !machine.is_empty() {
                md.push(("arch", machine));
            }
        }
        if sdk != 0 {
            md.push(("android_sdk", sdk.to_string()));
        }
        if let Some(v) = version.filter(|s| !s.is_empty()) {
            md.push(("perfetto_version", v));
        }
        Ok(())
    }

    /// A clock snapshot: builtin clocks (ids below 64) relate the trace's clocks for the whole file; sequence-scoped
    /// ones (64-127) are (re)defined for the sequence that wrote it, against a builtin clock read with them.
    fn clock_snapshot(&mut self, b: &[u8], seq_id: u32) -> WireResult<()> {
        let mut snap = HashMap::default();
        let mut scoped: Vec<SeqClock> = Vec::new();
        let mut r = Reader::new(b);
        while let Some((f, v)) = r.field()? {
            if f == 1 {
                let (mut id, mut ts, mut incremental, mut unit_ns) = (0u32, 0i64, false, 1i64);
                let mut c = Reader::new(v.bytes());
                while let Some((f, v)) = c.field()? {
                    match f {
                        1 => id = v.u64() as u32,
                        2 => ts = v.u64() as i64,
                        3 => incremental = v.u64() != 0,
                        4 => unit_ns = i64::try_from(v.u64()).unwrap_or(i64::MAX).max(1),
                        _ => {}
                    }
                }
                if (SEQ_CLOCK_FIRST..=SEQ_CLOCK_LAST).contains(&id) {
                    let c = SeqClock { id, incremental, unit_ns, value: ts, at_snapshot: ts, builtin: (0, 0) };
                    scoped.push(c);
                } else {
                    snap.insert(id, ts);
                }
            }
        }
        // the builtin reading the sequence's clocks are related to: the boot clock's, else the lowest id's
        let reference = snap.get(&BOOTTIME).map(|&ts| (BOOTTIME, ts))
            .or_else(|| snap.iter().filter(|(&id, _)| id != 0).min_by_key(|(&id, _)| id).map(|(&id, &ts)| (id, ts)));
        // (a sequence-scoped clock needs a sequence: id 0 is none, as trace processor refuses it)
        if let (Some(reference), false, true) = (reference, scoped.is_empty(), seq_id != 0) {
            let seq = self.seqs.entry(seq_id).or_default();
            for mut c in scoped {
                c.builtin = reference;
                seq.clocks.retain(|old| old.id != c.id);
                seq.clocks.push(c);
            }
        }
        if !snap.is_empty() {
            self.snapshots.push(snap);
        }
        Ok(())
    }

    fn cpu_info(&mut self, b: &[u8]) -> WireResult<()> {
        let mut r = Reader::new(b);
        let mut i = 0i64;
        while let Some((f, v)) = r.field()? {
            if f != 1 {
                continue;
            }
            let mut c = Reader::new(v.bytes());
            let mut processor = None;
            let mut freqs: Vec<i64> = Vec::new();
            while let Some((f, v)) = c.field()? {
                match f {
                    1 => processor = Some(text(v.bytes())),
                    2 => repeated(v, &mut freqs, |x| x as u32 as i64)?,
                    _ => {}
                }
            }
            if let Some(m) = freqs.iter().max() {
                self.out.cpu_info.push((processor, i, *m));
            }
            i += 1;
        }
        Ok(())
    }

    fn process_tree(&mut self, b: &[u8], ts: i64, clock: u32) -> WireResult<()> {
        let mut r = Reader::new(b);
        let mut threads = Vec::new();
        while let Some((f, v)) = r.field()? {
            let mut m = Reader::new(v.bytes());
            if f == 1 {
                let (mut pid, mut ppid, mut name) = (0i64, None, None);
                while let Some((f, v)) = m.field()? {
                    match f {
                        1 => pid = v.i32(),
                        2 => ppid = Some(v.i32()),
                        3 if name.is_none() => name = Some(text(v.bytes())),
                        _ => {}
                    }
                }
                self.out.decls.push(Decl::Process { pid, name: name.filter(|s| !s.is_empty()), ppid });
            } else if f == 2 {
                threads.push(v.bytes());
            }
        }
        // processes before threads, as the tree lists them
        for t in threads {
            let (mut tid, mut tgid, mut name) = (0i64, 0i64, String::new());
            let mut m = Reader::new(t);
            while let Some((f, v)) = m.field()? {
                match f {
                    1 => tid = v.i32(),
                    3 => tgid = v.i32(),
                    2 => name = text(v.bytes()),
                    _ => {}
                }
            }
            self.out.decls.push(Decl::Thread { tid, pid: nonzero(tgid), name: None });
            if !name.is_empty() {
                self.out.names.push((ts, clock, tid, nonzero(tgid), name));
            }
        }
        Ok(())
    }
}

/// Where the Trace.packet record at the start of buf ends (the bytes of its tag, length and body), when its header is
/// complete; None while its length is cut off. A header `frame` refuses (another tag) ends at once: frame reads it
/// and stops there.
fn record_end(buf: &[u8]) -> Option<usize> {
    if buf.first() != Some(&0x0A) {
        return Some(0);
    }
    let mut r = Reader { buf, pos: 1 };
    match r.varint() {
        Ok(len) => Some(r.pos.saturating_add(usize::try_from(len).unwrap_or(usize::MAX))),
        Err(_) if buf.len() > 11 => Some(0), // an overlong length: frame stops at it
        Err(_) => None,
    }
}

fn nonzero(v: i64) -> Option<i64> {
    (v != 0).then_some(v)
}

fn interned_data(b: &[u8], seq: &mut Sequence) -> WireResult<()> {
    let mut r = Reader::new(b);
    while let Some((f, v)) = r.field()? {
        if f != 2 && f != 26 {
            continue;
        }
        let (mut iid, mut s) = (0u64, &[][..]);
        let mut m = Reader::new(v.bytes());
        while let Some((g, w)) = m.field()? {
            match g {
                1 => iid = w.u64(),
                2 => s = w.bytes(),
                _ => {}
            }
        }
        if f == 2 {
            seq.event_names.insert(iid, text(s));
        } else {
            seq.kernel_symbols.insert(iid, text(s));
        }
    }
    Ok(())
}

fn packet_defaults(b: &[u8], seq: &mut Sequence) -> WireResult<()> {
    let mut r = Reader::new(b);
    while let Some((f, v)) = r.field()? {
        match f {
            58 => seq.clock_id = Some(v.u64() as u32),
            11 => {
                let mut m = Reader::new(v.bytes());
                while let Some((g, w)) = m.field()? {
                    if g == 11 {
                        seq.track_uuid = Some(w.u64());
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

enum FtEvent {
    Start(FtStart),
    End(i64),
}

/// A FrameTimelineEvent member's fields below 16: each one's last value as a number (bytes: 0), whether it was
/// there, whether it was not a number (bytes or a fixed32 float: an error where a number is read).
struct Fields16 {
    num: [u64; 16],
    present: u32,
    not_int: u32,
}

impl Fields16 {
    #[inline(always)]
    fn int(&self, f: usize) -> WireResult<Option<u64>> {
        if self.present & (1 << f) == 0 {
            Ok(None)
        } else if self.not_int & (1 << f) != 0 {
            Err("number field holds bytes or a float")
        } else {
            Ok(Some(self.num[f]))
        }
    }
}

/// One FrameTimelineEvent (its first field, a oneof member 1-5). Ok(None): a start or end without the cookie,
/// token or pid it needs (trace processor drops these too). Layer names are shared through `layers` (a few dozen
/// distinct names over thousands of events).
#[inline(always)] // (into frame_timeline and packet: one per FrameTimeline packet)
fn decode_ft_event(raw: &[u8], layers: &mut HashSet<Arc<str>>) -> WireResult<Option<FtEvent>> {
    let mut r = Reader::new(raw);
    let tag = r.varint()?;
    if tag & 7 != 2 {
        return Err("FrameTimelineEvent member is not a message");
    }
    let member = (tag >> 3) as u32;
    let len = r.varint()? as usize;
    let end = r.pos.checked_add(len).ok_or("overflow")?;
    if end > raw.len() {
        return Err("FrameTimelineEvent member runs past the event");
    }
    // field numbers of (token, display_frame_token, pid, layer_name, present_type, on_time_finish,
    // gpu_composition, jank_type, prediction_type, jank_severity_type); 0 = absent in that member
    let layout: [usize; 10] = match member {
        1 => [2, 0, 3, 0, 0, 0, 0, 0, 0, 0],
        2 => [2, 0, 3, 0, 4, 5, 6, 7, 8, 9],
        3 => [2, 3, 4, 5, 0, 0, 0, 0, 0, 0],
        4 => [2, 3, 4, 5, 6, 7, 8, 9, 10, 12],
        5 => [0; 10],
        _ => return Err("unknown FrameTimelineEvent member"),
    };
    // fields below 16 (Fields16); the layer name's last bytes
    let mut v16 = Fields16 { num: [0u64; 16], present: 0, not_int: 0 };
    let mut layer_bytes: Option<&[u8]> = None;
    let mut m = Reader::new(&raw[r.pos..end]);
    while let Some((f, v)) = m.field()? {
        let f = f as usize;
        if f < v16.num.len() {
            let bit = 1u32 << f;
            v16.num[f] = v.u64();
            v16.present |= bit;
            let bad = matches!(v, Val::Bytes(_) | Val::Fixed32(_)) as u32;
            v16.not_int = (v16.not_int & !bit) | (bad << f);
            if f == layout[3] {
                layer_bytes = if let Val::Bytes(b) = v { Some(b) } else { None };
            }
        }
    }
    let int = |f: usize| v16.int(f);
    if member == 5 {
        return Ok(int(1)?.map(|c| FtEvent::End(c as i64)));
    }
    let (cookie, token, pid) = (int(1)?, int(layout[0])?, int(layout[2])?);
    let (Some(cookie), Some(token), Some(pid)) = (cookie, token, pid) else {
        return Ok(None);
    };
    let opt = |f: usize| -> WireResult<Option<u64>> { if f == 0 { Ok(None) } else { int(f) } };
    let actual = member == 2 || member == 4;
    let flag = |f: usize| -> Option<bool> { (v16.present & (1 << f) != 0).then_some(v16.num[f] != 0) };
    let (dft, jank, present_type, prediction, severity) = (opt(layout[1])?, opt(layout[7])?, opt(layout[4])?,
                                                          opt(layout[8])?, opt(layout[9])?);
    let layer = layer_bytes.map(|b| {
        let s = lossy(b);
        match layers.get(&*s) {
            Some(a) => a.clone(),
            None => {
                let a: Arc<str> = Arc::from(&*s);
                layers.insert(a.clone());
                a
            }
        }
    });
    // a value of 2**63 or more reads as negative, as in the int64 columns (2**63 itself as absent, as it always did)
    let num = |v: Option<u64>| v.map_or(FT_NONE, |x| x as i64);
    let if_actual = |v: Option<u64>| if actual { num(Some(v.unwrap_or(0))) } else { FT_NONE };
    Ok(Some(FtEvent::Start(FtStart {
        ts: 0,
        clock: 0,
        cookie: cookie as i64,
        member,
        pid: pid as i64,
        token: token as i64,
        dft: num(dft),
        layer,
        jank: if_actual(jank),
        present: if_actual(present_type),
        on_time: if actual { flag(layout[5]) } else { None },
        gpu: if actual { flag(layout[6]) } else { None },
        prediction: if_actual(prediction),
        severity: if actual { num(severity) } else { FT_NONE },
    })))
}

// ---- ftrace ------------------------------------------------------------------------------------------------------
/// Python's bisect_right, step for step (so that unsorted input gives the same answer the reader always gave).
fn bisect_right(a: &[i64], x: i64) -> usize {
    let (mut lo, mut hi) = (0usize, a.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if x < a[mid] {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// bisect_right into one array for a run of values: in a sorted array (always, but for damaged input) a cursor
/// moved from the last answer, which for values in time order (a bundle's wakings) is a step or two instead of a
/// binary search; in an unsorted one the binary search itself, whose answer there is defined by its steps.
struct Cursor<'a> {
    a: &'a [i64],
    sorted: bool,
    i: usize,
}

impl<'a> Cursor<'a> {
    fn new(a: &'a [i64]) -> Self {
        Cursor { a, sorted: a.windows(2).all(|w| w[0] <= w[1]), i: 0 }
    }

    #[inline]
    fn bisect_right(&mut self, x: i64) -> usize {
        if !self.sorted {
            return bisect_right(self.a, x);
        }
        let (a, mut i) = (self.a, self.i);
        // the answer is the one index with a[i - 1] <= x < a[i] (ends open): forward past values <= x, then back
        // over values > x (a value below the last)
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while i > 0 && a[i - 1] > x {
            i -= 1;
        }
        self.i = i;
        i
    }
}

/// Delta-encoded timestamps: the running sum, starting from shift, into out.
fn accumulate(deltas: &[i64], shift: i64, out: &mut Vec<i64>) {
    let mut acc = shift;
    out.extend(deltas.iter().map(|d| {
        acc = acc.wrapping_add(*d);
        acc
    }));
}

/// One compact_sched bundle's arrays, kept across bundles so that their memory is reused.
#[derive(Default)]
struct CompactArrays {
    sw_dt: Vec<i64>,
    states: Vec<i64>,
    next: Vec<i64>,
    sw_ci: Vec<usize>,
    wk_dt: Vec<i64>,
    pids: Vec<i64>,
    targets: Vec<i64>,
    wk_ci: Vec<usize>,
    sw_ts: Vec<i64>,
    wk_ts: Vec<i64>,
}

impl CompactArrays {
    fn clear(&mut self) {
        for v in [&mut self.sw_dt, &mut self.states, &mut self.next, &mut self.wk_dt, &mut self.pids, &mut self.targets,
                  &mut self.sw_ts, &mut self.wk_ts] {
            v.clear();
        }
        self.sw_ci.clear();
        self.wk_ci.clear();
    }
}

impl Decoder {
    fn comm(&mut self, tid: i64, comm: &[u8]) {
        if tid != 0 && self.comm_seen.insert(tid) {
            self.out.comms.push((tid, text(comm)));
        }
    }

    fn ftrace_bundle(&mut self, b: &[u8], seq_id: u32) -> WireResult<()> {
        let mut r = Reader::new(b);
        let (mut cpu, mut lost, mut clock, mut ftrace_ts, mut boot_ts) = (0i64, false, 0u64, 0i64, 0i64);
        let mut compact: Option<&[u8]> = None;
        let (mut last_read, mut previous_end): (Option<i64>, Option<i64>) = (None, None);
        // the events' places in the bundle, in a list kept across bundles (a new one per bundle grew by copying)
        let mut events = std::mem::take(&mut self.event_spans);
        events.clear();
        while let Some((f, v)) = r.field()? {
            match f {
                1 => cpu = v.u32(),
                2 => events.push((r.pos - v.bytes().len(), r.pos)),
                3 => lost = v.u64() != 0,
                4 => compact = Some(v.bytes()),
                5 => clock = v.u64(),
                6 => ftrace_ts = v.i64(),
                7 => boot_ts = v.i64(),
                9 => last_read = Some(v.u64() as i64),
                10 => previous_end = Some(v.u64() as i64),
                _ => {}
            }
        }
        if lost {
            self.out.lost_bundles += 1;
        }
        // a non-boot ftrace clock (e.g. global): the bundle gives one matching pair of readings
        let shift = if clock != 0 && ftrace_ts != 0 && boot_ts != 0 { boot_ts - ftrace_ts } else { 0 };
        if let Some(c) = compact {
            self.compact_sched(cpu, c, shift)?;
        }
        for &(start, end) in &events {
            self.event(cpu, &b[start..end], shift, seq_id)?;
        }
        self.event_spans = events;
        // a CPU's first bundle (Perfetto v44+) says from when its data is whole: the end of the bundle before it
        // (v47+), else the last event read before it; older data of that CPU was overwritten (ring buffer) or lost
        if self.first_bundle_cpus.insert(cpu) {
            if let Some(raw) = previous_end.or(last_read) {
                let t = raw.wrapping_add(shift);
                self.valid_from = Some(self.valid_from.map_or(t, |v| v.max(t)));
            }
        }
        Ok(())
    }

    /// The compact_sched arrays of one bundle: delta-encoded timestamps (the first absolute), comms interned in the
    /// bundle's intern_table. prev_pid is implicit: the thread the previous switch on this CPU ran. Arrays of
    /// unequal length (a damaged bundle) give as many events as the shortest holds.
    fn compact_sched(&mut self, cpu: i64, b: &[u8], shift: i64) -> WireResult<()> {
        let mut s = std::mem::take(&mut self.compact);
        let r = self.compact_sched_in(cpu, b, shift, &mut s);
        self.compact = s;
        r
    }

    fn compact_sched_in(&mut self, cpu: i64, b: &[u8], shift: i64, s: &mut CompactArrays) -> WireResult<()> {
        s.clear();
        let mut comms: Vec<&[u8]> = Vec::new();
        let mut r = Reader::new(b);
        while let Some((f, v)) = r.field()? {
            match f {
                5 => comms.push(v.bytes()),
                1 => repeated(v, &mut s.sw_dt, |x| x as i64)?,
                2 => repeated(v, &mut s.states, |x| x as i64)?,
                3 => repeated(v, &mut s.next, |x| x as u32 as i32 as i64)?,
                6 => repeated(v, &mut s.sw_ci, |x| x as u32 as usize)?,
                7 => repeated(v, &mut s.wk_dt, |x| x as i64)?,
                8 => repeated(v, &mut s.pids, |x| x as u32 as i32 as i64)?,
                9 => repeated(v, &mut s.targets, |x| x as u32 as i32 as i64)?,
                11 => repeated(v, &mut s.wk_ci, |x| x as u32 as usize)?,
                _ => {}
            }
        }
        let (next, sw_ci, pids, targets, wk_ci) = (&s.next, &s.sw_ci, &s.pids, &s.targets, &s.wk_ci);
        let prev_in = *self.running.get(&cpu).unwrap_or(&0);
        accumulate(&s.sw_dt, shift, &mut s.sw_ts);
        let sw_ts = &s.sw_ts;
        if !sw_ts.is_empty() {
            let n = sw_ts.len().min(s.states.len()).min(next.len()).min(sw_ci.len());
            if n > 0 {
                let o = &mut self.out.sw;
                o[0].extend_from_slice(&sw_ts[..n]);
                o[1].extend(std::iter::repeat_n(cpu, n));
                o[2].push(prev_in);
                o[2].extend_from_slice(&next[..n - 1]);
                o[3].extend_from_slice(&s.states[..n]);
                o[4].extend_from_slice(&next[..n]);
            }
            for i in 0..n {
                if sw_ci[i] < comms.len() {
                    self.comm(next[i], comms[sw_ci[i]]);
                }
            }
            if let Some(last) = next.last() {
                self.running.insert(cpu, *last);
            }
        }
        if !s.wk_dt.is_empty() {
            // Compact wakings carry no waker: it is the thread running on the bundle's CPU at that instant.
            self.out.saw_waking = true;
            accumulate(&s.wk_dt, shift, &mut s.wk_ts);
            let wk_ts = &s.wk_ts;
            let n = wk_ts.len().min(pids.len()).min(targets.len()).min(wk_ci.len());
            let mut at = Cursor::new(sw_ts);
            self.out.wk[3].reserve(n);
            for &ts in &wk_ts[..n] {
                let i = at.bisect_right(ts);
                let waker = if i > 0 && i - 1 < next.len() { next[i - 1] } else { prev_in };
                self.out.wk[3].push(waker);
            }
            let o = &mut self.out.wk;
            o[0].extend_from_slice(&wk_ts[..n]);
            o[1].extend_from_slice(&pids[..n]);
            o[2].extend_from_slice(&targets[..n]);
            for i in 0..n {
                if wk_ci[i] < comms.len() {
                    self.comm(pids[i], comms[wk_ci[i]]);
                }
            }
        }
        Ok(())
    }

    /// One FtraceEvent message (its own timestamp, ns; pid = the thread that emitted it).
    fn event(&mut self, cpu: i64, b: &[u8], shift: i64, seq_id: u32) -> WireResult<()> {
        let mut r = Reader::new(b);
        let (mut ts, mut pid) = (0i64, 0i64);
        let mut kind: Option<(u32, &[u8])> = None;
        // nearly every event starts with its timestamp (tag 0x08, a varint) then its pid (0x10): read straight,
        // as the loop below would read them, without the general field step's dispatch
        if b.first() == Some(&0x08) {
            r.pos = 1;
            ts = r.varint()? as i64;
            if r.buf.get(r.pos) == Some(&0x10) {
                r.pos += 1;
                pid = r.varint()? as u32 as i64;
            }
        }
        while let Some((f, v)) = r.field()? {
            match f {
                1 => ts = v.u64() as i64,
                2 => pid = v.u32(),
                5 => {}
                _ => kind = Some((f, v.bytes())),
            }
        }
        let Some((kind, body)) = kind else { return Ok(()) };
        let ts = ts.wrapping_add(shift);
        let mut fields = Fields::default();
        match kind {
            FE_SCHED_SWITCH | FE_PRINT | FE_CPU_IDLE | FE_SCHED_WAKING | FE_SCHED_WAKEUP_NEW | FE_SCHED_WAKEUP
            | FE_CPU_FREQUENCY | FE_BINDER_TRANSACTION | FE_BINDER_TRANSACTION_RECEIVED
            | FE_SCHED_BLOCKED_REASON | FE_BLOCK_RQ_ISSUE | FE_BLOCK_RQ_COMPLETE | FE_TASK_RENAME
            | FE_TASK_NEWTASK => fields.read(body)?,
            _ => return Ok(()),
        }
        let f = &fields;
        let o = &mut self.out;
        match kind {
            FE_SCHED_SWITCH => {
                // prev_comm=1 prev_pid=2 prev_state=4 next_comm=5 next_pid=6
                let (prev, next) = (f.i32(2), f.i32(6));
                o.sw[0].push(ts);
                o.sw[1].push(cpu);
                o.sw[2].push(prev);
                o.sw[3].push(f.i64(4));
                o.sw[4].push(next);
                self.comm(prev, f.bytes(1));
                self.comm(next, f.bytes(5));
            }
            FE_PRINT => {
                o.print_seq += 1;
                let buf = lossy(f.bytes(2));
                o.atrace.payload(ts, pid, &buf, o.print_seq, None);
            }
            FE_CPU_IDLE => {
                o.idle[0].push(ts);
                o.idle[1].push(f.u32(1));
                o.idle[2].push(f.u32(2));
            }
            FE_SCHED_WAKING | FE_SCHED_WAKEUP_NEW => {
                // comm=1 pid=2 target_cpu=5
                if kind == FE_SCHED_WAKING {
                    o.saw_waking = true;
                }
                let tid = f.i32(2);
                o.wk[0].push(ts);
                o.wk[1].push(tid);
                o.wk[2].push(f.i32(5));
                o.wk[3].push(pid);
                self.comm(tid, f.bytes(1));
            }
            FE_SCHED_WAKEUP => {
                if !o.saw_waking {
                    // once sched_waking is seen, every sched_wakeup is dropped (they duplicate it)
                    let tid = f.i32(2);
                    o.wakeup[0].push(ts);
                    o.wakeup[1].push(tid);
                    o.wakeup[2].push(f.i32(5));
                    o.wakeup[3].push(pid);
                    if tid != 0 && !self.comm_seen.contains(tid) && self.wakeup_comm_tids.insert(tid) {
                        self.wakeup_comms.push((tid, f.bytes(1).to_vec()));
                    }
                }
            }
            FE_CPU_FREQUENCY => {
                o.freq[0].push(ts);
                o.freq[1].push(f.u32(1));
                o.freq[2].push(f.u32(2));
            }
            FE_BINDER_TRANSACTION => {
                // debug_id=1 to_proc=3 to_thread=4 reply=5 code=6 flags=7
                let nz = |v: i64| if v != 0 { v } else { i64::MIN };
                let row = [ts, pid, f.i32(1), nz(f.i32(3)), nz(f.i32(4)), (f.i32(5) != 0) as i64, f.u32(7), f.u32(6)];
                for (c, v) in o.binder_tx.iter_mut().zip(row) {
                    c.push(v);
                }
            }
            FE_BINDER_TRANSACTION_RECEIVED => {
                for (c, v) in o.binder_rx.iter_mut().zip([ts, pid, f.i32(1)]) {
                    c.push(v);
                }
            }
            FE_SCHED_BLOCKED_REASON => {
                // pid=1 caller=2 io_wait=3
                let id = self.blocked_payload(f.u64(2), seq_id, f.u32(3) != 0);
                self.out.blocked_ts.push(ts);
                self.out.blocked_tid.push(f.i32(1));
                self.out.blocked.push(id);
            }
            FE_BLOCK_RQ_ISSUE => {
                // dev=1 sector=2 nr_sector=3 bytes=4 rwbs=5 comm=6
                let comm = text(f.bytes(6));
                let nr = f.u32(3);
                let nbytes = if f.has(4) { f.u32(4) } else { nr * 512 };
                o.block_issue.push((ts, f.u64(1) as i64, f.u64(2) as i64, nr, nbytes, text(f.bytes(5)), Some(pid),
                                    (!comm.is_empty()).then_some(comm)));
            }
            FE_BLOCK_RQ_COMPLETE => {
                // dev=1 sector=2 nr_sector=3 errors=4 rwbs=5 error=7
                let error = if f.i32(7) != 0 { f.i32(7) } else { f.i32(4) };
                o.block_complete.push((ts, f.u64(1) as i64, f.u64(2) as i64, f.u32(3), text(f.bytes(5)), error));
            }
            FE_TASK_RENAME => o.renames.push((ts, f.i32(1), text(f.bytes(3)))),
            FE_TASK_NEWTASK => {
                // pid=1 comm=2 clone_flags=3, written by the creating thread (the event's pid)
                let new = f.i32(1);
                self.comm(new, f.bytes(2));
                if new != 0 {
                    self.out.newtasks.push((ts, new, pid, f.u64(3) & CLONE_THREAD != 0));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The payload (its place in `payloads`) of a sched_blocked_reason: its function and io_wait. The caller is an
    /// interned kernel-symbol id when the trace symbolized it; otherwise (symbols absent) a raw address shown as hex,
    /// or an unresolved id shown as "ksym#<id>", written into a reused buffer (no string made per reason).
    fn blocked_payload(&mut self, caller: u64, seq_id: u32, io_wait: bool) -> i32 {
        use std::fmt::Write;
        if caller == 0 {
            return self.out.payloads.id(None, io_wait);
        }
        if let Some(name) = self.seqs.get(&seq_id).and_then(|s| s.kernel_symbols.get(&caller)).filter(|n| !n.is_empty()) {
            return self.out.payloads.id(Some(name), io_wait);
        }
        self.out.unresolved_callers += 1;
        let text = &mut self.caller_text;
        text.clear();
        // (writing to a String cannot fail)
        let _ = if caller >= 1 << 32 { write!(text, "0x{:x}", caller) } else { write!(text, "ksym#{}", caller) };
        self.out.payloads.id(Some(text), io_wait)
    }

    // ---- track events ------------------------------------------------------------------------------------------
    fn track_descriptor(&mut self, b: &[u8]) -> WireResult<()> {
        let mut r = Reader::new(b);
        let (mut uuid, mut thread, mut process) = (0u64, None, None);
        while let Some((f, v)) = r.field()? {
            match f {
                1 => uuid = v.u64(),
                3 => process = Some(v.bytes()),
                4 => thread = Some(v.bytes()),
                _ => {}
            }
        }
        if let Some(t) = thread {
            let (mut tid, mut pid, mut name) = (0i64, 0i64, String::new());
            let mut m = Reader::new(t);
            while let Some((f, v)) = m.field()? {
                match f {
                    1 => pid = v.i32(),
                    2 => tid = v.i64(),
                    5 => name = text(v.bytes()),
                    _ => {}
                }
            }
            self.track_threads.insert(uuid, (tid, pid));
            self.out.decls.push(Decl::Thread { tid, pid: nonzero(pid), name: (!name.is_empty()).then_some(name) });
        } else if let Some(p) = process {
            let (mut pid, mut pname, mut cmd0) = (0i64, String::new(), None);
            let mut m = Reader::new(p);
            while let Some((f, v)) = m.field()? {
                match f {
                    1 => pid = v.i32(),
                    2 if cmd0.is_none() => cmd0 = Some(text(v.bytes())),
                    6 => pname = text(v.bytes()),
                    _ => {}
                }
            }
            let name = if !pname.is_empty() { Some(pname) } else { cmd0.filter(|s| !s.is_empty()) };
            self.out.decls.push(Decl::Process { pid, name, ppid: None });
        }
        Ok(())
    }

    fn track_event(&mut self, b: &[u8], ts_raw: i64, clock_id: Option<u32>, seq_id: u32) -> WireResult<()> {
        let mut r = Reader::new(b);
        let (mut typ, mut name, mut name_iid, mut uuid) = (0u64, None, 0u64, None);
        while let Some((f, v)) = r.field()? {
            match f {
                9 => typ = v.u64(),
                23 => name = Some(text(v.bytes())),
                10 => name_iid = v.u64(),
                11 => uuid = Some(v.u64()),
                _ => {}
            }
        }
        if !matches!(typ, TE_SLICE_BEGIN | TE_SLICE_END | TE_INSTANT) {
            return Ok(());
        }
        let seq = self.seqs.get(&seq_id).unwrap();
        let clock = clock_id.unwrap_or(match seq.clock_id {
            Some(c) if c != 0 => c,
            _ => BOOTTIME,
        });
        if clock >= 64 {
            // sequence-scoped (incremental) clocks are not supported
            self.out.foreign_clock_events += 1;
            return Ok(());
        }
        let name = name.unwrap_or_else(|| {
            seq.event_names.get(&name_iid).cloned().unwrap_or_else(|| format!("iid {}", name_iid))
        });
        self.track_events.push(TrackEvent {
            ts: ts_raw,
            clock,
            uuid: uuid.or(seq.track_uuid),
            seq_thread: seq.thread,
            kind: typ as u8,
            name,
        });
        Ok(())
    }

    // ---- end ---------------------------------------------------------------------------------------------------
    /// After the last packet: timestamps on other clocks go to the boot clock (with every snapshot of the file),
    /// track events find their threads, sched_wakeup is kept only when the trace had no sched_waking.
    pub fn finish(&mut self) {
        self.inflated = Vec::new(); // the scratch of compressed packets, up to the cap: not held through the build
        self.drop_before_valid();
        self.cpu_counters();
        let clocks = ClockConverter::new(std::mem::take(&mut self.snapshots));
        let mut unconvertible = HashSet::default();
        let mut conv = |clock: u32, ts: i64| clocks.to_boot(clock, ts, &mut unconvertible);
        for s in self.out.ft_start.iter_mut() {
            s.ts = conv(s.clock, s.ts);
        }
        for e in self.out.ft_end.iter_mut() {
            e.0 = conv(e.1, e.0);
        }
        for n in self.out.names.iter_mut() {
            n.0 = conv(n.1, n.0);
        }
        for te in std::mem::take(&mut self.track_events) {
            let ts = conv(te.clock, te.ts);
            let thread = match te.uuid {
                Some(u) => self.track_threads.get(&u).copied(),
                None => te.seq_thread,
            };
            let Some((tid, pid)) = thread else {
                self.out.track_skipped += 1;
                continue;
            };
            let name = (te.kind as u64 != TE_SLICE_END).then_some(te.name);
            self.out.slices.push((ts, tid, pid, te.kind, name));
        }
        let mut u: Vec<u32> = unconvertible.into_iter().collect();
        u.sort();
        self.out.unconvertible_clocks = u;
        if self.out.saw_waking {
            for c in self.out.wakeup.iter_mut() {
                c.clear();
            }
        } else {
            for (tid, comm) in std::mem::take(&mut self.wakeup_comms) {
                self.comm(tid, &comm);
            }
        }
    }
}

impl Decoder {
    /// cpu_idle then cpu_frequency samples join the counter samples after atrace's, each group in file order (the
    /// order the TraceBuilder gave them when they came as separate columns; the table's stable sort by time breaks
    /// ties by it): cpuidle's value is the idle state (-1 when the CPU leaves idle, PWR_EVENT_EXIT), cpufreq's kHz;
    /// a CPU number beyond the table's 32-bit column is null, as the column's cast made it.
    fn cpu_counters(&mut self) {
        let o = &mut self.out;
        let cpu32 = |c: i64| (c <= i32::MAX as i64).then_some(c);
        // each name is interned once, where its first sample would have interned it
        o.atrace.reserve_counters(o.idle[0].len() + o.freq[0].len());
        let [ts, state, cpu] = std::mem::take(&mut o.idle);
        if !ts.is_empty() {
            let id = o.atrace.strings.id("cpuidle");
            for i in 0..ts.len() {
                let v = if state[i] == 0xFFFF_FFFF { -1.0 } else { state[i] as f64 };
                o.atrace.counter_id(ts[i], id, v, cpu32(cpu[i]), None);
            }
        }
        let [ts, khz, cpu] = std::mem::take(&mut o.freq);
        if !ts.is_empty() {
            let id = o.atrace.strings.id("cpufreq");
            for i in 0..ts.len() {
                o.atrace.counter_id(ts[i], id, khz[i] as f64, cpu32(cpu[i]), None);
            }
        }
    }
}

/// Scalar fields of one small ftrace event message, by field number (the last occurrence wins).
#[derive(Default)]
struct Fields<'a> {
    vals: [Option<Val<'a>>; 8],
}

impl<'a> Fields<'a> {
    fn read(&mut self, b: &'a [u8]) -> WireResult<()> {
        let mut r = Reader::new(b);
        while let Some((f, v)) = r.field()? {
            if (f as usize) < self.vals.len() {
                self.vals[f as usize] = Some(v);
            }
        }
        Ok(())
    }
    fn has(&self, f: usize) -> bool {
        self.vals[f].is_some()
    }
    fn u64(&self, f: usize) -> u64 {
        self.vals[f].map_or(0, |v| v.u64())
    }
    fn i64(&self, f: usize) -> i64 {
        self.vals[f].map_or(0, |v| v.i64())
    }
    fn i32(&self, f: usize) -> i64 {
        self.vals[f].map_or(0, |v| v.i32())
    }
    fn u32(&self, f: usize) -> i64 {
        self.vals[f].map_or(0, |v| v.u32())
    }
    fn bytes(&self, f: usize) -> &'a [u8] {
        self.vals[f].map_or(&[][..], |v| v.bytes())
    }
}

/// Puts timestamps of other builtin clocks (MONOTONIC, REALTIME, ...) on the boot clock using the trace's clock
/// snapshots: each value takes the offset of the latest snapshot at or before it (the first, if none).
struct ClockConverter {
    snapshots: Vec<HashMap<u32, i64>>,
    tables: std::cell::RefCell<HashMap<u32, Option<(Vec<i64>, Vec<i64>)>>>,
}

impl ClockConverter {
    fn new(snapshots: Vec<HashMap<u32, i64>>) -> Self {
        ClockConverter { snapshots, tables: Default::default() }
    }

    fn to_boot(&self, clock: u32, ts: i64, unconvertible: &mut HashSet<u32>) -> i64 {
        if clock == BOOTTIME {
            return ts;
        }
        let mut tables = self.tables.borrow_mut();
        let table = tables.entry(clock).or_insert_with(|| {
            let mut pairs: Vec<(i64, i64)> = self
                .snapshots
                .iter()
                .filter_map(|s| Some((*s.get(&clock)?, *s.get(&BOOTTIME)? - *s.get(&clock)?)))
                .collect();
            pairs.sort();
            (!pairs.is_empty()).then(|| pairs.into_iter().unzip())
        });
        match table {
            None => {
                unconvertible.insert(clock);
                ts
            }
            Some((at, off)) => {
                let i = bisect_right(at, ts);
                ts + off[if i > 0 { i - 1 } else { 0 }]
            }
        }
    }
}

/// One thread as the trace leaves it: (tid, pid, name).
pub type ThreadRow = (i64, Option<i64>, Option<String>);

/// The thread table the TraceBuilder's rules make of the trace's thread facts, applied in the order the reader
/// used to apply them one by one: declarations (first pid and name win), atrace pids (fill a missing pid), the
/// authoritative names in time order (process_tree names and task_rename replace the name; a missing pid is
/// filled), then comms (fill a missing name). Threads in first-seen order, each once: the Python side makes each
/// thread's record once instead of replacing it fact by fact.
pub fn fold_threads(declared: Vec<ThreadRow>, atrace_pids: &[(i64, i64)], mut newtasks: Vec<(i64, i64, i64, bool)>,
                    process_pids: &HashSet<i64>,
                    names: Vec<(i64, i64, Option<i64>, String)>, renames: Vec<(i64, i64, String)>,
                    comms: Vec<(i64, String)>) -> Vec<ThreadRow> {
    let mut f = ThreadFold {
        rows: Vec::with_capacity(declared.len()),
        at: HashMap::with_capacity_and_hasher(declared.len(), Default::default()),
    };
    for (tid, pid, name) in declared {
        f.apply(tid, pid, name, false);
    }
    for &(tid, pid) in atrace_pids {
        f.apply(tid, Some(pid), None, false);
    }
    let mut authoritative: Vec<(i64, i64, Option<i64>, String)> = names;
    authoritative.extend(renames.into_iter().map(|(ts, tid, name)| (ts, tid, None, name)));
    authoritative.sort_by_key(|r| r.0); // stable: ties keep process_tree names before renames, each in file order
    for (_, tid, pid, name) in authoritative {
        f.apply(tid, pid, Some(name), true);
    }
    for (tid, comm) in comms {
        if !comm.is_empty() {
            f.apply(tid, None, Some(comm), false);
        }
    }
    // task_newtask, last (the new task is a thread by now, from its comm; a pid stated anywhere else wins), in time
    // order (ftrace comes in per-CPU bundles: a thread's creation can come in the file before its creator's): a
    // thread made with CLONE_THREAD is in its creator's process, where that is known (a creator made earlier in the
    // trace, or a process's main thread known only as the process, included); any other new task is a process of
    // its own (its tid the pid)
    newtasks.sort_by_key(|t| t.0); // stable
    for (_, new, creator, thread) in newtasks {
        let pid = if thread {
            f.pid_of(creator).or_else(|| process_pids.contains(&creator).then_some(creator))
        } else {
            Some(new)
        };
        if pid.is_some() {
            f.apply(new, pid, None, false);
        }
    }
    f.rows
}

/// The thread rows being folded, in first-seen order, and each tid's row.
struct ThreadFold {
    rows: Vec<ThreadRow>,
    at: HashMap<i64, usize>,
}

impl ThreadFold {
    /// TraceBuilder.thread(tid, pid, name, overwrite_name): a new thread is added; a known one gets a missing pid,
    /// and the name when it has none (or always, if `overwrite`).
    fn apply(&mut self, tid: i64, pid: Option<i64>, name: Option<String>, overwrite: bool) {
        let named = |n: &Option<String>| n.as_deref().is_some_and(|s| !s.is_empty());
        match self.at.get(&tid) {
            None => {
                self.at.insert(tid, self.rows.len());
                self.rows.push((tid, pid, name));
            }
            Some(&i) => {
                let row = &mut self.rows[i];
                if row.1.is_none() {
                    row.1 = pid;
                }
                if named(&name) && (overwrite || !named(&row.2)) {
                    row.2 = name;
                }
            }
        }
    }

    fn pid_of(&self, tid: i64) -> Option<i64> {
        self.at.get(&tid).and_then(|&i| self.rows[i].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_gives_the_binary_search_answer() {
        // sorted arrays with repeats, values in and out of order and beyond both ends; an unsorted array too
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % m) as i64
        };
        for len in 0..30 {
            let mut a: Vec<i64> = (0..len).map(|_| next(20)).collect();
            let unsorted = a.clone();
            a.sort();
            for arr in [&a, &unsorted] {
                let mut c = Cursor::new(arr);
                let mut xs: Vec<i64> = (0..40).map(|_| next(24) - 2).collect();
                xs[..20].sort();
                for x in xs {
                    assert_eq!(c.bisect_right(x), bisect_right(arr, x), "{arr:?} {x}");
                }
            }
        }
    }

    #[test]
    fn packet_slots_send_each_field_where_the_field_list_says() {
        let read = [(P_TIMESTAMP, S_TIMESTAMP), (P_TIMESTAMP_CLOCK_ID, S_CLOCK_ID), (P_TRUSTED_SEQ_ID, S_SEQ_ID),
                    (P_INCREMENTAL_STATE_CLEARED, S_CLEARED), (P_SEQUENCE_FLAGS, S_FLAGS),
                    (P_INTERNED_DATA, S_INTERNED), (P_TRACE_PACKET_DEFAULTS, S_DEFAULTS),
                    (FRAME_TIMELINE_FIELD, S_FRAME_TIMELINE), (P_PREVIOUS_PACKET_DROPPED, S_DROPPED)];
        for f in 0u32..5000 {
            let want = match read.iter().find(|r| r.0 == f) {
                Some(r) => r.1,
                None if DATA_ONEOF.contains(&f) => S_DATA,
                None => S_IGNORED,
            };
            assert_eq!(PACKET_SLOT[(f as usize).min(PACKET_SLOT.len() - 1)] as usize, want, "field {f}");
        }
    }
}

/// Whether `data` opens as a Perfetto trace: a trace is a sequence of `Trace.packet` records (field 1,
/// length-delimited, tag 0x0A), so its first three are checked: each has that tag and a length no more than twice the
/// data plus 1 MiB. within: the three must lie inside `data` (a head so short that they run past its end decides
/// nothing); otherwise records running past the end are allowed (the data is the head of a longer file).
/// TraceConfig.unique_session_name (field 22), if the config holds one (a config that does not decode: None).
#[inline(never)]
fn trace_config_session(b: &[u8]) -> Option<&[u8]> {
    let mut r = Reader::new(b);
    let mut name = None;
    while let Ok(Some((f, v))) = r.field() {
        if let (22, Val::Bytes(s)) = (f, v) {
            name = Some(s);
        }
    }
    name
}

/// Which rows of a column group to keep (their time at or after `t`), None when all are; the rows left out are
/// counted into `dropped`.
fn keep_from(ts: &[i64], t: i64, dropped: &mut i64) -> Option<Vec<bool>> {
    let n = ts.iter().filter(|&&x| x < t).count();
    if n == 0 {
        return None;
    }
    *dropped += n as i64;
    Some(ts.iter().map(|&x| x >= t).collect())
}

/// The rows of a column that `keep` marks, in order.
pub fn retain_rows<T>(column: &mut Vec<T>, keep: &[bool]) {
    let mut i = 0;
    column.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

/// What sequence_time makes of a packet's time.
enum SeqTime {
    Unchanged,
    On(u32, i64), // the builtin clock and the time on it
    Unreadable,   // a track event to count and skip
}

/// Why compressed packets could not be inflated.
enum Inflate {
    PastCap,
    Broken(&'static str),
}

/// A whole zlib stream (RFC 1950, as Perfetto's deflateInit writes it) into `out` (cleared; its capacity reused), at
/// most `cap` bytes.
fn inflate_zlib(z: &[u8], out: &mut Vec<u8>, cap: usize) -> Result<(), Inflate> {
    use flate2::{Decompress, FlushDecompress, Status};
    let mut d = Decompress::new(true);
    out.clear();
    loop {
        if out.len() == out.capacity() && out.len() < cap {
            out.reserve_exact((out.len().max(z.len() * 4).max(64 << 10)).min(cap - out.len()));
        }
        let (before_in, before_out) = (d.total_in(), d.total_out());
        let rest = &z[(before_in as usize).min(z.len())..];
        match d.decompress_vec(rest, out, FlushDecompress::None) {
            // (a buffer reused from a larger packet has room past the cap)
            _ if out.len() > cap => return Err(Inflate::PastCap),
            Ok(Status::StreamEnd) if (d.total_in() as usize) < z.len() => {
                return Err(Inflate::Broken("bytes follow the end of the zlib stream"));
            }
            Ok(Status::StreamEnd) => return Ok(()),
            // no progress: the output is full at the cap (the stream has more), or the input ran out
            Ok(_) if d.total_in() == before_in && d.total_out() == before_out => {
                return Err(if out.len() == out.capacity() { Inflate::PastCap } else {
                    Inflate::Broken("the zlib stream is cut off")
                });
            }
            Ok(_) => {}
            Err(_) => return Err(Inflate::Broken("not a zlib stream, or damaged")),
        }
    }
}

/// A whole zstd frame (RFC 8878, as the tracing service's zstd compressor writes it) into `out` (cleared), at most
/// `cap` bytes.
fn inflate_zstd(z: &[u8], out: &mut Vec<u8>, cap: usize) -> Result<(), Inflate> {
    out.clear();
    let mut src = z;
    while !src.is_empty() {
        // zstd frames may follow one another (RFC 8878 3.1): each is decoded in turn
        zstd_frame(&mut src, out, cap)?;
    }
    Ok(())
}

/// One zstd frame from the front of `src` (advanced past it), appended to `out` in bounded reads (no buffer past
/// the cap, and the decoder never asked for more than a read's worth at once).
fn zstd_frame(src: &mut &[u8], out: &mut Vec<u8>, cap: usize) -> Result<(), Inflate> {
    use std::io::Read;
    let mut d = ruzstd::decoding::StreamingDecoder::new(&mut *src)
        .map_err(|_| Inflate::Broken("not a zstd frame, or damaged"))?;
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = d.read(&mut chunk).map_err(|_| Inflate::Broken("the zstd frame is damaged or cut off"))?;
        if n == 0 {
            break;
        }
        if out.len() + n > cap {
            return Err(Inflate::PastCap);
        }
        if out.capacity() < out.len() + n {
            out.reserve_exact(out.len().max(n).min(cap - out.len()));
        }
        out.extend_from_slice(&chunk[..n]);
    }
    if !d.into_frame_decoder().is_finished() {
        return Err(Inflate::Broken("the zstd frame is cut off"));
    }
    Ok(())
}

pub fn looks_like_perfetto(data: &[u8], within: bool) -> bool {
    let mut pos = 0usize;
    for _ in 0..3 {
        if pos >= data.len() {
            return pos > 0 && !within;
        }
        if data[pos] != 0x0A {
            return false;
        }
        let Some((length, next)) = sniff_varint(data, pos + 1) else { return false };
        if length > data.len() as u128 * 2 + (1 << 20) {
            return false;
        }
        pos = next + length as usize; // (at most twice the data plus 1 MiB past it: no overflow)
    }
    pos <= data.len() || !within
}

/// A varint's full value (up to 70 bits: no bits dropped, so an overlong length is seen as such) and the position
/// after it; None when cut off or longer than 10 bytes.
fn sniff_varint(b: &[u8], mut pos: usize) -> Option<(u128, usize)> {
    let (mut value, mut shift) = (0u128, 0u32);
    loop {
        let byte = *b.get(pos)?;
        pos += 1;
        value |= ((byte & 0x7f) as u128) << shift;
        if byte < 0x80 {
            return Some((value, pos));
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// Largest CPU number the thread-state table's 32-bit cpu column takes for an event (models/trace_builder.MAX_CPU).
pub const MAX_CPU: i64 = (1 << 16) - 1;

/// The trace's scheduling events as one stream in the narrow columns of the thread-state pass (states.rs's input;
/// models/thread_states.SCHED_DTYPES): switches, then wakings, then sched_wakeup (empty when the trace had
/// sched_waking), then blocked reasons, each group in file order (the order breaks ties at equal time and kind).
/// For a switch a = prev tid, b = next tid; for a waking a = tid, b = waker; for a blocked reason a = tid and b
/// none. `switch_state` holds each switch's raw prev_state (decoded by the reader, which knows the kernel's
/// encoding); a blocked reason's aux is its index among the blocked payloads. Events on a CPU number no device has
/// (damaged input) are left out and counted.
pub struct SchedStream {
    pub ts: Vec<i64>,
    pub kind: Vec<u8>,
    pub cpu: Vec<i32>,
    pub a: Vec<i64>,
    pub b: Vec<i64>,
    pub switch_state: Vec<i64>,
    pub blocked_index: Vec<i32>,
    pub bad_cpu: i64,
    /// (first, last) time of every event, those left out included (they widen the trace's time range)
    pub range: Option<(i64, i64)>,
    /// switches, wakings (sched_waking and sched_wakeup) and blocked reasons in the trace, those left out included
    pub counts: (usize, usize, usize),
}

impl SchedStream {
    /// One group of events of one kind (all of them copied whole when every CPU number is possible, the usual case;
    /// else one by one, the others left out and counted).
    fn push_group(&mut self, kind: u8, ts: &[i64], cpu: &[i64], a: &[i64], b: &[i64], state: Option<&[i64]>) {
        let n = ts.len().min(cpu.len()).min(a.len()).min(b.len());
        if cpu[..n].iter().all(|c| (0..=MAX_CPU).contains(c)) {
            self.ts.extend_from_slice(&ts[..n]);
            self.kind.extend(std::iter::repeat_n(kind, n));
            self.cpu.extend(cpu[..n].iter().map(|&c| c as i32));
            self.a.extend_from_slice(&a[..n]);
            self.b.extend_from_slice(&b[..n]);
            if let Some(st) = state {
                self.switch_state.extend_from_slice(&st[..n]);
            }
            return;
        }
        for i in 0..n {
            if !(0..=MAX_CPU).contains(&cpu[i]) {
                self.bad_cpu += 1;
                continue;
            }
            self.ts.push(ts[i]);
            self.kind.push(kind);
            self.cpu.push(cpu[i] as i32);
            self.a.push(a[i]);
            self.b.push(b[i]);
            if let Some(st) = state {
                self.switch_state.push(st[i]);
            }
        }
    }
}

pub fn sched_stream(sw: [Vec<i64>; 5], wk: [Vec<i64>; 4], wakeup: [Vec<i64>; 4], blocked_ts: Vec<i64>,
                    blocked_tid: Vec<i64>, blocked: Vec<i32>) -> SchedStream {
    let n = sw[0].len() + wk[0].len() + wakeup[0].len() + blocked_ts.len();
    let mut s = SchedStream {
        ts: Vec::with_capacity(n), kind: Vec::with_capacity(n), cpu: Vec::with_capacity(n), a: Vec::with_capacity(n),
        b: Vec::with_capacity(n), switch_state: Vec::with_capacity(sw[0].len()), blocked_index: Vec::new(),
        bad_cpu: 0, range: None, counts: (sw[0].len(), wk[0].len() + wakeup[0].len(), blocked_ts.len()),
    };
    for t in [&sw[0], &wk[0], &wakeup[0], &blocked_ts] {
        if let (Some(&lo), Some(&hi)) = (t.iter().min(), t.iter().max()) {
            s.range = Some(s.range.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        }
    }
    let [ts, cpu, prev, state, next] = sw;
    s.push_group(0, &ts, &cpu, &prev, &next, Some(&state));
    drop((ts, cpu, prev, state, next)); // each input let go once copied (memory: the stream is written beside them)
    for [ts, tid, target, waker] in [wk, wakeup] {
        s.push_group(1, &ts, &target, &tid, &waker, None);
    }
    s.blocked_index = blocked;
    s.ts.extend_from_slice(&blocked_ts);
    s.kind.extend(std::iter::repeat_n(2u8, blocked_ts.len()));
    s.cpu.extend(std::iter::repeat_n(i32::MIN, blocked_ts.len()));
    s.a.extend_from_slice(&blocked_tid);
    s.b.extend(std::iter::repeat_n(i64::MIN, blocked_ts.len()));
    s
}

#[cfg(test)]
mod inflate_tests {
    use super::{inflate_zlib, Inflate};
    use flate2::{write::ZlibEncoder, Compression};
    use std::io::Write;

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn sample() -> Vec<u8> {
        (0..300_000u32).map(|i| ((i % 251) as u8) ^ ((i / 1000) as u8)).collect()
    }

    #[test]
    fn a_stream_inflates_whole_into_a_reused_buffer() {
        let data = sample();
        let mut out = vec![7u8; 10]; // what the buffer held before is cleared
        assert!(inflate_zlib(&zlib(&data), &mut out, 1 << 30).is_ok());
        assert_eq!(out, data);
        assert!(inflate_zlib(&zlib(b"abc"), &mut out, 1 << 30).is_ok());
        assert_eq!(out, b"abc");
    }

    #[test]
    fn a_cut_off_stream_is_told_from_a_damaged_one() {
        let z = zlib(&sample());
        let mut out = Vec::new();
        assert!(matches!(inflate_zlib(&z[..z.len() / 2], &mut out, 1 << 30), Err(Inflate::Broken(w)) if w.contains("cut off")));
        assert!(matches!(inflate_zlib(b"not zlib at all", &mut out, 1 << 30), Err(Inflate::Broken(w)) if w.contains("not a zlib")));
        assert!(matches!(inflate_zlib(&[], &mut out, 1 << 30), Err(Inflate::Broken(_))));
    }

    fn zstd(data: &[u8]) -> Vec<u8> {
        ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
    }

    #[test]
    fn a_zstd_frame_decompresses_whole_within_its_cap() {
        use super::inflate_zstd;
        let data = sample();
        let z = zstd(&data);
        assert!(z.starts_with(&super::ZSTD_MAGIC));
        let mut out = vec![1u8; 5];
        assert!(inflate_zstd(&z, &mut out, data.len()).is_ok());
        assert_eq!(out, data);
        assert!(matches!(inflate_zstd(&z, &mut out, data.len() - 1), Err(Inflate::PastCap)));
        assert!(matches!(inflate_zstd(&z[..z.len() / 2], &mut out, 1 << 30), Err(Inflate::Broken(_))));
        assert!(matches!(inflate_zstd(&super::ZSTD_MAGIC, &mut out, 1 << 30), Err(Inflate::Broken(_))));
    }

    #[test]
    fn output_past_the_cap_stops_the_inflation() {
        let data = sample();
        let mut out = Vec::new();
        assert!(matches!(inflate_zlib(&zlib(&data), &mut out, data.len() - 1), Err(Inflate::PastCap)));
        assert!(out.len() < data.len());
        assert!(inflate_zlib(&zlib(&data), &mut out, data.len()).is_ok()); // exactly the cap fits
        assert_eq!(out.len(), data.len());
        let mut big = Vec::with_capacity(1 << 20); // room from an earlier, larger packet does not lift the cap
        assert!(matches!(inflate_zlib(&zlib(&data), &mut big, 1000), Err(Inflate::PastCap)));
    }
}
