"""Instructions per `read_trace` of one trace, for two builds of droidlag, counted by valgrind's callgrind: an A/B
measure of a small change to the ingest that the timing benchmarks cannot resolve (their noise on this machine is
about a tenth of a read). The count is deterministic (string hashing seeded, one polars thread, one BLAS thread) and
taken as the difference between a run of 1 + N reads and a run of 1 read, so imports and first-call costs cancel.
It counts work, not time: cache misses, which weigh on a read after other work, are not in it.

    python benchmarks/ir_per_read.py TRACE --base /path/to/old/src [--new src] [--reads 5]

Each `src` is a directory holding the `droidlag` package with its built `_native.abi3.so` (for the old build:
`git archive REV native src | tar -x -C DIR`, build DIR/native with its own CARGO_TARGET_DIR, copy the library into
DIR/src/droidlag/). Needs valgrind (`apt-get install valgrind`)."""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

_LOOP = """
import gc, sys
from droidlag.io import read_trace
read_trace(sys.argv[1])
gc.collect(); gc.freeze()
for _ in range(int(sys.argv[2])):
    gc.collect()
    read_trace(sys.argv[1])
"""
_ENV = {"PYTHONHASHSEED": "0", "POLARS_MAX_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def _instructions(src: str, trace: str, reads: int, script: str) -> int:
    """Instructions callgrind counts for the whole process (imports, one read, `reads` more)."""
    env = {**os.environ, **_ENV, "PYTHONPATH": src}
    res = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, script,
                          trace, str(reads)], env=env, capture_output=True, text=True, check=True)
    m = re.search(r"Collected : (\d+)", res.stderr)
    if not m:
        raise RuntimeError(f"no instruction count from callgrind:\n{res.stderr[-2000:]}")
    return int(m.group(1))


def per_read(src: str, trace: str, reads: int, script: str) -> float:
    return (_instructions(src, trace, reads, script) - _instructions(src, trace, 0, script)) / reads


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--base", required=True, help="src directory of the build to compare against")
    ap.add_argument("--new", default=os.path.join(os.path.dirname(__file__), "..", "src"), help="(default: ./src)")
    ap.add_argument("--reads", type=int, default=5)
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        print("valgrind not found: apt-get install valgrind")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "loop.py")
        with open(script, "w") as f:
            f.write(_LOOP)
        base = per_read(os.path.abspath(args.base), args.trace, args.reads, script)
        new = per_read(os.path.abspath(args.new), args.trace, args.reads, script)
    print(f"{os.path.basename(args.trace)}: instructions per read  base {base / 1e6:.2f}M  new {new / 1e6:.2f}M  "
          f"new/base {new / base:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
