"""Reader of an Android app's source resources: every `res/layout*/*.xml`, the styles/themes and colours of
`res/values*/`, the XML drawables of `res/drawable*/`, and the themes `AndroidManifest.xml` gives the application and
its activities. Several folders can be read as one app (earlier folders win per resource name), so that a changed
file can be analysed against the rest of its app. Broken files are skipped with a warning naming file and line."""
from __future__ import annotations

import os
from pathlib import Path

from droidlag.errors import InputError, ReadWarning
from droidlag.io.xml_safe import XmlNode, read_xml
from droidlag.models.ui import AppResources, Drawable, LayoutElement, LayoutFile, Style

# An app's resource tree has hundreds of files; these caps stop a runaway folder, not a real app.
MAX_FILES = 50_000
MAX_WALK_DEPTH = 16
_SKIP_DIRS = {"build", ".git", ".gradle", "node_modules", "intermediates", "generated"}


def _element(node: XmlNode, path: str) -> LayoutElement:
    return LayoutElement(node.tag, node.attrs, path, node.line, [_element(c, path) for c in node.children],
                         node.comments)


def _res_dirs(root: Path, exclude: tuple[str, ...] = ()) -> tuple[list[Path], list[Path]]:
    """The `res` folders (holding layout*/values*/drawable* folders) and the manifests under root, sorted."""
    res, manifests = [], []
    seen = 0
    base = len(root.parts)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        d = Path(dirpath)
        if len(d.parts) - base >= MAX_WALK_DEPTH:
            dirnames[:] = []
        dirnames[:] = sorted(x for x in dirnames if not x.startswith(".") and x not in _SKIP_DIRS
                             and x not in exclude)
        seen += len(filenames)
        if seen > MAX_FILES:
            raise InputError(root, f"more than {MAX_FILES} files: not an app's source tree")
        if d.name == "res" and any(x.startswith(("layout", "values", "drawable")) for x in dirnames):
            res.append(d)
            dirnames[:] = [x for x in dirnames if x.startswith(("layout", "values", "drawable"))]
        if "AndroidManifest.xml" in filenames:
            manifests.append(d / "AndroidManifest.xml")
    return res, manifests


_PROJECT_MARKS = ("res", "src", "AndroidManifest.xml", "build.gradle", "build.gradle.kts", "settings.gradle",
                  "settings.gradle.kts")


def looks_like_app_tree(root: Path) -> bool:
    """True when a folder is an Android project or module (res/, src/, a manifest or a Gradle file in it or in a
    sub-folder) holding at least one layout: a folder of mixed data that happens to hold an app somewhere deep
    inside is not one."""
    try:
        marks = any((root / m).exists() for m in _PROJECT_MARKS) or any(
            (c / m).exists() for c in root.iterdir() if c.is_dir() for m in ("res", "src"))
    except OSError:
        return False
    if not marks:
        return False
    try:
        res, _ = _res_dirs(root)
    except InputError:
        return False
    return any(any(p.is_dir() and p.name.startswith("layout") for p in r.iterdir()) for r in res)


def _qualifiers(folder: str) -> str:
    return folder.split("-", 1)[1] if "-" in folder else ""


def _read(path: Path, warnings: list[ReadWarning]) -> XmlNode | None:
    try:
        return read_xml(path)
    except InputError as e:
        warnings.append(ReadWarning(str(path), f"skipped: {e.reason}", e.line))
        return None


def _add_values(node: XmlNode, qual: str, res: AppResources, styles: dict[str, dict[str, Style]]) -> None:
    colors = res.colors.setdefault(qual, {})
    per_qual = styles.setdefault(qual, {})
    for child in node.children:
        name = child.attrs.get("name")
        if not name:
            continue
        kind = child.tag if child.tag != "item" else child.attrs.get("type", "")
        if kind == "color":
            colors.setdefault(name, child.text.strip())
        elif kind == "style" and name not in per_qual:
            items = {i.attrs["name"]: i.text.strip() for i in child.children if i.tag == "item" and "name" in i.attrs}
            parent = child.attrs.get("parent")
            if parent is None and "." in name:
                parent = name.rsplit(".", 1)[0]   # the implied parent of a dotted name
            per_qual[name] = Style(name, parent or None, items)


def _merge_styles(res: AppResources, styles: dict[str, dict[str, Style]]) -> None:
    """The default configuration's styles, then the other configurations' for names it lacks."""
    for qual in sorted(styles, key=lambda q: (q != "", q)):
        for name, style in styles[qual].items():
            res.styles.setdefault(name, style)


def _add_manifest(node: XmlNode, res: AppResources) -> None:
    for app in (c for c in node.children if c.tag == "application"):
        if res.app_theme is None and app.attrs.get("android:theme"):
            res.app_theme = app.attrs["android:theme"]
        for act in app.children:
            if act.tag in ("activity", "activity-alias") and act.attrs.get("android:theme"):
                res.activity_themes.setdefault(act.attrs.get("android:name", ""), act.attrs["android:theme"])


def _unwrap_data_binding(node: XmlNode, path: Path, warnings: list[ReadWarning]) -> XmlNode | None:
    """A data-binding layout (`<layout><data/>ROOT</layout>`) inflates ROOT: that is the layout's root view."""
    if node.tag != "layout":
        return node
    views = [c for c in node.children if c.tag != "data"]
    if not views:
        warnings.append(ReadWarning(str(path), "skipped: data-binding <layout> without a root view", node.line))
        return None
    views[0].comments = node.comments + views[0].comments
    return views[0]


def _read_res_dir(r: Path, res: AppResources, report: bool, warnings: list[ReadWarning],
                  styles: dict[str, dict[str, Style]]) -> None:
    for folder in sorted(p for p in r.iterdir() if p.is_dir()):
        qual = _qualifiers(folder.name)
        for f in sorted(folder.glob("*.xml")):
            kind = folder.name.split("-", 1)[0]
            if kind not in ("layout", "values", "drawable"):
                continue
            node = _read(f, warnings)
            if node is None:
                continue
            name = f.name[:-4]
            if kind == "layout":
                node = _unwrap_data_binding(node, f, warnings)
                if node is None:
                    continue
                variants = res.layouts.setdefault(name, [])
                if any(v.qualifiers == qual for v in variants):
                    continue    # an earlier folder already gave this layout in this configuration
                variants.append(LayoutFile(name, str(f), qual, _element(node, str(f))))
                if report:
                    res.report_files.add(str(f))
            elif kind == "values" and node.tag == "resources":
                _add_values(node, qual, res, styles)
            elif kind == "drawable" and (qual == "" or name not in res.drawables):
                res.drawables.setdefault(name, Drawable(name, str(f), _element(node, str(f))))


def read_app(roots: list[str | Path], report_roots: int = 1,
             exclude: tuple[str, ...] = ()) -> tuple[AppResources, list[ReadWarning]]:
    """The resources of one app from one or more source folders, earlier folders winning per resource. Findings are
    meant for the layouts of the first `report_roots` folders (the others give context: themes, included layouts).
    Sub-folders named in `exclude` are not read. InputError when no folder holds a layout."""
    res = AppResources()
    styles: dict[str, dict[str, Style]] = {}
    warnings: list[ReadWarning] = []
    for k, root in enumerate(map(Path, roots)):
        if not root.is_dir():
            raise InputError(root, "not a folder (expected an app's source tree with res/layout*/)")
        res.sources.append(str(root))
        res_dirs, manifests = _res_dirs(root, exclude)
        for r in res_dirs:
            _read_res_dir(r, res, k < report_roots, warnings, styles)
        for m in manifests:
            node = _read(m, warnings)
            if node is not None and node.tag == "manifest":
                _add_manifest(node, res)
    _merge_styles(res, styles)
    if not res.report_files:
        raise InputError(roots[0], "no res/layout*/*.xml found under this folder")
    return res, warnings
