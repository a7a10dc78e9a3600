"""What every subcommand shares: the exit codes and JSON output."""
from __future__ import annotations

import json
import re
import sys

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_NO_INPUT = 0, 1, 2, 3


def print_json(obj) -> None:
    """Write obj as indented JSON to stdout (values JSON cannot hold are written as their str())."""
    json.dump(obj, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


# C0 controls but tab and newline, DEL, C1 controls, and the bidi overrides: what lets a hostile process name move the
# cursor, recolour or rewrite the user's terminal, or reorder what they read.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """text with terminal control characters shown as `?` (findings.json keeps them, escaped)."""
    return _CONTROL.sub("?", text)


class CleanWriter:
    """A text stream that strips control characters on the way to `raw` (stdout, for every subcommand); anything
    else (encoding, buffer, ...) is raw's."""

    def __init__(self, raw):
        self.raw = raw

    def write(self, s: str) -> int:
        self.raw.write(clean(s))
        return len(s)

    def flush(self) -> None:
        self.raw.flush()

    def __getattr__(self, name: str):
        return getattr(self.raw, name)


NOT_READ = ("skipped", "failed")   # an input's statuses when nothing of it is in the results


def not_read(inputs: list) -> list:
    """The inputs (findings' InputFile) nothing was read from, each with its reason."""
    return [i for i in inputs if i.status in NOT_READ]


def one_result(paths: list[str], inputs: list, n_results: int) -> bool:
    """Whether a command's JSON is its one result alone: one path given, one result, not out of an archive, and no
    input left unread (the form with a list names each input and why it was not read)."""
    return (n_results == 1 and len(paths) == 1 and not not_read(inputs)
            and not any(i.kind in ("zip", "tar") for i in inputs))
