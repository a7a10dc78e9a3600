"""Readers of runtime view hierarchies: `uiautomator dump` XML, `adb shell dumpsys activity top` view lines, DroidBot
state JSON and RICO view-hierarchy JSON, each into a `ViewHierarchy` with screen bounds. The format is told by
content. What each format records about drawing is kept: dumpsys' `D` flag (the view does not have WILL_NOT_DRAW),
RICO's `draw` field (which matches `View.willNotDraw()`: true for ViewStubs and plain ViewGroups, false for text and
image views); uiautomator and DroidBot say nothing of drawing or opacity."""
from __future__ import annotations

import json
import re
from pathlib import Path

from droidlag.errors import InputError, ReadWarning
from droidlag.io.source import decode_text
from droidlag.io.xml_safe import MAX_XML_BYTES, XmlNode, parse_xml
from droidlag.models.ui import ViewHierarchy, ViewNode

MAX_BYTES = 64 << 20
MAX_NODES = 200_000
_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
# dumpsys view line: class{hash VFLAGS PFLAGS left,top-right,bottom [#id pkg:id/name] [aid=...]}
_DUMPSYS_VIEW = re.compile(
    r"^(?P<indent>\s*)(?P<cls>[\w.$]+)\{(?P<hash>[0-9a-f]+) (?P<vf>[VIG.][F.][E.][D.][H.][V.][C.][L.][X.]?)\s*"
    r"(?P<pf>\S{1,12})? ?(?P<l>-?\d+),(?P<t>-?\d+)-(?P<r>-?\d+),(?P<b>-?\d+)(?: #(?P<idhex>[0-9a-f]+)"
    r"(?: (?P<rid>[\w.:/]+))?)?")


def sniff_hierarchy(data: bytes) -> str | None:
    """`uiautomator`, `dumpsys`, `droidbot`, `rico` or None, from the first bytes."""
    head = data[:65536].decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if head.startswith("<?xml") or head.startswith("<hierarchy"):
        return "uiautomator" if "<hierarchy" in head[:400] else None
    if head.startswith("{"):
        if '"views"' in head and ('"foreground_activity"' in head or '"temp_id"' in head):
            return "droidbot"
        if '"activity"' in head and '"root"' in head and ('"rel-bounds"' in head or '"activity_name"' in head):
            return "rico"
        return None
    if re.search(r"^\s*View Hierarchy:\s*$", head, re.M) and _DUMPSYS_VIEW.search(head[head.find("View Hierarchy"):]
                                                                                   .split("\n", 2)[-1][:2000]):
        return "dumpsys"
    return None


def read_hierarchy(path: str | Path) -> tuple[ViewHierarchy, list[ReadWarning]]:
    """The view tree in a file. InputError (file, line, reason) for files that hold none."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_BYTES:
            raise InputError(p, f"larger than {MAX_BYTES >> 20} MiB: not a view hierarchy dump")
        data = p.read_bytes()
    except OSError as e:
        raise InputError(p, f"cannot read: {e.strerror or e}") from None
    kind = sniff_hierarchy(data)
    warnings: list[ReadWarning] = []
    if kind == "uiautomator":
        return _uiautomator(data, str(p), warnings), warnings
    if kind == "dumpsys":
        return _dumpsys(decode_text(data, str(p), warnings), str(p), warnings), warnings
    if kind in ("droidbot", "rico"):
        try:
            doc = json.loads(decode_text(data, str(p), warnings))
        except json.JSONDecodeError as e:
            raise InputError(p, f"broken JSON: {e.msg}", e.lineno) from None
        except RecursionError:
            raise InputError(p, "JSON nested too deeply") from None
        if not isinstance(doc, dict):
            raise InputError(p, "JSON is not an object")
        reader = _droidbot if kind == "droidbot" else _rico
        return reader(doc, str(p), warnings), warnings
    raise InputError(p, "not a view hierarchy (expected uiautomator XML, dumpsys activity top, DroidBot or RICO JSON)")


def _screen(root: ViewNode) -> tuple[int, int]:
    r, b = 0, 0
    for n in root.walk():
        r, b = max(r, n.bounds[2]), max(b, n.bounds[3])
    return r, b


def _bool(v: object) -> bool:
    return str(v).lower() == "true"


def _text(v: object) -> str | None:
    """A JSON value that should be a name: the string, or None (absent, empty, or damaged into a number or list)."""
    return v if isinstance(v, str) and v else None


def _uiautomator(data: bytes, path: str, warnings: list[ReadWarning]) -> ViewHierarchy:
    if len(data) > MAX_XML_BYTES:
        raise InputError(path, f"XML larger than {MAX_XML_BYTES >> 20} MiB")
    doc = parse_xml(data, path)
    if doc.tag != "hierarchy":
        raise InputError(path, f"root element is <{doc.tag}>, expected <hierarchy>", doc.line)
    nodes = [c for c in doc.children if c.tag == "node"]
    if not nodes:
        raise InputError(path, "the hierarchy holds no <node>", doc.line)

    seen = [0]

    def build(x: XmlNode) -> ViewNode | None:
        seen[0] += 1   # dumps are often one line: a node is named by its order in the file too
        m = _BOUNDS.fullmatch(x.attrs.get("bounds", ""))
        if not m:
            warnings.append(ReadWarning(path, "node without readable bounds skipped", x.line))
            return None
        left, top, right, bottom = (int(g) for g in m.groups())
        node = ViewNode(x.attrs.get("class", "?"), (left, top, right, bottom),
                        x.attrs.get("resource-id") or None, x.attrs.get("package") or None,
                        x.attrs.get("visible-to-user", "true") != "false", source=f"line {x.line}, node #{seen[0]}")
        node.children = [c for c in (build(y) for y in x.children if y.tag == "node") if c]
        return node

    roots = [r for r in (build(n) for n in nodes) if r]
    if not roots:
        raise InputError(path, "no node with readable bounds", doc.line)
    root = roots[0] if len(roots) == 1 else ViewNode("(windows)", (0, 0, 0, 0), children=roots)
    if len(roots) > 1:
        root.bounds = (0, 0, *_screen(root))
    return ViewHierarchy(path, "uiautomator", root, _screen(root), package=root.package)


def _droidbot(doc: dict[str, object], path: str, warnings: list[ReadWarning]) -> ViewHierarchy:
    views = doc.get("views")
    if not isinstance(views, list) or not views:
        raise InputError(path, "DroidBot state without views")
    if len(views) > MAX_NODES:
        raise InputError(path, f"more than {MAX_NODES} views")
    nodes: list[ViewNode | None] = []
    for i, v in enumerate(views):
        try:
            (x0, y0), (x1, y1) = v["bounds"]
            nodes.append(ViewNode(str(v.get("class") or "?"), (int(x0), int(y0), int(x1), int(y1)),
                                  _text(v.get("resource_id")), _text(v.get("package")),
                                  bool(v.get("visible", True)), source=f"views[{i}]"))
        except (KeyError, TypeError, ValueError):
            warnings.append(ReadWarning(path, f"views[{i}] without readable bounds skipped"))
            nodes.append(None)
    roots: list[ViewNode] = []
    for i, v in enumerate(views):
        node = nodes[i]
        if node is None:
            continue
        kids = v.get("children") or []
        if not isinstance(kids, list):   # damage: a number or a string where the list of child indices goes
            warnings.append(ReadWarning(path, f"views[{i}].children is not a list; its children are not linked"))
            kids = []
        for c in kids:
            child = nodes[c] if isinstance(c, int) and 0 <= c < len(nodes) and c != i else None
            if child is not None:
                node.children.append(child)
        if v.get("parent", -1) in (-1, None):
            roots.append(node)
    if not roots:
        raise InputError(path, "DroidBot state without a root view (parent -1)")
    root = roots[0]
    _check_acyclic(root, path)
    act = _text(doc.get("foreground_activity"))
    return ViewHierarchy(path, "droidbot", root, _screen(root), activity=act, package=root.package)


def _check_acyclic(root: ViewNode, path: str) -> None:
    seen: set[int] = set()
    stack = [root]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            raise InputError(path, "view tree has a cycle or a shared child")
        seen.add(id(n))
        stack.extend(n.children)


def _rico(doc: dict[str, object], path: str, warnings: list[ReadWarning]) -> ViewHierarchy:
    act = doc.get("activity")
    root_d = act.get("root") if isinstance(act, dict) else None
    if not isinstance(root_d, dict):
        raise InputError(path, "RICO JSON without activity.root")
    count = [0]

    def build(d: dict[str, object], where: str, depth: int) -> ViewNode | None:
        count[0] += 1
        if count[0] > MAX_NODES or depth > 500:
            raise InputError(path, "view tree too large or too deep")
        b = d.get("bounds")
        try:
            if not (isinstance(b, list) and len(b) == 4):
                raise ValueError
            bounds = (int(b[0]), int(b[1]), int(b[2]), int(b[3]))
        except (TypeError, ValueError):   # absent, or damaged into text or nested lists
            warnings.append(ReadWarning(path, f"{where}: node without bounds skipped"))
            return None
        visible = d.get("visibility", "visible") == "visible" and d.get("visible-to-user", True) is not False
        draw = d.get("draw")
        node = ViewNode(str(d.get("class") or "?"), bounds,
                        _text(d.get("resource-id")), _text(d.get("package")), visible,
                        draws=(not draw) if isinstance(draw, bool) else None, source=where)
        kids = d.get("children") or []
        kids = kids if isinstance(kids, list) else []   # damage: children must be a list of objects
        node.children = [c for c in (build(k, f"{where}.children[{i}]", depth + 1) for i, k in enumerate(kids)
                                     if isinstance(k, dict)) if c]
        return node

    root = build(root_d, "activity.root", 0)
    if root is None:
        raise InputError(path, "RICO root without bounds")
    name = _text(doc.get("activity_name"))
    return ViewHierarchy(path, "rico", root, _screen(root), has_draw_flags=True, activity=name,
                         package=(name or "").split("/")[0] or None)


def _dumpsys(text: str, path: str, warnings: list[ReadWarning]) -> ViewHierarchy:
    """The first `View Hierarchy:` block: indentation gives the tree, bounds are relative to the parent."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.strip() == "View Hierarchy:"), None)
    if start is None:
        raise InputError(path, "no 'View Hierarchy:' block")
    stack: list[tuple[int, ViewNode, int, int]] = []   # indent, node, absolute left, absolute top
    root: ViewNode | None = None
    activity = None
    for i in range(start + 1, min(len(lines), start + 1 + MAX_NODES)):
        ln = lines[i]
        if not ln.strip():
            continue
        m = _DUMPSYS_VIEW.match(ln)
        if not m:
            if root is not None and len(ln) - len(ln.lstrip()) <= (stack[0][0] if stack else 0) - 2:
                break   # the block ended (less indented text)
            if "DecorView@" in ln and "[" in ln:
                activity = ln.split("[", 1)[1].rstrip("]").strip()
            continue
        indent = len(m["indent"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        pl, pt = (stack[-1][2], stack[-1][3]) if stack else (0, 0)
        x0, y0, x1, y1 = (int(m[k]) for k in ("l", "t", "r", "b"))
        vf = m["vf"]
        node = ViewNode(m["cls"], (pl + x0, pt + y0, pl + x1, pt + y1), m["rid"], None,
                        visible=vf[0] == "V", draws=vf[3] == "D", source=f"line {i + 1}")
        if stack:
            stack[-1][1].children.append(node)
        elif root is None:
            root = node
        else:
            warnings.append(ReadWarning(path, "a second root view ignored", i + 1))
            break
        stack.append((indent, node, pl + x0, pt + y0))
    if root is None:
        raise InputError(path, "the 'View Hierarchy:' block holds no view line", start + 1)
    return ViewHierarchy(path, "dumpsys", root, _screen(root), has_draw_flags=True, activity=activity)
