"""Held-out precision: three open-source apps the layout rules were never developed on (tests/ui/data/heldout/,
Apache-2.0, provenance and per-file size in each SOURCES.md), every finding labelled by hand from the XML. The copies
are intact, every finding the current rules make has a label, and the current rules' precision on the sample meets
the issue's goal; the first-run figure (0.722, before the three rule changes it prompted) stays in the labels file
and is printed by benchmarks/ui_heldout_precision.py."""
import csv
import re
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from ui_heldout_precision import APPS, LABELS, current_findings, precision, second_batch  # noqa: E402


def _rows() -> list[dict]:
    return list(csv.DictReader(open(LABELS, encoding="utf-8")))


def test_heldout_copies_match_their_sources():
    """Every file in SOURCES.md is present with the size recorded when it was fetched, and nothing else is."""
    for app in APPS:
        base = DATA / "heldout" / app
        text = (base / "SOURCES.md").read_text(encoding="utf-8")
        assert "Apache" in text
        listed = {m[0]: int(m[2].replace(",", "")) for m in re.findall(r"^\| `([^`]+)` \| `([0-9a-f]{40})` \| ([\d,]+) \|$",
                                                                         text, re.M)}
        present = {str(p.relative_to(base)) for p in base.rglob("*.xml")}
        assert listed and set(listed) == present
        assert all((base / p).stat().st_size == n for p, n in listed.items())


def test_heldout_labels_cover_the_current_findings():
    rows = _rows()
    assert {r["label"] for r in rows} <= {"TP", "FP"} and all(r["reason"] and r["labelled_by"] for r in rows)
    assert {r["app"] for r in rows} == set(APPS)
    found, files = current_findings()
    assert files == {"hidroh_materialistic": 87, "pockethub_PocketHub": 67, "commons-app_apps-android-commons": 97}
    assert found <= {(r["app"], r["file"], r["line"], r["kind"]) for r in rows}


def test_heldout_precision():
    """First run (first batch, rules as they were before this sample was seen): 13 of 18 true. The current rules
    keep 12 of those 13 true findings and 1 of the 5 false ones; on the second batch (30 files fetched after the rule
    changes) they make 4 findings, all true."""
    rows = _rows()
    first = [r for r in rows if not second_batch(r)]
    assert precision(first) == (13, 18)
    assert precision([r for r in rows if second_batch(r)]) == (4, 4)
    found, _ = current_findings()
    tp, n = precision([r for r in rows if (r["app"], r["file"], r["line"], r["kind"]) in found])
    assert (tp, n) == (16, 17) and tp / n >= 0.9
