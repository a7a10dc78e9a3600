"""`dumpsys graphicsstats` (persisted per-package aggregates): read by content, with Android's own janky counts and
SR/FF counted from the histogram, checked against the raw text by a separate parse."""
import json
import re
from pathlib import Path

from droidlag.cli import main
from droidlag.findings import frames_from_file

GSTATS = "gfxinfo/sailfish_android10_dumpsys_graphicsstats.txt"


def _raw_packages(text: str) -> list[tuple[str, dict]]:
    """(package, stats) in file order: a package appears once per persisted period."""
    out = []
    for block in text.split("\nPackage: ")[1:]:
        name = block.split("\n", 1)[0].strip()
        total = int(re.search(r"Total frames rendered: (\d+)", block).group(1))
        janky = int(re.search(r"Janky frames: (\d+)", block).group(1))
        hist = {int(k): int(v) for k, v in re.findall(r"(\d+)ms=(\d+)", block.split("HISTOGRAM:")[1].split("\n")[0])}
        out.append((name, {"total": total, "janky": janky, "hist": hist}))
    return out


def test_graphicsstats_packages_and_histogram_counts(corpus: Path):
    text = (corpus / GSTATS).read_text()
    raw = _raw_packages(text)
    report = frames_from_file(corpus / GSTATS)
    got = report.summary.sections["gfxinfo_summaries"]
    assert [g["process"] for g in got] == [name for name, _ in raw] and len(got) == 22
    ui = got[0]
    assert (ui["process"], ui["total_frames_rendered"], ui["janky_frames"], ui["janky_percent"]) == \
        ("com.android.systemui", 39229, 7324, 18.67)
    assert ui["percentiles_ms"]["99th_percentile"] == 650
    for g, (name, r) in zip(got, raw):
        assert g["total_frames_rendered"] == r["total"] and g["janky_frames"] == r["janky"], name
        assert g["sr_naive_histogram"] == sum(n for ms, n in r["hist"].items() if 16.67 < ms < 700), name
        assert g["ff_naive_histogram"] == sum(n for ms, n in r["hist"].items() if ms >= 700), name
    # no per-frame rows: the summary gives Android's own counts over every package, labelled, never zeros
    s = report.summary
    assert s.frames == sum(r["total"] for _, r in raw)
    assert s.sr_naive == sum(n for _, r in raw for ms, n in r["hist"].items() if 16.67 < ms < 700)
    assert s.ff_naive == sum(n for _, r in raw for ms, n in r["hist"].items() if ms >= 700)
    assert s.sr is None and s.sections["counts_from"]["source"] == "android_summary"
    assert s.no_frames_reason is None and any("framestats" in n for n in report.notes)


def test_frames_cli_json_on_graphicsstats(corpus: Path, capsys):
    assert main(["frames", "--json", str(corpus / GSTATS)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["summary"]["gfxinfo_summaries"][0]["process"] == "com.android.systemui"
