"""Readers of LBO results on the corpus's real result blocks (distillation agent, MMTk) and on droidlag's schema."""
from __future__ import annotations

import gzip
import json

import pytest
from tests.conftest import corpus_file

from droidlag.errors import InputError
from droidlag.io.lbo import read_lbo_file, read_lbo_results

FOP = "gc/lbo/caizixian_distillation/make_test_fop_output.txt"
LUSEARCH = "gc/lbo/wenyuzhao_lxr-pldi-2022-artifact/lusearch_immix_lxr_output.txt"


def test_tabulate_block_of_the_distillation_agent(corpus):
    invs, warnings = read_lbo_file(corpus_file(corpus, FOP))
    assert warnings == [] and len(invs) == 1
    inv = invs[0]
    # Values as printed in the block (SOURCES.md quotes them): time 900 = 796 other + 104 stw (ms).
    assert inv.benchmark == "fop" and inv.pauses == 67 and inv.heap_mb == 32
    assert inv.costs["wall"].total == 900e6 and inv.costs["wall"].gc == 104e6
    assert inv.costs["wall"].distilled == 796e6
    assert inv.costs["task_clock"].total == 1826203059 + 285619075
    assert inv.costs["task_clock"].gc == 285619075
    assert inv.costs["cycles"].distilled == 7747951292
    assert "freq" not in inv.costs  # GHz is not a cost


def test_mmtk_statistics_totals_block(corpus):
    invs, warnings = read_lbo_file(corpus_file(corpus, LUSEARCH))
    assert warnings == [] and len(invs) == 1
    inv = invs[0]
    assert inv.benchmark == "lusearch" and inv.collector == "Immix" and inv.pauses == 525 and inv.heap_mb == 100
    assert inv.costs["wall"].total == pytest.approx(17384.40e6)  # "Total time: 17384.40 ms"
    assert inv.costs["wall"].gc == pytest.approx(1151.63e6)


def test_readmes_with_prose_naming_the_blocks(corpus):
    """The artifact READMEs embed the same blocks amid prose that mentions the block names: one block each, no
    false block from the prose."""
    invs, warnings = read_lbo_results(corpus / "gc" / "lbo")
    by_source = {}
    for i in invs:
        by_source.setdefault(i.source.rsplit(":", 1)[0].rsplit("/", 1)[-1], []).append(i)
    assert {k: len(v) for k, v in by_source.items()} == {"README.md": 2, "make_test_fop_output.txt": 1,
                                                          "lusearch_immix_lxr_output.txt": 1}
    assert warnings == []
    readme_fop = next(i for i in invs if i.source.endswith("caizixian_distillation/README.md:41"))
    assert readme_fop.costs["wall"].total == 900e6  # the README's copy of the block reads as the extracted one


def test_running_ng_log_with_invocations_and_an_oom(tmp_path, corpus):
    """A runbms log: name gives benchmark, heap factor (x1000), heap MB and config; each prologue starts an
    invocation; an invocation that ran out of memory and printed no block is an OOM invocation."""
    block = corpus_file(corpus, FOP).read_text()
    oom = "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n"
    text = "".join(f"\n-----\nmkdir -p PLOTTY_WORKAROUND; timedrun; java ...\n{b}" for b in (block, oom, block))
    p = tmp_path / "fop.2000.64.ParallelGC.dacapochopin.log.gz"
    p.write_bytes(gzip.compress(text.encode()))
    invs, _ = read_lbo_results(tmp_path)
    assert [i.oom for i in invs] == [False, True, False]
    assert {(i.benchmark, i.collector, i.heap_factor, i.heap_mb) for i in invs} == {
        ("fop", "ParallelGC.dacapochopin", 2.0, 64.0)}


def test_schema_jsonl_and_csv_agree(tmp_path):
    rows = [{"benchmark": "b", "collector": "G1", "heap_factor": 2.0, "heap_mb": 40, "invocation": 0,
             "status": "ok", "pauses": 3, "wall": 100.0, "wall.gc": 10.0, "task_clock": 150.0,
             "task_clock.gc": 40.0},
            {"benchmark": "b", "collector": "Z", "heap_factor": 1.0, "heap_mb": 20, "invocation": 0, "status": "oom"}]
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken\n")
    cols = ["benchmark", "collector", "heap_factor", "heap_mb", "invocation", "status", "pauses", "wall", "wall.gc",
            "task_clock", "task_clock.gc"]
    csv_text = ",".join(cols) + "\n" + "\n".join(",".join(str(r.get(c, "")) for c in cols) for r in rows) + "\n"
    (tmp_path / "r.csv").write_text(csv_text)
    a, wa = read_lbo_file(tmp_path / "r.jsonl")
    b, wb = read_lbo_file(tmp_path / "r.csv")
    assert len(wa) == 1 and wa[0].line == 3 and wb == []
    assert [(i.collector, i.oom, i.costs) for i in a] == [(i.collector, i.oom, i.costs) for i in b]
    assert a[0].costs["task_clock"].distilled == 110.0 and a[1].oom


def test_nothing_usable_names_the_input(tmp_path):
    (tmp_path / "x.txt").write_text("no blocks here\n")
    with pytest.raises(InputError, match="no LBO results"):
        read_lbo_results(tmp_path)
    with pytest.raises(InputError, match="no such file"):
        read_lbo_results(tmp_path / "missing")


def test_block_read_from_logcat_lines(tmp_path, corpus):
    """The ISMM'24 Android runner reads the block from logcat: the same block behind threadtime prefixes."""
    block = corpus_file(corpus, FOP).read_text().splitlines()
    prefixed = "\n".join(f"11-25 10:00:00.{n:03d}  4242  4250 I DistillationAgent: {x}" for n, x in enumerate(block))
    (tmp_path / "logcat.txt").write_text(prefixed + "\n")
    invs, warnings = read_lbo_file(tmp_path / "logcat.txt")
    assert warnings == [] and len(invs) == 1 and invs[0].costs["wall"].gc == 104e6 and invs[0].benchmark == "fop"
