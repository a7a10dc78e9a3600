"""Same trace, same frames JSON: ties (frames of different apps at the same time, apps with equal frame counts)
are ordered explicitly, not by polars' parallel group-by."""
import json
import subprocess
import sys

from conftest import corpus_file


def test_frames_json_is_identical_across_runs(corpus):
    # frames of several processes (launcher, systemui, system_server, the app) in one capture
    path = corpus_file(corpus, "traces/perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace")
    outs = {subprocess.run([sys.executable, "-m", "droidlag.cli", "frames", "--json", str(path)],
                           capture_output=True, text=True, check=True, timeout=300).stdout for _ in range(3)}
    assert len(outs) == 1
    frames = json.loads(outs.pop())["frames"]
    assert len({f["pid"] for f in frames}) >= 2          # the case the ordering is for: frames of several apps
    keys = [(f["start_ns"], f["pid"]) for f in frames]
    assert keys == sorted(keys)
