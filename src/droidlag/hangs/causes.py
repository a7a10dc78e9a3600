"""Root-cause labels (ours: explicit rules over the critical threads, the chain and the header numbers), checked in
this order, each with the evidence that fired it:
storage_sync (WAM: fsync/SQLite commit/SharedPreferences write, ext4/f2fs/jbd2/discard kernel frames),
insufficient_memory (GC waits, reclaim/swap wait channels, low MemAvailable), system_lock_contention (the chain
goes through a monitor inside system_server), slow_binder_peer (the chain ends in a binder call), app_specific (the
rest, with the critical thread's top frames)."""
from __future__ import annotations

import re

from droidlag.models.dumps import ThreadDump

STORAGE = re.compile(
    r"FileDescriptor\.sync|\bfsync\b|fdatasync|FileChannelImpl\.force|SQLiteConnection\.nativeExecute|"
    r"SQLiteSession\.(?:commit|endTransaction)|SharedPreferencesImpl.*writeToFile|QueuedWork\.waitToFinish|"
    r"jbd2_log_wait_commit|ext4_sync_file|f2fs_sync_file|f2fs_issue_checkpoint|blkdev_issue_discard|"
    r"submit_bio_wait|do_fsync|vfs_fsync|wait_on_page_writeback|filemap_write_and_wait")
MEMORY = re.compile(
    r"WaitForGcToComplete|WaitingForGcToComplete|WaitingPerformingGc|Heap::CollectGarbageInternal|"
    r"swap_readpage|__alloc_pages|try_to_free_pages|shrink_(?:node|zone|inactive_list|page_list)|"
    r"lowmem|throttle_direct_reclaim|congestion_wait|mem_cgroup_")
SYSTEM_PROCESS = "system_server"
LOW_MEMORY_RATIO = 0.05


def _thread_text(t: ThreadDump, depth: int = 30) -> list[str]:
    items = list(t.raw_frames[:depth])
    if t.state:
        items.append(t.state)
    if t.wchan:
        items.append(t.wchan)
    return items


def label_cause(chain: list[dict], critical: list[ThreadDump], blocked: ThreadDump | None, header: dict,
                process_threads: list[ThreadDump] = ()) -> tuple[str, dict]:
    """(cause, evidence) for one event. chain: steps {'thread': Node, 'edge': Edge|None, 'dump': ThreadDump|None}."""
    looked = list(critical) + ([blocked] if blocked is not None and blocked not in critical else [])
    for t in looked:
        for s in _thread_text(t):
            if STORAGE.search(s):
                return "storage_sync", {"thread": t.name, "frame": s}
    for t in looked:
        for s in _thread_text(t):
            if MEMORY.search(s):
                return "insufficient_memory", {"thread": t.name, "frame": s}
    for t in process_threads:
        if t.kstate == "D" and t.wchan and MEMORY.search(t.wchan):
            return "insufficient_memory", {"thread": t.name or f"sysTid {t.sys_tid}", "wchan": t.wchan,
                                           "state": "D"}
    ratio = header.get("mem_available_ratio")
    if ratio is not None and ratio < LOW_MEMORY_RATIO:
        return "insufficient_memory", {"mem_available_ratio": round(ratio, 4), "memory_kb": header.get("memory_kb")}
    lock_steps = [s for s in chain[1:] if s["edge"] is not None and s["edge"].kind in ("monitor", "lock_owner")
                  and s["node"].process == SYSTEM_PROCESS]
    if lock_steps:
        return "system_lock_contention", {
            "locks": [{"lock": s["edge"].lock, "class": s["edge"].lock_class, "holder": s["node"].name,
                       "waiter_frame": s["edge"].frame} for s in lock_steps],
            "chain": [s["node"].label() for s in chain]}
    if len(chain) > 1 and chain[-1]["edge"] is not None and chain[-1]["edge"].kind == "binder":
        last = chain[-1]
        return "slow_binder_peer", {"peer": last["node"].label(), "call_frame": last["edge"].frame,
                                    "how": last["edge"].how}
    top = []
    for t in critical[:2]:
        top.extend(t.raw_frames[:5])
    ev: dict = {"top_frames": top}
    if critical and critical[0].kstate == "D":
        ev["kernel_state"] = "D (uninterruptible wait)"
    return "app_specific", ev
