"""The one place tests find the real corpus (../shared/corpus, or $DROIDLAG_CORPUS); tests skip clearly without it."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def corpus_root() -> Path | None:
    env = os.environ.get("DROIDLAG_CORPUS")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared" / "corpus", REPO.parent.parent / "shared" / "corpus"]
    for c in candidates:
        if c.is_dir():
            return c
    return None


@pytest.fixture(scope="session")
def corpus() -> Path:
    """Path of the real corpus; skips the test with a clear message where it is absent."""
    root = corpus_root()
    if root is None:
        pytest.skip("real corpus not found: expected ../shared/corpus beside the repository (or set DROIDLAG_CORPUS)")
    return root


def corpus_file(corpus: Path, rel: str) -> Path:
    p = corpus / rel
    if not p.exists():
        pytest.skip(f"corpus file missing: {rel}")
    return p
