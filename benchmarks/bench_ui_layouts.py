"""Time to read and analyse every layout of each corpus app (goal < 5 s per app), printed against a baseline
measured in the same run: parsing the same XML files with the standard library alone (no resolution, no rules)."""
from __future__ import annotations

import time
import xml.etree.ElementTree as ET  # baseline only: trusted corpus files, never user input

from _corpus import corpus_root
from droidlag.io.android_res import read_app
from droidlag.ui.layouts import analyze_layouts

APPS = ["AntennaPod_AntennaPod", "TeamNewPipe_NewPipe", "ankidroid_Anki-Android", "nextcloud_android"]


def main() -> None:
    root = corpus_root()
    if root is None:
        print("corpus not found")
        return
    for app in APPS:
        d = root / "layouts" / app
        files = [p for p in d.rglob("*.xml") if "fixes" not in p.parts]
        t0 = time.perf_counter()
        for p in files:
            ET.parse(p)
        base = time.perf_counter() - t0
        t0 = time.perf_counter()
        res, _ = read_app([d], exclude=("fixes",))
        report = analyze_layouts(res)
        took = time.perf_counter() - t0
        print(f"{app:28s} {report.files:4d} layouts {len(report.findings):3d} findings  {took:6.3f} s "
              f"(goal < 5 s; {took / base:5.1f}x a bare stdlib parse of its {len(files)} XML files, {base:.3f} s)")


if __name__ == "__main__":
    main()
