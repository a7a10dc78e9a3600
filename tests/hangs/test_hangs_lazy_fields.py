"""The reader's fast paths and the model's on-demand fields agree with the general code they stand for."""
from __future__ import annotations

from droidlag.io.anr import _header_by_tokens, _parse_thread_header, parse_dump
from droidlag.models.dumps import ThreadDump

HEADERS = [
    '"main" prio=5 tid=1 Blocked', '"main" daemon prio=5 tid=1 Native', '"x" prio=5 (not attached)',
    '"y" daemon prio=5 tid=9 Native (still starting up)', '"z" prio=5 tid=3  NATIVE ', '"Binder:474_2" sysTid=474',
    '"" prio=5 tid=2 Runnable', '"a b" prio=5 tid=2 daemon', '"d" prio=5 tid=2 Native daemon', '"q" prio=5 tid=',
    '" prio=5" prio=5 tid=1 Blocked', '"k" prio=x tid=1 Blocked', '"w" prio=5 tid=1 Wait sysTid=9',
    '"v" prio=5 tid=1\tBlocked', '"u" sysTid=12 extra', '"t" prio=5 tid=7 Waiting\u2028on', '"s" sysTid=',
    '"r" prio=5 tid=1 Native (still\xa0starting)', '"p" daemon prio=5 (not attached)',
]


def _fields(t: ThreadDump | None):
    return None if t is None else (t.name, t.tid, t.sys_tid, t.state, t.daemon, t.prio, t.kstate)


def test_header_fast_paths_agree_with_token_loop():
    for h in HEADERS:
        assert _fields(_parse_thread_header(h)) == _fields(_header_by_tokens(h)), h


TEXT = """----- pid 10 at 2020-01-01 -----
Cmd line: app

"main" prio=5 tid=1 Blocked
  | group="main" sCount=1 dsCount=0 flags=1 obj=0x72 self=0x7
  | sysTid=10 nice=0 cgrp=default sched=0/0 handle=0x7
  | state=S schedstat=( 1 2 3 ) utm=4 stm=5 core=0 HZ=100
  at a.B.c(B.java:1)
  - waiting to lock <0x1> (a java.lang.Object) held by thread 2
  | state=D utm=x sysTid=11
"t2" sysTid=20
  | sysTid=21 state=R schedstat=(7 x 8)
----- end 10 -----
"""


def test_attribute_lines_are_read_on_demand_in_dump_order():
    t, t2 = parse_dump(TEXT, "x").processes[0].threads
    assert t.raw_attrs[0].startswith("| group=") and len(t.raw_attrs) == 4
    assert (t.sys_tid, t.obj, t.kstate, t.schedstat, t.utm, t.stm) == (11, "0x72", "D", (1, 2, 3), None, 5)
    assert (t2.sys_tid, t2.kstate, t2.schedstat) == (21, "R", (7, 8))
    # a value set on the object wins over the lines before it and yields to the lines after it
    u = ThreadDump("u", sys_tid=1)
    u.raw_attrs.append("| sysTid=2")
    assert u.sys_tid == 2
    u.sys_tid = 3
    assert u.sys_tid == 3
    u.raw_attrs.append("| sysTid=4 state=S")
    u.kstate = "D"
    assert (u.sys_tid, u.kstate) == (4, "D")


def test_thread_dump_compares_and_prints_like_a_dataclass():
    a, b = ThreadDump("m", raw_attrs=["| sysTid=5"]), ThreadDump("m", sys_tid=5)
    assert a == b and a != ThreadDump("m") and a.raw_frames == [] and a.locks == []
    assert repr(b).startswith("ThreadDump(name='m', tid=None, sys_tid=5, state='', kstate=None")
