"""Runs a plan: the minimum heap of each workload by bisection with the default collector, then every
(invocation, workload, heap factor, collector) as one fresh JVM, invocation-major so that drift on a shared machine
spreads over all cells. Each finished invocation is appended to `results.jsonl` at once (droidlag's LBO schema,
docs/gc-lbo.md), so an interrupted run keeps what finished and a rerun resumes where it stopped."""
from __future__ import annotations

import gzip
import json
import os
import platform
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from droidlag.gc.lbo.analysis import heap_factors
from droidlag.gc.lbo.harness.jvm import (
    COLLECTORS,
    DEFAULT_COLLECTOR,
    LOG_FLAGS,
    RunOutput,
    available_collectors,
    parse_perf_csv,
    parse_run_output,
    perf_available,
)
from droidlag.gc.lbo.harness.workloads import WORKLOADS, HarnessError, Workload, prepare
from droidlag.models.lbo import Cost, Invocation

RESULTS = "results.jsonl"
ERRORS = "errors.jsonl"
MINHEAP = "minheap.json"
PLAN = "plan.json"


@dataclass
class RunPlan:
    """What to run. `heap_factors` are multiples of each workload's minimum heap (default: five, spaced as the
    public runner spaces them over 1-3x); `epsilon_heap_mb` overrides the workloads' heap for the no-GC baseline
    (it never collects, so it needs room for everything the invocation allocates); `timeout_s` bounds one JVM: a cell that
    times out (a collector thrashing near the minimum heap) is recorded as such and not run again in later
    invocations."""

    results: Path
    workloads: list[str] = field(default_factory=lambda: ["gcbench", "lucene"])
    collectors: list[str] | None = None
    heap_factors: list[float] = field(default_factory=lambda: [round(h, 3) for h in heap_factors(5, 3.0)])
    invocations: int = 5
    warmups: int | None = None
    epsilon_heap_mb: int | None = None
    java: str = "java"
    cache: Path | None = None
    timeout_s: float = 60.0
    perf: bool | None = None  # count with `perf stat` around the timed iteration; None: where perf works


@dataclass
class RunSummary:
    """What a run did: invocations run now, skipped (already in the results), OOM, failed; minimum heaps (MB)."""

    ran: int = 0
    skipped: int = 0
    oom: int = 0
    failed: int = 0
    timeouts: int = 0
    minheap_mb: dict[str, int] = field(default_factory=dict)
    collectors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


Progress = Callable[[int, int, str], None]


def run_plan(plan: RunPlan, progress: Progress | None = None) -> RunSummary:
    """Run the plan into plan.results (created if needed). `progress(done, total, what)` is called before and after
    each JVM run."""
    t0 = time.monotonic()
    out = Path(plan.results)
    out.mkdir(parents=True, exist_ok=True)
    available = available_collectors(plan.java)
    if not available:
        raise HarnessError(f"`{plan.java}` runs no collector: is a JDK installed?")
    collectors = [c for c in (plan.collectors or list(COLLECTORS)) if c in available]
    unknown = [w for w in plan.workloads if w not in WORKLOADS]
    if unknown:
        raise HarnessError(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(WORKLOADS)}")
    summary = RunSummary(collectors=collectors)
    if plan.perf is None:
        plan.perf = perf_available()
    _write_plan(out, plan, collectors)
    done = _done_keys(out / RESULTS)
    classpaths = {w: prepare(WORKLOADS[w], plan.cache) for w in plan.workloads}
    minheap = _load_minheap(out)
    for w in plan.workloads:
        if w not in minheap:
            minheap[w] = find_minheap(WORKLOADS[w], classpaths[w], plan, available)
            (out / MINHEAP).write_text(json.dumps(minheap, indent=1))
    summary.minheap_mb = dict(minheap)
    cells = _cells(plan, collectors)
    timed_out = _timed_out_cells(out / RESULTS)
    for n, (i, w, hf, c) in enumerate(cells):
        if (w, c, _hf_key(hf), i) in done or (w, c, _hf_key(hf)) in timed_out:
            summary.skipped += 1
            continue
        what = f"{w} {c} {'no-GC' if hf is None else f'{hf:.2f}x'} #{i}"
        if progress:
            progress(n, len(cells), what)
        heap = _heap_mb(minheap[w], hf, WORKLOADS[w], plan)
        res, log = run_one(WORKLOADS[w], classpaths[w], c, heap, plan)
        _save_log(out, w, hf, heap, c, i, log)
        if res is None:
            summary.failed += 1
            _append(out / ERRORS, {"benchmark": w, "collector": c, "heap_factor": _hf_key(hf), "invocation": i,
                                   "heap_mb": heap, "error": log[-500:]})
            continue
        summary.ran += 1
        summary.oom += res.oom
        summary.timeouts += res.timeout
        if res.timeout:
            timed_out.add((w, c, _hf_key(hf)))
        _append(out / RESULTS, to_invocation(res, w, c, hf, heap, i).to_dict())
    if progress:
        progress(len(cells), len(cells), "done")
    summary.seconds = time.monotonic() - t0
    return summary


def _cells(plan: RunPlan, collectors: list[str]) -> list[tuple[int, str, float | None, str]]:
    """Every run in order. The no-GC baseline (Epsilon) runs once per workload and invocation, heap-independent
    (heap factor None): it never collects, so its heap is whatever holds everything the invocation allocates."""
    cells: list[tuple[int, str, float | None, str]] = []
    for i in range(plan.invocations):
        for w in plan.workloads:
            if "Epsilon" in collectors:
                cells.append((i, w, None, "Epsilon"))
            cells += [(i, w, hf, c) for hf in plan.heap_factors for c in collectors if c != "Epsilon"]
    return cells


def _hf_key(hf: float | None) -> float | None:
    return None if hf is None else round(hf, 3)


def _heap_mb(minheap: int, hf: float | None, workload: Workload, plan: RunPlan) -> int:
    if hf is None:
        return plan.epsilon_heap_mb or workload.epsilon_heap_mb
    return max(1, round(minheap * hf))


def to_invocation(res: RunOutput, workload: str, collector: str, hf: float | None, heap_mb: int,
                  i: int) -> Invocation:
    """The schema record of one run: wall clock attributable = GC pauses; task clock attributable = GC threads' CPU.
    Where perf counted, its task clock is the total; cycles and instructions are charged to GC in proportion to the
    GC threads' share of CPU time (perf cannot split them by thread cheaply)."""
    costs: dict[str, Cost] = {}
    if not res.oom and not res.timeout:
        costs = {"wall": Cost(res.wall_ns, res.pause_ns), "task_clock": Cost(res.task_clock_ns, res.gc_cpu_ns)}
        share = res.gc_cpu_ns / res.task_clock_ns if res.task_clock_ns else 0.0
        if "task_clock" in res.perf:
            costs["task_clock"] = Cost(res.perf["task_clock"], res.gc_cpu_ns)
        for m in ("cycles", "instructions"):
            if m in res.perf:
                costs[m] = Cost(res.perf[m], res.perf[m] * share)
    return Invocation(workload, collector, _hf_key(hf), i, costs, float(heap_mb), res.oom,
                      None if res.oom or res.timeout else res.pauses, timeout=res.timeout)


def jvm_command(workload: Workload, classpath: list[Path], collector: str, heap_mb: int, plan: RunPlan) -> list[str]:
    """The java command line of one invocation: fixed heap (-Xms = -Xmx), the collector, GC and safepoint logging."""
    warmups = workload.warmups if plan.warmups is None else plan.warmups
    return [plan.java, *COLLECTORS[collector], f"-Xms{heap_mb}m", f"-Xmx{heap_mb}m", *LOG_FLAGS,
            "-cp", os.pathsep.join(map(str, classpath)), "LboDriver", workload.main_class, str(warmups),
            *workload.args]


def run_one(workload: Workload, classpath: list[Path], collector: str, heap_mb: int,
            plan: RunPlan) -> tuple[RunOutput | None, str]:
    """One fresh JVM. Returns (parsed output or None if it failed otherwise than OOM, the raw log)."""
    cmd = jvm_command(workload, classpath, collector, heap_mb, plan)
    with tempfile.TemporaryDirectory(prefix="droidlag-perf-") as tmp:
        env = dict(os.environ)
        perf_out = Path(tmp) / "perf.csv"
        if plan.perf:
            ctl, ack = Path(tmp) / "ctl", Path(tmp) / "ack"
            os.mkfifo(ctl)
            os.mkfifo(ack)
            env.update(DROIDLAG_PERF_CTL=str(ctl), DROIDLAG_PERF_ACK=str(ack))
            # -D -1: counters start disabled; the driver enables them around the timed iteration only.
            cmd = ["perf", "stat", "-x,", "-e", "task-clock,cycles,instructions", "-D", "-1",
                   f"--control=fifo:{ctl},{ack}", "-o", str(perf_out), "--", *cmd]
        done = _run_group(cmd, env, plan.timeout_s)
        if done is None:
            return RunOutput(False, timeout=True), " ".join(cmd) + f"\ntimeout after {plan.timeout_s} s"
        returncode, stdout = done
        perf_text = perf_out.read_text() if perf_out.exists() else ""
    log = " ".join(cmd) + "\n" + stdout + perf_text
    res = parse_run_output(stdout, returncode)
    if res is not None and not res.oom and perf_text:
        res = RunOutput(False, res.wall_ns, res.task_clock_ns, res.gc_cpu_ns, res.pause_ns, res.pauses,
                        parse_perf_csv(perf_text))
    return res, log


def _run_group(cmd: list[str], env: dict, timeout_s: float) -> tuple[int, str] | None:
    """Run cmd in its own process group (perf forks the JVM) with stdout and stderr merged; on timeout kill the whole
    group and return None."""
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          start_new_session=True) as p:
        try:
            out, _ = p.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return None
        except BaseException:
            os.killpg(p.pid, signal.SIGKILL)  # an interrupt (Ctrl-C) leaves no JVM behind
            raise
    return p.returncode, out


def find_minheap(workload: Workload, classpath: list[Path], plan: RunPlan, available: list[str],
                 start_mb: int = 8, max_mb: int = 16384) -> int:
    """The smallest heap (MB) the workload completes in with the default collector: doubling until it passes, then
    bisection to within 2% (or 1 MB)."""
    collector = DEFAULT_COLLECTOR if DEFAULT_COLLECTOR in available else next(c for c in available if c != "Epsilon")

    def passes(mb: int) -> bool:
        res, log = run_one(workload, classpath, collector, mb, plan)
        if res is None:
            raise HarnessError(f"{workload.name} failed at {mb} MB with {collector}: {log[-600:]}")
        return not res.oom and not res.timeout

    lo, hi = 0, start_mb
    while not passes(hi):
        lo, hi = hi, hi * 2
        if hi > max_mb:
            raise HarnessError(f"{workload.name} does not run in {max_mb} MB")
    while hi - lo > max(1, int(0.02 * hi)):
        mid = (lo + hi) // 2
        if passes(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _write_plan(out: Path, plan: RunPlan, collectors: list[str]) -> None:
    java = subprocess.run([plan.java, "-version"], capture_output=True, text=True).stderr.strip()
    meta = {"plan": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(plan).items()},
            "collectors": collectors, "java": java, "machine": platform.platform(), "cpus": os.cpu_count(),
            "loadavg_at_start": os.getloadavg(),
            "workloads": {w: asdict(WORKLOADS[w]) for w in plan.workloads}}
    (out / PLAN).write_text(json.dumps(meta, indent=1))


def _load_minheap(out: Path) -> dict[str, int]:
    p = out / MINHEAP
    return json.loads(p.read_text()) if p.exists() else {}


def _done_keys(path: Path) -> set[tuple]:
    keys: set[tuple] = set()
    if not path.exists():
        return keys
    for line in path.read_text().splitlines():
        try:
            d = json.loads(line)
            hf = d["heap_factor"]
            keys.add((d["benchmark"], d["collector"], None if hf is None else round(float(hf), 3),
                      int(d["invocation"])))
        except (ValueError, KeyError, TypeError):
            continue  # a line cut by an interrupt: that invocation runs again
    return keys


def _timed_out_cells(path: Path) -> set[tuple]:
    if not path.exists():
        return set()
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.endswith("}") and '"timeout"' in x]
    return {(r["benchmark"], r["collector"], _hf_key(r["heap_factor"])) for r in rows if r.get("status") == "timeout"}


def _append(path: Path, row: dict) -> None:
    """Append one row and make it durable; a row cut by an interrupt is left on a line of its own."""
    cut = path.exists() and path.stat().st_size > 0 and not path.read_bytes().endswith(b"\n")
    with path.open("a") as f:
        if cut:
            f.write("\n")
        f.write(json.dumps(row) + "\n")
        f.flush()
        os.fsync(f.fileno())


def _save_log(out: Path, w: str, hf: float | None, heap: int, c: str, i: int, log: str) -> None:
    d = out / "logs"
    d.mkdir(exist_ok=True)
    with gzip.open(d / f"{w}.{0 if hf is None else int(round(hf * 1000))}.{heap}.{c}.{i}.jvm.log.gz", "wt") as f:
        f.write(log)
