"""The write-amplification (WAM) experiment on the real kernel (wam.md, iosim.md "The host lab").

For each mode an ext4 filesystem is made on a loop device the lab creates over a sparse image in its own
scratch directory, and mounted (a) with `-o discard` (real-time WAM, Android's default) or (b) without
(`nodiscard`, lazy/batched WAM). A background task fills `size_mb` of files, syncs them and deletes them
(`rounds` times), while a foreground process appends 4 KB records with fsync in a loop, like SQLite commits,
and records each fsync's latency. In mode (b) `fstrim` then trims the free space in one batch, and is timed.
fsync waits for the journal commit, and with `discard` the commit issues (and waits for) the discards of the
extents freed in it: the stall the paper blames for ANRs.

Everything is removed afterwards (unmount, detach, delete), also on Ctrl-C/SIGTERM.
"""
from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from droidlag.iolab.host.loop import Loop, detach_leftovers, fs_type, interruptible, mounts_under, proc_mounts, shielded

DEFAULT_THRESHOLDS_MS = (10, 50, 100, 500, 5000)
NOTE_WAM = ("WAM experiment: on a loop device over a file, a discard becomes hole punching in the backing image "
            "on the host filesystem, so these numbers show the trend (fsync waiting for discards issued at "
            "journal commit vs. one batched fstrim), not flash behaviour: no FTL, no garbage collection, no "
            "write amplification. 5000 ms is the ANR threshold of an app's main thread.")
MODES = {"discard": "discard", "nodiscard+fstrim": "nodiscard"}


# ----------------------------------------------------------------------------------------------- summaries

def percentile(sorted_vals: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of an already sorted list."""
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, int(-(-q * len(sorted_vals) // 100)) - 1))
    return sorted_vals[k]


def summarize_latencies(lat_ms: list[float], thresholds_ms=DEFAULT_THRESHOLDS_MS) -> dict:
    """p50/p99/max/mean and the number of stalls over each threshold (ms)."""
    s = sorted(lat_ms)
    return {"n": len(s), "p50_ms": percentile(s, 50), "p99_ms": percentile(s, 99),
            "max_ms": s[-1] if s else None, "mean_ms": sum(s) / len(s) if s else None,
            "stalls": {f">{t:g}ms": sum(1 for v in s if v > t) for t in thresholds_ms}}


def by_phase(samples: list[tuple[float, float]], phases: list[tuple[str, float, float]],
             thresholds_ms=DEFAULT_THRESHOLDS_MS) -> dict:
    """Split (start time, latency) samples by the background phase running when each fsync started."""
    groups: dict[str, list[float]] = {}
    for t, ms in samples:
        name = next((n for n, a, b in phases if a <= t < b), None)
        if name is not None:
            groups.setdefault(name, []).append(ms)
    return {n: summarize_latencies(v, thresholds_ms) for n, v in groups.items()}


def parse_fstrim(text: str) -> int | None:
    """Bytes trimmed from `fstrim -v` output ('/mnt: 1.2 GiB (1288490188 bytes) trimmed')."""
    import re
    m = re.search(r"\((\d+) bytes\) trimmed", text)
    if m:
        return int(m.group(1))
    m = re.search(r":\s*(\d+) bytes (?:were )?trimmed", text)
    return int(m.group(1)) if m else None


# ------------------------------------------------------------------------------ foreground fsync process

def _fsync_loop_main(argv: list[str]) -> None:
    """Child process: append `record_kb` records with fsync to `path` until `stop_file` exists or
    `max_s` passes; print JSON [[monotonic start, fsync ms, write ms], ...]."""
    path, stop_file, max_s, record_kb, interval_ms = argv[0], argv[1], float(argv[2]), int(argv[3]), float(argv[4])
    rec = os.urandom(record_kb * 1024)
    wrap = 8 * 1024 * 1024
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    out = []
    end = time.monotonic() + max_s
    off = 0
    try:
        while time.monotonic() < end and not os.path.exists(stop_file):
            t0 = time.monotonic()
            os.pwrite(fd, rec, off)
            t1 = time.monotonic()
            os.fsync(fd)
            t2 = time.monotonic()
            out.append([t1, (t2 - t1) * 1e3, (t1 - t0) * 1e3])
            off = (off + len(rec)) % wrap
            if interval_ms > 0:
                time.sleep(interval_ms / 1e3)
    finally:
        os.close(fd)
    sys.stdout.write(json.dumps(out))


def _start_fsync_loop(path: Path, stop_file: Path, max_s: float, record_kb: int, interval_ms: float):
    pkg_parent = str(Path(__file__).resolve().parents[3])
    env = dict(os.environ)
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    code = "import sys; from droidlag.iolab.host.wam import _fsync_loop_main as m; m(sys.argv[1:])"
    return subprocess.Popen([sys.executable, "-c", code, str(path), str(stop_file), str(max_s), str(record_kb),
                             str(interval_ms)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


# --------------------------------------------------------------------------------------- background work

def _syncfs(dirpath: Path) -> None:
    fd = os.open(dirpath, os.O_RDONLY)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.syncfs(fd) != 0:
            os.sync()
    except (OSError, AttributeError):
        os.sync()
    finally:
        os.close(fd)


def _fill(d: Path, total_mb: int, file_mb: int, chunk: bytes) -> int:
    d.mkdir(exist_ok=True)
    written = 0
    i = 0
    while written < total_mb:
        n = min(file_mb, total_mb - written)
        fd = os.open(d / f"f{i:05d}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            for _ in range(n):
                os.write(fd, chunk)
        finally:
            os.close(fd)
        written += n
        i += 1
    _syncfs(d)  # the blocks are allocated and on the device before they are deleted
    return written


def _delete(d: Path) -> int:
    n = 0
    for f in d.iterdir():
        f.unlink()
        n += 1
    return n


def _allocated_mb(p: Path) -> float:
    return os.stat(p).st_blocks * 512 / 2**20


def _mounted_at(mnt: Path) -> str | None:
    """The device mounted at mnt (escapes in /proc/mounts decoded), or None."""
    for dev, point, _typ, _opts in proc_mounts():
        if point == str(mnt):
            return dev
    return None


# ------------------------------------------------------------------------------------------ one mode

def _run_mode(scratch: Path, mode: str, size_mb: int, rounds: int, file_mb: int, record_kb: int,
              interval_ms: float, idle_s: float, settle_s: float, thresholds_ms) -> dict:
    opt = MODES[mode]
    image = scratch / f"wam-{opt}.img"
    image_mb = 2 * size_mb + 128
    with open(image, "wb") as f:
        f.truncate(image_mb * 2**20)  # sparse
    mnt = scratch / f"mnt-{opt}"
    mnt.mkdir()
    loop: Loop | None = None
    fg = None
    mounted = False
    out: dict = {"mode": mode, "mount_options": opt, "image_mb": image_mb}
    try:
        loop = Loop(image)
        loop.ensure_ours()
        out.update(device=loop.dev, loop_direct_io=loop.direct_io(), loop_discard_max_bytes=loop.discard_max_bytes())
        p = subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0",
                            loop.dev], capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            raise RuntimeError("mkfs.ext4: " + (p.stderr.strip() or f"exit {p.returncode}"))
        p = subprocess.run(["mount", "-t", "ext4", "-o", opt, loop.dev, str(mnt)], capture_output=True, text=True,
                           timeout=60)
        if p.returncode != 0:
            raise RuntimeError("mount: " + (p.stderr.strip() or f"exit {p.returncode}"))
        mounted = True
        if _mounted_at(mnt) != loop.dev:
            raise RuntimeError(f"{mnt} is not mounted from {loop.dev} after mount")
        opts = next((ln.split()[3] for ln in Path("/proc/mounts").read_text().splitlines()
                     if ln.split()[1] == str(mnt)), "")
        out["mounted_with"] = opts
        chunk = os.urandom(2**20)
        stop = scratch / f"stop-{opt}"
        max_s = 120 + rounds * (idle_s + settle_s + size_mb / 5.0)  # a hard bound whatever happens
        fg = _start_fsync_loop(mnt / "journal.db", stop, max_s, record_kb, interval_ms)
        t_idle = time.monotonic()
        while not (mnt / "journal.db").exists() and time.monotonic() - t_idle < 30 and fg.poll() is None:
            time.sleep(0.01)
        t_idle = time.monotonic()
        time.sleep(idle_s)
        phases = [("idle", t_idle, time.monotonic())]
        fill_s = delete_s = 0.0
        filled = deleted = 0
        alloc: dict = {}
        for _r in range(rounds):
            t0 = time.monotonic()
            filled += _fill(mnt / "bg", size_mb, file_mb, chunk)
            t1 = time.monotonic()
            alloc.setdefault("after_fill", round(_allocated_mb(image), 1))
            deleted += _delete(mnt / "bg")
            t2 = time.monotonic()
            time.sleep(settle_s)  # the next commits (forced by the foreground's fsyncs) carry the frees
            t3 = time.monotonic()
            phases += [("fill", t0, t1), ("delete", t1, t3)]
            fill_s += t1 - t0
            delete_s += t2 - t1
        stop.touch()
        fout, ferr = fg.communicate(timeout=60)
        if fg.returncode != 0:
            raise RuntimeError("foreground fsync loop: " + (ferr.strip().splitlines() or ["?"])[-1])
        fg = None
        samples = json.loads(fout)
        lat = [s[1] for s in samples]
        alloc["after_delete"] = round(_allocated_mb(image), 1)
        out.update(fsync=summarize_latencies(lat, thresholds_ms),
                   fsync_by_phase=by_phase([(s[0], s[1]) for s in samples], phases, thresholds_ms),
                   filled_mb=filled, files_deleted=deleted, fill_mb_s=filled / fill_s if fill_s else None,
                   unlink_s=delete_s, fstrim=None)
        if opt == "nodiscard":
            t0 = time.monotonic()
            p = subprocess.run(["fstrim", "-v", str(mnt)], capture_output=True, text=True, timeout=600)
            secs = time.monotonic() - t0
            if p.returncode != 0:
                out["fstrim"] = {"error": (p.stderr.strip() or f"exit {p.returncode}")[:200]}
            else:
                out["fstrim"] = {"seconds": secs, "bytes": parse_fstrim(p.stdout + p.stderr)}
            alloc["after_fstrim"] = round(_allocated_mb(image), 1)
        out["image_allocated_mb"] = alloc
        return out
    finally:
        with shielded():
            if fg is not None:
                fg.kill()
                fg.wait()
            if mounted and loop is not None:
                for attempt in range(3):
                    if _mounted_at(mnt) != loop.dev:
                        break
                    # last resort: a lazy unmount, so nothing below ever deletes files inside the mount
                    try:
                        subprocess.run(["umount"] + (["-l"] if attempt == 2 else []) + [str(mnt)],
                                       capture_output=True, timeout=120)
                    except subprocess.TimeoutExpired:
                        continue   # the next attempt (finally lazy) still runs, and the loop is detached below
                    time.sleep(0.5 if attempt < 2 and _mounted_at(mnt) == loop.dev else 0)
            if loop is not None:
                loop.close()
            else:
                detach_leftovers(image)


def run_wam_lab(size_mb: int = 256, rounds: int = 2, scratch_parent: str | None = None,
                modes: list[str] | None = None, file_mb: int = 1, record_kb: int = 4, interval_ms: float = 2.0,
                idle_s: float = 1.0, settle_s: float = 1.5, thresholds_ms=DEFAULT_THRESHOLDS_MS) -> dict:
    """Run the WAM experiment in each mode ('discard', 'nodiscard+fstrim'); returns
    {'modes': [...], 'skipped': [...], 'notes': [...]} with fsync latency summaries, and fstrim's time."""
    res: dict = {"experiment": "wam", "size_mb": size_mb, "rounds": rounds, "record_kb": record_kb,
                 "thresholds_ms": list(thresholds_ms), "modes": [], "skipped": [], "notes": [NOTE_WAM]}
    missing = [t for t in ("losetup", "mkfs.ext4", "mount", "umount", "fstrim") if shutil.which(t) is None]
    reason = None
    if os.geteuid() != 0:
        reason = "needs root (loop device, mkfs, mount)"
    elif missing:
        reason = "missing tools: " + ", ".join(missing)
    elif not os.path.exists("/dev/loop-control"):
        reason = "no /dev/loop-control (loop devices unavailable)"
    elif size_mb < 1 or rounds < 1:
        reason = "size_mb and rounds must be at least 1"
    if reason is None:
        parent = scratch_parent or tempfile.gettempdir()
        st = os.statvfs(parent)
        need = 2 * size_mb + 256
        if st.f_bavail * st.f_frsize / 2**20 < need:
            reason = f"not enough free space in {parent} ({need} MB needed)"
    if reason:
        res["skipped"].append({"experiment": "wam (ext4 discard vs fstrim)", "reason": reason})
        return res
    scratch = Path(tempfile.mkdtemp(prefix="droidlag-wam-", dir=scratch_parent))
    res["scratch"], res["scratch_fs"] = str(scratch), fs_type(scratch)
    try:
        with interruptible():
            for mode in modes or list(MODES):
                if mode not in MODES:
                    res["skipped"].append({"experiment": f"wam {mode}", "reason": f"unknown mode; use {list(MODES)}"})
                    continue
                try:
                    res["modes"].append(_run_mode(scratch, mode, size_mb, rounds, file_mb, record_kb, interval_ms,
                                                  idle_s, settle_s, thresholds_ms))
                except (RuntimeError, OSError, subprocess.SubprocessError, ValueError) as e:
                    res["skipped"].append({"experiment": f"wam {mode}", "reason": str(e)[:300]})
    finally:
        with shielded():
            if not mounts_under(scratch):   # never delete into a mount that is still there
                shutil.rmtree(scratch, ignore_errors=True)
            else:
                res["skipped"].append({"experiment": "wam cleanup", "reason": f"{scratch} still holds a mount: left"})
    return res


def _f(v, fmt="{:.2f}") -> str:
    return "-" if v is None else fmt.format(v)


def format_wam(res: dict) -> str:
    lines = [f"WAM on the real kernel: ext4 on a loop device, {res['size_mb']} MB filled+deleted x{res['rounds']} "
             f"while a foreground task appends {res.get('record_kb', 4)} KB + fsync in a loop"]
    thr = [f">{t:g}ms" for t in res.get("thresholds_ms", [])]
    if res["modes"]:
        lines.append(f"  {'mode':<18}{'fsyncs':>7}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
                     + "".join(f"{t:>9}" for t in thr) + f"{'fill MB/s':>11}{'fstrim s':>10}")
    for m in res["modes"]:
        f = m["fsync"]
        st = "".join(f"{f['stalls'].get(t, 0):>9}" for t in thr)
        ft = m.get("fstrim") or {}
        lines.append(f"  {m['mode']:<18}{f['n']:>7}{_f(f['p50_ms']):>9}{_f(f['p99_ms']):>9}{_f(f['max_ms']):>9}"
                     f"{st}{_f(m.get('fill_mb_s'), '{:.0f}'):>11}{_f(ft.get('seconds'), '{:.3f}'):>10}")
    if res["modes"]:
        lines.append("  (columns >N ms: fsyncs that took longer than N ms, i.e. stalls)")
    for m in res["modes"]:
        ph = m.get("fsync_by_phase", {})
        parts = [f"{n}: p99 {_f(s['p99_ms'])} max {_f(s['max_ms'])} ms (n={s['n']})" for n, s in ph.items()]
        lines.append(f"  {m['mode']:<18}by phase  " + "; ".join(parts))
        a = m.get("image_allocated_mb", {})
        extra = ""
        if m.get("fstrim"):
            ft = m["fstrim"]
            extra = (f"; fstrim error: {ft['error']}" if "error" in ft else
                     f"; fstrim trimmed {_f((ft.get('bytes') or 0) / 2**20, '{:.0f}')} MB in {ft['seconds']:.3f} s")
        lines.append(f"  {'':<18}image allocated MB: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in a.items())
                     + f" (device {m.get('device')}, mounted {m.get('mounted_with', '?')}){extra}")
    for s in res["skipped"]:
        lines.append(f"  skipped {s['experiment']}: {s['reason']}")
    for n in res["notes"]:
        lines.append(f"  note: {n}")
    return "\n".join(lines)
