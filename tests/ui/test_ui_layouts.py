"""Layout findings on the real corpus: each real fix commit's `before` is flagged where it changed and its `after`
is not; every layout of the four apps is analysed; the hand-labelled sample stays labelled."""
import csv
from pathlib import Path

import pytest

from droidlag.errors import InputError
from droidlag.io.android_res import read_app
from droidlag.ui.layouts import analyze_layouts

APPS = ["AntennaPod_AntennaPod", "TeamNewPipe_NewPipe", "ankidroid_Anki-Android", "nextcloud_android"]
# What each fix commit changed (read from its commit.patch): file -> the kind of redundant layer it removed.
FIXES = {
    "useless-nested-layout-external-player": {"external_player_fragment.xml": "useless-parent"},
    "reduce-overdraw-window-background": {f: "window-background-repeat" for f in (
        "activity_main_player.xml", "dialog_playlists.xml", "fragment_channel.xml", "fragment_kiosk.xml",
        "fragment_playlist.xml", "fragment_video_detail.xml")},
    "merge-reviewer-menu-view": {"view_reviewer_menu.xml": "merge-root"},
    "merge-audio-record-view": {"audio_record_view.xml": "merge-root"},
    "remove-possible-overdraws": {f: "window-background-repeat" for f in (
        "account_setup.xml", "accounts_layout.xml", "contacts_backup_fragment.xml")},
    "remove-useless-parents": {f: "useless-parent" for f in (
        "empty_list.xml", "file_preview.xml", "grid_image.xml", "preview_image_fragment.xml",
        "text_file_preview.xml")},
}


def _fix_findings(fix: Path, side: str):
    app = fix.parent.parent
    roots = [fix / side] + ([fix / "context"] if (fix / "context").is_dir() else []) + [app]
    res, _ = read_app(roots, report_roots=1, exclude=("fixes",))
    return analyze_layouts(res).findings


@pytest.mark.parametrize("name", sorted(FIXES))
def test_fix_commit_before_flagged_after_not(corpus: Path, name: str):
    fix = next((corpus / "layouts").glob(f"*/fixes/{name}"), None)
    if fix is None:
        pytest.skip(f"fix {name} not in corpus")
    before = {(Path(f.file).name, f.kind) for f in _fix_findings(fix, "before")}
    after = {(Path(f.file).name, f.kind) for f in _fix_findings(fix, "after")}
    for file, kind in FIXES[name].items():
        assert (file, kind) in before, f"{name}: {file} not flagged as {kind}"
        assert (file, kind) not in after, f"{name}: fixed {file} still flagged as {kind}"


@pytest.mark.parametrize("app", APPS)
def test_every_layout_of_the_app_is_analysed(corpus: Path, app: str):
    root = corpus / "layouts" / app
    res, warnings = read_app([root], exclude=("fixes",))
    report = analyze_layouts(res)
    on_disk = [p for p in root.rglob("*.xml") if "fixes" not in p.parts and p.parent.name.startswith("layout")]
    assert report.files == len(on_disk) and warnings == []
    for f in report.findings:
        assert Path(f.file).is_file() and f.line >= 1 and f.layers >= 1 and f.fix
        # the line holds the start of the element named
        text = Path(f.file).read_text(encoding="utf-8").splitlines()
        assert any("<" in ln for ln in text[max(0, f.line - 3):f.line])


def test_labelled_sample_covers_current_findings(corpus: Path):
    """Every finding the rules make on the four apps has a hand label (so the precision script measures the current
    rules); the sample is large enough and says who labelled it. Rows of findings later rules no longer make stay
    as the record of the first labelling."""
    rows = list(csv.DictReader(open(Path(__file__).parent / "data" / "layout_findings_labels.csv")))
    assert len(rows) >= 50 and {r["label"] for r in rows} <= {"TP", "FP"}
    assert all(r["labelled_by"] and r["reason"] for r in rows)
    current = set()
    for app in APPS:
        res, _ = read_app([corpus / "layouts" / app], exclude=("fixes",))
        for f in analyze_layouts(res).findings:
            current.add((app, str(Path(f.file).relative_to(corpus / "layouts" / app)), str(f.line), f.kind))
    labelled = {(r["app"], r["file"], r["line"], r["kind"]) for r in rows}
    assert current <= labelled


def test_include_cycle_and_missing_include_do_not_crash(tmp_path: Path):
    lay = tmp_path / "res" / "layout"
    lay.mkdir(parents=True)
    ns = 'xmlns:android="http://schemas.android.com/apk/res/android"'
    (lay / "a.xml").write_text(f'<FrameLayout {ns}><include layout="@layout/b"/></FrameLayout>')
    (lay / "b.xml").write_text(f'<FrameLayout {ns}><include layout="@layout/a"/><include layout="@layout/zz"/>'
                               '</FrameLayout>')
    res, _ = read_app([tmp_path])
    report = analyze_layouts(res)
    assert "@layout/zz" in report.unresolved_includes and "@layout/a" in report.unresolved_includes


def test_broken_and_hostile_xml_named_with_line(tmp_path: Path):
    lay = tmp_path / "res" / "layout"
    lay.mkdir(parents=True)
    (lay / "ok.xml").write_text('<FrameLayout xmlns:android="http://schemas.android.com/apk/res/android"/>')
    (lay / "broken.xml").write_text('<FrameLayout>\n  <TextView>\n</FrameLayout>')
    (lay / "bomb.xml").write_text('<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY a "aaaa">]>\n<x>&a;</x>')
    res, warnings = read_app([tmp_path])
    by_file = {Path(w.path).name: w for w in warnings}
    assert by_file["broken.xml"].line == 3 and "broken XML" in by_file["broken.xml"].message
    assert "unsafe" in by_file["bomb.xml"].message
    assert list(res.layouts) == ["ok"]
    with pytest.raises(InputError):
        read_app([tmp_path / "nope"])


def test_hostile_include_chain_does_not_overflow(tmp_path: Path):
    """24 layouts, each 200 levels deep and including the next: expansion stops at a bounded depth."""
    lay = tmp_path / "res" / "layout"
    lay.mkdir(parents=True)
    ns = 'xmlns:android="http://schemas.android.com/apk/res/android"'
    for i in range(24):
        inner = f'<include layout="@layout/l{i + 1}"/>' if i < 23 else "<TextView/>"
        (lay / f"l{i}.xml").write_text(f"<FrameLayout {ns}>" + "<FrameLayout>" * 200 + inner
                                       + "</FrameLayout>" * 201)
    res, _ = read_app([tmp_path])
    report = analyze_layouts(res)
    assert report.files == 24 and report.unresolved_includes
