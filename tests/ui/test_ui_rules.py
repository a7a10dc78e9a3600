"""Each layout rule on small written layouts where the right answer is known from Android's own behaviour (what a
<merge> root does, which drawables leave pixels transparent), including the spec's false positives."""
from pathlib import Path

import pytest

from droidlag.io.android_res import read_app
from droidlag.ui.layouts import analyze_layouts
from droidlag.ui.paint import Resolver, parse_color

NS = ('xmlns:android="http://schemas.android.com/apk/res/android" xmlns:tools="http://schemas.android.com/tools" '
      'xmlns:app="http://schemas.android.com/apk/res-auto"')
MM = 'android:layout_width="match_parent" android:layout_height="match_parent"'


def _app(tmp_path: Path, layouts: dict[str, str], values: str = "", drawables: dict[str, str] | None = None,
         manifest: str | None = None):
    res = tmp_path / "src" / "main" / "res"
    (res / "layout").mkdir(parents=True)
    for name, body in layouts.items():
        (res / "layout" / f"{name}.xml").write_text(body.replace("NS", NS).replace("MM", MM))
    (res / "values").mkdir()
    (res / "values" / "styles.xml").write_text(f"<resources>{values}</resources>")
    if drawables:
        (res / "drawable").mkdir()
        for name, body in drawables.items():
            (res / "drawable" / f"{name}.xml").write_text(body.replace("NS", NS))
    if manifest:
        (tmp_path / "src" / "main" / "AndroidManifest.xml").write_text(manifest.replace("NS", NS))
    r, warnings = read_app([tmp_path])
    assert warnings == []
    return r


def _kinds(r) -> list[tuple[str, int, str]]:
    return [(Path(f.file).stem, f.line, f.kind) for f in analyze_layouts(r).findings]


def test_deep_layout_reported_once_at_level_eleven(tmp_path):
    body = "<FrameLayout NS MM>" + "".join(f'\n<FrameLayout MM android:padding="{i}dp">' for i in range(11)) \
        + "<TextView/>" + "</FrameLayout>" * 12
    # the root is level 1 (line 1), the FrameLayout on line 11 is level 11: the first beyond lint's 10
    assert [k for k in _kinds(_app(tmp_path, {"deep": body})) if k[2] == "deep-layout"] == [("deep", 11, "deep-layout")]


def test_useless_leaf_but_not_with_id_or_background(tmp_path):
    r = _app(tmp_path, {"a": '<LinearLayout NS MM>\n<FrameLayout android:layout_width="10dp" '
                             'android:layout_height="10dp"/>\n<FrameLayout android:id="@+id/slot" MM/>\n'
                             '<FrameLayout android:background="#ff0000" MM/>\n</LinearLayout>'})
    assert [k for k in _kinds(r) if k[2] == "useless-leaf"] == [("a", 2, "useless-leaf")]


def test_include_merge_root_and_constraintlayout_block(tmp_path):
    inner = '<LinearLayout NS android:layout_width="match_parent" android:layout_height="wrap_content" ' \
            'android:orientation="vertical"><TextView/><TextView/></LinearLayout>'
    r = _app(tmp_path, {
        "inner": inner,
        "host": '<LinearLayout NS MM android:orientation="vertical">\n<include layout="@layout/inner"/>\n'
                '</LinearLayout>',
        "block": '<androidx.constraintlayout.widget.ConstraintLayout NS MM>\n<include layout="@layout/inner"/>'
                 '\n<TextView/></androidx.constraintlayout.widget.ConstraintLayout>',
        "toggled": '<LinearLayout NS MM android:orientation="vertical">\n<include android:id="@+id/group" '
                   'layout="@layout/inner"/>\n</LinearLayout>'})
    kinds = _kinds(r)
    assert ("host", 2, "merge-root") in kinds
    assert not any(k[0] in ("block", "toggled") and k[2] == "merge-root" for k in kinds)


def test_custom_view_wrapper_is_not_useless(tmp_path):
    r = _app(tmp_path, {"a": '<com.example.Fancy NS MM>\n<FrameLayout MM/>\n</com.example.Fancy>',
                        "b": '<FrameLayout NS MM>\n<!-- needed: the item animator fades this wrapper -->\n'
                             '<LinearLayout MM><TextView/><TextView/></LinearLayout>\n</FrameLayout>',
                        "c": '<FrameLayout NS MM>\n<LinearLayout MM><TextView/><TextView/></LinearLayout>\n'
                             '</FrameLayout>'})
    kinds = _kinds(r)
    assert ("c", 1, "useless-parent") in kinds
    assert not any(k[0] in ("a", "b") and k[2] == "useless-parent" for k in kinds)


def test_window_background_repeat_through_theme_and_manifest(tmp_path):
    values = ('<color name="bg">#FFFFFF</color><color name="other">#FF0000FF</color>'
              '<style name="AppTheme" parent="Theme.Material3.Light"><item name="android:windowBackground">'
              '@color/bg</item></style>')
    manifest = '<manifest NS><application android:theme="@style/AppTheme"/></manifest>'
    r = _app(tmp_path, {
        "same": '<LinearLayout NS MM android:background="@color/bg">\n<TextView/></LinearLayout>',
        "attr": '<LinearLayout NS MM>\n<TextView android:background="?android:windowBackground"/></LinearLayout>',
        "overlay": '<FrameLayout NS MM>\n<TextView/>\n<LinearLayout MM android:background="@color/bg"/></FrameLayout>',
        "different": '<LinearLayout NS MM android:background="@color/other">\n<TextView/></LinearLayout>'},
        values, manifest=manifest)
    kinds = _kinds(r)
    assert ("same", 1, "window-background-repeat") in kinds and ("attr", 2, "window-background-repeat") in kinds
    assert not any(k[0] in ("overlay", "different") and k[2].startswith("window") for k in kinds)


def test_double_background_needs_opaque_full_size_child(tmp_path):
    r = _app(tmp_path, {
        "yes": '<FrameLayout NS MM android:background="#ffffff">\n<LinearLayout MM android:background="#000000">'
               '<TextView/><TextView/></LinearLayout></FrameLayout>',
        "translucent": '<FrameLayout NS MM android:background="#ffffff">\n<LinearLayout MM '
                       'android:background="#80000000"><TextView/><TextView/></LinearLayout></FrameLayout>',
        "rounded": '<FrameLayout NS MM android:background="#ffffff">\n<LinearLayout MM '
                   'android:background="@drawable/card"><TextView/><TextView/></LinearLayout></FrameLayout>'},
        drawables={"card": '<shape NS><solid android:color="#ffffff"/><corners android:radius="8dp"/></shape>'})
    kinds = [k for k in _kinds(r) if k[2] == "double-background"]
    assert kinds == [("yes", 1, "double-background")]


def test_alpha_on_container_only(tmp_path):
    r = _app(tmp_path, {"a": '<LinearLayout NS MM>\n<LinearLayout android:alpha="0.5" MM><TextView/><TextView/>'
                             '</LinearLayout>\n<TextView android:alpha="0.5"/>\n</LinearLayout>'})
    assert [k for k in _kinds(r) if k[2] == "alpha-container"] == [("a", 2, "alpha-container")]


@pytest.mark.parametrize("xml,opaque", [
    ('<shape NS><solid android:color="#ff112233"/></shape>', True),
    ('<shape NS><solid android:color="#80112233"/></shape>', False),
    ('<shape NS android:shape="oval"><solid android:color="#ff112233"/></shape>', False),
    ('<ripple NS android:color="#20000000"><item android:id="@android:id/mask"><color android:color="#fff"/></item>'
     '</ripple>', False),
    ('<ripple NS android:color="#20000000"><item><color android:color="#fff"/></item></ripple>', True),
    ('<layer-list NS><item><color android:color="#ff000000"/></item><item android:top="4dp">'
     '<color android:color="#ffffffff"/></item></layer-list>', True),
    ('<selector NS><item android:state_pressed="true" android:drawable="@android:color/black"/>'
     '<item android:drawable="@android:color/transparent"/></selector>', False),
    ('<bitmap NS android:src="@drawable/x"/>', None),
])
def test_drawable_opacity(tmp_path, xml, opaque):
    r = _app(tmp_path, {"a": "<FrameLayout NS/>"}, drawables={"d": xml})
    assert Resolver(r, None).paint("@drawable/d").opaque is opaque


def test_parse_color():
    assert parse_color("#FFF") == "#ffffffff" and parse_color("#8000") == "#88000000"
    assert parse_color("#12345678") == "#12345678" and parse_color("@color/x") is None and parse_color("#xyz") is None


def test_data_binding_layout_root_and_style_background(tmp_path):
    """`<layout><data/>ROOT</layout>` inflates ROOT; a view's style="@style/X" gives it X's background (and X's
    parents'), as Android applies styles."""
    values = ('<color name="bg">#FFFFFF</color>'
              '<style name="AppTheme"><item name="android:windowBackground">@color/bg</item></style>'
              '<style name="Panel"><item name="android:background">@color/bg</item></style>'
              '<style name="Panel.Big"><item name="android:padding">8dp</item></style>')
    manifest = '<manifest NS><application android:theme="@style/AppTheme"/></manifest>'
    r = _app(tmp_path, {
        "bound": '<layout NS>\n<data><variable name="x" type="String"/></data>\n<FrameLayout MM>\n'
                 '<LinearLayout MM><TextView/><TextView/></LinearLayout>\n</FrameLayout>\n</layout>',
        "styled": '<LinearLayout NS MM>\n<LinearLayout MM style="@style/Panel.Big"><TextView/></LinearLayout>\n'
                  '</LinearLayout>'}, values, manifest=manifest)
    kinds = _kinds(r)
    assert ("bound", 3, "useless-parent") in kinds          # the FrameLayout under <layout> is the root
    assert ("styled", 2, "window-background-repeat") in kinds


def test_theme_overlay_and_tint_change_the_colour(tmp_path):
    values = ('<color name="bg">#FFFFFF</color><color name="dark">#FF000000</color>'
              '<style name="AppTheme"><item name="android:windowBackground">@color/bg</item>'
              '<item name="surface">@color/bg</item></style>'
              '<style name="Dark"><item name="surface">@color/dark</item></style>')
    manifest = '<manifest NS><application android:theme="@style/AppTheme"/></manifest>'
    r = _app(tmp_path, {
        "plain": '<LinearLayout NS MM>\n<TextView android:background="?attr/surface"/>\n</LinearLayout>',
        "overlay": '<LinearLayout NS MM android:theme="@style/Dark">\n<TextView android:background="?attr/surface"/>'
                   '\n</LinearLayout>',
        "tinted": '<LinearLayout NS MM>\n<TextView android:background="@color/bg" '
                  'android:backgroundTint="#ff00ff00"/>\n</LinearLayout>'}, values, manifest=manifest)
    kinds = [k for k in _kinds(r) if k[2] == "window-background-repeat"]
    assert kinds == [("plain", 2, "window-background-repeat")]


def test_unknown_window_background_is_said_not_hidden(tmp_path):
    """Without a theme the window rules cannot run: the report says so instead of a silent all-clear."""
    r = _app(tmp_path, {"a": '<LinearLayout NS MM android:background="#ffffff">\n<TextView/>\n'
                             '<include layout="@layout/from_a_library"/></LinearLayout>'})
    report = analyze_layouts(r)
    assert report.findings == []
    assert any("window background unknown" in n for n in report.notes)
    assert any("@layout/from_a_library" in n for n in report.notes)


def test_layout_holding_only_an_unresolved_include_is_not_a_leaf(tmp_path):
    """An <include> always inflates a view, even when its layout (a library's, or a file not copied) is missing:
    the layout around it has a child (held-out commons-app activity_delete.xml was reported as a leaf)."""
    r = _app(tmp_path, {"a": '<FrameLayout NS MM>\n<RelativeLayout MM>\n<include layout="@layout/toolbar"/>'
                             '</RelativeLayout>\n<TextView MM/></FrameLayout>',
                        "b": '<FrameLayout NS MM>\n<RelativeLayout MM/>\n<TextView MM/></FrameLayout>'})
    assert _kinds(r) == [("b", 2, "useless-leaf")]


def test_tools_ignore_on_the_child_keeps_the_parent(tmp_path):
    """Lint reports UselessParent on the child, so tools:ignore there suppresses it (held-out materialistic
    item_header.xml); without it the same pair is reported."""
    pair = ('<FrameLayout NS android:layout_width="match_parent" android:layout_height="wrap_content" '
            'android:foreground="?attr/selectableItemBackground">\n<RelativeLayout android:layout_width="match_parent" '
            'android:layout_height="wrap_content" {}><TextView MM/><TextView MM/></RelativeLayout></FrameLayout>')
    r = _app(tmp_path, {"kept": pair.format('tools:ignore="UselessParent"'), "plain": pair.format("")})
    assert _kinds(r) == [("plain", 1, "useless-parent")]


def test_fragment_container_with_an_id_is_kept(tmp_path):
    """A layout with its own id around a <fragment> is where fragment transactions place other fragments (held-out
    commons-app contributionsFragmentContainer): a <fragment> cannot host them. Without an id it is a useless
    wrapper, and the fix sends a background to the fragment's own layout, not to the <fragment> tag."""
    frag = '<fragment android:name="a.B" MM/>'
    r = _app(tmp_path, {"container": f'<FrameLayout NS MM android:id="@+id/container">\n{frag}</FrameLayout>',
                        "wrapper": f'<FrameLayout NS MM android:background="#fff">\n{frag}</FrameLayout>'})
    findings = analyze_layouts(r).findings
    assert [(Path(f.file).stem, f.kind) for f in findings] == [("wrapper", "useless-parent")]
    assert "background to the fragment's own root layout" in findings[0].fix
