"""Write-amplification mitigation (wam.md) simulated: a page-mapped FTL under days of phone use, with
real-time discards, Android's lazy daily fstrim and the practical batched trim side by side; the fsync
stalls each causes (over 5 s: ANR; over 60 s: SNR), the write speed each leaves, and the S_d threshold
sweep with its knee.

    compare(["realtime", "lazy", "practical"])  -> {"runs": [...]}
    sweep([1, 2, 4, 6, 8, 12])                  -> {"points": [...], "knee_gb": ...}
"""
from __future__ import annotations

from droidlag.iolab.sim.ftl import UFS21_64GB, FlashProfile
from droidlag.iolab.wam.day import ANR_NS, SNR_NS, WAM_POLICIES, PhoneDays, WamPolicy, WamResult, aged_phone, run_wam
from droidlag.iolab.wam.usage import GB, KB, UsageProfile

DEFAULT_SWEEP_GB = (1, 2, 3, 4, 6, 8, 12, 16)
_SCALED_USAGE_BYTES = ("cache_bytes_per_day", "cache_quota", "media_bytes_per_day", "video_median", "update_median")


def scaled_phone(fraction: float, usage: UsageProfile | None = None,
                 flash: FlashProfile = UFS21_64GB) -> tuple[UsageProfile, FlashProfile]:
    """A smaller phone for quick runs: the device's capacity and idle-GC budget, and the day's write volumes
    (caches, their quota, media, videos, updates), all times `fraction`. Counts of events (unlocks, syncs,
    files per batch) and the file sizes of small files stay, so the FTL sees the same kind of traffic."""
    from dataclasses import replace

    if not 0 < fraction <= 1:
        raise ValueError("fraction must be in (0, 1]")
    usage = usage or UsageProfile()
    usage = replace(usage, **{k: int(getattr(usage, k) * fraction) for k in _SCALED_USAGE_BYTES})
    flash = replace(flash, name=f"{flash.name}x{fraction:g}", user_bytes=int(flash.user_bytes * fraction),
                    idle_free_bytes=int(flash.idle_free_bytes * fraction))
    return usage, flash


def compare(policies=WAM_POLICIES, days: int = 3, warmup_days: int = 1, seed: int = 0,
            usage: UsageProfile = UsageProfile(), flash: FlashProfile = UFS21_64GB, unit_bytes: int = 16 * KB,
            threshold_gb: float = 6.0, progress=None) -> dict:
    """Each policy over the same days of use from the same aged phone. Speeds are relative to real-time
    discards where it is among the policies."""
    runs = [run_wam(p, days, warmup_days, seed, usage, flash, unit_bytes,
                    threshold_gb if p == "practical" else None, progress).to_dict() for p in policies]
    base = next((r for r in runs if r["policy"] == "realtime"), None)
    for r in runs:
        if base and base["rand_write_mbps"]:
            r["rand_vs_realtime_pct"] = 100 * (r["rand_write_mbps"] / base["rand_write_mbps"] - 1)
            r["seq_vs_realtime_pct"] = 100 * (r["seq_write_mbps"] / base["seq_write_mbps"] - 1)
    return {"days": days, "warmup_days": warmup_days, "seed": seed, "unit_bytes": unit_bytes,
            "usage": usage.to_dict(), "flash": flash.to_dict(), "runs": runs}


def knee(xs: list[float], ys: list[float]) -> float | None:
    """The knee of a decreasing convex curve (Kneedle, via the `kneed` package): where raising x stops
    buying much decrease of y."""
    from kneed import KneeLocator

    if len(xs) < 3:
        return None
    k = KneeLocator(list(xs), list(ys), curve="convex", direction="decreasing")
    return float(k.knee) if k.knee is not None else None


def sweep(thresholds_gb=DEFAULT_SWEEP_GB, days: int = 3, warmup_days: int = 1, seed: int = 0,
          usage: UsageProfile = UsageProfile(), flash: FlashProfile = UFS21_64GB, unit_bytes: int = 16 * KB,
          progress=None) -> dict:
    """Practical WAM at each S_d threshold: random write speed, rounds and total trim time per day. The knee
    is taken on trim time per day against S_d (smaller S_d: faster writes but more rounds, each with its
    start-up cost)."""
    points = []
    for g in sorted(thresholds_gb):
        r = run_wam("practical", days, warmup_days, seed, usage, flash, unit_bytes, g, progress)
        points.append({"threshold_gb": g, "rand_write_mbps": r.rand_write_mbps, "seq_write_mbps": r.seq_write_mbps,
                       "rounds_per_day": r.rounds_per_day, "trim_s_per_day": r.trim_s_per_day,
                       "stale_gb_mean": r.stale_gb_mean, "wam_stalls_5s": r.wam_stalls_5s})
    k = knee([p["threshold_gb"] for p in points], [p["trim_s_per_day"] for p in points])
    return {"days": days, "seed": seed, "points": points, "knee_gb": k,
            "knee_on": "total trim time per day against S_d (Kneedle)"}


def format_compare(out: dict) -> str:
    head = ("policy", "ANR>5s", "SNR>60s", "WAM>5s", "worst sync", "rand MB/s", "seq MB/s", "stale GB",
            "trim s/day", "rounds/day", "WA")
    rows = [head]
    for r in out["runs"]:
        rows.append((r["policy"], r["anr_stalls"], r["snr_stalls"], r["wam_stalls_5s"], f"{r['worst_sync_ms'] / 1e3:.1f} s",
                     f"{r['rand_write_mbps']:.1f}", f"{r['seq_write_mbps']:.1f}", f"{r['stale_gb_mean']:.1f}",
                     f"{r['trim_s_per_day']:.1f}", f"{r['rounds_per_day']:.1f}", f"{r['write_amplification']:.3f}"))
    widths = [max(len(str(t[i])) for t in rows) for i in range(len(head))]
    lines = ["  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(t, widths)))
             for t in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    u = out["usage"]
    lines.append(f"\n{out['days']} day(s) after {out['warmup_days']} warm-up, seed {out['seed']}; "
                 f"{out['flash']['name']}, /data {u['fs_used_fraction']:.0%} full, mapping unit "
                 f"{out['unit_bytes'] // 1024} KB. ANR: an app's sync write over 5 s; SNR: a system one over 60 s; "
                 "WAM>5s: any sync write that waited over 5 s for discards.")
    worst = max(out["runs"], key=lambda r: r["worst_sync_ms"])
    if worst["worst"]:
        w = worst["worst"][0]
        lines.append(f"Worst stall: {worst['policy']}, {w['who']} ({w['tag']}) at hour {w['t_h'] % 24:.1f} of day "
                     f"{int(w['t_h'] // 24)}: {w['ms'] / 1e3:.1f} s, {w['discard_wait_ms'] / 1e3:.1f} s of it "
                     "waiting for discards.")
    return "\n".join(lines)


def format_sweep(out: dict) -> str:
    lines = ["S_d (GB)  rand MB/s  seq MB/s  rounds/day  trim s/day  stale GB"]
    for p in out["points"]:
        lines.append(f"{p['threshold_gb']:>8g}  {p['rand_write_mbps']:>9.1f}  {p['seq_write_mbps']:>8.1f}  "
                     f"{p['rounds_per_day']:>10.2f}  {p['trim_s_per_day']:>10.1f}  {p['stale_gb_mean']:>8.2f}")
    k = out["knee_gb"]
    lines.append(f"\nKnee: S_d = {k:g} GB ({out['knee_on']})" if k is not None else "\nNo knee found in this sweep.")
    return "\n".join(lines)


__all__ = ["compare", "sweep", "knee", "run_wam", "format_compare", "format_sweep", "WamPolicy", "WamResult",
           "PhoneDays", "UsageProfile", "aged_phone", "WAM_POLICIES", "ANR_NS", "SNR_NS", "GB",
           "DEFAULT_SWEEP_GB"]
