"""The code checks `make test` runs: the import contract (layers point one way), ruff, and mypy on the packages
that are clean (the list grows as packages are typed; the goal is all of droidlag). Each fails on a
violation with the tool's own report, so a red run says where."""
from __future__ import annotations

import functools
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    exe = BIN / name
    if exe.exists():
        return str(exe)
    found = shutil.which(name)
    if not found:
        pytest.fail(f"{name} is not installed: `pip install -e '.[test]'` installs it")
    return found


def test_import_contract_keeps_layers_one_way():
    r = subprocess.run([_tool("lint-imports")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_ruff_finds_nothing():
    r = subprocess.run([_tool("ruff"), "check", "src", "tests", "benchmarks"], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


# mypy runs once over the whole package with pyproject.toml's configuration: strict on droidlag.models, .io, .frames
# and .hangs (the `[[tool.mypy.overrides]]`), the defaults elsewhere.
# Every file of those four packages: a new file there must pass strict and be listed here.
STRICT_CLEAN = [
    "models/__init__.py", "models/causes.py", "models/columns.py", "models/dumps.py", "models/gc.py",
    "models/gfxinfo.py", "models/lbo.py", "models/thread_states.py", "models/trace.py", "models/trace_builder.py",
    "models/ui.py",
    "io/__init__.py", "io/android_res.py", "io/anr.py", "io/anr_paste.py", "io/archive.py", "io/art_gc_log.py",
    "io/budget.py", "io/gfxinfo.py",
    "io/bugreport.py", "io/detect.py", "io/device_meta.py", "io/dump_units.py", "io/frames_input.py",
    "io/ftrace_text.py", "io/inputs.py", "io/lbo.py", "io/perfetto.py",
    "io/perfetto_ftrace.py", "io/source.py", "io/systrace.py", "io/systrace_html.py",
    "io/tempfiles.py", "io/view_hierarchy.py", "io/xml_safe.py",
    "frames/__init__.py", "frames/analyze.py", "frames/block_io.py", "frames/causes.py", "frames/compositor.py",
    "frames/config.py", "frames/critical_path.py", "frames/frametimeline.py", "frames/pacing.py",
    "frames/placement.py", "frames/refresh.py", "frames/results.py", "frames/rollups.py", "frames/segment.py",
    "frames/summary.py", "frames/verdicts.py",
    "hangs/__init__.py", "hangs/analyze.py", "hangs/causes.py", "hangs/cluster.py", "hangs/config.py",
    "hangs/features.py", "hangs/normalize.py", "hangs/similarity.py", "hangs/waitfor.py",
]
STRICT_PACKAGES = ["models", "io", "frames", "hangs"]
# Packages outside the strict four that pass mypy at the defaults.
MYPY_CLEAN = ["__init__.py", "errors.py", "cli", "collect", "findings", "fleet", "gc", "iolab", "report", "ui"]

_ERROR = re.compile(r"^src/droidlag/(\S+?\.py):\d+: error:", re.M)


@functools.cache
def _mypy_whole_package() -> tuple[int, str, dict[str, int]]:
    """(exit code, output, errors per file relative to src/droidlag) of `mypy` with the project's configuration."""
    r = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode in (0, 1) and re.search(r"^(Success: no issues|Found \d+ errors?) ", r.stdout, re.M), \
        f"mypy did not run: {r.stdout[-2000:]}{r.stderr[-2000:]}"
    return r.returncode, r.stdout, dict(Counter(_ERROR.findall(r.stdout)))


def _lines_of(out: str, files: list[str]) -> str:
    return "\n".join(ln for ln in out.splitlines() if any(ln.startswith(f"src/droidlag/{f}:") for f in files))[-4000:]


def test_mypy_strict_files_stay_clean():
    _, out, errors = _mypy_whole_package()
    missing = [f for f in STRICT_CLEAN if not (ROOT / "src/droidlag" / f).is_file()]
    assert not missing, f"STRICT_CLEAN names files that do not exist: {missing}"
    assert all(f.split("/")[0] in STRICT_PACKAGES for f in STRICT_CLEAN)
    dirty = [f for f in STRICT_CLEAN if errors.get(f)]
    assert not dirty, _lines_of(out, dirty)


def test_mypy_default_packages_stay_clean():
    _, out, errors = _mypy_whole_package()
    dirty = sorted(f for f in errors if any(f == p or f.startswith(p.rstrip("/") + "/") for p in MYPY_CLEAN))
    assert not dirty, _lines_of(out, dirty)


# Modules outside the four strict packages that their owners hold to `mypy --strict` too (issue 17: the findings
# code and the JSON serialisers).
MYPY_STRICT_EXTRA = ["droidlag.findings", "droidlag.report.frames_json", "droidlag.report.findings_json"]


def test_mypy_strict_extra_modules():
    args = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent"]
    for pkg in MYPY_STRICT_EXTRA:
        args += ["-p", pkg]
    r = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_mypy_strict_override_is_in_effect(tmp_path: Path):
    """The strict flags reach the four packages and only them: an unannotated function is an error in
    droidlag.models and not in droidlag.report (so a broken override cannot pass the tests above vacuously)."""
    for pkg in ("droidlag", "droidlag/models", "droidlag/report"):
        (tmp_path / pkg).mkdir(exist_ok=True)
        (tmp_path / pkg / "__init__.py").write_text("")
    code = "def f(x):\n    return x\n"
    (tmp_path / "droidlag/models/probe.py").write_text(code)
    (tmp_path / "droidlag/report/probe.py").write_text(code)
    r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--no-incremental",
                        "droidlag/models/probe.py", "droidlag/report/probe.py"], cwd=tmp_path, capture_output=True,
                       text=True)
    assert re.search(r"^droidlag/models/probe\.py:1: error: .*\[no-untyped-def\]", r.stdout, re.M), r.stdout
    assert "droidlag/report/probe.py" not in r.stdout, r.stdout


def test_mypy_whole_package_is_clean():
    """The goal, reached: `mypy` passes on all of droidlag, strict on every file of the four strict packages (a new
    file there must be strict-clean and listed in STRICT_CLEAN)."""
    rc, out, _errors = _mypy_whole_package()
    base = ROOT / "src/droidlag"
    left = sorted(str(p.relative_to(base)) for pkg in STRICT_PACKAGES for p in (base / pkg).rglob("*.py")
                  if str(p.relative_to(base)) not in STRICT_CLEAN)
    assert not left, f"files of the strict packages not in STRICT_CLEAN: {left}"
    assert rc == 0, out[-4000:]


def test_one_version_source(monkeypatch):
    """pyproject.toml holds the version; droidlag.__version__ reads it (installed metadata, or the file itself from
    a source tree that is not installed) and no module writes a version of its own."""
    import importlib.metadata
    import tomllib

    import droidlag
    with open(ROOT / "pyproject.toml", "rb") as f:
        declared = tomllib.load(f)["project"]["version"]
    assert droidlag.__version__ == declared
    assert not re.search(r"^__version__\s*=\s*['\"]", (ROOT / "src/droidlag/__init__.py").read_text(), re.M)

    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)
    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert droidlag._version() == declared
