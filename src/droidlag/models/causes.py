"""The one vocabulary of causes: every cause a frame or a hang can be given, by the name the analyses store
(`io`, `binder`, `storage_sync`, ...), with the words a sentence uses for it and, for frame causes, the short
label each cause's evidence carries. The frames and hangs analyses name causes from here; the findings' sentences
and the report's tables word them from here."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cause:
    """name: as stored in findings.json; words: in a sentence ("Probable cause: <words>"); label: the frames
    analysis's short label in the cause's evidence (None for hang causes); paper_class: the class of the paper's
    roll-up of slow frames (`ui_work`, `io_binder`, `scheduling`; `compositor`, ours), None for hang causes."""

    name: str
    words: str
    label: str | None = None
    paper_class: str | None = None


_ALL = (
    # frames (Lin et al., TMC 2023, II-A): the critical path's factors, the app's own work, the compositor
    Cause("binder", "binder calls", "binder transactions", "io_binder"),
    Cause("io", "I/O (uninterruptible sleep)", "I/O or uninterruptible sleep", "io_binder"),
    Cause("runnable", "waiting for a CPU (runnable)", "scheduling delay (runnable)", "scheduling"),
    Cause("sleeping", "the thread sleeping/idle", "sleeping (idle, waiting)", "scheduling"),
    Cause("little_saturated", "saturated LITTLE cores while big cores idle",
          "on saturated LITTLE cores while a big core idled", "scheduling"),
    Cause("cpu_placement", "running on a slower core or at low frequency while a faster core idled",
          "running on a slower core or at low frequency while a faster core idled", "scheduling"),
    Cause("gc", "garbage collection", "garbage collection", "ui_work"),
    Cause("app_work", "the app's own work", "the app's own work (slices below)", "ui_work"),
    Cause("surfaceflinger", "SurfaceFlinger (the compositor) running late", "SurfaceFlinger (the compositor) was late",
          "compositor"),
    # hangs (step 8): the root-cause classes of ANRs and SNRs
    Cause("storage_sync", "storage sync (fsync/discard)"),
    Cause("system_lock_contention", "system-service lock contention"),
    Cause("insufficient_memory", "insufficient memory"),
    Cause("slow_binder_peer", "a slow binder peer"),
    Cause("app_specific", "the app's own code (or a library it ships)"),
    Cause("unknown", "unknown"),   # no rule matched the stacks (said as the word itself)
)
CAUSES: dict[str, Cause] = {c.name: c for c in _ALL}

# gfxinfo frames have no system events: their cause is the stage that took the most time, named `stage:<stage>`.
STAGE_PREFIX = "stage:"
CAUSE_WORDS: dict[str, str] = {c.name: c.words for c in _ALL}
CAUSE_LABELS: dict[str, str] = {c.name: c.label for c in _ALL if c.label is not None}   # frame causes only
CAUSE_CLASSES: dict[str, str] = {c.name: c.paper_class for c in _ALL if c.paper_class is not None}
