"""Page cache: pages in 128 KB extents on one LRU, free-page watermarks, dirty thresholds with writer
throttling, a flusher (kworker) writing dirty data back on behalf of apps, and the one global lock taken
by page allocation and by each copy to/from user space (at most 128 KB at a time).

Allocation is fast while free pages stay above the low watermark, or while the LRU tail is clean; when the
tail holds dirty pages or pages under writeback, the allocating task writes them back / waits for them
while holding the lock, until free pages are back at the high watermark (the slow path FAIO measured).
Policies change three things: who gets the lock first and whether a background holder yields at the
next checkpoint, including at once when it sleeps on a writeback I/O (FAIO page manager), which pages reclaim takes (FastTrack), and inheritance hooks (RCP).
"""
from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

from droidlag.iolab.sim.blocklayer import Request
from droidlag.iolab.sim.device import OP_DISCARD, OP_FLUSH, OP_READ, OP_WRITE
from droidlag.iolab.sim.engine import Event

PAGE = 4096
SEG = 128 * 1024  # the copy unit and the checkpoint granularity
SEG_PAGES = SEG // PAGE
MB = 1024 * 1024
FREED, CLEAN, DIRTY, WRITEBACK = 0, 1, 2, 3
_PREEMPTED = "preempted"  # wake-up value of a BG lock holder asleep on I/O when a FG task wants the lock


@dataclass(frozen=True)
class MemoryConfig:
    """Page cache of a 3 GB phone (Galaxy S6 class) with apps running: the file LRU it can reclaim from,
    Android's vm defaults (dirty_background_ratio 5, dirty_ratio 20, of ~800 MB dirtyable memory),
    watermarks from min_free_kbytes ~8 MB, memcpy ~2 GB/s, ~0.5 us to reclaim a clean page."""

    capacity_mb: int = 256
    min_free_mb: int = 8
    low_free_mb: int = 10
    high_free_mb: int = 12
    dirty_background_mb: int = 40
    dirty_limit_mb: int = 160
    copy_mb_s: int = 2000
    reclaim_ns_per_page: int = 500
    readahead_kb: int = 512
    writeback_kb: int = 512
    # IO-less dirty throttling (balance_dirty_pages, Linux 3.2+; the S6 runs 3.10): between the freerun point
    # (bg + limit)/2 and the limit a dirtier is paced, not stopped (see PageCache._dirty_pause). Modelled but
    # OFF in the calibration: turned on it brings Gallery (x2.4) and Game FG+BG (7.6 s) in, but the camera's
    # delay becomes mostly its own pacing on the shared bdi rate, which FAIO does not touch (FAIO camera cut
    # 16%, game 52%, UFS<eMMC, SmartIO launch 19%: 11/19 rows instead of 12), contrary to the papers, so on
    # its own it does not make the model more faithful where the papers say the time goes (iolab notes).
    dirty_pacing: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


class Extent:
    __slots__ = ("owner", "file", "lba", "pages", "state", "req")

    def __init__(self, owner: int, file: int, lba: int, pages: int, state: int):
        self.owner, self.file, self.lba, self.pages, self.state = owner, file, lba, pages, state
        self.req: Request | None = None


class PageCache:
    def __init__(self, stack, cfg: MemoryConfig):
        self.stack = stack
        self.engine = stack.engine
        self.blk = stack.blk
        self.policy = stack.policy
        self.lock = stack.lock
        self.cfg = cfg
        pg = MB // PAGE
        self.capacity = cfg.capacity_mb * pg
        self.min_wm, self.low_wm, self.high_wm = cfg.min_free_mb * pg, cfg.low_free_mb * pg, cfg.high_free_mb * pg
        self.bg_thresh = cfg.dirty_background_mb * pg
        self.dirty_limit = cfg.dirty_limit_mb * pg
        self.copy_ns_per_byte = 1e9 / (cfg.copy_mb_s * 1e6)
        self.lru: deque[Extent] = deque()
        self.clean: deque[Extent] = deque()
        self.dirty_fifo: deque[Extent] = deque()
        self.dirty = 0
        self.writeback = 0
        self._throttled: list[Event] = []
        self._flusher_wake: Event | None = None
        self.slow_allocs = 0
        self.alloc_ns_max = 0
        self.checkpoint_yields = 0
        self.throttle_ns = 0
        self.pace_ns = 0  # time dirtiers slept in balance_dirty_pages' proportional pauses
        self.freerun = (self.bg_thresh + self.dirty_limit) // 2
        self.setpoint = (self.freerun + self.dirty_limit) // 2
        self._dirtiers: dict[int, int] = {}  # pid -> last time it dirtied pages (who shares the bdi's rate)
        self._io_sleeper: tuple[Any, Event] | None = None  # (BG lock holder asleep on a writeback I/O in reclaim, its wake-up event)
        if self.policy.fpm:
            chained = self.lock.on_contended

            def on_contended(lock, waiter):
                if chained is not None:
                    chained(lock, waiter)
                self._wake_io_sleeper(waiter)

            self.lock.on_contended = on_contended
        # a warm phone: the cache is full of old clean pages (system files), free at the high watermark
        n = (self.capacity - self.high_wm) // SEG_PAGES
        for i in range(n):
            e = Extent(1000, -1, i * (SEG // 512), SEG_PAGES, CLEAN)
            self.lru.append(e)
            self.clean.append(e)
        self.free = self.capacity - n * SEG_PAGES

    # ---- the lock -------------------------------------------------------------------------------------
    def _release(self, task) -> None:
        self.policy.on_lock_release(task)
        self.lock.release()

    def segment(self, task, pages: int, copy_bytes: int):
        """Take the lock, allocate `pages` (maybe slowly), copy `copy_bytes`, release. A generator."""
        t0 = self.engine.now
        w = yield self.lock.acquire(task)
        if w:
            task.lock_wait_ns += w
            task.lock_waits += 1
        if pages:
            if self.free - pages < self.low_wm:
                yield from self._reclaim(task, pages)
            self.free -= pages
        if copy_bytes:
            yield int(copy_bytes * self.copy_ns_per_byte)
        self._release(task)
        d = self.engine.now - t0
        if d > self.alloc_ns_max:
            self.alloc_ns_max = d

    def _wake_io_sleeper(self, waiter) -> None:
        """A FG task found the lock held by a BG task asleep on writeback: wake the holder to its checkpoint."""
        sl = self._io_sleeper
        if sl is not None and sl[0] is self.lock.holder and self.lock.has_priority_waiter(sl[0]):
            sl[1].fire(_PREEMPTED)

    def _reclaim(self, task, pages: int):
        stack = self.stack
        pol = self.policy
        eng = self.engine
        fg_uid = stack.fg.uid
        target = self.high_wm + pages
        slow = False
        per_page = self.cfg.reclaim_ns_per_page
        while self.free < target:
            if (pol.fpm and task.uid != fg_uid and not task.is_system
                    and self.lock.has_priority_waiter(task)):
                # checkpoint: hand the lock to the FG waiter, resume afterwards where we stopped
                self.checkpoint_yields += 1
                self._release(task)
                w = yield self.lock.acquire(task)
                task.lock_wait_ns += w or 0
                continue
            if pol.fpm and task.uid == fg_uid:
                ext = self._pop_clean()
                if ext is not None:
                    ext.state = FREED
                    self.free += ext.pages
                    yield ext.pages * per_page
                    continue
            ext = self._victim(fg_uid if pol.protect_fg_pages else None)
            if ext is None:
                break
            if ext.state == DIRTY:
                slow = True
                self._submit_writeback([ext], task, sync=False)
            if ext.state == WRITEBACK:
                slow = True
                req = ext.req
                task.waiting_req = req
                if pol.fpm and task.uid != fg_uid and not task.is_system:
                    # FAIO page manager: a BG holder asleep on a writeback I/O is at a checkpoint (it has
                    # modified nothing yet: the extent stays under writeback and is picked again on resume),
                    # so a FG waiter arriving meanwhile takes the lock at once instead of after the I/O
                    wake = Event(eng)
                    self.blk.wait_on(req, task).add(wake.fire)
                    self._io_sleeper = (task, wake)
                    why = yield wake
                    self._io_sleeper = None
                else:
                    why = yield self.blk.wait_on(req, task)
                task.waiting_req = None
                if why == _PREEMPTED:
                    continue  # the checkpoint at the top of the loop hands the lock over
                if ext.state != CLEAN:
                    continue
            ext.state = FREED
            self.free += ext.pages
            yield ext.pages * per_page
        if slow:
            self.slow_allocs += 1
        _ = eng

    def _pop_clean(self):
        c = self.clean
        while c:
            e = c.popleft()
            if e.state == CLEAN:
                return e
        return None

    def _victim(self, protect_uid):
        lru = self.lru
        while lru and lru[0].state == FREED:
            lru.popleft()
        if not lru:
            return None
        if protect_uid is None:
            return lru[0]
        for _ in range(len(lru)):
            e = lru[0]
            if e.state == FREED:
                lru.popleft()
                continue
            if e.owner != protect_uid:
                return e
            lru.rotate(-1)  # the FG app's pages go back to the young end
        return lru[0] if lru else None

    # ---- writeback ------------------------------------------------------------------------------------
    def _submit_writeback(self, exts: list[Extent], task, sync: bool) -> Request:
        nbytes = sum(e.pages for e in exts) * PAGE
        req = Request(OP_WRITE, exts[0].lba, nbytes, sync, task, owner_uid=exts[0].owner)
        req.extents = exts
        req.cb = self._writeback_done
        for e in exts:
            e.state = WRITEBACK
            e.req = req
            self.dirty -= e.pages
            self.writeback += e.pages
        self.blk.submit(req)
        return req

    def _writeback_done(self, req: Request) -> None:
        fg_lbas = self.stack.fg_lbas
        for e in req.extents or ():
            e.state = CLEAN
            e.req = None
            self.writeback -= e.pages
            self.clean.append(e)
            if fg_lbas:
                fg_lbas.discard(e.lba)
        if self._throttled and self.dirty + self.writeback <= self.dirty_limit:
            ws = self._throttled
            self._throttled = []
            for ev in ws:
                ev.fire(None)

    def flusher(self, kworker):
        """The kworker: writes the oldest dirty data back, 512 KB requests, async, under its own PID."""
        per_req = self.cfg.writeback_kb * 1024 // SEG
        blk = self.blk
        while True:
            if self.dirty <= self.bg_thresh:
                self._flusher_wake = Event(self.engine)
                yield self._flusher_wake
                continue
            if blk.async_full():
                yield blk.async_slot()
                continue
            exts: list[Extent] = []
            fifo = self.dirty_fifo
            while fifo and len(exts) < per_req:
                e = fifo[0]
                if e.state != DIRTY:
                    fifo.popleft()
                    continue
                if exts and (e.file != exts[0].file or e.owner != exts[0].owner):
                    break
                exts.append(fifo.popleft())
            if not exts:
                self._flusher_wake = Event(self.engine)
                yield self._flusher_wake
                continue
            self._submit_writeback(exts, kworker, sync=False)

    def _kick_flusher(self) -> None:
        w = self._flusher_wake
        if w is not None and not w.fired and self.dirty > self.bg_thresh:
            w.fire(None)

    # ---- the system calls -----------------------------------------------------------------------------
    def write(self, task, nbytes: int, file: int, lba: int):
        """Buffered write: throttled above the dirty limit, then per 128 KB: allocate, copy, mark dirty."""
        fid = self.policy.fid and task.uid == self.stack.fg.uid
        off = 0
        while off < nbytes:
            n = min(SEG, nbytes - off)
            if self.dirty + self.writeback > self.dirty_limit:
                t0 = self.engine.now
                while self.dirty + self.writeback > self.dirty_limit:
                    ev = Event(self.engine)
                    self._throttled.append(ev)
                    yield ev
                self.throttle_ns += self.engine.now - t0
            pages = -(-n // PAGE)
            if self.cfg.dirty_pacing:
                pause = self._dirty_pause(task, pages)
                if pause:
                    self.pace_ns += pause
                    yield pause
            yield from self.segment(task, pages, n)
            e = Extent(task.uid, file, lba + off // 512, pages, DIRTY)
            self.lru.append(e)
            self.dirty_fifo.append(e)
            self.dirty += pages
            if fid:
                self.stack.fg_lbas.add(e.lba)  # the page manager hands the FG app's LBAs to the dispatcher
            off += n
            if self.dirty > self.bg_thresh:
                self._kick_flusher()

    def _dirty_pause(self, task, pages: int) -> int:
        """balance_dirty_pages() as Linux 3.2+ does it (IO-less dirty throttling, mm/page-writeback.c): below
        the freerun point (bg_thresh + limit)/2 a dirtier runs free; above it, it sleeps *in its own
        context, outside any lock* for pages / task_ratelimit, where task_ratelimit = dirty_ratelimit x
        pos_ratio. dirty_ratelimit is the bdi's write bandwidth shared by the tasks dirtying it (what the
        kernel's estimator converges to; we take the device's program rate as the bdi bandwidth) and
        pos_ratio the global control line 1 + ((setpoint - dirty) / (limit - setpoint))^3, setpoint halfway
        between freerun and limit, so the dirty level settles around the setpoint instead of at the limit.
        A pause is at most MAX_PAUSE (200 ms); at the limit itself the hard wait in write() still applies."""
        now = self.engine.now
        dirtiers = self._dirtiers
        dirtiers[task.pid] = now
        nr = self.dirty + self.writeback
        if nr <= self.freerun:
            return 0
        for pid in [p for p, t in dirtiers.items() if now - t > 200_000_000]:
            del dirtiers[pid]  # not dirtying in the last 200 ms (the kernel's bandwidth interval)
        span = max(1, self.dirty_limit - self.setpoint)
        x = (self.setpoint - nr) / span
        pos_ratio = min(2.0, max(0.0, 1.0 + x * x * x))
        if pos_ratio <= 0.0:
            return 200_000_000
        bw_pages = self.stack.profile.write_bw / PAGE  # pages per second
        rate = bw_pages / max(1, len(dirtiers)) * pos_ratio
        return min(200_000_000, int(pages * 1e9 / rate))

    def read(self, task, nbytes: int, lba: int, chunk: int | None = None, think_ns: int = 0):
        """Buffered cold read: pages allocated under the lock, readahead one chunk ahead, copy under the lock."""
        chunk = chunk or self.cfg.readahead_kb * 1024
        blk = self.blk
        off = 0
        pending = None
        while off < nbytes or pending is not None:
            nxt = None
            if off < nbytes:
                n = min(chunk, nbytes - off)
                s = 0
                while s < n:
                    yield from self.segment(task, -(-min(SEG, n - s) // PAGE), 0)
                    s += SEG
                req = Request(OP_READ, lba + off // 512, n, True, task)
                blk.submit(req)
                nxt = req
                off += n
            if pending is not None:
                req = pending
                if req.done_ns < 0:
                    task.waiting_req = req
                    yield blk.wait_on(req, task)
                    task.waiting_req = None
                s = 0
                while s < req.nbytes:
                    m = min(SEG, req.nbytes - s)
                    yield from self.segment(task, 0, m)
                    e = Extent(task.uid, -2, req.lba + s // 512, -(-m // PAGE), CLEAN)
                    self.lru.append(e)
                    self.clean.append(e)
                    s += SEG
                if think_ns:
                    yield think_ns
            pending = nxt

    def fsync(self, task, file: int):
        """Write the file's dirty pages as sync requests of the caller, wait for all its pages under
        writeback (the kworker's too), then a cache flush (which waits for every earlier discard)."""
        blk = self.blk
        per_req = self.cfg.writeback_kb * 1024 // SEG
        mine = [e for e in self.lru if e.file == file and e.state in (DIRTY, WRITEBACK)]
        batch: list[Extent] = []
        for e in mine:
            if e.state == DIRTY:
                batch.append(e)
                if len(batch) == per_req:
                    self._submit_writeback(batch, task, sync=True)
                    batch = []
        if batch:
            self._submit_writeback(batch, task, sync=True)
        seen: set = set()
        for e in mine:
            req = e.req
            if req is not None and req.id not in seen and req.done_ns < 0:
                seen.add(req.id)
                task.waiting_req = req
                yield blk.wait_on(req, task)
                task.waiting_req = None
        flush = Request(OP_FLUSH, 0, 0, True, task)
        yield blk.submit(flush)

    def direct_io(self, task, op: int, nbytes: int, lba: int, sync: bool = True):
        """O_DIRECT read or write: straight to the block layer, no page cache, no lock."""
        req = Request(op, lba, nbytes, sync, task)
        yield self.blk.submit(req)
        return req

    def delete(self, task, nbytes: int, lba: int, discard: bool = True, discard_bytes: int = 32 * MB):
        """Delete a file: with real-time discard, one async discard command per `discard_bytes`."""
        if not discard:
            return
        for off in range(0, nbytes, discard_bytes):
            self.blk.submit(Request(OP_DISCARD, lba + off // 512, min(discard_bytes, nbytes - off), False, task))
        if False:
            yield

    def stats(self) -> dict:
        return {"free_pages": self.free, "dirty_pages": self.dirty, "writeback_pages": self.writeback,
                "slow_allocations": self.slow_allocs, "max_lock_section_ms": self.alloc_ns_max / 1e6,
                "checkpoint_yields": self.checkpoint_yields, "throttle_ms": self.throttle_ns / 1e6,
                "pace_ms": self.pace_ns / 1e6}
