"""The host lab: the simulator's questions asked of the real kernel. A random foreground reader (an app
launch) runs alone and beside buffered background writers with fsync (an app update), on a loop device this
lab creates over a scratch image, under each block scheduler the kernel offers, with I/O priority classes
(reader real-time, writers idle) and BFQ cgroup weights (reader's group 1000, writers' group 100) where the
machine allows, and the read slowdown (latency with writers / alone, SmartIO's definition) is reported per
policy. The write-amplification experiment (ext4 with `discard` vs batched `fstrim`, fsync stalls while
files are deleted) lives in `host.wam`.

Safety: everything lives in a scratch directory the lab creates and removes (also on Ctrl-C/SIGTERM); it
only changes the scheduler of the loop device it created and restores it; it detaches that device; its
cgroups have a unique name and are removed. Whatever the machine does not allow (no fio, no root, no loop
devices, a missing scheduler, no weight files) is skipped with a reason.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from droidlag.iolab.host.cgroups import WeightedGroups, find_weight_support, service_bytes
from droidlag.iolab.host.fio import finish_fio, fio_path, job_stats, reader_writer_jobs, run_fio, start_fio
from droidlag.iolab.host.loop import Loop, detach_leftovers, fs_type, interruptible, shielded
from droidlag.iolab.host.wam import format_wam, run_wam_lab

NOTE_VIRTUAL = ("This is a virtual disk / loop device over a file on the host: it shows scheduler and priority "
                "trends, not flash behaviour (no FTL, no NAND program/erase, host page cache beneath).")
NOTE_CG_V1 = ("cgroup v1: writeback by the kernel's flusher threads is charged to the root group, not to the "
              "writers' group (only cgroup v2 writeback follows the page's owner), so the weights govern the "
              "reader and the writers' own fsync-driven writeback; the rest of the writers' dirty data goes "
              "out unweighted (FAIO's point about kworker PIDs).")
POLICIES = ["none", "mq-deadline", "kyber", "bfq", "bfq+ioprio", "mq-deadline+ioprio", "bfq+cgroup-weights"]
EXPERIMENTS = ("policies", "wam")

_Loop, _fs_type = Loop, fs_type  # older names


def _measure(jobdir: Path, target: str, runtime_s: int, size: str | None, **kw) -> dict:
    alone = job_stats(run_fio(reader_writer_jobs(target, runtime_s, False, target_is_file_size=size, **kw),
                              str(jobdir / "alone.fio"), timeout_s=runtime_s * 4 + 60))
    loaded = job_stats(run_fio(reader_writer_jobs(target, runtime_s, True, target_is_file_size=size, **kw),
                               str(jobdir / "loaded.fio"), timeout_s=runtime_s * 6 + 120))
    return _slowdown(alone, loaded)


def _slowdown(alone: dict, loaded: dict) -> dict:
    a, b = alone["reader"], loaded["reader"]
    slowdown = (b["mean_ms"] / a["mean_ms"] - 1) * 100 if a and b and a["mean_ms"] else None
    return {"alone": a, "loaded": b, "writers_mb_s": loaded["writers_mb_s"], "read_slowdown_pct": slowdown}


def _measure_cgroups(jobdir: Path, target: str, runtime_s: int, groups: WeightedGroups) -> dict:
    """The reader in the foreground group, alone and then beside the writers, who run as a second fio
    process in the background group."""
    fg, bg = str(groups.procs_file("fg")), str(groups.procs_file("bg"))
    alone = job_stats(finish_fio(start_fio(reader_writer_jobs(target, runtime_s, False), str(jobdir / "cg-alone.fio"),
                                           fg), runtime_s * 4 + 60))
    procs = []
    try:
        procs.append(start_fio(reader_writer_jobs(target, runtime_s, True, with_reader=False),
                               str(jobdir / "cg-writers.fio"), bg))
        procs.append(start_fio(reader_writer_jobs(target, runtime_s, False), str(jobdir / "cg-reader.fio"), fg))
        reader = job_stats(finish_fio(procs[1], runtime_s * 6 + 120))
        writers = job_stats(finish_fio(procs[0], runtime_s * 6 + 120))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return _slowdown(alone, {"reader": reader["reader"], "writers_mb_s": writers["writers_mb_s"]})


def _run_policies(res: dict, scratch: Path, size_mb: int, runtime_s: int, policies: list[str] | None,
                  cgroup_weights: tuple[int, int]) -> None:
    image = scratch / "disk.img"
    with open(image, "wb") as f:
        f.truncate(size_mb * 1024 * 1024)
    # fill it so reads hit real blocks, not holes
    subprocess.run(["dd", "if=/dev/zero", f"of={image}", "bs=1M", f"count={size_mb}", "conv=notrunc"],
                   capture_output=True, timeout=300)
    loop = None
    can_loop = os.geteuid() == 0 and shutil.which("losetup") is not None
    try:
        if can_loop:
            try:
                loop = Loop(image)
            except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                res["skipped"].append({"experiment": "loop device", "reason": str(e)})
        else:
            res["skipped"].append({"experiment": "loop device, schedulers, priorities, cgroup weights",
                                   "reason": "needs root and losetup"})
        if loop is None:
            r = _measure(scratch, str(image), runtime_s, None, direct_reader=False)
            res["runs"].append({"policy": "default (file, no loop device)", **r})
            return
        res["device"] = loop.dev
        res["original_scheduler"] = loop.original
        avail = loop.schedulers()
        for pol in policies or POLICIES:
            _run_policy(res, loop, avail, pol, scratch, runtime_s, cgroup_weights)
    finally:
        with shielded():
            if loop is not None:
                loop.close()
                res["restored_scheduler"] = loop.original
            elif can_loop:
                detach_leftovers(image)


def _run_policy(res: dict, loop: Loop, avail: list[str], pol: str, scratch: Path, runtime_s: int,
                cgroup_weights: tuple[int, int]) -> None:
    """One policy (`sched`, `sched+ioprio` or `sched+cgroup-weights`) on the loop device: checked, then measured;
    what cannot run is recorded in res['skipped'] with its reason."""
    sched, _, extra = pol.partition("+")
    if sched not in avail:
        res["skipped"].append({"experiment": pol, "reason": f"scheduler {sched} not offered by this kernel"})
        return
    if extra not in ("", "ioprio", "cgroup-weights"):
        res["skipped"].append({"experiment": pol, "reason": f"unknown policy modifier {extra!r}"})
        return
    kw: dict = {}
    if extra == "ioprio":
        kw = {"reader_prio": (1, 0), "writer_prio": (3, 0)}  # RT reader, idle writers
    support = find_weight_support() if extra == "cgroup-weights" else None
    if isinstance(support, str):
        res["skipped"].append({"experiment": pol, "reason": support})
        return
    try:
        loop.set_scheduler(sched)
        if sched == "bfq":
            ll = Path(f"/sys/block/{loop.name}/queue/iosched/low_latency")
            if ll.exists():
                ll.write_text("1")  # BFQ's own heuristics on (its default)
        if support is None:
            r = _measure(scratch, loop.dev, runtime_s, None, **kw)
            res["runs"].append({"policy": pol, **r})
            return
        _run_weighted(res, loop, pol, scratch, runtime_s, support, cgroup_weights)
    except (RuntimeError, OSError, subprocess.SubprocessError, ValueError) as e:
        res["skipped"].append({"experiment": pol, "reason": str(e)[:300]})


def _run_weighted(res: dict, loop: Loop, pol: str, scratch: Path, runtime_s: int, support: tuple[Path, int],
                  cgroup_weights: tuple[int, int]) -> None:
    """The reader and the writers in two weighted cgroups; the bytes each group was charged on the device."""
    root, version = support
    groups = WeightedGroups(root, version, {"fg": cgroup_weights[0], "bg": cgroup_weights[1]})
    try:
        with groups:
            r = _measure_cgroups(scratch, loop.dev, runtime_s, groups)
            devno = Path(f"/sys/block/{loop.name}/dev").read_text().strip()
            charged = service_bytes(groups, devno)
    finally:
        res.setdefault("cgroups_created", []).append(str(groups.parent))
    r["cgroup"] = {"version": version, "root": str(root), "group": str(groups.parent),
                   "weight_file": groups.weight_file, "fg_weight": cgroup_weights[0],
                   "bg_weight": cgroup_weights[1], "charged_bytes": charged}
    res["runs"].append({"policy": pol, **r})
    if version == 1 and NOTE_CG_V1 not in res["notes"]:
        res["notes"].append(NOTE_CG_V1)


def run_host_lab(size_mb: int = 256, runtime_s: int = 6, scratch_parent: str | None = None,
                 policies: list[str] | None = None, experiments: list[str] | tuple = EXPERIMENTS,
                 cgroup_weights: tuple[int, int] = (1000, 100), wam_rounds: int = 2) -> dict:
    """Run the host experiments: 'policies' (schedulers, I/O priorities, cgroup weights; needs fio) and 'wam'
    (ext4 discard vs fstrim; needs root, mkfs.ext4, mount, fstrim). `size_mb` sizes the fio image and the data
    the WAM experiment fills and deletes per round. Returns {'runs': [...], 'skipped': [...], 'notes': [...],
    'wam': {...}}."""
    res: dict = {"runs": [], "skipped": [], "notes": [NOTE_VIRTUAL] if "policies" in experiments else []}
    unknown = [e for e in experiments if e not in EXPERIMENTS]
    for e in unknown:
        res["skipped"].append({"experiment": e, "reason": f"unknown experiment; choose from {', '.join(EXPERIMENTS)}"})
    with interruptible():
        if "policies" in experiments:
            if fio_path() is None:
                res["skipped"].append({"experiment": "all" if "wam" not in experiments else "policies",
                                       "reason": "fio not installed (apt-get install fio)"})
            else:
                scratch = Path(tempfile.mkdtemp(prefix="droidlag-iolab-", dir=scratch_parent))
                res["scratch"] = str(scratch)
                res["scratch_fs"] = fs_type(scratch)
                if res["scratch_fs"] in ("tmpfs", "ramfs"):
                    res["notes"].append("The scratch image lives in host memory (tmpfs): latencies are memory-speed.")
                try:
                    _run_policies(res, scratch, size_mb, runtime_s, policies, cgroup_weights)
                finally:
                    with shielded():
                        shutil.rmtree(scratch, ignore_errors=True)
        if "wam" in experiments:
            res["wam"] = run_wam_lab(size_mb=size_mb, rounds=wam_rounds, scratch_parent=scratch_parent)
    return res


def format_host(res: dict) -> str:
    lines = []
    if res["runs"] or res.get("device"):
        lines.append("host lab: foreground random 4 KB reader vs 2 buffered writers (fsync every 32 MB)")
    if res.get("device"):
        lines.append(f"  device {res['device']} (created by the lab; scheduler was {res.get('original_scheduler')},"
                     f" restored), scratch on {res.get('scratch_fs')}")
    if res["runs"]:
        lines.append(f"  {'policy':<22}{'alone ms':>10}{'loaded ms':>11}{'p99 alone':>11}{'p99 loaded':>12}"
                     f"{'slowdown':>10}{'BG MB/s':>9}")
    for r in res["runs"]:
        a, b = r["alone"] or {}, r["loaded"] or {}
        sd = f"{r['read_slowdown_pct']:.0f}%" if r["read_slowdown_pct"] is not None else "-"
        lines.append(f"  {r['policy']:<22}{a.get('mean_ms', 0):10.3f}{b.get('mean_ms', 0):11.3f}"
                     f"{a.get('p99_ms', 0):11.3f}{b.get('p99_ms', 0):12.3f}{sd:>10}{r['writers_mb_s']:9.0f}")
    for r in res["runs"]:
        cg = r.get("cgroup")
        if cg:
            ch = cg.get("charged_bytes") or {}
            mb = {g: (f"read {v['read'] / 2**20:.0f} MB, write {v['write'] / 2**20:.0f} MB" if v else "?")
                  for g, v in ch.items()}
            lines.append(f"  {r['policy']}: cgroup v{cg['version']} {cg['weight_file']} reader {cg['fg_weight']} / "
                         f"writers {cg['bg_weight']} under {cg['group']} (removed); charged to reader's group: "
                         f"{mb.get('fg', '?')}; to writers' group: {mb.get('bg', '?')}")
    for s in res["skipped"]:
        lines.append(f"  skipped {s['experiment']}: {s['reason']}")
    for n in res["notes"]:
        lines.append(f"  note: {n}")
    if res.get("wam"):
        lines.append(format_wam(res["wam"]))
    return "\n".join(lines)


__all__ = ["run_host_lab", "format_host", "run_wam_lab", "format_wam", "POLICIES", "EXPERIMENTS"]
