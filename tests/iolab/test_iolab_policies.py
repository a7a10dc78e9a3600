"""Each policy's mechanism, shown on a small stack: who gets dispatched, boosted or the lock first."""
import pytest

from droidlag.iolab.sim.blocklayer import Request
from droidlag.iolab.sim.device import OP_READ, OP_WRITE
from droidlag.iolab.sim.engine import MS
from droidlag.iolab.sim.pagecache import DIRTY
from droidlag.iolab.sim.policies import POLICIES, get_policy
from droidlag.iolab.sim.policies.smartio import profile_concurrency
from droidlag.iolab.sim.stack import Stack


def _stack(policy, device="ufs"):
    st = Stack(policy, device, seed=0)
    order = []
    submit = st.device.submit

    def rec(req):
        order.append(req)
        submit(req)

    st.device.submit = rec
    bg = st.new_app("bg").task("io")
    fg_app = st.new_app("fg")
    st.fg.set_top(fg_app.uid, 0)
    return st, order, bg, fg_app.task("main")


def _fill(st, bg, n=None):
    """Occupy every device slot and leave some async writes queued behind."""
    n = n or st.profile.queue_depth + 4
    return [st.blk.submit(Request(OP_WRITE, 10_000 + i * 1024, 512 * 1024, False, bg)) and None for i in range(n)]


def _req(op, task, sync=True, lba=1):
    return Request(op, lba, 4096 if op == OP_READ else 64 * 1024, sync, task)


def test_registry_has_all_ten_policies():
    assert sorted(POLICIES) == sorted(["noop", "cfq", "deadline", "qasio", "rcp", "smartio", "faio-fpm",
                                       "faio-fid", "faio", "fasttrack"])
    with pytest.raises(ValueError):
        get_policy("bogus")


def test_noop_is_fifo():
    st, order, bg, fg = _stack("noop")
    _fill(st, bg)
    r = _req(OP_READ, fg)
    st.blk.submit(r)
    st.run()
    assert order.index(r) == len(order) - 1  # behind every earlier write


def test_cfq_sync_read_preempts_async_and_rt_beats_be():
    st, order, bg, fg = _stack("cfq")
    _fill(st, bg)
    r = _req(OP_READ, fg)
    st.blk.submit(r)
    st.run()
    assert order.index(r) == st.profile.queue_depth  # first after the writes already in the device
    st, order, bg, fg = _stack("cfq")
    _fill(st, bg)
    be = _req(OP_READ, bg)
    fg.ioprio_class = "rt"
    rt = _req(OP_READ, fg)
    st.blk.submit(be)
    st.blk.submit(rt)
    st.run()
    assert order.index(rt) < order.index(be)


def test_deadline_prefers_reads_but_serves_expired_writes():
    st, order, bg, fg = _stack("deadline")
    _fill(st, bg)
    r = _req(OP_READ, fg)
    st.blk.submit(r)
    st.run()
    assert order.index(r) == st.profile.queue_depth
    sched = st.blk.sched
    w = _req(OP_WRITE, bg, sync=False)
    w.submit_ns = 0
    sched.add(w, 0)
    reads = [_req(OP_READ, fg) for _ in range(3)]
    for x in reads:
        x.submit_ns = 6000 * MS
        sched.add(x, 6000 * MS)
    sched.batch_left = 0
    assert sched.next(6000 * MS) is w  # past its 5 s deadline


def test_qasio_boosts_an_async_request_a_task_waits_on():
    st, order, bg, fg = _stack("qasio")
    _fill(st, bg)
    waited = _req(OP_WRITE, bg, sync=False, lba=777)
    st.blk.submit(waited)
    st.blk.wait_on(waited, fg)
    st.run()
    assert waited.boosted
    assert order.index(waited) == st.profile.queue_depth  # ahead of the other queued async writes


def test_rcp_lock_holder_inherits_priority_of_fg_waiter():
    st, order, bg, fg = _stack("rcp")
    _fill(st, bg)
    pending = _req(OP_WRITE, bg, sync=False, lba=555)
    st.blk.submit(pending)
    st.lock.acquire(bg)
    bg.waiting_req = pending
    st.lock.acquire(fg)  # the foreground task blocks on the holder
    assert bg.boosted and pending.boosted
    later = _req(OP_WRITE, bg, sync=False, lba=556)
    st.blk.submit(later)  # issued by the boosted holder: high
    st.run()
    q = st.profile.queue_depth
    assert {order.index(pending), order.index(later)} == {q, q + 1}
    st.pc._release(bg)  # holder done: no longer critical
    assert not bg.boosted


def test_smartio_reads_first_and_write_starvation_bound():
    st, order, bg, fg = _stack("smartio")
    sched = st.blk.sched
    w = _req(OP_WRITE, bg, sync=True)
    w.submit_ns = 0
    sched.add(w, 0)
    r = _req(OP_READ, fg)
    r.submit_ns = 10 * MS
    sched.add(r, 10 * MS)
    assert sched.next(20 * MS) is r  # read before the earlier write
    r2 = _req(OP_READ, fg)
    r2.submit_ns = 150 * MS
    sched.add(r2, 150 * MS)
    assert sched.next(150 * MS) is w  # the write has waited its 100 ms: served anyway
    n = profile_concurrency(st.profile, OP_WRITE, 512 * 1024)
    assert 1 <= n <= st.profile.queue_depth and sched.write_concurrency == n


def _dirty_cache(st):
    """Make the whole LRU dirty and free pages scarce: every allocation must write back first."""
    pc = st.pc
    for e in pc.lru:
        if e.state:
            e.state = DIRTY
    pc.dirty = sum(e.pages for e in pc.lru)
    pc.clean.clear()
    pc.free = pc.low_wm


def _lock_race(policy):
    st, order, bg, fg = _stack(policy)
    _dirty_cache(st)
    ends = {}

    def alloc(task, delay, tag):
        yield delay
        yield from st.pc.segment(task, 32, 128 * 1024)
        ends[tag] = st.now

    st.spawn(alloc(bg, 0, "bg"))
    st.spawn(alloc(fg, 1 * MS, "fg"))
    st.run(until=60_000 * MS)
    return ends, st


def test_faio_fpm_hands_the_lock_to_fg_at_the_next_checkpoint():
    ends, st = _lock_race("cfq")
    assert ends["fg"] > ends["bg"]  # stock: FG waits for the whole background reclaim
    for pol in ("faio-fpm", "faio", "fasttrack"):
        ends, st = _lock_race(pol)
        assert ends["fg"] < ends["bg"], pol  # FG got its pages first, BG resumed afterwards
        assert st.pc.checkpoint_yields >= 1


def test_faio_fid_dispatches_fg_and_handed_over_lbas_first():
    for pol in ("faio-fid", "faio"):
        st, order, bg, fg = _stack(pol)
        _fill(st, bg)
        w = Request(OP_WRITE, 4242, 64 * 1024, False, st.kworker)  # FG data written back by the kworker
        st.fg_lbas.add(4242)
        st.blk.submit(w)
        r = _req(OP_WRITE, fg, sync=True)
        st.blk.submit(r)
        st.run()
        q = st.profile.queue_depth
        assert w.fg and r.fg
        assert order.index(w) == q and order.index(r) == q + 1
    st, order, bg, fg = _stack("cfq")
    w = Request(OP_WRITE, 4242, 64 * 1024, False, st.kworker)
    st.fg_lbas.add(4242)
    st.blk.submit(w)
    assert not w.fg  # stock CFQ sees only the kworker's PID


def test_fasttrack_protects_fg_pages_and_preempts_in_device():
    st, order, bg, fg = _stack("fasttrack")
    assert st.device.preempt_fg
    from droidlag.iolab.sim.pagecache import CLEAN, Extent
    pc = st.pc
    pc.lru.appendleft(Extent(fg.uid, 5, 0, 32, CLEAN))
    victim = pc._victim(fg.uid)
    assert victim.owner != fg.uid
    st2, *_ = _stack("faio")
    st2.pc.lru.appendleft(Extent(fg.uid, 5, 0, 32, CLEAN))
    assert st2.pc._victim(None).owner == fg.uid  # without protection the oldest page goes, FG or not


def test_cfq_dispatch_depth_follows_cfq_may_dispatch():
    st, order, bg, fg = _stack("cfq")
    sched = st.blk.sched
    for i in range(40):  # async writeback alone: CFQ lets it fill the device
        st.blk.submit(Request(OP_WRITE, 10_000 + i * 1024, 512 * 1024, False, st.kworker))
    assert st.device.accepted == st.profile.queue_depth
    st.run()
    # a sync queue while another sync queue waits: at most cfq_quantum / 2 = 4 in the device
    k = ("be", 1, fg.pid)
    assert sched._may_dispatch(k, 4, st.now)  # alone: no limit
    other = _req(OP_READ, bg, lba=5)
    other.submit_ns = st.now
    sched.add(other, st.now)  # queued, not dispatched
    assert not sched._may_dispatch(k, 4, st.now) and sched._may_dispatch(k, 3, st.now)
    # async after a sync request waited past the sync FIFO expiry: depth 1, then +1 per sync slice
    ka = ("be", 0, 4)
    sched.last_delayed_sync = st.now
    assert sched._may_dispatch(ka, 0, st.now) and not sched._may_dispatch(ka, 1, st.now)
    later = st.now + 2 * sched.sync_slice
    assert sched._may_dispatch(ka, 1, later) and not sched._may_dispatch(ka, 2, later)


def test_smartio_overdue_writes_do_not_starve_reads():
    st, order, bg, fg = _stack("smartio")
    sched = st.blk.sched
    for i in range(5):
        w = _req(OP_WRITE, bg, sync=True, lba=100 + i)
        w.submit_ns = 0
        sched.add(w, 0)
    reads = []
    for i in range(5):
        r = _req(OP_READ, fg, lba=200 + i)
        r.submit_ns = 500 * MS
        sched.add(r, 500 * MS)
        reads.append(r)
    got = [sched.next(500 * MS) for _ in range(4)]
    assert got[0].op == OP_WRITE  # one overdue write goes first...
    assert all(g.op == OP_READ for g in got[1:])  # ...then reads again until the next bound period
    assert sched.next(600 * MS).op == OP_WRITE


def _sleeping_holder_race(policy):
    from droidlag.iolab.sim.pagecache import CLEAN

    """BG holds the lock asleep on a writeback I/O (its reclaim hit a page under writeback) when FG asks."""
    st, order, bg, fg = _stack(policy)
    pc = st.pc
    _dirty_cache(st)
    for e in pc.lru:  # the tail is already under writeback: reclaim must sleep on it
        if e.state == DIRTY:
            pc._submit_writeback([e], st.kworker, sync=False)
            break
    for e in list(pc.lru)[-40:]:  # recently read pages at the young end: clean, reclaimable without I/O
        e.state = CLEAN
        pc.dirty -= e.pages
        pc.clean.append(e)
    ends = {}

    def alloc(task, delay, tag):
        yield delay
        yield from pc.segment(task, 32, 0)
        ends[tag] = st.now

    st.spawn(alloc(bg, 0, "bg"))
    st.spawn(alloc(fg, 10_000, "fg"))  # 10 us later: the BG holder is asleep on the writeback
    st.run(until=60_000 * MS)
    return ends, pc


def test_faio_fg_waiter_wakes_a_bg_holder_asleep_on_writeback():
    ends, pc = _sleeping_holder_race("cfq")
    assert ends["fg"] >= ends["bg"] > 5 * MS  # stock: FG waits for the I/O and the rest of the BG reclaim
    ends, pc = _sleeping_holder_race("faio")
    assert ends["fg"] < ends["bg"]  # the sleep is a checkpoint: FG takes the lock without waiting for the I/O
    assert ends["fg"] < 5 * MS and pc.checkpoint_yields >= 1 and pc._io_sleeper is None


def test_inheritance_cannot_overtake_bulk_bg_writes_inside_the_device_but_preemption_can():
    """FastTrack's claim: under bulk BG writes, small sporadic FG I/O gains little from priority inheritance
    (its fsync's flush waits for the BG data already in the device), while in-device preemption removes most
    of the delay."""
    from droidlag.iolab.sim.scenarios import run_scenario

    mean = {p: run_scenario("sporadic", p, seed=3, scale=0.3).mean_ms for p in ("cfq", "qasio", "rcp", "fasttrack")}
    fg_only = run_scenario("sporadic", "cfq", seed=3, scale=0.3, background=0).mean_ms
    assert mean["cfq"] > 5 * fg_only  # the bulk BG load really delays the small FG I/O
    cut = {p: 1 - mean[p] / mean["cfq"] for p in ("qasio", "rcp", "fasttrack")}
    assert cut["qasio"] < 0.3 and cut["rcp"] < 0.3
    assert cut["fasttrack"] > 0.6 and cut["fasttrack"] > 2 * max(cut["qasio"], cut["rcp"])
