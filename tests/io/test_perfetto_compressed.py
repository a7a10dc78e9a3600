"""Compressed packets (TracePacket.compressed_packets, field 50: a zlib stream of Trace.packet records, what a trace
config with COMPRESSION_TYPE_DEFLATE makes the tracing service write). The compressed files are made here from the
corpus traces' own records, split by hand from the wire format and deflated with Python's zlib, so a compressed
trace must read as the plain one; damage inside is reported with the byte offset of its record, never an
all-clear."""
from __future__ import annotations

import zlib

import pytest
from perfetto_wire import field, record_ends
from test_perfetto_stream import NOWINANDROID, PIXEL6A, _same

from conftest import corpus_file
from droidlag.errors import InputError
from droidlag.io import budget, read_trace
from droidlag.io.perfetto import read_perfetto

COMPRESSED_PACKETS = 50


def _records(data: bytes) -> list[bytes]:
    ends = record_ends(data)
    assert ends[-1] == len(data)
    return [data[a:b] for a, b in zip([0, *ends], ends)]


def _compressed(records: list[bytes]) -> bytes:
    """One outer record whose packet holds `records` (Trace.packet records, bytes as in a file) deflated."""
    return field(1, field(COMPRESSED_PACKETS, zlib.compress(b"".join(records), 6)))


def _compress_all(records: list[bytes], batch: int) -> bytes:
    return b"".join(_compressed(records[i:i + batch]) for i in range(0, len(records), batch))


def _without_compression_note(trace) -> dict:
    meta = dict(trace.metadata)
    meta.pop("compressed_packets")
    return meta


@pytest.mark.parametrize("rel", [PIXEL6A, NOWINANDROID])
@pytest.mark.parametrize("batch", [1, 97, 100_000])
def test_a_compressed_trace_reads_as_the_plain_one(corpus, tmp_path, rel, batch):
    path = corpus_file(corpus, rel)
    plain = read_trace(path)
    records = _records(path.read_bytes())
    out = tmp_path / "compressed.perfetto-trace"
    out.write_bytes(_compress_all(records, batch))
    got = read_trace(out)      # the file path: sniffed as Perfetto and streamed
    for name in ("slices", "thread_states", "counters", "binder", "block", "frame_timeline"):
        assert getattr(got, name).equals(getattr(plain, name)), name
    assert got.threads == plain.threads and got.processes == plain.processes
    assert (got.start_ns, got.end_ns) == (plain.start_ns, plain.end_ns)
    assert _without_compression_note(got) == plain.metadata
    assert [w.message for w in got.warnings] == [w.message for w in plain.warnings]
    n_compressed = -(-len(records) // batch)
    inflated = sum(len(r) for r in records)
    assert got.metadata["compressed_packets"].startswith(f"{n_compressed} (")
    assert got.metadata["compressed_packets"].endswith(f"inflated to {inflated})")


def test_compressed_and_plain_packets_mix(corpus):
    path = corpus_file(corpus, NOWINANDROID)
    records = _records(path.read_bytes())
    mixed = b"".join(records[:10]) + _compress_all(records[10:4000], 500) + b"".join(records[4000:])
    _same_but_note(read_perfetto(mixed, "mixed"), read_perfetto(path.read_bytes(), "mixed"))


def _same_but_note(a, b) -> None:
    a.metadata.pop("compressed_packets")
    _same(a, b)


def _stop_warning(trace) -> str:
    msgs = [w.message for w in trace.warnings if "truncated or corrupt" in w.message]
    assert len(msgs) == 1, [w.message for w in trace.warnings]
    return msgs[0]


def test_damaged_zlib_stops_at_its_record_with_the_packets_before_kept(corpus):
    path = corpus_file(corpus, NOWINANDROID)
    records = _records(path.read_bytes())
    good = _compress_all(records[:2000], 1000)
    bad = bytearray(_compressed(records[2000:3000]))
    bad[len(bad) // 2] ^= 0xFF              # a byte inside the deflate stream
    data = good + bytes(bad) + _compress_all(records[3000:], 1000)
    t = read_perfetto(data, "damaged")
    msg = _stop_warning(t)
    assert f"at byte {len(good)} of {len(data)}" in msg
    assert "compressed packets do not decompress" in msg
    assert "read the 2000 packet(s) before it" in msg
    # the frames of the first 2000 packets, as a plain read of them gives
    _same_but_note(t, _with_stop_warning_of(read_perfetto(b"".join(records[:2000]), "damaged"), t))


def _with_stop_warning_of(plain, damaged):
    plain.warnings[:0] = [w for w in damaged.warnings if "truncated or corrupt" in w.message]
    return plain


def test_a_cut_off_zlib_stream_is_named(corpus):
    path = corpus_file(corpus, NOWINANDROID)
    records = _records(path.read_bytes())
    z = zlib.compress(b"".join(records[5:500]))
    data = b"".join(records[:5]) + field(1, field(COMPRESSED_PACKETS, z[: len(z) // 2]))
    msg = _stop_warning(read_perfetto(data, "cut"))
    assert "the zlib stream is cut off" in msg and "read the 5 packet(s) before it" in msg


def test_a_broken_packet_inside_keeps_the_ones_before_it(corpus):
    path = corpus_file(corpus, NOWINANDROID)
    records = _records(path.read_bytes())
    inner = records[:300] + [field(1, b"\x0a\x05ab")]    # a packet whose field runs past its end
    msg = _stop_warning(read_perfetto(_compressed(inner), "inner"))
    assert "packet 301 inside compressed packets does not decode" in msg
    assert "read the 300 packet(s) before it" in msg


def test_nested_compressed_packets_are_refused(corpus):
    path = corpus_file(corpus, NOWINANDROID)
    records = _records(path.read_bytes())
    data = b"".join(records[:3]) + _compressed(records[3:6] + [_compressed(records[6:9])])
    msg = _stop_warning(read_perfetto(data, "nested"))
    assert "compressed packets nested in compressed packets" in msg
    assert "read the 6 packet(s) before it" in msg


def test_a_decompression_bomb_is_refused_not_inflated(corpus):
    path = corpus_file(corpus, NOWINANDROID)
    first = _records(path.read_bytes())[0]
    bomb = field(1, field(COMPRESSED_PACKETS, zlib.compress(b"\0" * (65 << 20), 9)))  # about 64 kB, 1000:1
    msg = _stop_warning(read_perfetto(first + bomb, "bomb"))
    assert "possible decompression bomb" in msg and "read the 1 packet(s) before it" in msg
    with pytest.raises(InputError, match="possible decompression bomb"):   # nothing before it: the reason is given
        read_perfetto(bomb, "bomb")


def test_inflated_bytes_count_against_the_runs_budget(corpus):
    path = corpus_file(corpus, NOWINANDROID)
    data = _compress_all(_records(path.read_bytes()), 1000)
    with budget.run_budget(budget.Budget(max_bytes=100_000)):
        with pytest.raises(InputError, match="compressed packets"):
            read_perfetto(data, "small budget")


# ---- zstd (TracePacket.zstd_compressed_packets, field 133; and field 50 holding a zstd frame, as the tracing
# service's zstd compressor first wrote it) ---------------------------------------------------------------------------
ZSTD_COMPRESSED_PACKETS = 133


def _zstd(records: list[bytes], field_number: int = ZSTD_COMPRESSED_PACKETS) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    return field(1, field(field_number, zstandard.ZstdCompressor(level=3).compress(b"".join(records))))


@pytest.mark.parametrize("field_number", [ZSTD_COMPRESSED_PACKETS, COMPRESSED_PACKETS])
def test_a_zstd_compressed_trace_reads_as_the_plain_one(corpus, tmp_path, field_number):
    path = corpus_file(corpus, PIXEL6A)
    records = _records(path.read_bytes())
    out = tmp_path / "zstd.perfetto-trace"
    out.write_bytes(b"".join(_zstd(records[i:i + 400], field_number) for i in range(0, len(records), 400)))
    got = read_trace(out)
    _same_but_note(got, read_trace(path))


def test_a_damaged_zstd_frame_stops_at_its_record(corpus):
    path = corpus_file(corpus, NOWINANDROID)
    records = _records(path.read_bytes())
    good = b"".join(records[:100])
    zstandard = pytest.importorskip("zstandard")
    frame = zstandard.ZstdCompressor(level=3).compress(b"".join(records[100:900]))
    whole = good + field(1, field(ZSTD_COMPRESSED_PACKETS, frame[: len(frame) // 2]))   # the frame cut off
    msg = _stop_warning(read_perfetto(whole, "zstd"))
    assert f"at byte {len(good)} of {len(whole)}" in msg
    assert "compressed packets do not decompress" in msg and "read the 100 packet(s) before it" in msg


def test_bytes_after_the_zlib_stream_stop_the_read(corpus):
    path = corpus_file(corpus, NOWINANDROID)
    records = _records(path.read_bytes())
    z = zlib.compress(b"".join(records[10:20])) + zlib.compress(b"".join(records[20:30]))   # two streams in one
    msg = _stop_warning(read_perfetto(b"".join(records[:10]) + field(1, field(COMPRESSED_PACKETS, z)), "two"))
    assert "bytes follow the end of the zlib stream" in msg and "read the 10 packet(s) before it" in msg


def test_zstd_frames_in_a_row_are_all_read(corpus):
    """A zstd stream may hold frames one after another (RFC 8878, 3.1): each is read."""
    zstandard = pytest.importorskip("zstandard")
    path = corpus_file(corpus, NOWINANDROID)
    records = _records(path.read_bytes())
    frames = b"".join(zstandard.ZstdCompressor().compress(b"".join(records[i:i + 1000]))
                      for i in range(0, len(records), 1000))
    _same_but_note(read_perfetto(field(1, field(ZSTD_COMPRESSED_PACKETS, frames)), "frames"),
                   read_perfetto(path.read_bytes(), "frames"))


def test_compressed_packets_holding_nothing_say_so():
    with pytest.raises(InputError, match="its 1 compressed packet record"):
        read_perfetto(field(1, field(COMPRESSED_PACKETS, zlib.compress(b""))), "empty")
