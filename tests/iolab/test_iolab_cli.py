"""The `droidlag iolab` subcommands, on small sizes."""
import json

from droidlag.cli import main
from droidlag.iolab.host.fio import reader_writer_jobs


def test_sim_json(capsys):
    assert main(["iolab", "sim", "--scenario", "camera", "--policy", "cfq,faio", "--scale", "0.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["policy"] for r in out["runs"]] == ["cfq", "faio"]
    assert out["fg_only"]["mean_ms"] > 0 and "cut_vs_cfq_pct" in out["runs"][1]


def test_sim_text_and_unknown_policy(capsys):
    assert main(["iolab", "sim", "--scenario", "gallery", "--policy", "noop", "--scale", "0.02"]) == 0
    assert "noop" in capsys.readouterr().out
    assert main(["iolab", "sim", "--scenario", "gallery", "--policy", "nope"]) != 0


def test_replay_bad_file_exit_code(tmp_path, capsys):
    p = tmp_path / "x.trace"
    p.write_text("what\n")
    assert main(["iolab", "replay", str(p)]) == 3
    assert "x.trace:1" in capsys.readouterr().err


def test_reproduce_json_shape(capsys, monkeypatch):
    import droidlag.iolab.reproduce as rp
    from droidlag.iolab.sim.scenarios import ScenarioResult

    def fake(name, policy="cfq", device="ufs", seed=0, background=True, scale=1.0):
        ms = 100 + 10 * len(policy) + (0 if background is False else 50 * (len(name) % 3 + 1))
        return ScenarioResult(name, policy, device, seed, 0, scale, [ms * 1_000_000] * 3, 0, 0, 0, 0, 0, 0)

    monkeypatch.setattr(rp, "run_scenario", fake)
    assert main(["iolab", "reproduce", "--scale", "0.02", "--no-wam", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert len(rows) >= 15
    for r in rows:
        assert set(r) >= {"figure", "paper", "droidlag", "tolerance", "within_tolerance"}


def test_host_fio_jobs_are_scratch_only():
    text = reader_writer_jobs("/dev/loop9", 2, True, reader_prio=(1, 0), writer_prio=(3, 0))
    assert text.count("filename=/dev/loop9") == 1 and "[fg-reader]" in text and "prioclass=3" in text
    assert "[bg-writer-1]" in text


def test_reproduce_delay_cut_is_a_cut_of_the_background_delay():
    from droidlag.iolab.reproduce import _delay_cut
    # FG only 1 s, FG+BG 2.6 s, policy 1.144 s: 91% of the 1.6 s BG delay removed (FAIO's statistic)
    assert abs(_delay_cut(1000, 2600, 1144) - 91.0) < 1e-9
    assert _delay_cut(1000, 1000, 900) == 0.0  # no BG delay: nothing to cut
