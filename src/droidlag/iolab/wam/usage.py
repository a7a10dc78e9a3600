"""A phone's day of storage use (wam.md): screen sessions, a night of charging, files created and deleted
(app caches, media, app updates, uninstalls, cache cleaning), and the synchronous writes (fsync) of
foreground apps and system services that a discard can stall.

`day_actions(profile, rng, day)` returns the day's actions in time order; the simulator (`day.py`) plays
them against the file system and the FTL. Every number is a field of `UsageProfile`, with where it comes
from; sizes are bytes, times ns.
"""
from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass

from droidlag.iolab.sim.engine import MS, S

MIN = 60 * S
HOUR = 60 * MIN
DAY = 24 * HOUR
KB, MB, GB = 1 << 10, 1 << 20, 1 << 30

# action kinds
SCREEN_ON, SCREEN_OFF, PLUG, UNPLUG = "screen_on", "screen_off", "plug", "unplug"
CREATE, DELETE, DB_WRITE, SYNC, SAMPLE = "create", "delete", "db_write", "sync", "sample"


@dataclass(frozen=True)
class UsageProfile:
    """One user's day. Defaults are a heavy user of a 64 GB phone (the study's fleet cannot be had, so these
    are stated assumptions from public usage studies, not fitted to any figure)."""

    fs_used_fraction: float = 0.85      # /data 85% full (phones run full; WAM's stalls live on such phones)
    unlocks_per_day: float = 80.0       # smartphone usage studies: ~50-150 unlocks a day
    session_median_s: float = 60.0      # lognormal screen sessions, median 1 min
    session_sigma: float = 1.2
    wake_hour: float = 7.5              # charging and asleep from bed_hour to wake_hour
    bed_hour: float = 0.5
    cache_bytes_per_day: int = 12 * GB  # app caches written a day, small files: a heavy user of social and video
                                        # apps (Facebook alone: 1.2 GB of cache in two hours, Liang et al.)
    cache_file_median: int = 48 * KB
    cache_batch_files: int = 20
    cache_quota: int = 2 * GB           # all apps' caches together; each app trims its own (oldest first)
    cache_apps: int = 30                # apps that keep caches, each with 1/30 of the quota
    media_bytes_per_day: int = 1 * GB   # photos (3-5 MB) and a video now and then
    video_median: int = 200 * MB
    updates_per_day: float = 2.0        # app updates: a new APK+odex written, the old one deleted
    update_median: int = 120 * MB
    uninstalls_per_day: float = 0.3     # an app and its data removed
    cache_cleans_per_day: float = 1.0   # a cleaner (or the system under storage pressure) drops most caches
    cache_clean_fraction: float = 0.7   # of the apps whose caches a clean drops
    db_writes_per_min_fg: float = 6.0   # foreground SQLite commits: a few 16 KB pages + fsync
    system_syncs_per_min: float = 1.0   # system services' synchronous writes (settings, package manager, ...)
    samples_per_day: int = 4            # write-speed measurements (random and sequential), while awake

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Action:
    t: int          # ns from the start of the simulation
    kind: str
    nbytes: int = 0
    who: str = ""   # "fg" (an app's main thread) or "system" (a watched system thread) for syncs
    tag: str = ""   # what the action is (cache, media, update, uninstall, clean, ...)
    sizes: tuple[int, ...] = ()  # several files created at once (an app refreshing its cache)


def _lognormal(rng: random.Random, median: float, sigma: float) -> float:
    return median * math.exp(rng.gauss(0.0, sigma))


def _poisson_times(rng: random.Random, rate_per_ns: float, start: int, end: int) -> list[int]:
    out: list[int] = []
    t = start
    if rate_per_ns <= 0:
        return out
    while True:
        t += int(rng.expovariate(rate_per_ns))
        if t >= end:
            return out
        out.append(t)


def screen_sessions(p: UsageProfile, rng: random.Random, day0: int) -> list[tuple[int, int]]:
    """Non-overlapping (on, off) screen sessions within the waking hours of one day."""
    wake, bed = day0 + int(p.wake_hour * HOUR), day0 + DAY + int(p.bed_hour * HOUR)
    starts = _poisson_times(rng, p.unlocks_per_day / (bed - wake), wake, bed)
    sessions, last_off = [], wake
    for t in starts:
        t = max(t, last_off + S)
        dur = int(min(_lognormal(rng, p.session_median_s, p.session_sigma), 3600) * S)
        off = min(t + dur, bed)
        if off > t:
            sessions.append((t, off))
            last_off = off
    return sessions


def day_actions(p: UsageProfile, rng: random.Random, day: int) -> list[Action]:
    """The actions of day `day` (0-based), sorted by time. The day runs from midnight to midnight; the
    phone charges from bed_hour to wake_hour."""
    day0 = day * DAY
    acts: list[Action] = [Action(day0 + int(p.bed_hour * HOUR), PLUG), Action(day0 + int(p.wake_hour * HOUR), UNPLUG)]
    sessions = screen_sessions(p, rng, day0)
    on_time = sum(b - a for a, b in sessions) or 1
    for a, b in sessions:
        acts += [Action(a, SCREEN_ON), Action(b, SCREEN_OFF)]

    def during_sessions(rate_per_ns: float) -> list[int]:
        return [t for a, b in sessions for t in _poisson_times(rng, rate_per_ns, a, b)]

    # caches: small files while the screen is on, written in batches (an app refreshing a feed)
    n_batches = max(1, int(p.cache_bytes_per_day / (p.cache_batch_files * p.cache_file_median * math.exp(0.5))))
    for t in during_sessions(n_batches / on_time):
        sizes = tuple(max(4 * KB, int(_lognormal(rng, p.cache_file_median, 1.0))) for _ in range(p.cache_batch_files))
        acts.append(Action(t, CREATE, sum(sizes), who=f"app{rng.randrange(p.cache_apps)}", tag="cache",
                           sizes=sizes))
    # media: photos, now and then a video
    photo, video = 4 * MB, p.video_median
    n_photo = max(1, int(0.6 * p.media_bytes_per_day / photo))
    for t in during_sessions(n_photo / on_time):
        acts.append(Action(t, CREATE, int(_lognormal(rng, photo, 0.3)), tag="media"))
    for t in during_sessions(0.4 * p.media_bytes_per_day / video / on_time):
        acts.append(Action(t, CREATE, int(_lognormal(rng, video, 0.8)), tag="media"))
    # app updates (mostly at night, over Wi-Fi and charging) and uninstalls (while in use)
    night = (day0 + int(p.bed_hour * HOUR), day0 + int(p.wake_hour * HOUR))
    for t in _poisson_times(rng, p.updates_per_day / (night[1] - night[0]), *night):
        size = int(_lognormal(rng, p.update_median, 0.7))
        acts += [Action(t, CREATE, size, tag="update"), Action(t + 5 * S, DELETE, size, tag="update"),
                 Action(t + 5 * S + MS, SYNC, who="system", tag="package manager")]
    for t in during_sessions(p.uninstalls_per_day / on_time):
        acts += [Action(t, DELETE, tag="uninstall"),
                 Action(t + MS, SYNC, who="system", tag="package manager")]
    # cache cleaning (a cleaner app or the system's cache quota), while in use
    for t in during_sessions(p.cache_cleans_per_day / on_time):
        acts += [Action(t, DELETE, tag="clean"), Action(t + MS, SYNC, who="fg", tag="cleaner")]
    # media removal keeps the file system at its fill level (the user frees what was added)
    for t in during_sessions(2.0 / on_time):
        acts.append(Action(t, DELETE, tag="media"))
    # synchronous writes: FG apps' SQLite commits while in use, system services all day
    for t in during_sessions(p.db_writes_per_min_fg / MIN):
        acts.append(Action(t, DB_WRITE, 16 * KB * rng.randint(1, 4), who="fg", tag="sqlite"))
    for t in _poisson_times(rng, p.system_syncs_per_min / MIN, day0, day0 + DAY):
        acts.append(Action(t, DB_WRITE, 16 * KB, who="system", tag="system service"))
    # write-speed samples, spread over the waking hours
    wake, bed = day0 + int(p.wake_hour * HOUR), day0 + DAY + int(p.bed_hour * HOUR)
    for i in range(p.samples_per_day):
        acts.append(Action(wake + (i + 1) * (bed - wake) // (p.samples_per_day + 1), SAMPLE))
    acts.sort(key=lambda a: a.t)
    return acts
