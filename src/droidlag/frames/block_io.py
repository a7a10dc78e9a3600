"""Block-layer evidence for the `io` cause: the block requests (trace.block) that were in flight while a thread on a
frame's critical path was in uninterruptible sleep (D), and those issued by a critical-path thread during the
frame, with their count, bytes, direction and the time they overlapped the path's D-state time.

Requests whose completion is not in the trace (dur null: requeued and issued again, or still in flight at the
trace end) have no known in-flight interval: they are counted only when a critical-path thread issued them.
"""
from __future__ import annotations

import numpy as np
import polars as pl

from droidlag.frames.critical_path import UNINTERRUPTIBLE, Segment, state_class
from droidlag.frames.results import BlockBaseline, BlockEvidence, BlockRequest


def merge_intervals(iv: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(iv):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def overlap_with(a: int, b: int, merged: list[tuple[int, int]]) -> int:
    """Time of [a, b) covered by the (merged, sorted) intervals."""
    return sum(max(0, min(b, e) - max(a, s)) for s, e in merged if s < b and e > a)


class BlockIndex:
    """The trace's block requests as sorted numpy arrays, for windowed lookups."""

    def __init__(self, block: pl.DataFrame):
        b = block.sort("ts") if block.height else block
        self.n = b.height
        if not self.n:
            return
        self.ts = b["ts"].to_numpy()
        dur = b["dur"].fill_null(-1).to_numpy()
        self.complete = dur >= 0
        self.end = np.where(self.complete, self.ts + np.maximum(dur, 0), self.ts)
        self.max_dur = int(dur.max()) if self.complete.any() else 0
        self.bytes = b["bytes"].fill_null(0).to_numpy()
        self.direction = b["direction"].to_list()
        self.tid = b["tid"].to_list()
        self.comm = b["comm"].to_list()

    def _candidates(self, a: int, b: int) -> range:
        lo = int(np.searchsorted(self.ts, a - self.max_dur, side="left"))
        hi = int(np.searchsorted(self.ts, b, side="left"))
        return range(lo, hi)

    def evidence(self, path: list[Segment], threads: set[int], window: tuple[int, int], top: int = 5) -> BlockEvidence:
        """Block requests in flight during the path's D-state segments, or issued by `threads` inside `window`.

        requests/bytes/by_direction count each request once; overlap_ns is the D-state time of the path during
        which at least one request was in flight (overlap_share: that over the path time); each named request
        carries its own overlap with the D-state time."""
        d_iv = merge_intervals([(s.ts, s.ts + s.dur) for s in path if state_class(s.state) == UNINTERRUPTIBLE])
        d_ns = sum(e - s for s, e in d_iv)
        chosen: dict[int, tuple[int, str]] = {}
        if self.n:
            for s, e in d_iv:
                for i in self._candidates(s, e):
                    if self.complete[i] and self.end[i] > s:
                        chosen.setdefault(i, (0, "in_flight_during_d"))
            wa, wb = window
            if threads and wb > wa:
                lo = int(np.searchsorted(self.ts, wa, side="left"))
                hi = int(np.searchsorted(self.ts, wb, side="left"))
                for i in range(lo, hi):
                    if self.tid[i] in threads and i not in chosen:
                        chosen[i] = (0, "issued_by_path_thread")
        flight = []
        for i, (_, why) in list(chosen.items()):
            ov = overlap_with(int(self.ts[i]), int(self.end[i]), d_iv) if self.complete[i] else 0
            chosen[i] = (ov, why)
            if self.complete[i]:
                flight.append((int(self.ts[i]), int(self.end[i])))
        covered = sum(overlap_with(s, e, d_iv) for s, e in merge_intervals(flight))
        by_dir: dict[str, dict[str, int]] = {}
        for i in chosen:
            d = by_dir.setdefault(self.direction[i] or "other", {"requests": 0, "bytes": 0})
            d["requests"] += 1
            d["bytes"] += int(self.bytes[i])
        path_ns = sum(s.dur for s in path)
        named = sorted(chosen.items(), key=lambda kv: (-kv[1][0], -int(self.bytes[kv[0]]), int(self.ts[kv[0]])))
        return BlockEvidence(
            requests=len(chosen), bytes=int(sum(int(self.bytes[i]) for i in chosen)), by_direction=by_dir,
            d_state_ns=d_ns, overlap_ns=covered, overlap_share=covered / path_ns if path_ns else 0.0,
            top_requests=[BlockRequest(int(self.ts[i]),
                                       int(self.end[i]) - int(self.ts[i]) if self.complete[i] else None,
                                       self.direction[i], int(self.bytes[i]), self.tid[i], self.comm[i], ov, why)
                          for i, (ov, why) in named[:top]])


def block_baseline(evidence: list[BlockEvidence]) -> BlockBaseline | None:
    """The same block measure averaged over (sampled) normal frames."""
    if not evidence:
        return None
    n = len(evidence)
    # findings.json v1 averages each frame's share as it shows it (4 decimals): kept so that outputs stay the same
    return BlockBaseline(n, sum(1 for e in evidence if e.requests), sum(e.requests for e in evidence) / n,
                         sum(e.bytes for e in evidence) / n, sum(e.overlap_ns for e in evidence) / n,
                         sum(round(e.overlap_share, 4) for e in evidence) / n)
