"""The wait-for graph's shortcuts for the idle threads most of a dump holds: blocker() knows an Object.wait or
sleeping thread has no outgoing edge without parsing its frames, and a thread's node is built only when an analysis
looks at it; the threads that do wait (monitor, join, binder) still get their edges."""
from __future__ import annotations

from droidlag.hangs.analyze import events_from_unit
from droidlag.hangs.waitfor import blocker, build_wait_for_graph
from droidlag.io.anr import parse_dump

DUMP = """----- pid 42 at 2024-01-01 10:00:00 -----
Cmd line: com.example.app

"main" prio=5 tid=1 Blocked
  | sysTid=42
  at com.example.A.run(A.java:10)
  - waiting to lock <0x10> (a java.lang.Object) held by thread 3
  at android.os.Looper.loop(Looper.java:1)
"idle" prio=5 tid=2 Waiting
  | sysTid=43
  at java.lang.Object.wait(Native method)
  - waiting on <0x20> (a java.lang.Object)
  at java.lang.Object.wait(Object.java:442)
  at com.example.Q.take(Q.java:5)
"worker" prio=5 tid=3 Waiting
  | sysTid=44
  at java.lang.Thread.join(Thread.java:1)
  - waiting on <0x30> (a java.lang.Thread)
  at com.example.W.run(W.java:7)
  - locked <0x10> (a java.lang.Object)
"caller" prio=5 tid=4 Native
  | sysTid=45 obj=0x30
  native: #00 pc 000 /system/lib64/libbinder.so (android::IPCThreadState::transact+20)
  at android.os.BinderProxy.transactNative(Native method)
  at android.os.BinderProxy.transact(BinderProxy.java:1)
  at com.example.IFoo$Stub$Proxy.bar(IFoo.java:3)
"sleeper" prio=5 tid=5 Sleeping
  | sysTid=46
  at java.lang.Thread.sleep(Native method)
  - sleeping on <0x40> (a java.lang.Object)
----- end 42 -----
"""


def test_idle_threads_are_known_idle_without_parsing_their_frames():
    main, idle, worker, caller, sleeper = parse_dump(DUMP, "x").processes[0].threads
    assert blocker(idle) is None and blocker(sleeper) is None
    assert idle._frames is None and sleeper._frames is None   # no frame was parsed to know it
    kind, lk = blocker(main)
    assert kind == "monitor" and lk.addr == "0x10"
    kind, lk = blocker(worker)
    assert kind == "join" and lk.addr == "0x30"
    assert blocker(caller) == ("binder", 0)


def test_graph_edges_and_nodes_made_on_use():
    p = parse_dump(DUMP, "x").processes[0]
    g = build_wait_for_graph([p])
    label = {n: g.threads[n][1].name for n in g.threads}
    edges = {label[s]: (label.get(d, g.nodes[d].process), e.kind) for s, (d, e) in g.out.items()}
    # main waits for the lock the worker holds; the worker joins the thread whose object is 0x30 (caller); the
    # caller's binder call goes to a peer not in the dump
    assert edges["main"] == ("worker", "monitor") and edges["worker"] == ("caller", "join")
    assert edges["caller"][1] == "binder" and set(edges) == {"main", "worker", "caller"}
    assert list.__getitem__(g.nodes, 1) is None   # the idle thread's node is not built until asked for
    node = g.nodes[1]
    assert (node.name, node.tid, node.sys_tid, node.state) == ("idle", 2, 43, "Waiting")
    assert g.nodes[1] is node


def test_event_of_the_dump():
    (e,) = events_from_unit(parse_dump(DUMP, "x"))
    # the walk: main -> worker (lock) -> caller (join) -> the binder service IFoo names (not in the dump)
    assert [s["node"].name for s in e.chain][:3] == ["main", "worker", "caller"] and e.kind == "anr"
    assert e.critical_threads[0].remote and "IFoo" in e.critical_threads[0].process
