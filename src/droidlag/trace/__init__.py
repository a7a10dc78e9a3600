"""The Trace model and the builder every trace reader fills."""
from droidlag.trace.builder import TraceBuilder, guess_cpu_classes
from droidlag.trace.model import Process, Thread, Trace

__all__ = ["Trace", "Process", "Thread", "TraceBuilder", "guess_cpu_classes"]
