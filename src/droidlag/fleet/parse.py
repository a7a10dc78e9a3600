"""One input file of a fleet into plain records (no store access, picklable, so it runs in worker processes):
its content hash, format, read status and reason, the device facts it states, its ANR/SNR events with their
features (primary vector) and cause, and its gfxinfo sessions' frame counts."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from droidlag.errors import InputError
from droidlag.fleet.stats import UNKNOWN_APP
from droidlag.hangs.analyze import events_from_unit
from droidlag.hangs.config import HangsConfig
from droidlag.hangs.features import Features, reason_kind
from droidlag.io.device_meta import device_meta
from droidlag.io.dump_units import load_units
from droidlag.io.source import read_file
from droidlag.models.gfxinfo import rendered_frames

# Frames slower than this are frozen (Android vitals: 700 ms); the histogram bucket edges are in ms.
FROZEN_MS = 700
SLOW_MS = 1000 / 60   # a frame over one 60 Hz vsync period is slow (vitals' slow-rendering frame)
_HIST = re.compile(r"(\d+)ms=(\d+)")
_TIME_FORMS = ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S")


@dataclass
class ParsedInput:
    """What one file holds, ready for the store. status: 'ok' | 'skipped' | 'failed'."""

    content_hash: str
    path: str
    format: str | None
    status: str
    reason: str | None = None
    bytes: int = 0
    warnings: int = 0
    meta: dict = field(default_factory=dict)
    events: list[dict] = field(default_factory=list)
    sessions: list[dict] = field(default_factory=list)


def content_hash(data: bytes) -> str:
    """SHA-256 of the file's bytes, hex: the identity of an input (the same content twice is one input)."""
    return hashlib.sha256(data).hexdigest()


def signature_key(f: Features) -> str:
    """A short stable key of a feature vector's signature (identical signatures are one clustering unit)."""
    return hashlib.blake2b(repr(f.signature()).encode(), digest_size=12).hexdigest()


def parse_time(s: str | None) -> datetime | None:
    """A dump's `at YYYY-MM-DD HH:MM:SS[.fff]` time, or None."""
    if not s:
        return None
    s = s.strip()[:26]
    for form in _TIME_FORMS:
        try:
            return datetime.strptime(s, form)
        except ValueError:
            continue
    return None


def _sniff(path: Path, data: bytes) -> str | None:
    from droidlag.io.detect import sniff_bytes
    from droidlag.io.source import GZIP_MAGIC, SNIFF_BYTES, gunzip_head
    head = data[:SNIFF_BYTES]
    if head[:2] == GZIP_MAGIC:
        head = gunzip_head(head, path)
    kind = sniff_bytes(head)
    if kind == "zip":
        return "bugreport"
    return kind


def _main_text(path: Path, data: bytes, kind: str) -> str:
    """The text device facts are read from: the bugreport's main entry, or the file itself."""
    if kind != "bugreport":
        return data[:4 << 20].decode("utf-8", "replace")
    from droidlag.io.archive import open_zip, safe_entries
    zf = open_zip(path, data)
    want = lambda info: Path(info.filename).name.startswith("bugreport") and info.filename.endswith(".txt")
    for _name, raw in safe_entries(path, zf, [], want):
        return raw.decode("utf-8", "replace")
    return ""


def _event_records(path: Path, data: bytes, config: HangsConfig) -> tuple[list[dict], int]:
    events: list[dict] = []
    warnings = 0
    for unit in load_units(path, data):   # the bytes already read for the hash and the sniff
        warnings += len(unit.warnings)
        for e in events_from_unit(unit, config):
            f = e.features
            events.append({
                "kind": e.kind, "app": e.process or UNKNOWN_APP, "ts": parse_time(e.evidence.get("dump_time")),
                "cause": e.cause, "deadlock": bool(e.deadlock),
                "reason_kind": reason_kind(e.evidence.get("reason")), "signature": signature_key(f),
                "generic": sorted(f.generic), "term_keys": list(f.terms), "term_weights": list(f.terms.values())})
    return events, warnings


def _session_records(path: Path, data: bytes) -> tuple[list[dict], int]:
    from droidlag.io.gfxinfo import read_gfxinfo
    dump = read_gfxinfo(data, str(path))
    sessions = []
    for p in dump.processes:
        s = p.summary
        frames, from_histogram = rendered_frames(s)
        if not isinstance(frames, int):
            continue
        janky = s.get("janky_frames")
        janky = janky.get("count") if isinstance(janky, dict) else janky
        hist = s.get("histogram")
        if from_histogram and not isinstance(janky, int) and isinstance(hist, dict):
            # Android's janky count unknown as well: the frames over the budget, by histogram
            janky = sum(int(n) for ms, n in hist.items() if int(str(ms).rstrip("ms")) > SLOW_MS)
        frozen = None
        if isinstance(hist, str):
            frozen = sum(int(n) for ms, n in _HIST.findall(hist) if int(ms) >= FROZEN_MS)
        elif isinstance(hist, dict):
            frozen = sum(int(n) for ms, n in hist.items() if int(str(ms).rstrip("ms")) >= FROZEN_MS)
        sessions.append({"app": p.name, "frames": frames, "slow_frames": int(janky or 0), "frozen_frames": frozen})
    return sessions, len(dump.warnings)


def parse_input(path: str | Path, config: HangsConfig | None = None) -> ParsedInput:
    """Read one file into records. Never raises for bad input: an unusable file comes back 'failed' or 'skipped'
    with the reason (the InputError's text names the file and line)."""
    path = Path(path)
    config = config or HangsConfig()
    try:
        raw, data = read_file(path)
    except InputError as e:
        return ParsedInput("", str(path), None, "failed", str(e))
    h = content_hash(raw)   # the file's own bytes (a UTF-16 file is read transcoded): the ingest's pre-hash agrees
    out = ParsedInput(h, str(path), None, "ok", bytes=len(data))
    try:
        kind = _sniff(path, data)
        out.format = kind
        if kind in ("anr", "bugreport"):
            out.events, out.warnings = _event_records(path, data, config)
            out.meta = device_meta(_main_text(path, data, kind))
            if kind == "bugreport":
                out.sessions = _bugreport_sessions(path, data)
        elif kind in ("perfetto", "systrace"):
            out.sessions = _trace_sessions(path)
        elif kind == "gfxinfo":
            out.sessions, out.warnings = _session_records(path, data)
            out.meta = device_meta(data[:1 << 20].decode("utf-8", "replace"))
        else:
            out.status, out.reason = "skipped", (f"not a thread dump, bugreport, trace or gfxinfo (looks like "
                                                 f"{kind or 'nothing known'})")
            return out
    except InputError as e:
        out.status, out.reason = "failed", str(e)
        return out
    if not out.events and not out.sessions:
        out.reason = "read, but holds no ANR/SNR event and no frame session"
    return out


def _trace_sessions(path: Path) -> list[dict]:
    """One session per app process of a trace: its frames, and those droidlag.frames judged SR (slow) or FF
    (frozen) by the buffer-aware verdict."""
    from droidlag.frames import frames_report
    from droidlag.frames.verdicts import FF, SR
    from droidlag.io.frames_input import read_frames_input
    frames = frames_report(read_frames_input(path)).frames
    if not frames.height or "process" not in frames.columns:
        return []
    out = []
    for (pid, process), g in sorted(frames.group_by(["pid", "process"]), key=lambda kv: (str(kv[0][1]), kv[0][0] or 0)):
        verdicts = g["verdict"].to_list()
        out.append({"app": process or f"pid {pid}", "frames": len(verdicts),
                    "slow_frames": sum(v in (SR, FF) for v in verdicts), "frozen_frames": sum(v == FF for v in verdicts)})
    return out


def _bugreport_sessions(path: Path, data: bytes) -> list[dict]:
    """gfxinfo sessions of a bugreport's `DUMP OF SERVICE gfxinfo` section, when it has one."""
    text = _main_text(path, data, "bugreport")
    start = text.find("DUMP OF SERVICE gfxinfo:")
    if start < 0:
        return []
    end = text.find("DUMP OF SERVICE ", start + 24)
    try:
        sessions, _ = _session_records(path, text[start:end if end > 0 else None].encode())
    except InputError:
        return []
    return sessions
