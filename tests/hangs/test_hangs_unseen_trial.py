"""Cases from the new-user trial of 2026-11-28 (docs/notes/unseen-trial-2026-11-28.md). An unknown binder peer is not a root cause two events share (new-user trial 2026-11-28: eight real ANRs whose
binder peer droidlag could not name - content-provider queries of different apps, a Play services call - formed one
cluster keyed `binder:unknown binder peer`). Like an obfuscated name, "unknown" is no evidence of sameness: the
stacks' similarity decides. Hand-made pastes in the Play Console form."""
from __future__ import annotations

from pathlib import Path

from droidlag.findings import analyze_hangs

PROVIDER = ('"main" prio=5 tid=1 Native\n'
            "  at android.os.BinderProxy.transactNative(Native method)\n"
            "  at android.os.BinderProxy.transact(BinderProxy.java:511)\n"
            "  at android.content.ContentProviderProxy.openTypedAssetFile(ContentProviderNative.java:703)\n"
            "  at android.content.ContentResolver.openInputStream(ContentResolver.java:1202)\n"
            "  at com.example.gallery.ImageLoader.size(ImageLoader.java:25)\n"
            "  at com.example.gallery.PreviewFragment.zoom(PreviewFragment.java:118)\n")
OTHER = ('"main" prio=5 tid=1 Native\n'
         "  at android.os.BinderProxy.transactNative(Native method)\n"
         "  at android.os.BinderProxy.transact(BinderProxy.java:599)\n"
         "  at com.example.maps.tiles.Fetcher.remote(Fetcher.java:180)\n"
         "  at com.example.maps.tiles.Fetcher.load(Fetcher.java:14)\n"
         "  at com.example.maps.MapView.onDraw(MapView.java:77)\n")
KNOWN = ('"main" prio=5 tid=1 Native\n'
         "  at android.os.BinderProxy.transactNative(Native method)\n"
         "  at android.os.BinderProxy.transact(BinderProxy.java:599)\n"
         "  at android.content.pm.IPackageManager$Stub$Proxy.getPackageInfo(IPackageManager.java:5657)\n"
         "  at com.example.{app}.Setup.{m}(Setup.java:9)\n")


def _clusters(tmp_path: Path, texts: list[str]) -> list[set[str]]:
    paths = []
    for i, t in enumerate(texts):
        p = tmp_path / f"anr{i}.txt"
        p.write_text(t)
        paths.append(p)
    d = analyze_hangs(paths).to_dict()
    assert all(e["cause"] == "slow_binder_peer" for e in d["events"])
    return [{m.split(":")[0] for m in c["members"]} for c in d["clusters"]]


def test_two_unknown_binder_peers_are_not_one_cluster(tmp_path: Path):
    clusters = _clusters(tmp_path, [PROVIDER, OTHER])
    assert sorted(map(sorted, clusters)) == [["anr0.txt"], ["anr1.txt"]]


def test_a_named_peer_still_groups_by_mechanism(tmp_path: Path):
    """Two different apps blocked in PackageManager: one mechanism, one cluster (the key is kept)."""
    clusters = _clusters(tmp_path, [KNOWN.format(app="notes", m="init"), KNOWN.format(app="shop", m="start")])
    assert clusters == [{"anr0.txt", "anr1.txt"}]


def test_a_content_provider_call_is_named(tmp_path: Path):
    """`ContentProviderProxy` is a proxy AOSP writes by hand (no `$Stub$Proxy` in its name): the peer is a content
    provider and the called method is the proxy's, read off the stack above by hand."""
    p = tmp_path / "anr.txt"
    p.write_text(PROVIDER)
    ev = analyze_hangs([p]).to_dict()["events"][0]
    assert ev["cause"] == "slow_binder_peer"
    cause = ev["evidence"]["cause"]
    assert (cause["peer"], cause["method"]) == ("a content provider", "openTypedAssetFile")


def test_content_provider_calls_of_two_apps_are_not_one_cluster(tmp_path: Path):
    """The provider's authority is not in the stack: two apps' provider calls are no evidence of one peer."""
    other = PROVIDER.replace("com.example.gallery.ImageLoader.size(ImageLoader.java:25)",
                             "com.example.notes.Attach.mime(Attach.java:61)").replace(
        "com.example.gallery.PreviewFragment.zoom(PreviewFragment.java:118)",
        "com.example.notes.EditActivity.onResume(EditActivity.java:40)")
    clusters = _clusters(tmp_path, [PROVIDER, other])
    assert sorted(map(sorted, clusters)) == [["anr0.txt"], ["anr1.txt"]]


def test_a_sentence_saying_anr_in_names_no_process(tmp_path: Path):
    """`ANR in my production app` is prose (ActivityManager writes only the process and an optional `(component)`
    after `ANR in`); the ActivityManager line itself, with a logcat prefix, still names its process."""
    prose = tmp_path / "prose.txt"
    prose.write_text("Received ANR in my production app with below stacktrace:\n" + PROVIDER)
    am = tmp_path / "am.txt"
    am.write_text("11-28 10:00:00.000  1000  1200 E ActivityManager: ANR in com.example.app "
                  "(com.example.app/.MainActivity)\n" + PROVIDER)
    events = analyze_hangs([prose, am]).to_dict()["events"]
    procs = {e["source"].rsplit("/", 1)[-1]: e["process"] for e in events}
    assert procs["prose.txt"] in (None, "", "?")
    assert procs["am.txt"] == "com.example.app"


def test_a_dumpstate_field_is_not_a_thread_header(tmp_path: Path):
    """dumpstate's header holds `Command line: (unknown)`, which has the shape of a Crashlytics `name (state)` thread
    header; a bugreport header with no dump must not become an ANR of a main thread 'not in the report'."""
    p = tmp_path / "hdr.txt"
    p.write_text("== dumpstate: 2019-05-01 10:00:00\n\nBuild: PPR1.180610.011\nKernel: Linux version 4.4.111 #1 SMP\n"
                 "Command line: (unknown)\nUptime: up 0 weeks, 1 days\n")
    d = analyze_hangs([p]).to_dict()
    assert d["events"] == []
    assert [e["path"].rsplit("/", 1)[-1] for e in d["errors"]] == ["hdr.txt"]   # refused with its reason
