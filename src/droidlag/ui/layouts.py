"""Redundant UI layers in an app's layout files (Lin et al., TMC 2023, III; Android lint's UselessParent,
UselessLeaf, MergeRootFrame, Overdraw, TooDeepLayout), with `<include>`/`<merge>` resolved across files and
backgrounds resolved through styles, themes, colours and drawables. Each finding names the file, line, view class
and id, the layers it costs and the fix."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from droidlag.models.ui import AppResources, LayoutElement, LayoutFile
from droidlag.ui.paint import Paint, Resolver

# Layout classes that only arrange children: removing one changes nothing drawn. Custom views (which may draw or
# carry behaviour) and special containers (scroll views, cards, coordinator/drawer layouts) are never "useless".
PLAIN_GROUPS = {
    "LinearLayout", "FrameLayout", "RelativeLayout", "GridLayout",
    "android.widget.LinearLayout", "android.widget.FrameLayout", "android.widget.RelativeLayout",
    "androidx.constraintlayout.widget.ConstraintLayout", "android.support.constraint.ConstraintLayout",
    "androidx.appcompat.widget.LinearLayoutCompat", "android.support.v7.widget.LinearLayoutCompat",
}
NOT_VIEWS = {"requestFocus", "tag", "include-unresolved"}
FRAGMENT_TAGS = {"fragment", "androidx.fragment.app.FragmentContainerView"}
# Attributes that give a wrapper a job of its own (it animates, handles insets, casts a shadow, draws on top).
JOB_ATTRS = ("android:animateLayoutChanges", "android:fitsSystemWindows", "android:elevation", "android:foreground",
             "android:visibility", "android:alpha", "android:translationZ", "android:stateListAnimator",
             "android:layout_behavior", "app:layout_behavior", "app:layout_scrollFlags")
PADDING = ("android:padding", "android:paddingLeft", "android:paddingTop", "android:paddingRight",
           "android:paddingBottom", "android:paddingStart", "android:paddingEnd", "android:paddingHorizontal",
           "android:paddingVertical")
# A single-child wrapper's visibility and foreground can move to its child; these cannot.
WRAPPER_JOB_ATTRS = tuple(a for a in JOB_ATTRS if a not in ("android:visibility", "android:foreground"))
MARGIN = re.compile(r"android:layout_margin")
FILL = ("match_parent", "fill_parent")
MAX_INCLUDE_DEPTH = 24
MAX_EXPANDED_DEPTH = 300   # views nested this deep (includes expanded) stop expanding: far beyond any real layout
# Material surfaces: their background feeds elevation overlays and lift-on-scroll tints, and drawers/bottom bars lie
# over content, so a colour equal to the window's is not a plain repeat.
MATERIAL_SURFACES = ("AppBarLayout", "BottomNavigationView", "NavigationView", "BottomAppBar", "NavigationRailView",
                     "MaterialCardView", "CardView", "Chip", "FloatingActionButton")


@dataclass
class LayoutConfig:
    """Thresholds: lint's TooDeepLayout default is 10 levels."""

    max_depth: int = 10


@dataclass
class LayoutFinding:
    """One redundant layer: where it is (file, 1-based line), what (kind), the view, the layers it costs, the fix."""

    file: str
    line: int
    kind: str
    view_class: str
    view_id: str | None
    layers: int
    fix: str
    layout: str = ""
    detail: str = ""

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "kind": self.kind, "view_class": self.view_class,
                "view_id": self.view_id, "layers": self.layers, "fix": self.fix, "layout": self.layout,
                "detail": self.detail}


@dataclass
class LayoutReport:
    """All findings of one app, with what was read."""

    findings: list[LayoutFinding] = field(default_factory=list)
    layouts: int = 0
    files: int = 0
    unresolved_includes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)   # what could not be checked, and why

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.findings:
            out[f.kind] = out.get(f.kind, 0) + 1
        return dict(sorted(out.items()))

    def to_dict(self) -> dict:
        return {"layouts": self.layouts, "files": self.files, "counts": self.counts(),
                "unresolved_includes": sorted(set(self.unresolved_includes)), "notes": self.notes,
                "findings": [f.to_dict() for f in self.findings]}


@dataclass
class Node:
    """A view of the expanded tree: its element, the attributes in effect (an `<include>`'s layout params and id
    override its root's), children after `<include>`/`<merge>`, and the `<include>` that brought it in."""

    el: LayoutElement
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    parent: Node | None = None
    include: LayoutElement | None = None
    file_root: bool = False

    @property
    def tag(self) -> str:
        cls = self.el.get("class")
        return cls if self.el.tag == "view" and cls else self.el.tag

    @property
    def simple(self) -> str:
        return self.tag.rsplit(".", 1)[-1]

    def get(self, k: str) -> str | None:
        return self.attrs.get(k)

    @property
    def views(self) -> list[Node]:
        return [c for c in self.children if c.el.tag not in NOT_VIEWS]


def _ref_name(ref: str | None) -> str | None:
    if not ref or "/" not in ref:
        return None
    return ref.split("/", 1)[1]


def _depth(n: Node | None) -> int:
    d = 0
    while n is not None:
        d, n = d + 1, n.parent
    return d


def expand(res: AppResources, el: LayoutElement, unresolved: list[str], stack: tuple[str, ...] = (),
           parent: Node | None = None) -> list[Node]:
    """The views an element stands for: itself, or an included layout's root (or a `<merge>`'s children)."""
    if el.tag == "include" and _depth(parent) >= MAX_EXPANDED_DEPTH:   # a hostile chain of deep includes
        unresolved.append(el.get("layout") or "?")
        return [Node(LayoutElement("include-unresolved", el.attrs, el.file, el.line), dict(el.attrs), [], parent)]
    if el.tag == "include":
        name = _ref_name(el.get("layout"))
        target = res.layout(name) if name else None
        if name is None or target is None or name in stack or len(stack) >= MAX_INCLUDE_DEPTH:
            unresolved.append(el.get("layout") or "?")
            return [Node(LayoutElement("include-unresolved", el.attrs, el.file, el.line), dict(el.attrs), [], parent)]
        root = target.root
        if root.tag == "merge":
            out: list[Node] = []
            for c in root.children:
                out += expand(res, c, unresolved, (*stack, name), parent)
            return out
        overrides = {k: v for k, v in el.attrs.items() if k.startswith("android:layout_") or k in
                     ("android:id", "android:visibility")}
        node = Node(root, {**_style_attrs(res, root.get("style")), **root.attrs, **overrides}, [], parent,
                    include=el, file_root=True)
        node.children = [n for c in root.children for n in expand(res, c, unresolved, (*stack, name), node)]
        return [node]
    node = Node(el, {**_style_attrs(res, el.get("style")), **el.attrs}, [], parent)
    node.children = [n for c in el.children for n in expand(res, c, unresolved, stack, node)]
    return [node]


def _style_attrs(res: AppResources, ref: str | None) -> dict[str, str]:
    """The attributes a view's `style="@style/X"` gives it (X and its parents; the nearest wins), keyed like layout
    attributes (`android:background`, `app:x`); a library style (not in the app's sources) gives nothing."""
    out: dict[str, str] = {}
    name = ref.split("/", 1)[1] if ref and ref.startswith("@style/") else None
    for _ in range(32):
        style = res.styles.get(name) if name else None
        if style is None:
            break
        for k, v in style.items.items():
            out.setdefault(k if ":" in k else f"app:{k}", v)
        name = style.parent.split("/", 1)[-1] if style.parent and not style.parent.startswith("@android:") else None
    return out


def _has_padding(n: Node) -> bool:
    return any(n.get(p) for p in PADDING)


def _has_margin(n: Node) -> bool:
    return any(MARGIN.match(k) for k in n.attrs)


# A comment on a wrapper saying it is needed is the developer's word that the layer stays (lint has tools:ignore
# for the same purpose); "can be removed" comments are not.
_KEPT_COMMENT = re.compile(r"\b(necessary|needed|required|do not remove|don't remove|must stay|keep (this|it))\b", re.I)


def _ignored(n: Node, lint_id: str) -> bool:
    return lint_id.lower() in (n.el.get("tools:ignore") or "").lower()


def _kept_on_purpose(n: Node) -> bool:
    return any(_KEPT_COMMENT.search(c) for c in n.el.comments
               if not re.search(r"licen[cs]e|copyright|SPDX", c, re.I))   # licence headers say "required by law"


def _fills(child: Node, parent: Node, margin_ok: bool = False) -> bool:
    """The child covers all of its parent (so one of the two is redundant); a margin of the child would become the
    merged view's padding when `margin_ok`."""
    for dim in ("width", "height"):
        c, p = child.get(f"android:layout_{dim}"), parent.get(f"android:layout_{dim}")
        if c not in FILL and p != "wrap_content":
            return False
    return margin_ok or not _has_margin(child)


class _Checker:
    """Walks the expanded tree of each layout and collects findings."""

    def __init__(self, res: AppResources, config: LayoutConfig, custom_views: set[str]):
        self.res = res
        self.config = config
        self.custom_views = custom_views
        self.findings: dict[tuple[str, int, str], LayoutFinding] = {}
        self.unresolved: list[str] = []
        self.deep_done: set[str] = set()
        self.included = {_ref_name(el.get("layout")) for vs in res.layouts.values() for v in vs
                         for el in v.root.walk() if el.tag == "include"}
        self.windows: dict[str, str] = {}   # window background colour -> a theme of this app that paints it
        self.window_known = False
        for theme in [res.app_theme, *res.activity_themes.values()]:
            key = Resolver(res, theme).window_background().key if theme else None
            self.window_known |= key is not None
            if key and key.startswith("#"):
                self.windows.setdefault(key, str(theme).split("/")[-1])

    def add(self, n: Node, kind: str, layers: int, fix: str, layout: str, detail: str = "") -> None:
        el = n.include if (n.include is not None and kind == "merge-root") else n.el
        if el.file not in self.res.report_files:
            return
        key = (el.file, el.line, kind)
        if key not in self.findings:
            self.findings[key] = LayoutFinding(el.file, el.line, kind, n.tag, n.el.view_id or _ref_name(
                n.get("android:id")), layers, fix, layout, detail)

    def check_layout(self, lf: LayoutFile) -> None:
        resolver = Resolver(self.res, _theme_for(self.res, lf))
        if lf.root.tag == "merge":
            roots = [n for c in lf.root.children for n in expand(self.res, c, self.unresolved, (lf.name,))]
        else:
            roots = expand(self.res, lf.root, self.unresolved, (lf.name,))
            for r in roots:
                r.file_root = True
            self._compound_root(lf)
        # a layout included elsewhere is judged against the window where it is included, not on its own
        window = resolver.window_background() if lf.name not in self.included else None
        for r in roots:
            self._walk(r, lf, resolver, window, opaque_above=False, depth=1)

    def _walk(self, n: Node, lf: LayoutFile, rv: Resolver, window: Paint | None, opaque_above: bool,
              depth: int) -> None:
        if n.get("android:theme"):   # a theme overlay re-resolves ?attr references in this subtree
            rv = Resolver(self.res, n.get("android:theme"), rv.themes)
        bg = rv.paint(n.get("android:background")) if n.get("android:background") else None
        if bg is not None and (n.get("android:backgroundTint") or n.get("app:backgroundTint")):
            bg = Paint(bg.opaque, None, f"{bg.what} tinted")   # a tint changes the colour: equal to nothing
        self._useless(n, lf, rv)
        self._background(n, lf, rv, bg, window, opaque_above)
        self._alpha(n, lf)
        self._merge_include(n, lf)
        if depth == self.config.max_depth + 1 and lf.path not in self.deep_done:
            self.deep_done.add(lf.path)
            self.add(n, "deep-layout", 1, f"nesting deeper than {self.config.max_depth} levels: flatten the "
                     "hierarchy above this view (ConstraintLayout or fewer wrappers)", lf.name,
                     f"depth {depth} in {lf.name}")
        for c in n.children:
            self._walk(c, lf, rv, window, opaque_above or bool(bg and bg.opaque), depth + 1)

    def _useless(self, n: Node, lf: LayoutFile, rv: Resolver) -> None:
        if n.tag not in PLAIN_GROUPS or _ignored(n, "UselessParent") or _kept_on_purpose(n):
            return
        views = n.views
        if not views:
            # an <include> always inflates a view, even when its layout is not among the sources read
            if any(c.el.tag == "include-unresolved" for c in n.children):
                return
            if not n.file_root and not any(n.get(a) for a in JOB_ATTRS) and not n.get("android:id") \
                    and not n.get("android:background") and not n.get("style") and not _ignored(n, "UselessLeaf"):
                self.add(n, "useless-leaf", 1, "this layout has no children and no background: remove it (a "
                         "Space or a margin does its job)", lf.name)
            return
        if len(views) != 1 or len(n.children) != 1 or any(n.get(a) for a in WRAPPER_JOB_ATTRS):
            return
        c = views[0]
        if c.el.tag == "include-unresolved" or c.get("android:visibility") or _ignored(c, "UselessParent"):
            return   # lint reports UselessParent on the child, so that is where tools:ignore suppresses it
        if n.get("android:id") and c.tag in FRAGMENT_TAGS:
            return   # a fragment container: transactions place fragments into its id, which a <fragment> cannot host
        n_bg, c_bg = n.get("android:background"), c.get("android:background")
        if (n_bg and c_bg) or (n.get("android:foreground") and c.get("android:foreground")):
            return
        # one background for the merged view: a margin or padding around the painted one would change the look
        painted_gap = (c_bg and _has_padding(n)) or (n_bg and _has_padding(c))
        if c.tag in PLAIN_GROUPS and not any(c.get(a) for a in JOB_ATTRS) and not painted_gap and \
                _fills(c, n, margin_ok=not (n_bg or c_bg)):
            self.add(n, "useless-parent", 1, f"{n.simple} has a single child {c.simple} that fills it: merge the "
                     "two into one layout (move the attributes of one onto the other)", lf.name)
        elif _fills(c, n) and not _has_padding(n) and not (n_bg and _has_margin(c)):
            self.add(n, "useless-parent", 1, f"{n.simple} only wraps {c.simple}, which fills it: remove the wrapper "
                     "and give its layout params" + (", id" if n.get("android:id") else "") + f" to the {c.simple}"
                     + ((" and its background to the fragment's own root layout" if c.tag in FRAGMENT_TAGS else
                         f" and its background to the {c.simple}") if n_bg else ""), lf.name)

    def _background(self, n: Node, lf: LayoutFile, rv: Resolver, bg: Paint | None, window: Paint | None,
                    opaque_above: bool) -> None:
        if bg is None or not n.get("android:background"):
            return
        raw = n.get("android:background") or ""
        if window is not None and not n.simple.endswith(MATERIAL_SURFACES):
            if self._window(n, lf, bg, window, opaque_above, raw):
                return
        self._double(n, lf, rv, bg, raw)

    def _window(self, n: Node, lf: LayoutFile, bg: Paint, window: Paint, opaque_above: bool, raw: str) -> bool:
        """A background that repeats, or hides, the window background under it."""
        repeats = (bg.key == "window" or (bg.key is not None and bg.key == window.key)) and bg.opaque is not False
        if _ignored(n, "Overdraw"):
            return False
        if repeats and not opaque_above and not _may_cover_siblings(n):
            self.add(n, "window-background-repeat", 1, f"background {raw} repeats the window background "
                     f"({window.what}) drawn under it: remove it", lf.name)
            return True
        other = self.windows.get(bg.key or "") if bg.opaque else None
        if other and n.file_root and n.parent is None and _fills_screen(n):
            self.add(n, "window-background-repeat", 1, f"this full-screen root's background {raw} is the window "
                     f"background of theme {other} (used by activities of this app): if this layout is shown in "
                     "such an activity, remove it", lf.name)
            return True
        if bg.opaque and n.file_root and n.parent is None and window.opaque and _is_activity_layout(lf) and \
                _fills_screen(n):
            self.add(n, "window-background-covered", 1, f"this full-screen root paints {raw} over the window "
                     f"background ({window.what}): set {raw} as the theme's android:windowBackground and drop it "
                     "here", lf.name)
            return True
        return False

    def _double(self, n: Node, lf: LayoutFile, rv: Resolver, bg: Paint, raw: str) -> None:
        """An opaque background hidden under a full-size child's opaque background."""
        if not bg.opaque or _has_padding(n):
            return
        for c in n.views:
            cbg = rv.paint(c.get("android:background")) if c.get("android:background") else None
            if cbg is not None and cbg.opaque and _fills_strict(c, n):
                self.add(n, "double-background", 1, f"{n.simple}'s background {raw} is hidden under its child "
                         f"{c.simple}'s opaque background {c.get('android:background')}: remove one", lf.name)
                return

    def _alpha(self, n: Node, lf: LayoutFile) -> None:
        raw = n.get("android:alpha")
        if not raw or not n.views:
            return
        try:
            a = float(raw)
        except ValueError:
            return
        if 0 < a < 1:
            self.add(n, "alpha-container", 1, f"alpha {raw} on a container draws it through an off-screen layer: set "
                     "the alpha on the children, or the colour's alpha, instead", lf.name)

    def _merge_include(self, n: Node, lf: LayoutFile) -> None:
        inc, parent = n.include, n.parent
        if inc is None or parent is None or n.tag not in PLAIN_GROUPS:
            return
        if n.el.get("android:background") or any(n.el.get(p) for p in PADDING) or \
                any(n.el.get(a) or inc.get(a) for a in JOB_ATTRS) or inc.get("android:id"):
            return
        if "ConstraintLayout" in parent.simple or not _same_group(n, parent):
            return   # an include placed as a block in a ConstraintLayout keeps its root
        self.add(n, "merge-root", 1, f"the included layout's root {n.simple} only repeats its {parent.simple} "
                 f"parent: make it <merge tools:parentTag=\"{parent.tag}\">", lf.name,
                 f"includes {_ref_name(inc.get('layout'))}")

    def _compound_root(self, lf: LayoutFile) -> None:
        root = lf.root
        if root.tag not in PLAIN_GROUPS or root.get("android:background"):
            return
        owner = _custom_view_owner(lf, self.custom_views)
        if owner is None:
            return
        n = Node(root, dict(root.attrs), [], None)
        self.add(n, "merge-root", 1, f"{owner} inflates this layout into itself, so its root {root.tag.rsplit('.', 1)[-1]} "
                 f"is a second layer: make the root <merge tools:parentTag=\"{root.tag}\"> and inflate with "
                 "attachToRoot=true (move attributes such as clipChildren into the custom view)", lf.name,
                 f"content of custom view {owner}")


def _may_cover_siblings(n: Node) -> bool:
    """True when the view may be drawn over earlier siblings (of itself or an ancestor) in a container whose
    children overlap (frame, relative, constraint, coordinator, drawer layouts): its background then hides them."""
    while n.parent is not None:
        p = n.parent
        if not p.simple.startswith(("LinearLayout", "TableLayout", "TableRow", "ScrollView", "NestedScrollView",
                                    "HorizontalScrollView")):
            if p.views and p.views[0] is not n and not _placed_beside(n):
                return True
        n = p
    return False


_BESIDE = ("android:layout_below", "android:layout_above", "android:layout_toRightOf", "android:layout_toLeftOf",
           "android:layout_toEndOf", "android:layout_toStartOf", "app:layout_constraintTop_toBottomOf",
           "app:layout_constraintBottom_toTopOf", "app:layout_constraintStart_toEndOf", "app:layout_constraintEnd_toStartOf")


def _placed_beside(n: Node) -> bool:
    """Placed next to a sibling (RelativeLayout/ConstraintLayout rules), so it does not lie over it."""
    return any(n.get(a) and n.get(a) != "parent" for a in _BESIDE)


def _fills_screen(n: Node) -> bool:
    return all(n.get(f"android:layout_{d}") in FILL for d in ("width", "height"))


def _fills_strict(child: Node, parent: Node) -> bool:
    return all(child.get(f"android:layout_{d}") in FILL for d in ("width", "height")) and not _has_margin(child)


def _same_group(n: Node, parent: Node) -> bool:
    if n.simple != parent.simple:
        return False
    if n.simple.startswith("LinearLayout"):
        return (n.get("android:orientation") or "horizontal") == (parent.get("android:orientation") or "horizontal")
    return n.simple in ("FrameLayout", "LinearLayout", "LinearLayoutCompat")


def _snake(name: str) -> list[str]:
    return [t.lower() for t in re.findall(r"[A-Z]+(?=[A-Z][a-z]|$)|[A-Z]?[a-z0-9]+", name)]


def _custom_view_owner(lf: LayoutFile, custom_views: set[str]) -> str | None:
    """The custom view class whose content this layout is: named in tools:context, or the layout's name is the
    class's name in snake case (`AudioRecordView` <-> audio_record_view, `ReviewerMenuView` <-> view_reviewer_menu)."""
    simple = (lf.root.get("tools:context") or "").rsplit(".", 1)[-1]
    if simple.endswith(("View", "Layout")):
        return simple
    tokens = sorted(lf.name.split("_"))
    for cls in custom_views:
        simple = cls.rsplit(".", 1)[-1]
        if sorted(_snake(simple)) == tokens and len(tokens) >= 2:
            return simple
    return None


def _theme_for(res: AppResources, lf: LayoutFile) -> str | None:
    ctx = lf.root.get("tools:context")
    if ctx:
        simple = ctx.rsplit(".", 1)[-1]
        for act, theme in res.activity_themes.items():
            if act.rsplit(".", 1)[-1] == simple:
                return theme
    return res.app_theme


def _is_activity_layout(lf: LayoutFile) -> bool:
    ctx = (lf.root.get("tools:context") or "").rsplit(".", 1)[-1]
    return lf.name.startswith("activity") or (bool(ctx) and ctx.endswith("Activity"))


def _custom_views(res: AppResources) -> set[str]:
    """Classes used as tags that are not framework/library widgets: the app's own custom views."""
    out = set()
    for variants in res.layouts.values():
        for v in variants:
            for el in v.root.walk():
                if "." in el.tag and not el.tag.startswith(("android.", "androidx.", "com.google.android.material")):
                    out.add(el.tag)
    return out


def analyze_layouts(res: AppResources, config: LayoutConfig | None = None) -> LayoutReport:
    """Findings over every layout of the app whose file is to be reported (`res.report_files`)."""
    config = config or LayoutConfig()
    checker = _Checker(res, config, _custom_views(res))
    # every layout is walked (a reported file may be included by one that is only context); findings are kept for
    # reported files only
    n_layouts = 0
    for name in sorted(res.layouts):
        for lf in res.layouts[name]:
            n_layouts += lf.path in res.report_files
            checker.check_layout(lf)
    findings = sorted(checker.findings.values(), key=lambda f: (f.file, f.line, f.kind))
    return LayoutReport(findings, len(res.layouts), n_layouts, checker.unresolved, _notes(res, checker))


def _notes(res: AppResources, checker: _Checker) -> list[str]:
    """Rules that could not run, said plainly so that no finding is not taken for no problem."""
    notes = []
    if not checker.window_known:
        where = ("no AndroidManifest.xml with an android:theme was found" if res.app_theme is None else
                 f"the theme {res.app_theme} or its window background is not in these sources (a library's?)")
        notes.append(f"window background unknown: {where}, so only backgrounds that name ?android:windowBackground "
                     "were found to repeat it; pass the folder holding the app's themes and manifest with --context")
    missing = sorted(set(checker.unresolved))
    if missing:
        notes.append(f"{len(missing)} included layout(s) not found (library layouts?): " + ", ".join(missing[:8])
                     + (" ..." if len(missing) > 8 else "") + "; what they hold was not checked")
    return notes
