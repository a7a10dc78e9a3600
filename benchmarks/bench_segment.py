"""Frame segmentation against another revision's, same run: `segment_frames` of this tree and of REV (default main)
on the corpus traces, best of 5 each, outputs asserted equal. Issue 17 split segment_frames along its phases; this
shows the split costs nothing measurable (the work is polars expressions; the only Python loop is per app).
Run: python benchmarks/bench_segment.py [REV]"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

from _corpus import best_of, corpus_root, usable
from droidlag.frames.segment import segment_frames
from droidlag.io import read_trace

ROOT = Path(__file__).resolve().parents[1]


def _segment_of(rev: str):
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:src/droidlag/frames/segment.py"], check=True,
                         capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp(prefix="droidlag-bench-")) / "segment_rev.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("segment_rev", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["segment_rev"] = mod
    spec.loader.exec_module(mod)
    return mod.segment_frames



def main() -> int:
    rev = sys.argv[1] if len(sys.argv) > 1 else "main"
    root = corpus_root()
    if not root:
        print("corpus not found (set DROIDLAG_CORPUS)")
        return 1
    other = _segment_of(rev)
    paths = sorted(p for d in ("traces", "systrace") if (root / d).is_dir() for p in (root / d).iterdir()
                   if p.suffix != ".md" and usable(p))
    print(f"{'trace':<62}{'frames':>7}{rev + ' ms':>12}{'this ms':>10}{'ratio':>7}")
    tot_a = tot_b = 0.0
    for p in paths:
        try:
            trace = read_trace(p)
        except Exception:   # not a trace (a note, an unsupported sample): the reader tests cover those
            continue
        a, ra = best_of(lambda trace=trace: other(trace), 5)
        b, rb = best_of(lambda trace=trace: segment_frames(trace), 5)
        assert ra.frames.equals(rb.frames) and ra.notes == rb.notes, p
        tot_a, tot_b = tot_a + a, tot_b + b
        print(f"{p.name[:60]:<62}{rb.frames.height:>7}{a * 1e3:>12.1f}{b * 1e3:>10.1f}{b / a:>7.2f}")
    print(f"{'total':<62}{'':>7}{tot_a * 1e3:>12.1f}{tot_b * 1e3:>10.1f}{tot_b / tot_a:>7.2f}  (this / {rev})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
