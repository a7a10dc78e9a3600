"""How well `droidlag hangs` reads and explains ANR reports as people paste them, measured against the hand labels of
`corpus/anr-reports/labels.csv`, and how many `corpus/anr/` dumps it reads. Run:

    python benchmarks/bench_hangs_reports.py [--holdout] [--per-file]

Prints: read rate (files that gave an event; every other file must be refused with a reason), critical-thread
accuracy, cause accuracy, and pairwise clustering precision/recall across thresholds (same `cause_group` = same
root cause; `unknown_*` groups are singletons). `--holdout` prints the figures for the held-out quarter of the files
(every 4th in name order), set aside while the rules were written, next to the rest.

Critical-thread scoring compares the event's chain end with the label's words: `main itself` = the blocked thread is
its own critical thread and is not idle; `none` = main idle; `thread N` = tid N (in the dump, or named absent);
`(not in paste)` = a holder named absent from the report; binder peers, HALs and daemons = a binder peer; `child
process` = a child process. Labels whose critical thread is `unknown` are not scored (counted separately)."""
from __future__ import annotations

import argparse
import csv
import re
import sys
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _corpus import corpus_root  # noqa: E402
from droidlag.findings import analyze_hangs  # noqa: E402
from droidlag.hangs import HangsConfig  # noqa: E402
from droidlag.hangs.analyze import cluster_events  # noqa: E402

THRESHOLDS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
CAUSES = ("storage_sync", "system_lock_contention", "insufficient_memory", "slow_binder_peer", "app_specific",
          "unknown")


def labels(root: Path) -> list[dict]:
    with open(root / "anr-reports" / "labels.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def holdout(names: list[str]) -> set[str]:
    """Every 4th file in name order: set aside while writing the rules."""
    return {n for i, n in enumerate(sorted(names)) if i % 4 == 3}


def label_category(text: str) -> tuple[str, int | None]:
    """The kind of critical thread a label names: self, idle, thread (tid), absent (tid or None), binder, child,
    unknown."""
    t = text.lower()
    m = re.search(r"\b(?:thread|tid=)\s*(\d+)", t)
    tid = int(m.group(1)) if m else None
    if t.startswith("main itself") or "executed on main" in t:
        return "self", None
    if t.startswith("none"):
        return "idle", None
    if t.startswith("unknown") and "binder" not in t:
        return "unknown", None
    if "child process" in t:
        return "child", None
    if "binder" in t or t.startswith("system_server") or "hal" in t.split() or t.startswith(("vold", "sensors")):
        return "binder", None
    if "not in paste" in t:
        return "absent", tid
    if tid is not None:
        return "thread", tid
    return "absent", None


def event_category(e) -> tuple[str, int | None]:
    """The same categories, read from an event's chain."""
    last = e.chain[-1]["node"]
    edge = e.chain[-1]["edge"]
    if len(e.chain) == 1:
        ev = e.evidence.get("cause") or {}
        return ("idle", None) if ev.get("idle") else ("self", None)
    if edge is not None and edge.kind == "binder":
        return "binder", None
    if edge is not None and edge.kind == "process":
        return "child", None
    if last.remote:
        return "absent", last.tid
    return "thread", last.tid


def critical_ok(label: str, e) -> bool | None:
    lc, ltid = label_category(label)
    if lc == "unknown":
        return None
    pc, ptid = event_category(e)
    if lc == "thread":
        return pc in ("thread", "absent") and ptid == ltid
    if lc == "absent":
        return pc in ("absent", "thread") and (ltid is None or ptid == ltid)
    return pc == lc


def measure(root: Path, only: set[str] | None = None, per_file: bool = False, pairs: bool = False) -> dict:
    rows = [r for r in labels(root) if only is None or r["file"] in only]
    folder = root / "anr-reports"
    report = analyze_hangs([folder / r["file"] for r in rows], HangsConfig())
    first: dict[str, object] = {}
    for e in report.events:
        name = Path(e.source.split("#")[0]).name
        first.setdefault(name, e)
    refused = {Path(str(x.path)).name: x.reason for x in report.errors}
    read = sum(1 for r in rows if r["file"] in first)
    silent = [r["file"] for r in rows if r["file"] not in first and r["file"] not in refused]
    crit_scored = crit_right = cause_right = 0
    for r in rows:
        e = first.get(r["file"])
        ok = critical_ok(r["critical_thread"], e) if e is not None else (
            None if label_category(r["critical_thread"])[0] == "unknown" else False)
        if ok is not None:
            crit_scored += 1
            crit_right += ok
        cause = e.cause if e is not None else None
        cause_right += cause == r["cause_label"]
        if per_file:
            print(f"{r['file'][:60]:60} {'read' if e else 'REFUSED':7} crit={'-' if ok is None else int(ok)} "
                  f"{event_category(e) if e else ''} cause={cause}/{r['cause_label']}"
                  f"{'' if cause == r['cause_label'] else '  X'}")
    by_format: dict[str, list[int]] = {}
    for r in rows:   # [files, read, cause right]
        e = first.get(r["file"])
        c = by_format.setdefault(r["format"], [0, 0, 0])
        c[0] += 1
        c[1] += e is not None
        c[2] += (e.cause if e is not None else None) == r["cause_label"]
    out = {"files": len(rows), "read": read, "refused": len(refused), "silent": silent, "by_format": by_format,
           "critical": (crit_right, crit_scored), "cause": (cause_right, len(rows)), "clusters": {}}
    group = {r["file"]: r["cause_group"] for r in rows}
    for t in THRESHOLDS:
        cluster_events(report, HangsConfig(threshold=t))
        clus = {}
        bucket = {c["id"] for c in report.clusters if c.get("unknown")}
        for e in report.events:   # the unknown bucket is no cluster: its events are not said to share a cause
            clus.setdefault(Path(e.source.split("#")[0]).name, None if e.cluster in bucket else e.cluster)
        out["clusters"][t] = pairwise(clus, group)
    cluster_events(report, HangsConfig())
    if pairs:
        show_pairs(report, group)
    return out


def show_pairs(report, group: dict[str, str]) -> None:
    """Every false-positive and false-negative pair at the default threshold, with each file's cluster key, cause
    and signature (to tell a code gap from a label doubt)."""
    ev: dict[str, object] = {}
    for e in report.events:
        ev.setdefault(Path(e.source.split("#")[0]).name, e)
    bucket = {c["id"] for c in report.clusters if c.get("unknown")}

    def cl(name: str) -> int | None:
        e = ev.get(name)
        return None if e is None or e.cluster in bucket else e.cluster

    def desc(name: str) -> str:
        e = ev.get(name)
        if e is None:
            return f"{name}: no event"
        sig = next((c["signature"] for c in report.clusters if c["id"] == e.cluster), [])
        return (f"{name}: cluster {'unknown' if e.cluster in bucket else e.cluster} key={e.features.key} "
                f"cause={e.cause} sig={sig[:2]}")

    for a, b in combinations(sorted(group), 2):
        same = group[a] == group[b] and not group[a].startswith("unknown_")
        together = cl(a) is not None and cl(a) == cl(b)
        if together != same:
            print(f"  {'FP' if together else 'FN'} {group[a]} / {group[b]}\n      {desc(a)}\n      {desc(b)}")


def pairwise(cluster_of: dict[str, int], group: dict[str, str]) -> tuple[float, float, int, int, int]:
    """(precision, recall, tp, fp, fn) over file pairs; a file without an event is in no cluster (a lost pair)."""
    tp = fp = fn = 0
    for a, b in combinations(sorted(group), 2):
        same = group[a] == group[b] and not group[a].startswith("unknown_")
        ca, cb = cluster_of.get(a), cluster_of.get(b)
        together = ca is not None and ca == cb
        if together and same:
            tp += 1
        elif together:
            fp += 1
        elif same:
            fn += 1
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, tp, fp, fn


def anr_corpus(root: Path) -> tuple[int, int, int, dict[float, tuple[int, int, int]]]:
    """(files, files that gave events, refused, {threshold: (tp, fp, fn)} against stackdedup/anr_weak_groups.csv)."""
    files = sorted(p for p in (root / "anr").iterdir() if p.suffix == ".txt")
    report = analyze_hangs(files, HangsConfig())
    got = {Path(e.source.split("#")[0]).name for e in report.events}
    weak: dict[float, tuple[int, int, int]] = {}
    for t in THRESHOLDS:
        cluster_events(report, HangsConfig(threshold=t))
        weak[t] = weak_agreement(root, report)
    cluster_events(report, HangsConfig())
    return len(files), len(got), len(report.errors), weak


def weak_agreement(root: Path, report) -> tuple[int, int, int]:
    """Pairwise (tp, fp, fn) of the rows of stackdedup/anr_weak_groups.csv (one event per row: the row's pid) against
    the clusters; a pair is together when the events' cluster sets meet (a deadlock is in several)."""
    with open(root / "stackdedup" / "anr_weak_groups.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    by_file: dict[str, list] = {}
    for e in report.events:
        by_file.setdefault(Path(e.source.split("#")[0]).name, []).append(e)
    items = []
    for r in rows:
        evs = by_file.get(r["file"], [])
        e = next((x for x in evs if r["pid"] and x.pid == int(r["pid"])), evs[0] if evs else None)
        items.append((r["group_id"], frozenset(e.clusters) if e is not None else frozenset()))
    tp = fp = fn = 0
    for (ga, ca), (gb, cb) in combinations(items, 2):
        together = bool(ca & cb)
        tp += ga == gb and together
        fp += ga != gb and together
        fn += ga == gb and not together
    return tp, fp, fn


def show(title: str, m: dict) -> None:
    cr, cs = m["critical"]
    ca, cn = m["cause"]
    print(f"{title}: read {m['read']}/{m['files']} ({m['read'] / m['files']:.2f}), refused with a reason "
          f"{m['refused']}, silent {len(m['silent'])}; critical thread {cr}/{cs} ({cr / max(cs, 1):.2f}); "
          f"cause {ca}/{cn} ({ca / cn:.2f})")
    print("  by format (read / cause right / files): " + ", ".join(
        f"{k} {v[1]}/{v[2]}/{v[0]}" for k, v in sorted(m["by_format"].items())))
    for t, (p, r, tp, fp, fn) in m["clusters"].items():
        mark = "  <- default" if t == HangsConfig().threshold else ("  (paper)" if t == 0.95 else "")
        print(f"  threshold {t:.2f}: pairwise precision {p:.2f} recall {r:.2f} (tp {tp}, fp {fp}, fn {fn}){mark}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--holdout", action="store_true")
    ap.add_argument("--per-file", action="store_true")
    ap.add_argument("--pairs", action="store_true", help="print every wrong pair at the default threshold")
    args = ap.parse_args()
    root = corpus_root()
    if root is None:
        sys.exit("corpus not found (../shared/corpus or $DROIDLAG_CORPUS)")
    names = [r["file"] for r in labels(root)]
    show("anr-reports (all)", measure(root, per_file=args.per_file, pairs=args.pairs))
    if args.holdout:
        held = holdout(names)
        show("  held out", measure(root, held))
        show("  development", measure(root, set(names) - held))
    n, got, refused, weak = anr_corpus(root)
    print(f"anr/ (complete dumps): {got}/{n} files gave events, {refused} refused; pairwise against "
          "stackdedup/anr_weak_groups.csv:")
    for t, (tp, fp, fn) in weak.items():
        print(f"  threshold {t:.2f}: precision {tp / max(tp + fp, 1):.2f} recall {tp / max(tp + fn, 1):.2f} "
              f"(tp {tp}, fp {fp}, fn {fn})")


if __name__ == "__main__":
    main()
