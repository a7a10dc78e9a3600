"""What a background paints: a resource reference (`#AARRGGBB`, `@color/x`, `@drawable/x`, `?attr/x`) resolved through
colours, XML drawables and the theme's style chain to a `Paint`: opaque or not (or unknown), and a key that two
equal backgrounds share (so a view repeating the window background can be recognised)."""
from __future__ import annotations

from dataclasses import dataclass

from droidlag.models.ui import AppResources, LayoutElement, Style

MAX_REF_DEPTH = 12

# Framework colours with fixed values (android.R.color); other framework colours are unknown.
FRAMEWORK_COLORS = {"black": "#ff000000", "white": "#ffffffff", "transparent": "#00000000",
                    "background_dark": "#ff000000", "background_light": "#ffffffff"}
# Library/framework theme attributes that paint nothing at rest (ripples for touch feedback).
TRANSPARENT_ATTRS = {"selectableItemBackground", "selectableItemBackgroundBorderless", "actionBarItemBackground",
                     "listChoiceBackgroundIndicator"}
WINDOW_BACKGROUND_ATTRS = {"windowBackground", "android:windowBackground", "android:attr/windowBackground",
                           "attr/windowBackground", "attr/android:windowBackground"}


@dataclass(frozen=True)
class Paint:
    """A resolved background: `opaque` True/False/None (unknown); `key` equal for equal paints; `what` in words."""

    opaque: bool | None
    key: str | None
    what: str


UNKNOWN = Paint(None, None, "unknown")
NOTHING = Paint(False, None, "nothing")


def parse_color(value: str) -> str | None:
    """`#RGB`, `#ARGB`, `#RRGGBB`, `#AARRGGBB` as lower-case `#aarrggbb`; None when it is not a literal colour."""
    v = value.strip().lower()
    if not v.startswith("#"):
        return None
    h = v[1:]
    if any(c not in "0123456789abcdef" for c in h):
        return None
    if len(h) in (3, 4):
        h = "".join(c * 2 for c in h)
    if len(h) == 6:
        h = "ff" + h
    return "#" + h if len(h) == 8 else None


def _color_paint(argb: str) -> Paint:
    alpha = int(argb[1:3], 16)
    return Paint(alpha == 255, argb, argb)


class Resolver:
    """Resolves references in one app under one theme (a style name, or None for no known theme)."""

    def __init__(self, res: AppResources, theme: str | None, base: tuple[str | None, ...] = ()):
        self.res = res
        self.theme = theme
        self.themes = (theme, *base)   # a view's theme overlay first, then the themes under it

    def theme_item(self, attr: str) -> str | None:
        """The value the theme (an overlay, then the themes under it, each with its parents) gives an attribute,
        trying `name` and `android:name`."""
        names = (attr, f"android:{attr}") if not attr.startswith("android:") else (attr, attr[8:])
        for theme in self.themes:
            style = self._style(theme)
            seen = 0
            while style is not None and seen < 32:
                for n in names:
                    if n in style.items:
                        return style.items[n]
                style = self._style(style.parent)
                seen += 1
        return None

    def _style(self, ref: str | None) -> Style | None:
        if not ref:
            return None
        name = ref.split("/", 1)[-1] if ref.startswith(("@style/", "@android:style/")) else ref
        if ref.startswith("@android:"):
            return None
        return self.res.styles.get(name)

    def window_background(self) -> Paint:
        """The theme's window background (unknown when the theme or its value is not in the app's sources)."""
        if self.theme is None:
            return UNKNOWN
        if (self.theme_item("windowIsTranslucent") or "").lower() == "true":
            return NOTHING
        value = self.theme_item("android:windowBackground") or self.theme_item("windowBackground")
        if value is None:
            return UNKNOWN
        return self.paint(value)

    def paint(self, value: str | None, depth: int = 0) -> Paint:
        """What a background/colour reference paints."""
        if value is None:
            return NOTHING
        v = value.strip()
        if depth > MAX_REF_DEPTH:
            return UNKNOWN
        if v in ("@null", "@empty", ""):
            return NOTHING
        literal = parse_color(v)
        if literal:
            return _color_paint(literal)
        if v.startswith("?"):
            return self._attr_paint(v[1:], depth)
        kind, _, name = v.lstrip("@").partition("/")
        if kind in ("android:color", "android:drawable"):
            argb = FRAMEWORK_COLORS.get(name)
            return _color_paint(argb) if argb else Paint(None, v, v)
        if kind == "color":
            c = self.res.color(name)
            return self.paint(c, depth + 1) if c is not None else Paint(None, v, v)
        if kind == "drawable":
            d = self.res.drawables.get(name)
            if d is None:
                return Paint(None, v, v)
            p = self.drawable(d.root, depth + 1)
            return p if p.key and p.key.startswith("#") else Paint(p.opaque, v, v)
        return Paint(None, v, v)

    def _attr_paint(self, ref: str, depth: int) -> Paint:
        name = ref.split("/", 1)[-1]
        bare = name.split(":", 1)[-1]
        if ref in WINDOW_BACKGROUND_ATTRS:
            wb = self.window_background()
            return Paint(wb.opaque, "window" if wb.key is None else wb.key, "?android:windowBackground")
        if bare in TRANSPARENT_ATTRS:
            return Paint(False, None, f"?{bare} (touch feedback, transparent at rest)")
        item = self.theme_item(name)
        if item is None:
            return Paint(None, f"?{name}", f"?{name}")
        return self.paint(item, depth + 1)

    def drawable(self, root: LayoutElement, depth: int = 0) -> Paint:
        """Whether an XML drawable fills its bounds opaquely (None when that depends on a bitmap or a library)."""
        tag = root.tag
        if tag == "color":
            return self.paint(root.get("android:color"), depth + 1)
        if tag == "shape":
            return self._shape(root, depth)
        if tag == "selector":
            default = [i for i in root.children if i.tag == "item" and not any(k.startswith("android:state_")
                                                                              for k in i.attrs)]
            return self._item(default[-1], depth) if default else UNKNOWN
        if tag == "ripple":
            items = [i for i in root.children if i.tag == "item" and i.get("android:id") != "@android:id/mask"]
            return self._item(items[0], depth) if items else Paint(False, None, "ripple (transparent at rest)")
        if tag == "layer-list":
            return self._layers(root, depth)
        if tag == "inset":
            if any(k.startswith("android:inset") and (root.attrs[k].strip() not in ("0", "0dp")) for k in root.attrs):
                return Paint(False, None, "inset drawable (edges left transparent)")
            return self._item(root, depth)
        return UNKNOWN   # bitmap, nine-patch, vector, animation: depends on pixels we do not have

    def _item(self, item: LayoutElement, depth: int) -> Paint:
        if item.get("android:drawable"):
            return self.paint(item.get("android:drawable"), depth + 1)
        if item.get("android:color"):
            return self.paint(item.get("android:color"), depth + 1)
        inner = [c for c in item.children]
        return self.drawable(inner[0], depth + 1) if inner else UNKNOWN

    def _shape(self, root: LayoutElement, depth: int) -> Paint:
        if (root.get("android:shape") or "rectangle") != "rectangle":
            return Paint(False, None, "oval/ring shape")
        for c in root.children:
            if c.tag == "corners" and any(_nonzero(v) for k, v in c.attrs.items() if "adius" in k):
                return Paint(False, None, "rounded corners")
        solid = next((c for c in root.children if c.tag == "solid"), None)
        gradient = next((c for c in root.children if c.tag == "gradient"), None)
        if solid is not None:
            p = self.paint(solid.get("android:color"), depth + 1)
            return p
        if gradient is not None:
            parts = [self.paint(gradient.get(k), depth + 1) for k in
                     ("android:startColor", "android:centerColor", "android:endColor") if gradient.get(k)]
            if parts and all(p.opaque for p in parts):
                return Paint(True, None, "opaque gradient")
            if any(p.opaque is False for p in parts):
                return Paint(False, None, "gradient with transparency")
            return UNKNOWN
        return Paint(False, None, "shape without fill")

    def _layers(self, root: LayoutElement, depth: int) -> Paint:
        states = []
        for item in (i for i in root.children if i.tag == "item"):
            inset = any(k in item.attrs and _nonzero(item.attrs[k]) for k in
                        ("android:left", "android:top", "android:right", "android:bottom", "android:start",
                         "android:end"))
            p = self._item(item, depth)
            if p.opaque and not inset and not item.get("android:gravity"):
                return Paint(True, None, "layer list with a full opaque layer")
            states.append(p.opaque)
        if states and all(s is False for s in states):
            return Paint(False, None, "layer list without an opaque layer")
        return UNKNOWN


def _nonzero(v: str) -> bool:
    digits = "".join(c for c in v if c.isdigit() or c == ".")
    try:
        return float(digits) != 0 if digits else True
    except ValueError:
        return True
