"""The reader's fast paths and the model's on-demand fields agree with the general code they stand for."""
from __future__ import annotations

from droidlag.io.anr import _parse_thread_header, parse_dump
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


# Each header's fields by hand (name, tid, sys_tid, state, daemon, prio, kstate): the name up to the first `" prio=`,
# `" daemon prio=` or `" sysTid=` (else the last quote), the `=`-free tokens as the state, the last of each number.
EXPECTED = [
    ("main", 1, None, "Blocked", False, 5, None), ("main", 1, None, "Native", True, 5, None),
    ("x", None, None, "(not attached)", False, 5, None), ("y", 9, None, "Native (still starting up)", True, 5, None),
    ("z", 3, None, "NATIVE", False, 5, None), ("Binder:474_2", None, 474, "", False, None, None),
    ("", 2, None, "Runnable", False, 5, None), ("a b", 2, None, "", True, 5, None),
    ("d", 2, None, "Native", True, 5, None), ("q", None, None, "", False, 5, None),
    (" prio=5", 1, None, "Blocked", False, 5, None), ("k", 1, None, "Blocked", False, None, None),
    ("w", 1, 9, "Wait", False, 5, None), ("v", 1, None, "Blocked", False, 5, None),
    ("u", None, 12, "extra", False, None, None), ("t", 7, None, "Waiting on", False, 5, None),
    ("s", None, None, "", False, None, None), ("r", 1, None, "Native (still starting)", False, 5, None),
    ("p", None, None, "(not attached)", True, 5, None),
]


def test_thread_headers_read_by_hand():
    assert [_fields(_parse_thread_header(h)) for h in HEADERS] == EXPECTED
    assert _parse_thread_header('"no closing quote') is None
    # numbers that are not plain digits follow int(): sign, underscores, other scripts' digits; else None
    assert _fields(_parse_thread_header('"n" prio=+5 tid=1_0 sysTid=\u0665')) == ("n", 10, 5, "", False, 5, None)


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
