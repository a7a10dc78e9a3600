"""Loop devices the host lab creates, and interrupt handling shared by its experiments."""
from __future__ import annotations

import os
import re
import signal
import subprocess
from contextlib import contextmanager
from pathlib import Path

_MOUNTS_ESCAPE = re.compile(r"\\([0-7]{3})")


def proc_mounts() -> list[tuple[str, str, str, str]]:
    """(device, mount point, fs type, options) of every mount on this machine (see parse_mounts)."""
    try:
        return parse_mounts(Path("/proc/mounts").read_text())
    except OSError:
        return []


def parse_mounts(text: str) -> list[tuple[str, str, str, str]]:
    """(device, mount point, fs type, options) per /proc/mounts line, with its octal escapes (\\040 for a space,
    \\011, \\012, \\134) decoded, so paths compare with what the lab created."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) > 3:
            dev, mnt = (_MOUNTS_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), x) for x in parts[:2])
            out.append((dev, mnt, parts[2], parts[3]))
    return out


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def fs_type(path: Path) -> str:
    best, fstype = "", "?"
    for _dev, mnt, typ, _opts in proc_mounts():
        if _under(str(path), mnt) and len(mnt) > len(best):
            best, fstype = mnt, typ
    return fstype


class Loop:
    """A loop device this lab created over its own image; remembers and restores its scheduler; detaches on
    close."""

    def __init__(self, image: Path, direct_io: bool = True):
        self.image = Path(image).resolve()
        p = None
        if direct_io:
            p = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(self.image)],
                               capture_output=True, text=True, timeout=30)
        if p is None or p.returncode != 0:
            p = subprocess.run(["losetup", "--find", "--show", str(self.image)], capture_output=True, text=True,
                               timeout=30)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.strip() or "losetup failed")
        self.dev = p.stdout.strip()
        self.name = os.path.basename(self.dev)
        self.sched_file = Path(f"/sys/block/{self.name}/queue/scheduler")
        self.original = self.current_scheduler()
        self.closed = False

    def backing_file(self) -> str | None:
        p = subprocess.run(["losetup", "--list", "--noheadings", "--output", "BACK-FILE", self.dev],
                           capture_output=True, text=True, timeout=30)
        return p.stdout.strip() or None if p.returncode == 0 else None

    def ensure_ours(self) -> None:
        """Refuse to go on (e.g. to mkfs) unless the device is still backed by the lab's own image."""
        back = self.backing_file()
        if back is None or Path(back.replace(" (deleted)", "")).resolve() != self.image:
            raise RuntimeError(f"{self.dev} is backed by {back!r}, not the lab's image {self.image}: refusing")

    def direct_io(self) -> bool | None:
        try:
            return Path(f"/sys/block/{self.name}/loop/dio").read_text().strip() == "1"
        except OSError:
            return None

    def discard_max_bytes(self) -> int | None:
        try:
            return int(Path(f"/sys/block/{self.name}/queue/discard_max_bytes").read_text())
        except (OSError, ValueError):
            return None

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
        if self.closed:
            return
        try:
            if self.original and self.current_scheduler() != self.original:
                self.set_scheduler(self.original)
        finally:
            subprocess.run(["losetup", "-d", self.dev], capture_output=True, timeout=30)
            self.closed = True


def detach_leftovers(image: Path) -> None:
    """Detach loop devices over the lab's own image that an interrupt left without a Loop object (e.g. one
    arriving between losetup attaching the device and printing its name)."""
    p = subprocess.run(["losetup", "--list", "--associated", str(image), "--noheadings", "--output", "NAME"],
                       capture_output=True, text=True, timeout=30)
    for dev in p.stdout.split():
        if dev.startswith("/dev/loop"):
            subprocess.run(["losetup", "-d", dev], capture_output=True, timeout=30)


def loops_over(path) -> list[str]:
    """`losetup -a` lines whose backing file lies under `path` (for leak checks)."""
    p = subprocess.run(["losetup", "-a"], capture_output=True, text=True, timeout=30)
    return [ln for ln in p.stdout.splitlines() if str(path) in ln]


def mounts_under(path) -> list[str]:
    """Mount points at or below path."""
    return [mnt for _dev, mnt, _typ, _opts in proc_mounts() if _under(mnt, str(path))]


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


@contextmanager
def interruptible():
    """SIGTERM raises KeyboardInterrupt like Ctrl-C does, so the experiments' `finally` cleanup runs."""
    try:
        old = signal.signal(signal.SIGTERM, _raise_interrupt)
    except ValueError:  # not the main thread
        old = None
    try:
        yield
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


@contextmanager
def shielded():
    """Cleanup a second Ctrl-C or SIGTERM must not cut short (each step has its own timeout)."""
    olds = {}
    for s in (signal.SIGINT, signal.SIGTERM):
        try:
            olds[s] = signal.signal(s, signal.SIG_IGN)
        except ValueError:
            pass
    try:
        yield
    finally:
        for s, h in olds.items():
            signal.signal(s, h)
