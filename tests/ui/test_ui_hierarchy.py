"""Runtime view hierarchies of the corpus: every format read, layers counted per pixel and checked against an
independent count, chains found as SOURCES.md counts them, the heat map in Android's colours."""
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import corpus_file
from droidlag.cli import main
from droidlag.errors import InputError
from droidlag.io.view_hierarchy import read_hierarchy
from droidlag.report.ui_html import OVERDRAW_RGB, heatmap_rgb
from droidlag.ui.hierarchy import HierarchyConfig, analyze_hierarchy

FILES = ["droidbot-album-sample/state_2017-08-11_155430.json", "droidbot-album-sample/state_2017-08-11_155535.json",
         "uiautomator/js-adb_youtube_window_dump_6cc6d73.xml",
         "uiautomator/js-adb_nexuslauncher_window_dump_6c2c763.xml", "rico/rico_3366.json", "rico/rico_33652.json"]
# node counts from corpus/viewhierarchy/SOURCES.md and rico/SOURCES.md
NODES = {"state_2017-08-11_155430.json": 49, "state_2017-08-11_155535.json": 205,
         "js-adb_youtube_window_dump_6cc6d73.xml": 89, "js-adb_nexuslauncher_window_dump_6c2c763.xml": 25,
         "rico_3366.json": 65, "rico_33652.json": 135}


@pytest.mark.parametrize("rel", FILES)
def test_hierarchy_read_and_counted(corpus: Path, rel: str):
    path = corpus / "viewhierarchy" / rel
    h, _ = read_hierarchy(path)
    assert sum(1 for _ in h.root.walk()) == NODES[path.name]
    r = analyze_hierarchy(h, HierarchyConfig(scale=0.05))
    assert r.estimate and r.assumption
    assert sum(r.overdraw_share().values()) == pytest.approx(1.0)


def _rico_layers_at(d: dict, x: int, y: int, visible: bool = True) -> int:
    """Layers at a pixel straight from the raw RICO JSON: views shown (visibility and visible-to-user) whose `draw`
    (willNotDraw) is false and whose bounds hold the pixel (ancestors checked too, as a clip)."""
    b = d.get("bounds") or [0, 0, 0, 0]
    shown = visible and d.get("visibility", "visible") == "visible" and d.get("visible-to-user", True) is not False
    if not (shown and b[0] <= x < b[2] and b[1] <= y < b[3]):
        return 0
    kids = [c for c in d.get("children") or [] if isinstance(c, dict)]
    scroller = str(d.get("class", "")).endswith(("ListView", "GridView", "RecyclerView", "ScrollView", "ViewPager",
                                                  "ViewPager2"))
    own = 1 if d.get("draw") is False and not (kids and scroller) else 0
    return own + sum(_rico_layers_at(c, x, y) for c in kids)


@pytest.mark.parametrize("name", ["rico_3366.json", "rico_33652.json", "rico_3368.json", "rico_33659.json"])
def test_rico_layer_count_matches_the_raw_file(corpus: Path, name: str):
    """At a grid of pixels away from view edges, the heat map's layer count is 1 (window) + the drawing views
    counted from the raw JSON by the function above."""
    path = corpus / "viewhierarchy/rico" / name
    raw = json.loads(path.read_text(encoding="utf-8"))["activity"]["root"]
    r = analyze_hierarchy(read_hierarchy(path)[0], HierarchyConfig(scale=1.0))
    checked = 0
    for y in range(37, 2560, 173):
        for x in range(29, 1440, 131):
            assert int(r.draws[y, x]) == 1 + _rico_layers_at(raw, x, y), (x, y)
            checked += 1
    assert checked > 100
def test_youtube_chains(corpus: Path):
    h, _ = read_hierarchy(corpus / "viewhierarchy/uiautomator/js-adb_youtube_window_dump_6cc6d73.xml")
    r = analyze_hierarchy(h)
    # each chain is a run of containers with identical bounds, each the only child of the one above
    assert r.chains and all(c.redundant >= 1 for c in r.chains)
    assert any("RecyclerView" in c.classes[-1] for c in r.chains)


def test_rico_draw_flag_used(corpus: Path):
    h, _ = read_hierarchy(corpus / "viewhierarchy/rico/rico_3366.json")
    assert h.has_draw_flags
    texts = [n for n in h.root.walk() if n.simple_class.endswith("TextView")]
    assert texts and all(n.draws for n in texts)           # RICO draw=false for text views: they draw


def test_heatmap_colours():
    draws = np.array([[0, 1, 2, 3, 4, 5, 9]], dtype=np.uint8)
    img = heatmap_rgb(draws)
    assert tuple(img[0, 1]) == OVERDRAW_RGB[0] and tuple(img[0, 2]) == OVERDRAW_RGB[1]   # 1x blue
    assert tuple(img[0, 3]) == OVERDRAW_RGB[2] and tuple(img[0, 4]) == OVERDRAW_RGB[3]
    assert tuple(img[0, 5]) == OVERDRAW_RGB[4] and tuple(img[0, 6]) == OVERDRAW_RGB[4]   # 4x+ red


def test_dumpsys_view_lines(tmp_path: Path):
    """The `dumpsys activity top` view line format of View.toString(): bounds relative to the parent."""
    p = tmp_path / "top.txt"
    p.write_text("TASK com.example id=1\n  ACTIVITY com.example/.Main 1 pid=1\n    View Hierarchy:\n"
                 "      DecorView@1[Main]\n"
                 "        android.widget.LinearLayout{a V.E...... ........ 0,0-1080,1920}\n"
                 "          android.widget.FrameLayout{b V.ED..... ........ 0,100-1080,1920 #1020002 android:id/content}\n"
                 "            android.widget.TextView{c V.ED..... ........ 10,20-110,70 #7f01 com.example:id/t}\n"
                 "          android.widget.ListView{d1ae5ad VFED.VC.. .F...... 0,0-1080,1808 #7f0800c4 app:id/list}\n"
                 "    Local FragmentActivity 1 State:\n")
    h, _ = read_hierarchy(p)
    tv = list(h.root.walk())[2]
    assert h.format == "dumpsys" and tv.bounds == (10, 120, 110, 170) and tv.draws and tv.resource_id.endswith("/t")
    lv = h.root.children[1]   # a sibling of the FrameLayout: back to the LinearLayout's origin
    assert lv.simple_class == "ListView" and lv.bounds == (0, 0, 1080, 1808) and lv.draws
    assert h.activity == "Main"


def test_bad_input(tmp_path: Path):
    p = tmp_path / "x.xml"
    p.write_text("<hierarchy><node bounds='[0,0][1,1]'>")
    with pytest.raises(InputError) as e:
        read_hierarchy(p)
    assert e.value.line == 1
    q = tmp_path / "y.json"
    q.write_text('{"views": [{"parent": 0, "children": [0], "bounds": [[0,0],[1,1]]}], "foreground_activity": "a"}')
    with pytest.raises(InputError):
        read_hierarchy(q)


def test_cli_hierarchy_and_layouts(corpus: Path, tmp_path: Path, capsys):
    f = corpus / "viewhierarchy/droidbot-album-sample/state_2017-08-11_155430.json"
    assert main(["ui", "hierarchy", str(f), "--out", str(tmp_path), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["views"] == 49 and d["estimate"] is True
    assert (tmp_path / "heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    app = corpus / "layouts/nextcloud_android"
    assert main(["ui", "layouts", str(app), "--exclude", "fixes", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["findings"] and set(d["findings"][0]) >= {"file", "line", "kind", "view_class", "view_id", "layers",
                                                        "fix"}
    assert main(["ui", "hierarchy", str(tmp_path / "missing.xml")]) == 3


@pytest.mark.slow
def test_cli_compare_before_after(corpus: Path, tmp_path: Path, capsys):
    """SR/FF of two real traces, each counted independently by the frames analysis, and the five useless parents
    nextcloud's commit removed listed as fixed."""
    from droidlag.frames import analyze_frames
    from droidlag.io import read_trace
    # before: a Compose app with 17 FrameTimeline app-deadline misses (traces/SOURCES.md section 10); after: a
    # smooth 2018 capture of other apps (section 5: longest doFrame 6.7 ms)
    before = corpus_file(corpus, "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace")
    after = corpus_file(corpus, "traces/systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz")
    fix = corpus / "layouts/nextcloud_android/fixes/remove-useless-parents"
    assert main(["ui", "compare", "--before", str(before), "--after", str(after), "--layouts-before",
                 str(fix / "before"), "--layouts-after", str(fix / "after"), "--json", "--out", str(tmp_path)]) == 0
    d = json.loads(capsys.readouterr().out)
    sb = analyze_frames(read_trace(before)).summary
    sa = analyze_frames(read_trace(after)).summary
    assert d["before"]["SR"] == sb.sr and d["after"]["SR"] == sa.sr
    assert d["change"]["SR"] == sa.sr - sb.sr and d["change"]["FF"] == sa.ff - sb.ff
    assert sorted(Path(f["file"]).name for f in d["fixed_findings"]) == [
        "empty_list.xml", "file_preview.xml", "grid_image.xml", "preview_image_fragment.xml",
        "text_file_preview.xml"]
    assert d["new_findings"] == []
    assert d["notes"]   # two different apps' traces: the comparison says so
    assert "Before and after" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_cli_layouts_without_layouts_is_no_input(tmp_path: Path, capsys):
    (tmp_path / "res" / "values").mkdir(parents=True)
    assert main(["ui", "layouts", str(tmp_path)]) == 3
    assert "no res/layout" in capsys.readouterr().err


def test_ui_headlines_in_analyze(corpus: Path):
    from droidlag.findings import analyze
    f = analyze([corpus / "viewhierarchy/rico/rico_3366.json",
                 corpus / "layouts/nextcloud_android/fixes/remove-useless-parents/before"])
    heads = [h.to_dict() for h in f.headlines() if h.kind == "ui"]
    assert len(heads) == 2
    assert any("5 redundant UI layer(s) in 5 layout files (5 useless-parent)" in h["text"] for h in heads)
    assert any("(estimate)" in h["text"] for h in heads)


def test_heatmap_outlines_drawing_views():
    from droidlag.report.ui_html import OUTLINE_RGB
    draws = np.full((10, 10), 2, dtype=np.uint8)
    img = heatmap_rgb(draws, [(2, 2, 6, 6)])
    assert tuple(img[2, 2]) == OUTLINE_RGB and tuple(img[5, 3]) == OUTLINE_RGB   # corner and bottom edge
    assert tuple(img[3, 3]) == OVERDRAW_RGB[1] and tuple(img[0, 0]) == OVERDRAW_RGB[1]   # inside and outside


def test_hostile_depth(tmp_path: Path):
    """A very deep dumpsys tree is read without recursion; JSON nested beyond the parser's limit is refused."""
    lines = ["View Hierarchy:"] + [" " * (2 + 2 * i) + f"android.widget.FrameLayout{{{i:x} V.E...... ........ "
                                   "0,0-100,100}" for i in range(5000)]
    p = tmp_path / "deep.txt"
    p.write_text("\n".join(lines) + "\n")
    h, _ = read_hierarchy(p)
    assert sum(1 for _ in h.root.walk()) == 5000
    r = analyze_hierarchy(h, HierarchyConfig(scale=0.1))
    assert r.chains and r.chains[0].redundant == 4998   # 4999 containers (the 5000th is the leaf): one is kept
    q = tmp_path / "deep.json"
    q.write_text('{"activity_name": "a", "activity": {"root": ' + "[" * 100000 + "]" * 100000 + "}}")
    with pytest.raises(InputError):
        read_hierarchy(q)
