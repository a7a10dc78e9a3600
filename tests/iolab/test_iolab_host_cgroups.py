"""BFQ cgroup weights in the host lab: parsing and group handling everywhere; on a machine with root, fio,
loop devices and a blkio/io weight file, a 1 s smoke run of `bfq+cgroup-weights` that checks the groups,
the loop device and the scratch directory are all gone afterwards, also when interrupted."""
import os
import shutil

import pytest

from droidlag.iolab.host.cgroups import (
    WeightedGroups,
    find_weight_support,
    parse_cgroup_mounts,
    parse_service_bytes,
    pick_weight_file,
)
from droidlag.iolab.host.fio import check_job_errors, fio_error, reader_writer_jobs
from droidlag.iolab.host.loop import loops_over

MOUNTS = """tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0
cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup /sys/fs/cgroup/blkio cgroup rw,relatime,blkio 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
"""


def test_parse_cgroup_mounts_finds_v1_blkio_and_v2():
    m = parse_cgroup_mounts(MOUNTS)
    assert m == {"v1_blkio": "/sys/fs/cgroup/blkio", "v2": "/sys/fs/cgroup/unified"}
    assert parse_cgroup_mounts("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n") == {"v1_blkio": None,
                                                                           "v2": "/sys/fs/cgroup"}


def test_pick_weight_file_prefers_bfq():
    assert pick_weight_file({"blkio.weight", "blkio.bfq.weight"}, 1) == "blkio.bfq.weight"
    assert pick_weight_file({"blkio.weight"}, 1) == "blkio.weight"
    assert pick_weight_file({"io.weight", "io.bfq.weight"}, 2) == "io.bfq.weight"
    assert pick_weight_file({"io.max"}, 2) is None


def test_parse_service_bytes_v1_and_v2():
    v1 = "7:0 Read 4096\n7:0 Write 8192\n7:0 Sync 0\n253:0 Read 1\nTotal 12288\n"
    assert parse_service_bytes(v1, "7:0", 1) == {"read": 4096, "write": 8192}
    v2 = "7:0 rbytes=10 wbytes=20 rios=1 wios=2\n8:0 rbytes=99 wbytes=99\n"
    assert parse_service_bytes(v2, "7:0", 2) == {"read": 10, "write": 20}


def test_find_weight_support_needs_root(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert "root" in find_weight_support(MOUNTS)


def test_find_weight_support_without_any_hierarchy(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert "no cgroup v1 blkio" in find_weight_support("proc /proc proc rw 0 0\n")


def test_groups_without_weight_file_are_removed(tmp_path):
    # a plain directory stands in for a hierarchy with no weight files: creation fails, nothing is left
    with pytest.raises(RuntimeError, match="blkio.bfq.weight"):
        with WeightedGroups(tmp_path, 1):
            pass
    assert not list(tmp_path.iterdir())


def test_fio_error_is_readable():
    out = ("fio: pid=4661, err=13/file:cgroup.c:136, func=cgroup open weight, error=Permission denied\n"
           '{\n  "jobs" : [ { "jobname" : "r", "error" : 13 } ]\n}\n')
    assert fio_error(out, "", 1).startswith("fio: pid=4661, err=13/file:cgroup.c:136, func=cgroup open weight")
    assert fio_error("", "", 3) == "fio: exit 3"
    with pytest.raises(RuntimeError, match="r failed: Permission denied"):
        check_job_errors({"jobs": [{"jobname": "r", "error": 13}]})


def test_writers_only_job_file_for_the_background_group():
    text = reader_writer_jobs("/dev/loop9", 2, True, with_reader=False)
    assert "[fg-reader]" not in text and "[bg-writer-0]" in text and "new_group" not in text
    assert "cgroup" not in reader_writer_jobs("/dev/loop9", 2, True)


_CAN = (hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("fio") is not None
        and shutil.which("losetup") is not None and os.path.exists("/dev/loop-control")
        and not isinstance(find_weight_support(), str))
_WHY = "needs root, fio, losetup, /dev/loop-control and a cgroup v1 blkio or v2 io hierarchy"


def _droidlag_groups(root):
    return sorted(p.name for p in root.iterdir() if p.name.startswith("droidlag-"))


@pytest.mark.skipif(not _CAN, reason=_WHY)
def test_cgroup_weights_smoke_cleans_up(tmp_path):
    from droidlag.iolab.host import format_host, run_host_lab
    root, _ = find_weight_support()
    before = _droidlag_groups(root)
    res = run_host_lab(size_mb=32, runtime_s=1, scratch_parent=str(tmp_path), policies=["bfq+cgroup-weights"],
                       experiments=["policies"])
    if not res["runs"]:
        pytest.skip("not run here: " + "; ".join(s["reason"] for s in res["skipped"]))
    r = res["runs"][0]
    assert r["policy"] == "bfq+cgroup-weights" and r["alone"]["ios"] > 0 and r["loaded"]["ios"] > 0
    cg = r["cgroup"]
    assert cg["fg_weight"] == 1000 and cg["bg_weight"] == 100 and cg["weight_file"]
    assert not os.path.exists(cg["group"])  # the groups were removed
    assert _droidlag_groups(root) == before
    assert not list(tmp_path.iterdir()) and not loops_over(tmp_path)
    assert res["restored_scheduler"] == res["original_scheduler"]
    assert "cgroup v" in format_host(res)


@pytest.mark.skipif(not _CAN, reason=_WHY)
def test_cgroup_weights_interrupted_still_cleans_up(tmp_path, monkeypatch):
    import droidlag.iolab.host as host
    root, _ = find_weight_support()
    before = _droidlag_groups(root)

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(host, "service_bytes", interrupted)  # after the fio runs, inside the groups
    with pytest.raises(KeyboardInterrupt):
        host.run_host_lab(size_mb=32, runtime_s=1, scratch_parent=str(tmp_path), policies=["bfq+cgroup-weights"],
                          experiments=["policies"])
    assert _droidlag_groups(root) == before
    assert not list(tmp_path.iterdir()) and not loops_over(tmp_path)
