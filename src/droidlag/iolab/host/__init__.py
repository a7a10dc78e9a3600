"""The host lab: the simulator's questions asked of the real kernel. A random foreground reader (an app
launch) runs alone and beside buffered background writers with fsync (an app update), on a loop device this
lab creates over a scratch image, under each block scheduler the kernel offers, with I/O priority classes
(reader real-time, writers idle) and cgroup weights where the machine allows, and the read slowdown
(latency with writers / alone, SmartIO's definition) is reported per policy.

Safety: everything lives in a scratch directory the lab creates and removes (also on Ctrl-C/SIGTERM); it
only changes the scheduler of the loop device it created and restores it; it detaches that device. Whatever
the machine does not allow (no fio, no root, no loop devices, a missing scheduler) is skipped with a reason.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from droidlag.iolab.host.fio import fio_path, job_stats, reader_writer_jobs, run_fio

NOTE_VIRTUAL = ("This is a virtual disk / loop device over a file on the host: it shows scheduler and priority "
                "trends, not flash behaviour (no FTL, no NAND program/erase, host page cache beneath).")


def _fs_type(path: Path) -> str:
    best, fstype = "", "?"
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) > 2 and str(path).startswith(parts[1]) and len(parts[1]) > len(best):
                best, fstype = parts[1], parts[2]
    except OSError:
        pass
    return fstype


class _Loop:
    """A loop device this lab created; remembers and restores its scheduler; detaches on close."""

    def __init__(self, image: Path):
        p = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(image)], capture_output=True,
                           text=True, timeout=30)
        if p.returncode != 0:
            p = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True, text=True, timeout=30)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.strip() or "losetup failed")
        self.dev = p.stdout.strip()
        self.name = os.path.basename(self.dev)
        self.sched_file = Path(f"/sys/block/{self.name}/queue/scheduler")
        self.original = self.current_scheduler()

    def schedulers(self) -> list[str]:
        try:
            return self.sched_file.read_text().replace("[", "").replace("]", "").split()
        except OSError:
            return []

    def current_scheduler(self) -> str | None:
        try:
            t = self.sched_file.read_text()
            return t[t.index("[") + 1:t.index("]")] if "[" in t else None
        except (OSError, ValueError):
            return None

    def set_scheduler(self, name: str) -> None:
        self.sched_file.write_text(name)

    def close(self) -> None:
        try:
            if self.original and self.current_scheduler() != self.original:
                self.set_scheduler(self.original)
        finally:
            subprocess.run(["losetup", "-d", self.dev], capture_output=True, timeout=30)


def _measure(jobdir: Path, target: str, runtime_s: int, size: str | None, **kw) -> dict:
    alone = job_stats(run_fio(reader_writer_jobs(target, runtime_s, False, target_is_file_size=size, **kw),
                              str(jobdir / "alone.fio"), timeout_s=runtime_s * 4 + 60))
    loaded = job_stats(run_fio(reader_writer_jobs(target, runtime_s, True, target_is_file_size=size, **kw),
                               str(jobdir / "loaded.fio"), timeout_s=runtime_s * 6 + 120))
    a, b = alone["reader"], loaded["reader"]
    slowdown = (b["mean_ms"] / a["mean_ms"] - 1) * 100 if a and b and a["mean_ms"] else None
    return {"alone": a, "loaded": b, "writers_mb_s": loaded["writers_mb_s"], "read_slowdown_pct": slowdown}


def run_host_lab(size_mb: int = 256, runtime_s: int = 6, scratch_parent: str | None = None,
                 policies: list[str] | None = None) -> dict:
    """Run the host experiments; returns {'runs': [...], 'skipped': [...], 'notes': [...]}."""
    res: dict = {"runs": [], "skipped": [], "notes": [NOTE_VIRTUAL]}
    if fio_path() is None:
        res["skipped"].append({"experiment": "all", "reason": "fio not installed (apt-get install fio)"})
        return res
    scratch = Path(tempfile.mkdtemp(prefix="droidlag-iolab-", dir=scratch_parent))
    res["scratch"] = str(scratch)
    res["scratch_fs"] = _fs_type(scratch)
    if res["scratch_fs"] in ("tmpfs", "ramfs"):
        res["notes"].append("The scratch image lives in host memory (tmpfs): latencies are memory-speed.")
    old_term = signal.getsignal(signal.SIGTERM)

    def _term(signum, frame):
        raise KeyboardInterrupt

    loop = None
    try:
        signal.signal(signal.SIGTERM, _term)
    except ValueError:  # not the main thread
        old_term = None
    try:
        image = scratch / "disk.img"
        with open(image, "wb") as f:
            f.truncate(size_mb * 1024 * 1024)
        # fill it so reads hit real blocks, not holes
        subprocess.run(["dd", "if=/dev/zero", f"of={image}", "bs=1M", f"count={size_mb}", "conv=notrunc"],
                       capture_output=True, timeout=300)
        can_loop = os.geteuid() == 0 and shutil.which("losetup") is not None
        if can_loop:
            try:
                loop = _Loop(image)
            except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                res["skipped"].append({"experiment": "loop device", "reason": str(e)})
        else:
            res["skipped"].append({"experiment": "loop device, schedulers, priorities",
                                   "reason": "needs root and losetup"})
        if loop is None:
            r = _measure(scratch, str(image), runtime_s, None, direct_reader=False)
            res["runs"].append({"policy": "default (file, no loop device)", **r})
            return res
        res["device"] = loop.dev
        res["original_scheduler"] = loop.original
        avail = loop.schedulers()
        wanted = policies or ["none", "mq-deadline", "kyber", "bfq", "bfq+ioprio", "mq-deadline+ioprio",
                              "bfq+cgroup-weights"]
        for pol in wanted:
            sched, _, extra = pol.partition("+")
            if sched not in avail:
                res["skipped"].append({"experiment": pol, "reason": f"scheduler {sched} not offered by this kernel"})
                continue
            kw: dict = {}
            if extra == "ioprio":
                kw = {"reader_prio": (1, 0), "writer_prio": (3, 0)}  # RT reader, idle writers
            elif extra == "cgroup-weights":
                if not Path("/sys/fs/cgroup/blkio").is_dir():
                    res["skipped"].append({"experiment": pol, "reason": "no cgroup v1 blkio hierarchy"})
                    continue
                kw = {"cgroups": (("droidlag-fg", 1000), ("droidlag-bg", 100))}
            try:
                loop.set_scheduler(sched)
                if sched == "bfq":
                    ll = Path(f"/sys/block/{loop.name}/queue/iosched/low_latency")
                    if ll.exists():
                        ll.write_text("1")  # BFQ's own heuristics on (its default)
                r = _measure(scratch, loop.dev, runtime_s, None, **kw)
                res["runs"].append({"policy": pol, **r})
            except (RuntimeError, OSError, subprocess.SubprocessError, ValueError) as e:
                res["skipped"].append({"experiment": pol, "reason": str(e)[:200]})
            finally:
                for cg in ("droidlag-fg", "droidlag-bg"):
                    d = Path("/sys/fs/cgroup/blkio") / cg
                    if d.is_dir():
                        try:
                            d.rmdir()
                        except OSError:
                            pass
        res["skipped"].append({"experiment": "ext4 discard vs fstrim (WAM) on the loop device",
                               "reason": "not implemented yet in the host lab"})
        return res
    finally:
        if loop is not None:
            loop.close()
            res["restored_scheduler"] = loop.original
        shutil.rmtree(scratch, ignore_errors=True)
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)


def format_host(res: dict) -> str:
    lines = ["host lab: foreground random 4 KB reader vs 2 buffered writers (fsync every 32 MB)"]
    if res.get("device"):
        lines.append(f"  device {res['device']} (created by the lab; scheduler was {res.get('original_scheduler')},"
                     f" restored), scratch on {res.get('scratch_fs')}")
    lines.append(f"  {'policy':<22}{'alone ms':>10}{'loaded ms':>11}{'p99 alone':>11}{'p99 loaded':>12}"
                 f"{'slowdown':>10}{'BG MB/s':>9}")
    for r in res["runs"]:
        a, b = r["alone"] or {}, r["loaded"] or {}
        sd = f"{r['read_slowdown_pct']:.0f}%" if r["read_slowdown_pct"] is not None else "-"
        lines.append(f"  {r['policy']:<22}{a.get('mean_ms', 0):10.3f}{b.get('mean_ms', 0):11.3f}"
                     f"{a.get('p99_ms', 0):11.3f}{b.get('p99_ms', 0):12.3f}{sd:>10}{r['writers_mb_s']:9.0f}")
    for s in res["skipped"]:
        lines.append(f"  skipped {s['experiment']}: {s['reason']}")
    for n in res["notes"]:
        lines.append(f"  note: {n}")
    return "\n".join(lines)
