"""Saved systrace HTML reports put the trace viewer's script (megabytes) before their `trace-data` blocks: the
reader must find the blocks wherever they are, reading the file as a stream (issue 12). The inputs are corpus
traces with 3 MB of script put before their blocks; expected counts come from the raw text by regex."""
from __future__ import annotations

import gzip
import io
import random
import re
import tracemalloc

from conftest import corpus_file
from droidlag.io import read_trace
from droidlag.io.inputs import discover

ANTUTU = "traces/systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz"
LEGACY_2012 = "systrace/catapult_android_systrace_2012_sched.html"
PAD_BYTES = 3 * 1024 * 1024


def viewer_script(n_bytes: int, seed: int = 12) -> bytes:
    """JavaScript-like filler the size of a saved report's viewer; deterministic. It mentions the words the
    viewer's own code does (trace-data, script) without forming a block."""
    rng = random.Random(seed)
    words = ["function", "var", "trace", "data", "class", "script", "tr.b.", "'trace-data'", "return", "{", "}",
             "linuxPerf", "=", ";", "<div>", "</div>"]
    out = io.BytesIO()
    out.write(b"<script>\n")
    while out.tell() < n_bytes:
        out.write((" ".join(rng.choice(words) for _ in range(16)) + "\n").encode())
    out.write(b"</script>\n")
    return out.getvalue()


def padded(html: bytes, before: bytes) -> bytes:
    """The report with the script put just after <head> (before every trace block), as a saved report has it."""
    m = re.search(rb"<head[^>]*>", html, re.I)
    assert m is not None
    at = m.end()
    return html[:at] + b"\n" + before + html[at:]


def raw_tracing_marks(html: bytes) -> int:
    return len(re.findall(rb"tracing_mark_write: [BE]", html))


def test_saved_report_with_3mb_of_script_before_its_blocks_is_read(corpus, tmp_path):
    html = gzip.decompress(corpus_file(corpus, ANTUTU).read_bytes())
    big = padded(html, viewer_script(PAD_BYTES))
    assert big.find(b'class="trace-data"') > 2 * 1024 * 1024
    for name, data in (("saved.html", big), ("saved.html.gz", gzip.compress(big, 6))):
        p = tmp_path / name
        p.write_bytes(data)
        assert [i.kind for i in discover([p])] == ["systrace"], name
        trace = read_trace(p)
        plain = read_trace(corpus_file(corpus, ANTUTU))
        assert trace.slices.height == plain.slices.height > 0
        assert trace.thread_states.height == plain.thread_states.height
        # every B/E mark of the raw text became a slice end point (counted by regex on the raw bytes)
        assert 2 * trace.slices.height >= raw_tracing_marks(html) - 10
        # file lines of warnings and sections point past the padding
        assert trace.metadata["container"] == "html"


def test_legacy_linuxperfdata_report_after_3mb_of_script(corpus, tmp_path):
    html = corpus_file(corpus, LEGACY_2012).read_bytes()
    big = padded(html, viewer_script(PAD_BYTES, seed=3))
    p = tmp_path / "legacy_saved.html"
    p.write_bytes(big)
    assert [i.kind for i in discover([p])] == ["systrace"]
    trace = read_trace(p)
    plain = read_trace(corpus_file(corpus, LEGACY_2012))
    assert trace.metadata["container"] == "html-legacy"
    assert trace.slices.height == plain.slices.height > 0
    raw_switches = len(re.findall(rb"sched_switch: ", html))
    assert trace.metadata["ftrace_events"] == plain.metadata["ftrace_events"]
    assert int(trace.metadata["ftrace_events"]) >= raw_switches


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    from droidlag.cli import main
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_frames_cli_reads_the_saved_report(corpus, tmp_path, capsys):
    html = gzip.decompress(corpus_file(corpus, ANTUTU).read_bytes())
    p = tmp_path / "saved.html"
    p.write_bytes(padded(html, viewer_script(PAD_BYTES)))
    code, out, err = run_cli(capsys, "frames", str(p))
    assert code == 0, err
    # 252 doFrame in SOURCES.md, counted from the raw text: 202 with a traversal are frames, 50 animation-only
    # callbacks drew nothing (docs/frames.md)
    assert "202 frames" in out


def test_blocks_split_across_reads_are_found(corpus):
    """The scanner sees the file in small pieces: a tag or </script> cut between two reads is still found."""
    from droidlag.io.systrace_html import stream_html_sections
    html = gzip.decompress(corpus_file(corpus, ANTUTU).read_bytes())
    whole = stream_html_sections(io.BytesIO(html), "x", [])
    for chunk in (7, 4096, 65537):
        got = stream_html_sections(io.BytesIO(html), "x", [], chunk=chunk)
        assert got is not None and [(s.kind, s.first_line, len(s.text)) for s in got[1]] == \
            [(s.kind, s.first_line, len(s.text)) for s in whole[1]]
    # the block's first line is the file line after the tag (counted on the raw text)
    tag_line = html[:html.find(b'class="trace-data"')].count(b"\n") + 1
    assert whole[1][0].first_line == tag_line


def test_memory_holds_the_blocks_not_the_script(corpus, tmp_path):
    """40 MB of script around a small trace: the streaming scan's peak stays far below the file's size."""
    html = gzip.decompress(corpus_file(corpus, ANTUTU).read_bytes())
    pad = viewer_script(40 * 1024 * 1024, seed=5)
    p = tmp_path / "huge.html"
    p.write_bytes(padded(html, pad))
    from droidlag.io.systrace_html import read_html_sections
    tracemalloc.start()
    try:
        found = read_html_sections(p, [])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found is not None and found[1]
    assert peak < len(html) * 4 + 8 * 1024 * 1024 < p.stat().st_size


def test_html_page_without_trace_blocks_is_refused_by_name(tmp_path, capsys):
    p = tmp_path / "page.html"
    p.write_bytes(b"<!DOCTYPE html><html><head>" + viewer_script(600_000) + b"</head><body>hi</body></html>")
    items = discover([p])
    assert items[0].status == "skipped" and "not a format" in items[0].reason
    code, out, err = run_cli(capsys, "frames", str(p))
    assert code == 3 and str(p) in err and "Traceback" not in err


def test_cut_short_report_keeps_what_was_there(corpus, tmp_path):
    html = gzip.decompress(corpus_file(corpus, ANTUTU).read_bytes())
    big = padded(html, viewer_script(PAD_BYTES))
    end = big.rfind(b"</script>")
    p = tmp_path / "cut.html"
    p.write_bytes(big[:end - 200_000])
    trace = read_trace(p)
    assert trace.slices.height > 0
    assert any("no </script>" in w.message for w in trace.warnings)

