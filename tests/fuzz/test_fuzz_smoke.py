"""The fuzz harness's smoke run: every reader on its corpus seeds and seeded random mutations of them (the `plain`
engine: deterministic, no coverage), no exception but InputError, no hang. `make fuzz` runs the long,
coverage-guided version (atheris)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fuzz"))
import harness  # noqa: E402

SMOKE_RUNS = 150


@pytest.mark.parametrize("reader", sorted(harness.TARGETS))
def test_reader_survives_mutated_corpus(corpus, reader):
    res = harness.fuzz_plain(reader, runs=SMOKE_RUNS, seconds=None, seed=0, save=None)
    assert res["executions"] == SMOKE_RUNS
    assert res["crashes"] == []


def test_mutations_are_deterministic(corpus):
    import random
    pool = harness.seeds("gfxinfo")
    a = [harness.mutate(random.Random(3), pool[0], pool) for _ in range(3)]
    b = [harness.mutate(random.Random(3), pool[0], pool) for _ in range(3)]
    assert a == b and any(x != pool[0] for x in a)
