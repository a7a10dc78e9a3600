"""cfq: completely fair queueing as stock Android ran it: a sync queue per process, async queues shared per
class and priority, three classes (RT before BE before Idle; 8 levels each: with the per-process sync
queues, the 17 queues of the papers in a typical run), time slices (sync 100 ms, async 40 ms), a new sync
request preempting an async slice, and no async dispatch while sync requests are in flight."""
from __future__ import annotations

from collections import deque

from droidlag.iolab.sim.engine import MS
from droidlag.iolab.sim.policies.base import Policy

CLASS_ORDER = ("rt", "be", "idle")
_RANK = {c: i for i, c in enumerate(CLASS_ORDER)}


class CfqScheduler:
    def __init__(self, sync_slice_ns: int = 100 * MS, async_slice_ns: int = 40 * MS):
        self.sync_slice = sync_slice_ns
        self.async_slice = async_slice_ns
        self.queues: dict = {}
        self.rr = {c: deque() for c in CLASS_ORDER}
        self.active = None
        self.slice_end = 0
        self.blk = None
        self.n = 0

    def attach(self, blk) -> None:
        self.blk = blk

    @staticmethod
    def key(req) -> tuple:
        t = req.task
        cls = getattr(t, "ioprio_class", "be")
        return (cls, 1, req.pid) if req.sync else (cls, 0, getattr(t, "ioprio", 4))

    def add(self, req, now: int) -> None:
        k = self.key(req)
        q = self.queues.get(k)
        if q is None:
            q = self.queues[k] = deque()
        q.append(req)
        self.n += 1
        if len(q) == 1 and k != self.active:
            self.rr[k[0]].append(k)
        a = self.active
        if a is not None and k != a:
            if _RANK[k[0]] < _RANK[a[0]] or (k[0] == a[0] and k[1] == 1 and a[1] == 0):
                self._expire()

    def _expire(self) -> None:
        k = self.active
        self.active = None
        if k is not None and self.queues[k]:
            self.rr[k[0]].append(k)

    def _pop(self, q):
        if self.active[1] == 0 and self.blk is not None and self.blk.inflight_sync:
            return None  # async waits while sync requests are in flight
        self.n -= 1
        return q.popleft()

    def next(self, now: int):
        if self.active is not None:
            q = self.queues[self.active]
            if q and now < self.slice_end:
                return self._pop(q)
            self._expire()
        for cls in CLASS_ORDER:
            rr = self.rr[cls]
            while rr:
                k = rr.popleft()
                if self.queues[k]:
                    self.active = k
                    self.slice_end = now + (self.sync_slice if k[1] else self.async_slice)
                    return self._pop(self.queues[k])
        return None

    def completed(self, req) -> None:
        pass

    def boost(self, req) -> None:
        pass

    def __len__(self) -> int:
        return self.n


class BoostableCfq(CfqScheduler):
    """CFQ plus a FIFO of boosted requests served first (the inheritance policies build on it)."""

    def __init__(self, is_high=None, **kw):
        super().__init__(**kw)
        self.high: deque = deque()
        self.is_high = is_high

    def add(self, req, now: int) -> None:
        if self.is_high is not None and self.is_high(req):
            self.high.append(req)
        else:
            super().add(req, now)

    def next(self, now: int):
        if self.high:
            return self.high.popleft()
        return super().next(now)

    def boost(self, req) -> None:
        q = self.queues.get(self.key(req))
        if q is None:
            return
        try:
            q.remove(req)
        except ValueError:
            return
        self.n -= 1
        self.high.append(req)

    def __len__(self) -> int:
        return self.n + len(self.high)


class Cfq(Policy):
    name = "cfq"
    description = "stock Android CFQ: per-process sync queues, shared async queues, RT/BE/Idle classes, slices"

    def make_scheduler(self):
        return CfqScheduler()
