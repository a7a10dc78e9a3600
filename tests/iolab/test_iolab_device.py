"""Device model: calibration from the public figures, read priority, write FIFO, flush as a barrier."""
from droidlag.iolab.sim.app import Task
from droidlag.iolab.sim.blocklayer import Request
from droidlag.iolab.sim.device import OP_DISCARD, OP_FLUSH, OP_READ, OP_WRITE, PROFILES, Device
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
