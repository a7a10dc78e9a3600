"""Block-I/O cgroup weights for the host lab: find where this machine lets a process get a BFQ weight
(cgroup v2 `io.bfq.weight` / `io.weight`, or cgroup v1 `blkio.bfq.weight` / `blkio.weight`), create a
foreground and a background group under one uniquely named parent, put processes in them, and remove them.

fio's own `cgroup=` option only knows `blkio.weight`, which kernels without CFQ no longer offer (BFQ's file
is `blkio.bfq.weight`), hence fio's "err=13 ... func=cgroup open weight" failure. The lab instead starts each
fio process through a tiny shell wrapper that first writes its own pid into the group's `cgroup.procs`."""
from __future__ import annotations

import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

V1_WEIGHT_FILES = ("blkio.bfq.weight", "blkio.weight")
V2_WEIGHT_FILES = ("io.bfq.weight", "io.weight")


def parse_cgroup_mounts(mounts_text: str) -> dict:
    """{'v1_blkio': mountpoint or None, 'v2': mountpoint or None} from /proc/mounts text."""
    out: dict[str, str | None] = {"v1_blkio": None, "v2": None}
    for line in mounts_text.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        mnt, fstype, opts = parts[1].replace("\\040", " "), parts[2], parts[3].split(",")
        if fstype == "cgroup" and "blkio" in opts and out["v1_blkio"] is None:
            out["v1_blkio"] = mnt
        elif fstype == "cgroup2" and out["v2"] is None:
            out["v2"] = mnt
    return out


def pick_weight_file(names: list[str] | set[str], version: int) -> str | None:
    """The weight file BFQ honours, from the files a child cgroup offers."""
    for f in (V1_WEIGHT_FILES if version == 1 else V2_WEIGHT_FILES):
        if f in names:
            return f
    return None


@dataclass
class WeightedGroups:
    """A parent cgroup `droidlag-<token>` with children `fg` and `bg`, each with a weight. Use as a context
    manager; removal kills and waits for any process still inside (only the lab's own fio processes can be
    there) and restores the one setting it may change (v2: the root's +io in cgroup.subtree_control)."""
    root: Path
    version: int
    weights: dict = field(default_factory=lambda: {"fg": 1000, "bg": 100})
    parent: Path | None = None
    weight_file: str | None = None
    _root_io_enabled_by_us: bool = False

    def create(self) -> WeightedGroups:
        self.parent = self.root / f"droidlag-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        if self.version == 2:
            ctl = self.root / "cgroup.controllers"
            if "io" not in ctl.read_text().split():
                raise RuntimeError(f"cgroup v2 at {self.root} offers no io controller (it is bound to v1 "
                                   f"blkio or not built)")
            sub = self.root / "cgroup.subtree_control"
            if "io" not in sub.read_text().split():
                sub.write_text("+io")
                self._root_io_enabled_by_us = True
        self.parent.mkdir()
        if self.version == 2:
            (self.parent / "cgroup.subtree_control").write_text("+io")
        for name, w in self.weights.items():
            d = self.parent / name
            d.mkdir()
            wf = pick_weight_file({p.name for p in d.iterdir()}, self.version)
            if wf is None:
                raise RuntimeError(f"no {' or '.join(V1_WEIGHT_FILES if self.version == 1 else V2_WEIGHT_FILES)} "
                                   f"in {d} (BFQ without cgroup support?)")
            (d / wf).write_text(str(w))
            got = (d / wf).read_text().split()
            if str(w) not in got:
                raise RuntimeError(f"{d / wf} reads {' '.join(got)} after writing {w}")
            self.weight_file = wf
        return self

    def procs_file(self, name: str) -> Path:
        assert self.parent is not None
        return self.parent / name / "cgroup.procs"

    def remove(self) -> list[str]:
        """Remove the groups; returns problems (empty when everything is gone)."""
        problems: list[str] = []
        if self.parent is not None and self.parent.is_dir():
            for name in self.weights:
                d = self.parent / name
                if not d.is_dir():
                    continue
                for _ in range(50):
                    try:
                        d.rmdir()
                        break
                    except OSError:
                        _evict(d)
                        time.sleep(0.1)
                else:
                    problems.append(f"could not remove {d}")
            try:
                self.parent.rmdir()
            except OSError as e:
                problems.append(f"could not remove {self.parent}: {e}")
        if self._root_io_enabled_by_us:
            try:
                (self.root / "cgroup.subtree_control").write_text("-io")
            except OSError:
                pass  # another cgroup started using io meanwhile: leave it on
            self._root_io_enabled_by_us = False
        return problems

    def __enter__(self):
        try:
            return self.create()
        except BaseException:
            self.remove()
            raise

    def __exit__(self, *exc):
        self.remove()


def _evict(d: Path) -> None:
    """Processes left in one of the lab's own groups are the lab's own fio children: end them."""
    try:
        pids = [int(x) for x in (d / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def find_weight_support(mounts_text: str | None = None) -> tuple[Path, int] | str:
    """(cgroup root, version) where a weighted group can be made, or the reason it cannot."""
    if os.geteuid() != 0:
        return "needs root to create cgroups"
    if mounts_text is None:
        try:
            mounts_text = Path("/proc/mounts").read_text()
        except OSError as e:
            return f"cannot read /proc/mounts: {e}"
    m = parse_cgroup_mounts(mounts_text)
    reasons = []
    if m["v2"]:
        root = Path(m["v2"])
        try:
            if "io" in (root / "cgroup.controllers").read_text().split():
                return root, 2
            reasons.append(f"cgroup v2 at {root} has no io controller")
        except OSError as e:
            reasons.append(f"cgroup v2 at {root}: {e}")
    if m["v1_blkio"]:
        return Path(m["v1_blkio"]), 1
    reasons.append("no cgroup v1 blkio hierarchy mounted")
    return "; ".join(reasons)


def parse_service_bytes(text: str, devno: str, version: int) -> dict:
    """Bytes read/written on device `devno` ('7:0') from v1 `blkio.bfq.io_service_bytes` ('7:0 Read 4096')
    or v2 `io.stat` ('7:0 rbytes=4096 wbytes=0 ...')."""
    out = {"read": 0, "write": 0}
    for line in text.splitlines():
        parts = line.split()
        if not parts or parts[0] != devno:
            continue
        if version == 1 and len(parts) == 3 and parts[1] in ("Read", "Write"):
            out[parts[1].lower()] += int(parts[2])
        elif version == 2:
            kv = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
            out["read"] += int(kv.get("rbytes", 0))
            out["write"] += int(kv.get("wbytes", 0))
    return out


def service_bytes(groups: WeightedGroups, devno: str) -> dict:
    """Per group, bytes the block layer charged to it on the device (None where the file is missing)."""
    names = ("blkio.bfq.io_service_bytes", "blkio.throttle.io_service_bytes") if groups.version == 1 else ("io.stat",)
    out: dict = {}
    for g in groups.weights:
        out[g] = None
        for n in names:
            f = groups.parent / g / n if groups.parent else None
            if f is not None and f.exists():
                try:
                    out[g] = parse_service_bytes(f.read_text(), devno, groups.version)
                    break
                except (OSError, ValueError):
                    pass
    return out
