"""Cases from the new-user hangs trial on 27 real ANR reports (defects D1-D7 of its report): how a thread that waits
is read (Android 5-7's Thread.parkFor, the whole wait under a latch or a lock, a whole dump's unanswered wait), an
idle main thread in every stack form, whose code a frame is, the frame a chain's sentence ends at, WebView work, and
stacks copied without `at` or locations. Every paste here is hand-made in the structure of the real forms (ART
`traces.txt` of Android 4.4 to 14, Play Console, Crashlytics); the expected values are worked out by hand from AOSP's
sources named in each test."""
from __future__ import annotations

from pathlib import Path

import pytest

from droidlag.findings import analyze_hangs
from droidlag.findings.narrative import hang_sentence
from droidlag.hangs.analyze import events_from_unit
from droidlag.hangs.causes import code_owner
from droidlag.hangs.waitfor import is_idle, is_park_lock, waited_for
from droidlag.io.anr import parse_dump, read_anr
from droidlag.io.anr_paste import canonicalize, looks_like_anr_paste


def _event(tmp_path: Path, text: str, name: str = "paste.txt"):
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    (u,) = read_anr(f)
    (e,) = events_from_unit(u)
    return e


def _dump_event(text: str):
    (e,) = events_from_unit(parse_dump(text, "dump.txt"))
    return e


# --- D1: Android 5-7 park through Thread.parkFor -----------------------------------------------------------------
# ART of Android 5 to 7 (libcore's Thread.parkFor$) parks a thread by Object.wait on a lock object of its own: the
# dump shows `- waiting on <X> (a java.lang.Object)` under Object.wait and `- locked <X>` under Thread.parkFor$. The
# object is the thread's own; what it waits for is said by the java.util.concurrent frames below.

PARKFOR_HEAD = ('"main" prio=5 tid=1 Waiting\n'
                '  | group="main" sCount=1 dsCount=0 obj=0x7400a000 self=0xb4f0e000\n'
                "  | sysTid=4100 nice=0 cgrp=apps sched=0/0 handle=0xb6f0e000\n"
                "  at java.lang.Object.wait! (Native method)\n"
                "- waiting on <0x0a1b2c3d> (a java.lang.Object)\n"
                "  at java.lang.Thread.parkFor$ (Thread.java:1220)\n"
                "- locked <0x0a1b2c3d> (a java.lang.Object)\n"
                "  at sun.misc.Unsafe.park (Unsafe.java:299)\n"
                "  at java.util.concurrent.locks.LockSupport.park (LockSupport.java:157)\n"
                "  at java.util.concurrent.locks.AbstractQueuedSynchronizer.parkAndCheckInterrupt "
                "(AbstractQueuedSynchronizer.java:813)\n"
                "  at java.util.concurrent.locks.AbstractQueuedSynchronizer.doAcquireSharedInterruptibly "
                "(AbstractQueuedSynchronizer.java:973)\n"
                "  at java.util.concurrent.locks.AbstractQueuedSynchronizer.acquireSharedInterruptibly "
                "(AbstractQueuedSynchronizer.java:1281)\n"
                "  at java.util.concurrent.CountDownLatch.await (CountDownLatch.java:202)\n")
# AOSP SharedPreferencesImpl.apply(): its awaitCommit runnable (EditorImpl$1) awaits the write's latch; QueuedWork
# .waitToFinish runs it when a service starts (ActivityThread.handleServiceArgs).
APPLY_TAIL = ("  at android.app.SharedPreferencesImpl$EditorImpl$1.run (SharedPreferencesImpl.java:366)\n"
              "  at android.app.QueuedWork.waitToFinish (QueuedWork.java:88)\n"
              "  at android.app.ActivityThread.handleServiceArgs (ActivityThread.java:3311)\n"
              "  at android.os.Looper.loop (Looper.java:154)\n")
# Android 8+: Unsafe.park with the synchronizer named on a `parking to wait for` line.
MODERN_APPLY = ('"main" prio=5 tid=1 Waiting\n'
                "  at sun.misc.Unsafe.park(Native method)\n"
                "  - parking to wait for <0x0e0f1a2b> (a java.util.concurrent.CountDownLatch$Sync)\n"
                "  at java.util.concurrent.locks.LockSupport.park(LockSupport.java:190)\n"
                "  at java.util.concurrent.locks.AbstractQueuedSynchronizer.parkAndCheckInterrupt"
                "(AbstractQueuedSynchronizer.java:868)\n"
                "  at java.util.concurrent.locks.AbstractQueuedSynchronizer.acquireSharedInterruptibly"
                "(AbstractQueuedSynchronizer.java:1306)\n"
                "  at java.util.concurrent.CountDownLatch.await(CountDownLatch.java:203)\n"
                "  at android.app.SharedPreferencesImpl$EditorImpl$1.run(SharedPreferencesImpl.java:406)\n"
                "  at android.app.QueuedWork.waitToFinish(QueuedWork.java:265)\n"
                "  at android.app.ActivityThread.handleServiceArgs(ActivityThread.java:3790)\n")


def test_parkfor_lock_is_the_threads_own():
    t = parse_dump(canonicalize(PARKFOR_HEAD).text, "x").processes[0].threads[0]
    waiting_on, locked = t.locks
    assert is_park_lock(t, waiting_on) and not is_park_lock(t, locked)


def test_dalvik_parkfor_lock_is_the_threads_own():
    """Dalvik (Android 4.4) names the park lock a java.lang.VMThread held by the waiting thread itself."""
    t = parse_dump('"AsyncTask #2" prio=5 tid=56 WAIT\n  | sysTid=2099\n'
                   "  at java.lang.Object.wait(Native Method)\n"
                   "  - waiting on <0x41a8> (a java.lang.VMThread) held by tid=56 (AsyncTask #2)\n"
                   "  at java.lang.Thread.parkFor(Thread.java:1205)\n  at sun.misc.Unsafe.park(Unsafe.java:325)\n",
                   "x").processes[0].threads[0]
    assert is_park_lock(t, t.locks[0])


def test_a_monitor_wait_is_not_a_park_lock():
    t = parse_dump('"main" prio=5 tid=1 Waiting\n  at java.lang.Object.wait!(Native method)\n'
                   "  - waiting on <0x5> (a com.example.Box)\n  at com.example.Box.take(Box.java:8)\n"
                   "  - locked <0x5> (a com.example.Box)\n", "x").processes[0].threads[0]
    assert not is_park_lock(t, t.locks[0])


@pytest.mark.parametrize("form", ["plain", "blockquote", "html"])
def test_parkfor_apply_flush_is_the_modern_answer(tmp_path, form):
    """The Android 7 stack of a QueuedWork flush says what the Android 8+ one says: storage sync, the
    SharedPreferences writer thread (not 'the holder of java.lang.Object'). Quoted with `> ` or wrapped in HTML, the
    same."""
    text = PARKFOR_HEAD + APPLY_TAIL
    if form == "blockquote":
        text = "".join("> " + line + "\n" for line in text.splitlines())
    elif form == "html":
        text = "<pre>\n" + text.replace("  at android.app.QueuedWork", "  <b>at android.app.QueuedWork") \
            .replace("(QueuedWork.java:88)", "(QueuedWork.java:88)</b>") + "</pre>\n"
    old = _event(tmp_path, text)
    new = _event(tmp_path, MODERN_APPLY, "modern.txt")
    for e in (old, new):
        assert e.cause == "storage_sync" and e.evidence["cause"]["key"] == "storage:sharedprefs_apply"
        (crit,) = e.critical_threads
        assert crit.name == "the SharedPreferences writer thread"
    assert old.chain[-1]["edge"].lock_class is None   # the park lock names nothing


def test_parkfor_latch_under_a_cut_editor_frame_is_an_apply_flush(tmp_path):
    """A paste cut inside the frame under the latch (`SharedPreferencesImpl$Edit`): a latch awaited from the
    SharedPreferences editor other than commit() is apply()'s awaitCommit."""
    e = _event(tmp_path, PARKFOR_HEAD + "  at android.app.SharedPreferencesImpl$Edit\n")
    assert e.cause == "storage_sync" and e.evidence["cause"]["key"] == "storage:sharedprefs_apply"


def test_a_commit_waiting_for_its_write_stays_a_commit(tmp_path):
    e = _event(tmp_path, PARKFOR_HEAD + "  at android.app.SharedPreferencesImpl$EditorImpl.commit "
                                        "(SharedPreferencesImpl.java:513)\n  at com.example.Settings.save "
                                        "(Settings.java:40)\n")
    assert e.evidence["cause"]["key"] == "storage:sharedprefs_commit"


def test_parkfor_future_names_the_result_not_the_park_lock(tmp_path):
    """Guava's AbstractFuture renamed by R8 (`com.google.common.util.concurrent.b.get (AbstractFuture.java:..)`) is
    still the future's wait: the thread waits for the one computing the result, from the caller's code."""
    text = ('"main" prio=5 tid=1 TimedWaiting\n  at java.lang.Object.wait! (Native method)\n'
            "- waiting on <0x00ab> (a java.lang.Object)\n  at java.lang.Thread.parkFor$ (Thread.java:1220)\n"
            "- locked <0x00ab> (a java.lang.Object)\n  at sun.misc.Unsafe.park (Unsafe.java:299)\n"
            "  at java.util.concurrent.locks.LockSupport.parkNanos (LockSupport.java:198)\n"
            "  at com.google.common.util.concurrent.b.get (AbstractFuture.java:369)\n"
            "  at com.google.common.util.concurrent.b$c.get (AbstractFuture.java:84)\n"
            "  at com.example.sync.Refresher.onReceive (Refresher.java:32)\n"
            "  at android.app.ActivityThread.handleReceiver (ActivityThread.java:2782)\n")
    e = _event(tmp_path, text)
    (crit,) = e.critical_threads
    assert crit.name == "the thread computing the awaited result"
    assert e.chain[-1]["edge"].lock_class is None
    assert "Guava code" in e.evidence["cause"]["words"]


# --- D6: the whole wait, latch before the lock it runs on --------------------------------------------------------

def test_android14_latch_over_aqs_acquire_is_a_latch(tmp_path):
    """Android 14's AbstractQueuedSynchronizer runs a latch's timed await through `acquire`: the outermost frame of
    the wait, CountDownLatch.await, names it (frames copied without `at`, as Crashlytics shows them)."""
    text = ("jdk.internal.misc.Unsafe.park(Native Method)\n"
            "java.util.concurrent.locks.LockSupport.parkNanos(LockSupport.java:252)\n"
            "java.util.concurrent.locks.AbstractQueuedSynchronizer.acquire(AbstractQueuedSynchronizer.java:717)\n"
            "java.util.concurrent.locks.AbstractQueuedSynchronizer.tryAcquireSharedNanos"
            "(AbstractQueuedSynchronizer.java:1074)\n"
            "java.util.concurrent.CountDownLatch.await(CountDownLatch.java:276)\n"
            "com.example.ids.Store.awaitId(Store.java:50)\n"
            "com.example.ids.Store.<init>(Store.java:12)\n")
    e = _event(tmp_path, text)
    assert e.critical_threads[0].name == "the thread expected to count down the latch"


def test_android14_lock_over_aqs_acquire_is_a_lock(tmp_path):
    text = ("jdk.internal.misc.Unsafe.park(Native Method)\n"
            "java.util.concurrent.locks.LockSupport.park(LockSupport.java:371)\n"
            "java.util.concurrent.locks.AbstractQueuedSynchronizer.acquire(AbstractQueuedSynchronizer.java:717)\n"
            "java.util.concurrent.locks.AbstractQueuedSynchronizer.acquire(AbstractQueuedSynchronizer.java:938)\n"
            "java.util.concurrent.locks.ReentrantLock$Sync.lock(ReentrantLock.java:153)\n"
            "java.util.concurrent.locks.ReentrantLock.lock(ReentrantLock.java:322)\n"
            "com.example.cache.Disk.read(Disk.java:77)\n")
    e = _event(tmp_path, text)
    assert e.critical_threads[0].name == "the holder of the lock"


def test_a_shared_acquire_cut_before_its_synchronizer(tmp_path):
    """A paste cut at `doAcquireSharedInterruptibly` shows a shared acquire: a latch's or a semaphore's."""
    cut = PARKFOR_HEAD.rsplit("  at java.util.concurrent.locks.AbstractQueuedSynchronizer.acquire", 1)[0]
    e = _event(tmp_path, cut)
    assert e.critical_threads[0].name == "the thread expected to release it (a latch or a semaphore)"


# --- D2: an idle main thread in every stack form -----------------------------------------------------------------

def test_native_only_idle_main_is_idle(tmp_path):
    """Play Console's native form of Looper.loop's wait (AOSP android_os_MessageQueue.cpp: NativeMessageQueue::
    pollOnce -> Looper::pollOnce -> pollInner -> epoll_wait)."""
    text = ('"main" prio=5 tid=1 Native\n  | sysTid=1775\n'
            "  #00  pc 0000000000049a34  /system/lib/libc.so (__epoll_pwait+20)\n"
            "  #01  pc 000000000001b979  /system/lib/libc.so (epoll_pwait+60)\n"
            "  #02  pc 000000000001b9a9  /system/lib/libc.so (epoll_wait+12)\n"
            "  #03  pc 0000000000010407  /system/lib/libutils.so (_ZN7android6Looper9pollInnerEi+118)\n"
            "  #04  pc 00000000000102f9  /system/lib/libutils.so (_ZN7android6Looper8pollOnceEiPiS1_PPv+32)\n"
            "  #05  pc 00000000000b7be9  /system/lib/libandroid_runtime.so "
            "(_ZN7android18NativeMessageQueue8pollOnceEP7_JNIEnvP8_jobjecti+24)\n")
    e = _event(tmp_path, text)
    assert e.cause == "unknown" and e.evidence["cause"]["idle"] and e.evidence["cause"]["key"] == "idle"


def test_native_looper_of_an_app_library_is_not_the_idle_main():
    """ALooper_pollOnce from an app's own native looper is not the Java MessageQueue: nothing says main is idle."""
    t = parse_dump('"main" prio=5 tid=1 Native\n'
                   "  native: #00 pc 0000000000049a34  /system/lib64/libc.so (__epoll_pwait+8)\n"
                   "  native: #01 pc 0000000000015c80  /system/lib64/libutils.so (_ZN7android6Looper9pollInnerEi+144)\n"
                   "  native: #02 pc 0000000000001200  /system/lib64/libandroid.so (ALooper_pollOnce+60)\n"
                   "  native: #03 pc 0000000000004000  /data/app/com.example/lib/arm64/libgame.so (game_loop+30)\n",
                   "x").processes[0].threads[0]
    assert not is_idle(t)


def test_dalvik_main_between_messages_is_idle():
    """Dalvik 4.4's MessageQueue.next reads SystemClock.uptimeMillis after each poll (AOSP MessageQueue.java):
    a main thread caught there is between messages."""
    e = _dump_event("----- pid 529 at 2018-09-03 08:00:47 -----\nCmd line: com.example.player\n\nDALVIK THREADS:\n"
                    '"main" prio=5 tid=1 NATIVE\n  | group="main" sCount=1 dsCount=0 obj=0x4159fca8 self=0x414d8580\n'
                    "  | sysTid=529 nice=-2 sched=0/0 cgrp=apps handle=1074123092\n  | state=t\n"
                    "  at android.os.SystemClock.uptimeMillis(Native Method)\n"
                    "  at android.os.MessageQueue.next(MessageQueue.java:142)\n"
                    "  at android.os.Looper.loop(Looper.java:123)\n"
                    "  at android.app.ActivityThread.main(ActivityThread.java:5017)\n----- end 529 -----\n")
    assert e.cause == "unknown" and e.evidence["cause"]["key"] == "idle"


def test_uptime_read_by_app_code_is_not_idle():
    t = parse_dump('"main" prio=5 tid=1 Native\n  at android.os.SystemClock.uptimeMillis(Native Method)\n'
                   "  at com.example.anim.Ticker.frame(Ticker.java:20)\n  at android.os.Looper.loop(Looper.java:123)\n",
                   "x").processes[0].threads[0]
    assert not is_idle(t)


# --- D4: a whole dump's wait nobody is shown to answer; whose code a frame is --------------------------------------

DUMP_HEAD = "----- pid 7100 at 2018-02-24 23:50:47 -----\nCmd line: com.example.news\n\nDALVIK THREADS (3):\n"
FUTURE_MAIN = ('"main" prio=5 tid=1 Waiting\n  | sysTid=7100 nice=-6 cgrp=default\n'
               "  at java.lang.Object.wait!(Native method)\n  - waiting on <0x0c0ffee1> (a java.lang.Object)\n"
               "  at com.google.android.gms.ads.internal.util.future.zq.get(:com.google.android.gms.DynamiteModulesA@1:34)\n"
               "  - locked <0x0c0ffee1> (a java.lang.Object)\n"
               "  at com.google.android.gms.ads.AdView.loadAd(unavailable:-1)\n"
               "  at com.example.news.HomeActivity.onCreate(HomeActivity.java:72)\n"
               "  at android.app.Activity.performCreate(Activity.java:5990)\n")
IDLE_WORKER = ('"pool-1-thread-1" prio=5 tid=9 Waiting\n  | sysTid=7120\n'
               "  at java.lang.Object.wait!(Native method)\n  - waiting on <0x0bad0001> (a java.lang.Object)\n"
               "  at com.example.news.Queue.take(Queue.java:10)\n")


def test_whole_dump_future_wait_says_nobody_is_shown_answering_it():
    e = _dump_event(DUMP_HEAD + FUTURE_MAIN + "\n" + IDLE_WORKER + "----- end 7100 -----\n")
    cause = e.evidence["cause"]
    assert e.cause == "app_specific" and cause["key"] == "app:wait:com.google.android.gms.ads.internal.util.future.zq.get"
    words = cause["words"]
    assert "the thread computing the awaited result" in words and "no thread of the dump is shown doing it" in words
    assert "Google Play services code" in words and "the app's code" not in words


def test_whole_dump_wait_names_the_thread_holding_the_monitor():
    holder = ('"loader" prio=5 tid=12 Runnable\n  | sysTid=7130\n'
              "  at com.example.news.Feed.parse(Feed.java:88)\n  - locked <0x0c0ffee1> (a java.lang.Object)\n")
    e = _dump_event(DUMP_HEAD + FUTURE_MAIN + "\n" + holder + "----- end 7100 -----\n")
    assert "loader (tid 12) holds the monitor it waits on" in e.evidence["cause"]["words"]


def test_run_finalization_waits_for_the_finalizer_daemon():
    """System.runFinalization -> FinalizerReference.finalizeAllEnqueued waits until the FinalizerDaemon has run the
    finalizers queued before it (libcore FinalizerReference, Daemons): a whole dump shows that thread."""
    main = ('"main" prio=5 tid=1 Waiting\n  | sysTid=7100\n  at java.lang.Object.wait(Native method)\n'
            "  - waiting on <0x0b82> (a java.lang.ref.FinalizerReference$Sentinel)\n"
            "  at java.lang.ref.FinalizerReference$Sentinel.awaitFinalization(FinalizerReference.java:169)\n"
            "  - locked <0x0b82> (a java.lang.ref.FinalizerReference$Sentinel)\n"
            "  at java.lang.ref.FinalizerReference.finalizeAllEnqueued(FinalizerReference.java:96)\n"
            "  at dalvik.system.VMRuntime.runFinalization(VMRuntime.java:339)\n"
            "  at java.lang.System.runFinalization(System.java:1550)\n"
            "  at com.example.news.CleanupButton.onClick(CleanupButton.java:25)\n")
    daemon = ('"FinalizerDaemon" daemon prio=5 tid=6 Sleeping\n  | sysTid=7106\n'
              "  at java.lang.Thread.sleep(Native method)\n  - sleeping on <0x07f9> (a java.lang.Object)\n"
              "  at com.example.news.TempFile.finalize(TempFile.java:13)\n"
              "  at java.lang.Daemons$FinalizerDaemon.doFinalize(Daemons.java:253)\n")
    e = _dump_event(DUMP_HEAD + main + "\n" + daemon + "----- end 7100 -----\n")
    assert [s["node"].name for s in e.chain] == ["main", "FinalizerDaemon"]
    assert e.evidence["app_frame"] == "at com.example.news.TempFile.finalize(TempFile.java:13)"


def test_crash_handling_names_the_handlers_and_their_code():
    main = ('"main" prio=5 tid=1 Runnable\n  | sysTid=7100\n'
            "  at java.lang.System.arraycopy(System.java:450)\n"
            "  at java.lang.Throwable.printStackTrace(Throwable.java:650)\n"
            "  at com.android.internal.os.RuntimeInit$UncaughtHandler.uncaughtException(RuntimeInit.java:86)\n"
            "  at com.bugsnag.android.ExceptionHandler.uncaughtException(ExceptionHandler.java:56)\n"
            "  at java.lang.ThreadGroup.uncaughtException(ThreadGroup.java:1068)\n")
    e = _dump_event(DUMP_HEAD + main + "----- end 7100 -----\n")
    words = e.evidence["cause"]["words"]
    assert words.startswith("handles an uncaught exception (a crash in progress) in "
                            "com.android.internal.os.RuntimeInit$UncaughtHandler.uncaughtException (framework code), "
                            "called from com.bugsnag.android.ExceptionHandler.uncaughtException (Bugsnag code)")
    assert "the app's code" not in words


@pytest.mark.parametrize("sym, process, owner", [
    ("com.example.news.HomeActivity.onCreate", "com.example.news", "the app's code"),
    ("com.example.news.widget.Pager.scroll", "com.example.news:remote", "the app's code"),
    ("com.bugsnag.android.Client.notify", "com.example.news", "Bugsnag code"),
    ("com.google.android.gms.ads.AdView.loadAd", "com.google.android.youtube", "Google Play services code"),
    ("net.zetetic.database.sqlcipher.SQLiteConnection.nativeExecute", "com.example.news", "library code"),
    ("android.view.View.draw", "com.example.news", "framework code"),
    ("com.android.bluetooth.btservice.AdapterService.start", "com.android.bluetooth", "the app's code"),
    ("com.example.news.HomeActivity.onCreate", None, None),
])
def test_code_owner(sym, process, owner):
    assert code_owner(sym, process) == owner


# --- D3: the sentence's app frame is the holder's ---------------------------------------------------------------

def test_holder_app_frame_is_its_own(tmp_path):
    text = ('"main" prio=5 tid=1 Blocked\n  | sysTid=19949\n'
            "  at com.example.demo.MainActivity.initView(MainActivity.java:0)\n"
            "  - waiting to lock <0x2fbc> (a com.example.demo.MainActivity) held by thread 15\n"
            "  at com.example.demo.MainActivity.onCreate(MainActivity.java:42)\n\n"
            '"Thread-404" prio=5 tid=15 Sleeping\n  | sysTid=19985\n'
            "  at java.lang.Thread.sleep!(Native method)\n  - sleeping on <0x2e38> (a java.lang.Object)\n"
            "  at java.lang.Thread.sleep(Thread.java:1031)\n  at android.os.SystemClock.sleep(SystemClock.java:120)\n"
            "  at com.example.demo.MainActivity.holdLock(MainActivity.java:50)\n"
            "  - locked <0x2fbc> (a com.example.demo.MainActivity)\n")
    f = tmp_path / "lock.txt"
    f.write_text(text)
    (ev,) = analyze_hangs([f]).to_dict()["events"]
    assert ev["evidence"]["app_frame"] == "at com.example.demo.MainActivity.holdLock(MainActivity.java:50)"
    sentence = hang_sentence(ev)
    # the report names no process, so whose code the frame is cannot be told: the frame alone
    assert "(in MainActivity.holdLock)" in sentence and "initView" not in sentence
    # with the process named: the app's own frame, and a library's frame said as the library's
    named = {**ev, "process": "com.example.demo"}
    assert "(in the app's MainActivity.holdLock)" in hang_sentence(named)
    lib = {**named, "evidence": {**ev["evidence"], "app_frame": "at com.bugsnag.android.Client.notify(Client.java:9)"}}
    assert "(in Client.notify, Bugsnag code)" in hang_sentence(lib)


# --- D5: WebView named by what its frames show ------------------------------------------------------------------

WEBVIEW_HEAD = ('"main" prio=5 tid=1 Native\n  | sysTid=15754\n'
                "  #00  pc 000000000000048c  [vdso] (__kernel_clock_gettime+268)\n"
                "  #01  pc 00000000013862dc  /data/app/com.android.chrome-1/base.apk (???)\n")


def test_a_javascript_dialog_is_not_webview_start_up(tmp_path):
    e = _event(tmp_path, WEBVIEW_HEAD +
               "  at org.chromium.android_webview.AwContentsClientBridge.nativeConfirmJsResult (Native method)\n"
               "  at org.chromium.android_webview.AwContentsClientBridge.a (SourceFile:154)\n"
               "  at xYz.run (unavailable:2)\n")
    cause = e.evidence["cause"]
    assert cause["key"] == "app:webview_js_dialog" and "JavaScript dialog" in cause["words"]
    assert "initialises" not in cause["words"]


def test_webview_start_up_is_named_from_its_loading_frames(tmp_path):
    e = _event(tmp_path, '"main" prio=5 tid=1 Native\n'
                         "  at org.chromium.android_webview.AwBrowserProcess.start (AwBrowserProcess.java:120)\n"
                         "  at com.android.webview.chromium.WebViewChromiumAwInit.startChromiumLocked "
                         "(WebViewChromiumAwInit.java:190)\n"
                         "  at android.webkit.WebViewFactory.getProvider (WebViewFactory.java:250)\n"
                         "  at android.webkit.WebView.<init> (WebView.java:420)\n"
                         "  at com.example.help.HelpActivity.onCreate (HelpActivity.java:30)\n")
    assert e.evidence["cause"]["key"] == "app:webview_init"


def test_other_webview_work_is_named_by_its_frame(tmp_path):
    e = _event(tmp_path, WEBVIEW_HEAD +
               "  at org.chromium.content.browser.input.ImeAdapterImpl.nativeSendKeyEvent (Native method)\n"
               "  at org.chromium.content.browser.input.ImeAdapterImpl.sendKeyEvent (SourceFile:40)\n")
    cause = e.evidence["cause"]
    assert cause["key"] == "app:org.chromium.content.browser.input.ImeAdapterImpl.nativeSendKeyEvent"
    assert cause["words"].startswith("runs WebView (Chromium) code on the main thread")


def test_native_only_webview_apk_stack_is_likely_start_up_not_confirmed(tmp_path):
    """Frames in the WebView APK with no symbol or Java frame show WebView's native code ran; grouped with start-up
    (what the main thread mostly runs of it), and the words say that is not confirmed."""
    apk = "/data/app/~~x==/com.google.android.webview-y==/base.apk"
    e = _event(tmp_path, '"main" prio=5 tid=1 Native\n'
                         "  #00  pc 0x000000000004c4ac  /apex/com.android.runtime/lib64/bionic/libc.so (syscall+28)\n"
                         "  #01  pc 0x000000000023247c  /apex/com.android.art/lib64/libart.so "
                         "(art::ConditionVariable::WaitHoldingLocks+140)\n"
                         f"  #02  pc 0x0000000002590ab8  {apk} (BuildId: 0a1b)\n"
                         f"  #03  pc 0x0000000004ed6f70  {apk} (BuildId: 0a1b)\n")
    assert e.evidence["cause"]["key"] == "app:webview_init"
    assert "not confirmed" in e.evidence["cause"]["words"]


# --- D7: stacks copied without `at` or locations ----------------------------------------------------------------

BARE = ("android.os.BinderProxy.transactNative\nandroid.os.BinderProxy.transact\n"
        "android.app.IAlarmManager$Stub$Proxy.set\nandroid.app.AlarmManager.setImpl\n"
        "com.example.reminders.Scheduler.arm\ncom.example.reminders.BootReceiver.onReceive\n")


@pytest.mark.parametrize("head", ['```text\n"main" tid=1 Native\n', ""])
def test_bare_frames_are_read(tmp_path, head):
    text = head + BARE + ("```\n" if head else "")
    assert looks_like_anr_paste(text)   # `analyze` takes it for a paste too
    e = _event(tmp_path, text)
    assert e.cause == "slow_binder_peer"
    assert e.evidence["cause"]["peer"] == "AlarmManagerService (system_server)"
    assert e.evidence["cause"]["method"] == "set"


def test_lines_under_a_header_not_read_are_said(tmp_path):
    f = tmp_path / "odd.txt"
    f.write_text('"main" tid=1 Native\nlibfoo.so.frame_one\nlibfoo.so.frame_two\n')
    (u,) = read_anr(f)
    assert any("not read as frames" in w.message and "libfoo.so.frame_one" in w.message for w in u.warnings)


def test_a_package_name_after_a_header_is_no_frame(tmp_path):
    f = tmp_path / "pkg.txt"
    f.write_text('"main" prio=5 tid=1 Waiting\ncom.example.app\nThe app froze.\n')
    (u,) = read_anr(f)
    assert u.processes[0].threads[0].raw_frames == []


def test_waited_for_reads_a_native_only_wait():
    t = parse_dump('"main" prio=5 tid=1 Native\n'
                   "  native: #00 pc 000000000001de6c  /system/lib64/libc.so (syscall+28)\n"
                   "  native: #01 pc 0000000000067838  /system/lib64/libc.so (pthread_cond_wait+96)\n",
                   "x").processes[0].threads[0]
    assert waited_for(t) == "the thread expected to wake it"
