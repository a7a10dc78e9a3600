"""Crashes the fuzz harness found, each rebuilt here from a real corpus file (the crash inputs themselves are not
kept: they derive from corpus files whose licences keep them out of the repository)."""
from __future__ import annotations

import io
import re
import struct
import zipfile

import numpy as np
import pytest
from tests.conftest import corpus_file, usable

from droidlag.errors import InputError
from droidlag.io import read_trace
from droidlag.io.perfetto import read_perfetto
from droidlag.models.trace_builder import MAX_CPU, TraceBuilder

ATRACE = "systrace/catapult_test_data/decompressed_atrace_data.txt"


def test_ignored_event_with_an_absurd_timestamp(tmp_path, corpus):
    """OverflowError in slice nesting: an event droidlag ignores carried a 20-digit seconds field, which widened the
    trace's time range past 64 bits."""
    raw = corpus_file(corpus, ATRACE).read_bytes()
    lines = raw.split(b"\n")
    k = next(n for n, ln in enumerate(lines) if b": tracing_mark_write: " in ln)
    lines[k] = re.sub(rb" \d+\.(\d+): tracing_mark_write: ", rb" 99999999999999999999.\1: some_ignored_event: ",
                      lines[k])
    assert b"99999999999999999999." in lines[k]
    f = tmp_path / "t.txt"
    f.write_bytes(b"\n".join(lines))
    trace = read_trace(f)
    assert any(w.line == k + 1 for w in trace.warnings)
    assert trace.end_ns < 1 << 62


def test_cpu_number_past_32_bits(tmp_path, corpus):
    """polars i64 -> i32 cast error in thread states: a damaged Perfetto ftrace bundle said cpu 2266266301."""
    b = TraceBuilder("perfetto", "x")
    b.sched_switch_many(np.array([10, 20, 30]), np.array([0, 2266266301, 1]), [5, 6, 7], [1, 1, 1], [6, 7, 5],
                        decode_state=lambda v: "S")
    t = b.build()
    assert t.thread_states["cpu"].max() <= MAX_CPU
    assert any("CPU number" in w.message for w in t.warnings)
    # the same damage in systrace text: `[2266266301]` in the CPU column
    raw = corpus_file(corpus, "traces/systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz").read_bytes()
    import gzip
    text = gzip.decompress(raw)
    i = text.index(b": sched_switch: ")
    j = text.rindex(b"[", 0, i)
    f = tmp_path / "cpu.html"
    f.write_bytes(text[:j] + b"[2266266301" + text[text.index(b"]", j):])
    trace = read_trace(f)
    assert trace.thread_states.height > 0
    assert trace.thread_states["cpu"].max() <= MAX_CPU and any("CPU number" in w.message for w in trace.warnings)


def test_zip_claiming_a_future_version(corpus):
    """NotImplementedError from zipfile ('zip file version 14.8'): now a readable InputError."""
    from droidlag.io.archive import open_zip
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.write(corpus_file(corpus, "anr/chkbugreport_deadlock_vm_traces.txt"), "traces.txt")
    data = bytearray(b.getvalue())
    cd = data.rindex(b"PK\x01\x02")
    struct.pack_into("<H", data, cd + 6, 148)      # version needed to extract: 14.8
    with pytest.raises(InputError, match="zip"):
        open_zip("v.zip", bytes(data))


def test_xml_naming_an_unknown_encoding(corpus):
    from droidlag.io.xml_safe import parse_xml
    p = next(iter(sorted(f for f in corpus.glob("layouts/*/app/src/main/res/layout/*.xml") if usable(f))))
    raw = p.read_bytes()
    body = raw[raw.index(b"?>") + 2:] if raw.startswith(b"<?xml") else raw
    for enc in (b"utf78", b"EUC-JP"):   # unknown (LookupError); multi-byte, which expat refuses (ValueError)
        with pytest.raises(InputError, match="XML encoding not readable"):
            parse_xml(b'<?xml version="1.0" encoding="' + enc + b'"?>' + body, p)


def test_view_hierarchy_json_with_invalid_utf8(tmp_path, corpus):
    """UnicodeDecodeError from json.loads on bytes: now replaced and warned."""
    from droidlag.io.view_hierarchy import read_hierarchy
    raw = corpus_file(corpus, "viewhierarchy/rico/rico_33652.json").read_bytes()
    k = raw.index(b'"class"') + 2
    f = tmp_path / "r.json"
    f.write_bytes(raw[:k] + b"\xd8" + raw[k:])
    h, warnings = read_hierarchy(f)
    assert any("invalid UTF-8" in w.message for w in warnings)


def test_zip_entry_with_no_name(corpus):
    """IndexError in zipfile's is_dir() for an entry named ''."""
    from droidlag.io.archive import open_zip, safe_entries
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.writestr(zipfile.ZipInfo(""), b"nameless")
        z.write(corpus_file(corpus, "anr/chkbugreport_deadlock_vm_traces.txt"), "traces.txt")
    warnings: list = []
    got = [name for name, _ in safe_entries("n.zip", open_zip("n.zip", b.getvalue()), warnings)]
    assert got == ["traces.txt"] and any("no name" in w.message for w in warnings)


def test_framestats_header_naming_a_column_twice(corpus):
    """ShapeError building the table: two header fields with one name merged two columns into one list."""
    from droidlag.io.gfxinfo import read_gfxinfo
    raw = corpus_file(corpus, "gfxinfo/sailfish_android10_dumpsys_gfxinfo.txt").read_bytes()
    whole = read_gfxinfo(raw)
    rows = sum(w.framestats.height for p in whole.processes for w in p.windows)
    dump = read_gfxinfo(raw.replace(b"Flags,IntendedVsync,Vsync,", b"Flags,IntendedVsync,IntendedVsync,"))
    assert sum(w.framestats.height for p in dump.processes for w in p.windows) == rows
    assert any("names a column twice" in w.message for w in dump.warnings)


@pytest.mark.parametrize("rel", ["viewhierarchy/droidbot-album-sample/state_2017-08-11_155535.json",
                                 "viewhierarchy/rico/rico_33652.json"])
def test_view_hierarchy_children_that_are_not_a_list(tmp_path, corpus, rel):
    """TypeError ('int' object is not iterable): a view's `children` damaged into a number."""
    from droidlag.io.view_hierarchy import read_hierarchy
    raw = corpus_file(corpus, rel).read_bytes()
    k = raw.index(b'"children"') + len(b'"children"')
    k = raw.index(b":", k) + 1
    f = tmp_path / "v.json"
    f.write_bytes(raw[:k] + b" 7, \"x_was\":" + raw[k:])
    h, _ = read_hierarchy(f)
    assert h.root is not None


def test_pasted_report_writer_with_an_empty_implied_block_does_not_crash():
    """The fuzz harness's find after the pasted-report reader landed (IndexError): the writer's implied-main block
    can be empty when a real header arrives (its lines removed by an earlier rewrite); demoting it must then do
    nothing, and the implied main stays as it was."""
    from droidlag.io.anr_paste import _Writer

    w = _Writer()
    w.paste.implied_main, w.paste.threads, w.paste.frames = True, 1, 0
    w.implied_at = len(w.out)          # nothing written after the implied header's place
    w._demote_cut_block()
    assert w.out == [] and w.paste.implied_main and not w.paste.notes


def test_framestats_row_that_is_a_lone_quote(corpus):
    """polars panicked (PanicException, not an error: 'slice index starts at 1 but ends at 0') on a `"` row of a
    one-column framestats block. Numbers are never quoted: the row is damage, skipped and counted."""
    from droidlag.io.gfxinfo import read_gfxinfo
    text = corpus_file(corpus, "gfxinfo/sailfish_android10_dumpsys_gfxinfo.txt").read_text()
    start = text.index("---PROFILEDATA---\n") + len("---PROFILEDATA---\n")
    end = text.index("---PROFILEDATA---", start)
    block = text[start:end].strip("\n").split("\n")
    first = [ln.split(",")[0] for ln in block]          # the header and rows cut to their first column (Flags)
    rows = first[1:]
    damaged = first + ['"']   # last: a quote opened at the end of the CSV is what panicked
    dump = read_gfxinfo(text[:start] + "\n".join(damaged) + "\n" + text[end:])
    table = dump.processes[0].windows[0].framestats
    assert table.columns[0] == "Flags" and table["Flags"].to_list()[:len(rows)] == [int(r) for r in rows]
    assert any("1 framestats row(s)" in w.message for w in dump.warnings)


def test_legacy_systrace_string_with_a_lone_surrogate_escape(tmp_path, corpus):
    """UnicodeEncodeError in the native ftrace parser: the legacy report's JS string said `\\udfff` (half of a
    UTF-16 pair). A lone half becomes U+FFFD (main unescapes natively now: the same rule there)."""
    import gzip
    raw = gzip.decompress(corpus_file(corpus, "traces/systrace_legacy_2017_2cpu_blockio_writeback_sf.dataonly."
                                               "html.gz").read_bytes())
    i = raw.index(b"tracing_mark_write: B|2067|query")
    j = i + len(b"tracing_mark_write: B|2067|query")
    f = tmp_path / "legacy.html"
    f.write_bytes(raw[:j] + b"\\udfff" + raw[j:])
    trace = read_trace(f)
    names = set(trace.slices["name"].to_list())
    assert "query\ufffd" in names


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """A protobuf varint at pos, decoded here (not by the reader): (value, next position)."""
    value, shift = 0, 0
    while True:
        byte = buf[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return value, pos
        shift += 7


def test_perfetto_packet_length_near_the_top_of_64_bits(corpus):
    """A Rust panic in the native Perfetto framing ('slice index starts at 233 but ends at 232'): a TracePacket
    record claiming a length of 2**64-1 made start + len wrap around. Rebuilt from the first packet of a corpus
    trace: the packet is kept, the damaged record is reported with its byte offset."""
    raw = corpus_file(corpus, "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace").read_bytes()
    assert raw[0] == 0x0A
    length, start = _varint(raw, 1)
    first = raw[:start + length]
    damaged = first + b"\x0a" + b"\xff" * 9 + b"\x01"   # field 1, length-delimited, length 2**64-1
    trace = read_perfetto(damaged, "damaged.perfetto-trace")
    assert any(f"at byte {len(first)} " in w.message for w in trace.warnings), [w.message for w in trace.warnings]
