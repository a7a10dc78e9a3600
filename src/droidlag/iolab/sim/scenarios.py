"""The papers' scenarios on one simulated phone: the same stack, device profiles and memory for all of them.

Every scenario starts its background load (if any) at t=0 and its foreground operation after a 2 s
warm-up, and stops when the foreground operation ends. Foreground sizes scale with `scale` (tests use small
ones); the background load does not. FAIO/FastTrack scenarios run against their papers' background (app
update, file download, more I/O-intensive writers); SmartIO's run against one writer, as its measurements
did (1 reader vs 1 writer of 128 MB files).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from droidlag.iolab.sim import workloads as wl
from droidlag.iolab.sim.engine import MS, S
from droidlag.iolab.sim.stack import Stack

MB = wl.MB
KB = wl.KB
WARMUP_NS = 2 * S
LIMIT_NS = 900 * S


@dataclass
class ScenarioResult:
    scenario: str
    policy: str
    device: str
    seed: int
    background: int  # number of background apps
    scale: float
    fg_ns: list[int]  # user-perceived time of each foreground operation
    sim_ns: int
    events: int
    bg_mb_written: float
    bg_mb_s: float
    max_write_wait_ms: float
    fg_lock_wait_ms: float
    pagecache: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

    @property
    def mean_ms(self) -> float:
        return sum(self.fg_ns) / len(self.fg_ns) / 1e6 if self.fg_ns else float("nan")

    def percentiles(self) -> dict:
        xs = sorted(self.fg_ns)
        if not xs:
            return {}

        def q(p):
            return xs[min(len(xs) - 1, int(p * len(xs)))] / 1e6

        return {"p50_ms": q(0.5), "p90_ms": q(0.9), "p99_ms": q(0.99), "max_ms": xs[-1] / 1e6,
                "mean_ms": self.mean_ms}

    def to_dict(self) -> dict:
        d = asdict(self)
        d["fg_ms"] = [x / 1e6 for x in d.pop("fg_ns")]
        d.update(self.percentiles())
        return d


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    build: Callable  # (stack, scale, n_bg, fg_ns) -> foreground generator
    default_bg: int
    bg_kind: str = "update+download"


def _timed(stack, gen, out: list):
    t0 = stack.now
    yield from gen
    out.append(stack.now - t0)


def _start_bg(stack, n_bg: int, scale: float, kind: str = "update+download") -> list:
    """Background apps: 1 = app update (1.5 GB, fsync per 64 MB), 2 = + file download (3 GB), more =
    further I/O-intensive writers (1 GB each, fsync per 32 MB). Kind "writer": SmartIO's measurement, one
    writer that keeps writing 128 MB files (1 MB calls, fsync at the end of each file)."""
    tasks = []
    for i in range(n_bg):
        if kind == "writer":
            app = stack.new_app(f"writer-{i}")
            t = app.task("io")
            tasks.append(t)
            stack.spawn(_looping_writer(stack, t, 128 * MB, file=100 + i), app.name)
            continue
        if kind == "update+download" and i == 0:
            app, total, every = stack.new_app("app-update"), int(1536 * MB * scale), 64 * MB
        elif kind == "update+download" and i == 1:
            app, total, every = stack.new_app("file-download"), int(3072 * MB * scale), 0
        else:
            app, total, every = stack.new_app(f"bg-writer-{i}"), int(1024 * MB * scale), 32 * MB
        t = app.task("io")
        tasks.append(t)
        stack.spawn(wl.bulk_writer(stack, t, total, file=100 + i, fsync_every=every), app.name)
    return tasks


def _looping_writer(stack, task, file_bytes: int, file: int):
    while True:
        yield from wl.bulk_writer(stack, task, file_bytes, file=file)


def _as_fg(stack, app, gen):
    stack.fg.set_top(app.uid, stack.now)
    yield from gen


def _gallery(stack, scale, n_bg, out):
    app = stack.new_app("gallery")
    t = app.task("main")
    yield WARMUP_NS
    yield from _as_fg(stack, app, _timed(stack, wl.sequential_files_reader(stack, t, int(500 * MB * scale)), out))


def _camera(stack, scale, n_bg, out):
    app = stack.new_app("camera")
    t = app.task("main")
    stack.fg.set_top(app.uid, 0)
    yield WARMUP_NS
    yield from _timed(stack, wl.write_and_fsync(stack, t, int(40 * MB * scale), file=1), out)


def _game(stack, scale, n_bg, out):
    app = stack.new_app("game")
    t = app.task("loader")
    yield WARMUP_NS
    yield from _as_fg(stack, app, _timed(stack, wl.random_chunks_reader(
        stack, t, int(500 * MB * scale), chunk=256 * KB, think_ns=MS // 2), out))


def _launches(stack, scale, n_bg, out, n_apps=3):
    """FastTrack's user response: launches of apps one after another (60 MB of reads + a 4 MB save)."""
    yield WARMUP_NS
    for i in range(n_apps):
        app = stack.new_app(f"app-{i}")
        t = app.task("main")

        def launch(t=t):
            yield from wl.sequential_files_reader(stack, t, int(60 * MB * scale), file_bytes=2 * MB)
            yield from wl.write_and_fsync(stack, t, int(4 * MB * scale), file=1)

        yield from _as_fg(stack, app, _timed(stack, launch(), out))
        yield 500 * MS


def _smartio_apps(stack, n):
    rng = stack.rng
    return [(rng.randrange(10, 61) * MB) for _ in range(n)]


def _smartio_launch(stack, scale, n_bg, out, n_apps=20):
    """SmartIO: launches of 20 apps, reads about 5x writes (random 64 KB reads, small fsync'd commits)."""
    sizes = _smartio_apps(stack, n_apps)
    yield WARMUP_NS
    for i, r in enumerate(sizes):
        app = stack.new_app(f"app-{i}")
        t = app.task("main")
        r = int(r * scale)
        yield from _as_fg(stack, app, _timed(stack, wl.launch_mix(stack, t, r, r // 5, file=1), out))
        yield 200 * MS


def _smartio_runtime(stack, scale, n_bg, out, n_apps=20):
    """SmartIO run-time delays: per app, 3 operations of a tenth of its launch I/O, 100 ms apart."""
    sizes = _smartio_apps(stack, n_apps)
    yield WARMUP_NS
    for i, r in enumerate(sizes):
        app = stack.new_app(f"app-{i}")
        t = app.task("main")
        r = int(r * scale / 10)
        stack.fg.set_top(app.uid, stack.now)
        for k in range(3):
            yield from _timed(stack, wl.launch_mix(stack, t, r, r // 5, file=1 + k, rounds=2), out)
            yield 100 * MS


def _sporadic(stack, scale, n_bg, out):
    app = stack.new_app("messenger")
    t = app.task("main")
    yield WARMUP_NS
    stack.fg.set_top(app.uid, stack.now)
    yield from wl.small_sporadic(stack, t, max(3, int(30 * scale)), file=1, latencies=out)


def _direct_reads(sequential: bool):
    def build(stack, scale, n_bg, out):
        app = stack.new_app("reader")
        t = app.task("main")
        yield WARMUP_NS
        stack.fg.set_top(app.uid, stack.now)
        if sequential:
            yield from wl.direct_reader(stack, t, max(10, int(256 * scale)), 512 * KB, True, out)  # 128 MB
        else:
            yield from wl.direct_reader(stack, t, max(20, int(4000 * scale)), 4 * KB, False, out)
    return build


SCENARIOS: dict[str, Scenario] = {s.name: s for s in [
    Scenario("gallery", "A: launch a Gallery-like app reading ~500 MB of pictures", _gallery, 2),
    Scenario("camera", "B: suspend a Camera-like app: write 40 MB of captures and fsync", _camera, 2),
    Scenario("game", "C: load a game's assets: 500 MB in random 256 KB pieces, 0.5 ms decode each", _game, 2),
    Scenario("launch", "FastTrack: three app launches (60 MB reads + 4 MB fsync'd save each)", _launches, 2),
    Scenario("smartio-launch", "SmartIO: launches of 20 apps, reads ~5x writes, against one writer",
             _smartio_launch, 1, "writer"),
    Scenario("smartio-runtime", "SmartIO: run-time operations of 20 apps, against one writer",
             _smartio_runtime, 1, "writer"),
    Scenario("sporadic", "small sporadic FG I/O (64 KB read, 16 KB write, fsync every 50 ms)", _sporadic, 2),
    Scenario("seq-read", "O_DIRECT sequential 512 KB reads against one writer (SmartIO's read slowdown)",
             _direct_reads(True), 1, "writer"),
    Scenario("rand-read", "O_DIRECT random 4 KB reads against one writer (SmartIO's read slowdown)",
             _direct_reads(False), 1, "writer"),
]}


def run_scenario(name: str, policy: str = "cfq", device: str = "ufs", seed: int = 0, background: int | bool = True,
                 scale: float = 1.0) -> ScenarioResult:
    """Run one scenario under one policy. `background`: True for the scenario's default background apps,
    False/0 for the foreground alone, or a number of background apps. Deterministic for a seed."""
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r}; choose from {', '.join(SCENARIOS)}")
    sc = SCENARIOS[name]
    n_bg = sc.default_bg if background is True else int(background or 0)
    stack = Stack(policy, device, seed)
    _start_bg(stack, n_bg, 1.0, sc.bg_kind)  # the load is the same whatever the foreground size
    out: list[int] = []
    fg = stack.spawn(sc.build(stack, scale, n_bg, out), "foreground")
    stack.run(until=LIMIT_NS, stop=fg.done)
    fg_window = max(1, stack.now - WARMUP_NS)
    written = stack.device.bytes_written
    return ScenarioResult(
        scenario=name, policy=stack.policy.name, device=stack.profile.name, seed=seed, background=n_bg,
        scale=scale, fg_ns=out, sim_ns=stack.now, events=stack.engine.events,
        bg_mb_written=written / 1e6, bg_mb_s=written / 1e6 / (stack.now / 1e9) if stack.now else 0.0,
        max_write_wait_ms=stack.blk.max_write_wait_ns / 1e6,
        fg_lock_wait_ms=stack.lock.wait_ns / 1e6, pagecache=stack.pc.stats(),
        extra={"fg_window_ms": fg_window / 1e6, "device_commands": stack.device.commands})
