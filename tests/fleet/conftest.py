"""A small generated fleet shared by the fleet tests (made once per session from the real corpus, seeded)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from droidlag.fleet.generate import FleetParams, generate_fleet


@pytest.fixture(scope="session")
def small_fleet(corpus: Path, tmp_path_factory) -> tuple[Path, dict]:
    """(folder, truth) of a 30-phone synthetic fleet (about 200 files)."""
    out = tmp_path_factory.mktemp("fleet") / "gen"
    generate_fleet(out, corpus / "anr", corpus / "gfxinfo" / "sailfish_android10_dumpsys_gfxinfo.txt",
                   FleetParams(phones=30, zipf_b=1.9, seed=7))
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
