"""The JVM harness for real: a reduced run (1 workload, 2 collectors, 2 heap factors, 2 invocations) with the
installed JDK, its GC attribution checked against the JVM's own log by another route, resuming after an interrupt,
and the Maven Central workload (skipped cleanly when Maven or the network is absent)."""
from __future__ import annotations

import gzip
import json
import shutil

import pytest

from droidlag.gc.lbo import lbo_tables
from droidlag.gc.lbo.harness import RunPlan, run_plan
from droidlag.gc.lbo.harness.runner import run_one
from droidlag.gc.lbo.harness.workloads import WORKLOADS, HarnessError, prepare
from droidlag.io.lbo import read_lbo_results

pytestmark = pytest.mark.slow  # real JVM runs: seconds to a minute on a loaded machine

needs_jdk = pytest.mark.skipif(not (shutil.which("java") and shutil.which("javac")), reason="no JDK (java, javac)")


@pytest.fixture(scope="module")
def reduced_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("lbo") / "results"
    plan = RunPlan(out, workloads=["gcbench"], collectors=["Serial", "G1"], heap_factors=[1.5, 3.0], invocations=2,
                   cache=out.parent / "cache")
    return plan, run_plan(plan)


@needs_jdk
def test_reduced_run_produces_lbo_results(reduced_run):
    plan, summary = reduced_run
    assert summary.ran == 8 and summary.failed == 0 and summary.minheap_mb["gcbench"] > 0
    rows = [json.loads(x) for x in (plan.results / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 8
    assert {(r["collector"], r["heap_factor"], r["invocation"]) for r in rows} == {
        (c, h, i) for c in ("Serial", "G1") for h in (1.5, 3.0) for i in (0, 1)}
    for r in rows:
        assert r["status"] == "ok" and 0 < r["wall.gc"] < r["wall"] and 0 < r["task_clock.gc"] < r["task_clock"]
        assert r["heap_mb"] == round(summary.minheap_mb["gcbench"] * r["heap_factor"])
    invs, warnings = read_lbo_results(plan.results)
    tables = lbo_tables(invs)
    assert set(tables) == {"wall", "task_clock"} and warnings == []
    cells = [c for c in tables["task_clock"].cells if c.lbo is not None]
    assert len(cells) == 4 and all(c.lbo >= 1.0 - 1e-9 for c in cells if c.collector == c.baseline_collector)


@needs_jdk
def test_pauses_match_the_jvm_log_counted_another_way(reduced_run):
    """Serial's only GC safepoint operation is GenCollectForAllocation: count those lines between the driver's
    markers in the saved JVM log, and sum their 'Total' nanoseconds, with plain string operations."""
    plan, _ = reduced_run
    rows = [json.loads(x) for x in (plan.results / "results.jsonl").read_text().splitlines()]
    r = next(x for x in rows if x["collector"] == "Serial" and x["heap_factor"] == 1.5 and x["invocation"] == 0)
    log = gzip.open(next((plan.results / "logs").glob(f"gcbench.1500.{int(r['heap_mb'])}.Serial.0.jvm.log.gz")),
                    "rt").read()
    timed = log.split("droidlag-lbo timed start", 1)[1].split("droidlag-lbo timed end", 1)[0]
    lines = [x for x in timed.splitlines() if 'Safepoint "GenCollectForAllocation"' in x]
    assert r["pauses"] == len(lines) > 0
    assert r["wall.gc"] == sum(int(x.rsplit("Total: ", 1)[1].split()[0]) for x in lines)


@needs_jdk
def test_an_interrupted_run_resumes(reduced_run):
    plan, _ = reduced_run
    path = plan.results / "results.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:5]) + "\n" + lines[5][:20])  # as if killed while writing the sixth row
    summary = run_plan(plan)
    assert (summary.ran, summary.skipped) == (3, 5)
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            assert line == lines[5][:20]  # only the cut row is not JSON, on a line of its own
    assert len({(r["collector"], r["heap_factor"], r["invocation"]) for r in rows}) == len(rows) == 8


@needs_jdk
def test_maven_central_workload_runs(tmp_path):
    if not shutil.which("mvn"):
        pytest.skip("Maven not installed")
    try:
        cp = prepare(WORKLOADS["lucene"], tmp_path / "cache")
    except HarnessError as e:
        if "could not fetch" in str(e):
            pytest.skip(f"Maven Central unreachable: {e}")
        raise
    assert any(p.name == "lucene-core-9.11.1.jar" for p in cp)
    res, log = run_one(WORKLOADS["lucene"], cp, "Serial", 128, RunPlan(tmp_path, warmups=0))
    assert res is not None and not res.oom, log[-400:]
    assert res.wall_ns > res.pause_ns > 0 and res.task_clock_ns > res.gc_cpu_ns > 0


@needs_jdk
def test_perf_task_clock_agrees_with_proc_schedstat(tmp_path):
    """Two routes to the timed iteration's task clock: perf stat's counter window (enabled and disabled by the
    driver through perf's control fifo) and the driver's own sum over /proc/self/task/*/schedstat."""
    from droidlag.gc.lbo.harness.jvm import perf_available
    if not perf_available():
        pytest.skip("perf stat cannot count task-clock here")
    cp = prepare(WORKLOADS["gcbench"], tmp_path / "cache")
    res, log = run_one(WORKLOADS["gcbench"], cp, "Serial", 64, RunPlan(tmp_path, perf=True))
    assert res is not None and "task_clock" in res.perf, log[-400:]
    assert abs(res.perf["task_clock"] - res.task_clock_ns) < 0.25 * res.perf["task_clock"]
    assert "Events enabled" in log and "Events disabled" in log  # perf counted only inside the window


@needs_jdk
def test_cli_gc_run_resumes_and_gc_lbo_reads_it(reduced_run, capsys):
    """`droidlag gc run` on a finished folder runs nothing again; `gc lbo` reads the folder into a table."""
    from droidlag.cli import main
    plan, _ = reduced_run
    args = ["gc", "run", str(plan.results), "--workloads", "gcbench", "--collectors", "Serial,G1",
            "--heap-factors", "1.5,3", "--invocations", "2", "--json"]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["ran"] == 0 and summary["skipped"] == 8
    assert main(["gc", "lbo", str(plan.results)]) == 0
    text = capsys.readouterr().out
    assert "8 invocations" in text and "heap 1.50x" in text and "heap 3.00x" in text
