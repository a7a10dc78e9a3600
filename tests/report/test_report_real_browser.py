"""The report of real data opens in headless Chromium without errors, with its plots and wait-for graph."""
from pathlib import Path

import pytest
from browser import open_page

from conftest import corpus_file
from droidlag.findings import analyze
from droidlag.report.writer import write_outputs


@pytest.mark.slow
def test_real_report_renders(corpus: Path, tmp_path: Path):
    findings = analyze([corpus_file(corpus, "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline"
                                            ".perfetto-trace"),
                        corpus / "anr/chkbugreport_aidldeadlock_vm_traces.txt",
                        corpus / "gfxinfo/sailfish_android10_dumpsys_gfxinfo.txt"])
    written = write_outputs(findings, tmp_path)
    r = open_page(written["report.html"], tmp_path / "report.png", (".plot svg", ".graph svg", "section"))
    assert r["errors"] == [] and [m for m in r["console"] if m[0] == "error"] == []
    assert r["counts"][".plot svg"] >= 4      # histogram + timeline for the trace and the gfxinfo app
    assert r["counts"][".graph svg"] == 1     # the AIDL deadlock's wait-for graph
    assert "deadlock" in r["text"] and "Binder Thread #2" in r["text"]
    # the app of the warm startup the trace holds (traces/SOURCES.md section 7)
    assert "androidx.benchmark.integration.macrobenchmark.target" in r["text"]
