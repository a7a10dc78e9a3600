"""What the systrace/atrace trial (new user, 11 public captures) found in the commands' words, on hand-made atrace
text: `analyze` said "no slow frames, frozen frames, ANRs or SNRs found" of traces without a single app frame, and
named only the traces that had frames; `info` dropped an unreadable input without a word when others read; `frames
--app` with a name that matches nothing said "0 frames" and exit 0, and could not find an app that only a thread
name names; report.html said "1 threads" and the no-frames reason twice."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from droidlag.cli import main

HEADER = "# tracer: nop\n#\n"
# SurfaceFlinger's one slice: a trace with no Choreographer#doFrame at all.
SF_ONLY = (HEADER
           + "  surfaceflinger-612   (  612) [000] ...1  1000.001100: tracing_mark_write: B|612|onMessageRefresh\n"
           + "  surfaceflinger-612   (  612) [000] ...1  1000.003100: tracing_mark_write: E|612\n")
NO_DOFRAME = "no app frames: the trace has no Choreographer#doFrame slices"
JUNK = bytes(range(256)) * 64


def _app_trace() -> str:
    """com.example.app (pid 2000): 3 frames, vsync 100-102 every 16.667 ms; doFrame 4 ms on the main thread, then
    DrawFrame on RenderThread 0.2 ms later, ending 7 ms after the doFrame began: each frame 7.0 ms, none slow."""
    lines = [HEADER.rstrip("\n")]
    for k in range(3):
        t = 1000.0 + k * 0.016667
        lines += [f" com.example.app-2000  ( 2000) [001] ...1  {t:.6f}: tracing_mark_write: "
                  f"B|2000|Choreographer#doFrame {100 + k}",
                  f" com.example.app-2000  ( 2000) [001] ...1  {t + 0.004:.6f}: tracing_mark_write: E|2000",
                  f"    RenderThread-2010  ( 2000) [002] ...1  {t + 0.0042:.6f}: tracing_mark_write: "
                  f"B|2000|DrawFrame {100 + k}",
                  f"    RenderThread-2010  ( 2000) [002] ...1  {t + 0.007:.6f}: tracing_mark_write: E|2000"]
    return "\n".join(lines) + "\n"


def _write(d: Path, name: str, content: str | bytes) -> Path:
    p = d / name
    p.write_bytes(content.encode() if isinstance(content, str) else content)
    return p


# ---- defect 1: analyze's terminal summary ----------------------------------------------------------------------

def test_analyze_says_a_trace_without_app_frames_had_nothing_to_check(tmp_path, capsys):
    f = _write(tmp_path, "sf.txt", SF_ONLY)
    assert main(["analyze", str(f), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "no slow frames" not in out
    assert "droidlag: 1 input(s) analyzed (1 with nothing to check), 0 skipped" in out
    assert f" -- nothing to check: {f}: {NO_DOFRAME}." in out


def test_analyze_of_a_folder_accounts_for_every_input(tmp_path, capsys):
    d = tmp_path / "in"
    d.mkdir()
    app, sf, junk = _write(d, "app.txt", _app_trace()), _write(d, "sf.txt", SF_ONLY), _write(d, "junk.bin", JUNK)
    assert main(["analyze", str(d), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "droidlag: 2 input(s) analyzed (1 with nothing to check), 1 skipped" in out
    assert f" ok {app}: 3 frames, none slow or frozen" in out
    assert f" -- nothing to check: {sf}: {NO_DOFRAME}." in out
    assert f"  skipped {junk}: not a format droidlag reads" in out
    assert "no slow frames" not in out


def _stub(headlines: list, inputs: list) -> SimpleNamespace:
    return SimpleNamespace(headlines=lambda: headlines, inputs=inputs)


def _input(name: str, reason: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(path=Path(name), display=None, kind="anr", status="analyzed", reason=reason)


def test_the_all_clear_only_when_every_input_had_something_checked(capsys):
    """Inputs analysed with no headline and no reason (checked, nothing found) get the all-clear; one analysed with
    a reason why nothing was in it (a logcat without GC lines) takes it away and is named."""
    from droidlag.cli.analyze import _print_summary
    from droidlag.findings.narrative import Headline
    written = {"report.html": "r/report.html"}
    _print_summary(_stub([], [_input("a.txt"), _input("b.txt")]), written, 2)
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == ["droidlag: 2 input(s) analyzed, 0 skipped",
                                    "  no slow frames, frozen frames, ANRs or SNRs found"]
    _print_summary(_stub([], [_input("a.txt"), _input("log.txt", "logcat without ART GC lines")]), written, 2)
    out = capsys.readouterr().out
    assert "no slow frames" not in out
    assert "droidlag: 2 input(s) analyzed (1 with nothing to check), 0 skipped" in out
    assert " -- nothing to check: log.txt: logcat without ART GC lines." in out
    # a problem in one input: the others that nothing was found in are counted and named, not left out
    bad = Headline(80, "anr", "bad", "a.txt", "ANR in com.example.app")
    _print_summary(_stub([bad], [_input("a.txt"), _input("b.txt"), _input("c.txt")]), written, 3)
    out = capsys.readouterr().out
    assert " !! ANR in com.example.app" in out
    assert "  nothing found in 2 other input(s): b.txt, c.txt" in out
    assert "no slow frames" not in out


def test_past_ten_inputs_with_nothing_to_check_the_rest_are_named(capsys):
    from droidlag.cli.analyze import _print_summary
    inputs = [_input(f"{c}.txt", "logcat without ART GC lines") for c in "abcdefghijkl"]   # 12
    _print_summary(_stub([], inputs), {"report.html": "r/report.html"}, 12)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "droidlag: 12 input(s) analyzed (12 with nothing to check), 0 skipped"
    assert out[1:11] == [f" -- nothing to check: {c}.txt: logcat without ART GC lines." for c in "abcdefghij"]
    assert out[11] == "    ... and 2 more (see report.html): k.txt, l.txt"


# ---- defect 2: info names what it could not read ---------------------------------------------------------------

def test_info_names_each_unreadable_input_and_exits_as_frames_does(tmp_path, capsys):
    app, junk = _write(tmp_path, "app.txt", _app_trace()), _write(tmp_path, "junk.bin", JUNK)
    assert main(["info", str(app), str(junk)]) == 0
    got = capsys.readouterr()
    assert got.out.count("trace, ") == 1 and f"{app}: " in got.out
    assert f"droidlag info: {junk}: skipped: not a format droidlag reads" in got.err
    assert main(["frames", str(app), str(junk)]) == 0      # the same rule: something read, exit 0, the rest named
    assert f"{junk}: skipped: not a format droidlag reads" in capsys.readouterr().out


def _folder_with_junk(tmp_path: Path) -> tuple[Path, Path]:
    """A folder of one readable trace (app.txt) and one file of no format (junk.bin): (folder, junk)."""
    d = tmp_path / "in"
    d.mkdir()
    _write(d, "app.txt", _app_trace())
    return d, _write(d, "junk.bin", JUNK)


def test_info_json_of_a_folder_lists_the_skipped_input(tmp_path, capsys):
    d, junk = _folder_with_junk(tmp_path)
    assert main(["info", "--json", str(d)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [t["threads"] for t in doc["traces"]] == [2]      # main thread 2000 and RenderThread 2010
    assert {"path": str(junk), "kind": None, "status": "skipped", "reason": "not a format droidlag reads"} \
        in doc["inputs"]
    assert main(["info", "--json", str(d / "app.txt")]) == 0   # one input read: the object itself, as before
    assert json.loads(capsys.readouterr().out)["threads"] == 2


def test_frames_json_of_a_folder_lists_the_skipped_input(tmp_path, capsys):
    d, junk = _folder_with_junk(tmp_path)
    assert main(["frames", "--json", str(d)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["summary"]["frames"] for r in doc["reports"]] == [3]
    assert any(i["path"] == str(junk) and i["status"] == "skipped" for i in doc["inputs"])


# ---- defect 3: frames --app ------------------------------------------------------------------------------------

def test_frames_app_that_matches_nothing_is_an_error_listing_the_apps(tmp_path, capsys):
    f = _write(tmp_path, "app.txt", _app_trace())
    for extra in ([], ["--json"]):
        assert main(["frames", str(f), "--app", "com.exmaple.app", *extra]) == 3
        got = capsys.readouterr()
        assert got.out == ""
        assert (f"droidlag frames: {f}: --app 'com.exmaple.app' matches no app with frames; the apps "
                "there: com.example.app (pid 2000, 3 frames)") in got.err
    sf = _write(tmp_path, "sf.txt", SF_ONLY)
    assert main(["frames", str(sf), "--app", "com.example.app"]) == 3
    assert f"{sf}: --app 'com.example.app' matches no app with frames; no app has frames there " \
           f"({NO_DOFRAME})" in capsys.readouterr().err


def test_frames_app_found_in_one_input_names_the_other(tmp_path, capsys):
    app, sf = _write(tmp_path, "app.txt", _app_trace()), _write(tmp_path, "sf.txt", SF_ONLY)
    assert main(["frames", str(app), str(sf), "--app", "com.example.app"]) == 0
    out = capsys.readouterr().out
    assert f"{app}: trace, 3 frames;" in out
    assert f"{sf}: skipped: --app 'com.example.app' matches no app with frames; no app has frames there " \
           f"({NO_DOFRAME})" in out
    assert f"{sf}: trace" not in out


def test_frames_app_missing_from_a_gfxinfo_summary_is_an_error(tmp_path, capsys):
    """gfxinfo without per-frame rows: Android's counters are of every process, so their 30 frames must not read as
    frames of the app asked for."""
    f = _write(tmp_path, "gfx.txt", "** Graphics info for pid 9702 [com.example.browser] **\n\n"
               "Stats since: 9656484850794ns\nTotal frames rendered: 30\nJanky frames: 12 (40.00%)\n")
    assert main(["frames", str(f), "--app", "com.example.other"]) == 3
    assert (f"{f}: --app 'com.example.other' matches no app with frames; the apps there: "
            "com.example.browser (pid 9702, 30 frames, Android's count)") in capsys.readouterr().err
    assert main(["frames", str(f), "--app", "browser"]) == 0
    assert "com.example.browser: 30 frames rendered" in capsys.readouterr().out


def _thread_named_app() -> str:
    """As a sanitised atrace sample writes it: no TGID, thread 123456 named com.example writes the doFrames of pid
    2507, which nothing else names. 3 doFrames of 2 ms, 16 ms apart, each with a 1 ms traversal (a frame drawn)."""
    lines = []
    for k in range(3):
        t = 1000.0 + k * 0.016
        lines += [f" com.example-123456  (-----) [000] .... {t:.6f}: tracing_mark_write: "
                  f"B|2507|Choreographer#doFrame {7 + k}",
                  f" com.example-123456  (-----) [000] .... {t + 0.0005:.6f}: tracing_mark_write: B|2507|traversal",
                  f" com.example-123456  (-----) [000] .... {t + 0.0015:.6f}: tracing_mark_write: E|2507",
                  f" com.example-123456  (-----) [000] .... {t + 0.002:.6f}: tracing_mark_write: E|2507"]
    return "\n".join(lines) + "\n"


def test_frames_app_named_only_by_a_thread_is_found(tmp_path, capsys):
    f = _write(tmp_path, "sample.txt", _thread_named_app())
    assert main(["frames", str(f), "--app", "com.example", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["frames"] == 3
    assert [(a["pid"], a["process"]) for a in doc["summary"]["apps"]] == [(2507, "com.example")]
    assert doc["summary"]["frame_time_ms"]["max"] == 2.0


def test_a_process_is_named_by_its_threads_only_when_they_name_it_as_an_app(tmp_path):
    from droidlag.io import read_trace
    # a worker thread's name is no process name: pid 3000 known only through its RenderThread stays unnamed
    f = _write(tmp_path, "t.txt", _thread_named_app()
               + " RenderThread-3010  (-----) [001] .... 1000.100000: tracing_mark_write: B|3000|DrawFrame 1\n"
               + " RenderThread-3010  (-----) [001] .... 1000.101000: tracing_mark_write: E|3000\n")
    trace = read_trace(f)
    assert trace.process_name(2507) == "com.example"
    assert trace.process_name(3000) is None
    # system_server seen only through its animation thread (a review's reproducer): `android.anim` is a framework
    # thread's name, not the process's
    g = _write(tmp_path, "ss.txt", HEADER
               + " android.anim-1900  (-----) [002] .... 1000.200000: tracing_mark_write: B|1858|Choreographer#doFrame 7\n"
               + " android.anim-1900  (-----) [002] .... 1000.201000: tracing_mark_write: E|1858\n")
    assert read_trace(g).process_name(1858) is None


# ---- defect 4: report.html wording -----------------------------------------------------------------------------

def test_report_html_counts_in_the_singular_and_says_the_reason_once(tmp_path, capsys):
    f = _write(tmp_path, "sf.txt", SF_ONLY)
    out = tmp_path / "out"
    assert main(["analyze", str(f), "--out", str(out), "--quiet"]) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    section = html[html.index('<section class="trace">'):]
    assert "1 thread, 1 slice, 0 sched intervals," in section     # surfaceflinger-612 and its one slice
    assert section.count(NO_DOFRAME) == 1
