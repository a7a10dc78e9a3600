"""droidlag: find and explain Android jank, ANRs and SNRs. The notebook API, re-exported from the parts."""
__version__ = "0.1.0"

from pathlib import Path  # noqa: E402

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
