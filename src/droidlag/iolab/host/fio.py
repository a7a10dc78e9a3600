"""Running fio jobs and reading their JSON: a foreground reader alone, and beside background writers."""
from __future__ import annotations

import json
import shutil
import subprocess


def fio_path() -> str | None:
    return shutil.which("fio")


def _job(name: str, opts: dict) -> str:
    return f"[{name}]\n" + "".join(f"{k}={v}\n" for k, v in opts.items() if v is not None)


def run_fio(jobfile_text: str, jobfile_path: str, timeout_s: float) -> dict:
    with open(jobfile_path, "w") as f:
        f.write(jobfile_text)
    p = subprocess.run([fio_path(), "--output-format=json", jobfile_path], capture_output=True, text=True,
                       timeout=timeout_s)
    if p.returncode != 0:
        msg = [ln.strip() for ln in (p.stderr or "").splitlines() if ln.strip() and ln.strip() not in "{}"]
        raise RuntimeError("fio: " + (msg[0] if msg else f"exit {p.returncode}"))
    out = p.stdout
    return json.loads(out[out.index("{"):])


def reader_writer_jobs(target: str, runtime_s: int, with_writers: bool, reader_prio: tuple | None = None,
                       writer_prio: tuple | None = None, direct_reader: bool = True, n_writers: int = 2,
                       cgroups: tuple | None = None, target_is_file_size: str | None = None) -> str:
    """A random 4 KB reader (an app launch) over the first half of `target`, and `n_writers` buffered
    sequential writers with fsync every 32 MB (app update) over the second half."""
    g = {"filename": target, "time_based": 1, "runtime": runtime_s, "ioengine": "psync", "group_reporting": 0}
    if target_is_file_size:
        g["size"] = target_is_file_size
    text = _job("global", g)
    rd = {"rw": "randread", "bs": "4k", "direct": 1 if direct_reader else 0, "offset": "0", "size": "50%",
          "invalidate": 1}
    if reader_prio:
        rd["prioclass"], rd["prio"] = reader_prio
    if cgroups:
        rd["cgroup"], rd["cgroup_weight"] = cgroups[0]
    text += _job("fg-reader", rd)
    if with_writers:
        for i in range(n_writers):
            w = {"rw": "write", "bs": "1M", "direct": 0, "offset": f"{50 + i * 25 // max(1, n_writers)}%",
                 "size": f"{25 // max(1, n_writers)}%", "fsync": 32, "new_group": 1 if i == 0 else None}
            if writer_prio:
                w["prioclass"], w["prio"] = writer_prio
            if cgroups:
                w["cgroup"], w["cgroup_weight"] = cgroups[1]
            text += _job(f"bg-writer-{i}", w)
    return text


def job_stats(res: dict) -> dict:
    """Reader latency (ms) and writer throughput (MB/s) from fio's JSON."""
    out = {"reader": None, "writers_mb_s": 0.0}
    for j in res.get("jobs", []):
        if j["jobname"] == "fg-reader":
            r = j["read"]
            clat = r.get("clat_ns") or r.get("lat_ns") or {}
            pct = clat.get("percentile", {})
            out["reader"] = {"iops": r.get("iops", 0.0), "mean_ms": clat.get("mean", 0.0) / 1e6,
                             "p99_ms": float(pct.get("99.000000", 0)) / 1e6, "ios": r.get("total_ios", 0)}
        elif j["jobname"].startswith("bg-writer"):
            out["writers_mb_s"] += j["write"].get("bw_bytes", 0) / 1e6
    return out
