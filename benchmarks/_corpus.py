"""Where benchmarks find the real corpus: the same rule as tests/conftest.py (../shared/corpus or $DROIDLAG_CORPUS)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from conftest import corpus_root, usable  # noqa: E402  (the one corpus finder, shared with the tests)


def perfetto_traces() -> list[Path]:
    """The corpus's Perfetto traces (by content: the first byte of a Trace.packet record), sorted by name; none from a
    reserved source (tests/conftest.py)."""
    root = corpus_root()
    if root is None:
        return []
    out = []
    for p in sorted((root / "traces").iterdir()):
        if p.is_file() and p.suffix not in (".md", ".gz") and usable(p) and p.read_bytes()[:1] == b"\x0a":
            out.append(p)
    return out


def best_of(fn, n: int):
    """The fastest of n calls of fn: (seconds, the last call's result)."""
    best, out = float("inf"), None
    for _ in range(n):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out
