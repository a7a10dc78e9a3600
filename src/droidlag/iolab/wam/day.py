"""Days of phone use on a flash device under one WAM policy (wam.md): real-time discards, Android's lazy
daily fstrim, or the practical batched trim; the synchronous writes they stall and the write speed they
leave.

The policies differ only in when freed units are discarded:
- `realtime` (the `discard` mount option): every deletion sends its discards at once; they run in the
  device's FIFO and a later fsync's flush waits for all of them (the quasi-asynchronous trap).
- `lazy` (idle maintenance): one fstrim of the whole free space when the phone has been idle for an hour
  and is charging, at most once a day; it cannot be paused, and if charging stops it is killed and the next
  round starts from the first group again.
- `practical`: counts the bytes deleted since the last trim (S_d); once S_d reaches the threshold, trims
  the free space in groups of 32K pages while the screen is locked, pausing at unlock (after the group in
  flight) and resuming at lock from the group it stopped at.
A trim round costs a fixed start-up time, a scan per group, and the discards of what it unmaps.
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field

import numpy as np

from droidlag.iolab.sim.engine import MS, Engine, Event, S
from droidlag.iolab.sim.ftl import FTL, UFS21_64GB, FlashProfile
from droidlag.iolab.wam.fs import FileSystem, extents
from droidlag.iolab.wam.usage import (
    CREATE,
    DAY,
    DB_WRITE,
    DELETE,
    GB,
    HOUR,
    KB,
    MB,
    PLUG,
    SAMPLE,
    SCREEN_OFF,
    SCREEN_ON,
    SYNC,
    UNPLUG,
    UsageProfile,
    day_actions,
)

WAM_POLICIES = ("realtime", "lazy", "practical")
ANR_NS = 5 * S     # an app's main thread blocked this long: ANR
SNR_NS = 60 * S    # a watched system thread blocked this long: the watchdog restarts system_server


@dataclass(frozen=True)
class WamPolicy:
    """A WAM policy and its knobs (the paper's values by default)."""

    name: str = "practical"
    threshold_bytes: int = 6 * GB     # practical: S_d that starts a batched trim
    group_pages: int = 32 * 1024      # 4 KB pages per trim group (~128 MB)
    round_startup_ns: int = 1 * S     # fixed cost of a trim round (file-system sync and bitmap load)
    group_scan_ns: int = 2 * MS       # reading one group's free-space bitmap
    lazy_idle_ns: int = 1 * HOUR      # idle maintenance waits this long after the screen goes off

    def __post_init__(self):
        if self.name not in WAM_POLICIES:
            raise ValueError(f"unknown WAM policy {self.name!r} (choose from {', '.join(WAM_POLICIES)})")
        if self.threshold_bytes <= 0 or self.group_pages <= 0:
            raise ValueError("threshold and group size must be positive")

    @property
    def label(self) -> str:
        return f"practical@{self.threshold_bytes / GB:g}GB" if self.name == "practical" else self.name


@dataclass
class WamResult:
    """What one policy did over the measured days. Times in ns unless named _s or _ms; speeds in MB/s."""

    policy: str
    days: int
    syncs: int = 0
    anr_stalls: int = 0              # FG app syncs over 5 s
    snr_stalls: int = 0              # system syncs over 60 s
    wam_stalls_5s: int = 0           # syncs of either kind that waited over 5 s for discards
    worst_sync_ms: float = 0.0
    sync_p99_ms: float = 0.0
    rand_write_mbps: float = 0.0     # sustained: the clean rate less the GC work the days' writes caused
    seq_write_mbps: float = 0.0
    burst_rand_write_mbps: float = 0.0  # a benchmark (AndroBench-like) run at the samples
    burst_seq_write_mbps: float = 0.0
    trim_s_per_day: float = 0.0      # device and host time spent trimming (discards included)
    rounds_per_day: float = 0.0
    aborted_rounds: int = 0
    deleted_gb_per_day: float = 0.0
    written_gb_per_day: float = 0.0
    stale_gb_mean: float = 0.0       # deleted but still valid in the FTL, at the samples
    write_amplification: float = 0.0
    samples: list = field(default_factory=list)
    worst: list = field(default_factory=list)  # the longest sync stalls with what they waited for

    def to_dict(self) -> dict:
        return asdict(self)


def _bootstrap(usage: UsageProfile, flash: FlashProfile, unit_bytes: int, seed: int) -> tuple[FTL, FileSystem]:
    """A phone that has been in use for a long time: every logical unit written at least once, the file
    system filled to its level with apps, databases, caches and media, and one trim of the free space."""
    ftl = FTL(flash, unit_bytes)
    ftl.write_range(0, ftl.n_lpn)
    fs = FileSystem(ftl)
    rng = random.Random(seed * 7919 + 1)
    target = int(usage.fs_used_fraction * flash.user_bytes)
    cap = flash.user_bytes // 50  # no single file over 2% of the device
    db = min(50 * MB, target // 1000)
    plan: list[tuple[str, int]] = [("db", db)] * 40
    total = 40 * db
    while total < 0.3 * target:
        size = int(min(150 * MB * np.exp(rng.gauss(0, 0.8)), cap))
        plan.append(("app", size))
        total += size
    cache = 0
    while cache < usage.cache_quota * 3 // 4:
        plan.append(("cache", 20 * usage.cache_file_median * 2))
        cache += 20 * usage.cache_file_median * 2
    total += cache
    while total < target:
        size = int(4 * MB * np.exp(rng.gauss(0, 0.3))) if rng.random() < 0.9 else \
            int(min(usage.video_median * np.exp(rng.gauss(0, 0.8)), cap))
        plan.append(("media", size))
        total += size
    rng.shuffle(plan)
    for i, (kind, size) in enumerate(plan):
        if kind == "cache":
            fs.create_many(f"cache:app{rng.randrange(usage.cache_apps)}", [usage.cache_file_median * 2] * 20)
        else:
            fs.create(kind, size)
        if i % 8 == 7:
            fs.flush()
    fs.flush()
    free = np.flatnonzero(~fs.used).astype(np.int32)
    ftl.trim(free)
    return ftl, fs


_BOOT_CACHE: dict = {}


def aged_phone(usage: UsageProfile, flash: FlashProfile = UFS21_64GB, unit_bytes: int = 16 * KB,
               seed: int = 0) -> tuple[FTL, FileSystem]:
    """The starting state, built once per (usage, flash, unit, seed) and copied for each policy: the filled
    phone, then days of the same use (with real-time discards) until the host has written 1.5x the space
    the FTL had free, so garbage collection is in its steady state and free space is scattered."""
    key = (usage, flash, unit_bytes, seed)
    if key not in _BOOT_CACHE:
        _BOOT_CACHE.clear()
        ftl, fs = _bootstrap(usage, flash, unit_bytes, seed)
        daily = usage.cache_bytes_per_day + usage.media_bytes_per_day + usage.updates_per_day * usage.update_median
        slack = (ftl.n_blocks * ftl.ppb - ftl.valid_units) * unit_bytes
        history = PhoneDays(WamPolicy("realtime"), usage, flash, unit_bytes, seed + 1_000_003, start=(ftl, fs))
        history.run(days=0, warmup_days=max(1, int(np.ceil(1.5 * slack / daily))))
        _BOOT_CACHE[key] = (history.ftl, history.fs)
    ftl, fs = _BOOT_CACHE[key]
    ftl2 = ftl.copy()
    return ftl2, fs.copy(ftl2)


class PhoneDays:
    """The simulation: actions of `days` days played on the engine, a trimming process per policy."""

    def __init__(self, policy: WamPolicy, usage: UsageProfile = UsageProfile(), flash: FlashProfile = UFS21_64GB,
                 unit_bytes: int = 16 * KB, seed: int = 0, start: tuple[FTL, FileSystem] | None = None):
        self.policy, self.usage, self.seed = policy, usage, seed
        self.ftl, self.fs = start if start is not None else aged_phone(usage, flash, unit_bytes, seed)
        self.eng = Engine(seed)
        self.rng = random.Random(seed)
        self.screen_on = False
        self.screen_off_at = 0
        self.plugged = False
        self.busy_until = 0          # the device's discard work queued so far ends at this time
        self.deleted_since_trim = 0  # S_d
        self.last_trim_end = -DAY
        self.resume_group = 0
        self.trimming = False
        self._wake: Event | None = None
        self.measuring = False
        self.syncs: list[tuple] = []  # (t, who, tag, latency_ns, discard_wait_ns)
        self.samples: list[dict] = []
        self.trim_ns = 0
        self.rounds = 0
        self.aborted = 0
        self.deleted = 0
        self.written = 0
        self.idle_free_blocks = max(self.ftl.p.gc_free_high,
                                    flash.idle_free_bytes // (self.ftl.ppb * unit_bytes))
        g = policy.group_pages * 4096 // unit_bytes
        self.group_units = max(1, g)
        self.n_groups = -(-self.ftl.n_lpn // self.group_units)

    # ---- driving ----
    def run(self, days: int = 3, warmup_days: int = 1, progress=None) -> WamResult:
        """Simulate warmup_days + days; statistics cover the last `days`."""
        for d in range(warmup_days + days):
            for a in day_actions(self.usage, self.rng, d):
                self.eng.at(a.t, self._do, a)
            self.eng.at(d * DAY, self._measure_from, d >= warmup_days)
        self.eng.process(self._trimmer(), "trim")
        c0 = self.ftl.counters()
        for d in range(warmup_days + days):
            if d == warmup_days:
                c0 = self.ftl.counters()
            self.eng.run(until=(d + 1) * DAY)
            if progress is not None:
                progress(1)
        return self._result(max(days, 1), c0)

    def _measure_from(self, on: bool) -> None:
        if on and not self.measuring:
            self.measuring = True
            self.trim_ns = self.rounds = self.aborted = self.deleted = self.written = 0

    def _poke(self, _=None) -> None:
        if self._wake is not None:
            w, self._wake = self._wake, None
            w.fire()

    def _do(self, a) -> None:
        k = a.kind
        if k not in (CREATE, SCREEN_ON, SCREEN_OFF, PLUG, UNPLUG):
            self.fs.flush()
        if k == CREATE:
            self._make_room(a.nbytes)
            self.written += a.nbytes
            if a.sizes:
                kind = f"cache:{a.who}"
                self.fs.create_many(kind, a.sizes)
                self._trim_cache(kind)
            elif a.tag == "update":
                self.fs.create("app", a.nbytes)
            else:
                self.fs.create(a.tag, a.nbytes)
        elif k == DELETE:
            self._delete(a)
        elif k in (DB_WRITE, SYNC):
            self._sync(a)
        elif k == SCREEN_ON:
            self.screen_on = True
        elif k == SCREEN_OFF:
            self.screen_on = False
            self.screen_off_at = self.eng.now
            self.eng.after(60 * S, self._idle_gc, self.eng.now)
            self._poke()
            self.eng.after(self.policy.lazy_idle_ns, self._poke)
        elif k == PLUG:
            self.plugged = True
            self._poke()
            self.eng.after(self.policy.lazy_idle_ns, self._poke)
        elif k == UNPLUG:
            self.plugged = False
        elif k == SAMPLE:
            self._sample()

    def _idle_gc(self, off_at: int) -> None:
        """The device's background GC, once the screen has stayed off for a minute."""
        if not self.screen_on and self.screen_off_at == off_at and not self.trimming:
            self.fs.flush()
            self.ftl.idle_collect(self.idle_free_blocks)

    # ---- deletions and discards ----
    def _delete(self, a) -> None:
        fs, tag = self.fs, a.tag
        units: list[np.ndarray] = []
        if tag == "update":  # the previous version of an app, about the size of the new one
            apps: dict = fs.files.get("app", {})
            if apps:
                fid = min(apps, key=lambda f: abs(len(apps[f]) * fs.unit - a.nbytes))
                units.append(fs.delete("app", fid))
        elif tag == "uninstall":
            apps = fs.files.get("app", {})
            if apps:
                ids = list(apps)
                units.append(fs.delete("app", ids[self.rng.randrange(len(ids))]))
        elif tag == "clean":  # every cache of some of the apps
            kinds = sorted(k for k, files in fs.files.items() if k.startswith("cache") and files)
            for kind in self.rng.sample(kinds, int(len(kinds) * self.usage.cache_clean_fraction)):
                for fid in list(fs.files[kind]):
                    units.append(fs.delete(kind, fid))
        elif tag == "media":  # the user frees what the file system grew by, picking among older media
            target = int(self.usage.fs_used_fraction * self.ftl.n_lpn)
            over = fs.used_units - target
            media: dict = fs.files.get("media", {})
            while over > 0 and media:
                ids = list(media)[: max(1, len(media) // 2)]
                u = fs.delete("media", ids[self.rng.randrange(len(ids))])
                units.append(u)
                over -= len(u)
        self._freed_files(units)

    def _make_room(self, nbytes: int) -> None:
        """A phone never fills up completely: past 97% the user (or the system's storage manager) deletes
        older media first."""
        fs = self.fs
        limit = int(0.97 * self.ftl.n_lpn) - fs.units_for(nbytes)
        media: dict = fs.files.get("media", {})
        units = []
        while fs.used_units > limit and media:
            units.append(fs.delete("media", next(iter(media))))
        self._freed_files(units)

    def _trim_cache(self, kind: str) -> None:
        fs, quota = self.fs, self.usage.cache_quota // self.usage.cache_apps
        units = []
        while fs.bytes_by_kind.get(kind, 0) > quota and (oldest := fs.oldest(kind)) is not None:
            units.append(fs.delete(kind, oldest))
        self._freed_files(units)

    def _freed_files(self, files: list[np.ndarray]) -> None:
        """Files just deleted: one discard command per extent of each."""
        if files:
            self._freed(np.concatenate(files), sum(extents(u) for u in files))

    def _freed(self, units: np.ndarray, commands: int) -> None:
        nbytes = len(units) * self.fs.unit
        self.deleted += nbytes
        if self.policy.name == "realtime":
            mapped = self.ftl.trim(units)
            cost = self.ftl.discard_ns(mapped, commands)
            self.busy_until = max(self.busy_until, self.eng.now) + cost
            self.trim_ns += cost
        else:
            self.deleted_since_trim += nbytes
            if self.policy.name == "practical" and self.deleted_since_trim >= self.policy.threshold_bytes:
                self._poke()

    # ---- synchronous writes ----
    def _sync(self, a) -> None:
        ftl, fs = self.ftl, self.fs
        dbs = fs.files.get("db")
        c0 = ftl.counters()
        if dbs:
            ids = list(dbs)
            f = dbs[ids[self.rng.randrange(len(ids))]]
            n = min(len(f), max(1, a.nbytes // fs.unit))
            start = self.rng.randrange(len(f) - n + 1)
            ftl.write(f[start:start + n])
        own = ftl.write_ns_since(c0, random=True) + MS  # + cache flush
        now = self.eng.now
        wait = max(0, self.busy_until - now)
        if self.measuring:
            self.syncs.append((now, a.who, a.tag, wait + own, wait))

    # ---- batched trims ----
    def _want_round(self) -> bool:
        p, now = self.policy, self.eng.now
        if p.name == "practical":
            return self.deleted_since_trim >= p.threshold_bytes and not self.screen_on
        if p.name == "lazy":
            return (self.plugged and not self.screen_on and now - self.screen_off_at >= p.lazy_idle_ns
                    and now - self.last_trim_end >= 20 * HOUR)
        return False

    def _trimmer(self):
        p = self.policy
        if p.name == "realtime":
            return
        while True:
            while not self._want_round():
                self._wake = self.eng.event()
                yield self._wake
            yield from self._round()

    def _round(self):
        p, ftl, fs = self.policy, self.ftl, self.fs
        resumed = p.name == "practical" and self.resume_group > 0
        g = self.resume_group if resumed else 0
        start_deleted = self.deleted_since_trim
        self.trimming = True
        if not resumed:
            self.trim_ns += p.round_startup_ns
            yield p.round_startup_ns
        while g < self.n_groups:
            if p.name == "practical" and self.screen_on:
                self.resume_group = g  # paused: remember where, go on at the next lock
                self.trimming = False
                return
            if p.name == "lazy" and not self.plugged:
                self.aborted += 1      # killed: the next idle window starts over from the first group
                self.resume_group = 0
                self.trimming = False
                return
            fs.flush()
            lo = g * self.group_units
            units = fs.free_mapped(lo, min(lo + self.group_units, ftl.n_lpn))
            cost = p.group_scan_ns
            if len(units):
                cost += ftl.discard_ns(ftl.trim(units), extents(units))
            self.busy_until = max(self.busy_until, self.eng.now) + cost
            self.trim_ns += cost
            yield self.busy_until - self.eng.now
            g += 1
        self.trimming = False
        self.resume_group = 0
        self.rounds += 1
        self.last_trim_end = self.eng.now
        if not self.screen_on:
            self.ftl.idle_collect(self.idle_free_blocks)
        self.deleted_since_trim = max(0, self.deleted_since_trim - start_deleted)

    # ---- measurements ----
    def _sample(self) -> None:
        if not self.measuring:
            return
        fs = self.fs
        rng = np.random.default_rng([self.seed, len(self.samples)])
        room = (self.ftl.n_lpn - fs.used_units) * fs.unit // 4  # small devices get smaller benchmarks
        test = fs.allocate(fs.units_for(min(256 * MB, room)), commit=False)
        ftl = self.ftl.copy()
        ftl.write(test)
        c0 = ftl.counters()
        n_rand = max(1, len(test) // 4)
        for _i in range(0, n_rand, 1024):
            ftl.write(np.unique(rng.choice(test, 1024)))
        rand = (ftl.host_units - c0[0]) * fs.unit / MB / (ftl.write_ns_since(c0, random=True) / S)
        ftl = self.ftl.copy()
        seq_units = fs.allocate(fs.units_for(min(512 * MB, room)), commit=False)
        c0 = ftl.counters()
        ftl.write(seq_units)
        seq = len(seq_units) * fs.unit / MB / (ftl.write_ns_since(c0, random=False) / S)
        self.samples.append({"t_h": self.eng.now / HOUR, "rand_write_mbps": rand, "seq_write_mbps": seq,
                             "stale_gb": fs.stale_units() * fs.unit / GB, "ftl_utilisation": self.ftl.utilisation()})

    def _result(self, days: int, c0) -> WamResult:
        r = WamResult(self.policy.label, days)
        lat = np.array([s[3] for s in self.syncs], dtype=np.int64) if self.syncs else np.zeros(1, np.int64)
        r.syncs = len(self.syncs)
        r.anr_stalls = sum(1 for s in self.syncs if s[1] == "fg" and s[3] > ANR_NS)
        r.snr_stalls = sum(1 for s in self.syncs if s[1] == "system" and s[3] > SNR_NS)
        r.wam_stalls_5s = sum(1 for s in self.syncs if s[4] > ANR_NS)
        r.worst_sync_ms = float(lat.max()) / MS
        r.sync_p99_ms = float(np.percentile(lat, 99)) / MS
        if self.samples:
            r.burst_rand_write_mbps = float(np.mean([s["rand_write_mbps"] for s in self.samples]))
            r.burst_seq_write_mbps = float(np.mean([s["seq_write_mbps"] for s in self.samples]))
            r.stale_gb_mean = float(np.mean([s["stale_gb"] for s in self.samples]))
        r.trim_s_per_day = self.trim_ns / S / days
        r.rounds_per_day = self.rounds / days
        r.aborted_rounds = self.aborted
        r.deleted_gb_per_day = self.deleted / GB / days
        r.written_gb_per_day = self.written / GB / days
        c1 = self.ftl.counters()
        host = c1[0] - c0[0]
        r.write_amplification = (host + c1[1] - c0[1]) / host if host else 1.0
        # sustained speed: every host unit carries its share of the GC copies and erases of the period
        # (foreground and idle GC alike: the device pays for both)
        if host:
            per = 100_000
            copies, erases = (c1[1] - c0[1]) * per // host, (c1[2] - c0[2]) * per // host
            mb = per * self.fs.unit / MB
            r.rand_write_mbps = mb / (self.ftl.write_ns(per, copies, erases, random=True) / S)
            r.seq_write_mbps = mb / (self.ftl.write_ns(per, copies, erases, random=False) / S)
        r.samples = self.samples
        r.worst = [{"t_h": round(s[0] / HOUR, 3), "who": s[1], "tag": s[2], "ms": s[3] / MS,
                    "discard_wait_ms": s[4] / MS} for s in sorted(self.syncs, key=lambda s: -s[3])[:5]]
        return r


def run_wam(policy: str | WamPolicy = "practical", days: int = 3, warmup_days: int = 1, seed: int = 0,
            usage: UsageProfile = UsageProfile(), flash: FlashProfile = UFS21_64GB, unit_bytes: int = 16 * KB,
            threshold_gb: float | None = None, progress=None) -> WamResult:
    """Simulate `days` measured days (after warm-up) of one policy; same inputs and seed, same result."""
    if isinstance(policy, str):
        kw = {} if threshold_gb is None else {"threshold_bytes": int(threshold_gb * GB)}
        policy = WamPolicy(policy, **kw)
    return PhoneDays(policy, usage, flash, unit_bytes, seed).run(days, warmup_days, progress)
