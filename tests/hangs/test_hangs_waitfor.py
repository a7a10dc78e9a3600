"""Wait-for graph, critical threads and deadlocks on the real dumps."""
from __future__ import annotations

from conftest import corpus_file
from droidlag.findings import analyze_hangs
from droidlag.hangs.analyze import events_from_unit
from droidlag.hangs.waitfor import build_wait_for_graph
from droidlag.io.dump_units import load_units


def _events(corpus, name):
    return [e for u in load_units(corpus_file(corpus, "anr/" + name)) for e in events_from_unit(u)]


def _members(nodes):
    return sorted((n.pid, n.tid, n.name) for n in nodes)


def test_java_monitor_deadlock(corpus):
    ev = _events(corpus, "chkbugreport_deadlock_vm_traces.txt")
    assert len(ev) == 1
    e = ev[0]
    assert _members(e.deadlock) == [(628, 1, "main"), (628, 9, "Thread-10")]
    assert e.blocked_thread.name == "main" and e.process == "com.sonymobile.chkbugreport.testapp"


def test_cross_process_aidl_deadlock(corpus):
    ev = _events(corpus, "chkbugreport_aidldeadlock_vm_traces.txt")
    assert len(ev) == 1
    e = ev[0]
    assert _members(e.deadlock) == [(800, 1, "main"), (800, 8, "Binder Thread #2"),
                                    (808, 1, "main"), (808, 8, "Binder Thread #2")]
    assert [s["edge"].kind for s in e.chain[1:]] == ["monitor", "binder", "monitor"]


def test_hybrid_binder_then_monitor_deadlock(corpus):
    ev = _events(corpus, "chkbugreport_hybriddeadlock_vm_traces.txt")
    assert len(ev) == 1
    e = ev[0]
    assert e.blocked_thread.pid == 613 and e.blocked_thread.tid == 1
    assert e.chain[1]["edge"].kind == "binder" and e.chain[1]["node"].pid == 622
    assert _members(e.deadlock) == [(622, 7, "Binder Thread #1"), (622, 9, "Thread-10")]
    assert _members(e.critical_threads) == _members(e.deadlock)


def test_sentry_thread_5_is_critical(corpus):
    (e,) = _events(corpus, "sentry-java_thread_dump.txt")
    assert e.kind == "anr" and e.deadlock is None
    assert [(n.tid, n.name) for n in e.critical_threads] == [(5, "Thread-9")]
    assert e.chain[1]["edge"].kind == "monitor" and e.chain[1]["edge"].lock == "0x0d3a2f0a"


def test_watchdog_snr_multi_hop_chain(corpus):
    (e,) = _events(corpus, "CharmingW_CWImage_traces_system_server_watchdog_snr.txt")
    assert e.kind == "snr" and e.process == "system_server" and e.pid == 1556
    assert e.blocked_thread.name == "android.fg"
    hops = [(s["node"].name, s["node"].process, s["edge"].kind if s["edge"] else None) for s in e.chain]
    assert hops == [("android.fg", "system_server", None), ("android.ui", "system_server", "monitor"),
                    (None, "surfaceflinger", "binder")]
    assert e.chain[1]["edge"].lock == "0x00f7fc8a"
    assert e.cause == "system_lock_contention"


def test_bluetooth_state_d_main_is_critical(corpus):
    (e,) = _events(corpus, "sailfish_android10_last_anr_bluetooth.txt")
    assert e.blocked_thread.name == "main" and e.blocked_thread.tid == 1
    assert e.critical_threads[0].tid == 1
    assert e.evidence["blocked_kernel_state"] == "D"
    assert e.cause == "app_specific" and "D" in e.evidence["cause"]["kernel_state"]


def test_self_edges_dropped(corpus):
    (u,) = load_units(corpus_file(corpus, "anr/86liuzhou_Real-first_traces_memoryleak_dalvik.txt"))
    g = build_wait_for_graph(u.processes)
    assert all(s != d for s, (d, _) in g.out.items())


def test_whole_corpus_no_crash(corpus):
    rep = analyze_hangs([corpus / "anr", corpus / "bugreport"])
    assert rep.events
    names = {e.source.rsplit("/", 1)[-1] for e in rep.events}
    assert "sentry_thread_dump_with_subject_header.txt" in names
    assert all(err.path.endswith(".md") is False for err in rep.errors)


def test_memory_cause_from_d_state_swap_wait_channel(corpus):
    (e,) = _events(corpus, "sentry_thread_dump_with_subject_header.txt")
    assert e.cause == "insufficient_memory"
    ev = e.evidence["cause"]
    assert {k: ev[k] for k in ("thread", "wchan", "state")} == {"thread": "sysTid 12236", "wchan": "swap_readpage",
                                                                 "state": "D"}
    assert ev["key"] == "memory:reclaim" and "reclaim" in ev["words"]
