"""`droidlag fleet ingest|cluster|stats|report|export|generate`: many phones' reports in one store, root-cause
clusters across them, and the population statistics, on DuckDB (default) or Spark (`--engine spark`)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fleet", help="many phones' reports in one DuckDB store: ingest, root-cause clusters, "
                                     "population statistics, fleet report; Spark for the large ones")
    fs = p.add_subparsers(dest="fleet_command", metavar="COMMAND")

    def engine_args(q: argparse.ArgumentParser) -> None:
        q.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb",
                       help="where the work runs (default duckdb; spark needs droidlag[spark] and Java 17+)")
        q.add_argument("--master", default="local[2]", help="Spark master URL (default local[2])")

    q = fs.add_parser("ingest", help="add folders, archives, dumps, bugreports and gfxinfo of many phones")
    q.add_argument("paths", nargs="*", metavar="PATH",
                   help="files, folders, archives (default with --manifest: the files the manifest names)")
    q.add_argument("--db", required=True, help="the store (a DuckDB file; created if missing)")
    q.add_argument("--manifest", help="CSV mapping files to devices: path,device_id[,model,hardware,"
                                      "android_version,cohort,time]")
    q.add_argument("--jobs", type=int, default=None, help="worker processes (default: the cores)")
    q.add_argument("--batch", type=int, default=500, help="files per transaction (default 500)")
    q.add_argument("--no-cluster", action="store_true", help="do not cluster the new events after ingest")
    q.add_argument("--json", action="store_true")
    q.add_argument("--quiet", action="store_true", help="no progress bar")
    engine_args(q)
    q.set_defaults(func=run_ingest)

    q = fs.add_parser("cluster", help="give new events root-cause cluster ids (existing ids are kept)")
    q.add_argument("--db", required=True)
    q.add_argument("--threshold", type=float, default=0.95)
    engine_args(q)
    q.set_defaults(func=run_cluster)

    q = fs.add_parser("stats", help="the paper's population statistics and Android vitals' measures")
    q.add_argument("--db", required=True)
    q.add_argument("--json", action="store_true")
    engine_args(q)
    q.set_defaults(func=run_stats)

    q = fs.add_parser("report", help="the fleet page: DIR/fleet.html with plots and DIR/fleet.json")
    q.add_argument("--db", required=True)
    q.add_argument("--out", required=True, metavar="DIR")
    engine_args(q)
    q.set_defaults(func=run_report)

    q = fs.add_parser("export", help="every table of the store as Parquet")
    q.add_argument("--db", required=True)
    q.add_argument("--out", required=True, metavar="DIR")
    q.set_defaults(func=run_export)

    q = fs.add_parser("generate", help="a SYNTHETIC fleet made from real corpus dumps (said so in GENERATED.md)")
    q.add_argument("out", metavar="DIR")
    q.add_argument("--dumps", required=True, help="folder of real ART thread dumps used as templates")
    q.add_argument("--gfxinfo", required=True, help="a real dumpsys gfxinfo file used as the session template")
    q.add_argument("--phones", type=int, default=60)
    q.add_argument("--zipf-a", type=float, default=1.41)
    q.add_argument("--zipf-b", type=float, default=2.3)
    q.add_argument("--seed", type=int, default=0)
    q.set_defaults(func=run_generate)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _spark(args):
    from droidlag.fleet.spark import spark_session
    return spark_session(args.master)


def run_ingest(args) -> int:
    from droidlag.cli.common import EXIT_NO_INPUT, print_json
    from droidlag.fleet.ingest import ingest
    if not args.paths and not args.manifest:
        print("droidlag fleet ingest: give PATH... or --manifest CSV (whose files are then ingested)", file=sys.stderr)
        return 2
    bar = None
    if not args.quiet and sys.stderr.isatty():
        from tqdm import tqdm
        bar = tqdm(unit="file", file=sys.stderr, leave=False)
    progress = (lambda n, _b: bar.update(n - bar.n)) if bar else None
    parser = None
    spark = None
    if args.engine == "spark":
        from droidlag.fleet.spark import spark_parsed
        spark = _spark(args)
        parser = lambda files: spark_parsed(spark, files)
    summary = ingest(args.paths, args.db, manifest=args.manifest, jobs=args.jobs, batch_size=args.batch,
                     progress=progress, parser=parser)
    if bar is not None:
        bar.close()
    result = summary.to_dict()
    if not args.no_cluster and summary.events:
        result["clustering"] = vars(_cluster(args, spark))
    if args.json:
        print_json(result)
    else:
        _print_ingest(result)
    return EXIT_NO_INPUT if summary.files and not summary.added and not summary.already else 0


def _print_ingest(r: dict) -> None:
    mb = r["bytes"] / 1e6
    empty = f" ({len(r['empty'])} holding no event or session)" if r.get("empty") else ""
    print(f"{r['files']} file(s): {r['added']} added{empty}, {r['already_in_store']} already in the store, "
          f"{len(r['skipped'])} skipped, {len(r['failed'])} failed; {r['events']} event(s), {r['sessions']} "
          f"session(s); {mb:.1f} MB in {r['seconds']:.1f} s ({mb / max(r['seconds'], 1e-9):.1f} MB/s)")
    for reason, n in r["skipped_by_reason"].items():
        print(f"  skipped {n}: {reason}")
    for f in r["failed"][:20]:
        print(f"  failed: {f['reason']}", file=sys.stderr)
    for note in r.get("notes", []):
        print(f"  manifest: {note}", file=sys.stderr)
    c = r.get("clustering")
    if c:
        print(f"clusters: {c['new_signatures']} new signature(s), {c['new_clusters']} new cluster(s), "
              f"{c['compared']} exact comparison(s) of {c['candidates']} candidate(s)")


def _cluster(args, spark=None):
    from droidlag.hangs.config import HangsConfig
    config = HangsConfig(threshold=getattr(args, "threshold", 0.95))
    if args.engine == "spark":
        from droidlag.fleet.spark import spark_cluster
        return spark_cluster(args.db, spark or _spark(args), config)
    from droidlag.fleet.pipeline import cluster_store
    return cluster_store(args.db, config)


def run_cluster(args) -> int:
    if not 0.0 <= args.threshold <= 1.0:
        print("droidlag fleet cluster: --threshold must be in [0, 1]", file=sys.stderr)
        return 2
    run = _cluster(args)
    print(f"{run.signatures} signature(s), {run.new_signatures} new; {run.new_clusters} new cluster(s); "
          f"{run.compared} exact comparison(s) of {run.candidates} candidate(s)")
    return 0


def _stats(args) -> dict:
    if args.engine == "spark":
        from droidlag.fleet.spark import spark_stats
        return spark_stats(args.db, _spark(args))
    from droidlag.fleet.pipeline import store_stats
    return store_stats(args.db)


def _stats_or_none(args) -> dict | None:
    """The store's statistics, or None (said on stderr) when the store does not exist: exit 3, nothing to read."""
    try:
        return _stats(args)
    except FileNotFoundError as e:
        print(f"droidlag: {e}", file=sys.stderr)
        return None


def run_stats(args) -> int:
    from droidlag.cli.common import print_json
    stats = _stats_or_none(args)
    if stats is None:
        return 3
    if args.json:
        print_json(stats)
    else:
        _print_stats(stats)
    return 0


def _f(x, pct: bool = False) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.1f}%" if pct else f"{x:.2f}"


def _print_stats(s: dict) -> None:
    a = s["prevalence"]["all"]
    print(f"{s['devices']} phone(s), {s['events']['anr']} ANR, {s['events']['snr']} SNR, "
          f"{s['events']['sessions']} frame session(s)")
    print(f"per phone: ANR mean {_f(a['anr_per_phone'].get('mean'))} max {_f(a['anr_per_phone'].get('max'))}, "
          f"SNR mean {_f(a['snr_per_phone'].get('mean'))}; phones with none "
          f"{_f(a['events_per_phone'].get('share_zero'), True)}")
    print(f"phones with an ANR or SNR per ten days: {_f(s['ten_day_windows']['mean_share_any'], True)} (mean)")
    for v, b in s["prevalence"]["by_android_version"].items():
        print(f"  Android {v}: {b['phones']} phone(s), ANR/phone {_f(b['anr_per_phone'].get('mean'))}, "
              f"SNR/phone {_f(b['snr_per_phone'].get('mean'))}")
    c = s["correlations"]
    print(f"correlation per phone: ANR-SNR {_f(c['anr_snr_per_phone'])}, SR-FF {_f(c['sr_ff_per_phone'])}; "
          f"per model: ANR-SNR {_f(c['anr_snr_per_model'])}, SR-FF {_f(c['sr_ff_per_model'])}")
    i = s["intervals"]["anr_to_next_snr"]
    print(f"ANR -> next SNR: median {_f(i.get('median_days'))} d, mean {_f(i.get('mean_days'))} d (n={i['n']})")
    z = s["apps"]["zipf"]
    print(f"ANRs by app: {s['apps']['anr_apps']} app(s); Zipf a={_f(z['a'])} b={_f(z['b'])} R^2={_f(z['r2'])}; "
          f"top-10 share {_f(s['apps']['top10_share'], True)}"
          + (f" ({s['apps']['unnamed_app_anrs']} ANR(s) name no app, left out)"
             if s["apps"].get("unnamed_app_anrs") else ""))
    cl = s["clusters"]
    print(f"clusters: {cl['clusters']}; three largest hold {_f(cl['top3_share'], True)}")
    print("causes: " + ", ".join(f"{k} {_f(v['share'], True)}" for k, v in s["causes"].items()))
    comp = s["cohorts"].get("comparison")
    if comp:
        print(f"cohort {comp['after']} vs {comp['before']}: ANR/phone {_f(comp['anr_change'], True)} "
              f"(CI {comp['anr_change_ci95']}), SNR/phone {_f(comp['snr_change'], True)} (CI {comp['snr_change_ci95']})")
    v = s["vitals"]
    print(f"vitals: user-perceived ANR rate {_f(v['user_perceived_anr_rate'], True)} (bad behaviour > "
          f"{_f(v['anr_bad_behaviour_threshold'], True)}), slow sessions {_f(v['slow_session_share'], True)}, "
          f"frozen sessions {_f(v['frozen_session_share'], True)}")


def run_report(args) -> int:
    from droidlag.report.fleet_html import write_fleet_report
    stats = _stats_or_none(args)
    if stats is None:
        return 3
    print(write_fleet_report(stats, args.out))
    return 0


def run_export(args) -> int:
    from droidlag.fleet.store import connect, export_parquet
    try:
        con = connect(args.db, read_only=True)
    except FileNotFoundError as e:
        print(f"droidlag: {e}", file=sys.stderr)
        return 3
    try:
        for f in export_parquet(con, args.out):
            print(f)
    finally:
        con.close()
    return 0


def run_generate(args) -> int:
    from droidlag.fleet.generate import FleetParams, generate_fleet
    if not Path(args.dumps).is_dir() or not Path(args.gfxinfo).is_file():
        print("droidlag fleet generate: --dumps takes a folder of thread dumps, --gfxinfo one gfxinfo file",
              file=sys.stderr)
        return 2
    params = FleetParams(phones=args.phones, zipf_a=args.zipf_a, zipf_b=args.zipf_b, seed=args.seed)
    truth = generate_fleet(args.out, args.dumps, args.gfxinfo, params)
    print(f"SYNTHETIC fleet: {truth.files} file(s) for {params.phones} phone(s) in {args.out} "
          f"(manifest.csv, truth.json, GENERATED.md)")
    return 0
