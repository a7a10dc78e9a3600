"""The run's temporary folder (archive entries extracted there), removed on every exit path Python sees (normal end,
error, Ctrl-C, SIGTERM turned into SystemExit by the CLI); what a kill -9 leaves behind is removed by the next run.

A run's folder is `droidlag-<random>` in the system temp folder and holds `owner.pid`; at start, folders of ours
whose process is gone are removed."""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

PREFIX = "droidlag-"
# Exactly what mkdtemp(prefix=PREFIX) names: other droidlag folders (droidlag-iolab-..., droidlag-perf-...) are
# never touched.
_RUN_DIR = re.compile(r"^droidlag-[a-z0-9_]{8}$")
PID_FILE = "owner.pid"
# A folder of ours without a pid file (being created, or from a version before pid files) is left this long.
ORPHAN_AGE_S = 3600


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def remove_stale(base: Path | None = None) -> list[Path]:
    """Remove run folders left by droidlag processes that no longer exist (kill -9, power loss); returns them."""
    base = Path(base or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        candidates = [p for p in base.iterdir() if _RUN_DIR.match(p.name)]
    except OSError:
        return removed
    for d in candidates:
        try:
            st = d.lstat()
            if not d.is_dir() or d.is_symlink() or st.st_uid != os.getuid():
                continue
            try:
                pid = int((d / PID_FILE).read_text().strip())
                stale = pid != os.getpid() and not _alive(pid)
            except (OSError, ValueError):
                stale = time.time() - st.st_mtime > ORPHAN_AGE_S
            if stale:
                shutil.rmtree(d, ignore_errors=True)
                removed.append(d)
        except OSError:
            continue
    return removed


@contextlib.contextmanager
def run_temp_dir(base: Path | None = None) -> Iterator[Path]:
    """A fresh folder for this run, after removing stale ones; removed when the block exits, however it exits."""
    remove_stale(base)
    d = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))
    try:
        (d / PID_FILE).write_text(str(os.getpid()))
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)
