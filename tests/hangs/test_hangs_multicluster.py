"""Spec step 3: a deadlock cycle yields several critical threads, one feature vector each, and the event belongs to
every cluster its vectors land in (`clusters`, primary `cluster` first); members and sizes count events once."""
from __future__ import annotations

import json
import math
import re

import pytest

from conftest import corpus_file
from droidlag.findings import analyze_hangs
from droidlag.hangs import HangsConfig, cluster_features
from droidlag.hangs.features import Features
from droidlag.hangs.normalize import normalize_frame

DEADLOCKS = {  # file -> distinct normalized critical stacks, counted by reading the raw dumps (see _raw_stack)
    "chkbugreport_deadlock_vm_traces.txt": 2,       # main (Deadlock.onCreate) / Thread-10 (Deadlock$1.run)
    "chkbugreport_aidldeadlock_vm_traces.txt": 4,   # AIDLDeadlock$1 vs AIDLDeadlockService$1: doStep2 / doStep1
    "chkbugreport_hybriddeadlock_vm_traces.txt": 2,  # Binder Thread #1 (doStep1) / Thread-10 ($1$1.run)
}


def _f(gen, terms):
    return Features(frozenset(gen), dict(terms), math.sqrt(sum(v * v for v in terms.values())))


def _raw_stack(path, pid, tid):
    """The `at ...` lines of thread `tid` in the last `----- pid N` block of the raw file, normalized."""
    text = path.read_text(errors="replace")
    block = text.split(f"----- pid {pid} at ")[-1].split("----- end ")[0]
    m = re.search(rf'^"[^"\n]*".* tid={tid} .*$', block, re.M)
    assert m, (pid, tid)
    frames = []
    for line in block[m.end():].lstrip("\n").splitlines():
        line = line.strip()
        if not line:
            break
        if line.startswith("at "):
            frames.append(normalize_frame(line))
    return tuple(frames)


@pytest.fixture(scope="module")
def report(corpus):
    return analyze_hangs([corpus / "anr", corpus / "bugreport"], HangsConfig(threshold=0.95))


@pytest.mark.parametrize("name", sorted(DEADLOCKS))
def test_deadlock_event_in_one_cluster_per_distinct_critical_stack(corpus, report, name):
    (e,) = [x for x in report.events if x.source.split("#")[0].endswith("/" + name)]
    assert e.deadlock and len(e.critical_threads) > 1
    stacks = {_raw_stack(corpus_file(corpus, "anr/" + name), n.pid, n.tid) for n in e.critical_threads}
    assert len(stacks) == DEADLOCKS[name]
    assert len(e.vectors) == len(e.critical_threads)
    assert len(e.clusters) == len(stacks) == len(set(e.clusters))
    assert e.cluster == e.clusters[0] == e.critical_clusters[0]
    assert set(e.clusters) == set(e.critical_clusters)
    by_id = {c["id"]: c for c in report.clusters}
    for cid in e.clusters:
        assert by_id[cid]["members"].count(e.id) == 1


def test_vector_chain_ends_at_its_critical_thread(report):
    # hybrid: main(613) -binder-> Binder Thread #1(622) -monitor-> Thread-10(622) -monitor-> Binder Thread #1
    (e,) = [x for x in report.events if "hybriddeadlock" in x.source]
    assert [n.name for n in e.critical_threads] == ["Binder Thread #1", "Thread-10"]
    v0, v1 = e.vectors
    assert "waitlen:2" in v0.terms and "waitlen:3" in v1.terms
    assert "chain_len:2" in v0.generic and "chain_len:3" in v1.generic
    assert any("HybridDeadlockService$1.doStep1" in t for t in v0.terms if t.startswith("j:"))
    assert not any("HybridDeadlockService$1$1.run" in t for t in v0.terms if t.startswith("j:"))
    assert any("HybridDeadlockService$1$1.run" in t for t in v1.terms if t.startswith("j:"))
    assert e.features is v0


def test_non_deadlock_events_have_exactly_one_cluster(report):
    plain = [e for e in report.events if not e.deadlock]
    assert plain
    for e in plain:
        assert len(e.vectors) == 1 and e.clusters == [e.cluster] == e.critical_clusters


def test_cluster_members_and_sizes_count_events(report):
    seen = {}
    for c in report.clusters:
        assert len(c["members"]) == len(set(c["members"])) == c["size"]
        assert c["representative"] in c["members"]
        assert set(c["nearest"]) <= set(c["members"]) and set(c["furthest"]) <= set(c["members"])
        assert len(c["nearest"]) == len(set(c["nearest"]))
        for m in c["members"]:
            seen.setdefault(m, set()).add(c["id"])
    assert [c["size"] for c in report.clusters] == sorted((c["size"] for c in report.clusters), reverse=True)
    for e in report.events:
        assert seen[e.id] == set(e.clusters)
        d = e.to_dict()
        assert d["cluster"] == e.cluster and d["clusters"] == e.clusters


def test_deterministic(corpus, report):
    again = analyze_hangs([corpus / "anr", corpus / "bugreport"], HangsConfig(threshold=0.95))
    assert json.dumps(again.to_dict(), sort_keys=True) == json.dumps(report.to_dict(), sort_keys=True)


def test_owners_cluster_vectors_count_events():
    a = _f({"k"}, {"x": 1.0, "y": 0.5})
    b = _f({"z"}, {"w": 1.0})
    # event 0 has two vectors (a deadlock), event 1 shares a's signature, event 2 another one like b
    feats = [a, b, _f({"k"}, {"x": 1.0, "y": 0.5}), _f({"z"}, {"w": 1.0})]
    res = cluster_features(feats, 0.95, owners=[0, 0, 1, 2])
    assert res.labels[0] == res.labels[2] != res.labels[1] == res.labels[3]
    for c in res.clusters:
        assert len(c.members) == 2 and c.members[0] == 0 and c.representative in c.members
        assert sorted(set(c.nearest)) == c.members
    # a cluster holding two vectors of one event counts that event once, so the bigger-by-events cluster is first
    res = cluster_features([a, _f({"k"}, {"x": 1.0, "y": 0.5}), b, _f({"z"}, {"w": 1.0})], 0.95,
                           owners=[0, 0, 1, 2])
    assert [c.members for c in res.clusters] == [[1, 2], [0]]
    assert res.clusters[1].vectors == [0, 1] and res.labels == [1, 1, 0, 0]
    with pytest.raises(ValueError):
        cluster_features([a, b], owners=[0])
