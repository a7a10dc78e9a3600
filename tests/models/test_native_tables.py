"""The tables the native core hands to polars whole (native/src/arrow_table.rs, imported by `columns.table` through the
Arrow C stream interface): each with exactly its schema's types (models/trace.py), nulls where the native columns
mark them, strings and categoricals as written. Expected rows are listed by hand from the events."""
import polars as pl

from droidlag._native import SliceEvents, ThreadPids
from droidlag.models import TraceBuilder
from droidlag.models.trace import BINDER_SCHEMA, COUNTER_SCHEMA, SLICE_SCHEMA, THREAD_STATE_SCHEMA

LONG = "a slice name longer than the twelve bytes a string view holds inline"


def _trace():
    b = TraceBuilder("test", "mem")
    b.thread(7, 70, "ui")
    b.atrace(10, 7, f"B|70|{LONG}")
    b.atrace(20, 7, "B|70|short")
    b.atrace(30, 7, "E|70")
    b.atrace(40, 7, f"S|70|{LONG}|-5")
    b.atrace(45, 8, "I|81|tick")
    b.atrace(50, 7, "G|70|Track A|load|9")
    b.slice_begin(60, 9, "bad \ufffd name")            # no pid: thread 9's process is unknown
    b.atrace(70, 7, "C|70|mem|2.5")
    b.counter(5, "cpufreq", 1_800_000.0, cpu=3)
    b.sched_switch(0, 2, 0, "R", 7)
    b.sched_switch(100, 2, 7, "D", 0)
    b.sched_waking(150, 7, None, None)
    b.sched_blocked_reason(151, 7, "io_schedule", True)
    b.sched_switch(200, 1, 0, "R", 7)
    b.binder_transaction(300, 7, 1, False, flags=0, code=5, to_proc=90)
    b.binder_transaction_received(310, 91, 1)
    b.binder_transaction(320, 91, 2, True)
    b.binder_transaction(330, 7, 3, False, flags=1, code=6)     # one-way, never received
    b.see_time(400)
    return b, b.build()


def test_every_native_table_has_its_schema_exactly():
    _, t = _trace()
    assert dict(t.slices.schema) == SLICE_SCHEMA
    assert dict(t.thread_states.schema) == THREAD_STATE_SCHEMA
    assert dict(t.counters.schema) == COUNTER_SCHEMA
    assert dict(t.binder.schema) == BINDER_SCHEMA


def test_slice_rows_with_nulls_long_names_and_kinds():
    b, t = _trace()
    rows = t.slices.sort("id").rows()
    # id, ts, dur, tid, pid, name, depth, parent_id, kind, cookie, track, closed (by hand from the events above)
    assert rows == [
        (0, 10, 390, 7, 70, LONG, 0, None, "thread", None, None, False),
        (1, 20, 10, 7, 70, "short", 1, 0, "thread", None, None, True),
        (2, 40, 360, 7, 70, LONG, 0, None, "async", -5, None, False),
        (3, 45, 0, 8, 81, "tick", 0, None, "instant", None, None, True),
        (4, 50, 350, 7, 70, "load", 0, None, "async", 9, "Track A", False),
        (5, 60, 340, 9, None, "bad \ufffd name", 0, None, "thread", None, None, False),
    ]
    assert b.replaced_slice_names == 1


def test_thread_states_state_is_categorical_and_blocked_reason_fills_its_d_row():
    _, t = _trace()
    states = t.thread_states.filter(pl.col("tid") == 7).sort("ts")
    assert states.get_column("state").dtype == pl.Categorical
    # ts, dur, state, cpu, blocked_function, io_wait, waker_tid
    assert states.select("ts", "dur", "state", "cpu", "blocked_function", "io_wait", "waker_tid").rows() == [
        (0, 100, "Running", 2, None, None, None),
        (100, 50, "D", None, "io_schedule", True, None),
        (150, 50, "R", None, None, None, None),
        (200, 200, "Running", 1, None, None, None),
    ]
    assert states.filter(pl.col("state") == "D").height == 1     # compares with a plain string


def test_counter_and_binder_rows():
    _, t = _trace()
    assert t.counters.rows() == [(5, "cpufreq", 1_800_000.0, 3, None), (70, "mem", 2.5, None, 70)]
    # ts, dur, client_tid, client_pid, server_tid, server_pid, received_ts, reply_ts, oneway, code, flags, debug_id
    assert t.binder.sort("ts").rows() == [
        (300, None, 7, 70, 91, None, 310, 320, False, 5, 0, 1),
        (330, None, 7, 70, None, None, None, None, True, 6, 1, 3),
    ]


def test_a_native_table_exports_again_and_shares_its_buffers():
    ev = SliceEvents()
    for i in range(100):
        ev.begin(i * 10, 1, f"slice number {i} with a long name", 1)
        ev.end(i * 10 + 5, 1)
    table = ev.nest(ThreadPids({}), 1000)["table"]
    assert len(table) == 100 and table.columns == list(SLICE_SCHEMA)
    one, two = pl.DataFrame(table), pl.DataFrame(table)
    assert one.equals(two) and dict(one.schema) == SLICE_SCHEMA
    # no copy: both imports view the native buffer itself (numpy views a null-free int column without a copy)
    assert one.get_column("ts").to_numpy().ctypes.data == two.get_column("ts").to_numpy().ctypes.data
    assert one.get_column("name")[99] == "slice number 99 with a long name"


def test_a_counter_cpu_past_32_bits_is_left_empty_with_a_warning_not_wrapped():
    b = TraceBuilder("test", "mem")
    b.counter(1, "cpufreq", 1.0, cpu=1 << 40)
    b.counter(2, "cpufreq", 2.0, cpu=1)
    t = b.build()
    assert t.counters.select("ts", "cpu").rows() == [(1, None), (2, 1)]
    assert [w.message for w in t.warnings] == [
        "1 counter sample(s) with a CPU number outside 32 bits; their cpu is left empty"]


def test_empty_tables_keep_their_schemas():
    b = TraceBuilder("test", "mem")
    b.atrace(5, 1, "E|1")            # an end without a begin: no slice
    b.binder_transaction(1, 2, 3, True)     # a reply without its call: no row
    t = b.build()
    assert (t.slices.height, t.binder.height) == (0, 0)
    assert dict(t.slices.schema) == SLICE_SCHEMA and dict(t.binder.schema) == BINDER_SCHEMA


def test_thread_states_without_blocked_reasons_have_null_typed_columns():
    b = TraceBuilder("test", "mem")
    b.sched_switch(0, 0, 0, "R", 5)
    b.sched_switch(10, 0, 5, "S", 0)
    b.sched_waking(20, 5, 1, 6)
    t = b.build()
    assert dict(t.thread_states.schema) == THREAD_STATE_SCHEMA
    assert t.thread_states.select("ts", "state", "cpu", "blocked_function", "io_wait", "waker_tid").rows() == [
        (0, "Running", 0, None, None, None), (10, "S", None, None, None, None), (20, "R", 1, None, None, 6)]


def test_ftrace_text_with_a_cpu_number_past_32_bits_reads_with_a_warning(tmp_path):
    """A damaged cpu_frequency line (cpu_id past 32 bits) used to stop the whole read with an internal error."""
    from droidlag.io import read_trace
    p = tmp_path / "trace.txt"
    p.write_text("# tracer: nop\n#\n"
                 "          <idle>-0     [000] d..2  100.000000: cpu_frequency: state=1800000 cpu_id=99999999999\n"
                 "          <idle>-0     [000] d..2  100.100000: cpu_frequency: state=900000 cpu_id=1\n")
    t = read_trace(str(p))
    assert t.counters.select("value", "cpu").rows() == [(1_800_000.0, None), (900_000.0, 1)]
    assert any("outside 32 bits" in w.message for w in t.warnings)
