"""droidlag: find and explain Android jank, ANRs and SNRs. The notebook API, re-exported from the parts."""

from pathlib import Path


def _version() -> str:
    """The version pyproject.toml declares, its one source: from the installed package's metadata, or read from
    pyproject.toml when droidlag runs from a source tree that is not installed."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("droidlag")
    except PackageNotFoundError:
        import tomllib
        try:
            with open(Path(__file__).resolve().parents[2] / "pyproject.toml", "rb") as f:
                return str(tomllib.load(f)["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "unknown"


__version__ = _version()   # set before the imports below: droidlag.findings reads it while they load

from droidlag.errors import InputError, ReadWarning  # noqa: E402
from droidlag.io import read_trace  # noqa: E402
from droidlag.models import Trace  # noqa: E402


def analyze(paths, progress=None):
    """Everything droidlag finds in the inputs (files, folders, archives): a `droidlag.findings.Findings`."""
    from droidlag.findings import analyze as _analyze
    return _analyze([paths] if isinstance(paths, (str, Path)) else list(paths), progress=progress)


def ui_layouts(app_dir, context=()):
    """Redundant UI layers in an app's layout files (`droidlag ui layouts`): a `droidlag.ui.LayoutReport`."""
    from droidlag.io.android_res import read_app
    from droidlag.ui import analyze_layouts
    res, _ = read_app([app_dir, *context], report_roots=1)
    return analyze_layouts(res)


def ui_hierarchy(path):
    """Overdraw and redundant layers in a runtime view dump (`droidlag ui hierarchy`): a
    `droidlag.ui.HierarchyReport` (its `draws` array is the per-pixel layer count)."""
    from droidlag.io.view_hierarchy import read_hierarchy
    from droidlag.ui import analyze_hierarchy
    return analyze_hierarchy(read_hierarchy(path)[0])


__all__ = ["analyze", "read_trace", "Trace", "InputError", "ReadWarning", "ui_layouts", "ui_hierarchy",
           "__version__"]
