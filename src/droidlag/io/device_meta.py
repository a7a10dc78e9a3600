"""Device facts a bugreport or dump states about its phone: build fingerprint, model, hardware, Android version,
storage (`dumpsys diskstats`' Data-Free line) and uptime (the bugreport header's `Uptime: up ...`). Only what the
text says; nothing is guessed. The fingerprint's form is brand/product/device:release/id/incremental:type/tags."""
from __future__ import annotations

import re

_FP = re.compile(r"^Build fingerprint: '?([^'\r\n]+?)'?\s*$", re.M)
_PROP = re.compile(r"^\[(ro\.product\.model|ro\.hardware|ro\.build\.version\.release|ro\.build\.fingerprint)\]: "
                   r"\[([^\]\r\n]*)\]", re.M)
_DISK = re.compile(r"^Data-Free: (\d+)K / (\d+)K total", re.M)
_UPTIME = re.compile(r"^Uptime: up (\d+) weeks?, (\d+) days?, (\d+) hours?, (\d+) minutes?", re.M)
_FP_PARTS = re.compile(r"^([^/]+)/([^/]+)/([^/:]+):([^/]+)/")


def parse_fingerprint(fp: str) -> dict[str, str]:
    """{'brand', 'product', 'device', 'release'} of a build fingerprint; {} when it has another form."""
    m = _FP_PARTS.match(fp)
    if not m:
        return {}
    return {"brand": m.group(1), "product": m.group(2), "device": m.group(3), "release": m.group(4)}


def _search_from(pattern: re.Pattern[str], text: str, literal: str) -> re.Match[str] | None:
    """pattern.search(text), started at the line of the first occurrence of literal (pattern begins with it)."""
    i = text.find(literal)
    if i < 0:
        return None
    return pattern.search(text, text.rfind("\n", 0, i) + 1)


def device_meta(text: str) -> dict[str, str | int | float]:
    """Facts found in the text: build_fingerprint, model, hardware, android_version, storage_total_kb,
    storage_used_kb, uptime_s. Keys are absent when the text does not say."""
    out: dict[str, str | int | float] = {}
    # each pattern is tried only where its literal occurs: a multi-line regex search over megabytes of thread dump
    # costs more than the rest of a file's device facts
    props = {k: v for k, v in _PROP.findall(text)} if "[ro." in text else {}
    m = _search_from(_FP, text, "Build fingerprint: ")
    fp = m.group(1).strip() if m else props.get("ro.build.fingerprint")
    if fp:
        out["build_fingerprint"] = fp
        parts = parse_fingerprint(fp)
        if parts:
            out["model"] = f"{parts['brand']}/{parts['device']}"
            out["hardware"] = parts["device"]
            out["android_version"] = parts["release"]
    if props.get("ro.product.model"):
        out["model"] = props["ro.product.model"]
    if props.get("ro.hardware"):
        out["hardware"] = props["ro.hardware"]
    if props.get("ro.build.version.release"):
        out["android_version"] = props["ro.build.version.release"]
    m = _search_from(_DISK, text, "Data-Free: ")
    if m:
        free, total = int(m.group(1)), int(m.group(2))
        out["storage_total_kb"] = total
        out["storage_used_kb"] = total - free
    m = _search_from(_UPTIME, text, "Uptime: up ")
    if m:
        w, d, h, mi = map(int, m.groups())
        out["uptime_s"] = float(((w * 7 + d) * 24 + h) * 3600 + mi * 60)
    return out
