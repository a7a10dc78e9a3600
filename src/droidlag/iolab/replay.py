"""Block-trace readers and replay on the simulated stack.

Three real formats become one list of `TraceRecord`s (time in ns, submitter, direction, LBA, size, sync):
blkparse default text output, the S suite's start-up traces (comm_startup_lat/*.trace), and MQSim's
(DiskSim) ASCII traces. Lines that cannot be used become warnings; a file with nothing usable raises
InputError(path, reason, line=N).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from droidlag.errors import InputError, ReadWarning
from droidlag.iolab.sim.blocklayer import Request
from droidlag.iolab.sim.device import OP_DISCARD, OP_FLUSH, OP_READ, OP_WRITE
from droidlag.iolab.sim.engine import S
from droidlag.iolab.sim.stack import Stack

MAX_WARNINGS = 50


@dataclass(frozen=True)
class TraceRecord:
    ts_ns: int
    process: str
    op: int
    lba: int  # 512-byte sectors
    nbytes: int
    sync: bool


@dataclass
class BlockTrace:
    path: str
    format: str
    records: list[TraceRecord]
    warnings: list[ReadWarning]

    def summary(self) -> dict:
        recs = self.records
        procs = sorted({r.process for r in recs})
        return {"path": self.path, "format": self.format, "requests": len(recs),
                "reads": sum(r.op == OP_READ for r in recs), "writes": sum(r.op == OP_WRITE for r in recs),
                "mib": round(sum(r.nbytes for r in recs) / 2**20, 2),
                "span_s": (recs[-1].ts_ns - recs[0].ts_ns) / 1e9 if recs else 0.0,
                "processes": procs[:20], "warnings": len(self.warnings)}


_BLKPARSE = re.compile(
    r"^\s*(\d+),(\d+)\s+(\d+)\s+(\d+)\s+(\d+\.\d+)\s+(\d+)\s+([A-Za-z]{1,2})\s+([RWDFNSMAEBC]+)\s+"
    r"(\d+)\s*\+\s*(\d+)\s*(?:\[(.*)\])?")
_S_LINE = re.compile(r"^(\S+)\s+(\.?\d*\.?\d+)\s+(\d+)\s+(\d+)\s+(Seq|Rand)\s+(-?\d+)\s+(\d+)\s+([A-Z]+)\s+"
                     r"(\.?\d*\.?\d+)\s+(\S+)\s*$")
_MQSIM = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([01])\s*$")


def _rwbs_op(rwbs: str) -> int | None:
    if "D" in rwbs:
        return OP_DISCARD
    if "W" in rwbs:
        return OP_WRITE
    if "R" in rwbs:
        return OP_READ
    if "F" in rwbs:
        return OP_FLUSH
    return None


def detect_format(path: Path, first_lines: list[str]) -> str | None:
    for line in first_lines:
        if not line.strip() or line.startswith("#"):
            continue
        if _BLKPARSE.match(line):
            return "blkparse"
        if _S_LINE.match(line.strip()):
            return "s-startup"
        if _MQSIM.match(line):
            return "mqsim"
        return None
    return None


def read_block_trace(path: str | Path, fmt: str | None = None) -> BlockTrace:
    """Read a blkparse text, S start-up or MQSim ASCII trace (format detected unless given)."""
    path = Path(path)
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        raise InputError(path, f"cannot read: {e.strerror or e}") from None
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        raise InputError(path, "empty trace")
    fmt = fmt or detect_format(path, lines[:20])
    if fmt is None:
        first = next(i for i, ln in enumerate(lines, 1) if ln.strip())
        raise InputError(path, "not a blkparse, S start-up or MQSim trace (unrecognised line)", line=first)
    parse = {"blkparse": _parse_blkparse, "s-startup": _parse_s, "mqsim": _parse_mqsim}.get(fmt)
    if parse is None:
        raise InputError(path, f"unknown trace format {fmt!r}")
    warnings: list[ReadWarning] = []
    records = parse(path, lines, warnings)
    if not records:
        raise InputError(path, f"no usable requests in this {fmt} trace", line=1)
    records.sort(key=lambda r: r.ts_ns)
    return BlockTrace(str(path), fmt, records, warnings)


def _warn(warnings, path, line_no, msg):
    if len(warnings) < MAX_WARNINGS:
        warnings.append(ReadWarning(str(path), msg, line=line_no))
    elif len(warnings) == MAX_WARNINGS:
        warnings.append(ReadWarning(str(path), "further unusable lines not listed", line=line_no))


def _parse_blkparse(path, lines, warnings) -> list[TraceRecord]:
    events: dict = {}
    for i, line in enumerate(lines, 1):
        m = _BLKPARSE.match(line)
        if not m:
            if line.strip() and not line.startswith(("CPU", "Total", "Reads", "Writes", "Events", "Skips",
                                                       "Throughput", " Reads", " Writes", "  ")):
                _warn(warnings, path, i, "not a blkparse event line")
            continue
        action, rwbs = m.group(7), m.group(8)
        op = _rwbs_op(rwbs)
        if op is None:
            continue
        ts = int(round(float(m.group(5)) * 1e9))
        rec = TraceRecord(ts, (m.group(11) or "") + f"-{m.group(6)}", op, int(m.group(9)),
                          int(m.group(10)) * 512, "S" in rwbs or op == OP_READ)
        events.setdefault(action, []).append(rec)
    # a request's submission: queued (Q) if traced, else dispatched (D), else completed (C)
    for action in ("Q", "D", "C"):
        if events.get(action):
            return events[action]
    return []


def _parse_s(path, lines, warnings) -> list[TraceRecord]:
    out = []
    t = 0.0
    for i, line in enumerate(lines, 1):
        s = line.strip()
        if not s:
            continue
        m = _S_LINE.match(s)
        if not m:
            _warn(warnings, path, i, "not an S start-up trace line")
            continue
        try:
            t += float(m.group(2))
        except ValueError:
            _warn(warnings, path, i, "bad time delta")
            continue
        action = m.group(8)
        op = OP_WRITE if action.startswith("W") else OP_READ
        sync = action != "RA"  # the suite issues read-ahead asynchronously, R/RM/WS synchronously
        out.append(TraceRecord(int(round(t * 1e9)), m.group(1), op, int(m.group(4)), int(m.group(3)) * 512, sync))
    return out


def _parse_mqsim(path, lines, warnings) -> list[TraceRecord]:
    out = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        m = _MQSIM.match(line)
        if not m:
            _warn(warnings, path, i, "not an MQSim ASCII line (time dev lba size type)")
            continue
        op = OP_READ if m.group(5) == "1" else OP_WRITE
        out.append(TraceRecord(int(m.group(1)), f"dev{m.group(2)}", op, int(m.group(3)), int(m.group(4)) * 512,
                               op == OP_READ))
    return out


def replay(trace: BlockTrace, policy: str = "cfq", device: str = "ufs", seed: int = 0, background: int = 0,
           closed_loop: bool = False) -> dict:
    """Replay a trace's requests on the simulated block layer and device (open loop: each request at its
    recorded time; closed loop: each process issues its next request when the previous one completes, as
    the S suite's replayer effectively does). `background` adds bulk writers through the page cache."""
    from droidlag.iolab.sim.scenarios import _start_bg

    stack = Stack(policy, device, seed)
    _start_bg(stack, background, 1.0)
    app = stack.new_app("trace")
    stack.fg.set_top(app.uid, 0)
    tasks: dict[str, object] = {}
    lat: list[int] = []
    offset = 2 * S if background else 0
    t0 = trace.records[0].ts_ns
    pending = [len(trace.records)]
    finished = stack.engine.event()

    def done(req):
        lat.append(req.done_ns - req.submit_ns)
        pending[0] -= 1
        if pending[0] == 0:
            finished.fire(None)

    def task_of(name):
        t = tasks.get(name)
        if t is None:
            t = tasks[name] = app.task(name)
        return t

    def submit(rec: TraceRecord):
        req = Request(rec.op, rec.lba, max(rec.nbytes, 512) if rec.op in (OP_READ, OP_WRITE) else rec.nbytes,
                      rec.sync, task_of(rec.process))
        req.cb = done
        stack.blk.submit(req)
        return req

    if closed_loop:
        by_proc: dict[str, list] = {}
        for r in trace.records:
            by_proc.setdefault(r.process, []).append(r)

        def proc(recs):
            for r in recs:
                yield submit(r).done

        def start():
            yield offset
            for recs in by_proc.values():
                stack.spawn(proc(recs))
        stack.spawn(start())
    else:
        for r in trace.records:
            stack.engine.at(offset + r.ts_ns - t0, submit, r)
    stack.run(until=offset + 3600 * S, stop=finished)
    xs = sorted(lat)

    def q(p):
        return xs[min(len(xs) - 1, int(p * len(xs)))] / 1e6 if xs else float("nan")

    return {"trace": trace.path, "format": trace.format, "policy": stack.policy.name, "device": stack.profile.name,
            "background": background, "requests": len(xs), "mean_ms": sum(xs) / len(xs) / 1e6 if xs else None,
            "p50_ms": q(0.5), "p90_ms": q(0.9), "p99_ms": q(0.99), "max_ms": q(1.0),
            "completion_s": (stack.now - offset) / 1e9, "events": stack.engine.events}
