"""faio-fpm: FAIO's FG page manager alone. A foreground task waiting for the page-cache lock is served
before background waiters, and a background lock holder releases the lock at its next checkpoint (the
next 128 KB segment of a copy or of reclaim; a holder asleep on a writeback I/O in reclaim is at a
checkpoint already and is woken to hand the lock over, see PageCache._wake_io_sleeper); the FG task takes its pages first (reclaiming clean pages
without waiting on dirty ones), then the background work resumes where it stopped. System processes are
never preempted. The block layer stays stock CFQ."""
from __future__ import annotations

from droidlag.iolab.sim.policies.base import Policy
from droidlag.iolab.sim.policies.cfq import CfqScheduler


class FaioFpm(Policy):
    name = "faio-fpm"
    description = "page-cache lock handed to the FG app at the next checkpoint; FG allocations first"
    fpm = True

    def make_scheduler(self):
        return CfqScheduler()

    def lock_priority(self, task, stack) -> int:
        return 0 if task.uid == stack.fg.uid else 1
