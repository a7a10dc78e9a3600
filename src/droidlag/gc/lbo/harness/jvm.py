"""The JVM side of the harness: which collectors the installed JDK has, the flags that select them, and what one
JVM run printed: the timed iteration's wall clock, task clock and GC threads' CPU (from the driver), and its
stop-the-world GC pauses (from the `-Xlog:safepoint` lines between the driver's markers)."""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field

# Collector name -> JVM flags. Epsilon is the no-GC baseline (allocates, never collects).
COLLECTORS: dict[str, list[str]] = {
    # Pre-touched so that the timed iteration does not pay first-touch page faults that no collecting run pays.
    "Epsilon": ["-XX:+UnlockExperimentalVMOptions", "-XX:+UseEpsilonGC", "-XX:+AlwaysPreTouch"],
    "Serial": ["-XX:+UseSerialGC"],
    "Parallel": ["-XX:+UseParallelGC"],
    "G1": ["-XX:+UseG1GC"],
    "Z": ["-XX:+UseZGC"],
    "Shenandoah": ["-XX:+UseShenandoahGC"],
}
DEFAULT_COLLECTOR = "G1"  # OpenJDK 17's default: the one the minimum heap is found with
LOG_FLAGS = ["-Xlog:gc*=info,safepoint=info:stdout:uptime,level,tags"]
SAFEPOINT = re.compile(r'Safepoint "(?P<op>[^"]+)",.*\bTotal: (?P<ns>\d+) ns')
# VM operations that are garbage collection (OpenJDK 17 names: GenCollectForAllocation, ParallelGCFailedAllocation,
# G1CollectForAllocation, G1Concurrent, CollectForMetadataAllocation, ZMarkStart, ShenandoahInitMark, ...).
GC_OPERATION = re.compile(r"GC|Collect|^G1|^Z(Mark|Relocate)|^Shenandoah")
RESULT = re.compile(r"^droidlag-lbo result wall_ns (\d+) task_clock_ns (\d+) gc_cpu_ns (\d+)", re.M)
OOM = re.compile(r"OutOfMemoryError")
START, END = "droidlag-lbo timed start", "droidlag-lbo timed end"


@dataclass(frozen=True)
class RunOutput:
    """One JVM run's timed iteration: times in nanoseconds; `oom` when it ran out of heap, `timeout` when it did not
    finish in time (no costs then)."""

    oom: bool
    wall_ns: int = 0
    task_clock_ns: int = 0
    gc_cpu_ns: int = 0
    pause_ns: int = 0
    pauses: int = 0
    perf: dict[str, float] = field(default_factory=dict)  # perf stat over the timed iteration: task_clock ns, cycles
    timeout: bool = False


def available_collectors(java: str = "java") -> list[str]:
    """The collectors this JDK accepts, in COLLECTORS order (each probed with `java <flags> -version`)."""
    out = []
    for name, flags in COLLECTORS.items():
        r = subprocess.run([java, *flags, "-version"], capture_output=True, timeout=60)
        if r.returncode == 0:
            out.append(name)
    return out


def parse_run_output(stdout: str, returncode: int) -> RunOutput | None:
    """Read one run's stdout (driver lines interleaved with the JVM's unified log). Returns None when the run
    failed for another reason than running out of memory (the caller reports it)."""
    m = RESULT.search(stdout)
    if m is None or returncode != 0:
        return RunOutput(oom=True) if OOM.search(stdout) else None
    start, end = stdout.find(START), stdout.find(END)
    pause_ns = pauses = 0
    for sm in SAFEPOINT.finditer(stdout, start, end):
        if GC_OPERATION.search(sm["op"]):
            pause_ns += int(sm["ns"])
            pauses += 1
    return RunOutput(False, int(m.group(1)), int(m.group(2)), int(m.group(3)), pause_ns, pauses)


PERF_EVENTS = {"task-clock": "task_clock", "cycles": "cycles", "instructions": "instructions"}


def perf_available() -> bool:
    """Whether `perf stat` can count task-clock here (it needs perf installed and perf_event_paranoid to allow it)."""
    if shutil.which("perf") is None:
        return False
    r = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock", "--", "true"], capture_output=True, text=True,
                       timeout=60)
    return r.returncode == 0 and "task-clock" in r.stderr and not r.stderr.startswith("<not")


def parse_perf_csv(text: str) -> dict[str, float]:
    """`perf stat -x,` output: value,unit,event,... per line; task-clock (msec) to ns; `<not supported>` and
    `<not counted>` events left out."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) < 3 or parts[2] not in PERF_EVENTS:
            continue
        try:
            value = float(parts[0])
        except ValueError:
            continue
        out[PERF_EVENTS[parts[2]]] = value * 1e6 if parts[1] == "msec" else value
    return out
