"""Block layer: requests, the per-device scheduler (a policy's), the dispatch into the device, and the
bookkeeping the papers report (latency per request, write starvation).

A scheduler has `add(req, now)`, `next(now) -> req | None`, `completed(req)` and `boost(req)`; it may refuse to
dispatch (return None) and is asked again at the next submission or completion.
"""
from __future__ import annotations

from collections.abc import Callable
from itertools import count

from droidlag.iolab.sim.device import OP_FLUSH, OP_READ, OP_WRITE, Device
from droidlag.iolab.sim.engine import Engine, Event


class Request:
    """One block request. `pid`/`uid` are the submitter's (the kworker for writeback); `owner_uid` is the app
    whose data it carries, which only a policy that is told (FAIO's LBA hand-over) may use."""

    __slots__ = ("id", "op", "lba", "nbytes", "sync", "pid", "uid", "owner_uid", "task", "fg", "prio",
                 "boosted", "submit_ns", "dispatch_ns", "done_ns", "done", "cb", "extents", "sched_key")

    def __init__(self, op: int, lba: int, nbytes: int, sync: bool, task, owner_uid: int | None = None):
        self.id = 0
        self.op = op
        self.lba = lba
        self.nbytes = nbytes
        self.sync = sync
        self.task = task
        self.pid = task.pid
        self.uid = task.uid
        self.owner_uid = task.uid if owner_uid is None else owner_uid
        self.fg = False
        self.prio = 0
        self.boosted = False
        self.submit_ns = self.dispatch_ns = self.done_ns = -1
        self.done: Event | None = None
        self.cb: Callable[[Request], None] | None = None
        self.extents: list | None = None
        self.sched_key = None  # the scheduler queue it was dispatched from (CFQ's per-queue accounting)

    @property
    def is_write(self) -> bool:
        return self.op != OP_READ

    def __repr__(self) -> str:
        return f"Request(#{self.id} op={self.op} lba={self.lba} {self.nbytes}B sync={self.sync} pid={self.pid})"


class BlockLayer:
    """Holds queued requests in the policy's scheduler and keeps the device fed."""

    def __init__(self, engine: Engine, device: Device, scheduler, policy, stack=None, nr_requests: int = 128):
        self.engine = engine
        self.device = device
        self.sched = scheduler
        self.policy = policy
        self.stack = stack
        self.nr_requests = nr_requests
        device.on_complete = self._on_device_complete
        scheduler.attach(self)
        self._ids = count(1)
        self.queued = 0
        self.queued_async = 0
        self.inflight_sync = 0
        self.inflight_reads = 0
        self.inflight_writes = 0
        self._slot_waiters: list[Event] = []
        self.completed = 0
        self.max_write_wait_ns = 0
        self.max_read_wait_ns = 0
        self.log: list | None = None  # (submit, dispatch, done, op, nbytes, fg) when recording

    def submit(self, req: Request) -> Event:
        """Queue a request; returns the event fired (with the request) at its completion."""
        req.id = next(self._ids)
        req.submit_ns = self.engine.now
        req.done = Event(self.engine)
        self.policy.classify(req, self.stack)
        self.queued += 1
        if not req.sync:
            self.queued_async += 1
        self.sched.add(req, self.engine.now)
        self.dispatch()
        assert req.done is not None, "a submitted request has its completion event"
        return req.done

    def async_full(self) -> bool:
        return self.queued_async >= self.nr_requests

    def async_slot(self) -> Event:
        """An event fired when an async request slot frees (the writer of a full queue sleeps on it)."""
        ev = Event(self.engine)
        self._slot_waiters.append(ev)
        return ev

    def wait_on(self, req: Request, task) -> Event:
        """`task` blocks until `req` completes: inheritance policies may boost the request."""
        if req.done_ns < 0:
            self.policy.on_wait(req, task, self)
        assert req.done is not None, "a submitted request has its completion event"
        return req.done

    def boost(self, req: Request) -> None:
        if req.boosted or req.done_ns >= 0:
            return
        req.boosted = True
        if req.dispatch_ns < 0:
            self.sched.boost(req)

    def dispatch(self) -> None:
        dev = self.device
        sched = self.sched
        now = self.engine.now
        while dev.accepted < dev.p.queue_depth:
            req = sched.next(now)
            if req is None:
                return
            req.dispatch_ns = now
            self.queued -= 1
            if not req.sync:
                self.queued_async -= 1
                if self._slot_waiters:
                    ws = self._slot_waiters
                    self._slot_waiters = []
                    for ev in ws:
                        ev.fire(None)
            else:
                self.inflight_sync += 1
            if req.op == OP_READ:
                self.inflight_reads += 1
                w = now - req.submit_ns
                if w > self.max_read_wait_ns:
                    self.max_read_wait_ns = w
            else:
                self.inflight_writes += 1
                if req.op == OP_WRITE:
                    w = now - req.submit_ns
                    if w > self.max_write_wait_ns:
                        self.max_write_wait_ns = w
            dev.submit(req)

    def _on_device_complete(self, req: Request) -> None:
        req.done_ns = self.engine.now
        self.completed += 1
        if req.sync:
            self.inflight_sync -= 1
        if req.op == OP_READ:
            self.inflight_reads -= 1
        else:
            self.inflight_writes -= 1
        self.sched.completed(req)
        if self.log is not None:
            self.log.append((req.submit_ns, req.dispatch_ns, req.done_ns, req.op, req.nbytes, req.fg, req.pid))
        if req.cb is not None:
            req.cb(req)
        assert req.done is not None
        req.done.fire(req)
        self.dispatch()


__all__ = ["Request", "BlockLayer", "OP_READ", "OP_WRITE", "OP_FLUSH"]
