"""Saved systrace HTML (issue 12): the trace blocks of a corpus report put after 3 MB and 40 MB of viewer script,
found by streaming. Prints the time and the peak Python memory of finding the blocks, against a baseline in the
same run: reading the whole page and decoding it to text (what a load-then-search reader holds).
Goal: memory independent of the script's size (ratio to the baseline well under 1, falling as the page grows).
Run: python benchmarks/bench_saved_html.py"""
from __future__ import annotations

import gzip
import random
import re
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from _corpus import corpus_root
from droidlag.io.systrace_html import read_html_sections

REPORT = "traces/systrace_2018_6cpu_antutu_yy_appatrace_sched.dataonly.html.gz"


def script(n: int) -> bytes:
    rng = random.Random(12)
    words = ["function", "var", "trace", "data", "return", "{", "}", "=", ";", "tr.b.", "'trace-data'"]
    line = (" ".join(rng.choice(words) for _ in range(200)) + "\n").encode()
    return b"<script>\n" + line * (n // len(line)) + b"</script>\n"


def measure(fn):
    tracemalloc.start()
    t = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return dt, peak, out


def main() -> int:
    root = corpus_root()
    if root is None or not (root / REPORT).exists():
        print("corpus not found (set DROIDLAG_CORPUS)")
        return 1
    html = gzip.decompress((root / REPORT).read_bytes())
    head = re.search(rb"<head[^>]*>", html).end()
    print(f"{'page':<26}{'MB':>7}{'stream s':>10}{'stream MB':>11}{'whole s':>9}{'whole MB':>10}{'mem ratio':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for mb in (3, 40):
            p = Path(tmp) / f"saved_{mb}.html"
            p.write_bytes(html[:head] + script(mb * 1024 * 1024) + html[head:])
            size = p.stat().st_size / 1e6
            t_s, m_s, found = measure(lambda p=p: read_html_sections(p, []))
            assert found is not None and found[1]
            t_w, m_w, _ = measure(lambda p=p: p.read_bytes().decode("utf-8", "replace").find("trace-data"))
            print(f"{p.name:<26}{size:>7.1f}{t_s:>10.3f}{m_s / 1e6:>11.1f}{t_w:>9.3f}{m_w / 1e6:>10.1f}"
                  f"{m_s / m_w:>11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
