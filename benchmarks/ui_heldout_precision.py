"""Held-out precision of the layout findings: three open-source apps the rules were never developed on
(tests/ui/data/heldout/, Apache-2.0, provenance in each SOURCES.md), every finding hand-labelled by reading the XML
(tests/ui/data/heldout_findings_labels.csv). Prints TP / (TP + FP) on the first batch as first run (the rules as they
were before these apps were seen: the honest figure), on the second batch (30 more commons-app files fetched after
the three rule changes the first run prompted: held out for the changed rules), and on every finding the current
rules make, per kind and app; and the findings the current rules make that have no label (there should be none)."""
from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

from droidlag.io.android_res import read_app
from droidlag.ui.layouts import analyze_layouts

DATA = Path(__file__).resolve().parents[1] / "tests" / "ui" / "data"
LABELS = DATA / "heldout_findings_labels.csv"
APPS = ("hidroh_materialistic", "pockethub_PocketHub", "commons-app_apps-android-commons")


def current_findings() -> tuple[set[tuple[str, str, str, str]], dict[str, int]]:
    """(app, file, line, kind) of every finding the current rules make on the held-out apps; layout files per app."""
    found, files = set(), {}
    for app in APPS:
        base = DATA / "heldout" / app
        res, _ = read_app([base])
        report = analyze_layouts(res)
        files[app] = report.files
        found |= {(app, str(Path(f.file).relative_to(base)), str(f.line), f.kind) for f in report.findings}
    return found, files


def second_batch(row: dict) -> bool:
    return "second batch" in row["labelled_by"]


def precision(rows: list[dict]) -> tuple[int, int]:
    return sum(r["label"] == "TP" for r in rows), len(rows)


def _print(title: str, rows: list[dict]) -> None:
    tp, n = precision(rows)
    print(f"{title}: {tp}/{n} = {tp / max(1, n):.3f} (goal >= 0.9)")
    for field in ("kind", "app"):
        total, true = Counter(r[field] for r in rows), Counter(r[field] for r in rows if r["label"] == "TP")
        for k in sorted(total):
            print(f"  {field} {k:34s} {true[k]:3d}/{total[k]:3d} = {true[k] / total[k]:.2f}")


def main() -> None:
    rows = list(csv.DictReader(open(LABELS, encoding="utf-8")))
    found, files = current_findings()
    print("held-out apps: " + ", ".join(f"{a} ({n} layout files)" for a, n in files.items()))
    print(f"labelled findings: {len(rows)} (labelled by: {', '.join(sorted({r['labelled_by'] for r in rows}))})")
    _print("precision, first run (first batch, rules unchanged since the corpus work)",
           [r for r in rows if not second_batch(r)])
    _print("precision, second batch (files fetched after the rule changes, current rules)",
           [r for r in rows if second_batch(r)])
    _print("precision, findings the current rules make",
           [r for r in rows if (r["app"], r["file"], r["line"], r["kind"]) in found])
    unlabelled = found - {(r["app"], r["file"], r["line"], r["kind"]) for r in rows}
    print(f"findings of the current rules without a label: {len(unlabelled)}")
    for u in sorted(unlabelled):
        print("  " + ":".join(u))


if __name__ == "__main__":
    main()
