"""Apps, their tasks, and the foreground-app detector.

User apps have UIDs 10000-19999; system processes (zygote, system_server, wifi, phone, the kworker) have
UIDs below 10000 and are never preempted by the foreground policies."""
from __future__ import annotations

from itertools import count

FIRST_APP_UID = 10000


class Task:
    """A thread that does I/O. `ioprio_class` is rt/be/idle (CFQ), `ioprio` 0..7."""

    __slots__ = ("name", "pid", "uid", "app", "ioprio_class", "ioprio", "boosted", "waiting_req",
                 "lock_wait_ns", "lock_waits")

    def __init__(self, name: str, pid: int, uid: int, app=None, ioprio_class: str = "be", ioprio: int = 4):
        self.name = name
        self.pid = pid
        self.uid = uid
        self.app = app
        self.ioprio_class = ioprio_class
        self.ioprio = ioprio
        self.boosted = False
        self.waiting_req = None
        self.lock_wait_ns = 0
        self.lock_waits = 0

    @property
    def is_system(self) -> bool:
        return self.uid < FIRST_APP_UID

    def __repr__(self) -> str:
        return f"Task({self.name} pid={self.pid} uid={self.uid})"


class App:
    """An app (or system service): a UID and its tasks."""

    def __init__(self, name: str, uid: int, pids: count):
        self.name = name
        self.uid = uid
        self._pids = pids
        self.tasks: list[Task] = []

    def task(self, name: str | None = None, ioprio_class: str = "be", ioprio: int = 4) -> Task:
        t = Task(name or f"{self.name}/{len(self.tasks)}", next(self._pids), self.uid, self, ioprio_class, ioprio)
        self.tasks.append(t)
        return t

    @property
    def is_system(self) -> bool:
        return self.uid < FIRST_APP_UID


class ForegroundDetector:
    """Knows the UID of the app with the top activity (FAIO/FastTrack's FG app detector) and when it changed."""

    def __init__(self):
        self.uid = -1
        self.history: list[tuple[int, int]] = []
        self.listeners: list = []

    def set_top(self, uid: int, now: int) -> None:
        if uid == self.uid:
            return
        self.uid = uid
        self.history.append((now, uid))
        for cb in self.listeners:
            cb(uid)

    def is_fg(self, task: Task) -> bool:
        return task.uid == self.uid
