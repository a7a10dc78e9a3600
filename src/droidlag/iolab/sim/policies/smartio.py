"""smartio: reads before writes, on top of stock CFQ (SmartIO modified CFQ, keeping its classes). Inside the
dispatch a third level puts reads ahead of writes in each class; a write that has waited 100 ms (a CFQ
slice) is served anyway (at least one such write per 100 ms, so a standing backlog cannot starve reads); a
concurrency profiler measures how many concurrent writes the device needs for full speed, and no more
writes are kept in flight while reads are waiting."""
from __future__ import annotations

from collections import deque
from functools import cache

from droidlag.iolab.sim.device import OP_READ, OP_WRITE, Device, DeviceProfile
from droidlag.iolab.sim.engine import MS, Engine
from droidlag.iolab.sim.policies.base import Policy
from droidlag.iolab.sim.policies.cfq import CLASS_ORDER, CfqScheduler


class _Probe:
    __slots__ = ("op", "nbytes", "fg", "lba")

    def __init__(self, op, nbytes):
        self.op, self.nbytes, self.fg, self.lba = op, nbytes, False, 0


@cache
def profile_concurrency(profile: DeviceProfile, op: int, nbytes: int, share: float = 0.9) -> int:
    """The smallest number of concurrent requests of this kind reaching `share` of the device's best
    throughput, measured by running them on a bare device model (SmartIO's concurrency profiler)."""
    best, rates = 0.0, []
    for n in range(1, profile.queue_depth + 1):
        eng = Engine(0)
        left = [200]
        dev = Device(eng, profile)

        def done(req, dev=dev, left=left):
            if left[0] > 0:
                left[0] -= 1
                dev.submit(_Probe(op, nbytes))

        dev.on_complete = done
        for _ in range(n):
            dev.submit(_Probe(op, nbytes))
        eng.run()
        rate = (200 + n) / max(eng.now, 1)
        rates.append(rate)
        best = max(best, rate)
    for n, r in enumerate(rates, 1):
        if r >= share * best:
            return n
    return profile.queue_depth


class SmartioScheduler(CfqScheduler):
    """CFQ's classes, queues and slices stay; inside the dispatch a third level puts reads ahead of writes
    (within each class, RT > BE > Idle), a write that has waited `write_bound` (a CFQ sync slice) is served
    anyway through CFQ's own choice, and while reads are in flight no more than the profiled number of
    writes is kept in the device."""

    def __init__(self, write_bound_ns: int = 100 * MS, write_concurrency: int = 1):
        super().__init__()
        self.reads: dict[str, deque] = {c: deque() for c in CLASS_ORDER}
        self.writes_fifo: deque = deque()  # every queued write in arrival order (for the bound)
        self.write_bound = write_bound_ns
        self.write_concurrency = write_concurrency
        self._last_due = -(1 << 62)
        self.last_read_done = -(1 << 62)
        self.read_idle_until = -1

    def attach(self, blk) -> None:
        super().attach(blk)
        self.write_concurrency = profile_concurrency(blk.device.p, OP_WRITE, 512 * 1024)

    def add(self, req, now: int) -> None:
        if req.op == OP_READ:
            self.reads[getattr(req.task, "ioprio_class", "be")].append(req)
        else:
            self.writes_fifo.append(req)
            super().add(req, now)

    def _write_due(self, now: int) -> bool:
        wf = self.writes_fifo
        while wf and wf[0].dispatch_ns >= 0:
            wf.popleft()
        return bool(wf) and now - wf[0].submit_ns >= self.write_bound

    def next(self, now: int):
        # an overdue write is served ahead of reads, at most one per bound period: under a standing backlog of
        # overdue writes, writes progress at least once per CFQ slice and reads keep their priority otherwise
        if now - self._last_due >= self.write_bound and self._write_due(now):
            req = super().next(now)
            if req is not None:
                self._last_due = now
                return req
        for cls in CLASS_ORDER:
            if self.reads[cls]:
                return self.reads[cls].popleft()
            if any(q for k, q in self.queues.items() if q and k[0] == cls):
                break  # a higher class has writes waiting: no reads of lower classes before them
        blk = self.blk
        if blk is not None and blk.inflight_reads and blk.inflight_writes >= self.write_concurrency:
            return None  # keep the device's remaining slots for reads
        if self.idle_enabled and blk is not None and not blk.inflight_reads:
            # like CFQ's sync queues, anticipate the reader's next read on a one-command device
            until = self.last_read_done + self.slice_idle
            if now < until:
                if self.read_idle_until != until:
                    self.read_idle_until = until
                    blk.engine.at(until, self._idle_expired_reads, None)
                return None
        return super().next(now)

    def _idle_expired_reads(self, _) -> None:
        self.blk.dispatch()

    def completed(self, req) -> None:
        if req.op == OP_READ:
            self.last_read_done = req.done_ns
        super().completed(req)

    def __len__(self) -> int:
        return sum(len(r) for r in self.reads.values()) + self.n


class Smartio(Policy):
    name = "smartio"
    description = "reads > sync writes > async writes, writes bounded at 100 ms, profiled write concurrency"

    def make_scheduler(self):
        return SmartioScheduler()
