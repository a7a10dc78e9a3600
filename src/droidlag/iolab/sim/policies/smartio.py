"""smartio: reads before writes. Inside the dispatch queue a third level puts reads ahead of sync writes
ahead of async writes; a write that has waited 100 ms (a CFQ slice) is served anyway; a concurrency
profiler measures how many concurrent writes the device needs for full speed, and no more writes are kept
in flight while reads are waiting."""
from __future__ import annotations

from collections import deque
from functools import lru_cache

from droidlag.iolab.sim.device import OP_READ, OP_WRITE, Device, DeviceProfile
from droidlag.iolab.sim.engine import MS, Engine
from droidlag.iolab.sim.policies.base import Policy


class _Probe:
    __slots__ = ("op", "nbytes", "fg", "lba")

    def __init__(self, op, nbytes):
        self.op, self.nbytes, self.fg, self.lba = op, nbytes, False, 0


@lru_cache(maxsize=None)
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


class SmartioScheduler:
    def __init__(self, write_bound_ns: int = 100 * MS, write_concurrency: int = 1):
        self.reads: deque = deque()
        self.sync_writes: deque = deque()
        self.async_writes: deque = deque()
        self.write_bound = write_bound_ns
        self.write_concurrency = write_concurrency
        self.blk = None

    def attach(self, blk) -> None:
        self.blk = blk
        self.write_concurrency = profile_concurrency(blk.device.p, OP_WRITE, 512 * 1024)

    def add(self, req, now: int) -> None:
        if req.op == OP_READ:
            self.reads.append(req)
        elif req.sync:
            self.sync_writes.append(req)
        else:
            self.async_writes.append(req)

    def next(self, now: int):
        sw, aw = self.sync_writes, self.async_writes
        # a write past its bound goes first, oldest first
        due = None
        if sw and now - sw[0].submit_ns >= self.write_bound:
            due = sw
        if aw and now - aw[0].submit_ns >= self.write_bound and (due is None or aw[0].submit_ns < sw[0].submit_ns):
            due = aw
        if due is not None:
            return due.popleft()
        if self.reads:
            return self.reads.popleft()
        if not (sw or aw):
            return None
        if self.blk is not None and self.blk.inflight_reads and self.blk.inflight_writes >= self.write_concurrency:
            return None  # keep the device's remaining slots for reads
        return sw.popleft() if sw else aw.popleft()

    def completed(self, req) -> None:
        pass

    def boost(self, req) -> None:
        pass

    def __len__(self) -> int:
        return len(self.reads) + len(self.sync_writes) + len(self.async_writes)


class Smartio(Policy):
    name = "smartio"
    description = "reads > sync writes > async writes, writes bounded at 100 ms, profiled write concurrency"

    def make_scheduler(self):
        return SmartioScheduler()
