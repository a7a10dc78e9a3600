"""The WAM experiment on the real kernel (ext4 -o discard vs nodiscard + fstrim): summaries everywhere; on a
machine with root, loop devices, mkfs.ext4, mount and fstrim, a few-second smoke run with 16 MB rounds that
checks nothing is left: no mount, no loop device over the images, no scratch directory, also on Ctrl-C and
SIGTERM."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from droidlag.iolab.host.loop import loops_over, mounts_under
from droidlag.iolab.host.wam import by_phase, format_wam, parse_fstrim, percentile, run_wam_lab, summarize_latencies


def test_percentile_nearest_rank():
    v = list(range(1, 101))
    assert percentile(v, 50) == 50 and percentile(v, 99) == 99 and percentile(v, 100) == 100
    assert percentile([7.0], 99) == 7.0 and percentile([], 50) is None


def test_summary_counts_stalls_over_thresholds():
    s = summarize_latencies([1, 2, 3, 60, 120, 6000], (50, 100, 5000))
    assert s["n"] == 6 and s["max_ms"] == 6000 and s["p50_ms"] == 3
    assert s["stalls"] == {">50ms": 3, ">100ms": 2, ">5000ms": 1}
    assert summarize_latencies([])["p99_ms"] is None


def test_by_phase_splits_on_start_time():
    phases = [("idle", 0, 1), ("fill", 1, 2), ("delete", 2, 3)]
    out = by_phase([(0.5, 1.0), (1.5, 50.0), (2.5, 9.0), (2.6, 11.0), (9.0, 99.0)], phases, (10,))
    assert out["idle"]["n"] == 1 and out["fill"]["max_ms"] == 50.0
    assert out["delete"]["n"] == 2 and out["delete"]["stalls"] == {">10ms": 1}


def test_parse_fstrim():
    assert parse_fstrim("/tmp/x/mnt: 226.1 MiB (237076480 bytes) trimmed\n") == 237076480
    assert parse_fstrim("/mnt: 4096 bytes were trimmed") == 4096
    assert parse_fstrim("fstrim: /mnt: the discard operation is not supported") is None


def test_format_wam_from_a_result():
    fs = summarize_latencies([1, 2, 30], (10, 5000))
    res = {"size_mb": 16, "rounds": 1, "record_kb": 4, "thresholds_ms": [10, 5000], "skipped": [],
           "notes": ["hole punching"],
           "modes": [{"mode": "discard", "fsync": fs, "fsync_by_phase": {"delete": fs}, "fill_mb_s": 100.0,
                      "fstrim": None, "image_allocated_mb": {"after_fill": 20.0}},
                     {"mode": "nodiscard+fstrim", "fsync": fs, "fsync_by_phase": {}, "fill_mb_s": 90.0,
                      "fstrim": {"seconds": 0.05, "bytes": 2**20}, "image_allocated_mb": {}}]}
    text = format_wam(res)
    assert "discard" in text and "nodiscard+fstrim" in text and "fstrim trimmed 1 MB" in text
    assert "hole punching" in text and ">5000ms" in text


def test_wam_skips_without_root(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    res = run_wam_lab(size_mb=1, rounds=1)
    assert not res["modes"] and "root" in res["skipped"][0]["reason"]


def test_cli_rejects_bad_host_options(capsys):
    from droidlag.cli import main
    assert main(["iolab", "host", "--experiments", "wam,nope"]) == 2
    assert main(["iolab", "host", "--cgroup-weights", "1000"]) == 2
    assert main(["iolab", "host", "--policies", "cfq"]) == 2
    assert "bad host lab option" in capsys.readouterr().err


def test_cli_host_json_passes_options(monkeypatch, capsys):
    import droidlag.iolab.host as host
    from droidlag.cli import main
    seen = {}

    def fake(**kw):
        seen.update(kw)
        return {"runs": [], "skipped": [], "notes": [], "wam": {"modes": [], "skipped": [], "notes": []}}

    monkeypatch.setattr(host, "run_host_lab", fake)
    assert main(["iolab", "host", "--experiments", "wam", "--size-mb", "16", "--wam-rounds", "1",
                 "--cgroup-weights", "1000,10", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["wam"]["modes"] == []
    assert seen["experiments"] == ["wam"] and seen["size_mb"] == 16 and seen["wam_rounds"] == 1
    assert seen["cgroup_weights"] == (1000, 10)


_CAN = (hasattr(os, "geteuid") and os.geteuid() == 0 and os.path.exists("/dev/loop-control")
        and all(shutil.which(t) for t in ("losetup", "mkfs.ext4", "mount", "umount", "fstrim")))
_WHY = "needs root, /dev/loop-control, losetup, mkfs.ext4, mount, umount and fstrim"


def _clean(tmp_path):
    assert not mounts_under(tmp_path), mounts_under(tmp_path)
    assert not loops_over(tmp_path), loops_over(tmp_path)
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(not _CAN, reason=_WHY)
def test_wam_smoke_both_modes_clean_up(tmp_path):
    res = run_wam_lab(size_mb=16, rounds=1, scratch_parent=str(tmp_path), idle_s=0.3, settle_s=0.5)
    if not res["modes"]:
        pytest.skip("not run here: " + "; ".join(s["reason"] for s in res["skipped"]))
    assert [m["mode"] for m in res["modes"]] == ["discard", "nodiscard+fstrim"], res["skipped"]
    for m in res["modes"]:
        assert m["fsync"]["n"] > 0 and m["fsync"]["max_ms"] >= m["fsync"]["p50_ms"] > 0
        assert m["filled_mb"] == 16 and m["files_deleted"] == 16
    d, n = res["modes"]
    assert "discard" in d["mounted_with"].split(",") and "discard" not in n["mounted_with"].split(",")
    assert d["fstrim"] is None and n["fstrim"]["seconds"] >= 0 and n["fstrim"]["bytes"] > 0
    assert any("hole punching" in x for x in res["notes"])
    _clean(tmp_path)
    assert "fstrim" in format_wam(res)


@pytest.mark.skipif(not _CAN, reason=_WHY)
def test_wam_interrupted_cleans_up(tmp_path, monkeypatch):
    import droidlag.iolab.host.wam as wam

    def interrupted(d):
        raise KeyboardInterrupt

    monkeypatch.setattr(wam, "_delete", interrupted)  # mounted, foreground fsync loop running
    with pytest.raises(KeyboardInterrupt):
        run_wam_lab(size_mb=8, rounds=1, scratch_parent=str(tmp_path), idle_s=0.2, settle_s=0.2)
    _clean(tmp_path)


@pytest.mark.skipif(not _CAN, reason=_WHY)
def test_wam_sigterm_cleans_up(tmp_path):
    code = ("import sys; from droidlag.iolab.host.wam import run_wam_lab; "
            "run_wam_lab(size_mb=32, rounds=50, scratch_parent=sys.argv[1], idle_s=0.2, settle_s=0.2)")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    p = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], env=env)
    try:
        deadline = time.monotonic() + 60
        while not mounts_under(tmp_path) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if not mounts_under(tmp_path):
            pytest.skip("the experiment never mounted its filesystem here")
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode != 0
    _clean(tmp_path)


@pytest.mark.skipif(not _CAN, reason=_WHY)
def test_detach_leftovers_only_detaches_devices_over_the_image(tmp_path):
    from droidlag.iolab.host.loop import detach_leftovers
    img = tmp_path / "x.img"
    img.write_bytes(b"\0" * 2**20)
    dev = subprocess.run(["losetup", "--find", "--show", str(img)], capture_output=True, text=True,
                         timeout=30).stdout.strip()
    try:
        assert loops_over(tmp_path)
        detach_leftovers(img)
        assert not loops_over(tmp_path)
    finally:
        if loops_over(tmp_path):
            subprocess.run(["losetup", "-d", dev], timeout=30)


def test_mount_table_escapes_are_decoded_so_paths_with_spaces_match():
    """/proc/mounts writes a space as \\040: a scratch folder with a space must still be seen as mounted, or the lab
    would skip the unmount and delete into a live mount."""
    from droidlag.iolab.host.loop import _under, parse_mounts
    text = ("/dev/loop3 /srv/lab\\040dir/mnt ext4 rw,relatime,discard 0 0\n"
            "/dev/sda1 /srv/lab ext4 rw 0 0\n"
            "tmpfs /srv/lab\\134x tmpfs rw 0 0\n")
    rows = parse_mounts(text)
    assert rows[0][:3] == ("/dev/loop3", "/srv/lab dir/mnt", "ext4")
    assert rows[2][1] == "/srv/lab\\x"
    assert _under("/srv/lab dir/mnt", "/srv/lab dir") and not _under("/srv/labdir", "/srv/lab")
