"""The host lab on the real kernel.

A short smoke test runs by default where it is safe and possible: root, fio, losetup and loop devices
(CI runs as root with fio installed). It uses one policy pair (no scheduler vs mq-deadline with the reader
real-time and the writers idle), 1 s fio runs on a 32 MB scratch image under pytest's tmp_path, a loop
device the lab creates over that image and detaches, and only that device's scheduler, which it restores.
Anywhere else it skips. DROIDLAG_HOST_TESTS=1 adds the longer run over every policy the kernel offers.
"""
import os
import shutil
import subprocess

import pytest

from droidlag.iolab.host import format_host, run_host_lab

_CAN_LOOP = (hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("fio") is not None
             and shutil.which("losetup") is not None and os.path.exists("/dev/loop-control"))


def _loops_over(path) -> list[str]:
    p = subprocess.run(["losetup", "-a"], capture_output=True, text=True, timeout=30)
    return [ln for ln in p.stdout.splitlines() if str(path) in ln]


@pytest.mark.skipif(not _CAN_LOOP, reason="needs root, fio, losetup and /dev/loop-control")
def test_host_lab_smoke_one_policy_pair_cleans_up_and_restores(tmp_path):
    res = run_host_lab(size_mb=32, runtime_s=1, scratch_parent=str(tmp_path),
                       policies=["none", "mq-deadline+ioprio"], experiments=["policies"])
    if not res.get("device"):
        pytest.skip("no loop device could be created here: " + "; ".join(s["reason"] for s in res["skipped"]))
    assert res["device"].startswith("/dev/loop")
    assert res["runs"], res["skipped"]
    for r in res["runs"]:
        assert r["alone"]["mean_ms"] > 0 and r["loaded"]["mean_ms"] > 0
    assert not list(tmp_path.iterdir())  # scratch image and job files removed
    assert not _loops_over(tmp_path)  # the loop device was detached
    assert res["restored_scheduler"] == res["original_scheduler"]
    assert "slowdown" in format_host(res)


@pytest.mark.skipif(not _CAN_LOOP, reason="needs root, fio, losetup and /dev/loop-control")
@pytest.mark.skipif(os.environ.get("DROIDLAG_HOST_TESTS") != "1", reason="set DROIDLAG_HOST_TESTS=1 to run")
def test_host_lab_all_policies(tmp_path):
    res = run_host_lab(size_mb=64, runtime_s=2, scratch_parent=str(tmp_path))
    assert res["runs"] and not list(tmp_path.iterdir()) and not _loops_over(tmp_path)
    assert res["wam"]["modes"] and not res["wam"]["skipped"]


def test_host_lab_without_fio_skips(monkeypatch):
    import droidlag.iolab.host as host
    monkeypatch.setattr(host, "fio_path", lambda: None)
    res = host.run_host_lab(experiments=["policies"])
    assert res["skipped"][0]["experiment"] == "all" and not res["runs"]


class _FakeLoop:
    """Stands in for a loop device: records the schedulers set, fails on the ones named in `fail`."""

    def __init__(self, tmp_path, fail=()):
        self.name, self.dev, self.original, self.set, self.fail = "loopX", str(tmp_path / "dev"), "none", [], fail

    def set_scheduler(self, sched):
        if sched in self.fail:
            raise RuntimeError(f"cannot set {sched}")
        self.set.append(sched)


def test_each_policy_is_measured_or_skipped_with_its_reason(monkeypatch, tmp_path):
    """The per-policy phase of the host lab, without a kernel: unknown scheduler, unknown modifier, missing cgroup
    support and a failing scheduler are skipped with their reasons; the rest are measured with their fio options."""
    import droidlag.iolab.host as host
    measured = []
    monkeypatch.setattr(host, "_measure", lambda scratch, dev, runtime_s, size, **kw: measured.append(kw) or {"x": 1})
    monkeypatch.setattr(host, "find_weight_support", lambda: "no cgroup here")
    res: dict = {"runs": [], "skipped": [], "notes": []}
    loop = _FakeLoop(tmp_path, fail=("kyber",))
    for pol in ("none", "mq-deadline+ioprio", "bfq-x", "none+turbo", "none+cgroup-weights", "kyber"):
        host._run_policy(res, loop, ["none", "mq-deadline", "kyber"], pol, tmp_path, 1, (1000, 100))
    assert [r["policy"] for r in res["runs"]] == ["none", "mq-deadline+ioprio"]
    assert measured == [{}, {"reader_prio": (1, 0), "writer_prio": (3, 0)}]
    assert loop.set == ["none", "mq-deadline"]
    assert res["skipped"] == [
        {"experiment": "bfq-x", "reason": "scheduler bfq-x not offered by this kernel"},
        {"experiment": "none+turbo", "reason": "unknown policy modifier 'turbo'"},
        {"experiment": "none+cgroup-weights", "reason": "no cgroup here"},
        {"experiment": "kyber", "reason": "cannot set kyber"},
    ]
