"""atrace -z's zlib stream (`TRACE:` + zlib) as systrace_html.inflate_salvaging reads it: clean, damaged by an old adb
shell's LF -> CRLF (repaired), damaged beyond repair (the text before the damage kept), followed by other data. The
expected text is worked out with zlib directly (fed byte by byte to find where the damage stops it)."""
from __future__ import annotations

import random
import zlib

import pytest

from droidlag.io.systrace_html import inflate_salvaging


def trace_text(lines: int = 3000, seed: int = 7) -> bytes:
    rng = random.Random(seed)
    out = []
    for i in range(lines):
        tid = rng.randrange(100, 4000)
        out.append(f"  task-{tid} ( {tid}) [00{i % 4}] ...1 {1000 + i / 1000:.6f}: tracing_mark_write: "
                   f"{rng.choice('BE')}|{tid}|work {rng.randrange(1 << 30):x}\n")
    return "".join(out).encode()


def prefix_before_damage(data: bytes) -> bytes:
    """What zlib inflates of `data` before the byte it rejects (fed one byte at a time)."""
    d = zlib.decompressobj()
    out = []
    for i in range(len(data)):
        try:
            out.append(d.decompress(data[i:i + 1]))
        except zlib.error:
            break
    return b"".join(out)


def test_a_clean_stream_inflates_without_warnings():
    text = trace_text()
    warnings: list = []
    assert inflate_salvaging(zlib.compress(text, 6), "t.txt", warnings) == text
    assert warnings == []


def test_lf_turned_crlf_is_repaired():
    text = trace_text()
    blob = zlib.compress(text, 6)
    assert b"\n" in blob and b"\r\n" not in blob
    warnings: list = []
    assert inflate_salvaging(blob.replace(b"\n", b"\r\n"), "t.txt", warnings) == text
    assert [w.message for w in warnings] == ["zlib stream had adb's LF->CRLF damage; repaired"]


def test_damage_beyond_repair_keeps_the_text_before_it():
    text = trace_text()
    blob = bytearray(zlib.compress(text, 6))
    at = len(blob) // 2
    blob[at:at + 40] = bytes(40)         # a run of zeros in the middle of the stream
    blob = bytes(blob).replace(b"\n", b"\r\n")    # and CRLFs, so that the repair is tried and fails too
    expected = prefix_before_damage(blob)
    assert 0 < len(expected) < len(text) and text.startswith(expected)
    warnings: list = []
    assert inflate_salvaging(blob, "t.txt", warnings) == expected
    assert len(warnings) == 1 and warnings[0].message.startswith("zlib stream corrupt")
    assert f"kept the {len(expected)} bytes" in warnings[0].message


@pytest.mark.parametrize("crlf_after", [False, True])
def test_data_after_the_stream_is_reported_and_the_stream_kept(crlf_after):
    text = trace_text(500)
    tail = b"more\r\nstuff\r\n" if crlf_after else b"more stuff"
    warnings: list = []
    assert inflate_salvaging(zlib.compress(text, 6) + tail, "t.txt", warnings) == text
    assert [w.message for w in warnings] == [f"{len(tail)} bytes after the end of the zlib stream ignored"]
