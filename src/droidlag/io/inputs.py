"""Finding a user's inputs: files, folders (recursively) and what each holds, by content. Nothing here analyses;
unreadable, empty, unknown and junk files are recorded as skipped with the reason, and the rest go on."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from droidlag.errors import InputError
from droidlag.io.detect import sniff_file
from droidlag.io.source import GZIP_MAGIC, SNIFF_BYTES, gunzip_head

# Folders deeper than this are not walked (symlink loops, runaway trees).
MAX_DEPTH = 12


@dataclass
class InputFile:
    """One input file and what it holds: a droidlag.io.detect kind, "bugreport", or None when skipped."""

    path: Path
    kind: str | None
    status: str = "pending"          # "pending" | "analyzed" | "skipped" | "failed"
    reason: str | None = None
    display: str | None = None       # name shown to the user (archive!member for files found inside an archive)

    def to_dict(self) -> dict:
        return {"path": self.display or str(self.path), "kind": self.kind, "status": self.status, "reason": self.reason}


def walk(root: Path) -> list[Path]:
    """Files under a folder, sorted, hidden ones skipped, symlinked folders not followed, depth bounded."""
    out: list[Path] = []
    base_depth = len(root.parts)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        if len(Path(dirpath).parts) - base_depth >= MAX_DEPTH:
            dirnames[:] = []
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        out.extend(Path(dirpath) / f for f in sorted(filenames) if not f.startswith("."))
    return out


def _sniff_head(path: Path) -> str | None:
    """The kind of a file from its first bytes (the whole file is read only by the reader that takes it)."""
    with open(path, "rb") as fh:
        head = fh.read(SNIFF_BYTES)
    if not head.strip():
        raise InputError(path, "file is empty")
    gz = head[:2] == GZIP_MAGIC
    if gz:
        head = gunzip_head(head, path)
    kind = sniff_file(path, head)
    if kind is None and gz:
        raise InputError(path, "gzip file holds no format droidlag reads")
    if kind == "zip":
        from zipfile import BadZipFile, ZipFile
        try:
            with ZipFile(path) as z:
                names = z.namelist()
        except (BadZipFile, OSError) as e:
            raise InputError(path, f"unreadable zip archive ({e})") from None
        if any(Path(n).name.startswith("bugreport") and n.endswith(".txt") for n in names):
            return "bugreport"
        return "zip"
    return kind


def discover(paths: list[str | Path]) -> list[InputFile]:
    """Every file under `paths` with its kind; files that cannot be used come back with status "skipped"."""
    found: list[InputFile] = []
    for p in map(Path, paths):
        if not p.exists():
            found.append(InputFile(p, None, "skipped", "no such file or folder"))
            continue
        from droidlag.io.android_res import looks_like_app_tree
        if p.is_dir() and looks_like_app_tree(p):   # an app's source tree: its layouts are one input
            found.append(InputFile(p, "android-layouts"))
            continue
        files = walk(p) if p.is_dir() else [p]
        if p.is_dir() and not files:
            found.append(InputFile(p, None, "skipped", "folder holds no files"))
        for f in files:
            try:
                if f.is_symlink() and not f.resolve().is_file():
                    raise InputError(f, "broken or non-file symlink")
                if f.stat().st_size == 0:
                    raise InputError(f, "file is empty")
                kind = _sniff_head(f)
                if kind is None:
                    raise InputError(f, "not a format droidlag reads")
                found.append(InputFile(f, kind))
            except InputError as e:
                found.append(InputFile(f, None, "skipped", e.reason))
            except PermissionError:
                found.append(InputFile(f, None, "skipped", "permission denied"))
            except OSError as e:
                found.append(InputFile(f, None, "skipped", f"cannot read: {e.strerror or e}"))
    return found
