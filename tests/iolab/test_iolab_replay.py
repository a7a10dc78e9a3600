"""Trace readers on the real corpus traces, blkparse text, bad input; replay on the simulated stack."""
import pytest

from conftest import corpus_file
from droidlag.errors import InputError
from droidlag.iolab.replay import read_block_trace, replay
from droidlag.iolab.sim.device import OP_READ, OP_WRITE


def test_s_startup_traces(corpus):
    t = read_block_trace(corpus_file(corpus, "blocktraces/bfq-S-startup/gnometerm.trace"))
    s = t.summary()
    assert t.format == "s-startup" and s["requests"] == 2781 and s["writes"] == 1 and not t.warnings
    assert len(s["processes"]) == 7 and abs(s["mib"] - 20.1) < 0.1
    assert sum(not r.sync for r in t.records) == 1992  # RA is asynchronous
    x = read_block_trace(corpus_file(corpus, "blocktraces/bfq-S-startup/xterm.trace"))
    assert x.summary()["requests"] == 718


def test_mqsim_traces_and_replay(corpus):
    t = read_block_trace(corpus_file(corpus, "blocktraces/mqsim/tpcc-small.trace"))
    assert t.format == "mqsim" and len(t.records) == 6999
    assert sum(r.op == OP_WRITE for r in t.records) == 2618
    r = replay(t, "cfq", "ufs")
    assert r["requests"] == 6999 and r["p99_ms"] >= r["p50_ms"] > 0
    assert replay(t, "cfq", "ufs") == r  # deterministic


def test_replay_closed_loop_s_trace(corpus):
    t = read_block_trace(corpus_file(corpus, "blocktraces/bfq-S-startup/xterm.trace"))
    r = replay(t, "faio", "emmc", closed_loop=True)
    assert r["requests"] == 718 and r["completion_s"] > 0


BLKPARSE = """\
  8,0    3        1     0.000000000  4162  Q  WS 3417048 + 8 [kworker/u16:2]
  8,0    3        2     0.000010000  4162  D  WS 3417048 + 8 [kworker/u16:2]
  8,0    1        3     0.000200000   812  Q   R 1000 + 256 [launcher]
  8,0    1        4     0.000300000   812  Q  RA 2000 + 64 [launcher]
  8,0    1        5     0.000400000   812  C   R 1000 + 256 [0]
garbage line here
CPU0 (8,0):
"""


def test_blkparse_text(tmp_path):
    p = tmp_path / "t.blkparse"
    p.write_text(BLKPARSE)
    t = read_block_trace(p)
    assert t.format == "blkparse" and len(t.records) == 3  # the Q events
    assert [r.op for r in t.records] == [OP_WRITE, OP_READ, OP_READ]
    assert t.records[0].sync and t.records[1].nbytes == 256 * 512
    assert t.warnings and t.warnings[0].line == 6


def test_bad_input_gives_input_error(tmp_path):
    empty = tmp_path / "e.trace"
    empty.write_text("")
    with pytest.raises(InputError):
        read_block_trace(empty)
    junk = tmp_path / "j.trace"
    junk.write_text("\nhello world\n")
    with pytest.raises(InputError) as e:
        read_block_trace(junk)
    assert e.value.line == 2
    with pytest.raises(InputError):
        read_block_trace(tmp_path / "missing.trace")
    partial = tmp_path / "p.trace"
    partial.write_text("100 0 8 16 1\nnot a line\n200 0 16 8 0\n")
    t = read_block_trace(partial)
    assert len(t.records) == 2 and t.warnings[0].line == 2
