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


# The fleet tests' small generated fleet (tests/fleet/), made once per session from the real corpus, seeded.
@pytest.fixture(scope="session")
def small_fleet(corpus: Path, tmp_path_factory) -> tuple[Path, dict]:
    """(folder, truth) of a 30-phone synthetic fleet (about 200 files)."""
    from droidlag.fleet.generate import FleetParams, generate_fleet
    out = tmp_path_factory.mktemp("fleet") / "gen"
    generate_fleet(out, corpus / "anr", corpus / "gfxinfo" / "sailfish_android10_dumpsys_gfxinfo.txt",
                   FleetParams(phones=30, zipf_b=1.9, seed=7))
    import json
    return out, json.loads((out / "truth.json").read_text())


@pytest.fixture(scope="session")
def small_fleet_db(small_fleet, tmp_path_factory) -> Path:
    """The small fleet ingested (manifest) and clustered on DuckDB."""
    from droidlag.fleet.ingest import ingest
    from droidlag.fleet.pipeline import cluster_store
    folder, _ = small_fleet
    db = tmp_path_factory.mktemp("fleetdb") / "fleet.duckdb"
    ingest([folder], db, manifest=folder / "manifest.csv", jobs=2)
    cluster_store(db)
    return db
