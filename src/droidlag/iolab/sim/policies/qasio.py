"""qasio: priority inheritance at the block layer. Sync requests are high, async low; an async request
that a task waits on synchronously (fsync waiting on kworker writeback, reclaim waiting on a page under
writeback: a quasi-asynchronous I/O) is boosted to high. It sees requests, not locks."""
from __future__ import annotations

from droidlag.iolab.sim.policies.base import Policy
from droidlag.iolab.sim.policies.cfq import BoostableCfq


class Qasio(Policy):
    name = "qasio"
    description = "sync high, async low; async requests a sync waiter depends on are boosted"

    def make_scheduler(self):
        return BoostableCfq(is_high=lambda req: req.sync)

    def on_wait(self, req, task, blk) -> None:
        if not req.sync:
            blk.boost(req)
