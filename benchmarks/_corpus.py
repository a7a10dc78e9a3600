"""Where benchmarks find the real corpus: the same rule as tests/conftest.py (../shared/corpus or $DROIDLAG_CORPUS)."""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def corpus_root() -> Path | None:
    """The corpus directory, or None when it is not beside the repository and $DROIDLAG_CORPUS is unset."""
    env = os.environ.get("DROIDLAG_CORPUS")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared" / "corpus", REPO.parent.parent / "shared" / "corpus"]
    for c in candidates:
        if c.is_dir():
            return c
    return None


def perfetto_traces() -> list[Path]:
    """The corpus's Perfetto traces (by content: the first byte of a Trace.packet record), sorted by name."""
    root = corpus_root()
    if root is None:
        return []
    out = []
    for p in sorted((root / "traces").iterdir()):
        if p.is_file() and p.suffix not in (".md", ".gz") and p.read_bytes()[:1] == b"\x0a":
            out.append(p)
    return out
