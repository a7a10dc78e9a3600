"""Measured precision of the layout findings on the hand-labelled sample (tests/ui/data/layout_findings_labels.csv):
TP / (TP + FP), overall and per kind and app. Goal >= 0.9."""
from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "tests" / "ui" / "data" / "layout_findings_labels.csv"


def main() -> None:
    rows = list(csv.DictReader(open(DATA, encoding="utf-8")))
    tp = sum(r["label"] == "TP" for r in rows)
    print(f"labelled findings: {len(rows)} (labelled by: {', '.join(sorted({r['labelled_by'] for r in rows}))})")
    print(f"precision: {tp}/{len(rows)} = {tp / len(rows):.3f} (goal >= 0.9)")
    for field in ("kind", "app"):
        n, t = Counter(r[field] for r in rows), Counter(r[field] for r in rows if r["label"] == "TP")
        for k in sorted(n):
            print(f"  {field} {k:30s} {t[k]:3d}/{n[k]:3d} = {t[k] / n[k]:.2f}")


if __name__ == "__main__":
    main()
