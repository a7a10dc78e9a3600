"""droidlag: find and explain Android jank, ANRs and SNRs. The notebook API, re-exported from the parts."""
from droidlag.errors import InputError, ReadWarning
from droidlag.io import read_trace
from droidlag.trace import Trace

__version__ = "0.1.0"
__all__ = ["read_trace", "Trace", "InputError", "ReadWarning", "__version__"]
