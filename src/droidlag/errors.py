"""The one error type for input droidlag cannot use, and the warning record readers return for what they skipped."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class InputError(Exception):
    """Input that cannot be used at all: names the file, the line (or byte offset) and the reason."""

    def __init__(self, path: str | Path | None, reason: str, line: int | None = None, offset: int | None = None):
        self.path = str(path) if path is not None else None
        self.reason = reason
        self.line = line
        self.offset = offset
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        elif self.offset is not None:
            where += f" (byte {self.offset})"
        return f"{where}: {self.reason}"


@dataclass(frozen=True)
class ReadWarning:
    """Something a reader skipped or repaired: where (line or byte offset) and what."""

    path: str
    message: str
    line: int | None = None
    offset: int | None = None

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
        elif self.offset is not None:
            where += f" (byte {self.offset})"
        return f"{where}: {self.message}"

    def to_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "offset": self.offset, "message": self.message}
