"""Workload behaviours as generator processes: what apps do to the storage stack. Sizes in bytes, times in ns.
Each app writes/reads in its own LBA region so requests of different apps never look sequential."""
from __future__ import annotations

from droidlag.iolab.sim.device import OP_READ, OP_WRITE
from droidlag.iolab.sim.engine import MS

KB = 1024
MB = 1024 * 1024
_REGION = 1 << 26  # sectors per app (32 GiB)


def region(uid: int) -> int:
    return (uid % 4096) * _REGION


def bulk_writer(stack, task, total: int, file: int, call_bytes: int = 1 * MB, fsync_every: int = 0):
    """An I/O-intensive background writer (app update, file download): buffered writes as fast as the page
    cache takes them, an fsync every `fsync_every` bytes (0: only at the end)."""
    pc = stack.pc
    base = region(task.uid) + file * (1 << 22)
    done = since = 0
    while done < total:
        n = min(call_bytes, total - done)
        yield from pc.write(task, n, file, base + done // 512)
        done += n
        since += n
        if fsync_every and since >= fsync_every:
            since = 0
            yield from pc.fsync(task, file)
    yield from pc.fsync(task, file)
    return done


def sequential_files_reader(stack, task, total: int, file_bytes: int = 4 * MB, think_ns: int = 0):
    """Read `total` bytes as a series of files read start to end (a gallery of pictures)."""
    pc = stack.pc
    rng = stack.rng
    base = region(task.uid)
    done = 0
    while done < total:
        n = min(file_bytes, total - done)
        lba = base + rng.randrange(0, _REGION // 2)
        yield from pc.read(task, n, lba, think_ns=think_ns)
        done += n
    return done


def random_chunks_reader(stack, task, total: int, chunk: int = 256 * KB, think_ns: int = 0):
    """Read `total` bytes in `chunk`-sized pieces at random places (assets of a game)."""
    pc = stack.pc
    rng = stack.rng
    base = region(task.uid)
    done = 0
    while done < total:
        n = min(chunk, total - done)
        yield from pc.read(task, n, base + rng.randrange(0, _REGION // 2), chunk=n)
        done += n
        if think_ns:
            yield think_ns
    return done


def write_and_fsync(stack, task, total: int, file: int):
    """Write `total` bytes buffered, then fsync (a camera saving what it holds when suspended)."""
    base = region(task.uid) + file * (1 << 22)
    yield from stack.pc.write(task, total, file, base)
    yield from stack.pc.fsync(task, file)
    return total


def launch_mix(stack, task, read_bytes: int, write_bytes: int, file: int, rounds: int = 10,
               read_chunk: int = 64 * KB, think_ns: int = 0):
    """An app launch / run-time operation as SmartIO saw it: reads (random pieces) interleaved with small
    synchronous writes (database commits: write + fsync), reads about 5x the writes."""
    rng = stack.rng
    pc = stack.pc
    base = region(task.uid)
    rper = max(read_bytes // rounds, 4 * KB)
    wper = max(write_bytes // rounds, 4 * KB) if write_bytes else 0
    for i in range(rounds):
        got = 0
        while got < rper:
            n = min(read_chunk, rper - got)
            yield from pc.read(task, n, base + rng.randrange(0, _REGION // 2), chunk=n)
            got += n
        if wper:
            yield from pc.write(task, wper, file, base + _REGION // 2 + i * (wper // 512 + 8))
            yield from pc.fsync(task, file)
        if think_ns:
            yield think_ns
    return read_bytes + write_bytes


def direct_reader(stack, task, count: int, nbytes: int, sequential: bool, latencies: list):
    """O_DIRECT reads one at a time; appends each latency (ns) to `latencies`."""
    rng = stack.rng
    base = region(task.uid)
    lba = base
    eng = stack.engine
    for _ in range(count):
        if not sequential:
            lba = base + rng.randrange(0, _REGION // 2) // 8 * 8
        t0 = eng.now
        yield from stack.pc.direct_io(task, OP_READ, nbytes, lba)
        latencies.append(eng.now - t0)
        lba += nbytes // 512
    return count


def small_sporadic(stack, task, ops: int, file: int, gap_ns: int = 50 * MS, latencies: list | None = None):
    """Small foreground I/O (a chat app: read 64 KB, write 16 KB, fsync) every `gap_ns`; op latencies in ns."""
    rng = stack.rng
    pc = stack.pc
    eng = stack.engine
    base = region(task.uid)
    for i in range(ops):
        t0 = eng.now
        yield from pc.read(task, 64 * KB, base + rng.randrange(0, _REGION // 2), chunk=64 * KB)
        yield from pc.write(task, 16 * KB, file, base + _REGION // 2 + i * 64)
        yield from pc.fsync(task, file)
        if latencies is not None:
            latencies.append(eng.now - t0)
        yield gap_ns
    return ops


__all__ = ["bulk_writer", "sequential_files_reader", "random_chunks_reader", "write_and_fsync", "launch_mix",
           "direct_reader", "small_sporadic", "OP_READ", "OP_WRITE", "KB", "MB"]
