"""I/O lab: a discrete-event model of the phone storage stack (page cache, block layer, eMMC/UFS device)
under the responsiveness policies of FAIO/FastTrack, SmartIO, QASIO and RCP; block-trace replay; the same
questions on the real kernel (host lab); and the papers' figures reproduced.

Notebook API:
    simulate("gallery", ["cfq", "faio"])       -> dict of runs
    run_scenario("camera", "fasttrack")         -> ScenarioResult
    read_block_trace(path), replay(trace, ...)  -> records, replay stats
    reproduce()                                 -> {"rows": [...]}
    run_host_lab()                              -> host experiments (needs fio; root for the rest):
                                                   schedulers, I/O priorities, BFQ cgroup weights, and WAM
    run_wam_lab(size_mb=256, rounds=2)          -> ext4 -o discard vs nodiscard + fstrim: fsync stalls (real)
    wam.compare(), wam.sweep()                  -> WAM simulated: FTL, days of use, realtime/lazy/practical
"""
from __future__ import annotations

from droidlag.iolab.sim.device import PROFILES
from droidlag.iolab.sim.policies import POLICIES, get_policy
from droidlag.iolab.sim.scenarios import SCENARIOS, ScenarioResult, run_scenario
from droidlag.iolab.sim.stack import Stack


def simulate(scenario: str, policies: list[str] | str = "cfq", device: str = "ufs", seed: int = 0,
             scale: float = 1.0, background: int | None = None) -> dict:
    """Run a scenario alone (FG only) and under each policy with background load; response times in ms,
    delay cut against stock CFQ, slowdown against FG only, background throughput kept, write starvation."""
    if isinstance(policies, str):
        policies = [p for p in policies.split(",") if p]
    bg = True if background is None else background
    fg_only = run_scenario(scenario, "cfq", device, seed, background=False, scale=scale)
    runs = [run_scenario(scenario, p, device, seed, background=bg, scale=scale) for p in policies]
    base = next((r for r in runs if r.policy == "cfq"), None)
    if base is None:
        base = run_scenario(scenario, "cfq", device, seed, background=bg, scale=scale)
    out = []
    for r in runs:
        d = r.to_dict()
        d["cut_vs_cfq_pct"] = 100 * (1 - r.mean_ms / base.mean_ms) if base.mean_ms else None
        d["vs_fg_only"] = r.mean_ms / fg_only.mean_ms if fg_only.mean_ms else None
        out.append(d)
    return {"scenario": scenario, "description": SCENARIOS[scenario].description, "device": device, "seed": seed,
            "scale": scale, "background": runs[0].background if runs else 0,
            "fg_only": fg_only.to_dict(), "runs": out, "device_profile": PROFILES[device].to_dict()}


def __getattr__(name):
    if name in ("read_block_trace", "replay"):
        from droidlag.iolab import replay as _r
        return getattr(_r, name)
    if name == "wam":
        import droidlag.iolab.wam as _w
        return _w
    if name == "reproduce":
        from droidlag.iolab.reproduce import reproduce
        return reproduce
    if name in ("run_host_lab", "format_host", "run_wam_lab", "format_wam"):
        from droidlag.iolab import host as _h
        return getattr(_h, name)
    raise AttributeError(name)


__all__ = ["simulate", "run_scenario", "ScenarioResult", "Stack", "POLICIES", "get_policy", "PROFILES", "SCENARIOS",
           "read_block_trace", "replay", "reproduce", "run_host_lab",
           "format_host", "run_wam_lab", "format_wam", "wam"]
