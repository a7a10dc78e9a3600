"""Are two revisions' outputs the same on the corpus? For refactors that must not change what users see.

    python tools/same_output.py REV_A REV_B [--corpus DIR] [PATH...]

Checks out both revisions into temporary worktrees, runs `droidlag analyze --json --out` of each on the same
inputs (default: the corpus folders analyze reads), and compares findings.json and report.html byte for byte
after removing what differs by design (the temporary output folder). Exit 0 when identical, 1 with a diff."""
from __future__ import annotations

import argparse
import difflib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIRS = ("traces", "systrace", "gfxinfo", "anr", "bugreport")


def _run(rev: str, work: Path, inputs: list[str]) -> dict[str, bytes]:
    tree = work / f"tree-{rev.replace('/', '_')}"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), rev], check=True)
    try:
        # a checkout has no native core (maturin builds it into src/): both revisions use this tree's build, so a
        # difference in outputs is the Python's (compare native changes with two built trees instead)
        for lib in (ROOT / "src" / "droidlag").glob("_native*.so"):
            if not (tree / "src" / "droidlag" / lib.name).exists():
                shutil.copy2(lib, tree / "src" / "droidlag" / lib.name)
        out = work / f"out-{rev.replace('/', '_')}"
        env = dict(os.environ, PYTHONPATH=str(tree / "src"))
        r = subprocess.run([sys.executable, "-m", "droidlag.cli", "analyze", *inputs, "--out", str(out), "--quiet"],
                           env=env, capture_output=True)
        files = {"exit": str(r.returncode).encode()}
        if not (out / "findings.json").exists():
            print(f"{rev}: no findings.json (exit {r.returncode}):", r.stderr.decode("utf-8", "replace")[-2000:],
                  file=sys.stderr)
        for name in ("findings.json", "report.html"):
            p = out / name
            files[name] = p.read_bytes().replace(str(out).encode(), b"<OUT>") if p.exists() else b"(missing)"
        return files
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev_a")
    ap.add_argument("rev_b")
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    args = ap.parse_args()
    inputs = args.paths or [str(Path(args.corpus) / d) for d in DEFAULT_DIRS]
    with tempfile.TemporaryDirectory(prefix="droidlag-same-") as tmp:
        a = _run(args.rev_a, Path(tmp), inputs)
        b = _run(args.rev_b, Path(tmp), inputs)
    same = True
    for key in a:
        if a[key] == b[key]:
            print(f"{key}: identical ({len(a[key]):,} bytes)")
            continue
        same = False
        print(f"{key}: DIFFERENT")
        diff = difflib.unified_diff(a[key].decode("utf-8", "replace").splitlines(),
                                    b[key].decode("utf-8", "replace").splitlines(), args.rev_a, args.rev_b, n=1,
                                    lineterm="")
        for line in list(diff)[:40]:
            print("   ", line[:200])
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
