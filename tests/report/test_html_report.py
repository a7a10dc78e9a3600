"""report.html renders in headless Chromium: no console errors, plots and the wait-for graph present, input strings
shown as text (never executed)."""
from pathlib import Path

from browser import open_page

from droidlag.report.html import render

EVIL = '<script>console.error("pwned")</script><img src=x onerror=alert(1)>'


def _findings() -> dict:
    frames = [{"start_ns": 1_000_000_000 + i * 16_666_667, "dur_ns": d, "verdict": v, "naive_verdict": v,
               "process": EVIL, "stages": {"ui_thread": d * 0.6, "render_thread": d * 0.4},
               "causes": [{"name": "binder", "share": 0.6, "normal_share": 0.03, "evidence": f"binder to {EVIL}"}]
               if v != "ok" else []}
              for i, (d, v) in enumerate([(8_000_000, "ok")] * 40 + [(45_000_000, "SR"), (900_000_000, "FF")])]
    return {
        "version": 1, "generated_by": "droidlag test",
        "headlines": [{"level": "bad", "text": f"1 frozen frame in {EVIL}"}],
        "traces": [{"path": f"/tmp/{EVIL}.pftrace", "info": {"format": "perfetto", "duration_ns": 2_000_000_000,
                                                             "start_ns": 1_000_000_000},
                    "frames": {"summary": {"apps": [{"process": EVIL}], "frames": 42, "sr": 1, "ff": 1,
                                           "sr_naive": 1, "ff_naive": 1, "buffer_signal": "frametimeline",
                                           "causes": [{"name": "binder", "frames": 2, "mean_share": 0.6,
                                                       "mean_normal_share": 0.03}]},
                               "notes": [EVIL], "frames": frames}}],
        "hangs": {"events": [{"kind": "anr", "process": EVIL, "cause": "deadlock", "deadlock": True, "source": "x",
                              "blocked_thread": {"name": "main", "tid": 1, "sys_tid": 100},
                              "critical_threads": [{"name": EVIL, "tid": 9, "sys_tid": 109}],
                              "evidence": ["at com.example.Foo.bar(Foo.java:1)"],
                              "wait_for_graph": {"nodes": [{"id": "1", "label": "main", "blocked": True},
                                                           {"id": "9", "label": EVIL, "critical": True}],
                                                 "edges": [{"src": "1", "dst": "9", "kind": "monitor"},
                                                           {"src": "9", "dst": "1", "kind": "monitor"}]}}],
                  "clusters": [{"id": 0, "size": 1, "cause": "deadlock", "representative": EVIL}]},
        "inputs": [{"path": EVIL, "kind": "perfetto", "status": "analyzed"}],
        "warnings": [EVIL],
    }


def test_report_renders_without_errors_and_shows_input_as_text(tmp_path: Path):
    page = tmp_path / "report.html"
    page.write_text(render(_findings()), encoding="utf-8")
    shot = tmp_path / "report.png"
    r = open_page(page, shot, selectors=(".plot svg", ".graph svg", "script", "img"))
    assert r["errors"] == []
    assert [m for m in r["console"] if m[0] == "error"] == []
    assert r["counts"][".plot svg"] >= 2           # histogram and timeline
    assert r["counts"][".graph svg"] == 1          # the wait-for graph
    assert r["counts"]["script"] == 0 and r["counts"]["img"] == 0
    assert '<script>console.error("pwned")</script>' in r["text"]
    assert shot.stat().st_size > 10_000
