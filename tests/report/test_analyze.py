"""`droidlag analyze` on real data and on a hostile folder: everything that can be read is analyzed, the rest is
reported with its reason, and the outputs (JSON, HTML, Perfetto export) agree with each other."""
import io
import json
import zipfile
from pathlib import Path

import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from conftest import corpus_file, usable
from droidlag.cli import main
from droidlag.findings import SCHEMA_VERSION, analyze
from droidlag.report.writer import write_outputs

# FrameTimeline: 17 app surface frames with "App Deadline Missed" (12 alone, 5 with Buffer Stuffing), SOURCES.md 10
NOWINANDROID = "traces/nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace"
PIXEL6A = "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace"
AIDL = "anr/chkbugreport_aidldeadlock_vm_traces.txt"


def _usable_inputs(corpus: Path, folders: tuple[str, ...]) -> list[Path]:
    """Each folder whole, or, where it holds a file from a reserved source (tests/conftest.py), its other files."""
    out: list[Path] = []
    for d in folders:
        files = [p for p in sorted((corpus / d).rglob("*")) if p.is_file()]
        out += [corpus / d] if all(usable(p) for p in files) else [p for p in files if usable(p)]
    return out


@pytest.mark.slow
def test_whole_corpus_goes_through_analyze(corpus: Path, tmp_path: Path):
    findings = analyze(_usable_inputs(corpus, ("traces", "systrace", "gfxinfo", "anr", "bugreport")))
    assert findings.inputs and all(usable(Path(str(i.path))) for i in findings.inputs)
    statuses = {i.status for i in findings.inputs}
    assert statuses <= {"analyzed", "skipped", "failed"}
    assert all(i.reason for i in findings.inputs if i.status != "analyzed")
    failed = [(i.path, i.reason) for i in findings.inputs if i.status == "failed"]
    # the only inputs that may fail are the ones no reader can use (old 562-byte stream, non-trace text)
    assert all("internal error" not in r for _, r in failed), failed
    analyzed = {Path(i.path).name for i in findings.inputs if i.status == "analyzed"}
    assert {Path(p).name for p in (NOWINANDROID, PIXEL6A, AIDL)} <= analyzed
    # at least the 4 usable files of traces/ and the 9 atrace/systrace captures systrace/SOURCES.md lists (2012 .html
    # and .txt, the top-level compressed atrace, decompressed_atrace_data, atrace_data and its _raw, _stripped,
    # _missing_tgids and _fixed_tgids forms)
    assert len(findings.traces) >= 13 and findings.gfxinfo and findings.hangs.events
    written = write_outputs(findings, tmp_path)
    data = json.loads(written["findings.json"].read_text())
    assert data["schema"] == "droidlag-findings" and data["version"] == SCHEMA_VERSION
    assert "<html" in written["report.html"].read_text()[:200]


def test_verdicts_agree_across_json_and_perfetto_export(corpus: Path, tmp_path: Path):
    findings = analyze([corpus_file(corpus, NOWINANDROID)])
    written = write_outputs(findings, tmp_path)
    data = json.loads(written["findings.json"].read_text())
    frames = data["traces"][0]["frames"]["frames"]
    sr_ff = [f for f in frames if f["verdict"] in ("SR", "FF")]
    assert len(sr_ff) == 17                                  # FrameTimeline's app jank (SOURCES.md section 10)
    assert len(sr_ff) == data["traces"][0]["frames"]["summary"]["sr"] + data["traces"][0]["frames"]["summary"]["ff"]
    trace = pb.Trace()
    trace.ParseFromString(written["findings.perfetto-trace"].read_bytes())
    tracks = {p.track_descriptor.uuid: p.track_descriptor.name for p in trace.packet if p.HasField("track_descriptor")}
    begins = [p for p in trace.packet if p.HasField("track_event")
              and p.track_event.type == pb.TrackEvent.TYPE_SLICE_BEGIN
              and tracks[p.track_event.track_uuid].startswith("droidlag jank")]
    assert sorted(p.timestamp for p in begins) == sorted(f["start_ns"] for f in sr_ff)
    # the original time base: marks fall inside the capture
    info = data["traces"][0]["info"]
    assert all(info["start_ns"] <= p.timestamp <= info["end_ns"] for p in begins)


def test_deadlock_headline_names_every_member(corpus: Path):
    findings = analyze([corpus / AIDL])
    heads = [h.to_dict() for h in findings.headlines()]
    assert heads[0]["kind"] == "deadlock"
    # the tid shown is the one the JSON calls `tid` (issue 11), each member with its process where it differs
    (ev,) = [e for e in findings.hangs.to_dict()["events"] if e["deadlock"]]
    assert len(ev["deadlock"]) == 4
    for m in ev["deadlock"]:
        assert f"{m['name']} (" in heads[0]["text"] and f"tid {m['tid']}" in heads[0]["text"]


def _zip(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return buf.getvalue()


def test_hostile_folder_is_analyzed_as_far_as_possible(corpus: Path, tmp_path: Path):
    d = tmp_path / "inbox"
    (d / "sub").mkdir(parents=True)
    (d / "empty.txt").write_bytes(b"")
    (d / "junk.bin").write_bytes(bytes(range(256)) * 10)
    (d / "sub" / "cut.pftrace").write_bytes((corpus / PIXEL6A).read_bytes()[:4])
    dump = (corpus / "anr" / "sentry-java_thread_dump.txt").read_bytes()
    inner = _zip({"traces.txt": dump})
    (d / "nested.zip").write_bytes(_zip({"inner.zip": inner, "../escape.txt": b"x", "notes.md": b"# hi"}))
    # entry names that cannot all be files on disk: a file and a folder of the same name, a 300-byte name
    (d / "clash.zip").write_bytes(_zip({"x": b"plain", "x/traces.txt": dump, "n" * 300 + ".txt": dump}))
    findings = analyze([d])
    by_name = {Path(str(i.path)).name: i for i in findings.inputs}
    assert by_name["empty.txt"].status == "skipped" and "empty" in by_name["empty.txt"].reason
    assert by_name["junk.bin"].status == "skipped"
    assert by_name["cut.pftrace"].status in ("skipped", "failed") and by_name["cut.pftrace"].reason
    assert "path outside the archive" in by_name["nested.zip"].reason
    # the dump two archives deep was found and analyzed, and named after the archives it came from
    inner_items = [i for i in findings.inputs if i.to_dict()["path"].endswith("nested.zip!inner.zip!traces.txt")]
    assert inner_items and inner_items[0].status == "analyzed"
    assert any(ev.source.startswith(str(d / "nested.zip")) for ev in findings.hangs.events)
    clash = [i for i in findings.inputs if i.to_dict()["path"].startswith(str(d / "clash.zip") + "!")]
    assert sorted(i.to_dict()["path"].rsplit("!", 1)[1] for i in clash if i.status == "analyzed") == \
        sorted(["x/traces.txt", "n" * 300 + ".txt"])


def test_cli_exit_codes_and_json(tmp_path: Path, capsys, corpus: Path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01" * 100)
    assert main(["analyze", str(junk), "--out", str(tmp_path / "o1"), "--quiet"]) == 3
    assert main(["analyze", str(corpus / AIDL), "--out", str(tmp_path / "o2"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["hangs"]["events"][0]["deadlock"]
    assert (tmp_path / "o2" / "report.html").exists()
