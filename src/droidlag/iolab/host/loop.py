"""Loop devices the host lab creates, and interrupt handling shared by its experiments."""
from __future__ import annotations

import os
import signal
import subprocess
from contextlib import contextmanager
from pathlib import Path


def fs_type(path: Path) -> str:
    best, fstype = "", "?"
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) > 2 and str(path).startswith(parts[1]) and len(parts[1]) > len(best):
                best, fstype = parts[1], parts[2]
    except OSError:
        pass
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
    try:
        lines = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return []
    return [ln for ln in lines if len(ln.split()) > 1 and ln.split()[1].startswith(str(path))]


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
