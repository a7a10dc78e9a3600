"""One budget for everything a run decompresses or extracts: bytes written, archive entries, nesting depth and
compression ratio, counted across every format (gzip, zlib, zip, tar) and every nesting level.

`droidlag.findings.analyze` opens one budget for the whole run (`run_budget()`); a reader called on its own (a
notebook's `read_trace`) gets a fresh budget per call, so the same caps hold there per file."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from droidlag.errors import InputError

# Everything a run may expand to in total (memory and temp files): real captures are far below.
MAX_RUN_BYTES = 2 * 1024**3
# One decompressed stream or archive entry.
MAX_STREAM_BYTES = 1024**3
MAX_ENTRIES = 10000
MAX_DEPTH = 3          # archive in archive in archive: the third level is read, a fourth is refused with a reason
MAX_RATIO = 200        # output bytes per input byte, checked once the output passes RATIO_FLOOR
RATIO_FLOOR = 64 * 1024**2


@dataclass
class Budget:
    """What a run may still decompress or extract; `take` refuses (InputError naming the file) past a cap."""

    max_bytes: int = field(default_factory=lambda: MAX_RUN_BYTES)
    max_entries: int = field(default_factory=lambda: MAX_ENTRIES)
    max_depth: int = field(default_factory=lambda: MAX_DEPTH)
    max_ratio: int = field(default_factory=lambda: MAX_RATIO)
    used_bytes: int = 0
    used_entries: int = 0

    def take(self, n: int, path: str | Path, what: str = "data") -> None:
        """Count `n` more decompressed bytes; InputError when the run's total passes max_bytes."""
        self.used_bytes += n
        if self.used_bytes > self.max_bytes:
            raise InputError(path, f"{what} would take the run past {self.max_bytes} decompressed bytes; refused "
                             "(possible decompression bomb; the whole run shares one budget)")

    def entry(self, path: str | Path) -> None:
        """Count one more archive entry extracted; InputError past max_entries for the run."""
        self.used_entries += 1
        if self.used_entries > self.max_entries:
            raise InputError(path, f"more than {self.max_entries} archive entries in this run; refused")

    def check_ratio(self, produced: int, consumed: int, path: str | Path, what: str = "data") -> None:
        """InputError when `produced` output bytes came from `consumed` input bytes at a bomb-like ratio."""
        if produced > RATIO_FLOOR and produced > self.max_ratio * max(consumed, 1):
            raise InputError(path, f"{what} expands {produced / max(consumed, 1):.0f}:1, past {self.max_ratio}:1; "
                             "refused (possible decompression bomb)")


_current: ContextVar[Budget | None] = ContextVar("droidlag_budget", default=None)


def current() -> Budget:
    """The run's budget, or a fresh one (per-call caps) outside a run."""
    b = _current.get()
    return b if b is not None else Budget()


@contextlib.contextmanager
def run_budget(budget: Budget | None = None) -> Iterator[Budget]:
    """Make `budget` (or a new one) the budget of everything read inside the block."""
    b = budget or Budget()
    token = _current.set(b)
    try:
        yield b
    finally:
        _current.reset(token)
