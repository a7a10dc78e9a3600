"""The event core: ordering, processes, locks, determinism of whole scenarios."""
from droidlag.iolab.sim.app import Task
from droidlag.iolab.sim.engine import Engine, Lock, all_of
from droidlag.iolab.sim.scenarios import run_scenario


def test_same_time_callbacks_run_in_scheduling_order():
    eng = Engine(1)
    seen = []
    for i in range(5):
        eng.at(10, seen.append, i)
    eng.at(5, seen.append, "early")
    eng.run()
    assert seen == ["early", 0, 1, 2, 3, 4]
    assert eng.now == 10 and eng.events == 6


def test_process_sleeps_waits_and_returns():
    eng = Engine(0)
    ev = eng.event()

    def a():
        yield 100
        ev.fire("x")
        return "a-done"

    def b():
        v = yield ev
        assert v == "x"
        yield 50
        return eng.now

    pa, pb = eng.process(a()), eng.process(b())
    both = all_of(eng, [pa.done, pb.done])
    eng.run()
    assert both.fired and pa.done.value == "a-done" and pb.done.value == 150


def test_run_until_stops_and_resumes():
    eng = Engine(0)
    seen = []
    eng.at(10, seen.append, 1)
    eng.at(30, seen.append, 2)
    eng.run(until=20)
    assert seen == [1] and eng.now == 20
    eng.run()
    assert seen == [1, 2]


def test_lock_fifo_and_priority_waiters():
    eng = Engine(0)
    lock = Lock(eng)
    t = [Task(f"t{i}", i, 10000 + i) for i in range(3)]
    order = []

    def user(task, hold):
        yield lock.acquire(task)
        order.append(task.name)
        yield hold
        lock.release()

    for task in t:
        eng.process(user(task, 10))
    eng.run()
    assert order == ["t0", "t1", "t2"]
    lock2 = Lock(eng)
    lock2.priority_of = lambda task: 0 if task.name == "t2" else 1
    order.clear()
    lock = lock2
    for task in t:
        eng.process(user(task, 10))
    eng.run()
    assert order == ["t0", "t2", "t1"]  # the priority waiter overtakes t1


def test_same_seed_same_output_and_seed_matters():
    a = run_scenario("sporadic", "rcp", seed=7, scale=0.1).to_dict()
    b = run_scenario("sporadic", "rcp", seed=7, scale=0.1).to_dict()
    assert a == b and a["events"] > 1000
    from droidlag.iolab.sim.scenarios import _smartio_apps
    from droidlag.iolab.sim.stack import Stack
    assert _smartio_apps(Stack(seed=7), 20) == _smartio_apps(Stack(seed=7), 20)
    assert _smartio_apps(Stack(seed=7), 20) != _smartio_apps(Stack(seed=8), 20)


def test_background_inflates_foreground():
    alone = run_scenario("gallery", "cfq", background=False, scale=0.1)
    loaded = run_scenario("gallery", "cfq", scale=0.1)
    assert loaded.mean_ms > 1.5 * alone.mean_ms
