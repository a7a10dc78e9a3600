"""The format-free view of an app's UI: layout XML elements with their file and line and the resources that decide
what a view paints (`AppResources`), and runtime view trees with screen bounds (`ViewHierarchy`)."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class LayoutElement:
    """One element of a layout file as written: tag, attributes keyed `android:x` / `app:x` / `tools:x` (or bare),
    children in order, and where it is (file, 1-based line)."""

    tag: str
    attrs: dict[str, str]
    file: str
    line: int
    children: list[LayoutElement] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)   # XML comments just before the element and directly in it

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.attrs.get(name, default)

    @property
    def view_id(self) -> str | None:
        """The id name without its `@+id/` prefix, or None."""
        raw = self.attrs.get("android:id")
        if not raw:
            return None
        return raw.split("/", 1)[-1]

    def walk(self) -> Iterator[LayoutElement]:
        yield self
        for c in self.children:
            yield from c.walk()


@dataclass
class LayoutFile:
    """One `res/layout*/NAME.xml`: its resource name, the folder's qualifiers (`land`, `sw600dp`, '' for default)."""

    name: str
    path: str
    qualifiers: str
    root: LayoutElement


@dataclass
class Style:
    """A `<style>`: its parent (explicit or implied by a dotted name) and its items (`android:windowBackground` ...)."""

    name: str
    parent: str | None
    items: dict[str, str]


@dataclass
class Drawable:
    """An XML drawable as written (`<shape>`, `<selector>`, `<layer-list>`, `<ripple>`, ...); whether it paints
    opaquely is the analysis' business."""

    name: str
    path: str
    root: LayoutElement


@dataclass
class AppResources:
    """The resources of one app (all modules merged, first source wins per name and qualifier)."""

    layouts: dict[str, list[LayoutFile]] = field(default_factory=dict)    # name -> variants
    styles: dict[str, Style] = field(default_factory=dict)                # default config (others fill gaps)
    colors: dict[str, dict[str, str]] = field(default_factory=dict)      # qualifiers -> name -> value
    drawables: dict[str, Drawable] = field(default_factory=dict)
    app_theme: str | None = None
    activity_themes: dict[str, str] = field(default_factory=dict)        # activity class (as written) -> theme
    report_files: set[str] = field(default_factory=set)                  # layout paths whose findings are reported
    sources: list[str] = field(default_factory=list)                     # folders read, in precedence order

    def layout(self, name: str) -> LayoutFile | None:
        """The default-configuration variant of a layout (or the first variant when there is no default)."""
        variants = self.layouts.get(name) or []
        for v in variants:
            if v.qualifiers == "":
                return v
        return variants[0] if variants else None

    def color(self, name: str) -> str | None:
        """A colour's value in the default configuration (or the first configuration that has it)."""
        if name in self.colors.get("", {}):
            return self.colors[""][name]
        for values in self.colors.values():
            if name in values:
                return values[name]
        return None


@dataclass
class ViewNode:
    """One view at run time. Bounds are screen pixels (left, top, right, bottom). `draws` and `opaque` are None when
    the format does not say; `source` is where the node is in the input (line or index)."""

    cls: str
    bounds: tuple[int, int, int, int]
    resource_id: str | None = None
    package: str | None = None
    visible: bool = True
    draws: bool | None = None
    opaque: bool | None = None
    alpha: float | None = None
    source: str = ""
    children: list[ViewNode] = field(default_factory=list)

    @property
    def simple_class(self) -> str:
        return self.cls.rsplit(".", 1)[-1]

    @property
    def area(self) -> int:
        left, top, right, bottom = self.bounds
        return max(0, right - left) * max(0, bottom - top)

    def walk(self) -> Iterator[ViewNode]:
        """This view and its descendants in drawing order (pre-order), without recursion: dumps can be deep."""
        stack = [self]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(reversed(n.children))


@dataclass
class ViewHierarchy:
    """A captured view tree: its format (`uiautomator`, `droidbot`, `rico`, `dumpsys`), the screen size in pixels,
    and what the format records (`has_draw_flags`: whether a view draws; `has_opacity`: whether its paint is
    opaque)."""

    path: str
    format: str
    root: ViewNode
    screen: tuple[int, int]
    has_draw_flags: bool = False
    has_opacity: bool = False
    activity: str | None = None
    package: str | None = None
