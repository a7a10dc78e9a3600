"""The papers' figures next to the simulator's, each with the tolerance held, whether it is met, and why.

One device calibration (sim/device.py) and one memory configuration (sim/pagecache.py) produce every row:
nothing here is tuned per figure. Stock Android's scheduler (CFQ) is the baseline everywhere. Statistics
follow the papers: FAIO's cuts are of the *delay* background I/O adds over FG only; FastTrack's is of the
whole response time; SmartIO's slowdown is its ReadSlowdown (time with a concurrent writer / time alone, in
percent), measured on eMMC (the Nexus-class phones it used) against one writer, and its "up to" figures
are the best of several app groups (group means, not a single operation).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from droidlag.iolab.sim.scenarios import run_scenario


@dataclass
class Row:
    figure: str
    paper: str
    droidlag: str
    tolerance: str
    within_tolerance: bool
    note: str = ""
    value: float | None = None
    # the tolerance as a band in the units of `value` (for the chart), and the paper's figure in those units
    band_low: float | None = None
    band_high: float | None = None
    paper_value: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _cut(base_ms: float, new_ms: float) -> float:
    return 100.0 * (1 - new_ms / base_ms)


def _delay_cut(fg_only_ms: float, base_ms: float, new_ms: float) -> float:
    """Cut of the user-perceived *delay*: the time background I/O adds over FG only (FAIO's metric: 'reduces
    the response time delay by up to 91%, close to when a single app runs'; a cut of the whole response time
    could not exceed 1 - 1/2.6 = 62% for Gallery)."""
    extra = base_ms - fg_only_ms
    return 100.0 * (base_ms - new_ms) / extra if extra > 0 else 0.0


def _ratio_row(figure, paper_value, value, rel=0.4, unit="x", note=""):
    ok = abs(value / paper_value - 1) <= rel
    return Row(figure, f"{unit}{paper_value:g}", f"{unit}{value:.2f}", f"±{int(rel * 100)}% relative", ok, note, value,
               paper_value * (1 - rel), paper_value * (1 + rel), paper_value)


def _pp_row(figure, paper_value, value, pp=15.0, note=""):
    ok = abs(value - paper_value) <= pp
    return Row(figure, f"{paper_value:g}%", f"{value:.1f}%", f"±{pp:g} points", ok, note, value,
               paper_value - pp, paper_value + pp, paper_value)


def _why(row: Row, within: str, outside: str) -> Row:
    """Every row says why it is (or is not) within tolerance, after its numbers."""
    reason = within if row.within_tolerance else outside
    row.note = f"{row.note}; {reason}" if row.note else reason
    return row


# SmartIO evaluated "several groups of popular applications" and reports the best group ("up to").
SMARTIO_GROUPS = 4


def reproduce(seed: int = 0, scale: float = 1.0, wam: bool = True, progress=None) -> dict:
    """Run every comparison; returns {'rows': [...], 'seed', 'scale'}. Takes ~10 s at scale 1, plus ~2 min
    for the WAM rows (`wam=False` leaves them out; `progress(n)` is called per simulated WAM day)."""
    rows: list[Row] = []
    ms = {}

    def m(scn, pol, dev="ufs", bg=True):
        key = (scn, pol, dev, bg)
        if key not in ms:
            ms[key] = run_scenario(scn, pol, dev, seed=seed, background=bg, scale=scale).mean_ms
        return ms[key]

    # 1. background I/O inflates foreground operations (Galaxy S6: UFS)
    g0, g1 = m("gallery", "cfq", bg=False), m("gallery", "cfq")
    rows.append(_why(_ratio_row("Gallery launch, FG+BG / FG only", 2.6, g1 / g0, note=f"{g0:.0f} ms -> {g1:.0f} ms"),
                     "page-cache stalls (BG dirty pages at the LRU tail, lock held while they are written back) "
                     "give about the paper's inflation",
                     "too much inflation: the model's page cache (256 MB reclaimable LRU, 160 MB dirty limit) "
                     "makes Gallery's allocations wait on BG writeback more often than on the S6; Gallery's "
                     "inflation is set by the memory configuration, which we do not fit per figure (tried: an "
                     "800 MB LRU gives x1.1 and breaks FAIO's Gallery cut; kernel-default thresholds of a 256 MB "
                     "LRU's dirtyable memory, 13/54 MB, give x1.3 but Camera x3.6 and 7/19 rows overall; Linux 3.2+ dirty "
                     "pacing (balance_dirty_pages: writers sleep between the freerun point and the limit, the dirty "
                     "level settles at the setpoint, 130 MB), modelled as MemoryConfig.dirty_pacing, gives x2.4 "
                     "but leaves the camera's delay mostly its own pacing, which FAIO cannot cut: 11/19, so off)"))
    c0, c1 = m("camera", "cfq", bg=False), m("camera", "cfq")
    rows.append(_why(Row("Camera suspension, FG only", "< 1 s", f"{c0 / 1e3:.2f} s", "< 1 s", c0 < 1000,
                         "40 MB written and fsync'd at the burst write rate", c0, 0.0, 1000.0),
                     "40 MB at 150 MB/s plus a flush", "FG-only camera too slow"))
    rows.append(_why(_ratio_row("Camera suspension, FG+BG / FG only", 19.5, c1 / c0, note=f"{c0:.0f} ms -> {c1:.0f} ms"),
                     "dirty throttling and the device write FIFO give the paper's inflation",
                     "too little inflation: the camera gets a fair share of the dirty-page budget (throttled "
                     "with the BG writers) and its fsync waits for its own pages only; ~6 s would need its "
                     "data to queue behind several times more BG data. Tried and rejected: a write buffer "
                     "that slows sustained writes (assumed 256 MB, half rate: x7, no public figure, off) and "
                     "ext4 ordered-mode commits waiting for all BG data in flight (x3.7, and FAIO then could "
                     "not cut Camera at all, contrary to the paper); Linux 3.2+ dirty pacing (modelled, off) "
                     "makes it x3.9: a lower dirty level leaves even less BG data ahead of the camera"))
    k0, k1 = m("game", "cfq", bg=False), m("game", "cfq")
    rows.append(_why(Row("Game loading, FG only", "2-4 s", f"{k0 / 1e3:.2f} s", "2-4 s", 2000 <= k0 <= 4000,
                         "500 MB of 256 KB random reads + 0.5 ms decode each", k0, 2000.0, 4000.0, 3000.0),
                     "device read time plus decode", "outside 2-4 s"))
    rows.append(_why(Row("Game loading, FG+BG", "4-8 s", f"{k1 / 1e3:.2f} s", "4-8 s", 4000 <= k1 <= 8000,
                         "", k1, 4000.0, 8000.0, 6000.0),
                     "page-cache stalls, CFQ queueing behind BG sync (fsync) slices and reads waiting for "
                     "programs on busy dies",
                     "too slow (the paper's 4-8 s is ~x2; the model gives ~x3.5): of the ~8 s added, the loader "
                     "waits ~3.5 s for the page-cache lock while BG writers reclaim, ~2.5 s in CFQ behind BG "
                     "fsync slices, ~2 s for programs on dies busy with BG writes (~1 ms per 256 KB read); with "
                     "Linux 3.2+ dirty pacing (modelled, off: see the Gallery row) it is 7.6 s, but FAIO's game "
                     "cut then drops to 52%"))
    # 2. FAIO and its block-layer-only half: cut of the delay BG adds over FG only
    fg_only = {"gallery": g0, "camera": c0, "game": k0}
    stock = {"gallery": g1, "camera": c1, "game": k1}
    for scn, faio_paper, fid_paper in (("gallery", 91, 7), ("camera", 72, 29), ("game", 86, 21)):
        f, d = m(scn, "faio"), m(scn, "faio-fid")
        rows.append(_why(_pp_row(f"FAIO delay cut, {scn} (vs FG+BG)", faio_paper,
                                 _delay_cut(fg_only[scn], stock[scn], f), note=f"{stock[scn]:.0f} -> {f:.0f} ms "
                                 f"(FG only {fg_only[scn]:.0f})"),
                         "the dispatcher lets the camera's kworker-written pages through and the page manager "
                         "its allocations, while writes already inside the device stay FIFO: Camera gains "
                         "least, as in the paper" if scn == "camera" else
                         "the page manager removes the page-cache stalls (a BG holder asleep on writeback is at a "
                         "checkpoint and hands the lock over at once) and the dispatcher the block-layer queueing, "
                         "as the paper finds; what stays is ~2 s of reads waiting for programs on dies busy with "
                         "BG writes (a program under way is not suspended)" if scn == "game" else
                         "the page manager removes the page-cache stalls and the dispatcher the block-layer "
                         "queueing, as the paper finds",
                         {"gallery": "", "camera": "FG writes still wait behind BG writes inside the device "
                          "(write FIFO) and behind the shared dirty-page budget, which FAIO does not touch",
                          "game": "what FAIO cannot touch stays: ~2 s of reads waiting for programs on dies "
                          "busy with BG writes (a program under way is not suspended) and the FG task's own "
                          "reclaim when no clean page is left"}[scn] or "outside tolerance"))
        rows.append(_why(_pp_row(f"faio-fid delay cut, {scn}", fid_paper, _delay_cut(fg_only[scn], stock[scn], d),
                                 note=f"{stock[scn]:.0f} -> {d:.0f} ms"),
                         "the dispatcher alone cannot help while the FG task waits for the page-cache lock",
                         "the dispatcher alone gains more than on the phone: in the model most of the camera's "
                         "delay is its own pages, written back by the kworker, queued behind BG writeback in "
                         "CFQ's async queue, which the LBA hand-over lets through; on the phone more of it was "
                         "in the page cache" if scn == "camera" else "outside tolerance"))
    ufs_cut = _delay_cut(g0, g1, m("gallery", "faio"))
    e0, e1 = m("gallery", "cfq", "emmc", False), m("gallery", "cfq", "emmc")
    emmc_cut = _delay_cut(e0, e1, m("gallery", "faio", "emmc"))
    rows.append(_why(Row("FAIO gain larger on UFS than eMMC (Gallery)", "UFS > eMMC",
                         f"UFS {ufs_cut:.1f}% vs eMMC {emmc_cut:.1f}%", "UFS cut > eMMC cut", ufs_cut > emmc_cut,
                         "", ufs_cut - emmc_cut, 0.0, None),
                     "on the faster device the page-cache stalls FAIO removes are a larger share of the delay",
                     "on eMMC the one-command queue is the bottleneck either way"))
    # 3. FastTrack with 1..6 background apps
    ft = {n: m("launch", "fasttrack", bg=n) for n in range(1, 7)}
    stock_l = {n: m("launch", "cfq", bg=n) for n in range(1, 7)}
    spread = max(ft.values()) / min(ft.values())
    rows.append(_why(Row("FastTrack FG response, max/min over 1-6 BG apps", "flat (~x1)", f"x{spread:.2f}",
                         "<= x1.5", spread <= 1.5,
                         "fasttrack: " + ", ".join(f"{n}:{v / 1e3:.2f}s" for n, v in ft.items())
                         + "; stock: " + ", ".join(f"{n}:{v / 1e3:.1f}s" for n, v in stock_l.items()), spread,
                         1.0, 1.5, 1.0),
                     "FG requests overtake BG ones at every layer and a BG writer asleep on writeback hands the "
                     "page-cache lock over at once; what is left (the dirty-page budget for the 4 MB save, "
                     "the FG task's own reclaim) grows slowly with the BG load",
                     "what FastTrack leaves grows with the BG count: its 4 MB save is throttled with every BG "
                     "writer on the shared dirty-page budget"))
    rows.append(_why(_pp_row("FastTrack vs stock, six BG apps", 94, _cut(stock_l[6], ft[6]), pp=10,
                             note=f"{stock_l[6]:.0f} -> {ft[6]:.0f} ms"),
                     "a cut of the whole response time, as the paper states it",
                     f"FastTrack's side is flat (~{ft[6] / 1e3:.2f} s); the miss is stock's inflation: a 94% "
                     f"cut needs stock CFQ with six BG writers ~17x slower than FastTrack, the model's is "
                     f"x{stock_l[6] / ft[6]:.1f} (and not monotonic in the BG count: its launches land between "
                     "the BG writers' fsync bursts differently), i.e. less stock queueing and page-cache "
                     "stalling than on the paper's phone"))
    # 4. SmartIO (Nexus-class phones: eMMC). Slowdown as SmartIO defines it: time with a concurrent writer /
    # time alone, in percent (their slides: '626%' next to 'reads up to 6.15').
    for scn, paper in (("seq-read", 626), ("rand-read", 293)):
        a, b = m(scn, "cfq", "emmc", False), m(scn, "cfq", "emmc")
        slow = 100 * b / a
        rows.append(_why(Row(f"SmartIO read slowdown under writes, {scn.split('-')[0]}", f"{paper}%", f"{slow:.0f}%",
                             "±50% relative", abs(slow / paper - 1) <= 0.5, f"eMMC, one writer: {a:.2f} -> {b:.2f} ms", slow,
                             paper * 0.5, paper * 1.5, float(paper)),
                         "reads wait for the write command in service (eMMC has one command slot)",
                         "each read waits for the 512 KB write in service on the one-command eMMC (~5 ms): "
                         "x35 for a 4 KB read that takes 0.14 ms alone on this eMMC 5.0 profile (the Nexus-era "
                         "parts SmartIO measured were several times slower at random reads, and eMMC write "
                         "caching, which would shorten the wait, is not modelled; under a sustained writer the cache stays "
                         "full, so each write command still takes its program time). Checked and rejected: CFQ's "
                         "kernel-default slice_idle (8 ms, used on a one-command eMMC) brings random to ~220% but "
                         "sequential to ~215% (out) and makes SmartIO's launch cut negative (all apps: -18%); SmartIO's 626%/293% "
                         "come from 2611 phones with their vendors' settings, and the 626% is only reachable "
                         "without idling, so idling stays off" if scn == "rand-read" else
                         "the model's sequential read loses less than the phone's: no in-device read-ahead "
                         "that concurrent writes would break"))
    for scn, paper_cut in (("smartio-launch", 37.8), ("smartio-runtime", 29.6)):
        base = run_scenario(scn, "cfq", "emmc", seed=seed, scale=scale)
        new = run_scenario(scn, "smartio", "emmc", seed=seed, scale=scale)
        per_app = len(base.fg_ns) // 20 or 1
        cuts = []
        for g in range(SMARTIO_GROUPS):
            lo, hi = g * len(base.fg_ns) // SMARTIO_GROUPS, (g + 1) * len(base.fg_ns) // SMARTIO_GROUPS
            if sum(base.fg_ns[lo:hi]):
                cuts.append(_cut(sum(base.fg_ns[lo:hi]), sum(new.fg_ns[lo:hi])))
        mean_cut = _cut(sum(base.fg_ns), sum(new.fg_ns))
        rows.append(_why(_pp_row(f"SmartIO {scn.split('-')[1]} delay cut, up to", paper_cut, max(cuts, default=0.0),
                                 note=f"best of {SMARTIO_GROUPS} app groups (mean per group); all apps "
                                 f"{mean_cut:.1f}%; {per_app} op(s) per app"),
                         "reads first with writes bounded at 100 ms cut the read waits behind writes",
                         "reads first removes more of the wait than on the phones: in the model most of a "
                         "launch's delay is reads queued behind BG writes, which SmartIO removes entirely"))
    # 5. priority inheritance under bulk background traffic. The claim is FastTrack's (ATC'18), set against its
    # own preemption: so the test is that inheritance stays small where preemption inside the device does not.
    sp = m("sporadic", "cfq")
    pi = {p: _cut(sp, m("sporadic", p)) for p in ("qasio", "rcp", "faio", "fasttrack")}
    best_pi = max(pi["qasio"], pi["rcp"])
    rows.append(_why(Row("Priority inheritance (QASIO/RCP) under bulk BG: cut of small FG I/O", "fails (small)",
                         f"qasio {pi['qasio']:.1f}%, rcp {pi['rcp']:.1f}% (fasttrack {pi['fasttrack']:.1f}%, "
                         f"faio {pi['faio']:.1f}%)",
                         "< 30% and under half of FastTrack's", best_pi < 30 and best_pi < pi["fasttrack"] / 2,
                         f"mean of a 64 KB read + 16 KB write + fsync every 50 ms: {sp:.0f} ms under stock CFQ "
                         "with the update and the download", best_pi, 0.0, min(30.0, pi["fasttrack"] / 2)),
                     "what blocks the small FG I/O is bulk BG work no priority can overtake: its fsync's cache "
                     "flush waits for the BG writes already inside the device (~40 ms an operation); RCP's "
                     "boosts only remove its queueing in CFQ behind BG fsync slices, QASIO's (inheritance "
                     "alone) hardly anything; FastTrack's preemption inside the device lets the flush past them. "
                     "FAIO ties RCP: the FG task hardly waits on the page-cache lock here, so its checkpoints "
                     "have nothing to win",
                     "inheritance cuts more than the paper says it can, or FastTrack's preemption less"))
    # 6. write-amplification mitigation (wam.md): FTL, days of use, three WAM policies
    if wam:
        from droidlag.iolab.wam.figures import wam_rows
        rows += wam_rows(Row, seed=seed, progress=progress)
    return {"seed": seed, "scale": scale, "rows": [r.to_dict() for r in rows]}


def format_table(result: dict) -> str:
    rows = result["rows"]
    head = ("figure", "paper", "droidlag", "tolerance", "ok")
    table = [head] + [(r["figure"], r["paper"], r["droidlag"], r["tolerance"], "yes" if r["within_tolerance"] else "NO")
                      for r in rows]
    widths = [max(len(str(t[i])) for t in table) for i in range(len(head))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(t, widths)).rstrip() for t in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    n_ok = sum(r["within_tolerance"] for r in rows)
    lines.append(f"\n{n_ok}/{len(rows)} figures within tolerance (seed {result['seed']}, scale {result['scale']}).")
    misses = [r for r in rows if not r["within_tolerance"]]
    if misses:
        import textwrap
        lines.append("\nWhy not:")
        for r in misses:
            why = r.get("note") or "no explanation recorded"
            lines.append(textwrap.fill(f"- {r['figure']}: {why}", width=116, subsequent_indent="  "))
    return "\n".join(lines)
