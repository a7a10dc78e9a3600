"""Each normalization rule on a real line from the corpus, and the rules in order."""
from __future__ import annotations

import pytest

from droidlag.hangs.normalize import RULES, apply_rule, normalize_frame

CASES = [
    ("build_id", "#00 pc 000000000004c35c  /apex/com.android.runtime/lib64/bionic/libc.so (syscall+28) "
     "(BuildId: ba489d4985c0cf173209da67405662f9)",
     "#00 pc 000000000004c35c  /apex/com.android.runtime/lib64/bionic/libc.so (syscall+28)"),
    ("lib_offset", "native: #03 pc 0000000001e2e21c  /data/app/com.google.android.webview-wtyVrSKc9Gzy-ujvyvTNjw=="
     "/base.apk!libmonochrome.so (offset 17c000) (???)",
     "native: #03 pc 0000000001e2e21c  /data/app/com.google.android.webview-wtyVrSKc9Gzy-ujvyvTNjw=="
     "/base.apk!libmonochrome.so (???)"),
    ("frame_pc", "native: #01 pc 00077bfc  /system/lib/libc.so (__ioctl+28)", "/system/lib/libc.so (__ioctl+28)"),
    ("kernel_offset", "kernel: binder_thread_read+0x361/0xbf3", "kernel: binder_thread_read"),
    ("symbol_offset", "/system/lib/libc.so (__ioctl+28)", "/system/lib/libc.so (__ioctl)"),
    ("line_number", "at com.sonymobile.chkbugreport.testapp.Deadlock.onCreate(Deadlock.java:~33)",
     "at com.sonymobile.chkbugreport.testapp.Deadlock.onCreate(Deadlock.java)"),
    ("native_method", "at dalvik.system.NativeStart.main(Native Method)", "at dalvik.system.NativeStart.main(Native method)"),
    ("apk_path", "/data/app/~~YQzOOq5EdbRpDSLuP4W5bg==/io.sentry.samples.android-rf1QICG-91naFlmtGfmOTQ==/lib/arm64/"
     "libsentry.so", "/data/app/io.sentry.samples.android/lib/arm64/libsentry.so"),
    ("lambda", "at com.example.Foo$$Lambda$123/0x0000000123456789.run(Unknown Source:2)",
     "at com.example.Foo$$Lambda.run(Unknown Source:2)"),
    # real lines from the anr-reports corpus (stripe-terminal #286, firebase-android-sdk #2014)
    ("r8_lambda", "com.stripe.stripeterminal.adapter.BbposAdapterLegacy.$r8$lambda$S13Svu291msq8fZ1WmDS23oBIk4 "
     "(unavailable)", "com.stripe.stripeterminal.adapter.BbposAdapterLegacy.$r8$lambda (unavailable)"),
    ("r8_map_id", "at io.sentry.util.AutoClosableReentrantLock.acquire(r8-map-id-4bd4561c6bc95b6e9eaa50ad6a5155dc278353"
     "ee29bbb24ceb2796fa31b59f1e:1)", "at io.sentry.util.AutoClosableReentrantLock.acquire(r8-map-id)"),
    ("other_line", "at com.bugsnag.android.ndk.NativeBridge.onStateChange(NativeBridge:122)",
     "at com.bugsnag.android.ndk.NativeBridge.onStateChange(NativeBridge)"),
    ("bang", "at java.lang.Object.wait!(Native method)", "at java.lang.Object.wait(Native method)"),
    ("binder_thread", "\"Binder:1556_1\" prio=5 tid=8 Blocked", "\"Binder:N\" prio=5 tid=8 Blocked"),
    ("pool_thread", "held by tid=57 (pool-2-thread-1)", "held by tid=57 (pool-N-thread-N)"),
    ("thread_id", "- waiting to lock <0x0d3a2f0a> (a java.lang.Object) held by thread 5",
     "- waiting to lock <0x0d3a2f0a> (a java.lang.Object) tid=N"),
    ("object_address", "- waiting to lock <0x00f7fc8a> (a java.util.HashMap) held by thread 12",
     "- waiting to lock <addr> (a java.util.HashMap) held by thread 12"),
    ("hex", "| group=\"main\" sCount=1 dsCount=0 obj=0x12c55240 self=0x95d0fa00",
     "| group=\"main\" sCount=1 dsCount=0 obj=0x? self=0x?"),
]


@pytest.mark.parametrize("name,line,expected", CASES, ids=[c[0] for c in CASES])
def test_rule_on_real_line(name, line, expected):
    assert apply_rule(name, line) == expected


def test_every_rule_has_a_case():
    assert {n for n, _, _ in RULES} - {"whitespace"} == {c[0] for c in CASES}


def test_order_build_id_before_hex():
    # hex first would leave "(BuildId: ...)" half-removed; the order keeps the frame clean
    line = CASES[0][1]
    assert normalize_frame(line) == "/apex/com.android.runtime/lib64/bionic/libc.so (syscall)"


def test_same_frame_two_abis_normalize_equal():
    a = "native: #00 pc 000000000007f6bc  /apex/com.android.runtime/lib64/bionic/libc.so (syscall+28)"
    b = "native: #00 pc 0007f6c0  /apex/com.android.runtime/lib64/bionic/libc.so (syscall+32)"
    assert normalize_frame(a) == normalize_frame(b)


def test_format_only_differences_are_one_term():
    # issue 11: Play Console's `Object.wait!`, lambda and R8 synthetic ids, state spellings of each format
    from droidlag.hangs.normalize import java_symbol, state_word
    assert java_symbol("java.lang.Object.wait!") == "java.lang.Object.wait"
    assert java_symbol("a.B$$ExternalSyntheticLambda7.accept") == java_symbol("a.B$$Lambda$12/0x1f.accept")
    assert java_symbol("a.B.$r8$lambda$S13Svu291msq8fZ1WmDS23oBIk4") == java_symbol("a.B.$r8$lambda$Pfd5XmD-CFz")
    assert {state_word(s) for s in ("MONITOR", "Blocked", "blocked", "BLOCKED")} == {"blocked"}
    assert {state_word(s) for s in ("TIMED_WAIT", "TimedWaiting", "timed waiting")} == {"timedwaiting"}
