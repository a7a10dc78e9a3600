"""A text with no ANR evidence is not an ANR because it names an app: `droidlag hangs` on a `dumpsys gfxinfo` output
(which names `com.android.launcher3` in a window path) reported "ANR in com.android.launcher3 ... no stacks", made
up from the package mention alone (found while trying the trial's inputs, 2026-11-28)."""
from __future__ import annotations

from pathlib import Path

from droidlag.cli import main
from droidlag.findings import analyze_hangs


def test_gfxinfo_text_given_to_hangs_is_no_event(corpus: Path, capsys):
    gfx = corpus / "gfxinfo" / "sailfish_android10_dumpsys_gfxinfo.txt"
    assert "com.android.launcher3" in gfx.read_text()
    assert main(["hangs", str(gfx)]) == 3     # nothing usable: the reason, not an event
    d = analyze_hangs([gfx]).to_dict()
    assert d["events"] == []
    assert "no thread header" in capsys.readouterr().err + str(d["errors"])


def test_a_package_path_alone_is_not_an_anr(tmp_path: Path):
    note = tmp_path / "install.txt"
    note.write_text("Installed to /data/app/~~abc==/com.example.shop-XYZ==/base.apk\nAll good after a reboot.\n")
    assert analyze_hangs([note]).to_dict()["events"] == []


def test_a_package_path_beside_a_stack_still_names_the_app(tmp_path: Path):
    """The rule it narrows: frames plus a package named in a path give the app its name."""
    paste = tmp_path / "anr.txt"
    paste.write_text('"main" prio=5 tid=1 Native\n'
                     "  #00 pc 0000000000051050  /data/app/~~abc==/com.example.shop-XYZ==/lib/arm64/libshop.so (x+1)\n"
                     "  at com.example.shop.Cart.load(Cart.java:10)\n")
    [event] = analyze_hangs([paste]).to_dict()["events"]
    assert event["process"] == "com.example.shop"


def test_a_paste_cut_inside_a_worker_thread_is_not_the_main_thread(tmp_path: Path):
    """A paste that begins inside a thread (mousebird-consulting-inc/WhirlyGlobe#902 quoted an ANR from the middle
    of a Crashlytics executor's stack): its frames end in `java.lang.Thread.run`, a started thread's bottom frame,
    never the main thread's. They were taken for main's stack and gave main a made-up wait (cause app_specific)."""
    paste = tmp_path / "anr.txt"
    paste.write_text(
        "  at sun.misc.Unsafe.park(Unsafe.java:325)\n"
        "  at java.util.concurrent.locks.LockSupport.park(LockSupport.java:157)\n"
        "  at java.util.concurrent.LinkedBlockingQueue.take(LinkedBlockingQueue.java:410)\n"
        "  at java.util.concurrent.ThreadPoolExecutor.getTask(ThreadPoolExecutor.java:1035)\n"
        "  at java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1097)\n"
        "  at java.lang.Thread.run(Thread.java:841)\n"
        '"Events Handler1" prio=5 tid=17 TIMED_WAIT\n'
        "  at java.lang.Object.wait(Native Method)\n"
        "  at java.lang.Thread.parkFor(Thread.java:1205)\n")
    d = analyze_hangs([paste]).to_dict()
    [event] = d["events"]
    assert event["blocked_thread"]["name"] == "main" and event["cause"] == "unknown"   # main is not in the paste
    assert any("cut end of another thread" in str(w) for w in d["warnings"])


def test_a_component_class_after_anr_in_is_not_a_process(tmp_path: Path):
    """Bugsnag's GitHub issues open with `**ANR** in **MainActivity**` (AutoAccountingOrg/AutoAccounting#855): the
    activity class, not a process (ActivityManager writes a package-like name, `pkg:suffix` or `system`). The event
    was reported as "ANR in MainActivity"."""
    frames = "    InputEventInterceptImpl$Provider.java:10 - android.view.InputEventInterceptImpl$Provider.provide\n"
    bugsnag = tmp_path / "bugsnag.txt"
    bugsnag.write_text("## Error in the app\n\n**ANR** in **MainActivity**\n Input dispatching timed out (x)\n\n"
                       "## Stacktrace\n\n" + frames)
    [event] = analyze_hangs([bugsnag]).to_dict()["events"]
    assert not event["process"]
    named = tmp_path / "am.txt"
    named.write_text("ANR in com.example.shop (com.example.shop/.MainActivity)\nReason: Input dispatching timed out\n"
                     + frames)
    [event] = analyze_hangs([named]).to_dict()["events"]
    assert event["process"] == "com.example.shop"
