"""Device model: calibration from the public figures, read priority, write FIFO, flush as a barrier, reads
stalled by programs on their dies, the write buffer, FastTrack's in-device preemption."""
import dataclasses

import pytest

from droidlag.iolab.sim.app import Task
from droidlag.iolab.sim.blocklayer import Request
from droidlag.iolab.sim.device import MB, OP_DISCARD, OP_FLUSH, OP_READ, OP_WRITE, PROFILES, Device
from droidlag.iolab.sim.engine import Engine

T = Task("t", 1, 10001)


def _run(profile, reqs):
    eng = Engine(0)
    done = []
    dev = Device(eng, profile, on_complete=lambda r: done.append(r))
    for r in reqs:
        dev.submit(r)
    eng.run()
    return done, eng


def test_profiles_reach_their_published_figures():
    for name, iops_r in (("ufs", 19000), ("emmc", 7000)):
        p = PROFILES[name]
        reqs = [Request(OP_READ, i * 8, 4096, True, T) for i in range(p.queue_depth)]
        done, eng = _run(p, reqs)
        # a full queue of 4 KB reads completes at about the published random-read IOPS
        rate = len(done) / (eng.now / 1e9)
        assert 0.8 * iops_r < rate < 1.25 * iops_r, (name, rate)


def test_flush_waits_for_earlier_discards():
    p = PROFILES["ufs"]
    reqs = [Request(OP_DISCARD, i, 1 << 20, False, T) for i in range(6)] + [Request(OP_FLUSH, 0, 0, True, T)]
    done, _ = _run(p, reqs)
    assert done[-1].op == OP_FLUSH


def test_fasttrack_device_preemption_lets_fg_write_overtake():
    p = PROFILES["ufs"]
    bg = [Request(OP_WRITE, i * 1024, 512 * 1024, False, T) for i in range(12)]
    fg = Request(OP_WRITE, 99, 4096, True, T)
    fg.fg = True
    for preempt in (False, True):
        eng = Engine(0)
        done = []
        dev = Device(eng, p, on_complete=done.append, preempt_fg=preempt)
        for r in bg + [fg]:
            dev.submit(r)
        eng.run()
        pos = done.index(fg)
        if preempt:
            assert pos <= p.channels  # only the writes already in service complete first
        else:
            assert pos == len(done) - 1  # the in-device write FIFO
        for r in done:
            r.done_ns = -1


def _bg_writes(n, size=512 * 1024):
    return [Request(OP_WRITE, 10_000 + i * 1024, size, False, T) for i in range(n)]


def _finish_times(profile, reqs, preempt=False):
    eng = Engine(0)
    dev = Device(eng, profile, preempt_fg=preempt)
    done = {}
    dev.on_complete = lambda r: done.__setitem__(id(r), eng.now)
    for r in reqs:
        dev.submit(r)
    eng.run()
    return done, dev


def test_a_read_waits_for_a_program_on_its_dies_not_for_whole_writes():
    p = PROFILES["ufs"]
    small, big = Request(OP_READ, 1, 4096, True, T), Request(OP_READ, 9, 512 * 1024, True, T)
    for read, dies in ((small, 1), (big, p.dies)):
        done, dev = _finish_times(p, _bg_writes(8) + [read])
        alone = p.read_lat_ns + read.nbytes * 1e9 / p.read_bw
        stall = p.program_ns * dies // (dies + 1)
        assert done[id(read)] == pytest.approx(alone + stall, rel=0.01)  # not behind 8 x 3.5 ms of writes
        assert dev.read_stall_ns == stall
    # a 4 KB read is stalled less than a 512 KB one (one die vs all of them)
    assert p.program_ns // 2 < p.program_ns * p.dies // (p.dies + 1)


def test_sustained_writes_slow_down_once_the_write_buffer_is_full():
    p = dataclasses.replace(PROFILES["ufs"], wbuf_bytes=8 * MB, sustained_write_bw=50 * MB)
    reqs = _bg_writes(64, 1 << 20)  # 64 MB back to back
    done, dev = _finish_times(p, reqs)
    t = [done[id(r)] for r in reqs]
    early = 1e9 * (1 << 20) / (t[3] - t[2])  # bytes/s while the buffer has room
    late = 1e9 * (1 << 20) / (t[-1] - t[-2])
    assert early == pytest.approx(p.write_bw, rel=0.05)
    assert late == pytest.approx(p.sustained_write_bw, rel=0.05)
    assert dev.sustained_bytes > 40 * MB
    # the buffer drains at the sustained rate while the device is idle: burst speed again afterwards
    eng = Engine(0)
    dev = Device(eng, p)
    dev.wbuf_level, dev.wbuf_t = p.wbuf_bytes, 0
    assert dev._write_time(1 << 20, 0) == int((1 << 20) * 1e9 / p.sustained_write_bw)
    assert dev._write_time(1 << 20, 10**9) == int((1 << 20) * 1e9 / p.write_bw)
    assert PROFILES["ufs"].wbuf_bytes == 0  # off in the calibrated profiles (no public figure)


def test_fasttrack_fg_commands_interrupt_bg_programs_but_flush_still_waits_for_discards():
    p = PROFILES["ufs"]
    fg_read = Request(OP_READ, 1, 4096, True, T)
    fg_read.fg = True
    done, dev = _finish_times(p, _bg_writes(8) + [fg_read], preempt=True)
    assert dev.read_stall_ns == 0  # HPI: no wait for the program under way
    fg_flush = Request(OP_FLUSH, 0, 0, True, T)
    fg_flush.fg = True
    bg = _bg_writes(8)
    done, _ = _finish_times(p, bg + [fg_flush], preempt=True)
    assert done[id(fg_flush)] < min(done[id(r)] for r in bg)  # covers no BG write still in flight
    disc = Request(OP_DISCARD, 5, 1 << 20, False, T)
    fg_flush2 = Request(OP_FLUSH, 0, 0, True, T)
    fg_flush2.fg = True
    done, _ = _finish_times(p, [disc, fg_flush2], preempt=True)
    assert done[id(fg_flush2)] > done[id(disc)]  # the quasi-asynchronous trap stays
