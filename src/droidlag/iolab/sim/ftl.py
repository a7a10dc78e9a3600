"""A page-mapped flash translation layer: blocks of pages, over-provisioning, greedy garbage collection with
valid-page copies, and TRIM; the device-side cost of every host write, copy, erase and discard.

This is the part of the flash device the write-amplification question lives in (wam.md): a deleted file
whose pages were never discarded is still *valid* to the FTL, so garbage collection copies it, and writes
slow down. Mapping units are `unit_bytes` (4 KB, the flash page, by default; a coarser unit keeps a
long simulation fast and is stated in the output). The tables are numpy arrays and every operation works
on a whole run of pages at once, so a simulated day of gigabytes takes seconds.

Costs are device time in ns: a host page is programmed at the sequential write rate, a 4 KB random write
pays the random-write command cost, a GC copy reads and programs a page inside the device, an erase takes
tBERS, and a discard updates the mapping of each page it unmaps (plus a fixed cost per command).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

FREE, OPEN, CLOSED = 0, 1, 2
_NONE = np.int32(-1)


@dataclass(frozen=True)
class FlashProfile:
    """One flash device's FTL geometry and costs. Sizes in bytes, times in ns, rates in bytes/s."""

    name: str
    user_bytes: int
    op_fraction: float       # spare capacity beyond the user capacity, as a fraction of it
    pages_per_block: int
    page_bytes: int
    seq_write_bw: float      # host sequential write rate on a clean device
    rand_write_iops: float   # host random 4 KB writes per second on a clean device
    copy_ns: int             # one valid page moved by GC (page read + program, inside the device)
    erase_ns: int            # one block erase (tBERS), seen by the host divided by `parallel_units`
    parallel_units: int      # dies programming/erasing in parallel
    discard_cmd_ns: int      # fixed cost of one discard command
    discard_page_ns: int     # mapping update per mapped page a discard unmaps
    gc_free_low: int         # GC starts when free blocks fall below this
    gc_free_high: int        # and runs until this many are free
    idle_free_bytes: int     # idle-time GC (background operations) frees blocks up to this much space
    source: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


# UFS 2.1 phone flash of the TMC'23 study's era (2018-2020): a 64 GB part, 3D TLC. Public figures used:
# sequential write ~200 MB/s and random 4 KB write ~35,000 IOPS on a fresh part (UFS 2.1 vendor sheets),
# tPROG ~0.7 ms per 16 KB page and tBERS ~3.5 ms per block (3D TLC datasheet orders of magnitude), four dies
# working in parallel; ~7% spare (the GB/GiB gap: 64 GB sold, 64 GiB of NAND). Blocks of 256 x 4 KB pages as
# wam.md states; the controller stripes writes over its four dies and collects and erases one block per die
# together (a superblock), so the FTL's unit of allocation and GC is 4 x 256 pages. A discard updates
# page-level mapping entries: a DRAM-less mobile controller pages its map in from NAND, ~1 us per 4 KB unmapped (~4 GB/s of deleted data) plus ~1 ms per command; the cost of a
# batched trim is then dominated by the data it actually unmaps, as measured fstrim times suggest.
UFS21_64GB = FlashProfile(
    name="ufs2.1-64GB", user_bytes=64 * 10**9, op_fraction=0.0737, pages_per_block=1024, page_bytes=4096,
    seq_write_bw=200e6, rand_write_iops=35_000, copy_ns=220_000, erase_ns=3_500_000, parallel_units=4,
    discard_cmd_ns=1_000_000, discard_page_ns=1_000, gc_free_low=8, gc_free_high=12,
    idle_free_bytes=2 * 10**9,
    source="UFS 2.1 64 GB (3D TLC): 200 MB/s seq write, 35K random 4KB write IOPS, 256 x 4 KB pages/block "
           "collected 4 at a time (one per die), 7.4% spare, tBERS 3.5 ms, 4 dies",
)


class FTL:
    """Page-mapped FTL over logical mapping units (LPNs). Host writes and GC copies go to two separate open
    blocks (hot/cold separation, as most controllers do); GC is greedy (fewest valid units) and on demand.

    Counters (`host_units`, `copied_units`, `erases`, `trimmed_units`) accumulate; `write_ns_since` turns
    the change since a `counters()` reading into device time."""

    def __init__(self, profile: FlashProfile, unit_bytes: int = 4096):
        if unit_bytes % profile.page_bytes:
            raise ValueError("unit_bytes must be a multiple of the flash page size")
        self.p = profile
        self.unit_bytes = unit_bytes
        # a coarser mapping unit keeps the physical block size: fewer, larger units per block
        self.ppb = max(8, profile.pages_per_block * profile.page_bytes // unit_bytes)
        self.n_lpn = profile.user_bytes // unit_bytes
        phys_units = int(self.n_lpn * (1 + profile.op_fraction))
        self.n_blocks = -(-phys_units // self.ppb)
        self.l2p = np.full(self.n_lpn, -1, dtype=np.int32)
        self.p2l = np.full(self.n_blocks * self.ppb, -1, dtype=np.int32)
        self.valid = np.zeros(self.n_blocks, dtype=np.int32)
        self.state = np.zeros(self.n_blocks, dtype=np.int8)
        # GC victim key: valid count of closed blocks, a large value for the others
        self._key = np.full(self.n_blocks, np.iinfo(np.int32).max, dtype=np.int32)
        self._free = list(range(self.n_blocks - 1, -1, -1))  # a stack: pop() takes the lowest id first
        self._open = {"host": [-1, self.ppb], "gc": [-1, self.ppb]}  # [block, next page]
        self.host_units = 0
        self.copied_units = 0
        self.erases = 0
        self.trimmed_units = 0
        self.idle_copied_units = 0  # copies made by idle-time GC (not seen by host writes)

    # ---- state ----
    def copy(self) -> FTL:
        """An independent copy (for a measurement that must not disturb the simulated device)."""
        other = FTL.__new__(FTL)
        other.__dict__.update(self.__dict__)
        for name in ("l2p", "p2l", "valid", "state", "_key"):
            setattr(other, name, getattr(self, name).copy())
        other._free = list(self._free)
        other._open = {k: list(v) for k, v in self._open.items()}
        return other

    @property
    def valid_units(self) -> int:
        return int(self.valid.sum())

    def utilisation(self) -> float:
        """Valid units over physical units: what GC sees as live data."""
        return self.valid_units / (self.n_blocks * self.ppb)

    def counters(self) -> tuple[int, int, int, int]:
        return self.host_units, self.copied_units, self.erases, self.trimmed_units

    # ---- writes ----
    def write(self, lpns: np.ndarray) -> None:
        """Host write of these logical units (unique within the call), in order."""
        lpns = np.asarray(lpns, dtype=np.int32)
        self.host_units += len(lpns)
        self._append(lpns, "host")

    def write_range(self, start: int, count: int) -> None:
        """Host write of `count` consecutive logical units from `start`."""
        self.write(np.arange(start, start + count, dtype=np.int32))

    def _append(self, lpns: np.ndarray, stream: str) -> None:
        i, n = 0, len(lpns)
        ppb = self.ppb
        while i < n:
            blk, off = self._open[stream]
            if off >= ppb:
                self._close(blk)
                blk = self._take_free(stream)
                off = 0
            k = min(ppb - off, n - i)
            chunk = lpns[i:i + k]
            self._invalidate(self.l2p[chunk])
            base = blk * ppb + off
            ppns = np.arange(base, base + k, dtype=np.int32)
            self.l2p[chunk] = ppns
            self.p2l[base:base + k] = chunk
            self.valid[blk] += k
            self._open[stream][1] = off + k
            i += k

    def _invalidate(self, ppns: np.ndarray) -> None:
        old = ppns[ppns >= 0]
        if not len(old):
            return
        self.p2l[old] = _NONE
        blocks, counts = np.unique(old // self.ppb, return_counts=True)
        self.valid[blocks] -= counts.astype(np.int32)
        closed = self.state[blocks] == CLOSED
        self._key[blocks[closed]] = self.valid[blocks[closed]]

    def _close(self, blk: int) -> None:
        if blk >= 0:
            self.state[blk] = CLOSED
            self._key[blk] = self.valid[blk]

    def _take_free(self, stream: str) -> int:
        if stream == "host" and len(self._free) <= self.p.gc_free_low:
            self._collect()
        if not self._free:
            raise RuntimeError("FTL out of free blocks (no invalid page left to collect)")
        blk = self._free.pop()
        self.state[blk] = OPEN
        self._key[blk] = np.iinfo(np.int32).max
        self._open[stream] = [blk, 0]
        return blk

    def _collect(self) -> None:
        """Greedy GC: erase the closed block with the fewest valid units after moving them, until enough
        blocks are free."""
        ppb = self.ppb
        while len(self._free) < self.p.gc_free_high:
            victim = int(np.argmin(self._key))
            if self.state[victim] != CLOSED or self.valid[victim] >= ppb:
                return  # nothing left to gain
            self._reclaim(victim)

    def _reclaim(self, victim: int) -> int:
        """Move a victim block's valid units to the GC stream and erase it. Returns the units copied."""
        ppb = self.ppb
        live = self.p2l[victim * ppb:(victim + 1) * ppb]
        lpns = live[live >= 0].copy()
        if len(lpns):
            self.copied_units += len(lpns)
            self._append(lpns, "gc")
        self._erase(victim)
        return len(lpns)

    def idle_collect(self, free_target: int, max_valid_fraction: float = 0.75) -> int:
        """Background GC while the device is idle (eMMC/UFS background operations): collect closed blocks
        less than `max_valid_fraction` valid until `free_target` blocks are free. Returns blocks freed."""
        freed, limit = 0, int(max_valid_fraction * self.ppb)
        while len(self._free) < free_target:
            victim = int(np.argmin(self._key))
            if self.state[victim] != CLOSED or self.valid[victim] > limit:
                break
            self.idle_copied_units += self._reclaim(victim)
            freed += 1
        return freed

    def _erase(self, blk: int) -> None:
        ppb = self.ppb
        self.p2l[blk * ppb:(blk + 1) * ppb] = _NONE
        self.valid[blk] = 0
        self.state[blk] = FREE
        self._key[blk] = np.iinfo(np.int32).max
        self._free.append(blk)
        self.erases += 1

    # ---- discard ----
    def trim(self, lpns: np.ndarray) -> int:
        """Unmap these logical units. Returns how many were mapped."""
        ppns = self.l2p[lpns]
        mapped = ppns >= 0
        n = int(mapped.sum())
        if n:
            self._invalidate(ppns[mapped])
            self.l2p[lpns] = _NONE
            self.trimmed_units += n
        return n

    # ---- time ----
    def write_ns(self, host_units: int, copied: int, erases: int, random: bool) -> int:
        """Device time for host writes of `host_units` units with the GC work they caused."""
        p = self.p
        if random:
            host = host_units * (self.unit_bytes / 4096) * 1e9 / p.rand_write_iops
        else:
            host = host_units * self.unit_bytes * 1e9 / p.seq_write_bw
        pages_per_unit = self.unit_bytes // p.page_bytes
        gc = copied * pages_per_unit * p.copy_ns / p.parallel_units + erases * p.erase_ns / p.parallel_units
        return int(host + gc)

    def write_ns_since(self, before: tuple[int, int, int, int], random: bool) -> int:
        """Device time of the host writes and the GC work done since `before` (a `counters()` reading)."""
        now = self.counters()
        return self.write_ns(now[0] - before[0], now[1] - before[1], now[2] - before[2], random)

    def discard_ns(self, mapped_units: int, commands: int = 1) -> int:
        """Device time of discards that unmap `mapped_units` units in `commands` commands."""
        p = self.p
        return int(commands * p.discard_cmd_ns + mapped_units * (self.unit_bytes // p.page_bytes) * p.discard_page_ns)
