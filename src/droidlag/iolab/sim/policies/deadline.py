"""deadline: reads preferred in batches; a write batch when writes were passed over `writes_starved` times
or the oldest write is past its 5 s deadline (reads: 500 ms)."""
from __future__ import annotations

from collections import deque
from typing import Any

from droidlag.iolab.sim.device import OP_READ
from droidlag.iolab.sim.engine import MS
from droidlag.iolab.sim.policies.base import Policy


class DeadlineScheduler:
    def __init__(self, read_expire_ns=500 * MS, write_expire_ns=5000 * MS, fifo_batch=16, writes_starved=2):
        self.reads: deque = deque()
        self.writes: deque = deque()
        self.read_expire = read_expire_ns
        self.write_expire = write_expire_ns
        self.fifo_batch = fifo_batch
        self.writes_starved = writes_starved
        self.batch_reads = True
        self.batch_left = 0
        self.starved = 0
        self.blk: Any = None  # the BlockLayer, set by attach()

    def attach(self, blk) -> None:
        self.blk = blk

    def add(self, req, now: int) -> None:
        (self.reads if req.op == OP_READ else self.writes).append(req)

    def next(self, now: int):
        if self.batch_left > 0:
            q = self.reads if self.batch_reads else self.writes
            if q and not (self.batch_reads and self.writes and
                          now - self.writes[0].submit_ns >= self.write_expire):
                self.batch_left -= 1
                return q.popleft()
        if self.reads:
            write_due = self.writes and (self.starved >= self.writes_starved or
                                         now - self.writes[0].submit_ns >= self.write_expire)
            if write_due:
                self.batch_reads, self.starved = False, 0
            else:
                self.batch_reads = True
                if self.writes:
                    self.starved += 1
        elif self.writes:
            self.batch_reads = False
        else:
            return None
        self.batch_left = self.fifo_batch - 1
        return (self.reads if self.batch_reads else self.writes).popleft()

    def completed(self, req) -> None:
        pass

    def boost(self, req) -> None:
        pass

    def __len__(self) -> int:
        return len(self.reads) + len(self.writes)


class Deadline(Policy):
    name = "deadline"
    description = "read-preferring batches with per-direction deadlines"

    def make_scheduler(self):
        return DeadlineScheduler()
