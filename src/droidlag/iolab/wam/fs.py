"""The file system above the FTL, as far as WAM needs it: which logical units each file holds, a rotating
allocator (ext4's goal-based allocation walks forward through free space, so freed units are reused only
after the allocator comes round again), and the units freed since the last trim."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from droidlag.iolab.sim.ftl import FTL


class FileSystemFull(Exception):
    """The simulated usage does not fit the simulated device."""


class FileSystem:
    """Files as arrays of logical units on one FTL. Deleting a file frees its units in the file system; the
    FTL still holds them as valid until they are discarded or overwritten."""

    def __init__(self, ftl: FTL):
        self.ftl = ftl
        self.unit = ftl.unit_bytes
        self.used = np.zeros(ftl.n_lpn, dtype=bool)
        # kind -> {id: units}, oldest first
        self.files: dict[str, OrderedDict[int, np.ndarray]] = {}
        self.bytes_by_kind: dict[str, int] = {}
        self.cursor = 0
        self._next_id = 0
        self._dirty: list[np.ndarray] = []  # files written since the last writeback
        self.writeback_chunk = max(1, (512 << 10) // self.unit)

    def flush(self) -> None:
        """Write back the dirty files. Writeback of several files interleaves their data at the device in
        request-sized chunks (512 KB), so files written together share flash blocks, whatever their
        lifetimes: the mixing that makes garbage collection copy. Units freed before writeback are skipped."""
        if not self._dirty:
            return
        parts, self._dirty = self._dirty, []
        if len(parts) == 1:
            order = parts[0]
        else:
            c = self.writeback_chunk
            chunks = [[p[i:i + c] for i in range(0, len(p), c)] for p in parts]
            longest = max(len(ch) for ch in chunks)
            order = np.concatenate([ch[r] for r in range(longest) for ch in chunks if r < len(ch)])
        order = order[self.used[order]]
        if len(order):
            self.ftl.write(order)

    def copy(self, ftl: FTL) -> FileSystem:
        """An independent copy of the file system, on `ftl` (a copy of this one's FTL)."""
        other = FileSystem.__new__(FileSystem)
        other.__dict__.update(self.__dict__)
        other.ftl = ftl
        other.used = self.used.copy()
        other.files = {k: v.copy() for k, v in self.files.items()}
        other.bytes_by_kind = dict(self.bytes_by_kind)
        other._dirty = list(self._dirty)
        return other

    @property
    def used_units(self) -> int:
        return int(self.used.sum())

    def units_for(self, nbytes: int) -> int:
        return max(1, -(-nbytes // self.unit))

    def allocate(self, count: int, commit: bool = True) -> np.ndarray:
        """`count` free units from the cursor on (wrapping), in address order; marked used if `commit`."""
        n = len(self.used)
        got: list[np.ndarray] = []
        need, cur, scanned = count, self.cursor, 0
        while need > 0:
            if scanned >= n:
                raise FileSystemFull(f"the file system is full ({self.used_units} of {n} units of "
                                     f"{self.unit // 1024} KB in use)")
            window = min(n - cur, max(4 * need, 1 << 16))
            free = np.flatnonzero(~self.used[cur:cur + window])[:need] + cur
            got.append(free.astype(np.int32))
            need -= len(free)
            scanned += window
            cur = int(free[-1]) + 1 if need == 0 and len(free) else cur + window
            if cur >= n:
                cur = 0
        units = np.concatenate(got) if len(got) > 1 else got[0]
        if commit:
            self.used[units] = True
            self.cursor = cur
        return units

    def create(self, kind: str, nbytes: int) -> int:
        """Allocate a new file; its data reaches the FTL at the next writeback (`flush`). Returns its id."""
        units = self.allocate(self.units_for(nbytes))
        self._dirty.append(units)
        fid = self._next_id
        self._next_id += 1
        self.files.setdefault(kind, OrderedDict())[fid] = units
        self.bytes_by_kind[kind] = self.bytes_by_kind.get(kind, 0) + len(units) * self.unit
        return fid

    def create_many(self, kind: str, sizes) -> None:
        """Several files written back to back (one allocation, one sequential write)."""
        counts = [self.units_for(b) for b in sizes]
        units = self.allocate(sum(counts))
        self._dirty.append(units)
        files = self.files.setdefault(kind, OrderedDict())
        for part in np.split(units, np.cumsum(counts)[:-1]):
            files[self._next_id] = part
            self._next_id += 1
        self.bytes_by_kind[kind] = self.bytes_by_kind.get(kind, 0) + len(units) * self.unit

    def delete(self, kind: str, fid: int) -> np.ndarray:
        """Free a file's units in the file system (no discard here: the WAM policy decides)."""
        units = self.files[kind].pop(fid)
        self.used[units] = False
        self.bytes_by_kind[kind] -= len(units) * self.unit
        return units

    def oldest(self, kind: str) -> int | None:
        """The id of the oldest file of this kind, or None."""
        files = self.files.get(kind)
        return next(iter(files)) if files else None

    def free_mapped(self, start: int, end: int) -> np.ndarray:
        """Units in [start, end) that are free in the file system but still mapped in the FTL: what a trim of
        that range must discard."""
        sl = slice(start, end)
        return np.flatnonzero(~self.used[sl] & (self.ftl.l2p[sl] >= 0)).astype(np.int32) + start

    def stale_units(self) -> int:
        """Free in the file system, valid in the FTL (deleted, not yet discarded nor overwritten)."""
        return int((~self.used & (self.ftl.l2p >= 0)).sum())


def extents(units: np.ndarray) -> int:
    """How many runs of consecutive units (one discard command each)."""
    if not len(units):
        return 0
    s = np.sort(units)
    return int(np.count_nonzero(np.diff(s) != 1)) + 1
