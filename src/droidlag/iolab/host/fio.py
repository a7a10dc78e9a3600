"""Running fio jobs and reading their JSON: a foreground reader alone, and beside background writers."""
from __future__ import annotations

import json
import shutil
import subprocess


def fio_path() -> str | None:
    return shutil.which("fio")


def _fio() -> str:
    """fio's path; callers check `fio_path()` before they run anything."""
    path = fio_path()
    if path is None:
        raise RuntimeError("fio is not installed (apt-get install fio)")
    return path


def _job(name: str, opts: dict) -> str:
    return f"[{name}]\n" + "".join(f"{k}={v}\n" for k, v in opts.items() if v is not None)


def fio_error(stdout: str, stderr: str, returncode: int) -> str:
    """A one-line reason from a failed fio run. fio prints its job errors as 'fio: pid=N, err=13/file:cgroup.c:136,
    func=cgroup open weight, error=Permission denied' on stdout (before the JSON), option errors on stderr, and
    the errno again in each job's "error" field."""
    lines = [ln.strip() for ln in ((stderr or "") + "\n" + (stdout or "")).splitlines()]
    msgs = [ln for ln in lines if ln.startswith("fio:") or "error" in ln.lower() and not ln.startswith('"')]
    if msgs:
        return msgs[0] if msgs[0].startswith("fio") else "fio: " + msgs[0]
    for ln in lines:
        if ln and ln not in "{}[]":
            return "fio: " + ln
    return f"fio: exit {returncode}"


def parse_fio_json(stdout: str) -> dict:
    if "{" not in stdout:
        raise RuntimeError("fio: no JSON output")
    return json.loads(stdout[stdout.index("{"):])


def check_job_errors(res: dict) -> None:
    bad = [(j.get("jobname"), j.get("error")) for j in res.get("jobs", []) if j.get("error")]
    if bad:
        import os
        raise RuntimeError("fio: job " + ", ".join(f"{n} failed: {os.strerror(e)} (errno {e})" for n, e in bad))


def run_fio(jobfile_text: str, jobfile_path: str, timeout_s: float) -> dict:
    with open(jobfile_path, "w") as f:
        f.write(jobfile_text)
    p = subprocess.run([_fio(), "--output-format=json", jobfile_path], capture_output=True, text=True,
                       timeout=timeout_s)
    if p.returncode != 0:
        raise RuntimeError(fio_error(p.stdout, p.stderr, p.returncode))
    res = parse_fio_json(p.stdout)
    check_job_errors(res)
    return res


def reader_writer_jobs(target: str, runtime_s: int, with_writers: bool, reader_prio: tuple | None = None,
                       writer_prio: tuple | None = None, direct_reader: bool = True, n_writers: int = 2,
                       target_is_file_size: str | None = None, with_reader: bool = True) -> str:
    """A random 4 KB reader (an app launch) over the first half of `target`, and `n_writers` buffered
    sequential writers with fsync every 32 MB (app update) over the second half. `with_reader=False` gives the
    writers alone (the cgroup experiment runs reader and writers as two fio processes, one per cgroup)."""
    g = {"filename": target, "time_based": 1, "runtime": runtime_s, "ioengine": "psync", "group_reporting": 0}
    if target_is_file_size:
        g["size"] = target_is_file_size
    text = _job("global", g)
    if with_reader:
        rd = {"rw": "randread", "bs": "4k", "direct": 1 if direct_reader else 0, "offset": "0", "size": "50%",
              "invalidate": 1}
        if reader_prio:
            rd["prioclass"], rd["prio"] = reader_prio
        text += _job("fg-reader", rd)
    if with_writers:
        for i in range(n_writers):
            w = {"rw": "write", "bs": "1M", "direct": 0, "offset": f"{50 + i * 25 // max(1, n_writers)}%",
                 "size": f"{25 // max(1, n_writers)}%", "fsync": 32,
                 "new_group": 1 if i == 0 and with_reader else None}
            if writer_prio:
                w["prioclass"], w["prio"] = writer_prio
            text += _job(f"bg-writer-{i}", w)
    return text


def job_stats(res: dict) -> dict:
    """Reader latency (ms) and writer throughput (MB/s) from fio's JSON."""
    out: dict = {"reader": None, "writers_mb_s": 0.0}
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


def start_fio(jobfile_text: str, jobfile_path: str, procs_file: str | None = None) -> subprocess.Popen:
    """Start fio in the background; with `procs_file`, a shell first moves itself into that cgroup
    (writes its pid to the file) and then becomes fio, so fio and every job it forks run in the group."""
    with open(jobfile_path, "w") as f:
        f.write(jobfile_text)
    cmd = [_fio(), "--output-format=json", jobfile_path]
    if procs_file:
        cmd = ["sh", "-c", 'echo $$ > "$0" || exit 97; exec "$@"', procs_file] + cmd
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_fio(p: subprocess.Popen, timeout_s: float) -> dict:
    try:
        out, err = p.communicate(timeout=timeout_s)
    except BaseException:
        p.kill()
        p.wait()
        raise
    if p.returncode == 97:
        raise RuntimeError("could not move fio into its cgroup: " + (err.strip().splitlines() or ["?"])[-1])
    if p.returncode != 0:
        raise RuntimeError(fio_error(out, err, p.returncode))
    res = parse_fio_json(out)
    check_job_errors(res)
    return res
