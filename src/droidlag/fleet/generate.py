"""Synthetic fleets, said to be synthetic: many phones' ANR/SNR dumps and gfxinfo sessions made by mutating real
corpus files (new pids, lock addresses, times, app names, build fingerprints), with parameters the statistics must
recover. Every fleet folder carries GENERATED.md (it is synthetic, from which files, with which seed), a manifest
CSV and truth.json (the planted parameters and the realized counts).

What is planted: ANR counts per app along a Zipf law, count(rank) = round(10^(b - a log10 rank)); root-cause groups
(one real dump template each) with given shares of the ANRs; a per-phone propensity (gamma, mean 1) that drives
both ANR and SNR counts (hence their correlation) and the slow/frozen frame counts; models and Android versions;
two cohorts, the second with ANR and SNR rates scaled (a fix's effect)."""
from __future__ import annotations

import csv
import json
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from droidlag.hangs.analyze import events_from_unit
from droidlag.hangs.cluster import cluster_features
from droidlag.io.dump_units import load_units

_PID_LINE = re.compile(r"^----- pid (\d+) at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(\.\d+)? -----$", re.M)
_CMD = re.compile(r"^Cmd line: (.+)$", re.M)
_FP = re.compile(r"^Build fingerprint: .*$", re.M)
_ADDR = re.compile(r"0x[0-9a-f]{8}\b")
_MAIN = re.compile(r'^"main" .*$', re.M)
_AT = re.compile(r"^  at .*\n", re.M)
# Frames this deep weigh 0.75^12 = 3% of a top frame in the features: dropping one keeps S above 0.95.
DROP_DEPTH = 12
_GFX_TOTAL = re.compile(r"^Total frames rendered: \d+$", re.M)
_GFX_JANKY = re.compile(r"^Janky frames: \d+ \([\d.]+%\)$", re.M)
_GFX_HIST = re.compile(r"^HISTOGRAM: .*$", re.M)
_GFX_PROC = re.compile(r"^\*\* Graphics info for pid \d+ \[[^\]]+\] \*\*$", re.M)


@dataclass
class FleetParams:
    """The generator's knobs (defaults: a small fleet with the paper's Zipf slope and cluster shares)."""

    phones: int = 60
    zipf_a: float = 1.41
    zipf_b: float = 2.3
    group_shares: tuple[float, ...] = (0.40, 0.20, 0.14)   # the rest is spread over the other templates
    snr_per_anr: float = 0.3
    propensity_shape: float = 1.0
    models: int = 15
    versions: tuple[str, ...] = ("7.0", "8.0", "9")
    days: int = 21
    fix_anr_factor: float = 0.68      # the second cohort's ANR rate against the first (paper: -32% with WAM)
    fix_snr_factor: float = 0.53      # (paper: -47%)
    seed: int = 0
    start: str = "2018-11-01 00:00:00"


@dataclass
class Template:
    path: str
    text: str
    app: str
    pid: int
    kind: str
    cause: str


@dataclass
class FleetTruth:
    """What was planted and what came out of the dice: per phone counts, per app ANR counts, per group ANR counts."""

    params: dict
    templates: list[dict] = field(default_factory=list)
    phones: list[dict] = field(default_factory=list)
    app_anr: dict[str, int] = field(default_factory=dict)
    group_anr: list[int] = field(default_factory=list)
    files: int = 0
    events: list[dict] = field(default_factory=list)   # per event file: path, kind, group (template), app


def load_templates(folder: str | Path) -> list[Template]:
    """Real dumps usable as templates: ART traces with a `----- pid N at TIME -----` header and `Cmd line:`, that
    hold exactly one event of the first process; an SNR template is one whose event is an SNR."""
    out: list[Template] = []
    feats = []
    for p in sorted(Path(folder).iterdir()):
        if not p.is_file() or p.suffix == ".md":
            continue
        text = p.read_text("utf-8", "replace")
        m, c = _PID_LINE.search(text), _CMD.search(text)
        if not m or not c:
            continue
        try:
            units = load_units(p)
        except Exception:   # a template candidate that does not read is simply not a template
            continue
        evs = [e for u in units for e in events_from_unit(u)]
        if len(evs) != 1 or evs[0].pid != int(m.group(1)) or evs[0].process != c.group(1).strip():
            continue
        out.append(Template(str(p), text, evs[0].process, evs[0].pid, evs[0].kind, evs[0].cause))
        feats.append(evs[0].features)
    # One template per root cause: templates that cluster together (repeated dumps of one hang) would merge groups.
    labels = cluster_features(feats, method="all_pairs").labels
    first: dict[int, Template] = {}
    for t, lab in zip(out, labels):
        first.setdefault(lab, t)
    return [t for t in out if first[labels[out.index(t)]] is t]


def _mutate(t: Template, app: str, pid: int, when: datetime, fingerprint: str, rng: np.random.Generator) -> str:
    text = t.text
    first = _PID_LINE.search(text)
    assert first is not None   # load_templates keeps only dumps with this header
    t0 = datetime.strptime(first.group(2), "%Y-%m-%d %H:%M:%S")

    def shift(m: re.Match) -> str:
        old = datetime.strptime(m.group(2), "%Y-%m-%d %H:%M:%S")
        p = pid if int(m.group(1)) == t.pid else int(m.group(1))
        return f"----- pid {p} at {(when + (old - t0)).strftime('%Y-%m-%d %H:%M:%S')} -----"
    text = _PID_LINE.sub(shift, text)
    if t.kind == "anr":
        text = re.sub(rf"^Cmd line: {re.escape(t.app)}$", f"Cmd line: {app}", text, flags=re.M)
    text = _FP.sub(f"Build fingerprint: '{fingerprint}'", text)
    again = _PID_LINE.search(text)
    text = _drop_deep_frame(text, again.start() if again else 0, rng)
    mapping: dict[str, str] = {}

    def addr(m: re.Match) -> str:
        a = m.group(0)
        if a not in mapping:
            mapping[a] = f"0x{int(rng.integers(0, 1 << 32)):08x}"
        return mapping[a]
    return _ADDR.sub(addr, text)


def _drop_deep_frame(text: str, start: int, rng: np.random.Generator) -> str:
    """Half the time, remove one frame deeper than DROP_DEPTH from the target process's main thread: the same root
    cause seen with a slightly different stack (near-duplicate signatures the clustering must join)."""
    if rng.random() < 0.5:
        return text
    m = _MAIN.search(text, start)
    if not m:
        return text
    end = text.find("\n\n", m.end())
    end = len(text) if end < 0 else end
    frames = [f for f in _AT.finditer(text, m.end(), end)]
    if len(frames) <= DROP_DEPTH + 1:
        return text
    f = frames[DROP_DEPTH + int(rng.integers(0, len(frames) - DROP_DEPTH))]
    return text[:f.start()] + text[f.end():]


def zipf_counts(a: float, b: float) -> list[int]:
    """ANR count of each app rank: round(10^(b - a log10 r)) for every rank whose count is at least 1."""
    out: list[int] = []
    r = 1
    while True:
        n = int(round(10 ** (b - a * np.log10(r))))
        if n < 1:
            return out
        out.append(n)
        r += 1


def _group_of_events(n: int, shares: tuple[float, ...], groups: int, rng: np.random.Generator) -> np.ndarray:
    rest = (1.0 - sum(shares)) / max(1, groups - len(shares))
    probs = np.array(list(shares[:groups]) + [rest] * (groups - len(shares)))
    counts = np.floor(probs / probs.sum() * n).astype(int)
    counts[0] += n - counts.sum()
    g = np.repeat(np.arange(groups), counts)
    rng.shuffle(g)
    return g


def _phones(params: FleetParams, rng: np.random.Generator) -> list[dict]:
    phones = []
    for i in range(params.phones):
        model = int(rng.integers(0, params.models))
        phones.append({"device_id": f"phone-{i:05d}", "model": f"SyntheticModel-{model + 1:02d}",
                       "android_version": params.versions[int(rng.integers(0, len(params.versions)))],
                       "cohort": "a-before" if i % 2 == 0 else "b-after",
                       "propensity": float(rng.gamma(params.propensity_shape, 1.0 / params.propensity_shape)),
                       "anr": 0, "snr": 0})
    return phones


def _draw_phone(phones: list[dict], kind: str, n: int, params: FleetParams, rng: np.random.Generator) -> np.ndarray:
    factor = params.fix_anr_factor if kind == "anr" else params.fix_snr_factor
    w = np.array([p["propensity"] * (factor if p["cohort"] == "b-after" else 1.0) for p in phones])
    return rng.choice(len(phones), size=n, p=w / w.sum())


def generate_fleet(out: str | Path, anr_templates_dir: str | Path, gfxinfo_template: str | Path,
                   params: FleetParams | None = None) -> FleetTruth:
    """Write a synthetic fleet under out (one folder per phone, manifest.csv, GENERATED.md, truth.json)."""
    params = params or FleetParams()
    rng = np.random.default_rng(params.seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    temps = load_templates(anr_templates_dir)
    anr_t = [t for t in temps if t.kind == "anr"]
    snr_t = [t for t in temps if t.kind == "snr"]
    if not anr_t:
        raise ValueError(f"{anr_templates_dir}: no usable ANR template")
    truth = FleetTruth(params=asdict(params), templates=[{"path": t.path, "kind": t.kind, "cause": t.cause}
                                                         for t in anr_t + snr_t])
    phones = _phones(params, rng)
    counts = zipf_counts(params.zipf_a, params.zipf_b)
    apps = [f"com.synthetic.app{r:04d}" for r in range(1, len(counts) + 1)]
    app_of = np.repeat(np.arange(len(counts)), counts)
    rng.shuffle(app_of)
    groups = _group_of_events(len(app_of), params.group_shares, len(anr_t), rng)
    start = datetime.strptime(params.start, "%Y-%m-%d %H:%M:%S")
    rows = []
    events = [("anr", int(a), int(g)) for a, g in zip(app_of, groups)]
    n_snr = int(round(params.snr_per_anr * len(events))) if snr_t else 0
    events += [("snr", -1, int(rng.integers(0, len(snr_t)))) for _ in range(n_snr)]
    who = np.concatenate([_draw_phone(phones, "anr", len(app_of), params, rng),
                          _draw_phone(phones, "snr", n_snr, params, rng)]).astype(int)
    truth.group_anr = [int((groups == g).sum()) for g in range(len(anr_t))]
    for k, ((kind, app_i, g), ph) in enumerate(zip(events, who)):
        phone = phones[ph]
        phone[kind] += 1
        t = anr_t[g] if kind == "anr" else snr_t[g]
        app = apps[app_i] if kind == "anr" else t.app
        when = start + timedelta(seconds=float(rng.uniform(0, params.days * 86400)))
        fp = f"synthetic/{phone['model']}/{phone['model']}:{phone['android_version']}/SYN1/1:user/release-keys"
        rel = Path(phone["device_id"]) / f"{kind}_{k:07d}.txt"
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(_mutate(t, app, int(rng.integers(1000, 32768)), when, fp, rng), encoding="utf-8")
        rows.append(rel)
        truth.events.append({"path": rel.as_posix(), "kind": kind, "group": g if kind == "anr" else -1 - g,
                             "app": app, "device_id": phone["device_id"]})
        if kind == "anr":
            truth.app_anr[app] = truth.app_anr.get(app, 0) + 1
    rows += _write_sessions(out, phones, Path(gfxinfo_template), rng)
    _write_manifest(out, rows, phones)
    truth.phones = phones
    truth.files = len(rows)
    (out / "truth.json").write_text(json.dumps(asdict(truth), indent=1))
    (out / "GENERATED.md").write_text(
        "# SYNTHETIC FLEET - not real data\n\nMade by `droidlag fleet generate` (droidlag.fleet.generate) by mutating "
        "real dumps (new pids, lock addresses, times, app names, build fingerprints) from "
        f"`{anr_templates_dir}` and `{gfxinfo_template}`, seed {params.seed}. Planted parameters and realized "
        "counts: truth.json. Never mix these files with real reports.\n")
    return truth


def _write_sessions(out: Path, phones: list[dict], template: Path, rng: np.random.Generator) -> list[Path]:
    """One gfxinfo file per phone from the real template's first process block, frame counts replaced: janky and
    frozen frames scale with the phone's propensity."""
    text = template.read_text("utf-8", "replace")
    heads = list(_GFX_PROC.finditer(text))
    if not heads:
        return []
    block = text[heads[0].start():heads[1].start() if len(heads) > 1 else len(text)]
    rows = []
    for phone in phones:
        frames = int(rng.integers(2000, 6000))
        slow = int(rng.binomial(frames, min(0.9, 0.08 * phone["propensity"])))
        frozen = int(rng.binomial(frames, min(0.2, 0.002 * phone["propensity"])))
        phone.update(frames=frames, slow_frames=slow, frozen_frames=frozen)
        b = _GFX_TOTAL.sub(f"Total frames rendered: {frames}", block)
        b = _GFX_JANKY.sub(f"Janky frames: {slow} ({100.0 * slow / frames:.2f}%)", b)
        b = _GFX_HIST.sub(f"HISTOGRAM: 5ms={frames - slow} 17ms={slow - frozen} 700ms={frozen}", b)
        body = ("DUMP OF SERVICE gfxinfo:\nApplications Graphics Acceleration Info:\n"
                f"Uptime: {int(rng.integers(10**6, 10**8))} Realtime: 0\n\n" + b)
        rel = Path(phone["device_id"]) / "gfxinfo.txt"
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(body, encoding="utf-8")
        rows.append(rel)
    return rows


def _write_manifest(out: Path, rows: list[Path], phones: list[dict]) -> None:
    by_id = {p["device_id"]: p for p in phones}
    with open(out / "manifest.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["path", "device_id", "model", "android_version", "cohort"])
        for rel in rows:
            p = by_id[rel.parts[0]]
            w.writerow([rel.as_posix(), p["device_id"], p["model"], p["android_version"], p["cohort"]])
