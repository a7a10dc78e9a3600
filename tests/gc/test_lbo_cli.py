"""`droidlag gc lbo` end to end on the corpus's real result blocks and on a droidlag results file."""
from __future__ import annotations

import json

from droidlag.cli import main


def test_gc_lbo_on_the_corpus_blocks(corpus, capsys):
    assert main(["gc", "lbo", str(corpus / "gc" / "lbo"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["invocations"] == 4
    fop = next(c for c in out["tables"]["task_clock"]["cells"] if c["benchmark"] == "fop")
    # One config: its own baseline, LBO = total / distilled = (1826203059 + 285619075) / 1826203059.
    assert abs(fop["lbo"] - (1826203059 + 285619075) / 1826203059) < 1e-12
    assert all(c["holds"] for c in out["table5"])


def test_gc_lbo_text_table_and_plot(tmp_path, capsys):
    rows = []
    for i in range(3):
        for coll, total, gc in (("Serial", 130, 30), ("G1", 170, 60), ("Z", 0, 0)):
            status = "oom" if coll == "Z" else "ok"
            rows.append({"benchmark": "b", "collector": coll, "heap_factor": 2.0, "invocation": i, "status": status,
                         "wall": total + i, "wall.gc": gc, "task_clock": total + i, "task_clock.gc": gc})
    f = tmp_path / "results.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows))
    assert main(["gc", "lbo", str(f), "--plot", str(tmp_path / "lbo.svg")]) == 0
    text = capsys.readouterr().out
    # G1: mean total 171 over Serial's mean distilled 131 - 30 = 101, by hand: 1.693.
    assert "OOM(3/3)" in text and "1.693 [" in text
    svg = (tmp_path / "lbo-task_clock.svg").read_text()
    assert svg.startswith("<?xml") and "<dc:date>" not in svg
    assert main(["gc", "lbo", str(f), "--plot", str(tmp_path / "again.svg")]) == 0
    assert (tmp_path / "again-task_clock.svg").read_text() == svg  # same results, same bytes


def test_gc_lbo_without_results_exits_3(tmp_path, capsys):
    (tmp_path / "empty.txt").write_text("nothing\n")
    assert main(["gc", "lbo", str(tmp_path)]) == 3
    assert "no LBO results" in capsys.readouterr().err
