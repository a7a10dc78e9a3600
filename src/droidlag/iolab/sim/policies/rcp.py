"""rcp: request-centric prioritization. Requests of critical tasks (the foreground app) are high; the
priority is inherited through the page cache: a task holding the page-cache lock a critical task waits for
becomes critical until it releases it, and the requests it issues or waits on meanwhile are boosted.
The holder still finishes its work before it releases the lock: bulk work stays in the way."""
from __future__ import annotations

from droidlag.iolab.sim.policies.base import Policy
from droidlag.iolab.sim.policies.cfq import BoostableCfq


def _critical(task, stack) -> bool:
    return task.boosted or (stack is not None and task.uid == stack.fg.uid)


class Rcp(Policy):
    name = "rcp"
    description = "critical (FG) requests high; priority inherited by page-cache lock holders and the I/O they wait on"

    def __init__(self):
        self.stack = None

    def make_scheduler(self):
        return BoostableCfq(is_high=lambda req: req.fg or req.task.boosted)

    def on_wait(self, req, task, blk) -> None:
        if _critical(task, blk.stack):
            blk.boost(req)

    def on_lock_contended(self, lock, waiter) -> None:
        holder = lock.holder
        stack = self.stack
        if holder is None or not _critical(waiter, stack) or holder.boosted:
            return
        holder.boosted = True
        req = holder.waiting_req
        if req is not None and stack is not None:
            stack.blk.boost(req)

    def on_lock_release(self, holder) -> None:
        holder.boosted = False
