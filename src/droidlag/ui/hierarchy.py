"""Overdraw and redundant layers in a runtime view hierarchy: how many drawing layers cover each part of the screen
(Android's "Debug GPU overdraw" counts: 1x blue, 2x green, 3x pink, 4x+ red), the views fully covered by a view
drawn above them, and chains of same-bounds single-child containers. Where the format does not say which views
draw or whether they are opaque, the figures are estimates and the report says on which assumption."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from droidlag.models.ui import ViewHierarchy, ViewNode

# Views that draw something of their own even without a background (text, images, lists' dividers, cards).
DRAWING_LEAVES = ("TextView", "ImageView", "Button", "EditText", "CheckBox", "Switch", "RadioButton", "ProgressBar",
                  "SeekBar", "VideoView", "SurfaceView", "TextureView", "WebView", "CardView", "Toolbar",
                  "ImageButton", "Chip", "Spinner", "RatingBar", "CheckedTextView", "ToggleButton", "View")
FRAMEWORK_IDS = ("android:id/",)
# Scrolling containers clear WILL_NOT_DRAW to draw a selector, dividers or edge glows, not a background: a draw
# flag on them says nothing about covering their bounds.
SCROLLERS = ("ListView", "GridView", "RecyclerView", "ScrollView", "NestedScrollView", "ViewPager", "ViewPager2",
             "AbsListView", "ExpandableListView")
# Containers whose children the widget itself requires, so neither they nor the child they hold are layers an app
# can merge (lint's UselessParent never removes the child of a ScrollView/HorizontalScrollView, and does not treat
# lists, grids, pagers or other adapter views as plain containers): a ScrollView or HorizontalScrollView (and
# NestedScrollView) must have exactly one child; a ViewPager/ViewPager2 holds its pages (ViewPager2 through an
# internal RecyclerView); a RecyclerView or an AdapterView (ListView, GridView, Spinner, Gallery, StackView,
# AdapterViewFlipper) holds the item views its adapter creates. Matched on the class's simple name's ending, so
# subclasses named after their base (HorizontalScrollView, NestedScrollView, ExpandableListView) match too.
CHILD_REQUIRING = SCROLLERS + ("AdapterView", "AdapterViewFlipper", "AdapterViewAnimator", "StackView", "Gallery",
                               "Spinner")
# The window's content frame: every view above it is the window's decor (DecorView, its LinearLayout and frame) or
# AppCompat's sub-decor, which AppCompat installs between the decor and the app's layout and which the app cannot
# remove. AppCompat renames the platform frame to NO_ID and gives `android:id/content` to its own frame; its
# sub-decor roots carry the app package's `action_bar_root` (no action bar) or `decor_content_parent` (with one).
CONTENT_ID = "android:id/content"
APPCOMPAT_DECOR_IDS = ("action_bar_root", "decor_content_parent")
DECOR_DEPTH = 4


@dataclass
class HierarchyConfig:
    """`cell_px`: side of a screen region in pixels; `scale`: heat-map pixels per screen pixel."""

    cell_px: int = 120
    scale: float = 0.25
    window_background: bool = True   # the window background is drawn once under everything


@dataclass
class CoveredView:
    cls: str
    resource_id: str | None
    bounds: tuple[int, int, int, int]
    covered_by: str
    source: str

    def to_dict(self) -> dict:
        return {"class": self.cls, "resource_id": self.resource_id, "bounds": list(self.bounds),
                "covered_by": self.covered_by, "source": self.source}


@dataclass
class Chain:
    """Containers nested with the same bounds, each the only child of the one above. `kept` says, per member, why
    it cannot go (a scrolling/adapter container, or the child one requires) or None when it could be merged away:
    the redundant layers are the members that could go, all but one when every member could."""

    classes: list[str]
    resource_ids: list[str | None]
    bounds: tuple[int, int, int, int]
    source: str
    kept: list[str | None] = field(default_factory=list)

    def _removable(self) -> list[int]:
        kept = self.kept or [None] * len(self.classes)
        free = [i for i, k in enumerate(kept) if k is None]
        return free[:-1] if len(free) == len(self.classes) else free

    @property
    def redundant(self) -> int:
        return len(self._removable())

    @property
    def redundant_classes(self) -> list[str]:
        return [self.classes[i] for i in self._removable()]

    def to_dict(self) -> dict:
        return {"classes": self.classes, "resource_ids": self.resource_ids, "bounds": list(self.bounds),
                "redundant_layers": self.redundant, "kept": self.kept or [None] * len(self.classes),
                "source": self.source}


@dataclass
class HierarchyReport:
    """Overdraw counts (`draws` per heat-map pixel, window background included), per-region maxima, covered
    views, chains, and whether these are measured or estimated (with the assumption)."""

    path: str
    format: str
    screen: tuple[int, int]
    views: int
    drawing_views: int
    draws: np.ndarray            # uint8 [h, w]: how many layers draw each (scaled) pixel
    regions: list[dict] = field(default_factory=list)
    covered: list[CoveredView] = field(default_factory=list)
    chains: list[Chain] = field(default_factory=list)
    estimate: bool = True
    assumption: str = ""
    activity: str | None = None
    redundant_classes: dict[str, int] = field(default_factory=dict)
    boxes: list[tuple[int, int, int, int]] = field(default_factory=list)   # drawing views' visible boxes, in
    scale: float = 1.0                                                     # `draws` pixels (screen px * scale)

    def overdraw_share(self) -> dict[str, float]:
        """Share of the screen by Android's overdraw count (layers beyond the first): `not_drawn`, `no_overdraw`
        (drawn once), `1x` (blue), `2x` (green), `3x` (pink), `4x+` (red)."""
        total = self.draws.size or 1
        over = self.draws.astype(np.int16) - 1
        out = {"not_drawn": float((over < 0).sum()) / total, "no_overdraw": float((over == 0).sum()) / total}
        for k in range(1, 4):
            out[f"{k}x"] = float((over == k).sum()) / total
        out["4x+"] = float((over >= 4).sum()) / total
        return out

    def mean_draws(self) -> float:
        return float(self.draws.mean()) if self.draws.size else 0.0

    def to_dict(self) -> dict:
        return {"path": self.path, "format": self.format, "activity": self.activity, "screen": list(self.screen),
                "views": self.views, "drawing_views": self.drawing_views, "estimate": self.estimate,
                "assumption": self.assumption, "mean_layers_per_pixel": round(self.mean_draws(), 3),
                "overdraw_share": {k: round(v, 4) for k, v in self.overdraw_share().items()},
                "regions": self.regions, "covered_views": [c.to_dict() for c in self.covered],
                "same_bounds_chains": [c.to_dict() for c in self.chains],
                "redundant_classes": self.redundant_classes}


def _is_framework(n: ViewNode) -> bool:
    return bool(n.resource_id and n.resource_id.startswith(FRAMEWORK_IDS)) or n.package == "android" or \
        n.simple_class in ("DecorView", "PhoneWindow$DecorView")


def _draws(n: ViewNode, h: ViewHierarchy) -> bool:
    """Whether a view paints: the format's flag when it has one, else leaves of drawing classes."""
    if h.has_draw_flags and n.draws is not None:
        return n.draws and not (n.children and n.simple_class.endswith(SCROLLERS))
    if n.children:
        return False
    return n.simple_class.endswith(DRAWING_LEAVES) and n.simple_class != "ViewStub"


def _visible_nodes(root: ViewNode, screen: tuple[int, int]) -> list[tuple[ViewNode, tuple[int, int, int, int]]]:
    """Visible views in drawing order (parent before children, siblings in order), each clipped to its parents."""
    out = []
    stack = [(root, (0, 0, screen[0], screen[1]))]
    while stack:
        n, clip = stack.pop()
        if not n.visible:
            continue
        x0, y0, x1, y1 = n.bounds
        box = (max(x0, clip[0]), max(y0, clip[1]), min(x1, clip[2]), min(y1, clip[3]))
        if box[2] <= box[0] or box[3] <= box[1]:
            continue
        out.append((n, box))
        for c in reversed(n.children):
            stack.append((c, box))
    return out


def _requires_children(n: ViewNode) -> bool:
    return n.simple_class.endswith(CHILD_REQUIRING)


def _window_decor(root: ViewNode) -> set[int]:
    """Ids (`id()`) of the window decor above an app's layout: the views above a content frame
    (`android:id/content`) and AppCompat's sub-decor roots with the views above them, up to the window's root (a
    DecorView, or DECOR_DEPTH levels: DecorView > LinearLayout > FrameLayout > AppCompat root > content is the
    deepest standard decor), so that an activity embedded in another's layout (TabActivity) takes only its own
    decor out, not the host's layout around it."""
    parent: dict[int, ViewNode] = {}
    marks: list[tuple[ViewNode, bool]] = []
    for n in root.walk():
        for c in n.children:
            parent[id(c)] = n
        rid = n.resource_id or ""
        if rid == CONTENT_ID:
            marks.append((n, False))
        elif ":id/" in rid and rid.rpartition("/")[2] in APPCOMPAT_DECOR_IDS:
            marks.append((n, True))
    decor: set[int] = set()
    for n, itself in marks:
        if itself:
            decor.add(id(n))
        cur: ViewNode | None = n
        for _ in range(DECOR_DEPTH):
            cur = parent.get(id(cur))
            if cur is None:
                break
            decor.add(id(cur))
            if cur.simple_class.endswith("DecorView"):
                break
    return decor


def _chains(root: ViewNode) -> list[Chain]:
    """Runs of same-bounds single-child containers, window decor left out. A run stops below a container that
    requires its children (scroll views, pagers, lists): that child is a run's first member, kept like the
    container itself; runs with nothing an app could merge are not reported."""
    decor = _window_decor(root)
    out: list[Chain] = []
    stack: list[tuple[ViewNode, bool]] = [(root, False)]
    while stack:
        n, required = stack.pop()
        chain = [n]
        cur = n
        while len(cur.children) == 1 and cur.children[0].bounds == cur.bounds and cur.children[0].children and \
                not _requires_children(cur):
            cur = cur.children[0]
            chain.append(cur)
        app = [c for c in chain if not _is_framework(c) and id(c) not in decor]
        if len(app) >= 2:
            kept: list[str | None] = [
                "scrolling or adapter container" if _requires_children(c) else
                "the child its scrolling or adapter container requires" if c is n and required else None
                for c in app]
            found = Chain([c.cls for c in app], [c.resource_id for c in app], n.bounds, app[0].source, kept)
            if found.redundant:
                out.append(found)
        nxt = cur if len(chain) > 1 else n
        stack.extend((c, _requires_children(nxt)) for c in nxt.children)
    return out


def _covered(order: list[tuple[ViewNode, tuple[int, int, int, int]]], drawing: set[int],
             opaque_known: bool) -> list[CoveredView]:
    """Drawing views whose whole visible box lies under a view drawn later (a later sibling's subtree or their own
    full-size child) that is opaque, or taken as opaque where the format does not record opacity."""
    out = []
    later_boxes = [(i, n, box) for i, (n, box) in enumerate(order) if id(n) in drawing and
                   (n.opaque if opaque_known else n.simple_class.endswith(("ImageView", "VideoView", "SurfaceView",
                                                                           "TextureView", "WebView")) or
                    (n.draws is True and bool(n.children)))]
    for i, (n, box) in enumerate(order):
        if id(n) not in drawing:
            continue
        for j, m, mbox in later_boxes:
            if j > i and m is not n and mbox[0] <= box[0] and mbox[1] <= box[1] and mbox[2] >= box[2] and \
                    mbox[3] >= box[3]:
                out.append(CoveredView(n.cls, n.resource_id, box, f"{m.cls} {m.resource_id or ''}".strip(),
                                       n.source))
                break
    return out


def analyze_hierarchy(h: ViewHierarchy, config: HierarchyConfig | None = None) -> HierarchyReport:
    """Per-pixel layer counts, regions, covered views and chains of one captured view tree."""
    cfg = config or HierarchyConfig()
    w, hgt = max(1, h.screen[0]), max(1, h.screen[1])
    sw, sh = max(1, round(w * cfg.scale)), max(1, round(hgt * cfg.scale))
    draws = np.zeros((sh, sw), dtype=np.uint8)
    if cfg.window_background:
        draws += 1
    order = _visible_nodes(h.root, (w, hgt))
    # the DecorView paints the window background, already counted once; other framework views (the action bar's
    # container, ...) are layers like any other
    drawing = {id(n) for n, _ in order if _draws(n, h) and not n.simple_class.endswith("DecorView")}
    boxes = []
    for n, (left, top, right, bottom) in order:
        if id(n) in drawing:
            y0, y1 = int(top * cfg.scale), max(int(top * cfg.scale) + 1, int(bottom * cfg.scale))
            x0, x1 = int(left * cfg.scale), max(int(left * cfg.scale) + 1, int(right * cfg.scale))
            boxes.append((x0, y0, x1, y1))
            sub = draws[y0:y1, x0:x1]
            np.minimum(sub.astype(np.uint16) + 1, 255, out=sub, casting="unsafe")
    regions = []
    cell = max(1, int(cfg.cell_px * cfg.scale))
    for y in range(0, sh, cell):
        for x in range(0, sw, cell):
            block = draws[y:y + cell, x:x + cell]
            regions.append({"x": int(x / cfg.scale), "y": int(y / cfg.scale), "size": cfg.cell_px,
                            "max_layers": int(block.max()), "mean_layers": round(float(block.mean()), 2)})
    chains = _chains(h.root)
    covered = _covered(order, drawing, h.has_opacity)
    classes: dict[str, int] = {}
    for c in chains:
        for k in c.redundant_classes:
            classes[k] = classes.get(k, 0) + 1
    for cv in covered:
        classes[cv.cls] = classes.get(cv.cls, 0) + 1
    return HierarchyReport(h.path, h.format, h.screen, sum(1 for _ in h.root.walk()), len(drawing), draws, regions,
                           covered, chains, estimate=not h.has_opacity, assumption=_assumption(h, cfg),
                           activity=h.activity, redundant_classes=dict(sorted(classes.items(), key=lambda kv: -kv[1])),
                           boxes=boxes, scale=cfg.scale)


def _assumption(h: ViewHierarchy, cfg: HierarchyConfig) -> str:
    base = "the window background is opaque and drawn once under everything; " if cfg.window_background else ""
    if h.has_opacity:
        return base.rstrip("; ")
    if h.has_draw_flags:
        how = ("RICO's draw field (View.willNotDraw)" if h.format == "rico" else "the D (draws) flag of dumpsys")
        return (base + f"a view draws when {how} says so, over its whole bounds (scrolling containers excepted: "
                "their flag is for selectors, dividers and edge glows); opacity is not recorded, so a "
                "covering view is taken as opaque only when it draws and is an image/video/web view or a "
                "container that draws (a background)")
    return (base + f"{h.format} records no drawing or opacity data, so leaves of drawing classes (text, image, "
            "button, plain View ...) are taken to draw over their whole bounds and containers to draw nothing; "
            "a real background on a container adds one layer to what is shown")
