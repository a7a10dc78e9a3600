"""Models: the format-free view of what the readers read, and nothing above it. A `Trace` (with the builder every
trace reader fills), thread `Dumps` (processes, threads, frames, locks) and a `GfxinfoDump`. Imports only
`droidlag.errors` and libraries."""
from droidlag.models.trace import Process, Thread, Trace
from droidlag.models.trace_builder import TraceBuilder, guess_cpu_classes

__all__ = ["Trace", "Process", "Thread", "TraceBuilder", "guess_cpu_classes"]
