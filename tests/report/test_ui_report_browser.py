"""The UI-layers part of the report in headless Chromium: the heat map image is shown (decoded, non-empty) beside
the estimate's assumption, and the layout findings table lists file:line and kinds."""
from pathlib import Path

import pytest
from browser import open_page

from droidlag.findings import analyze
from droidlag.report.writer import write_outputs


@pytest.mark.slow
def test_ui_sections_render(corpus: Path, tmp_path: Path):
    findings = analyze([corpus / "viewhierarchy/uiautomator/js-adb_youtube_window_dump_6cc6d73.xml",
                        corpus / "layouts/nextcloud_android/fixes/remove-useless-parents/before"])
    assert [i.status for i in findings.inputs] == ["analyzed", "analyzed"]
    written = write_outputs(findings, tmp_path)
    r = open_page(written["report.html"], tmp_path / "ui.png",
                  ("img.heatmap", "section.ui-layouts tbody tr", "section.ui-hierarchy"))
    assert r["errors"] == [] and [m for m in r["console"] if m[0] == "error"] == []
    assert r["counts"]["img.heatmap"] == 1 and r["counts"]["section.ui-hierarchy"] == 1
    assert r["counts"]["section.ui-layouts tbody tr"] == 5     # the five useless parents the fix removed
    assert "Assumption:" in r["text"] and "useless-parent" in r["text"] and "empty_list.xml:21" in r["text"]


@pytest.mark.slow
def test_before_after_section_renders(corpus: Path, tmp_path: Path):
    """`analyze --before --after`: the "Before and after" section is drawn below the summary with the measures table
    and the five fixed findings of nextcloud's "Remove useless parents" commit."""
    from droidlag.findings import add_comparison
    trace = corpus / "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace"
    fix = corpus / "layouts/nextcloud_android/fixes/remove-useless-parents"
    findings = analyze([trace])
    add_comparison(findings, trace, trace, [fix / "before"], [fix / "after"])
    written = write_outputs(findings, tmp_path)
    r = open_page(written["report.html"], tmp_path / "cmp.png",
                  ("section.ui-compare", "section.ui-compare table", "section.ui-compare tbody tr"))
    assert r["errors"] == [] and [m for m in r["console"] if m[0] == "error"] == []
    assert r["counts"]["section.ui-compare"] == 1 and r["counts"]["section.ui-compare table"] == 2
    assert r["counts"]["section.ui-compare tbody tr"] == 7 + 5     # 7 measures, 5 fixed findings
    assert "UI findings fixed (5)" in r["text"] and "before and after are the same trace" in r["text"]
    assert r["text"].index("Before and after") < r["text"].index("Frames of")
