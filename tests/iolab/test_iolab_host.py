"""The host lab on the real kernel: runs only with fio, root and DROIDLAG_HOST_TESTS=1 (it takes seconds)."""
import os
import shutil

import pytest

from droidlag.iolab.host import format_host, run_host_lab


@pytest.mark.skipif(not shutil.which("fio"), reason="fio not installed")
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a loop device")
@pytest.mark.skipif(os.environ.get("DROIDLAG_HOST_TESTS") != "1", reason="set DROIDLAG_HOST_TESTS=1 to run")
def test_host_lab_runs_restores_and_cleans_up(tmp_path):
    res = run_host_lab(size_mb=32, runtime_s=1, scratch_parent=str(tmp_path), policies=["none"])
    assert res["runs"] and res["runs"][0]["alone"]["mean_ms"] > 0
    assert not list(tmp_path.iterdir())  # scratch removed
    assert "slowdown" in format_host(res)


def test_host_lab_without_fio_skips(monkeypatch):
    import droidlag.iolab.host as host
    monkeypatch.setattr(host, "fio_path", lambda: None)
    res = host.run_host_lab()
    assert res["skipped"][0]["experiment"] == "all" and not res["runs"]
