"""A process record for every pid the trace's threads name: ftrace text with a TGID column and no process dump gave
threads their pids but no process at all (`droidlag info` said 0 processes). Each such process is named as its
main thread (tid = pid) where the trace names that thread, as trace processor names them (the kernel's comm)."""
import json

from droidlag._native import Process, Thread, add_main_threads
from droidlag.cli import main
from droidlag.io.systrace import read_systrace

HEADER = ("# tracer: nop\n#\n# entries-in-buffer/entries-written: 5/5   #P:4\n#\n"
          "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
          "#              | |        |      |   ||||       |         |\n")
# An app (pid 4100: main thread 4100 and its RenderThread 4130), surfaceflinger's main thread (612), a thread of a
# process whose main thread never appears (7007 of 7000), and the idle task (TGID unknown).
LINES = [
    " ndroid.example-4100  ( 4100) [001] ...1  1000.000100: tracing_mark_write: B|4100|Choreographer#doFrame",
    "     RenderThread-4130  ( 4100) [002] ...1  1000.000200: tracing_mark_write: B|4100|DrawFrame",
    "     RenderThread-4130  ( 4100) [002] ...1  1000.000900: tracing_mark_write: E|4100",
    " ndroid.example-4100  ( 4100) [001] ...1  1000.001000: tracing_mark_write: E|4100",
    "   surfaceflinger-612   (  612) [000] ...1  1000.001100: tracing_mark_write: B|612|onMessageRefresh",
    "   surfaceflinger-612   (  612) [000] ...1  1000.001500: tracing_mark_write: E|612",
    "       binder:7000_2-7007  ( 7000) [003] ...1  1000.001600: tracing_mark_write: B|7000|work",
    "       binder:7000_2-7007  ( 7000) [003] ...1  1000.001700: tracing_mark_write: E|7000",
    "           <idle>-0     (-----) [003] d..2  1000.001800: cpu_idle: state=0 cpu_id=3",
]


def _text() -> bytes:
    return (HEADER + "\n".join(LINES) + "\n").encode()


def test_threads_pids_become_processes_named_by_their_main_thread():
    t = read_systrace(_text(), "mem.txt")
    # by hand from the lines: pids 4100, 612, 7000 (the idle task's TGID is unknown)
    assert t.processes == {4100: Process(4100, "ndroid.example"), 612: Process(612, "surfaceflinger"),
                           7000: Process(7000, None)}
    assert t.threads[4130] == Thread(4130, 4100, "RenderThread")
    assert 7000 not in t.threads          # no main-thread record made up for a process whose main thread is unseen


def test_info_counts_those_processes(tmp_path, capsys):
    p = tmp_path / "atrace.txt"
    p.write_bytes(_text())
    assert main(["info", "--json", str(p)]) == 0
    assert json.loads(capsys.readouterr().out)["processes"] == 3


def test_declared_processes_are_kept_and_the_idle_task_is_not_a_process():
    processes = {50: Process(50, "declared", 1)}
    threads = {50: Thread(50, 50, "renamed-main"), 51: Thread(51, 50, "w"), 60: Thread(60, None, "main60"),
               61: Thread(61, 60, "w60"), 70: Thread(70, 0, "odd"), 80: Thread(80, 81, None)}
    add_main_threads(processes, threads)
    assert processes == {50: Process(50, "declared", 1),       # declared: kept as it is
                         60: Process(60, "main60"),             # from thread 61's pid, named by thread 60
                         81: Process(81, None)}                 # its main thread is not in the trace
    assert threads[60] == Thread(60, 60, "main60")              # the main thread takes its pid
    assert 81 not in threads and 0 not in processes
    assert list(processes) == [50, 60, 81]                      # in the order the threads name them
