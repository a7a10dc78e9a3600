"""Thread stacks run together on one line (new-user trial 2026-11-28, finding 9: a GitHub issue quoted each thread of
an ANR as one line, `"binder:11893_1" tid=9 Native #00 pc ... #01 pc ...`; `hangs` kept no thread and `analyze` /
`fleet` skipped the file as "not a format"). One reader rule (io/anr_paste.split_run_on) splits such a line at each
frame (`#NN pc`, `at `), lock line and thread header, with a warning naming the line. The inputs are written here
from the formats' documentation (ART's `traces.txt`: `"name" prio=N tid=N State`, `at a.b.C.m(F.java:N)`,
`- waiting to lock <0x...> (a X) held by thread N`, `- locked <0x...>`; debuggerd's `#NN pc ADDR /path (sym+off)`);
the expected values are read off the text by hand and checked against the same stacks written one line each."""
from __future__ import annotations

from pathlib import Path

import pytest

from droidlag.findings import analyze_hangs
from droidlag.io.detect import load
from droidlag.io.dump_units import load_units
from droidlag.io.inputs import discover

NATIVE = [
    '"binder:4242_1" tid=9 Native',
    "#00 pc 0x00000000000ddd4c /apex/com.android.runtime/lib64/bionic/libc.so (__ioctl+12)",
    "#01 pc 0x0000000000082140 /apex/com.android.runtime/lib64/bionic/libc.so (ioctl+144)",
    "#02 pc 0x0000000000051050 /system/lib64/libbinder.so (android::IPCThreadState::talkWithDriver+160)",
    "#03 pc 0x0000000000056d98 /system/lib64/libbinder.so (android::IPCThreadState::joinThreadPool+152)",
]
JAVA_MAIN = [
    '"main" prio=5 tid=1 Blocked',
    "at com.example.notes.Cache.get(Cache.java:42)",
    "- waiting to lock <0x0a1b2c3d> (a java.lang.Object) held by thread 12",
    "at com.example.notes.MainActivity.onResume(MainActivity.java:88)",
    "at android.app.Activity.performResume(Activity.java:8000)",
]
JAVA_WORKER = [
    '"Worker-1" prio=5 tid=12 Runnable',
    "at com.example.notes.Cache.load(Cache.java:97)",
    "- locked <0x0a1b2c3d> (a java.lang.Object)",
    "at com.example.notes.Cache$1.run(Cache.java:30)",
    "at java.lang.Thread.run(Thread.java:919)",
]


def _threads(path: Path) -> list[tuple[str, int | None, str, list[str]]]:
    return [(t.name, t.tid, t.state, [f.symbol for f in t.frames])
            for u in load_units(path) for p in u.processes for t in p.threads]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_native_stacks_one_line_each_are_split_into_frames(tmp_path: Path):
    second = [x.replace("binder:4242_1", "binder:4242_2").replace("tid=9", "tid=10") for x in NATIVE]
    collapsed = _write(tmp_path, "c.txt", "```\n" + " ".join(NATIVE) + "\n\n" + " ".join(second) + "\n```\n")
    lines = _write(tmp_path, "l.txt", "```\n" + "\n".join(NATIVE) + "\n\n" + "\n".join(second) + "\n```\n")
    assert load(collapsed)[0] == "anr" == discover([collapsed])[0].kind   # `analyze` and `fleet` read it
    threads = _threads(collapsed)
    # by hand: two threads, tids 9 and 10, 4 native frames each, __ioctl on top
    assert [(n, tid, len(f), f[0]) for n, tid, _s, f in threads] == [("binder:4242_1", 9, 4, "__ioctl+12"),
                                                                     ("binder:4242_2", 10, 4, "__ioctl+12")]
    assert threads == _threads(lines)
    [unit] = load_units(collapsed)
    run_on = [w for w in unit.warnings if "run together" in w.message]
    assert [(w.line, w.message.split()[0]) for w in run_on] == [(2, "5"), (4, "5")]


def test_java_threads_and_locks_run_together_give_the_wait_for_chain(tmp_path: Path):
    collapsed = _write(tmp_path, "c.txt", " ".join(JAVA_MAIN + JAVA_WORKER) + "\n")
    lines = _write(tmp_path, "l.txt", "\n".join(JAVA_MAIN + JAVA_WORKER) + "\n")
    assert load(collapsed)[0] == "anr"
    assert _threads(collapsed) == _threads(lines)
    assert [(n, tid, s, len(f)) for n, tid, s, f in _threads(collapsed)] == [("main", 1, "Blocked", 3),
                                                                             ("Worker-1", 12, "Runnable", 3)]
    [event] = analyze_hangs([collapsed]).to_dict()["events"]
    # by hand: main waits for the monitor 0x0a1b2c3d that Worker-1 (tid 12) holds: Worker-1 is the critical thread
    assert [t["tid"] for t in event["critical_threads"]] == [12]
    assert [(c["thread"]["tid"], (c["via"] or {}).get("lock")) for c in event["chain"]] == [(1, None),
                                                                                          (12, "0x0a1b2c3d")]
    assert [w.line for u in load_units(collapsed) for w in u.warnings if "run together" in w.message] == [1]


@pytest.mark.parametrize("text", [
    "The app hangs at com.example.notes.Cache.get(Cache.java:42) when I open it, see the log below.",
    '"main" prio=5 tid=1 Blocked',
    "- waiting to lock <0x0a1b2c3d> (a java.lang.Object) held by thread 12",
])
def test_a_line_with_one_frame_or_none_is_not_split(text: str):
    from droidlag.io.anr_paste import split_run_on
    assert split_run_on(text) == [text]


def test_prose_quoting_two_frames_is_not_a_paste():
    """A line of prose that names two frames does not open with a header or a frame: not taken for a stack."""
    from droidlag.io.detect import sniff_bytes
    prose = ("I think the problem is that at com.example.notes.Cache.get(Cache.java:42) we lock, and at "
             "com.example.notes.Cache.load(Cache.java:97) we lock too; is this a known issue with the library?\n"
             "Thanks for any help with this, it happens on every Android version we tried so far.\n" * 2)
    assert sniff_bytes(prose.encode()) is None
