"""`droidlag gc ...`: garbage-collection cost. Each sub-command lives in its own module (`gc_device`, `gc_lbo`),
registered here under one `gc` parser."""
from __future__ import annotations

import argparse
import importlib

GC_MODULES = ["droidlag.cli.gc_device", "droidlag.cli.gc_lbo"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gc", help="garbage-collection cost: ART GC logs and traces on device data; the LBO method "
                                  "on real JVM runs")
    gcsub = p.add_subparsers(dest="gc_command", metavar="GC_COMMAND")
    for name in GC_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name == name:
                continue
            raise
        mod.register(gcsub)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])
