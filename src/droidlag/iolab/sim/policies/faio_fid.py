"""faio-fid: FAIO's FG I/O dispatcher alone. Foreground requests go straight to the dispatch queue,
past whatever the stock scheduler (CFQ) holds. The kworker writes the FG app's dirty pages under its own
PID, so the page manager hands their LBAs over and the dispatcher recognises them."""
from __future__ import annotations

from collections import deque

from droidlag.iolab.sim.policies.base import Policy
from droidlag.iolab.sim.policies.cfq import CfqScheduler


class FidScheduler:
    """Foreground requests first (FIFO), then the wrapped scheduler."""

    def __init__(self, base):
        self.base = base
        self.fgq: deque = deque()

    def attach(self, blk) -> None:
        self.base.attach(blk)

    def add(self, req, now: int) -> None:
        if req.fg:
            self.fgq.append(req)
        else:
            self.base.add(req, now)

    def next(self, now: int):
        if self.fgq:
            return self.fgq.popleft()
        return self.base.next(now)

    def completed(self, req) -> None:
        self.base.completed(req)

    def boost(self, req) -> None:
        self.base.boost(req)

    def __len__(self) -> int:
        return len(self.fgq) + len(self.base)


class FaioFid(Policy):
    name = "faio-fid"
    description = "FG requests (and FG data the kworker writes back, by LBA) straight to the dispatch queue"
    fid = True

    def make_scheduler(self):
        return FidScheduler(CfqScheduler())
