"""The one protobuf wire-format helper droidlag needs outside the generated classes: reading a base-128 varint
(for top-level record walking, content sniffing, and the FrameTimeline extension the classes leave undecoded)."""
from __future__ import annotations


def varint(buf: bytes, pos: int) -> tuple[int, int]:
    """The varint at pos: (value, position after it). IndexError when the buffer ends inside it, ValueError when it
    is longer than 10 bytes."""
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def try_varint(buf: bytes, pos: int) -> tuple[int, int] | None:
    """As varint, but None for a cut-off or overlong varint."""
    try:
        return varint(buf, pos)
    except (IndexError, ValueError):
        return None
