"""Scale (issue 18): report plots for tens of thousands of frames, and peak memory against input size for gfxinfo,
thread dumps and bugreports. Inputs are grown from corpus files in /tmp (never kept).

    python benchmarks/bench_scale.py [--gfx-mb 8] [--big-mb 200] [--skip-memory]

Prints, per case, seconds and the ratio against a baseline measured in the same run:
- report: `write_outputs` (plots, HTML, JSON) on the frames of a gfxinfo with ~29k frames (8 MB), against the
  frames analysis of the same input (issue: 66 s against 6.6 s before);
- memory: peak RSS of one process reading a gfxinfo / thread-dump text / bugreport zip of --big-mb, minus the RSS of
  the same process after imports, divided by the input size (goal <= 3x); baseline: reading the file's bytes and
  splitting its lines.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from conftest import corpus_root  # noqa: E402

GFXINFO = "gfxinfo/sailfish_android10_dumpsys_gfxinfo.txt"
DUMP = "anr/sailfish_android10_vm_traces_just_now_54procs.txt"


def grow_gfxinfo(src: bytes, target_bytes: int) -> bytes:
    """One process, one window, framestats rows of the corpus file repeated with their times shifted forward, so
    the frames are real rows at a real cadence, until the file holds target_bytes."""
    lines = src.decode().splitlines()
    head_end = lines.index("---PROFILEDATA---")
    header = lines[head_end + 1]
    rows = [ln for ln in lines if ln[:2] in ("0,", "1,") and ln.count(",") == header.count(",")]
    cols = header.rstrip(",").split(",")
    time_cols = [i for i, c in enumerate(cols) if c not in ("Flags", "OldestInputEvent", "NewestInputEvent")
                 and not c.startswith(("FrameTimelineVsyncId", "GpuCompleted", "SwapBuffersCompleted"))]
    first = int(rows[0].split(",")[1])
    span = int(rows[-1].split(",")[1]) - first + 16_666_667
    out = ["** Graphics info for pid 4242 [com.example.scale] **", "", "Stats since: 1ns", "Total frames rendered: 0",
           "", "Profile data in ms:", "", "\tcom.example.scale/com.example.Main/android.view.ViewRootImpl@1 (visibility=0)",
           "Window: com.example.scale/com.example.Main", "---PROFILEDATA---", header]
    size = sum(len(x) + 1 for x in out)
    k = 0
    while size < target_bytes:
        shift = (k // len(rows)) * span
        f = rows[k % len(rows)].rstrip(",").split(",")
        for i in time_cols:
            v = int(f[i])
            if 0 < v < 1 << 62:
                f[i] = str(v + shift)
        line = ",".join(f) + ","
        out.append(line)
        size += len(line) + 1
        k += 1
    out += ["---PROFILEDATA---", ""]
    return "\n".join(out).encode()


def grow_text(src: bytes, target_bytes: int) -> bytes:
    return src * (target_bytes // len(src) + 1)


MEM_SCRIPT = r"""
import resource, sys, time
kind, path = sys.argv[1], sys.argv[2]
import droidlag.io.gfxinfo, droidlag.io.anr, droidlag.io.bugreport, droidlag.frames, droidlag.hangs  # imports first
def rss():
    return int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) * 1024
base = rss()
t = time.perf_counter()
if kind == 'baseline':
    data = open(path, 'rb').read(); lines = data.split(b'\n'); n = len(lines)
elif kind == 'gfxinfo':
    from droidlag.findings import frames_from_file
    n = frames_from_file(path).summary.frames
elif kind == 'dump':
    from droidlag.io.anr import read_anr
    n = sum(len(u.processes) for u in read_anr(path))
elif kind == 'bugreport':
    from droidlag.io.bugreport import read_bugreport_zip
    n = sum(len(u.processes) for u in read_bugreport_zip(path))
print(rss() - base, time.perf_counter() - t, n)
"""


def peak(kind: str, path: Path) -> tuple[int, float, int]:
    r = subprocess.run([sys.executable, "-c", MEM_SCRIPT, kind, str(path)], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(r.stderr[-2000:])
    extra, secs, n = r.stdout.split()
    return int(extra), float(secs), int(n)


def bench_report(corpus: Path, gfx_mb: float, tmp: Path) -> None:
    from droidlag.findings import analyze
    from droidlag.report.writer import write_outputs
    f = tmp / "gfxinfo_scale.txt"
    f.write_bytes(grow_gfxinfo((corpus / GFXINFO).read_bytes(), int(gfx_mb * 1e6)))
    t = time.perf_counter()
    found = analyze([f])
    t_frames = time.perf_counter() - t
    n = found.gfxinfo[0].summary.frames
    t = time.perf_counter()
    written = write_outputs(found, tmp / "report", force=True)
    t_report = time.perf_counter() - t
    html = written["report.html"].stat().st_size
    print(f"report: {f.stat().st_size / 1e6:.1f} MB gfxinfo, {n} frames: analyze {t_frames:.1f} s (baseline), "
          f"report (plots, HTML, JSON) {t_report:.1f} s = {t_report / t_frames:.2f}x the analysis; report.html "
          f"{html / 1e6:.1f} MB  [before issue 18: 66 s = 10x]")


def bench_memory(corpus: Path, big_mb: float, tmp: Path) -> None:
    size = int(big_mb * 1e6)
    gfx = tmp / "big_gfxinfo.txt"
    gfx.write_bytes(grow_gfxinfo((corpus / GFXINFO).read_bytes(), size))
    dump = tmp / "big_traces.txt"
    dump.write_bytes(grow_text((corpus / DUMP).read_bytes(), size))
    br = tmp / "big_bugreport.zip"
    with zipfile.ZipFile(br, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("bugreport-scale.txt", b"== dumpstate\n------ VM TRACES JUST NOW (/data/anr/traces.txt) ------\n"
                   + dump.read_bytes())
    for kind, path, text_size in (("gfxinfo", gfx, gfx.stat().st_size), ("dump", dump, dump.stat().st_size),
                                  ("bugreport", br, dump.stat().st_size)):
        b_extra, b_secs, _ = peak("baseline", path)
        extra, secs, n = peak(kind, path)
        verdict = "meets" if extra <= 3 * text_size else "MISSES"
        print(f"memory {kind}: {path.stat().st_size / 1e6:.0f} MB file ({text_size / 1e6:.0f} MB of text), "
              f"{n} units read in {secs:.1f} s; peak RSS +{extra / 1e6:.0f} MB = {extra / text_size:.2f}x the text "
              f"({verdict} the 3x goal); baseline read+split +{b_extra / 1e6:.0f} MB = {b_extra / text_size:.2f}x, "
              f"{b_secs:.1f} s")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gfx-mb", type=float, default=8)
    ap.add_argument("--big-mb", type=float, default=200)
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--skip-report", action="store_true")
    args = ap.parse_args()
    corpus = corpus_root()
    if corpus is None:
        raise SystemExit("the corpus is needed (../shared/corpus or $DROIDLAG_CORPUS)")
    with tempfile.TemporaryDirectory(prefix="droidlag-bench-") as tmp:
        if not args.skip_report:
            bench_report(corpus, args.gfx_mb, Path(tmp))
        if not args.skip_memory:
            bench_memory(corpus, args.big_mb, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
