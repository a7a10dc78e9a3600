"""The one interface every I/O policy implements: a block scheduler, a few switches the page cache and the
device read (lock preemption, LBA hand-over, in-device preemption, page protection), and hooks for
priority inheritance. Baselines leave everything off."""
from __future__ import annotations

from collections import deque
from typing import Any


class Policy:
    name = "base"
    description = ""
    fpm = False  # FAIO page manager: FG waiter first on the page-cache lock; BG holder yields at checkpoints
    fid = False  # FAIO I/O dispatcher: FG requests (and FG data written back by the kworker) skip the queue
    device_preempt = False  # FastTrack: FG writes overtake BG writes inside the device queue
    protect_fg_pages = False  # FastTrack: reclaim takes background apps' pages before the FG app's

    def make_scheduler(self):
        raise NotImplementedError

    def classify(self, req, stack) -> None:
        """Mark `req.fg`: submitted by the foreground app, or (when the page manager hands LBAs over) the FG
        app's data written back by the kworker."""
        if stack is None:
            return
        fg_uid = stack.fg.uid
        req.fg = req.uid == fg_uid or (self.fid and req.lba in stack.fg_lbas)

    def on_wait(self, req, task, blk) -> None:
        """A task blocks on `req`'s completion (inheritance policies boost here)."""

    def on_lock_contended(self, lock, waiter) -> None:
        """`waiter` found the page-cache lock held (inheritance at the page cache hooks here)."""

    def on_lock_release(self, holder) -> None:
        pass

    def lock_priority(self, task, stack) -> int:
        return 0


class FifoScheduler:
    """noop: one FIFO."""

    def __init__(self):
        self.q: deque = deque()
        self.blk: Any = None  # the BlockLayer, set by attach()

    def attach(self, blk) -> None:
        self.blk = blk

    def add(self, req, now: int) -> None:
        self.q.append(req)

    def next(self, now: int):
        return self.q.popleft() if self.q else None

    def completed(self, req) -> None:
        pass

    def boost(self, req) -> None:
        pass

    def __len__(self) -> int:
        return len(self.q)


class TwoLevelScheduler:
    """Two FIFOs, high then low; `is_high(req)` decides; a boost moves a queued request to the high FIFO."""

    def __init__(self, is_high):
        self.high: deque = deque()
        self.low: deque = deque()
        self.is_high = is_high
        self.blk: Any = None  # the BlockLayer, set by attach()

    def attach(self, blk) -> None:
        self.blk = blk

    def add(self, req, now: int) -> None:
        (self.high if self.is_high(req) else self.low).append(req)

    def next(self, now: int):
        if self.high:
            return self.high.popleft()
        if self.low:
            return self.low.popleft()
        return None

    def completed(self, req) -> None:
        pass

    def boost(self, req) -> None:
        try:
            self.low.remove(req)
        except ValueError:
            return
        self.high.append(req)

    def __len__(self) -> int:
        return len(self.high) + len(self.low)
