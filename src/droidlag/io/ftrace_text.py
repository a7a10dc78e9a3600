"""ftrace text lines (`TASK-TID (TGID) [CPU] FLAGS TS: event: args`) into the TraceBuilder, through the native
parser (`droidlag._native.FtraceText`, native/src/ftrace_text.rs), which splits the lines and parses each event's
arguments into columns. This module hands the columns to the builder and turns the parser's counts into warnings.
Container formats (HTML, zlib, JS strings) are undone before this module sees the text.
"""
from __future__ import annotations

from droidlag._native import FtraceText
from droidlag.models.trace_builder import TraceBuilder

MAX_DETAILED_WARNINGS = 5    # malformed lines warned one by one; the rest are counted (the native parser's cap too)


class FtraceTextParser:
    """Feeds ftrace text sections into a TraceBuilder; keeps counts for the reader's metadata and warnings.

    Events handled: sched_switch, sched_waking/sched_wakeup(_new), sched_blocked_reason, tracing_mark_write and
    `print` (atrace payloads; the 2012 kernels' `0:` too), cpu_frequency, cpu_idle, binder_transaction(_received),
    block_rq_issue/complete, task_rename, task_newtask, sched_process_exit; other events are counted by name.
    `skip_wakeup`: ignore sched_wakeup because the trace also has sched_waking (the earlier, better-placed event)."""

    def __init__(self, builder: TraceBuilder, skip_wakeup: bool = False):
        self.b = builder
        self._native = FtraceText(skip_wakeup)
        self.events = 0                        # lines that parsed as ftrace events
        self.unhandled: dict[str, int] = {}    # event name -> lines ignored
        self.malformed = 0
        self.lost_events = 0
        self.first_bad_line: int | None = None

    def parse(self, text: str, first_line: int | None = 1) -> None:
        """Parse every line of `text`; `first_line` is the file line of text's first line (None: no file lines,
        e.g. decompressed data, where warnings name the line of the decompressed text)."""
        self._native.parse(text, first_line or 1)
        self._apply_ops()

    def set_tgid(self, tid: int, tgid: int) -> None:
        """tid belongs to process tgid (TGID column, process or procfs dump, new thread)."""
        self._native.set_tgid(tid, tgid)
        self.b.thread(tid, pid=tgid)

    def set_tgids(self, pairs: list[tuple[int, int]]) -> None:
        """(tid, tgid) pairs for the text parser only, in order (the caller has declared the threads)."""
        self._native.set_tgids(pairs)

    def _apply_ops(self) -> None:
        """The thread and process declarations of the lines parsed so far (per thread, not per event), and the
        first malformed lines as warnings, in line order."""
        threads, processes, bad_lines = self._native.take_ops()
        b = self.b
        for tid, pid, name, overwrite in threads:
            b.thread(tid, pid, name, overwrite_name=overwrite)
        for pid in processes:
            b.process(pid)
        for line, text in bad_lines:
            b.warn(f"line skipped, not an ftrace event this reader understands: {text!r}", line=line)

    def finish(self) -> None:
        """Hand the columns to the builder, report the aggregated problems as warnings and widen the builder's time
        range to every event seen."""
        cols = self._native.finish()
        b = self.b
        self.events = cols["events"]
        self.unhandled = dict(cols["unhandled"])
        self.malformed = cols["malformed"]
        self.lost_events = cols["lost_events"]
        self.first_bad_line = cols["first_bad_line"]
        for key, value in cols["metadata"]:
            b.metadata[key] = value
        # switches, wakings and blocked reasons as one stream, in the thread-state pass's columns already
        b.sched_stream(cols["sched"], cols["states"].__getitem__, cols["blocked"])
        tx, rx = cols["binder_transaction"], cols["binder_transaction_received"]
        if len(tx[0]) or len(rx[0]):
            b.binder_many(tx, rx)
        b.block_many(cols["block_rq_issue"], cols["block_rq_complete"])
        b.adopt_slice_events(cols["slice_events"])
        lo, hi = cols["time_range"]
        if lo is not None:
            b.see_time(lo)
            b.see_time(hi)
        if self.malformed > MAX_DETAILED_WARNINGS:
            b.warn(f"{self.malformed - MAX_DETAILED_WARNINGS} more malformed line(s) skipped "
                   f"({self.malformed} in all)")
        self._warn_run_together(cols["run_together"])
        if self.lost_events:
            b.warn(f"ftrace reported {self.lost_events} lost event(s) (buffer overrun); states around them may be "
                   "wrong")

    def _warn_run_together(self, run_together: tuple[list[tuple[int, int]], int, int]) -> None:
        """Lines that held several events run together (a trace whose newlines were lost), split at each event
        head: one warning per line for the first ones, then a count."""
        lines, n_lines, n_events = run_together
        for line, events in lines:
            self.b.warn(f"{events} ftrace events run together on one line (newlines lost, e.g. a trace copied from a "
                        "web page): split at each event header `TASK-PID [CPU] ... TIMESTAMP: event:`; a task name "
                        "with spaces keeps only its last word", line=line)
        if n_lines > len(lines):
            self.b.warn(f"{n_lines - len(lines)} more line(s) held events run together and were split the same way "
                        f"({n_lines} line(s), {n_events} events in all)")

