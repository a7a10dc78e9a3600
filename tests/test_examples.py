"""The bundled examples (what `make demo` analyses) read and give findings, checked against facts taken from the
files by other means (the dumps' own `Cmd line:` and `sysTid=` lines, read here with plain string handling)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from droidlag.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _first_process_and_main_tid(path: Path) -> tuple[str, int]:
    """The first process block's command line and its main thread's sysTid, by plain text search."""
    text = path.read_bytes().decode("utf-8", "replace")
    block = text.split("----- end", 1)[0]
    cmd = next(ln.split(":", 1)[1].strip() for ln in block.splitlines() if ln.startswith("Cmd line:"))
    main_at = block.index('"main"')
    tid = int(re.search(r"sysTid=(\d+)", block[main_at:]).group(1))
    return cmd, tid


def test_demo_analyses_every_example(tmp_path: Path, capsys):
    out = tmp_path / "report"
    assert main(["analyze", str(EXAMPLES), "--out", str(out), "--json"]) == 0
    findings = json.loads(capsys.readouterr().out)
    status = {Path(i["path"]).name: i["status"] for i in findings["inputs"]}
    for name in ("nowinandroid_pixel7pro_a13.perfetto-trace", "pixel6a_a13_warm_startup.perfetto-trace",
                 "wanandroid_meizu_traces.txt", "wechat_huawei_android7_traces.txt"):
        assert status[name] == "analyzed", name
    # the licence and notice texts beside the data are not inputs: a folder walk leaves them out by name, so the
    # demo's output lists no skipped input (it listed NOTICE and both LICENSE files, found by the 2026-11-28 trial)
    assert not {"NOTICE", "LICENSE-Apache-2.0.txt", "LICENSE-MIT-droidbot.txt"} & set(status)
    assert [i["path"] for i in findings["inputs"] if i["status"] != "analyzed"] == []
    assert (out / "report.html").stat().st_size > 0 and (out / "findings.json").stat().st_size > 0
    traces = {Path(t["path"]).name: t for t in findings["traces"]}
    assert traces["nowinandroid_pixel7pro_a13.perfetto-trace"]["frames"]["summary"]["frames"] > 0
    assert traces["pixel6a_a13_warm_startup.perfetto-trace"]["frames"]["summary"]["frames"] > 0


def test_example_anrs_name_the_app_and_its_main_thread(capsys):
    for dump in sorted((EXAMPLES / "anr").glob("*.txt")):
        process, tid = _first_process_and_main_tid(dump)
        assert main(["hangs", str(dump), "--json"]) == 0
        events = json.loads(capsys.readouterr().out)["events"]
        assert len(events) == 1, dump.name
        ev = events[0]
        assert ev["process"] == process
        assert ev["blocked_thread"]["name"] == "main" and ev["blocked_thread"]["sys_tid"] == tid, dump.name


def test_same_input_gives_byte_identical_outputs(tmp_path: Path):
    """Two runs on the examples write the same findings.json and report.html (no dates, no random SVG ids, ties
    in counts broken by name): a refactor can then be checked byte for byte (tools/same_output.py)."""
    outs = []
    for k in range(2):
        out = tmp_path / f"run{k}"
        assert main(["analyze", str(EXAMPLES), "--out", str(out), "--quiet"]) == 0
        outs.append({n: (out / n).read_bytes().replace(str(out).encode(), b"<OUT>")
                     for n in ("findings.json", "report.html")})
    assert outs[0]["findings.json"] == outs[1]["findings.json"]
    assert outs[0]["report.html"] == outs[1]["report.html"]


def test_demo_ui_example_gives_a_heat_map(tmp_path: Path, capsys):
    """The bundled DroidBot dump: 49 views (its `views` list, counted here with json), a heat map written."""
    example = EXAMPLES / "ui" / "droidbot_album_state.json"
    n_views = len(json.loads(example.read_text(encoding="utf-8"))["views"])
    assert main(["ui", "hierarchy", str(example), "--out", str(tmp_path), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["views"] == n_views == 49 and d["estimate"] is True
    assert (tmp_path / "heatmap.png").read_bytes()[:4] == b"\x89PNG"
