"""Protobuf wire bytes written by hand for tests and the fuzz harness (the `perfetto` package's classes leave out
TracePacket field 76, FrameTimeline): a varint and a field, encoded from the wire format's definition, and a file's
Trace.packet records walked, independently of the reader."""
from __future__ import annotations


def varint(v: int) -> bytes:
    """A base-128 varint; negative numbers as their 64-bit two's complement, as protobuf's int64 writes them."""
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field(number: int, value: int | bytes) -> bytes:
    """A field: bytes as length-delimited (wire type 2), an int as a varint (wire type 0)."""
    if isinstance(value, bytes):
        return varint(number << 3 | 2) + varint(len(value)) + value
    return varint(number << 3) + varint(value)


def record_ends(data: bytes) -> list[int]:
    """End offsets of the whole Trace.packet records (tag 0x0A, varint length) from the start of `data`; the walk
    stops at a record cut off by the end of the data (a file's head) or at any other tag."""
    ends, pos = [], 0
    while pos < len(data) and data[pos] == 0x0A:
        length, shift, pos = 0, 0, pos + 1
        while pos < len(data) and data[pos] & 0x80:
            length |= (data[pos] & 0x7F) << shift
            shift, pos = shift + 7, pos + 1
        if pos >= len(data):
            break
        length |= data[pos] << shift
        if pos + 1 + length > len(data):
            break
        pos += 1 + length
        ends.append(pos)
    return ends
