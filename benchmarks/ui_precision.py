"""Measured precision of the layout findings on the hand-labelled sample (tests/ui/data/layout_findings_labels.csv):
TP / (TP + FP), overall and per kind and app, on every labelled finding (the rules as they were when labelled) and
on the findings the current rules still make (goal >= 0.9). The second figure is optimistic: the rules were
refined after the labelling (comments that keep a wrapper, included layouts judged where included, Material
surfaces) and the refinements removed only labelled false positives."""
from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

from _corpus import corpus_root
from droidlag.io.android_res import read_app
from droidlag.ui.layouts import analyze_layouts

DATA = Path(__file__).resolve().parents[1] / "tests" / "ui" / "data" / "layout_findings_labels.csv"


def _current(rows: list[dict]) -> set[tuple]:
    root = corpus_root()
    if root is None:
        return set()
    out = set()
    for app in sorted({r["app"] for r in rows}):
        base = root / "layouts" / app
        res, _ = read_app([base], exclude=("fixes",))
        for f in analyze_layouts(res).findings:
            out.add((app, str(Path(f.file).relative_to(base)), str(f.line), f.kind))
    return out


def _print(title: str, rows: list[dict]) -> None:
    tp = sum(r["label"] == "TP" for r in rows)
    print(f"{title}: {tp}/{len(rows)} = {tp / max(1, len(rows)):.3f} (goal >= 0.9)")
    for field in ("kind", "app"):
        n, t = Counter(r[field] for r in rows), Counter(r[field] for r in rows if r["label"] == "TP")
        for k in sorted(n):
            print(f"  {field} {k:30s} {t[k]:3d}/{n[k]:3d} = {t[k] / n[k]:.2f}")


def main() -> None:
    rows = list(csv.DictReader(open(DATA, encoding="utf-8")))
    print(f"labelled findings: {len(rows)} (labelled by: {', '.join(sorted({r['labelled_by'] for r in rows}))})")
    _print("precision, all labelled findings (rules when labelled)", rows)
    current = _current(rows)
    if current:
        _print("precision, findings the current rules make", [r for r in rows if (r["app"], r["file"], r["line"],
                                                                                 r["kind"]) in current])


if __name__ == "__main__":
    main()
