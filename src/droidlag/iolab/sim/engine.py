"""A small, fast discrete-event core: a heap of (time_ns, seq, fn, arg) tuples, seeded randomness, and
generator processes on top (SimPy's shape, without per-event objects on the hot path).

Time is integer nanoseconds. Callbacks scheduled for the same instant run in the order they were scheduled,
so a run is a pure function of its inputs and the seed.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Generator
from heapq import heappop, heappush
from typing import Any

MS = 1_000_000
US = 1_000
S = 1_000_000_000


class Engine:
    """The event loop. `at`/`after` schedule `fn(arg)`; `process(gen)` runs a generator process."""

    __slots__ = ("now", "_heap", "_seq", "rng", "events")

    def __init__(self, seed: int = 0):
        self.now = 0
        self._heap: list = []
        self._seq = 0
        self.rng = random.Random(seed)
        self.events = 0  # callbacks run so far

    def at(self, t: int, fn: Callable[[Any], Any], arg: Any = None) -> None:
        """Run fn(arg) at absolute time t (ns)."""
        self._seq += 1
        heappush(self._heap, (t, self._seq, fn, arg))

    def after(self, dt: int, fn: Callable[[Any], Any], arg: Any = None) -> None:
        """Run fn(arg) dt ns from now."""
        self._seq += 1
        heappush(self._heap, (self.now + dt, self._seq, fn, arg))

    def run(self, until: int | None = None, stop: Event | None = None) -> int:
        """Run until the heap is empty, time passes `until` (ns), or `stop` fires. Returns the time reached."""
        heap = self._heap
        n = 0
        limit = until if until is not None else 1 << 62
        try:
            while heap:
                item = heappop(heap)
                t = item[0]
                if t > limit:
                    heappush(heap, item)
                    self.now = limit
                    break
                self.now = t
                item[2](item[3])
                n += 1
                if stop is not None and stop.fired:
                    break
        finally:
            self.events += n
        return self.now

    def event(self) -> Event:
        return Event(self)

    def process(self, gen: Generator, name: str = "") -> Process:
        """Start a generator process now. It may yield an int (sleep ns), an Event (wait for it) or None."""
        p = Process(self, gen, name)
        self.at(self.now, p._resume, None)
        return p


class Event:
    """Something that happens once; waiters get its value. Firing schedules the waiters at the current time."""

    __slots__ = ("engine", "callbacks", "fired", "value")

    def __init__(self, engine: Engine):
        self.engine = engine
        self.callbacks: list | None = []
        self.fired = False
        self.value = None

    def fire(self, value: Any = None) -> None:
        if self.fired:
            return
        self.fired = True
        self.value = value
        cbs = self.callbacks or []
        self.callbacks = None
        eng = self.engine
        for cb in cbs:
            eng.at(eng.now, cb, value)

    def add(self, cb: Callable[[Any], Any]) -> None:
        """Call cb(value) when the event fires (at once, via the heap, if it already has)."""
        if self.fired:
            self.engine.at(self.engine.now, cb, self.value)
        else:
            assert self.callbacks is not None  # a pending event keeps its list until it fires
            self.callbacks.append(cb)


class Process:
    """A generator driven by the engine; `done` fires with its return value."""

    __slots__ = ("engine", "gen", "name", "done", "_resume")

    def __init__(self, engine: Engine, gen: Generator, name: str = ""):
        self.engine = engine
        self.gen = gen
        self.name = name
        self.done = Event(engine)
        self._resume = self._step  # bound once: no new bound method per wake-up

    def _step(self, value: Any) -> None:
        try:
            y = self.gen.send(value)
        except StopIteration as stop:
            self.done.fire(stop.value)
            return
        eng = self.engine
        if y.__class__ is int:
            eng._seq += 1
            heappush(eng._heap, (eng.now + y, eng._seq, self._resume, None))
        elif y is None:
            eng.at(eng.now, self._resume, None)
        else:
            y.add(self._resume)


def all_of(engine: Engine, events: list[Event]) -> Event:
    """An event that fires when every event in `events` has fired."""
    out = Event(engine)
    left = [0]

    def one(_):
        left[0] -= 1
        if left[0] == 0:
            out.fire(None)

    pending = [e for e in events if not e.fired]
    if not pending:
        out.fire(None)
        return out
    left[0] = len(pending)
    for e in pending:
        e.add(one)
    return out


class Lock:
    """A lock with a waiter queue. Waiters are served FIFO unless the policy says a waiter goes first
    (`priority_of(task)`: lower is earlier). `holder` is the owning task."""

    __slots__ = ("engine", "holder", "waiters", "priority_of", "on_contended", "acquisitions", "wait_ns")

    def __init__(self, engine: Engine):
        self.engine = engine
        self.holder = None
        self.waiters: list = []  # [(prio, seq, task, event)]
        self.priority_of: Callable[[Any], int] | None = None
        self.on_contended: Callable[[Any, Any], None] | None = None  # callback(lock, waiter_task) for inheritance policies
        self.acquisitions = 0
        self.wait_ns = 0

    def acquire(self, task) -> Event:
        ev = Event(self.engine)
        if self.holder is None:
            self.holder = task
            self.acquisitions += 1
            ev.fire(0)
            return ev
        prio = self.priority_of(task) if self.priority_of else 0
        self.engine._seq += 1
        self.waiters.append((prio, self.engine._seq, task, ev, self.engine.now))
        if self.on_contended is not None:
            self.on_contended(self, task)
        return ev

    def has_priority_waiter(self, than_task) -> bool:
        """True when a waiter outranks `than_task` (used at checkpoints by lock-preemption policies)."""
        if not self.waiters or self.priority_of is None:
            return False
        mine = self.priority_of(than_task)
        return any(w[0] < mine for w in self.waiters)

    def release(self) -> None:
        if not self.waiters:
            self.holder = None
            return
        best = min(range(len(self.waiters)), key=lambda i: self.waiters[i][:2])
        prio, _, task, ev, t0 = self.waiters.pop(best)
        self.holder = task
        self.acquisitions += 1
        self.wait_ns += self.engine.now - t0
        ev.fire(self.engine.now - t0)
