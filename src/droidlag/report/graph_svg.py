"""A wait-for graph drawn as inline SVG: layers by distance from the blocked thread, back edges (cycles) curved.
Every label is escaped: thread and lock names come from the user's input."""
from __future__ import annotations

from collections import deque
from html import escape

NODE_W, NODE_H, GAP_X, GAP_Y, PAD = 210, 58, 130, 22, 16
EDGE_COLOURS = {"monitor": "#c0392b", "lock": "#c0392b", "binder": "#2e86c1", "join": "#7d3c98"}


def _layers(nodes: list[dict], edges: list[dict]) -> dict[str, int]:
    out: dict[str, list[str]] = {n["id"]: [] for n in nodes}
    for e in edges:
        if e["src"] in out and e["dst"] in out:
            out[e["src"]].append(e["dst"])
    roots = [n["id"] for n in nodes if n.get("blocked")] or [nodes[0]["id"]]
    layer: dict[str, int] = {}
    q: deque[str] = deque()
    for r in roots:
        layer[r] = 0
        q.append(r)
    while q:
        u = q.popleft()
        for v in out[u]:
            if v not in layer:
                layer[v] = layer[u] + 1
                q.append(v)
    nxt = max(layer.values(), default=-1) + 1
    for n in nodes:   # unreachable nodes go in a last column
        layer.setdefault(n["id"], nxt)
    return layer


def wait_for_graph_svg(nodes: list[dict], edges: list[dict]) -> str:
    """nodes: {id, label, sublabel?, blocked?, critical?}; edges: {src, dst, kind, label?}. Returns SVG text."""
    if not nodes:
        return ""
    layer = _layers(nodes, edges)
    columns: dict[int, list[str]] = {}
    for n in nodes:
        columns.setdefault(layer[n["id"]], []).append(n["id"])
    pos: dict[str, tuple[int, int]] = {}
    for col, ids in sorted(columns.items()):
        for row, nid in enumerate(ids):
            pos[nid] = (PAD + col * (NODE_W + GAP_X), PAD + 14 + row * (NODE_H + GAP_Y))
    width = PAD * 2 + (max(columns) + 1) * (NODE_W + GAP_X) - GAP_X
    height = PAD * 2 + 14 + max(len(v) for v in columns.values()) * (NODE_H + GAP_Y) + 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="waitfor" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="wait-for graph">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>']
    for e in edges:
        if e["src"] not in pos or e["dst"] not in pos:
            continue
        (x1, y1), (x2, y2) = pos[e["src"]], pos[e["dst"]]
        colour = EDGE_COLOURS.get(e.get("kind", ""), "#555")
        raw = str(e.get("label") or e.get("kind") or "")
        label = escape(raw if len(raw) <= 22 else raw[:21] + "…")
        sx: float
        tx: float
        if layer[e["dst"]] > layer[e["src"]]:
            sx, sy, tx, ty = x1 + NODE_W, y1 + NODE_H / 2, x2, y2 + NODE_H / 2
            path = f"M {sx} {sy} L {tx} {ty}"
            lx, ly = (sx + tx) / 2, (sy + ty) / 2 - 6
        else:   # back edge or same layer: a curve below the nodes
            sx, sy, tx, ty = x1 + NODE_W / 2, y1 + NODE_H, x2 + NODE_W / 2, y2 + NODE_H
            dip = max(sy, ty) + 36
            path = f"M {sx} {sy} C {sx} {dip}, {tx} {dip}, {tx} {ty}"
            lx, ly = (sx + tx) / 2, dip - 4
        parts.append(f'<path d="{path}" stroke="{colour}" stroke-width="1.6" fill="none" marker-end="url(#arrow)"/>')
        if label:
            parts.append(f'<text x="{lx}" y="{ly}" font-size="10" text-anchor="middle" fill="{colour}">{label}</text>')
    for n in nodes:
        x, y = pos[n["id"]]
        fill = "#fdecea" if n.get("critical") else "#eaf2fb" if n.get("blocked") else "#f4f4f4"
        stroke = "#c0392b" if n.get("critical") else "#2e86c1" if n.get("blocked") else "#999"
        parts.append(f'<rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="6" fill="{fill}" '
                     f'stroke="{stroke}" stroke-width="1.5"/>')
        parts.append(f'<text x="{x + 8}" y="{y + 18}" font-size="12" font-weight="bold">'
                     f'{escape(str(n.get("label", n["id"]))[:40])}</text>')
        for k, sub in enumerate(str(n.get("sublabel") or "").split("\n")[:2]):
            parts.append(f'<text x="{x + 8}" y="{y + 34 + 13 * k}" font-size="10" fill="#444">'
                         f'{escape(sub[:40])}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
