"""Readers on the real dumps: every variant in corpus/anr, and damaged copies of them."""
from __future__ import annotations

import pytest

from conftest import corpus_file
from droidlag.errors import InputError
from droidlag.io.anr import read_anr

ANR = "anr/"


def _units(corpus, name):
    return read_anr(corpus_file(corpus, ANR + name))


def test_sentry_main_blocked_held_by_thread_5(corpus):
    u = _units(corpus, "sentry-java_thread_dump.txt")[0]
    p = u.processes[0]
    assert p.pid == 28941 and p.cmdline == "io.sentry.samples.android"
    main = p.main_thread
    assert main.name == "main" and main.tid == 1 and main.state == "Blocked"
    lk = [lk for lk in main.locks if lk.action == "waiting to lock"][0]
    assert lk.addr == "0x0d3a2f0a" and lk.held_by == 5
    assert p.thread_by_tid(5).name == "Thread-9" and p.thread_by_tid(5).state == "Sleeping"


def test_dalvik_crlf_held_by_threadid_with_name(corpus):
    u = _units(corpus, "chkbugreport_deadlock_vm_traces.txt")[0]
    assert u.snapshot is True  # a `VM TRACES JUST NOW` section: only deadlocks are events
    assert len(u.processes) == 24
    app = [p for p in u.processes if p.pid == 628][0]
    main = app.main_thread
    assert main.state == "MONITOR"
    lk = [lk for lk in main.locks if lk.action == "waiting to lock"][0]
    assert (lk.addr, lk.held_by, lk.held_by_name) == ("0x4064b388", 9, "Thread-10")
    assert not any(r.endswith("\r") for r in main.raw_frames)


def test_art_state_d_schedstat_utm_stm(corpus):
    u = _units(corpus, "sailfish_android10_last_anr_bluetooth.txt")[0]
    main = u.processes[0].main_thread
    assert main.kstate == "D" and main.sys_tid == 28426
    assert main.schedstat == (1257253031, 7000953840, 5836) and main.utm == 10 and main.stm == 114
    assert main.frames[0].kind == "kernel" or main.frames[0].kind == "native"
    assert any(f.symbol == "com.android.bluetooth.btservice.AdapterService.classInitNative" for f in main.frames)


def test_native_only_dump_main_by_systid(corpus):
    u = _units(corpus, "sentry-java_thread_dump_native_only.txt")[0]
    p = [p for p in u.processes if p.kind != "wchan"][0]
    main = p.main_thread
    # the main thread is renamed "samples.android": found by sysTid == pid, not by name
    assert main.name == "samples.android" and main.sys_tid == 9955
    assert main.wchan == "futex_wait_queue_me"  # from the Waiting Channels block before the dump
    assert main.frames[0].kind == "native" and main.frames[0].lib == "libc.so"


def test_subject_header_and_wait_channels_state_d(corpus):
    u = _units(corpus, "sentry_thread_dump_with_subject_header.txt")[0]
    assert u.header.subject.startswith("Input dispatching timed out")
    assert u.header.memory_kb["VmSwapKb"] == 82484 and u.header.memory_kb["RssKb"] == 548348
    assert u.header.d_state_threads == ["Signal Catcher (tid 12236)"]
    assert [p.cmdline for p in u.processes] == ["com.example.app:mainProcess", "com.example.app:gameProcess"]
    d = [t for p in u.processes for t in p.threads if t.kstate == "D"]
    assert len(d) == 1 and d[0].sys_tid == 12236 and d[0].wchan == "swap_readpage"
    assert sum(len(p.threads) for p in u.processes) == 996


def test_xcrash_tombstone(corpus):
    u = _units(corpus, "xCrash_doc_tombstone_anr_arm64-v8a.txt")[0]
    assert u.header.crash_type == "anr" and u.header.pid == 21533 and u.header.process == "xcrash.sample"
    p = u.processes[0]
    assert p.pid == 21533 and p.main_thread.state == "Sleeping"
    assert u.header.memory_kb["MemTotal"] == 3855796 and u.header.memory_kb["MemAvailable"] == 1446776
    assert not u.warnings


def test_nul_bytes_and_multi_process(corpus):
    u = _units(corpus, "HB-pencil_WanAndroid_traces_wanandroid_meizu.txt")[0]
    assert len(u.processes) == 14
    assert u.processes[0].main_thread.state == "Suspended"


def test_old_dalvik_self_held_parsed(corpus):
    u = _units(corpus, "86liuzhou_Real-first_traces_memoryleak_dalvik.txt")[0]
    t = [t for p in u.processes for t in p.threads if t.name == "pool-2-thread-1" and t.tid == 57][0]
    assert t.locks[0].held_by == 57  # the dump names the thread itself as holder


def test_truncated_file_salvages_threads_and_warns(corpus, tmp_path):
    data = corpus_file(corpus, ANR + "sentry-java_thread_dump.txt").read_bytes()
    cut = data[: data.index(b'"Thread-9"') + 200]
    f = tmp_path / "cut.txt"
    f.write_bytes(cut)
    u = read_anr(f)[0]
    p = u.processes[0]
    assert p.main_thread.state == "Blocked"
    assert any(t.name == "Thread-9" for t in p.threads)
    assert any("truncated" in w.message and w.line == 2 for w in u.warnings)


def test_mixed_encoding_and_garbage_lines(corpus, tmp_path):
    data = corpus_file(corpus, ANR + "sentry-java_thread_dump.txt").read_bytes()
    i = data.index(b"  at ")
    bad = data[:i] + b"  \xff\xfe garbled \x80 line\n" + b"\x00\x01junk\n" + data[i:]
    f = tmp_path / "bad.txt"
    f.write_bytes(bad)
    u = read_anr(f)[0]
    assert any("UTF-8" in w.message and w.line is not None for w in u.warnings)
    assert u.processes[0].main_thread.locks[0].held_by == 5


def test_non_dump_file_is_input_error(corpus, tmp_path):
    with pytest.raises(InputError):
        read_anr(corpus_file(corpus, "anr/SOURCES.md"))
    f = tmp_path / "empty.txt"
    f.write_bytes(b"\n\n")
    with pytest.raises(InputError):
        read_anr(f)


def test_damaged_dump_salvage_and_line_numbers(corpus, tmp_path):
    """A real dump with one thread block cut in half, a garbage stack line, an invalid byte, CRLF line ends and no
    end line: every thread header is kept at its own line and each warning names the line of its cause."""
    data = corpus_file(corpus, ANR + "sentry-java_thread_dump.txt").read_bytes()
    j = data.index(b'\n"', len(data) // 3) + 1
    k = data.index(b"\n\n", j)
    data = data[:(j + k) // 2] + data[k:]  # the second half of one thread block is gone, mid-line
    g = data.index(b"\n  at ", data.index(b'"main"')) + 1
    data = data[:g] + b"  ??? garbled stack line\n" + data[g:]
    bad = data.index(b"\n  at ", g + 40) + 6
    data = data[:bad] + b"\xff" + data[bad:]
    data = data[:data.index(b"----- end")]  # no end line: the dump is truncated
    f = tmp_path / "damaged.txt"
    f.write_bytes(data.replace(b"\n", b"\r\n"))
    u = read_anr(f)[0]
    lines = data.decode("utf-8", "replace").split("\n")

    def line_of(offset):
        return data.count(b"\n", 0, offset) + 1

    p = u.processes[0]
    headers = [n for n, s in enumerate(lines, 1) if s.startswith('"')]
    assert [t.line for t in p.threads] == headers
    assert all(lines[t.line - 1].startswith(f'"{t.name}"') for t in p.threads)
    assert p.main_thread.locks[0].held_by == 5
    assert sum(len(t.raw_frames) for t in p.threads) == sum(
        s.lstrip().startswith(("at ", "native:", "#", "kernel:")) for s in lines[headers[0]:])
    by_kind = {w.message.split()[0]: w.line for w in u.warnings}
    assert by_kind["invalid"] == line_of(bad)
    assert by_kind["1"] == line_of(g)  # "1 unrecognised line(s) inside thread stacks ignored"
    pid_line = next(n for n, s in enumerate(lines, 1) if s.startswith("----- pid "))
    assert by_kind["dump"] == pid_line and "truncated" in [w for w in u.warnings if w.line == pid_line][0].message
