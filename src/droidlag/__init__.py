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


__all__ = ["analyze", "read_trace", "Trace", "InputError", "ReadWarning", "__version__"]
