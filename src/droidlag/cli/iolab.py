"""`droidlag iolab`: simulate the phone storage stack under I/O policies, replay block traces, run the
real-kernel host lab, and reproduce the papers' figures."""
from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("iolab", help="I/O lab: simulate FAIO/FastTrack/SmartIO/QASIO/RCP side by side, replay "
                                     "block traces, run real foreground/background experiments on this kernel")
    s = p.add_subparsers(dest="iolab_command", metavar="ACTION")

    q = s.add_parser("sim", help="run a paper scenario under one or more policies")
    q.add_argument("--scenario", required=True, help="gallery, camera, game, launch, smartio-launch, "
                                                     "smartio-runtime, sporadic, seq-read, rand-read")
    q.add_argument("--policy", default="cfq", help="comma-separated: noop,cfq,deadline,qasio,rcp,smartio,"
                                                    "faio-fpm,faio-fid,faio,fasttrack")
    q.add_argument("--device", default="ufs", choices=["ufs", "emmc"])
    q.add_argument("--background", type=int, default=None, help="number of background apps (default: scenario's)")
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--scale", type=float, default=1.0, help="scale the scenario's data sizes")
    q.add_argument("--plot", metavar="PNG", help="write a chart of the response times")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=run_sim)

    r = s.add_parser("replay", help="replay a block trace (blkparse text, S start-up, MQSim ASCII)")
    r.add_argument("trace")
    r.add_argument("--policy", default="cfq")
    r.add_argument("--device", default="ufs", choices=["ufs", "emmc"])
    r.add_argument("--background", type=int, default=0, help="background writer apps beside the trace")
    r.add_argument("--closed-loop", action="store_true", help="each process waits for its previous request")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=run_replay)

    h = s.add_parser("host", help="real foreground-reader/background-writer experiments on this kernel (fio)")
    h.add_argument("--size-mb", type=int, default=256,
                   help="size of the scratch disk image, and of the data the WAM experiment fills and deletes "
                        "per round")
    h.add_argument("--runtime", type=int, default=6, help="seconds per fio run")
    h.add_argument("--scratch", default=None, help="parent directory for the scratch directory")
    h.add_argument("--experiments", default="policies,wam",
                   help="comma-separated: policies (schedulers, I/O priorities, cgroup weights; fio), "
                        "wam (ext4 -o discard vs nodiscard + fstrim, fsync stalls while deleting files)")
    h.add_argument("--policies", default=None,
                   help="comma-separated subset of none,mq-deadline,kyber,bfq,bfq+ioprio,mq-deadline+ioprio,"
                        "bfq+cgroup-weights (default: all)")
    h.add_argument("--cgroup-weights", default="1000,100", metavar="FG,BG",
                   help="BFQ weights of the reader's and the writers' cgroups (1..1000)")
    h.add_argument("--wam-rounds", type=int, default=2, help="fill+delete rounds in the WAM experiment")
    h.add_argument("--json", action="store_true")
    h.set_defaults(func=run_host)

    w = s.add_parser("wam", help="write-amplification mitigation: days of phone use on a simulated FTL under "
                                 "real-time discards, lazy daily fstrim and practical batched trim")
    w.add_argument("--policy", default="realtime,lazy,practical", help="comma-separated: realtime,lazy,practical")
    w.add_argument("--threshold-gb", type=float, default=6.0, help="practical WAM's S_d threshold (GB deleted)")
    w.add_argument("--sweep", nargs="?", const="default", metavar="GB,GB,...",
                   help="practical WAM over S_d thresholds, with the knee (default 1,2,3,4,6,8,12,16)")
    w.add_argument("--days", type=int, default=3, help="measured days (after --warmup-days)")
    w.add_argument("--warmup-days", type=int, default=1)
    w.add_argument("--fill", type=float, default=None, help="fraction of /data in use (default: the usage profile's)")
    w.add_argument("--unit-kb", type=int, default=16, help="FTL mapping unit in KB, 4 to 64 (4 = the flash page; coarser is faster)")
    w.add_argument("--scale", type=float, default=1.0,
                   help="a smaller phone for quick runs: device size, daily write volumes and the S_d threshold "
                        "times this fraction (0 < F <= 1)")
    w.add_argument("--seed", type=int, default=0)
    w.add_argument("--plot", metavar="PNG", help="write a chart")
    w.add_argument("--json", action="store_true")
    w.set_defaults(func=run_wam_cli)

    x = s.add_parser("reproduce", help="the papers' figures next to the simulator's, with tolerances")
    x.add_argument("--seed", type=int, default=0)
    x.add_argument("--scale", type=float, default=1.0)
    x.add_argument("--plot", metavar="PNG", help="write a chart of paper vs droidlag")
    x.add_argument("--no-wam", action="store_true", help="leave out the WAM figures (they take ~2 minutes)")
    x.add_argument("--json", action="store_true")
    x.set_defaults(func=run_reproduce)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def _policies(text: str) -> list[str]:
    from droidlag.iolab.sim.policies import POLICIES

    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n not in POLICIES]
    if bad:
        raise ValueError(f"unknown policy {', '.join(bad)}; choose from {', '.join(POLICIES)}")
    return names


def run_sim(args) -> int:
    from droidlag.cli.common import print_json
    from droidlag.iolab import simulate
    from droidlag.iolab.sim.scenarios import SCENARIOS
    if args.scenario not in SCENARIOS:
        print(f"droidlag: unknown scenario {args.scenario!r}; choose from {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    try:
        pols = _policies(args.policy)
    except ValueError as e:
        print(f"droidlag: {e}", file=sys.stderr)
        return 2
    out = simulate(args.scenario, pols, device=args.device, seed=args.seed, scale=args.scale,
                   background=args.background)
    if args.plot:
        from droidlag.iolab.plots import plot_sim
        plot_sim(out, args.plot)
    if args.json:
        print_json(out)
        return 0
    fo = out["fg_only"]
    print(f"{args.scenario} on {args.device}: {out['description']}")
    print(f"  FG only: {fo['mean_ms']:.0f} ms    background apps: {out['background']}")
    print(f"  {'policy':<10}{'mean ms':>9}{'p50':>8}{'p90':>8}{'p99':>8}{'max':>8}{'vs cfq':>8}{'vs FG only':>11}"
          f"{'BG MB/s':>9}{'max write wait ms':>19}")
    for r in out["runs"]:
        vs = f"{r['cut_vs_cfq_pct']:+.0f}%" if r.get("cut_vs_cfq_pct") is not None else "-"
        print(f"  {r['policy']:<10}{r['mean_ms']:9.0f}{r['p50_ms']:8.0f}{r['p90_ms']:8.0f}{r['p99_ms']:8.0f}"
              f"{r['max_ms']:8.0f}{vs:>8}{'x{:.2f}'.format(r['vs_fg_only']):>11}{r['bg_mb_s']:9.0f}{r['max_write_wait_ms']:19.0f}")
    print("  (vs cfq: delay cut against stock CFQ under the same load; BG MB/s: device write throughput kept)")
    return 0


def run_replay(args) -> int:
    from droidlag.cli.common import print_json
    from droidlag.iolab.replay import read_block_trace, replay

    try:
        pols = _policies(args.policy)
    except ValueError as e:
        print(f"droidlag: {e}", file=sys.stderr)
        return 2
    trace = read_block_trace(args.trace)
    rows = [replay(trace, p, args.device, args.seed, args.background, args.closed_loop) for p in pols]
    if args.json:
        print_json({"summary": trace.summary(), "warnings": [w.to_dict() for w in trace.warnings], "runs": rows})
        return 0
    sm = trace.summary()
    print(f"{sm['path']}: {sm['format']} trace, {sm['requests']} requests ({sm['reads']} reads, {sm['writes']} "
          f"writes), {sm['mib']} MiB over {sm['span_s']:.3f} s")
    for w in trace.warnings[:5]:
        print(f"  warning: {w}")
    print(f"  {'policy':<10}{'mean ms':>9}{'p50':>8}{'p90':>8}{'p99':>8}{'max':>9}{'done in s':>11}")
    for r in rows:
        print(f"  {r['policy']:<10}{r['mean_ms']:9.2f}{r['p50_ms']:8.2f}{r['p90_ms']:8.2f}{r['p99_ms']:8.2f}"
              f"{r['max_ms']:9.2f}{r['completion_s']:11.3f}")
    return 0


def run_host(args) -> int:
    from droidlag.cli.common import print_json
    from droidlag.iolab.host import EXPERIMENTS, POLICIES, format_host, run_host_lab

    exps = [e.strip() for e in args.experiments.split(",") if e.strip()]
    pols = [p.strip() for p in args.policies.split(",") if p.strip()] if args.policies else None
    bad = [e for e in exps if e not in EXPERIMENTS] + [p for p in pols or [] if p not in POLICIES]
    try:
        fg_bg = [int(w) for w in args.cgroup_weights.split(",")]
        if len(fg_bg) != 2 or not all(1 <= w <= 1000 for w in fg_bg):
            raise ValueError
    except ValueError:
        bad.append(f"--cgroup-weights {args.cgroup_weights} (want FG,BG in 1..1000)")
    if args.size_mb < 1 or args.runtime < 1 or args.wam_rounds < 1:
        bad.append("--size-mb, --runtime and --wam-rounds must be at least 1")
    if bad or not exps:
        print(f"droidlag: bad host lab option: {', '.join(bad) or '--experiments is empty'}; experiments: "
              f"{', '.join(EXPERIMENTS)}; policies: {', '.join(POLICIES)}", file=sys.stderr)
        return 2
    res = run_host_lab(size_mb=args.size_mb, runtime_s=args.runtime, scratch_parent=args.scratch, policies=pols,
                       experiments=exps, cgroup_weights=(fg_bg[0], fg_bg[1]), wam_rounds=args.wam_rounds)
    if args.json:
        print_json(res)
    else:
        print(format_host(res))
    return 0


def run_reproduce(args) -> int:
    from tqdm import tqdm

    from droidlag.cli.common import print_json
    from droidlag.iolab.reproduce import format_table, reproduce

    with tqdm(unit="sim-day", desc="WAM days", file=sys.stderr, leave=False, disable=None) as bar:
        res = reproduce(seed=args.seed, scale=args.scale, wam=not args.no_wam, progress=bar.update)
    if args.plot:
        from droidlag.iolab.plots import plot_reproduce
        plot_reproduce(res, args.plot)
    if args.json:
        print_json(res)
    else:
        print(format_table(res))
    return 0


def run_wam_cli(args) -> int:
    from dataclasses import replace

    from droidlag.cli.common import print_json
    from droidlag.iolab import wam

    bad = []
    pols = [p.strip() for p in args.policy.split(",") if p.strip()]
    bad += [f"unknown WAM policy {p!r}" for p in pols if p not in wam.WAM_POLICIES]
    thresholds: list[float] = []
    if args.sweep:
        try:
            thresholds = list(wam.DEFAULT_SWEEP_GB) if args.sweep == "default" else \
                [float(x) for x in args.sweep.split(",") if x.strip()]
        except ValueError:
            bad.append(f"--sweep {args.sweep!r} is not a list of GB")
        if any(t <= 0 for t in thresholds) or (args.sweep and len(thresholds) < 3):
            bad.append("--sweep needs at least three positive thresholds")
    if args.days < 1 or args.warmup_days < 0 or args.threshold_gb <= 0:
        bad.append("--days must be at least 1, --warmup-days at least 0, --threshold-gb positive")
    if args.unit_kb < 4 or args.unit_kb % 4 or args.unit_kb > 64:
        bad.append("--unit-kb must be a multiple of 4 between 4 and 64")
    if args.fill is not None and not 0.1 <= args.fill <= 0.97:
        bad.append("--fill must be between 0.1 and 0.97")
    if not 0 < args.scale <= 1:
        bad.append("--scale must be in (0, 1]")
    if bad or not pols:
        print(f"droidlag: {'; '.join(bad) or '--policy is empty'} (policies: {', '.join(wam.WAM_POLICIES)})",
              file=sys.stderr)
        return 2
    usage = wam.UsageProfile() if args.fill is None else replace(wam.UsageProfile(), fs_used_fraction=args.fill)
    usage, flash = wam.scaled_phone(args.scale, usage)
    kw = dict(days=args.days, warmup_days=args.warmup_days, seed=args.seed, usage=usage, flash=flash,
              unit_bytes=args.unit_kb * 1024)
    from tqdm import tqdm

    n_runs = len(thresholds) if thresholds else len(pols)
    from droidlag.iolab.wam.fs import FileSystemFull

    try:
        with tqdm(total=n_runs * (args.days + args.warmup_days), unit="sim-day", file=sys.stderr, leave=False,
                  disable=None) as bar:
            if thresholds:
                out = wam.sweep([t * args.scale for t in thresholds], progress=bar.update, **kw)
            else:
                out = wam.compare(pols, threshold_gb=args.threshold_gb * args.scale, progress=bar.update, **kw)
    except FileSystemFull as e:
        print(f"droidlag: {e}: lower --fill or --unit-kb", file=sys.stderr)
        return 2
    if args.plot:
        from droidlag.iolab.plots import plot_wam
        plot_wam(out, args.plot)
    if args.json:
        print_json(out)
    else:
        print(wam.format_sweep(out) if thresholds else wam.format_compare(out))
    return 0
