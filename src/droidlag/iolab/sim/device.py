"""Flash device model: eMMC and UFS profiles calibrated once from public vendor figures.

The device accepts up to `queue_depth` commands. Inside it, reads are picked before queued writes, and
writes, discards and flushes are served FIFO (the in-device write FIFO FAIO describes); a flush is a barrier
that waits for every earlier write and discard (so fsync waits for earlier discards). `channels` commands
are in service at once; each goes through its fixed latency, then its data moves at the device's
bandwidth for its direction: reads share the read bandwidth and writes the write (NAND program)
bandwidth, each reserved behind the transfers of its own direction already reserved. Reads and writes
interfere through the channels they occupy (a read waits for a free channel), not through one pipe: the
UFS/eMMC link is faster than NAND programming, so a write's program time does not block the link. With `preempt_fg` (FastTrack) a foreground
write overtakes the background writes still waiting in the device queue.
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
    """Numbers of one storage device. Bandwidths in bytes/s, latencies in ns (per command, before transfer)."""

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

    def to_dict(self) -> dict:
        return asdict(self)


def _from_figures(name: str, queue_depth: int, channels: int, seq_read_mb: float, seq_write_mb: float,
                  rand_read_iops: float, rand_write_iops: float, flush_ns: int, discard_ns: int,
                  source: str) -> DeviceProfile:
    """Derive the model's parameters from the four numbers vendors publish.

    Sequential bandwidths are used as is. Random 4 KB IOPS (at full queue depth) are reached when all
    channels are busy, so the per-command latency is channels / IOPS (minus the 4 KB transfer)."""
    rbw, wbw = seq_read_mb * MB, seq_write_mb * MB
    rlat = channels / rand_read_iops - 4096 / rbw
    wlat = channels / rand_write_iops - 4096 / wbw
    return DeviceProfile(name, queue_depth, channels, int(rlat * 1e9), int(wlat * 1e9), rbw, wbw,
                         flush_ns, discard_ns, source)


# Calibrated once; every scenario and figure uses these and nothing else.
PROFILES: dict[str, DeviceProfile] = {
    # eMMC 5.0 class (Nexus 5 / Galaxy S5 era): ~250 MB/s read, ~90 MB/s write, ~7,000 / ~5,000 random
    # 4 KB IOPS (vendor announcements of eMMC 5.0 parts, 2013-2014). eMMC before 5.1 has no command queue:
    # one command at a time. Cache flush and discard costs are typical measured orders of magnitude.
    "emmc": _from_figures("emmc", queue_depth=1, channels=1, seq_read_mb=250, seq_write_mb=90,
                          rand_read_iops=7000, rand_write_iops=5000, flush_ns=2_000_000,
                          discard_ns=2_000_000,
                          source="eMMC 5.0 vendor figures: 250/90 MB/s seq R/W, 7K/5K random 4KB IOPS, no CMDQ"),
    # UFS 2.0 (Galaxy S6, 2015): 350 MB/s read, 150 MB/s write, 19,000 / 14,000 random 4 KB IOPS
    # (Samsung's announcement); 32 command slots (UFS spec); 4 parallel units assumed.
    "ufs": _from_figures("ufs", queue_depth=32, channels=4, seq_read_mb=350, seq_write_mb=150,
                         rand_read_iops=19000, rand_write_iops=14000, flush_ns=1_000_000,
                         discard_ns=1_000_000,
                         source="UFS 2.0 vendor figures (Galaxy S6): 350/150 MB/s seq R/W, 19K/14K random 4KB IOPS, QD 32"),
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
        self.busy = 0  # channels in service
        self.busy_writes = 0  # writes/discards in service (a flush waits for them)
        self.read_free_at = 0
        self.write_free_at = 0
        self.bytes_read = 0
        self.bytes_written = 0
        self.commands = 0
        self._complete_cb = self._complete

    def can_accept(self) -> bool:
        return self.accepted < self.p.queue_depth

    def submit(self, req) -> None:
        self.accepted += 1
        if req.op == OP_READ:
            self.reads.append(req)
        elif self.preempt_fg and req.fg and req.op == OP_WRITE:
            # FastTrack: overtake background writes still waiting, but not a flush/discard barrier.
            i = len(self.writes)
            while i > 0 and not self.writes[i - 1].fg and self.writes[i - 1].op == OP_WRITE:
                i -= 1
            self.writes.insert(i, req)
        else:
            self.writes.append(req)
        self._start()

    def _start(self) -> None:
        p = self.p
        eng = self.engine
        while self.busy < p.channels:
            if self.reads:
                req = self.reads.popleft()
                now = eng.now
                start = now + p.read_lat_ns
                xfer = int(req.nbytes * 1e9 / p.read_bw)
            elif self.writes:
                req = self.writes[0]
                if req.op == OP_FLUSH:
                    if self.busy_writes:
                        return  # barrier: wait for earlier writes and discards
                    self.writes.popleft()
                    self.busy += 1
                    self.busy_writes += 1
                    eng.after(p.flush_ns, self._complete_cb, req)
                    continue
                self.writes.popleft()
                now = eng.now
                self.busy_writes += 1
                if req.op == OP_DISCARD:
                    self.busy += 1
                    eng.after(p.discard_ns, self._complete_cb, req)
                    continue
                start = now + p.write_lat_ns
                xfer = int(req.nbytes * 1e9 / p.write_bw)
            else:
                return
            self.busy += 1
            if req.op == OP_READ:
                if self.read_free_at > start:
                    start = self.read_free_at
                done = self.read_free_at = start + xfer
            else:
                if self.write_free_at > start:
                    start = self.write_free_at
                done = self.write_free_at = start + xfer
            eng.at(done, self._complete_cb, req)

    def _complete(self, req) -> None:
        self.busy -= 1
        self.accepted -= 1
        self.commands += 1
        op = req.op
        if op == OP_READ:
            self.bytes_read += req.nbytes
        else:
            self.busy_writes -= 1
            if op == OP_WRITE:
                self.bytes_written += req.nbytes
        if self.on_complete is not None:
            self.on_complete(req)
        self._start()
