"""Similarity, clustering and agreement with the hand-made groups of anr_weak_groups.csv."""
from __future__ import annotations

import csv
import itertools

import pytest

from conftest import corpus_file
from droidlag.findings import analyze_hangs
from droidlag.hangs import HangsConfig, cluster_features, similarity
from droidlag.hangs.features import Features
from droidlag.hangs.similarity import cosine, jaccard


def _f(gen, terms):
    import math
    return Features(frozenset(gen), dict(terms), math.sqrt(sum(v * v for v in terms.values())))


def test_jaccard_and_cosine_definitions():
    assert jaccard(frozenset("ab"), frozenset("bc")) == pytest.approx(1 / 3)
    c, common = cosine({"x": 1.0, "y": 1.0}, {"x": 1.0}, 2 ** 0.5, 1.0)
    assert c == pytest.approx(2 ** -0.5) and common == 1


def test_similarity_union_weighting():
    a = _f({"p", "q"}, {"x": 1.0})
    b = _f({"p"}, {"x": 1.0})
    # S_p = 1/2 over a union of 2 tokens, S_c = 1 over 1 term: (2*0.5 + 1*1) / 3
    assert similarity(a, b) == pytest.approx(2 / 3)
    assert similarity(a, b, "equal") == pytest.approx(0.75)
    assert similarity(a, a) == pytest.approx(1.0)


def test_identical_signatures_collapse_and_threshold():
    a = _f({"k"}, {"x": 1.0, "y": 0.5})
    b = _f({"k"}, {"x": 1.0, "y": 0.5})
    c = _f({"z"}, {"w": 1.0})
    res = cluster_features([a, b, c], threshold=0.95)
    assert res.unique_signatures == 2
    assert res.labels[0] == res.labels[1] != res.labels[2]
    assert res.clusters[0].representative in (0, 1)


@pytest.fixture(scope="module")
def corpus_report(corpus):
    return analyze_hangs([corpus / "anr"], HangsConfig(threshold=0.95))


def test_lsh_matches_all_pairs_on_corpus(corpus_report):
    feats = [v for e in corpus_report.events for v in e.vectors]
    owners = [k for k, e in enumerate(corpus_report.events) for _ in e.vectors]
    assert len(feats) > len(corpus_report.events)   # the deadlocks bring one vector per critical thread
    for t in (0.95, 0.9):
        a = cluster_features(feats, t, "lsh", owners=owners).labels
        b = cluster_features(feats, t, "all_pairs", owners=owners).labels
        assert _partition(a) == _partition(b)


def _partition(labels):
    groups = {}
    for i, lab in enumerate(labels):
        groups.setdefault(lab, []).append(i)
    return sorted(groups.values())


def _agreement(corpus, report):
    """Pairwise (tp, fp, fn) of the CSV rows against the clusters. An event may be in several clusters (a deadlock):
    a pair is predicted together when their cluster sets intersect."""
    rows = list(csv.DictReader(open(corpus_file(corpus, "stackdedup/anr_weak_groups.csv"))))
    by_file = {}
    for e in report.events:
        by_file.setdefault(e.source.rsplit("/", 1)[-1], []).append(e)
    items = []
    for r in rows:
        evs = by_file[r["file"]]
        e = next((x for x in evs if r["pid"] and x.pid == int(r["pid"])), evs[0])
        items.append((r["group_id"], frozenset(e.clusters)))
    tp = fp = fn = 0
    for (ga, ca), (gb, cb) in itertools.combinations(items, 2):
        together = bool(ca & cb)
        if ga == gb and together:
            tp += 1
        elif together:
            fp += 1
        elif ga == gb:
            fn += 1
    return tp, fp, fn


def test_agreement_with_weak_groups(corpus, corpus_report):
    # Verified by reading the dumps: at 0.95 the xCrash ABIs split (abi token and meminfo bucket differ) and the
    # WebSocket onClose entry point splits from onClick; no pair of different groups is merged.
    tp, fp, fn = _agreement(corpus, corpus_report)
    # The one joined pair of different groups: JaynmBo (G10) and libill pid 9006 (G04) both have an idle main
    # (nativePollOnce, nothing blocked). Idle-main events share the "idle" mechanism key (issue 11; the
    # anr-reports labels group idle mains across apps), where this CSV keeps them apart per app.
    assert fp == 1 and tp + fn == 40
    rep = analyze_hangs([corpus / "anr"], HangsConfig(threshold=0.9))
    tp, fp, fn = _agreement(corpus, rep)
    # the one miss: libill pid 9209's main is in System.runFinalization <- onClick, not idle as the CSV says
    assert (tp, fp, fn) == (39, 1, 1)


def test_websocket_onclick_files_one_cluster(corpus_report):
    clusters = {e.cluster for e in corpus_report.events if e.process == "com.billy.websocket"
                and e.source.rsplit("-", 1)[-1] not in ("070637.txt", "070844.txt", "071048.txt")}
    assert len(clusters) == 1


def test_cluster_review_fields(corpus_report):
    for c in corpus_report.clusters:
        assert c["representative"] in c["members"] and c["size"] == len(c["members"]) == len(set(c["members"]))
        assert set(c["nearest"]) <= set(c["members"])
