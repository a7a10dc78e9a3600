"""The package-level import graph of droidlag: which top-level part imports which, with the modules behind each
edge. For reviewing the layers (docs/architecture.md) before and after a change.

    python tools/import_graph.py [--detail]

Prints one line per edge `importer -> imported (n imports)`; with --detail, each module import behind the edge."""
from __future__ import annotations

import argparse
from collections import defaultdict

import grimp


def part(module: str) -> str:
    bits = module.split(".")
    return ".".join(bits[:2]) if len(bits) > 1 else module


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--detail", action="store_true", help="list the module imports behind each edge")
    args = ap.parse_args()
    graph = grimp.build_graph("droidlag")
    edges: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            a, b = part(importer), part(imported)
            if a != b:
                edges[(a, b)].append((importer, imported))
    for (a, b), mods in sorted(edges.items()):
        print(f"{a} -> {b} ({len(mods)} imports)")
        if args.detail:
            for m, n in mods:
                print(f"    {m} -> {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
