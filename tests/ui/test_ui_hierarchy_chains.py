"""Same-bounds chains in runtime hierarchies, on hand-written dumps: the window decor (DecorView, its LinearLayout
and frames, AppCompat's sub-decor) is left out, and scrolling/adapter containers (ScrollView, HorizontalScrollView,
NestedScrollView, pagers, RecyclerView, AdapterViews) and the child they require are kept, never redundant."""
import json
from pathlib import Path

import pytest

from droidlag.cli import main
from droidlag.io.view_hierarchy import read_hierarchy
from droidlag.models.ui import ViewHierarchy, ViewNode
from droidlag.ui.hierarchy import HierarchyConfig, analyze_hierarchy

PKG = "com.example.app"
FULL = (0, 100, 1080, 2000)


def _node(cls: str, bounds=FULL, rid: str = "", kids: list | None = None) -> dict:
    return {"cls": cls, "bounds": bounds, "rid": rid, "kids": kids or []}


def _xml(n: dict) -> str:
    b = n["bounds"]
    attrs = (f'class="{n["cls"]}" resource-id="{n["rid"]}" package="{PKG}" text="" '
             f'bounds="[{b[0]},{b[1]}][{b[2]},{b[3]}]"')
    if not n["kids"]:
        return f"<node {attrs} />"
    return f"<node {attrs}>" + "".join(_xml(k) for k in n["kids"]) + "</node>"


def _dump(tmp_path: Path, content: dict, appcompat: bool = True) -> Path:
    """A uiautomator dump of one activity window: DecorView (reported as FrameLayout) > LinearLayout > frame
    > AppCompat's action_bar_root > android:id/content > the app's layout, plus the status bar background; without
    AppCompat a full-screen window: DecorView > LinearLayout > android:id/content, all the size of the screen."""
    frame = _node("android.widget.FrameLayout", rid="android:id/content", kids=[content])
    if appcompat:
        frame = _node("android.widget.FrameLayout", kids=[
            _node("android.widget.LinearLayout", rid=f"{PKG}:id/action_bar_root", kids=[frame])])
        root = _node("android.widget.FrameLayout", (0, 0, 1080, 2000), kids=[
            _node("android.widget.LinearLayout", (0, 0, 1080, 2000), kids=[frame]),
            _node("android.view.View", (0, 0, 1080, 100), rid="android:id/statusBarBackground")])
    else:
        root = _node("android.widget.FrameLayout", kids=[_node("android.widget.LinearLayout", kids=[frame])])
    p = tmp_path / "window_dump.xml"
    p.write_text("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">" + _xml(root)
                 + "</hierarchy>", encoding="utf-8")
    return p


def _two_texts(bounds=FULL) -> list[dict]:
    x0, y0, x1, _ = bounds
    return [_node("android.widget.TextView", (x0, y0, x1, y0 + 50)),
            _node("android.widget.TextView", (x0, y0 + 60, x1, y0 + 110))]


def _chains(path: Path):
    return analyze_hierarchy(read_hierarchy(path)[0], HierarchyConfig(scale=0.05))


@pytest.mark.parametrize("appcompat", [True, False])
def test_window_decor_is_not_counted(tmp_path: Path, appcompat: bool):
    """The decor's unnamed frame (AppCompat renames the platform content frame) and AppCompat's action_bar_root
    have the app's bounds and package in a uiautomator dump, but the app cannot remove them: only the app's own
    root > wrapper > wrapper > ViewGroup chain is reported (3 redundant)."""
    app = _node("android.view.ViewGroup", rid=f"{PKG}:id/coordinator", kids=[
        _node("android.widget.FrameLayout", rid=f"{PKG}:id/host", kids=[
            _node("android.widget.FrameLayout", rid=f"{PKG}:id/host", kids=[
                _node("android.view.ViewGroup", kids=_two_texts())])])])
    r = _chains(_dump(tmp_path, app, appcompat))
    assert len(r.chains) == 1
    c = r.chains[0]
    assert c.redundant == 3 and c.resource_ids[0] == f"{PKG}:id/coordinator"
    assert not any(rid and rid.endswith("action_bar_root") for rid in c.resource_ids)
    assert sum(r.redundant_classes.values()) == 3


def test_appcompat_action_bar_decor_is_not_counted():
    """With an action bar AppCompat's sub-decor root is ActionBarOverlayLayout `decor_content_parent`."""
    leaf = [ViewNode("android.widget.TextView", (0, 100, 500, 200)), ViewNode("android.widget.TextView",
                                                                              (0, 300, 500, 400))]
    app = ViewNode("android.widget.LinearLayout", FULL, f"{PKG}:id/root", children=leaf)
    content = ViewNode("androidx.appcompat.widget.ContentFrameLayout", FULL, "android:id/content", children=[app])
    sub = ViewNode("androidx.appcompat.widget.ActionBarOverlayLayout", FULL, f"{PKG}:id/decor_content_parent",
                   children=[content])
    frame = ViewNode("android.widget.FrameLayout", FULL, children=[sub])
    root = ViewNode("com.android.internal.policy.DecorView", (0, 0, 1080, 2000), children=[
        ViewNode("android.widget.LinearLayout", (0, 0, 1080, 2000), children=[frame])])
    r = analyze_hierarchy(ViewHierarchy("x", "dumpsys", root=root, screen=(1080, 2000)), HierarchyConfig(scale=0.05))
    assert r.chains == []   # before: FrameLayout > ActionBarOverlayLayout, 1 redundant


def test_decor_stops_at_an_embedded_windows_decorview():
    """An activity embedded in another's layout (TabActivity's tab content) has its own DecorView: only that
    window's decor is left out, the host's same-bounds LinearLayout > LinearLayout around it is still reported."""
    inner_app = ViewNode("android.widget.RelativeLayout", (0, 100, 1080, 1500), f"{PKG}:id/tab_root", children=[
        ViewNode("android.widget.TextView", (0, 100, 500, 200)), ViewNode("android.widget.TextView",
                                                                           (0, 300, 500, 400))])
    inner_content = ViewNode("android.widget.FrameLayout", (0, 100, 1080, 1500), "android:id/content",
                             children=[inner_app])
    inner_decor = ViewNode("com.android.internal.policy.PhoneWindow$DecorView", (0, 100, 1080, 1500), children=[
        ViewNode("android.widget.LinearLayout", (0, 100, 1080, 1500), children=[inner_content])])
    tabs = ViewNode("android.widget.TabWidget", (0, 1500, 1080, 1700), "android:id/tabs")
    tabcontent = ViewNode("android.widget.FrameLayout", (0, 100, 1080, 1500), "android:id/tabcontent",
                          children=[inner_decor])
    host_inner = ViewNode("android.widget.LinearLayout", (0, 100, 1080, 1700), children=[tabcontent, tabs])
    host = ViewNode("android.widget.LinearLayout", (0, 100, 1080, 1700), children=[host_inner])
    content = ViewNode("android.widget.FrameLayout", (0, 100, 1080, 1700), "android:id/content", children=[
        host, ViewNode("android.widget.TextView", (0, 1700, 1080, 2000))])
    root = ViewNode("com.android.internal.policy.PhoneWindow$DecorView", (0, 0, 1080, 2000), children=[
        ViewNode("android.widget.LinearLayout", (0, 0, 1080, 2000), children=[content])])
    r = analyze_hierarchy(ViewHierarchy("x", "rico", root=root, screen=(1080, 2000)), HierarchyConfig(scale=0.05))
    assert [(c.classes, c.redundant) for c in r.chains] == [
        (["android.widget.LinearLayout", "android.widget.LinearLayout"], 1)]


SCROLLING = ["android.widget.ScrollView", "android.widget.HorizontalScrollView",
             "androidx.core.widget.NestedScrollView", "androidx.viewpager.widget.ViewPager",
             "androidx.viewpager2.widget.ViewPager2", "androidx.recyclerview.widget.RecyclerView",
             "android.widget.ListView", "android.widget.GridView", "android.widget.ExpandableListView",
             "android.widget.Gallery", "android.widget.StackView", "android.widget.AdapterViewFlipper",
             "android.widget.Spinner"]


@pytest.mark.parametrize("cls", SCROLLING)
def test_scrolling_container_and_its_required_child_are_not_redundant(tmp_path: Path, cls: str):
    """A ScrollView/HorizontalScrollView must have exactly one child, a pager holds its pages, a list or an adapter
    view its items: the container and that child are never a mergeable pair, even with the same bounds."""
    app = _node("android.view.ViewGroup", rid=f"{PKG}:id/root", kids=[
        _node("android.widget.TextView", (0, 100, 1080, 200)),
        _node(cls, (0, 200, 1080, 2000), rid=f"{PKG}:id/scroller", kids=[
            _node("android.widget.LinearLayout", (0, 200, 1080, 2000), kids=_two_texts((0, 200, 1080, 2000)))])])
    r = _chains(_dump(tmp_path, app))
    assert r.chains == [] and r.redundant_classes == {}


def test_pager_recycler_page_and_scrollview_are_not_redundant(tmp_path: Path):
    """ViewPager2 (uiautomator names it ViewPager) > its internal RecyclerView > the page > a ScrollView > the
    ScrollView's child: every link is a container and the child it requires."""
    b = (0, 300, 1080, 1800)
    app = _node("android.view.ViewGroup", rid=f"{PKG}:id/root", kids=[
        _node("android.widget.TextView", (0, 100, 1080, 300)),
        _node("androidx.viewpager.widget.ViewPager", b, rid=f"{PKG}:id/pager", kids=[
            _node("androidx.recyclerview.widget.RecyclerView", b, kids=[
                _node("android.widget.FrameLayout", b, kids=[
                    _node("android.widget.ScrollView", b, kids=[
                        _node("android.view.ViewGroup", (0, 300, 1080, 1200), kids=_two_texts(b))])])])])])
    assert _chains(_dump(tmp_path, app)).chains == []


def test_wrapper_around_a_scroller_is_redundant_the_scroller_is_kept(tmp_path: Path):
    """A plain wrapper with a ScrollView as its only same-size child can go (lint's UselessParent reports it); the
    ScrollView stays, and the chain stops at it: its child is not counted."""
    app = _node("android.widget.FrameLayout", rid=f"{PKG}:id/wrapper", kids=[
        _node("android.widget.ScrollView", kids=[_node("android.widget.LinearLayout", kids=_two_texts())])])
    r = _chains(_dump(tmp_path, app))
    assert [(c.classes, c.redundant) for c in r.chains] == [
        (["android.widget.FrameLayout", "android.widget.ScrollView"], 1)]
    assert r.redundant_classes == {"android.widget.FrameLayout": 1}
    assert r.chains[0].kept == [None, "scrolling or adapter container"]


def test_wrapper_inside_a_scrollviews_child_is_redundant(tmp_path: Path):
    """Below the ScrollView's required child, a same-size single-child layout is still a useless parent: the chain
    starts at the required child (kept) and counts only the layer under it."""
    b = (0, 100, 1080, 3000)
    app = _node("android.widget.ScrollView", rid=f"{PKG}:id/scroll", kids=[
        _node("android.widget.LinearLayout", b, rid=f"{PKG}:id/content_column", kids=[
            _node("android.widget.LinearLayout", b, kids=_two_texts(b))])])
    r = _chains(_dump(tmp_path, app))
    assert [(c.resource_ids, c.redundant) for c in r.chains] == [([f"{PKG}:id/content_column", None], 1)]
    assert r.chains[0].kept[0] == "the child its scrolling or adapter container requires"
    d = r.chains[0].to_dict()
    assert d["redundant_layers"] == 1 and d["kept"] == r.chains[0].kept


def test_cli_text_on_a_trial_like_window(tmp_path: Path, capsys):
    """The text report of a window like the one a new user tried (decor, an app chain, a tab strip, a pager with a
    scrolling page) names only the app's chain."""
    b = (0, 1000, 1080, 2000)
    tabs = _node("android.widget.HorizontalScrollView", (0, 900, 1080, 1000), rid=f"{PKG}:id/tabs", kids=[
        _node("android.widget.LinearLayout", (0, 900, 1080, 1000), kids=[
            _node("android.widget.LinearLayout", (400, 900, 500, 1000)),
            _node("android.widget.LinearLayout", (500, 900, 600, 1000))])])
    pager = _node("androidx.viewpager.widget.ViewPager", b, rid=f"{PKG}:id/pager", kids=[
        _node("androidx.recyclerview.widget.RecyclerView", b, kids=[
            _node("android.widget.FrameLayout", b, kids=[
                _node("android.widget.ScrollView", b, kids=[_node("android.view.ViewGroup", b,
                                                                   kids=_two_texts(b))])])])])
    app = _node("android.view.ViewGroup", rid=f"{PKG}:id/coordinator", kids=[
        _node("android.widget.FrameLayout", rid=f"{PKG}:id/nav_host", kids=[
            _node("android.view.ViewGroup", kids=[_node("android.widget.ImageView", (0, 100, 1080, 900)), tabs,
                                                  pager])])])
    p = _dump(tmp_path, app)
    assert main(["ui", "hierarchy", str(p)]) == 0
    out = capsys.readouterr().out
    chains = [ln for ln in out.splitlines() if ln.startswith("same-bounds chain")]
    assert len(chains) == 1 and chains[0].startswith("same-bounds chain, 2 redundant: android.view.ViewGroup > "
                                                     "android.widget.FrameLayout > android.view.ViewGroup")
    assert "ViewPager" not in out.split("redundant components:")[1].splitlines()[0]
    assert main(["ui", "hierarchy", str(p), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [c["redundant_layers"] for c in d["same_bounds_chains"]] == [2]
