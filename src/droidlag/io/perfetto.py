"""Perfetto protobuf traces into the Trace model, through the native decoder (`droidlag._native`, Rust).

The decoder walks the raw TracePacket bytes (fed in chunks, so a file need not be in memory at once) and returns
columns: process_tree, system_info/cpu_info, ftrace bundles (compact_sched and regular events: sched, atrace print,
binder, block, cpufreq/idle, task names), thread-track TrackEvent slices and instants and FrameTimeline (field 76). This module
hands them to the TraceBuilder. Compressed packets (TracePacket.compressed_packets, zlib, as a trace config with
COMPRESSION_TYPE_DEFLATE writes them; zstd_compressed_packets, zstd) are inflated natively and read as the packets
they hold. Timestamps are put on the boot clock (the trace clock of Android captures) with
the trace's clock snapshots. A truncated or corrupt file is read packet by packet up to the first broken record,
with a warning naming the byte offset.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from droidlag._native import PerfettoDecoder
from droidlag.errors import InputError, ReadWarning
from droidlag.io import budget, source
from droidlag.io.perfetto_ftrace import prev_state_encoding
from droidlag.models.trace import Trace
from droidlag.models.trace_builder import TraceBuilder

CHUNK_BYTES = 128 << 10   # read_perfetto_file's read buffer: held through the read, so small (8 MB was most of a
                          # small trace's peak; 128 KB measured lowest of 64-256 KB on the corpus traces); the decoding
                          # loop is native, so more reads cost nothing measurable


def read_perfetto(data: bytes, path: str) -> Trace:
    """Read a Perfetto trace (protobuf bytes, already gunzipped) into a Trace; times in ns on the boot clock.

    Raises InputError when no packet can be read; anything skipped or salvaged is in `Trace.warnings`."""
    return read_perfetto_chunks([data], path)


def read_perfetto_file(path: str | Path, chunk_bytes: int = CHUNK_BYTES) -> Trace:
    """Read a plain (not gzipped) Perfetto trace file in chunks of chunk_bytes, never holding it whole (the native
    decoder reads the file itself, through one reused buffer)."""
    decoder = PerfettoDecoder()
    try:
        size = decoder.feed_file(str(path), chunk_bytes)
    except OSError as e:
        raise InputError(path, f"cannot read: {e.strerror or e}") from None
    return _trace(decoder, size, str(path))


def read_perfetto_file_if_plain(path: str | Path, head: int, chunk_bytes: int = CHUNK_BYTES) -> Trace | None:
    """As read_perfetto_file when the file opens as a plain Perfetto trace (a regular file within the input size
    limit whose first three records lie within its first `head` bytes: detect.looks_like_perfetto, within), told by
    the decoder from the first bytes it reads. None when it does not, cannot be read, or no packet of it could be
    decoded (text of newlines frames like three empty packets): the caller's checks of the file and its sniffing then
    say what it is, as they did before this shortcut."""
    decoder = PerfettoDecoder()
    try:
        size = decoder.feed_file_if_perfetto(str(path), chunk_bytes, head, source.MAX_INPUT_BYTES)
    except OSError:
        return None   # (an error after decoding began: the caller's read gives the message)
    if size is None or decoder.offset == 0:
        return None
    return _trace(decoder, size, str(path))


def read_perfetto_chunks(chunks: Iterable[bytes], path: str) -> Trace:
    """As read_perfetto, from the file's bytes in consecutive chunks of any size (memory: one chunk, one packet
    and the columns, never the whole file)."""
    decoder = PerfettoDecoder()
    size = 0
    chunks = iter(chunks)
    for chunk in chunks:
        size += len(chunk)
        decoder.feed(chunk)
        if decoder.stopped is not None:
            break
    for chunk in chunks:         # the size of the whole file, for the message
        size += len(chunk)
    return _trace(decoder, size, path)


def _trace(decoder: PerfettoDecoder, size: int, path: str) -> Trace:
    """The Trace of what the decoder read from `size` bytes of input."""
    cols = decoder.finish()
    builder = TraceBuilder("perfetto", path)
    stopped = cols["stopped"]
    if not cols["packets"]:
        why = f": {stopped[1]}" if stopped is not None and stopped[1].startswith("compressed packets") else ""
        if not why and cols["compressed"][0]:
            why = f": its {cols['compressed'][0]} compressed packet record(s) hold no packet"
        raise InputError(path, "no Perfetto trace packets could be read (not a Perfetto trace, or corrupt from "
                         f"the first byte){why}", offset=0)
    _count_compressed(builder, cols["compressed"], path)
    if stopped is not None:
        stop, why = stopped
        builder.warn(f"trace is truncated or corrupt: {why} at byte {stop} of {size}; "
                     f"read the {cols['packets']} packet(s) before it", offset=stop)
    fill_builder(builder, cols)
    del cols     # the builder holds what it needs (numpy views of the same buffers)
    trace = builder.build()
    if builder.replaced_slice_names:
        # strings in the protobuf (atrace prints, track event names) are decoded with replacement by the native
        # core; say how many slice names lost bytes that way, as every text reader does
        trace.warnings.append(ReadWarning(trace.path, f"{builder.replaced_slice_names} slice name(s) held invalid "
                                          "UTF-8; undecodable bytes replaced (U+FFFD)"))
    return trace


def _count_compressed(b: TraceBuilder, compressed: tuple[int, int, int], path: str) -> None:
    """Compressed packets (zlib or zstd) were inflated natively, within the decoder's own caps: their bytes count
    against the run's budget as any other decompression does."""
    records, zlib_bytes, inflated = compressed
    if records:
        budget.current().take(inflated, path, "the trace's compressed packets")
        b.metadata["compressed_packets"] = f"{records} ({zlib_bytes} bytes inflated to {inflated})"


def fill_builder(b: TraceBuilder, cols: dict[str, Any]) -> None:
    """Hand the decoder's columns to the builder, in the order the events' precedence rules need (declarations
    before the events that name threads, authoritative names after comms were gathered)."""
    for key, value in cols["metadata"]:
        b.metadata[key] = value
    if cols["trace_configs"] > 1:
        # each capture writes its TraceConfig once: more than one is several traces in one file (`cat a b`)
        b.warn(f"the file holds {cols['trace_configs']} traces (one TraceConfig packet each, as when captures are "
               "concatenated); read as one: processes and threads of the same id are merged and the time range "
               "spans them all")
    # the records, made natively: one per process, its declarations folded; one per thread, with the TraceBuilder's
    # rules already applied to the declarations, atrace pids, authoritative names (process_tree, task_rename) and
    # comms: each record is made once
    b.adopt_records(cols["processes"], cols["threads"])
    for _processor, index, khz in cols["cpu_info"]:
        # CpuInfo lists one entry per CPU in CPU order; `processor` is its model name ("AArch64 Processor rev 0"),
        # not a number, so the position is the CPU (the reader used to key by that name when present)
        b.cpu_max_frequency(index, khz)
    b.adopt_slice_events(cols["atrace"])
    _ftrace_events(b, cols)
    _sched(b, cols)
    events, broken, incomplete = cols["frame_timeline_counts"]
    b.frame_timeline_events(cols["frame_timeline"])
    if broken:
        b.warn(f"{broken} of {events} FrameTimeline event(s) could not be decoded; skipped")
    if incomplete:
        b.warn(f"{incomplete} FrameTimeline event(s) without cookie, token or pid; skipped")
    _track_events(b, cols)
    _clock_warnings(b, cols)
    dropped, valid_from = cols["before_valid"]
    if dropped:
        b.warn(f"{dropped} ftrace event(s) before {valid_from} ns left out: some CPU's older data was overwritten "
               "(a ring buffer), so scheduling before then is incomplete (trace processor leaves them out too; each "
               "CPU's first ftrace bundle says from when its data is whole)")


def _ftrace_events(b: TraceBuilder, cols: dict[str, Any]) -> None:
    b.binder_many(cols["binder_transaction"], cols["binder_transaction_received"])
    b.block_many(cols["block_rq_issue"], cols["block_rq_complete"])


def _sched(b: TraceBuilder, cols: dict[str, Any]) -> None:
    """The scheduling stream in bulk, as the decoder merged it: switches (prev_state decoded per the kernel's
    encoding), wakings (sched_wakeup only when the trace had no sched_waking), blocked reasons."""
    b.sched_stream(cols["sched"], prev_state_encoding(b.metadata.get("kernel")).state, cols["blocked"])
    if cols["lost_bundles"]:
        b.warn(f"{cols['lost_bundles']} ftrace bundle(s) report lost events (kernel buffer overrun); "
               "scheduling data has gaps")
    if cols["unresolved_callers"]:
        b.warn(f"{cols['unresolved_callers']} sched_blocked_reason caller(s) without kernel symbols in the "
               "trace; kept as hex address or ksym#<id>")


_TRACK_SLICE_END, _TRACK_INSTANT = 2, 3   # TrackEvent.type of the decoder's track_slices rows (1: slice begin)


def _track_events(b: TraceBuilder, cols: dict[str, Any]) -> None:
    """Thread-track slices become thread slices and thread-track instants instants (duration 0, as trace processor
    makes them); events on process or async tracks are counted, not read."""
    for ts, tid, pid, kind, name in cols["track_slices"]:
        if kind == _TRACK_SLICE_END:
            b.slice_end(ts, tid)
        elif kind == _TRACK_INSTANT:
            b.slice_instant(ts, tid, name, pid or None)
        else:
            b.slice_begin(ts, tid, name, pid or None)
    if cols["track_skipped"]:
        b.warn(f"{cols['track_skipped']} track-event slice event(s) not on a thread track skipped")


def _clock_warnings(b: TraceBuilder, cols: dict[str, Any]) -> None:
    """Warnings about timestamps (the names themselves are folded into the thread rows natively)."""
    if cols["unconvertible_clocks"]:
        b.warn(f"timestamps on clock(s) {cols['unconvertible_clocks']} have no clock snapshot relating them to the "
               "boot clock; used as they are")
    if cols["lost_state_events"]:
        b.warn(f"{cols['lost_state_events']} track event(s) skipped after a lost packet on their sequence "
               "(previous_packet_dropped): their times and names depend on the sequence's state, unknown until its "
               "next reset (trace processor skips them too)")
    if cols["clock_overflow_events"]:
        b.warn(f"{cols['clock_overflow_events']} track event(s) skipped: their time on a sequence-scoped clock does "
               "not fit a 64-bit count of ns (damaged clock snapshot or deltas)")
    if cols["foreign_clock_events"]:
        b.warn(f"{cols['foreign_clock_events']} track event(s) on sequence-scoped clocks skipped (no clock snapshot "
               "of their sequence defines the clock)")
