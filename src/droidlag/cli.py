"""The `droidlag` command: one subcommand per part, each a thin layer over the part's public API.

Exit codes: 0 ran, 2 usage error, 3 no usable input, 1 internal error (a bug: please report it).
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

from droidlag.errors import InputError

# Each module has register(subparsers); a subcommand sets `func(args) -> int`.
PART_MODULES = [
    "droidlag.report.cli",
    "droidlag.trace.cli",
    "droidlag.frames.cli",
    "droidlag.hangs.cli",
    "droidlag.iolab.cli",
]

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_NO_INPUT = 0, 1, 2, 3


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="droidlag",
        description="Find and explain Android jank (slow/frozen frames), ANRs and SNRs in real traces, "
                    "thread dumps and bugreports.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in PART_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name == name:
                continue
            raise
        mod.register(sub)
    return parser


def print_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args) or 0)
    except InputError as e:
        print(f"droidlag: {e}", file=sys.stderr)
        return EXIT_NO_INPUT
    except KeyboardInterrupt:
        print("droidlag: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # a bug in droidlag: one line for the user, the traceback on request
        if os.environ.get("DROIDLAG_DEBUG"):
            raise
        print(f"droidlag: internal error: {type(e).__name__}: {e} (set DROIDLAG_DEBUG=1 for the traceback)",
              file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
