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
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CRASHES = HERE / "crashes"
MAX_LEN = 64 * 1024
# Per input: what one execution may decompress (the run budget) and how long it may take.
EXEC_BUDGET_BYTES = 256 * 1024**2
TIMEOUT_S = 20


def corpus_root() -> Path | None:
    env = os.environ.get("DROIDLAG_CORPUS")
    for c in ([Path(env)] if env else []) + [REPO.parent / "shared" / "corpus", REPO.parent.parent / "shared" / "corpus"]:
        if c.is_dir():
            return c
    return None


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


def _view_hierarchy(data: bytes) -> None:
    from droidlag.io.view_hierarchy import read_hierarchy
    with tempfile.NamedTemporaryFile(suffix=".dump") as f:
        f.write(data)
        f.flush()
        read_hierarchy(f.name)


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


def _zip(files: dict[str, bytes]) -> bytes:
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        for name, raw in files.items():
            z.writestr(name, raw)
    return b.getvalue()


def _tar(files: dict[str, bytes], mode: str) -> bytes:
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode=mode) as t:
        for name, raw in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            t.addfile(info, io.BytesIO(raw))
    return b.getvalue()


def seeds(reader: str, max_len: int = MAX_LEN) -> list[bytes]:
    """Corpus files (cut to max_len) that the reader takes, and small containers built from them."""
    c = corpus_root()
    if c is None:
        raise SystemExit("fuzz: the corpus is needed for seeds (../shared/corpus or $DROIDLAG_CORPUS)")
    g = lambda pattern: sorted(c.glob(pattern))   # noqa: E731
    small = max_len // 4
    anr = [_head(p, small) for p in g("anr/*.txt")[:6]]
    picks: dict[str, list[bytes]] = {
        "gfxinfo": [_head(p, max_len) for p in g("gfxinfo/*.txt")],
        "systrace": [_head(p, max_len) for p in g("systrace/catapult_test_data/*atrace*")[:5]
                     + g("traces/*.html.gz")[:3] + g("systrace/*.txt")],
        "perfetto": [_head(p, max_len) for p in g("traces/*.perfetto-trace") + g("traces/*.pftrace")],
        "anr": [_head(p, max_len) for p in g("anr/*.txt")[:8] + g("anr-reports/*.txt")[:4]],
        "bugreport": [_zip({"bugreport-x.txt": a, "FS/data/anr/anr_1": b}) for a, b in zip(anr, anr[1:])],
        "gc_log": [_head(p, max_len) for p in g("gc/*.txt")[:5]],
        "archive": [_zip({"a.txt": anr[0], "b/c.txt": anr[1]}), _tar({"a.txt": anr[0]}, "w"),
                    _tar({"a.txt": anr[1], "d/e.txt": anr[2]}, "w:gz"), _zip({"in.zip": _zip({"x.txt": anr[3]})})],
        "gzip": [gzip.compress(a) for a in anr[:3]] + [gzip.compress(anr[0]) + gzip.compress(anr[1]) + b"\0\0",
                                                       __import__("zlib").compress(anr[2])],
        "xml": [_head(p, max_len) for p in g("layouts/*/app/src/main/res/layout/*.xml")[:6]
                + g("viewhierarchy/uiautomator/*.xml")[:2]],
        "view_hierarchy": [_head(p, max_len) for p in g("viewhierarchy/*/*.json")[:4] + g("viewhierarchy/uiautomator/*")[:2]],
        "detect": [_head(p, 4096) for p in g("anr/*.txt")[:3] + g("gfxinfo/*.txt") + g("traces/*")[:4]],
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
    return bytes(b[:MAX_LEN])


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
    import atheris
    with atheris.instrument_imports(include=["droidlag"]):
        import droidlag.io  # noqa: F401
        import droidlag.io.anr  # noqa: F401
        import droidlag.io.archive  # noqa: F401
        import droidlag.io.art_gc_log  # noqa: F401
        import droidlag.io.bugreport  # noqa: F401
        import droidlag.io.gfxinfo  # noqa: F401
        import droidlag.io.perfetto  # noqa: F401
        import droidlag.io.systrace  # noqa: F401
        import droidlag.io.view_hierarchy  # noqa: F401
        import droidlag.io.xml_safe  # noqa: F401
    given = os.environ.get("DROIDLAG_FUZZ_SEED_DIR")   # the driver's, which it removes (libFuzzer's exit skips atexit)
    seed_dir = Path(given) if given else Path(tempfile.mkdtemp(prefix=f"droidlag-fuzz-{reader}-"))
    for k, s in enumerate(seeds(reader)):
        (seed_dir / f"seed{k}").write_bytes(s)
    out = CRASHES / reader
    out.mkdir(parents=True, exist_ok=True)
    args = [sys.argv[0], str(seed_dir), f"-seed={seed}", f"-max_len={MAX_LEN}", f"-timeout={TIMEOUT_S}",
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


def run_all(seconds: float, engine: str) -> int:
    """Each reader for `seconds` in its own process; a table of executions and crashes per reader."""
    rows = []
    for reader in TARGETS:
        cmd = [sys.executable, __file__, reader, "--seconds", str(seconds), "--engine", engine]
        t0 = time.monotonic()
        seed_dir = tempfile.mkdtemp(prefix=f"droidlag-fuzz-{reader}-")
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, DROIDLAG_FUZZ_SEED_DIR=seed_dir))
        finally:
            shutil.rmtree(seed_dir, ignore_errors=True)
        text = r.stdout + r.stderr
        m = re.search(r"stat::number_of_executed_units:\s*(\d+)", text) or re.search(r"executions=(\d+)", text)
        execs = int(m.group(1)) if m else 0
        crashed = r.returncode != 0 or "crashes=0" not in text and engine == "plain"
        found = re.findall(r"(?:CRASH|Uncaught Python exception|ERROR: libFuzzer)[^\n]*", text)
        rows.append((reader, execs, time.monotonic() - t0, r.returncode, found[:2] if crashed else []))
        print(f"{reader:16s} {execs:>10d} executions  {rows[-1][2]:7.0f} s  exit {r.returncode}  "
              f"{'; '.join(found[:2]) or 'no crash'}", flush=True)
    total = sum(r[1] for r in rows)
    bad = [r[0] for r in rows if r[3] != 0]
    print(f"all readers: {total} executions, readers with a finding: {', '.join(bad) or 'none'}")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reader", choices=[*TARGETS, "all"])
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--engine", choices=["atheris", "plain", "auto"], default="auto")
    ap.add_argument("--seed", type=int, default=1)
    args, _ = ap.parse_known_args(argv)
    engine = args.engine if args.engine != "auto" else ("atheris" if _have_atheris() else "plain")
    if args.reader == "all":
        return run_all(args.seconds or 60, engine)
    if args.runs is None and args.seconds is None:
        args.seconds = 60
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
