"""Nothing here uses data from the sources reserved for independent evaluation (tests/conftest.py RESERVED_SOURCES),
even where the corpus holds a copy: the corpus files they gave are found from the corpus's SOURCES.md, and no test,
benchmark, fuzz seed, document or example names one of them."""
from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import REPO, ReservedSourceOpened, reserved_corpus_files, usable

# Read by hand from corpus/traces/SOURCES.md's "Origin:" lines (sections 1-4: Gracker/SystraceForBlog; 8-9:
# microsoft/Microsoft-Performance-Tools-Linux-Android): the files the parser must find, by another route.
EXPECTED = {
    "traces/systrace_meizu_flyme_2019_list_jank.dataonly.html.gz",
    "traces/systrace_meizu_flyme_2019_launcher_scroll.dataonly.html.gz",
    "traces/systrace_meizu_flyme_2019_flutter_wanandroid.dataonly.html.gz",
    "traces/systrace_xiaomi_miui_2021_launcher.dataonly.html.gz",
    "traces/perfetto_pixel6_a12_sched_frametimeline_perfsamples.pftrace",
    "traces/perfetto_samsung_s20_a11_sched_idle_freq_only.perfetto-trace",
}
SCANNED = ("src", "tests", "benchmarks", "fuzz", "docs", "examples", "native/src", "README.md", "Makefile", ".ci")


def test_reserved_corpus_files_are_found_from_sources(corpus: Path):
    found = {p.relative_to(corpus).as_posix() for p in reserved_corpus_files(corpus)}
    assert found == EXPECTED
    assert not usable(corpus / next(iter(EXPECTED)))
    assert usable(corpus / "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace")


def _text_files():
    for top in SCANNED:
        base = REPO / top
        for p in [base] if base.is_file() else sorted(base.rglob("*")) if base.is_dir() else []:
            if p.is_file() and p.suffix != ".pyc" and p.resolve() != Path(__file__).resolve() and p.stat().st_size < 4 << 20:
                yield p


def test_no_file_of_the_repository_names_a_reserved_corpus_file(corpus: Path):
    names = {Path(r).name for r in reserved_corpus_files(corpus)} | {Path(r).name for r in EXPECTED}
    stems = {n.split(".")[0] for n in names}
    hits = []
    for p in _text_files():
        text = p.read_bytes().decode("utf-8", "replace")
        hits += [f"{p.relative_to(REPO)}: {s}" for s in stems if s in text]
    assert not hits, "files naming reserved corpus files:\n" + "\n".join(hits)


def test_opening_a_reserved_corpus_file_fails_during_the_tests(corpus: Path):
    name = sorted(EXPECTED)[0]
    with pytest.raises(Exception) as e:
        open(corpus / name, "rb").close()   # noqa: SIM115  (the audit hook refuses it before anything is read)
    assert type(e.value).__name__ == ReservedSourceOpened.__name__ and name.split("/")[-1] in str(e.value)
