"""The `droidlag` command: one subcommand per part (a module of this package each), each a thin layer over the
part's public API. The CLI is the only layer that parses arguments; nothing below it imports it.

Exit codes: 0 ran, 2 usage error, 3 no usable input, 1 internal error (a bug: please report it).
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from droidlag.cli.common import EXIT_INTERNAL, EXIT_NO_INPUT, EXIT_OK, EXIT_USAGE, CleanWriter, clean, print_json
from droidlag.errors import InputError

# Each module has register(subparsers); a subcommand sets `func(args) -> int`.
PART_MODULES = [
    "droidlag.cli.analyze",
    "droidlag.cli.info",
    "droidlag.cli.frames",
    "droidlag.cli.hangs",
    "droidlag.cli.iolab",
    "droidlag.cli.gc",
    "droidlag.cli.ui",
    "droidlag.cli.fleet",
]



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


def _term_as_exit() -> dict:
    """SIGTERM and SIGHUP end the run like Ctrl-C does, through Python's exit path, so temp files and half-written
    outputs are cleaned up (kill -9 cannot be caught: the next run removes what it left). Returns the handlers it
    replaced, for main to put back."""
    import signal

    def stop(signum, frame):
        raise SystemExit(128 + signum)
    replaced: dict = {}
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):   # kill, and the terminal closing
        if sig is None or signal.getsignal(sig) not in (signal.SIG_DFL, None):
            continue   # someone (nohup, an embedding application) chose a handler: keep it
        try:
            replaced[sig] = signal.signal(sig, stop)
        except ValueError:   # not the main thread: leave the handlers alone
            break
    return replaced


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    handlers = _term_as_exit()
    saved = sys.stdout
    sys.stdout = CleanWriter(saved)   # hostile names in the data never reach the terminal as control sequences
    try:
        return int(args.func(args) or 0)
    except InputError as e:
        print(clean(f"droidlag: {e}"), file=sys.stderr)
        return EXIT_NO_INPUT
    except KeyboardInterrupt:
        print("droidlag: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # a bug in droidlag: one line for the user, the traceback on request
        if os.environ.get("DROIDLAG_DEBUG"):
            raise
        print(clean(f"droidlag: internal error: {type(e).__name__}: {e} (set DROIDLAG_DEBUG=1 for the traceback)"),
              file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        sys.stdout = saved
        import signal
        for sig, old in handlers.items():
            signal.signal(sig, old)


if __name__ == "__main__":
    sys.exit(main())

__all__ = ["main", "build_parser", "print_json", "EXIT_OK", "EXIT_INTERNAL", "EXIT_USAGE", "EXIT_NO_INPUT"]
