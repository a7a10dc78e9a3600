"""ftrace prints `<...>` (or `<pid>`, as some tracers write it) for a task whose comm it did not keep: neither is a
thread's name, so the comm a sched_switch gives the thread names it."""
from droidlag.io.systrace import read_systrace

HEADER = ("# tracer: nop\n#\n#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
          "#              | |       |   ||||       |         |\n")
LINES = [
    "          <7952>-7952  [001] d..3   100.000100: sched_switch: prev_comm=atrace prev_pid=7952 prev_prio=120 "
    "prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
    "           <...>-7953  [002] d..3   100.000200: sched_switch: prev_comm=logd.writer prev_pid=7953 prev_prio=120 "
    "prev_state=S ==> next_comm=swapper/2 next_pid=0 next_prio=120",
    "          <idle>-0     [001] d..3   100.000300: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 "
    "prev_state=R ==> next_comm=kworker/1:1 next_pid=80 next_prio=120",
    "     kworker/1:1-80    [001] d..3   100.000400: sched_switch: prev_comm=kworker/1:1 prev_pid=80 prev_prio=120 "
    "prev_state=S ==> next_comm=<8000> next_pid=8000 next_prio=120",
]


def test_placeholder_task_names_give_way_to_the_sched_comm():
    t = read_systrace((HEADER + "\n".join(LINES) + "\n").encode(), "mem.txt")
    assert t.threads[7952].name == "atrace"          # `<7952>` is the tracer's stand-in
    assert t.threads[7953].name == "logd.writer"     # so is `<...>`
    assert t.threads[80].name == "kworker/1:1"
    assert 8000 not in t.threads or t.threads[8000].name is None   # a stand-in in an event's comm field neither
