"""A harness that produces LBO results here: JVM workloads (a GCBench-style allocation benchmark compiled at run time,
and real libraries fetched from Maven Central) run with every collector the installed JDK has, at multiples of the
minimum heap found by bisection, with repeated invocations, warm-up separated, and GC cost attributed from the JVM's
own logs (pauses) and its GC threads' CPU time."""
from droidlag.gc.lbo.harness.jvm import COLLECTORS, available_collectors, parse_run_output
from droidlag.gc.lbo.harness.runner import RunPlan, run_plan
from droidlag.gc.lbo.harness.workloads import WORKLOADS

__all__ = ["COLLECTORS", "WORKLOADS", "RunPlan", "available_collectors", "parse_run_output", "run_plan"]
