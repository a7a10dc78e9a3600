"""The one place tests find the real corpus (../shared/corpus, or $DROIDLAG_CORPUS). Without it, tests that need it
skip with a clear message on a developer's machine and fail in CI (`CI=true`), where a missing corpus is a broken
set-up, not a reason to pass.

Tiers: every test that takes the `corpus` fixture is marked `corpus`; long ones are marked `slow`. `make test` runs
all of them; `make test-fast` leaves out `slow` and `corpus`."""
from __future__ import annotations

import os
import re
import sys
from functools import cache
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


# Sources kept for independent evaluation (the developers' guide, "Reserved data"): nothing from them is read, searched
# or used here, even where the corpus holds a copy. Owner/name, or owner/* for all of an owner's repositories.
RESERVED_SOURCES = (
    "Gracker/SystraceForBlog", "microsoft/Microsoft-Performance-Tools-Linux-Android",
    "OneSignal/OneSignal-Android-SDK", "android/play-billing-samples", "frostwire/frostwire", "google/ExoPlayer",
    "BranchMetrics/android-branch-deep-linking-attribution", "appmetrica/*", "yandexmobile/*", "flutter/flutter",
    "KurobaExReports/Reports", "googleads/googleads-mobile-android-examples", "wikimedia/apps-android-wikipedia",
    "M66B/FairEmail", "thunderbird/thunderbird-android", "TeamAmaze/AmazeFileManager", "spacecowboy/Feeder",
)
_RESERVED_RE = re.compile("|".join(
    rf"\b{re.escape(s[:-2])}/[\w.-]+" if s.endswith("/*") else rf"\b{re.escape(s)}\b" for s in RESERVED_SOURCES),
    re.IGNORECASE)
_HEADING_RE = re.compile(r"^#{2,4} ", re.MULTILINE)


@cache
def reserved_corpus_files(root: Path) -> frozenset[Path]:
    """Corpus files copied from a reserved source, by their SOURCES.md: a section (a markdown heading and its text)
    that names a reserved repository marks the files its heading names in backticks, in that SOURCES.md's folder."""
    out = set()
    for sources in root.rglob("SOURCES.md"):
        for section in _HEADING_RE.split(sources.read_text(encoding="utf-8", errors="replace")):
            if _RESERVED_RE.search(section):
                heading = section.split("\n", 1)[0]
                out.update(sources.parent / name for name in re.findall(r"`([^`/]+)`", heading))
    return frozenset(p for p in out if p.exists())


@cache
def _reserved_resolved(root: Path) -> frozenset[Path]:
    return frozenset(p.resolve() for p in reserved_corpus_files(root))


def usable(path: Path) -> bool:
    """Whether tests, benchmarks and the fuzz seeds may use this corpus file (not from a reserved source)."""
    root = corpus_root()
    return root is None or path.resolve() not in _reserved_resolved(root)


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
    if p.exists() and not usable(p):
        pytest.fail(f"corpus file {rel} comes from a reserved source (tests/conftest.py RESERVED_SOURCES): not for "
                    "use here", pytrace=False)
    if not p.exists():
        _missing(f"corpus file missing: {rel}")
    return p


class ReservedSourceOpened(RuntimeError):
    """A test opened a corpus file copied from a reserved source."""


def pytest_configure(config):
    """Fail any open() of a reserved-source corpus file during the tests (an audit hook: the native readers open
    files themselves, but every input is sniffed from Python first), so a test that reaches one through a folder or
    a glob fails at once, naming it."""
    root = corpus_root()
    banned = {p.name for p in reserved_corpus_files(root)} if root is not None else set()
    if not banned:
        return

    def hook(event: str, args: tuple) -> None:
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(os.fspath(args[0]))
            if os.path.basename(path) in banned:
                raise ReservedSourceOpened(f"{path}: a corpus file from a reserved source (tests/conftest.py "
                                           "RESERVED_SOURCES) must not be used")

    sys.addaudithook(hook)


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
