"""The native Perfetto decoder fed in chunks: any chunk size gives the same Trace, a plain file is streamed (never
loaded whole), and a broken record leaves exactly the packets before it (checked against the file's own record
framing, walked by hand in perfetto_wire.record_ends)."""
from __future__ import annotations

import gzip

import pytest
from perfetto_wire import record_ends

import droidlag.io.source as source
from conftest import corpus_file
from droidlag.io import read_trace
from droidlag.io.perfetto import read_perfetto, read_perfetto_chunks, read_perfetto_file

PIXEL6A = "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace"
NOWINANDROID = "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace"
TABLES = ("slices", "thread_states", "counters", "binder", "block", "frame_timeline")


def _same(a, b) -> None:
    for name in TABLES:
        assert getattr(a, name).equals(getattr(b, name)), name
    assert a.threads == b.threads and a.processes == b.processes
    assert (a.start_ns, a.end_ns, a.metadata) == (b.start_ns, b.end_ns, b.metadata)


@pytest.mark.parametrize("rel", [PIXEL6A, NOWINANDROID])
@pytest.mark.parametrize("chunk", [7, 4093, 1 << 20])
def test_any_chunk_size_reads_the_same_trace(corpus, rel, chunk):
    path = corpus_file(corpus, rel)
    whole = read_perfetto(path.read_bytes(), str(path))
    _same(read_perfetto_file(path, chunk_bytes=chunk), whole)


def test_read_trace_streams_a_plain_perfetto_file(corpus, monkeypatch):
    path = corpus_file(corpus, PIXEL6A)

    def no_whole_file(p):
        raise AssertionError("the whole file was loaded")

    monkeypatch.setattr(source, "read_bytes", no_whole_file)
    monkeypatch.setattr("droidlag.io.detect.read_bytes", no_whole_file)
    t = read_trace(path)
    assert t.thread_states.height > 0 and t.frame_timeline.height > 0


def test_cut_inside_a_record_stops_at_that_record_and_matches_the_prefix(corpus):
    data = corpus_file(corpus, NOWINANDROID).read_bytes()
    ends = record_ends(data)
    assert ends[-1] == len(data)
    cut = data[: ends[len(ends) // 2] + 3]           # three bytes into the next record
    t = read_perfetto_chunks([cut[i:i + 65536] for i in range(0, len(cut), 65536)], "cut")
    stop = [w for w in t.warnings if "truncated or corrupt" in w.message]
    assert [w.offset for w in stop] == [ends[len(ends) // 2]]
    assert f"read the {len(ends) // 2 + 1} packet(s)" in stop[0].message
    _same(t, read_perfetto(data[: ends[len(ends) // 2]], "cut"))


def test_a_packet_that_does_not_decode_leaves_nothing_behind(corpus):
    """A record whose inner bytes are corrupt is rolled back whole: the trace equals the one of the bytes before it."""
    path = corpus_file(corpus, PIXEL6A)
    data = bytearray(path.read_bytes())
    ends = record_ends(bytes(data))
    # the largest record (ftrace bundles): overwrite its tail with bytes that are no valid field (wire type 7)
    sizes = [(e - s, i) for i, (s, e) in enumerate(zip([0] + ends[:-1], ends))]
    _, i = max(sizes)
    start, end = ([0] + ends)[i], ends[i]
    data[end - 8:end] = b"\xff" * 8
    t = read_perfetto(bytes(data), "corrupt")
    stop = [w for w in t.warnings if "truncated or corrupt" in w.message]
    assert [w.offset for w in stop] == [start] and "packet does not decode" in stop[0].message
    _same(t, read_perfetto(bytes(data[:start]), "corrupt"))



def test_read_trace_streams_a_gzipped_perfetto_file(corpus, tmp_path, monkeypatch):
    """A gzipped trace reads like the plain one, without the file or its expansion loaded whole: the gunzip
    yields pieces of at most 8 MiB (here capped lower to see several) and read_bytes is never called."""
    path = corpus_file(corpus, PIXEL6A)
    gz = tmp_path / "t.perfetto-trace.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    pieces = []
    real = source.gunzip_stream

    def small_pieces(p, warnings):
        for piece in real(p, warnings, piece=4096, out_max=65536):
            pieces.append(len(piece))
            yield piece

    def no_whole_file(p):
        raise AssertionError("the whole file was loaded")

    monkeypatch.setattr("droidlag.io.gunzip_stream", small_pieces)
    monkeypatch.setattr(source, "read_bytes", no_whole_file)
    monkeypatch.setattr("droidlag.io.detect.read_bytes", no_whole_file)
    t = read_trace(gz)
    _same(t, read_perfetto_file(path))
    assert len(pieces) > 10 and max(pieces) <= 65536 and sum(pieces) == path.stat().st_size


def test_gzip_stream_keeps_gunzips_rules(tmp_path):
    """Several members are read in order; a truncated member yields what decompressed with a warning at the end."""
    data = bytes(range(256)) * 4000
    two = tmp_path / "two.gz"
    two.write_bytes(gzip.compress(data[:500_000]) + gzip.compress(data[500_000:]))
    warnings: list = []
    assert b"".join(source.gunzip_stream(two, warnings, piece=1000, out_max=3000)) == data and not warnings
    cut = tmp_path / "cut.gz"
    whole = gzip.compress(data)
    cut.write_bytes(whole[: len(whole) // 2])
    got = b"".join(source.gunzip_stream(cut, warnings, piece=1000))
    assert 0 < len(got) < len(data) and data.startswith(got)
    assert len(warnings) == 1 and "truncated" in warnings[0].message and warnings[0].offset == len(whole) // 2
    assert b"".join(source.gunzip_stream(cut, [], piece=len(whole))) == got     # the same whatever the piece size
