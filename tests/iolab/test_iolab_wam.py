"""WAM: the FTL's mechanisms (GC copies, TRIM), the three policies' mechanisms (real-time discards stall a
later fsync, practical trims pause at unlock and resume, lazy trims are killed on unplug and start over),
the knee, determinism, and the CLI."""
import json
from dataclasses import replace

import numpy as np
import pytest

from droidlag.cli import main
from droidlag.iolab.sim.engine import MS, S
from droidlag.iolab.sim.ftl import FTL, UFS21_64GB
from droidlag.iolab.wam import compare, knee, run_wam
from droidlag.iolab.wam.day import PhoneDays, WamPolicy
from droidlag.iolab.wam.fs import FileSystem, extents
from droidlag.iolab.wam.usage import MB, Action, UsageProfile, day_actions

SMALL_FLASH = replace(UFS21_64GB, name="small", user_bytes=512 * MB, gc_free_low=4, gc_free_high=6,
                      idle_free_bytes=16 * MB)
SMALL_USE = UsageProfile(cache_bytes_per_day=96 * MB, media_bytes_per_day=16 * MB, update_median=8 * MB,
                         cache_quota=24 * MB, cache_apps=6, cache_file_median=16 * 1024, samples_per_day=2,
                         video_median=8 * MB)


def check_ftl(ftl: FTL) -> None:
    """The mapping tables agree with each other and with the per-block valid counts."""
    mapped = np.flatnonzero(ftl.l2p >= 0)
    assert (ftl.p2l[ftl.l2p[mapped]] == mapped).all()
    live = np.flatnonzero(ftl.p2l >= 0)
    assert len(live) == len(mapped)
    counts = np.bincount(live // ftl.ppb, minlength=ftl.n_blocks)
    assert (counts == ftl.valid).all()


def small_ftl(**kw) -> FTL:
    return FTL(replace(SMALL_FLASH, **kw), unit_bytes=16 * 1024)


def test_gc_copies_valid_units_and_keeps_the_map_consistent():
    ftl = small_ftl()
    ftl.write_range(0, ftl.n_lpn)  # the whole logical space once
    rng = np.random.default_rng(1)
    for _ in range(20):  # random overwrites: blocks end up partly valid, GC must copy
        ftl.write(np.unique(rng.integers(0, ftl.n_lpn, 2000)).astype(np.int32))
    check_ftl(ftl)
    assert ftl.copied_units > 0 and ftl.erases > 0
    # every physical unit beyond the user space is spare: valid units never exceed the logical space
    assert ftl.valid_units == ftl.n_lpn


def test_trim_spares_gc_the_copies_of_deleted_data():
    """The same writes, with and without discarding a deleted half: GC copies less when it was trimmed."""
    runs = []
    for trim in (False, True):
        ftl = small_ftl()
        ftl.write_range(0, ftl.n_lpn)
        deleted = np.arange(0, ftl.n_lpn, 2, dtype=np.int32)  # every other unit: scattered over all blocks
        if trim:
            assert ftl.trim(deleted) == len(deleted)
        rng = np.random.default_rng(2)
        kept = np.arange(1, ftl.n_lpn, 2, dtype=np.int32)
        for _ in range(10):
            ftl.write(np.unique(rng.choice(kept, 2000)))
        check_ftl(ftl)
        runs.append(ftl.copied_units)
    assert runs[1] < runs[0] / 2


def test_discard_cost_is_commands_plus_unmapped_pages():
    ftl = small_ftl()
    p = ftl.p
    # 10 mapped 16 KB units = 40 flash pages of 4 KB, in 3 commands
    assert ftl.discard_ns(10, 3) == 3 * p.discard_cmd_ns + 40 * p.discard_page_ns


def test_writeback_interleaves_files_written_together():
    ftl = small_ftl()
    fs = FileSystem(ftl)
    a = fs.create("media", 2 * MB)
    b = fs.create("cache:app0", 2 * MB)
    fs.flush()
    blocks_a = set((ftl.l2p[fs.files["media"][a]] // ftl.ppb).tolist())
    blocks_b = set((ftl.l2p[fs.files["cache:app0"][b]] // ftl.ppb).tolist())
    assert blocks_a & blocks_b  # the two files share flash blocks
    # a file deleted before writeback never reaches the flash
    c = fs.create("cache:app0", 1 * MB)
    units = fs.delete("cache:app0", c)
    fs.flush()
    assert (ftl.l2p[units] < 0).all()


def test_extents_counts_runs():
    assert extents(np.array([5, 6, 7, 10, 11, 20], dtype=np.int32)) == 3
    assert extents(np.array([], dtype=np.int32)) == 0


def _sim(policy: WamPolicy) -> PhoneDays:
    return PhoneDays(policy, SMALL_USE, SMALL_FLASH, 16 * 1024, seed=3)


def test_realtime_discards_make_a_later_fsync_wait():
    sim = _sim(WamPolicy("realtime"))
    sim.measuring = True
    fs = sim.fs
    victims = [fid for fid in list(fs.files["media"])[:5]]
    units = np.concatenate([fs.delete("media", f) for f in victims])
    sim._freed(units, 500)  # e.g. 500 discard commands for a cache directory
    expected = sim.ftl.discard_ns(len(units), 500)
    sim._sync(Action(sim.eng.now, "sync", who="system", tag="package manager"))
    t, who, tag, latency, wait = sim.syncs[-1]
    assert wait == expected and latency > wait
    assert (sim.ftl.l2p[units] < 0).all()  # discarded at once


def test_lazy_and_practical_do_not_discard_at_delete_time():
    for name in ("lazy", "practical"):
        sim = _sim(WamPolicy(name))
        fs = sim.fs
        units = fs.delete("media", next(iter(fs.files["media"])))
        sim._freed(units, 1)
        assert sim.busy_until == 0 and (sim.ftl.l2p[units] >= 0).all()
        assert sim.deleted_since_trim == len(units) * fs.unit


def test_practical_pauses_at_unlock_and_resumes_where_it_stopped():
    pol = WamPolicy("practical", threshold_bytes=1 * MB, group_pages=2048)  # 8 MB groups: 64 of them
    sim = _sim(pol)
    eng = sim.eng
    eng.process(sim._trimmer())
    sim._freed(sim.fs.delete("media", next(iter(sim.fs.files["media"]))), 1)
    eng.at(0, sim._do, Action(0, "screen_off"))
    # unlock during the round: after the start-up (1 s) and a few groups
    eng.at(pol.round_startup_ns + 20 * MS, sim._do, Action(0, "screen_on"))
    eng.run(until=5 * S)
    assert sim.rounds == 0 and 0 < sim.resume_group < sim.n_groups
    paused_at = sim.resume_group
    startup_paid = sim.trim_ns
    eng.at(eng.now, sim._do, Action(eng.now, "screen_off"))
    eng.run(until=60 * S)
    assert sim.rounds == 1 and sim.resume_group == 0
    # the resumed round did not pay the start-up again, and scanned only the groups left
    rest = sim.trim_ns - startup_paid
    assert rest < pol.round_startup_ns + (sim.n_groups - paused_at + 1) * (pol.group_scan_ns + 50 * MS)
    assert sim.fs.stale_units() == 0


def test_lazy_trim_is_killed_on_unplug_and_starts_over():
    pol = WamPolicy("lazy", lazy_idle_ns=10 * S, group_pages=2048)
    sim = _sim(pol)
    eng = sim.eng
    eng.process(sim._trimmer())
    sim._freed(sim.fs.delete("media", next(iter(sim.fs.files["media"]))), 1)
    eng.at(0, sim._do, Action(0, "screen_off"))
    eng.at(0, sim._do, Action(0, "plug"))
    eng.at(10 * S + pol.round_startup_ns + 10 * MS, sim._do, Action(0, "unplug"))
    # the user unlocks during the round: lazy WAM does not pause
    eng.at(10 * S + pol.round_startup_ns + 5 * MS, sim._do, Action(0, "screen_on"))
    eng.run(until=30 * S)
    assert sim.aborted == 1 and sim.rounds == 0 and sim.resume_group == 0


def test_days_are_deterministic_and_seeded():
    a = run_wam("practical", days=1, warmup_days=0, seed=5, usage=SMALL_USE, flash=SMALL_FLASH,
                threshold_gb=0.05).to_dict()
    b = run_wam("practical", days=1, warmup_days=0, seed=5, usage=SMALL_USE, flash=SMALL_FLASH,
                threshold_gb=0.05).to_dict()
    c = run_wam("practical", days=1, warmup_days=0, seed=6, usage=SMALL_USE, flash=SMALL_FLASH,
                threshold_gb=0.05).to_dict()
    assert a == b and a != c
    assert a["syncs"] > 0 and a["rounds_per_day"] >= 1


def test_compare_lazy_keeps_stale_data_realtime_none():
    out = compare(days=1, warmup_days=1, seed=1, usage=SMALL_USE, flash=SMALL_FLASH, threshold_gb=0.05)
    runs = {r["policy"].split("@")[0]: r for r in out["runs"]}
    assert runs["realtime"]["stale_gb_mean"] == 0
    assert runs["lazy"]["stale_gb_mean"] > runs["practical"]["stale_gb_mean"] > 0
    assert runs["realtime"]["trim_s_per_day"] > 0 and runs["realtime"]["rounds_per_day"] == 0


def test_usage_day_has_sessions_nights_and_syncs():
    import random
    acts = day_actions(UsageProfile(), random.Random(0), 0)
    kinds = [a.kind for a in acts]
    assert kinds.count("screen_on") == kinds.count("screen_off") > 30
    assert "plug" in kinds and "unplug" in kinds
    assert [a.t for a in acts] == sorted(a.t for a in acts)
    fg = [a for a in acts if a.kind == "db_write" and a.who == "fg"]
    ons = [(a.t, b.t) for a, b in zip([a for a in acts if a.kind == "screen_on"],
                                      [a for a in acts if a.kind == "screen_off"])]
    assert fg and all(any(on <= a.t < off for on, off in ons) for a in fg)  # FG apps write while in use


def test_knee_matches_kneedle_by_hand():
    # normalised: x_n = (x-1)/7, y_n = (y-min)/(max-min); Kneedle's difference (1 - y_n) - x_n is largest at
    # x = 3 (0.5651, against 0.5643 at x = 4) for the first curve and at x = 2 (0.795) for the second
    assert knee([1, 2, 3, 4, 5, 6, 7, 8], [64, 32, 16, 8, 7.9, 7.8, 7.7, 7.6]) == 3
    assert knee([1, 2, 3, 4, 5, 6, 7, 8], [100, 10, 9, 8, 7, 6, 5, 4]) == 2


def test_policy_names_are_checked():
    with pytest.raises(ValueError):
        WamPolicy("sometimes")


@pytest.mark.slow
def test_wam_cli(capsys):
    assert main(["iolab", "wam", "--policy", "bogus"]) == 2
    assert "unknown WAM policy" in capsys.readouterr().err
    assert main(["iolab", "wam", "--sweep", "1,x"]) == 2
    assert main(["iolab", "wam", "--scale", "0"]) == 2
    assert main(["iolab", "wam", "--policy", "realtime,practical", "--days", "1", "--warmup-days", "0",
                 "--unit-kb", "64", "--scale", "0.125", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # an 8 GB phone writing an eighth of the day's volumes, with the threshold scaled alike (6 GB -> 0.75 GB)
    assert out["flash"]["user_bytes"] == 8 * 10**9 and out["usage"]["cache_bytes_per_day"] == 12 * 2**30 // 8
    assert [r["policy"] for r in out["runs"]] == ["realtime", "practical@0.75GB"]
    assert out["runs"][0]["syncs"] > 0 and "rand_vs_realtime_pct" in out["runs"][1]


def test_wam_rows_judge_the_papers_figures(monkeypatch):
    """The reproduce rows from given runs: real-time 25% faster than lazy is within ±50% of +23%; practical
    at 1% cost within ±3 points of 2%; 10 -> 0 stalls is 100% removed; a knee at 6 GB is in 3-12 GB."""
    import droidlag.iolab.wam.figures as fig
    from droidlag.iolab.reproduce import Row

    def run(policy, rand, seq, stalls, stale):
        return {"policy": policy, "rand_write_mbps": rand, "seq_write_mbps": seq, "wam_stalls_5s": stalls,
                "stale_gb_mean": stale, "write_amplification": 1.0, "worst_sync_ms": 9000.0, "anr_stalls": 3,
                "snr_stalls": 0}

    monkeypatch.setattr(fig, "compare", lambda *a, **k: {"runs": [
        run("realtime", 125.0, 100.0, 10, 0.0), run("lazy", 100.0, 50.0, 0, 6.0), run("practical", 123.75, 99.0, 0, 2.0)]})
    monkeypatch.setattr(fig, "sweep", lambda *a, **k: {"knee_gb": 6.0, "points": [
        {"threshold_gb": g, "trim_s_per_day": 30 / g, "rand_write_mbps": 120.0} for g in (1, 2, 6, 12)]})
    rows = {r.figure: r for r in fig.wam_rows(Row)}
    rand = rows["WAM: real-time vs lazy, random write speed"]
    assert rand.value == pytest.approx(25.0) and rand.within_tolerance
    seq = rows["WAM: real-time vs lazy, sequential write speed"]
    assert seq.value == pytest.approx(100.0) and not seq.within_tolerance  # x2 is outside ±50% of 26.6%
    assert rows["Practical WAM's cost vs real-time, random write"].value == pytest.approx(1.0)
    assert rows["Practical WAM's cost vs real-time, random write"].within_tolerance
    assert rows["WAM-caused sync stalls over 5 s removed by practical WAM"].value == 100.0
    assert rows["Practical WAM: knee of the S_d sweep"].within_tolerance
