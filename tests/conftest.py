"""The one place tests find the real corpus (../shared/corpus, or $DROIDLAG_CORPUS). Without it, tests that need it
skip with a clear message on a developer's machine and fail in CI (`CI=true`), where a missing corpus is a broken
set-up, not a reason to pass.

Tiers: every test that takes the `corpus` fixture is marked `corpus`; long ones are marked `slow`. `make test` runs
all of them; `make test-fast` leaves out `slow` and `corpus`."""
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


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _missing(message: str):
    if in_ci():
        pytest.fail(f"{message} (CI=true: the corpus must be there)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """Path of the real corpus; skips the test with a clear message where it is absent (fails in CI)."""
    root = corpus_root()
    if root is None:
        _missing("real corpus not found: expected ../shared/corpus beside the repository (or set DROIDLAG_CORPUS)")
    return root


def corpus_file(corpus: Path, rel: str) -> Path:
    p = corpus / rel
    if not p.exists():
        _missing(f"corpus file missing: {rel}")
    return p


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "corpus" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.corpus)
