"""`droidlag analyze --before A --after B --layouts-before X --layouts-after Y`: the two traces are analyzed like
any input and paired in findings.json (`comparison`) and report.html (a "Before and after" section below the
summary): the SR/FF change beside the layout findings the change fixed. Expected values come from other routes:
SR/FF counted from the per-frame verdicts of the same run's traces, fixed files from the commit's own file list."""
import json
import re
from pathlib import Path

import pytest

from conftest import corpus_file
from droidlag.cli import main

FIXES = "layouts/nextcloud_android/fixes"


def _changed_layouts(patch: Path) -> list[str]:
    """The layout files a commit changed, from the name-status list in its commit.patch."""
    return sorted(Path(m).name for m in re.findall(r"^M\t(\S+/res/layout[^/]*/\S+\.xml)$",
                                                   patch.read_text(encoding="utf-8"), re.M))


def _verdicts(trace: dict) -> dict:
    """SR/FF and frames from the per-frame verdicts. A frame whose end is not in the trace takes the verdict
    `incomplete` and is left out of every count (docs/frames.md, findings-schema.md `incomplete_frames`)."""
    fs = trace["frames"]["frames"]
    return {"SR": sum(f["verdict"] == "SR" for f in fs), "FF": sum(f["verdict"] == "FF" for f in fs),
            "frames": sum(f["verdict"] != "incomplete" for f in fs), "listed": len(fs)}


@pytest.mark.slow
def test_analyze_before_after_end_to_end(corpus: Path, tmp_path: Path, capsys):
    # before: a Compose app with 17 FrameTimeline app-deadline misses (traces/SOURCES.md section 10); after: a
    # smooth 2018 capture of other apps (section 5: longest doFrame 6.7 ms)
    before = corpus_file(corpus, "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace")
    after = corpus_file(corpus, "traces/systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz")
    fix = corpus / FIXES / "remove-useless-parents"
    rc = main(["analyze", "--before", str(before), "--after", str(after), "--layouts-before", str(fix / "before"),
               "--layouts-after", str(fix / "after"), "--out", str(tmp_path), "--quiet"])
    assert rc == 0
    d = json.loads((tmp_path / "findings.json").read_text(encoding="utf-8"))
    cmp = d["comparison"]
    assert cmp["not_possible_reason"] is None
    traces = {t["path"]: t for t in d["traces"]}
    assert set(traces) == {str(before), str(after)}        # both traces analyzed like any input, once each
    vb, va = _verdicts(traces[str(before)]), _verdicts(traces[str(after)])
    assert vb["SR"] == 17 and va["SR"] == 0                  # SOURCES.md's counts: a real change to show
    # SOURCES.md: 1,068 app surface frames (jank types 1004 + 47 + 12 + 5) before; 252 doFrame after, of which the
    # 202 with a `traversal` section are frames (YY's 50 ran only an animation callback: drew nothing, not frames)
    assert (vb["listed"], va["listed"]) == (1068, 202)
    for k in ("SR", "FF"):
        assert cmp["before"][k] == vb[k] and cmp["after"][k] == va[k] and cmp["change"][k] == va[k] - vb[k]
    assert cmp["before"]["frames"] == vb["frames"] and cmp["after"]["frames"] == va["frames"]
    fixed = sorted(Path(f["file"]).name for f in cmp["fixed_findings"])
    assert fixed == _changed_layouts(fix / "commit.patch")   # every file the commit changed, each fixed
    assert {f["kind"] for f in cmp["fixed_findings"]} == {"useless-parent"}
    assert cmp["new_findings"] == [] and cmp["findings_after_counts"] == {}
    assert cmp["findings_before_counts"] == {"useless-parent": 5}
    assert cmp["notes"]                                      # two different apps: the comparison says so
    head = [h["text"] for h in d["headlines"] if h["text"].startswith("before -> after")]
    assert head == [f"before -> after: SR {vb['SR']} -> {va['SR']} ({cmp['before']['SR %']}% -> "
                    f"{cmp['after']['SR %']}% of frames), FF {vb['FF']} -> {va['FF']} ({cmp['before']['FF %']}% -> "
                    f"{cmp['after']['FF %']}% of frames); 5 UI finding(s) fixed, 0 new"]
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    section = html[html.index('<section class="ui-compare">'):]
    section = section[:section.index("</section>")]
    assert html.index('<section class="ui-compare">') < html.index('<section class="trace">')   # below the summary
    assert f"<tr><td>SR</td><td>{vb['SR']}</td><td>{va['SR']}</td><td>{va['SR'] - vb['SR']}</td></tr>" in section
    assert "UI findings fixed (5)" in section and "empty_list.xml:21" in section


def test_analyze_before_after_with_context(corpus: Path, tmp_path: Path):
    """Window-background repeats need the theme, which only --layouts-context holds: without it nothing is fixed,
    with it the commit's three files are. The same trace on both sides: no change, and a note says so."""
    trace = corpus / "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace"
    fix = corpus / FIXES / "remove-possible-overdraws"
    args = ["analyze", "--before", str(trace), "--after", str(trace), "--layouts-before", str(fix / "before"),
            "--layouts-after", str(fix / "after"), "--quiet"]
    assert main([*args, "--out", str(tmp_path / "a"), "--layouts-context", str(fix / "context")]) == 0
    d = json.loads((tmp_path / "a" / "findings.json").read_text(encoding="utf-8"))
    cmp = d["comparison"]
    assert len(d["traces"]) == 1 and cmp["change"]["SR"] == 0 and cmp["change"]["frames"] == 0
    assert "before and after are the same trace" in cmp["notes"]
    assert sorted(Path(f["file"]).name for f in cmp["fixed_findings"]) == _changed_layouts(fix / "commit.patch")
    assert {f["kind"] for f in cmp["fixed_findings"]} == {"window-background-repeat"}
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    d = json.loads((tmp_path / "b" / "findings.json").read_text(encoding="utf-8"))
    assert d["comparison"]["fixed_findings"] == []


@pytest.mark.parametrize("extra, why", [
    (["--before", "{t}"], "give both --before and --after"),
    (["--before", "{t}", "--after", "{t}", "--layouts-before", "{d}"], "give both --layouts-before"),
    (["x.trace", "--layouts-before", "{d}", "--layouts-after", "{d}"], "need --before and --after"),
    ([], "give at least one PATH"),
    (["--before", "{t}", "--after", "{t}", "--layouts-before", "{t}", "--layouts-after", "{d}"], "not a folder"),
    (["--before", "{d}/missing.trace", "--after", "{t}"], "no such file"),
])
def test_analyze_before_after_usage(corpus: Path, tmp_path: Path, capsys, extra, why):
    t = str(corpus / "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace")
    d = str(corpus / FIXES / "remove-useless-parents/before")
    args = [a.format(t=t, d=d) for a in extra]
    assert main(["analyze", *args, "--out", str(tmp_path), "--quiet"]) == 2
    assert why in capsys.readouterr().err
    assert not (tmp_path / "findings.json").exists()


def test_analyze_before_not_a_trace(corpus: Path, tmp_path: Path, capsys):
    """A before 'trace' that is no trace: the other inputs are still analyzed and written, but the comparison is
    reported as not possible (naming the file and why), never as an all-clear, and the exit code says so."""
    bad = tmp_path / "before.txt"
    bad.write_text("not a trace\n")
    after = corpus / "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace"
    out = tmp_path / "out"
    assert main(["analyze", "--before", str(bad), "--after", str(after), "--out", str(out), "--quiet"]) == 3
    err = capsys.readouterr().err
    assert "no before/after comparison" in err and str(bad) in err
    d = json.loads((out / "findings.json").read_text(encoding="utf-8"))
    cmp = d["comparison"]
    assert cmp["not_possible_reason"].startswith(f"no trace was read from {bad}")
    assert cmp["before"]["SR"] is None and cmp["change"]["SR"] is None and cmp["after"]["frames"] > 0
    assert any(h["text"].startswith("before/after comparison not possible") for h in d["headlines"])
    assert "Comparison not possible" in (out / "report.html").read_text(encoding="utf-8")


def test_analyze_without_before_after_has_no_comparison(corpus: Path, tmp_path: Path):
    assert main(["analyze", str(corpus / FIXES / "remove-useless-parents/before"), "--out", str(tmp_path),
                 "--quiet"]) == 0
    d = json.loads((tmp_path / "findings.json").read_text(encoding="utf-8"))
    assert d["comparison"] is None
    assert 'class="ui-compare"' not in (tmp_path / "report.html").read_text(encoding="utf-8")
