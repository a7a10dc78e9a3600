"""Flash device model: eMMC and UFS profiles calibrated once from public vendor figures.

The device accepts up to `queue_depth` commands. Inside it, reads are picked before queued writes, and
writes, discards and flushes are served FIFO (the in-device write FIFO FAIO describes); a flush is a barrier
that waits for every earlier write and discard (so fsync waits for earlier discards). Up to `channels` reads
and `channels` writes are in service at once (UFS is full duplex; eMMC without command queueing serves one
command of either kind at a time). Each command goes through its fixed latency, then its data moves at the
bandwidth of its direction, reserved behind the transfers of that direction already reserved (the write
bandwidth is the NAND program rate). Reads and writes meet on the flash dies: a read that arrives while
programs are under way waits for the program on each die it touches to end (reads go before queued
programs, but a program is not suspended), i.e. m/(m+1) tPROG for m dies, and takes its page-read time
from the programs. Writes past a full write buffer (if the profile has one) go at the sustained rate.

With `preempt_fg` (FastTrack's preemption inside the device) a foreground write or flush overtakes the
background writes still waiting in the device queue (not discards), and a foreground command interrupts the
background programs under way, as eMMC's High Priority Interrupt (HPI, eMMC 4.41+) allows: FG reads do not
wait for a program to end, a FG write is programmed before the BG data already accepted, and a FG flush
waits only for FG writes and discards in service. (Modelled on multi-command devices; on a one-command
eMMC the block layer would have to interrupt the write in service, which it does not.)
"""
from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass

from droidlag.iolab.sim.engine import Engine

OP_READ, OP_WRITE, OP_FLUSH, OP_DISCARD = 0, 1, 2, 3
OP_NAMES = {OP_READ: "read", OP_WRITE: "write", OP_FLUSH: "flush", OP_DISCARD: "discard"}
MB = 1_000_000


@dataclass(frozen=True)
class DeviceProfile:
    """Numbers of one storage device. Bandwidths in bytes/s, latencies in ns (per command, before transfer).

    Flash geometry (`dies`, `page_bytes`, `program_ns`) sets how reads and writes interfere inside the device;
    the write buffer (`wbuf_bytes`, `sustained_write_bw`) sets how writes slow down when sustained."""

    name: str
    queue_depth: int
    channels: int
    read_lat_ns: int
    write_lat_ns: int
    read_bw: float
    write_bw: float
    flush_ns: int
    discard_ns: int
    source: str
    dies: int = 4
    page_bytes: int = 16384
    program_ns: int = 1_300_000
    read_page_ns: int = 60_000
    wbuf_bytes: int = 0
    sustained_write_bw: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def _from_figures(name: str, queue_depth: int, channels: int, seq_read_mb: float, seq_write_mb: float,
                  rand_read_iops: float, rand_write_iops: float, flush_ns: int, discard_ns: int,
                  source: str, **flash) -> DeviceProfile:
    """Derive the model's parameters from the four numbers vendors publish.

    Sequential bandwidths are used as is. Random 4 KB IOPS (at full queue depth) are reached when all
    channels are busy, so the per-command latency is channels / IOPS (minus the 4 KB transfer)."""
    rbw, wbw = seq_read_mb * MB, seq_write_mb * MB
    rlat = channels / rand_read_iops - 4096 / rbw
    wlat = channels / rand_write_iops - 4096 / wbw
    return DeviceProfile(name, queue_depth, channels, int(rlat * 1e9), int(wlat * 1e9), rbw, wbw,
                         flush_ns, discard_ns, source, **flash)


# Flash geometry shared by both profiles (2D MLC NAND of 2013-2015 phones, datasheet orders of magnitude):
# 16 KB pages, page program time tPROG ~1.3 ms, page read tR ~60 us, four dies (a 32 GB part of 64 Gbit
# dies). Controller firmware serves reads before queued programs, but a die that is programming cannot serve
# a read until that program ends (no program suspend on these parts): a read touching m dies waits for the
# slowest of m residual programs, m/(m+1) tPROG on average, instead of for whole write commands.
# Write buffer (SLC-mode cache) and sustained write rate: the mechanism is modelled (`wbuf_bytes`,
# `sustained_write_bw`: writes past a full buffer go at the sustained rate, the buffer drains at that rate)
# but it is OFF in both calibrated profiles: we found no public sustained-write figure for these MLC-era
# parts (SLC caching is documented for later TLC parts: Samsung TurboWrite, UFS 2.2/3.1 WriteBooster), and
# with assumed values (256 MB buffer, half-rate sustained writes) it moved Camera only from x6 to x7 while
# doubling Gallery's slowdown (see the iolab notes), so it would be a guess that buys nothing.
_MLC = dict(dies=4, page_bytes=16384, program_ns=1_300_000, read_page_ns=60_000)

# Calibrated once; every scenario and figure uses these and nothing else.
PROFILES: dict[str, DeviceProfile] = {
    # eMMC 5.0 class (Nexus 5 / Galaxy S5 era): ~250 MB/s read, ~90 MB/s write, ~7,000 / ~5,000 random
    # 4 KB IOPS (vendor announcements of eMMC 5.0 parts, 2013-2014). eMMC before 5.1 has no command queue:
    # one command at a time. Cache flush and discard costs are typical measured orders of magnitude.
    "emmc": _from_figures("emmc", queue_depth=1, channels=1, seq_read_mb=250, seq_write_mb=90,
                          rand_read_iops=7000, rand_write_iops=5000, flush_ns=2_000_000,
                          discard_ns=2_000_000,
                          source="eMMC 5.0 vendor figures: 250/90 MB/s seq R/W, 7K/5K random 4KB IOPS, no CMDQ",
                          **_MLC),
    # UFS 2.0 (Galaxy S6, 2015): 350 MB/s read, 150 MB/s write, 19,000 / 14,000 random 4 KB IOPS
    # (Samsung's announcement); 32 command slots (UFS spec); 4 parallel units assumed.
    "ufs": _from_figures("ufs", queue_depth=32, channels=4, seq_read_mb=350, seq_write_mb=150,
                         rand_read_iops=19000, rand_write_iops=14000, flush_ns=1_000_000,
                         discard_ns=1_000_000,
                         source="UFS 2.0 vendor figures (Galaxy S6): 350/150 MB/s seq R/W, 19K/14K random 4KB IOPS, QD 32",
                         **_MLC),
}


class Device:
    """The device: accepts commands from the block layer and completes them through `on_complete(req)`."""

    def __init__(self, engine: Engine, profile: DeviceProfile, on_complete=None, preempt_fg: bool = False):
        self.engine = engine
        self.p = profile
        self.on_complete = on_complete
        self.preempt_fg = preempt_fg
        self.reads: deque = deque()
        self.writes: deque = deque()  # writes, discards, flushes: FIFO
        self.accepted = 0  # commands inside the device (queued or in service)
        self.busy_reads = 0  # reads in service
        self.busy_writes = 0  # writes/discards/flushes in service (a flush waits for them)
        self.barrier_busy = 0  # discards and (with preemption) FG writes in service: what a FG flush waits for
        self.read_free_at = 0
        self.write_free_at = 0
        self.wbuf_level = 0  # bytes in the write buffer not yet migrated to the main array
        self.wbuf_t = 0
        self.sustained_bytes = 0  # bytes written at the sustained (buffer full) rate
        self.read_stall_ns = 0  # time reads spent waiting for programs on their dies
        self.bytes_read = 0
        self.bytes_written = 0
        self.commands = 0
        self._stripe = profile.dies * profile.page_bytes
        self._complete_cb = self._complete

    def can_accept(self) -> bool:
        return self.accepted < self.p.queue_depth

    def submit(self, req) -> None:
        self.accepted += 1
        if req.op == OP_READ:
            self.reads.append(req)
        elif self.preempt_fg and req.fg and req.op in (OP_WRITE, OP_FLUSH):
            # FastTrack: a FG write or cache flush overtakes background writes still waiting (a flush only
            # has to cover writes completed before it was issued), but not a flush/discard barrier: fsync
            # still waits for earlier discards.
            i = len(self.writes)
            while i > 0 and not self.writes[i - 1].fg and self.writes[i - 1].op == OP_WRITE:
                i -= 1
            self.writes.insert(i, req)
        else:
            self.writes.append(req)
        self._start()

    def _write_time(self, nbytes: int, start: int) -> int:
        """Program time of a write starting at `start`: burst rate while the write buffer has room,
        the sustained rate once it is full; the buffer drains at the sustained rate meanwhile."""
        p = self.p
        if not p.wbuf_bytes:
            return int(nbytes * 1e9 / p.write_bw)
        if start > self.wbuf_t:
            self.wbuf_level = max(0, self.wbuf_level - int((start - self.wbuf_t) * p.sustained_write_bw / 1e9))
            self.wbuf_t = start
        if self.wbuf_level + nbytes <= p.wbuf_bytes:
            self.wbuf_level += nbytes
            return int(nbytes * 1e9 / p.write_bw)
        self.sustained_bytes += nbytes
        dt = int(nbytes * 1e9 / p.sustained_write_bw)
        self.wbuf_t = start + dt  # the buffer stays full: what drains meanwhile is refilled by this write
        self.wbuf_level = p.wbuf_bytes
        return dt

    def _start(self) -> None:
        p = self.p
        eng = self.engine
        ch = p.channels
        # one-command devices (eMMC without CMDQ, half duplex) serve one command of either kind at a time
        shared = p.queue_depth == 1
        while True:
            busy_r, busy_w = self.busy_reads, self.busy_writes
            if self.reads and (busy_r + busy_w < ch if shared else busy_r < ch):
                req = self.reads.popleft()
                now = eng.now
                start = now + p.read_lat_ns
                pending = self.write_free_at - now
                if pending > 0 and not (self.preempt_fg and req.fg):
                    # the dies are programming: the firmware puts reads ahead of queued programs, but a
                    # program under way is not suspended, so the read waits for the slowest of the m dies
                    # it touches to finish its current program: E[max of m residuals] = m/(m+1) tPROG
                    m = min(p.dies, -(-req.nbytes // p.page_bytes))
                    stall = min(pending, p.program_ns * m // (m + 1))
                    start += stall
                    self.read_stall_ns += stall
                    # die time the read takes from programming: its pages per die, each a page read
                    self.write_free_at += -(-req.nbytes // self._stripe) * p.read_page_ns
                if self.read_free_at > start:
                    start = self.read_free_at
                done = self.read_free_at = start + int(req.nbytes * 1e9 / p.read_bw)
                self.busy_reads += 1
                eng.at(done, self._complete_cb, req)
                continue
            if not self.writes:
                return
            req = self.writes[0]
            op = req.op
            hpi = self.preempt_fg and req.fg and not shared
            hpi_flush = hpi and op == OP_FLUSH and not self.barrier_busy
            full = busy_r + busy_w >= ch if shared else busy_w >= ch
            if full and not (hpi_flush or (hpi and op == OP_WRITE)):
                return
            if op == OP_FLUSH:
                if busy_w and not hpi_flush:
                    return  # barrier: wait for earlier writes and discards
                self.writes.popleft()
                self.busy_writes += 1
                # a cache flush waits until the programs already reserved are done, except a FG flush
                # under preemption, which only covers the FG writes already completed
                end = eng.now if hpi_flush else max(eng.now, self.write_free_at)
                eng.at(end + p.flush_ns, self._complete_cb, req)
                continue
            self.writes.popleft()
            self.busy_writes += 1
            if op == OP_DISCARD:
                self.barrier_busy += 1
                eng.after(p.discard_ns, self._complete_cb, req)
                continue
            start = eng.now + p.write_lat_ns
            if self.preempt_fg and req.fg:
                # interrupt the BG programs under way (HPI): this write goes now, the BG ones after it
                self.barrier_busy += 1
                dt = self._write_time(req.nbytes, start)
                self.write_free_at = max(self.write_free_at, start) + dt
                eng.at(start + dt, self._complete_cb, req)
                continue
            if self.write_free_at > start:
                start = self.write_free_at
            done = self.write_free_at = start + self._write_time(req.nbytes, start)
            eng.at(done, self._complete_cb, req)

    def _complete(self, req) -> None:
        self.accepted -= 1
        self.commands += 1
        op = req.op
        if op == OP_READ:
            self.busy_reads -= 1
            self.bytes_read += req.nbytes
        else:
            self.busy_writes -= 1
            if op == OP_DISCARD or (self.preempt_fg and req.fg and op == OP_WRITE):
                self.barrier_busy -= 1
            if op == OP_WRITE:
                self.bytes_written += req.nbytes
        if self.on_complete is not None:
            self.on_complete(req)
        self._start()

    @property
    def busy(self) -> int:
        return self.busy_reads + self.busy_writes
