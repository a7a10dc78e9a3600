"""Speed of the I/O lab's event core: simulated events per second on one core, and the ratio to SimPy
running the same tiny model (an M/M/1 queue: Poisson arrivals, one exponential server) in the same run.

    .venv/bin/python benchmarks/bench_iolab.py [--customers N]
    pypy3 benchmarks/bench_iolab.py --engine-only     # the same event core under PyPy (Debian's pypy3)

SimPy is only needed for the comparison (pip install simpy); without it the SimPy line is skipped.
Under PyPy the package's readers (polars) are not importable, so only the I/O lab's modules are loaded.
"""
from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from collections import deque
from pathlib import Path

try:
    from droidlag.iolab.sim.engine import Engine
except ImportError:  # PyPy without the package's compiled dependencies: load the I/O lab alone
    import types

    _pkg = types.ModuleType("droidlag")
    _pkg.__path__ = [str(Path(__file__).resolve().parents[1] / "src" / "droidlag")]
    sys.modules["droidlag"] = _pkg
    from droidlag.iolab.sim.engine import Engine


def mm1_callbacks(n: int, seed: int = 1) -> tuple[int, int]:
    """M/M/1 on the engine with plain callbacks: 2 events per customer (arrival, departure)."""
    eng = Engine(seed)
    rng = random.Random(seed)
    expo = rng.expovariate
    queue: deque = deque()
    state = {"busy": False, "left": n, "served": 0, "wait": 0}
    MEAN_IA, MEAN_SVC = 1_000_000.0, 800_000.0  # ns: utilisation 0.8

    def depart(t_arr):
        state["served"] += 1
        if queue:
            t = queue.popleft()
            state["wait"] += eng.now - t
            eng.after(int(expo(1 / MEAN_SVC)), depart, t)
        else:
            state["busy"] = False

    def arrive(_):
        if state["busy"]:
            queue.append(eng.now)
        else:
            state["busy"] = True
            eng.after(int(expo(1 / MEAN_SVC)), depart, eng.now)
        state["left"] -= 1
        if state["left"]:
            eng.after(int(expo(1 / MEAN_IA)), arrive, None)

    eng.at(0, arrive, None)
    eng.run()
    return eng.events, state["served"]


def bare_events(n: int) -> tuple[int, float]:
    """The engine alone: three interleaved chains of callbacks that do no work (the event core's ceiling)."""
    eng = Engine(0)
    left = [n]

    def tick(_):
        if left[0]:
            left[0] -= 1
            eng.after(1000, tick, None)

    for _ in range(3):
        eng.at(0, tick, None)
    t = time.perf_counter()
    eng.run()
    return eng.events, time.perf_counter() - t


def mm1_processes(n: int, seed: int = 1) -> tuple[int, int]:
    """The same model written as generator processes on the engine (SimPy's style)."""
    eng = Engine(seed)
    rng = random.Random(seed)
    expo = rng.expovariate
    MEAN_IA, MEAN_SVC = 1_000_000.0, 800_000.0
    queue: deque = deque()
    wake = [None]
    served = [0]

    def server():
        while True:
            if not queue:
                wake[0] = eng.event()
                yield wake[0]
                continue
            queue.popleft()
            yield int(expo(1 / MEAN_SVC))
            served[0] += 1

    def source():
        for _ in range(n):
            queue.append(eng.now)
            w = wake[0]
            if w is not None and not w.fired:
                w.fire(None)
            yield int(expo(1 / MEAN_IA))

    eng.process(server())
    eng.process(source())
    eng.run()
    return eng.events, served[0]


def mm1_simpy(n: int, seed: int = 1) -> int:
    import simpy

    env = simpy.Environment()
    rng = random.Random(seed)
    expo = rng.expovariate
    srv = simpy.Resource(env, capacity=1)
    served = [0]

    def customer():
        with srv.request() as req:
            yield req
            yield env.timeout(expo(1 / 800_000.0))
        served[0] += 1

    def source():
        for _ in range(n):
            env.process(customer())
            yield env.timeout(expo(1 / 1_000_000.0))

    env.process(source())
    env.run()
    return served[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--customers", type=int, default=300_000)
    ap.add_argument("--engine-only", action="store_true", help="skip SimPy and the full-stack scenario")
    a = ap.parse_args()
    n = a.customers
    print(f"{platform.python_implementation()} {platform.python_version()}")
    ev0, dt0 = bare_events(2 * n)
    print(f"droidlag engine alone (callbacks doing nothing): {ev0 / dt0 / 1e6:5.2f} M events/s ({ev0:,} events)")
    print(f"M/M/1, utilisation 0.8, {n:,} customers, one core")
    t = time.perf_counter()
    ev, served = mm1_callbacks(n)
    dt_cb = time.perf_counter() - t
    print(f"droidlag engine, callbacks : {ev / dt_cb / 1e6:5.2f} M events/s  {served / dt_cb / 1e6:5.2f} M customers/s "
          f"({ev:,} events in {dt_cb:.2f} s)")
    t = time.perf_counter()
    ev2, served2 = mm1_processes(n)
    dt_pr = time.perf_counter() - t
    print(f"droidlag engine, processes : {ev2 / dt_pr / 1e6:5.2f} M events/s  {served2 / dt_pr / 1e6:5.2f} M customers/s "
          f"({ev2:,} events in {dt_pr:.2f} s)")
    if a.engine_only:
        return
    try:
        t = time.perf_counter()
        served3 = mm1_simpy(n)
        dt_sp = time.perf_counter() - t
    except ImportError:
        print("simpy not installed: no comparison (pip install simpy)")
        return
    print(f"SimPy {__import__('simpy').__version__:<8}          : {served3 / dt_sp / 1e6:5.2f} M customers/s "
          f"({dt_sp:.2f} s)")
    print(f"ratio (same model, customers/s): callbacks x{dt_sp / dt_cb:.1f}, processes x{dt_sp / dt_pr:.1f} vs SimPy")
    # the full stack: a real scenario
    from droidlag.iolab.sim.scenarios import run_scenario
    t = time.perf_counter()
    r = run_scenario("gallery", "faio")
    dt = time.perf_counter() - t
    print(f"full stack (gallery, faio, UFS, FG+BG): {r.events:,} events in {dt:.2f} s = "
          f"{r.events / dt / 1e6:.2f} M events/s, {r.sim_ns / 1e9:.1f} s simulated")


if __name__ == "__main__":
    main()
