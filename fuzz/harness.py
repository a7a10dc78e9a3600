"""Coverage-guided fuzzing of droidlag's readers, seeded from the real corpus.

    python fuzz/harness.py READER [--seconds S] [--runs N] [--engine atheris|plain]   one reader
    python fuzz/harness.py all [--seconds S] [--jobs J]                               each reader in turn, a table

A reader may accept its input (with warnings) or refuse it with InputError; anything else (an exception, a hang past
--timeout, a crash of the process) is a finding: the input is saved under fuzz/crashes/READER/ and becomes a
regression test (tests/fuzz/test_fuzz_regressions.py replays every file there).

Engines: atheris (libFuzzer, coverage-guided, when installed: `pip install atheris`) and plain (seeded random
mutations of the seeds: bit flips, byte runs, truncation, duplication, splicing; no coverage, always available; the
smoke run in `make test` uses it so that it is deterministic). Seeds are corpus files cut to --max-len bytes; the
corpus is found as the tests find it (../shared/corpus or $DROIDLAG_CORPUS)."""
from __future__ import annotations

import argparse
import gzip
import io
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
from conftest import corpus_root, usable  # noqa: E402  (the one corpus finder and its reserved-source rule)

CRASHES = HERE / "crashes"
MAX_LEN = 64 * 1024
# Seeds are windows of the corpus files of about this size, cut at line starts around the lines that open each
# structure the reader knows (a process, a framestats block, a thread...): small inputs keep every path of the reader
# under test and run at thousands of executions per second; libFuzzer may grow them to FUZZ_MAX_LEN.
SEED_LEN = 2048
FUZZ_MAX_LEN = 8192
# Lines that open what each text reader parses; a seed window starts at the first of each.
MARKS: dict[str, tuple[bytes, ...]] = {
    "gfxinfo": (b"** Graphics info", b"Window:", b"---PROFILEDATA---", b"Janky frames", b"Package:", b"HISTOGRAM"),
    "systrace": (b"# tracer", b"trace-data", b"sched_switch", b"tracing_mark_write", b"sched_wakeup", b"cpu_idle"),
    "anr": (b"----- pid ", b'"main"', b"Waiting Channels", b"ANR in", b"Cmd line", b"- waiting to lock"),
    "gc_log": (b"GC freed", b"Explicit concurrent", b"paused", b"Background"),
}
# Per input: what one execution may decompress (the run budget) and how long it may take.
EXEC_BUDGET_BYTES = 256 * 1024**2
TIMEOUT_S = 20




# ---- targets: bytes -> reader; InputError is an accepted answer ------------------------------------------------
def _gfxinfo(data: bytes) -> None:
    from droidlag.io.gfxinfo import read_gfxinfo
    read_gfxinfo(data, "fuzz")


def _systrace(data: bytes) -> None:
    from droidlag.io.systrace import read_systrace
    read_systrace(data, "fuzz").summary()


def _perfetto(data: bytes) -> None:
    from droidlag.io.perfetto import read_perfetto
    read_perfetto(data, "fuzz").summary()


def _anr(data: bytes) -> None:
    from droidlag.io.anr import read_anr
    read_anr("fuzz", data)


def _bugreport(data: bytes) -> None:
    from droidlag.io.bugreport import read_bugreport_zip
    read_bugreport_zip("fuzz", data)


def _gc_log(data: bytes) -> None:
    from droidlag.io.art_gc_log import read_device_gc
    read_device_gc("fuzz", data)


def _archive(data: bytes) -> None:
    from droidlag.io.archive import archive_entries
    for _ in archive_entries("fuzz", data, []):
        pass


def _gzip(data: bytes) -> None:
    from droidlag.io.source import gunzip, inflate_zlib
    gunzip(data, "fuzz", [])
    inflate_zlib(data, "fuzz", [])


def _xml(data: bytes) -> None:
    from droidlag.io.xml_safe import parse_xml
    parse_xml(data, "fuzz")


_SCRATCH: list[Path] = []   # one file reused by every execution (the reader takes a path)


def _scratch() -> Path:
    if not _SCRATCH:
        given = os.environ.get("DROIDLAG_FUZZ_SCRATCH")   # the driver's, which it removes
        d = Path(given) if given else Path(tempfile.mkdtemp(prefix="droidlag-fuzz-scratch-"))
        if not given:
            import atexit
            atexit.register(shutil.rmtree, d, True)
        _SCRATCH.append(d / "input.dump")
    return _SCRATCH[0]


def _view_hierarchy(data: bytes) -> None:
    from droidlag.io.view_hierarchy import read_hierarchy
    f = _scratch()
    f.write_bytes(data)
    read_hierarchy(f)


def _detect(data: bytes) -> None:
    from droidlag.io.detect import sniff_bytes
    sniff_bytes(data)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "gfxinfo": _gfxinfo, "systrace": _systrace, "perfetto": _perfetto, "anr": _anr, "bugreport": _bugreport,
    "gc_log": _gc_log, "archive": _archive, "gzip": _gzip, "xml": _xml, "view_hierarchy": _view_hierarchy,
    "detect": _detect,
}


# ---- seeds from the corpus -------------------------------------------------------------------------------------
def _head(p: Path, n: int) -> bytes:
    raw = p.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw[:n]


def _compressed_perfetto(head: bytes) -> bytes:
    """The whole Trace.packet records of a Perfetto file's head as two TracePacket.compressed_packets (field 50,
    zlib), as a trace recorded with COMPRESSION_TYPE_DEFLATE holds them (wire bytes by the tests' perfetto_wire)."""
    sys.path.insert(0, str(REPO / "tests" / "io"))
    from perfetto_wire import field, record_ends
    ends = record_ends(head)
    half = ends[len(ends) // 2] if ends else 0
    parts = [head[:half], head[half:ends[-1] if ends else 0]]
    return b"".join(field(1, field(50, zlib.compress(p))) for p in parts if p)


def _zip(files: dict[str, bytes]) -> bytes:
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        for name, raw in files.items():   # fixed times: the same seeds on every run
            z.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), raw, zipfile.ZIP_DEFLATED)
    return b.getvalue()


def _tar(files: dict[str, bytes], mode: str) -> bytes:
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode=mode) as t:
        for name, raw in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            t.addfile(info, io.BytesIO(raw))
    raw = b.getvalue().rstrip(b"\0")   # no 10 KiB record padding: the two zero blocks that end a tar are enough
    return raw + b"\0" * (-len(raw) % 512 + 1024)


def _windows(raw: bytes, marks: tuple[bytes, ...], size: int) -> list[bytes]:
    """The head of `raw` and a window at the line start before the first occurrence of each mark, each cut to
    `size` bytes at a line end when there is one."""
    starts = [0]
    for m in marks:
        at = raw.find(m)
        if at > 0:
            starts.append(raw.rfind(b"\n", 0, at) + 1)
    out = []
    for st in sorted(set(starts)):
        w = raw[st:st + size]
        if len(w) == size and b"\n" in w[size // 2:]:
            w = w[:w.rindex(b"\n") + 1]
        out.append(w)
    return out


def seeds(reader: str, max_len: int = SEED_LEN) -> list[bytes]:
    """Windows of corpus files (about max_len bytes) that the reader takes, and small containers built from them."""
    c = corpus_root()
    if c is None:
        raise SystemExit("fuzz: the corpus is needed for seeds (../shared/corpus or $DROIDLAG_CORPUS)")
    g = lambda pattern: sorted(p for p in c.glob(pattern) if usable(p))   # noqa: E731  (no reserved source)
    small = max_len // 2
    anr = [_head(p, small) for p in g("anr/*.txt")[:6]]

    def win(reader: str, files: list[Path]) -> list[bytes]:
        return [w for p in files for w in _windows(_head(p, MAX_LEN * 16), MARKS[reader], max_len)]

    picks: dict[str, list[bytes]] = {
        "gfxinfo": win("gfxinfo", g("gfxinfo/*.txt")),
        "systrace": win("systrace", g("systrace/catapult_test_data/*atrace*")[:5] + g("traces/*.html.gz")[:3]
                        + g("systrace/*.txt")),
        "perfetto": [_head(p, max_len * 4) for p in g("traces/*.perfetto-trace") + g("traces/*.pftrace")]
        + [_compressed_perfetto(_head(p, max_len * 4)) for p in g("traces/*.perfetto-trace")],
        "anr": win("anr", g("anr/*.txt")[:8] + g("anr-reports/*.txt")[:4]),
        "bugreport": [_zip({"bugreport-x.txt": a, "FS/data/anr/anr_1": b}) for a, b in zip(anr, anr[1:])],
        "gc_log": win("gc_log", g("gc/*.txt")[:5]),
        "archive": [_zip({"a.txt": anr[0], "b/c.txt": anr[1]}), _tar({"a.txt": anr[0]}, "w"),
                    gzip.compress(_tar({"a.txt": anr[1], "d/e.txt": anr[2]}, "w"), mtime=0), _zip({"in.zip": _zip({"x.txt": anr[3]})})],
        "gzip": [gzip.compress(a, mtime=0) for a in anr[:3]] + [gzip.compress(anr[0], mtime=0)
                                                               + gzip.compress(anr[1], mtime=0) + b"\0\0",
                                                       zlib.compress(anr[2])],
        "xml": [_head(p, max_len) for p in g("layouts/*/app/src/main/res/layout/*.xml")[:6]
                + g("viewhierarchy/uiautomator/*.xml")[:2]],
        "view_hierarchy": [_head(p, max_len * 2) for p in g("viewhierarchy/*/*.json")[:4]
                           + g("viewhierarchy/uiautomator/*")[:2]],
        "detect": [_head(p, max_len) for p in g("anr/*.txt")[:3] + g("gfxinfo/*.txt") + g("traces/*")[:4]],
    }
    out = [s for s in picks[reader] if s]
    if not out:
        raise SystemExit(f"fuzz: no corpus seeds for {reader}")
    return out


# ---- running one input -----------------------------------------------------------------------------------------
def run_one(reader: str, data: bytes) -> None:
    """One execution: the reader on data under a small run budget; InputError is a fine answer."""
    from droidlag.errors import InputError
    from droidlag.io.budget import Budget, run_budget
    try:
        with run_budget(Budget(max_bytes=EXEC_BUDGET_BYTES)):
            TARGETS[reader](data)
    except InputError:
        pass


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"no answer within {TIMEOUT_S} s")


def mutate(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    """A few random edits of data: the classic byte-level mutations, and splicing with another seed."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(9)
        n = len(b)
        if op == 0 and n:
            i = rng.randrange(n)
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1 and n:
            b[rng.randrange(n)] = rng.choice(b"\x00\xff\x7f\x80\r\n|:,-0123456789")
        elif op == 2:
            b[rng.randint(0, n):rng.randint(0, n)] = b""           # delete a run (often nothing)
        elif op == 3 and n:
            del b[rng.randrange(n):]                                # truncate
        elif op == 4 and n:
            i = rng.randrange(n)
            b[i:i] = b[i:i + rng.randint(1, 256)] * rng.randint(1, 8)   # repeat a run
        elif op == 5:
            b[rng.randint(0, n):rng.randint(0, n)] = rng.choice(
                [b"99999999999999999999999", b"-1", b"\r", b"\r\n", b"\xff\xfe", b"\x00" * 8, b"\x1b[31m", b"&"])
        elif op == 6 and pool:
            other = rng.choice(pool)
            i = rng.randint(0, n)
            b[i:] = other[rng.randint(0, len(other)):]              # splice
        elif op == 7 and n > 1:
            i, j = sorted((rng.randrange(n), rng.randrange(n)))
            b[i:j] = bytes(b[i:j])[::-1]
        elif op == 8 and n:
            i = rng.randrange(n)
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return bytes(b[:FUZZ_MAX_LEN])


def fuzz_plain(reader: str, runs: int | None, seconds: float | None, seed: int = 0,
               save: Path | None = CRASHES) -> dict:
    """Seeded random mutations of the seeds; returns {reader, executions, crashes: [(kind, message, file)]}."""
    rng = random.Random(seed)
    pool = seeds(reader)
    crashes: list[tuple[str, str, str | None]] = []
    execs = 0
    start = time.monotonic()
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        while (runs is None or execs < runs) and (seconds is None or time.monotonic() - start < seconds):
            data = pool[execs] if execs < len(pool) else mutate(rng, rng.choice(pool), pool)
            execs += 1
            signal.alarm(TIMEOUT_S)
            try:
                run_one(reader, data)
            except Exception as e:  # a finding: save it, go on
                kind = "hang" if isinstance(e, Hang) else type(e).__name__
                where = traceback.extract_tb(e.__traceback__)[-1]
                msg = f"{kind}: {str(e)[:160]} at {Path(where.filename).name}:{where.lineno}"
                crashes.append((kind, msg, _save(save, reader, data)))
            finally:
                signal.alarm(0)
    finally:
        signal.signal(signal.SIGALRM, old)
    return {"reader": reader, "executions": execs, "seconds": time.monotonic() - start, "crashes": crashes}


def _save(save: Path | None, reader: str, data: bytes) -> str | None:
    if save is None:
        return None
    import hashlib
    d = save / reader
    d.mkdir(parents=True, exist_ok=True)
    f = d / f"crash-{hashlib.sha1(data).hexdigest()[:16]}"
    f.write_bytes(data)
    return str(f)


def fuzz_atheris(reader: str, runs: int | None, seconds: float | None, seed: int = 1) -> None:
    """libFuzzer through atheris, coverage of droidlag's own code; prints libFuzzer's final stats and exits."""
    import importlib
    import pkgutil

    import atheris
    with atheris.instrument_imports(include=["droidlag"]):   # droidlag's code only: polars, numpy... run as built
        import droidlag.io
        import droidlag.models
        for pkg in (droidlag.io, droidlag.models):
            for mod in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + "."):
                importlib.import_module(mod.name)
    given = os.environ.get("DROIDLAG_FUZZ_SEED_DIR")   # the driver's, which it removes (libFuzzer's exit skips atexit)
    seed_dir = Path(given) if given else Path(tempfile.mkdtemp(prefix=f"droidlag-fuzz-{reader}-"))
    for k, s in enumerate(seeds(reader)):
        (seed_dir / f"seed{k}").write_bytes(s)
    out = CRASHES / reader
    out.mkdir(parents=True, exist_ok=True)
    args = [sys.argv[0], str(seed_dir), f"-seed={seed}", f"-max_len={FUZZ_MAX_LEN}", f"-timeout={TIMEOUT_S}",
            f"-artifact_prefix={out}/", "-print_final_stats=1", "-rss_limit_mb=3072"]
    if runs is not None:
        args.append(f"-runs={runs}")
    if seconds is not None:
        args.append(f"-max_total_time={int(seconds)}")
    atheris.Setup(args, lambda data: run_one(reader, data))
    atheris.Fuzz()


def _have_atheris() -> bool:
    try:
        import atheris  # noqa: F401
        return True
    except ImportError:
        return False


def run_all(seconds: float | None, runs: int | None, engine: str, readers: list[str] | None = None) -> int:
    """Each reader in its own process, for `runs` executions or `seconds` (whichever comes first); a table of
    executions, executions per second and findings per reader."""
    rows = []
    import resource
    print(f"{'reader':16s} {'executions':>12s} {'seconds':>8s} {'exec/s':>8s} {'cpu s':>8s} {'exec/cpu s':>10s}  result",
          flush=True)
    for reader in readers or list(TARGETS):
        cmd = [sys.executable, __file__, reader, "--engine", engine]
        cmd += ["--seconds", str(seconds)] if seconds else []
        cmd += ["--runs", str(runs)] if runs else []
        t0 = time.monotonic()
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        seed_dir = tempfile.mkdtemp(prefix=f"droidlag-fuzz-{reader}-")
        scratch = tempfile.mkdtemp(prefix="droidlag-fuzz-scratch-")
        env = dict(os.environ, DROIDLAG_FUZZ_SEED_DIR=seed_dir, DROIDLAG_FUZZ_SCRATCH=scratch, POLARS_MAX_THREADS="1")
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        finally:
            shutil.rmtree(seed_dir, ignore_errors=True)
            shutil.rmtree(scratch, ignore_errors=True)
        text = r.stdout + r.stderr
        m = re.search(r"stat::number_of_executed_units:\s*(\d+)", text) or re.search(r"executions=(\d+)", text)
        execs = int(m.group(1)) if m else 0
        secs = time.monotonic() - t0
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime   # the machine may be shared: CPU time too
        found = re.findall(r"(?:CRASH|Uncaught Python exception|ERROR: libFuzzer|==\d+== ERROR)[^\n]*", text)
        result = "no crash" if r.returncode == 0 else f"exit {r.returncode}: " + ("; ".join(found[:2]) or text[-300:])
        rows.append((reader, execs, secs, r.returncode))
        print(f"{reader:16s} {execs:>12,d} {secs:>8.0f} {execs / max(secs, 1e-9):>8.0f} {cpu:>8.0f} "
              f"{execs / max(cpu, 1e-9):>10.0f}  {result}", flush=True)
    total = sum(r[1] for r in rows)
    bad = [r[0] for r in rows if r[3] != 0]
    short = [r[0] for r in rows if runs and r[1] < runs]
    print(f"all readers: {total:,d} executions; readers with a finding: {', '.join(bad) or 'none'}"
          + (f"; short of {runs:,d} executions: {', '.join(short)}" if short else ""), flush=True)
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reader", choices=[*TARGETS, "all"], nargs="+")
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--engine", choices=["atheris", "plain", "auto"], default="auto")
    ap.add_argument("--seed", type=int, default=1)
    args, _ = ap.parse_known_args(argv)
    os.environ.setdefault("POLARS_MAX_THREADS", "1")   # before polars is imported: one input is small, no pool
    engine = args.engine if args.engine != "auto" else ("atheris" if _have_atheris() else "plain")
    if args.runs is None and args.seconds is None:
        args.seconds = 60
    if args.reader == ["all"] or len(args.reader) > 1:
        return run_all(args.seconds, args.runs, engine, None if args.reader == ["all"] else args.reader)
    args.reader = args.reader[0]
    if engine == "atheris":
        fuzz_atheris(args.reader, args.runs, args.seconds, args.seed)
        return 0
    res = fuzz_plain(args.reader, args.runs, args.seconds, args.seed)
    for _kind, msg, f in res["crashes"][:20]:
        print(f"CRASH {msg} -> {f}")
    print(f"{args.reader}: executions={res['executions']} crashes={len(res['crashes'])} "
          f"in {res['seconds']:.0f} s")
    return 1 if res["crashes"] else 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "src"))
    sys.exit(main())
