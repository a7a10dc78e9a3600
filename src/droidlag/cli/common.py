"""What every subcommand shares: the exit codes and JSON output."""
from __future__ import annotations

import json
import sys

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_NO_INPUT = 0, 1, 2, 3


def print_json(obj) -> None:
    """Write obj as indented JSON to stdout (values JSON cannot hold are written as their str())."""
    json.dump(obj, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
