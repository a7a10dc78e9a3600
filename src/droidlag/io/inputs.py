"""Finding a user's inputs: files, folders (recursively) and what each holds, by content. Nothing here analyses;
unreadable, empty, unknown and junk files are recorded as skipped with the reason, and the rest go on."""
from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from droidlag.errors import InputError, ReadWarning
from droidlag.io.archive import is_tar
from droidlag.io.budget import current as current_budget
from droidlag.io.detect import sniff_file
from droidlag.io.source import GZIP_MAGIC, SNIFF_BYTES, gunzip_head, head_as_utf8

# Folders deeper than this are not walked (symlink loops, runaway trees).
MAX_DEPTH = 12
# The marker droidlag writes last into an output folder (droidlag.report.writer.MARKER): a folder holding it is a
# droidlag report, whose findings.perfetto-trace must never be read back as a user's trace.
OUTPUT_MARKER = ".droidlag-generation.json"
ARCHIVE_KINDS = ("zip", "tar")   # archives that only hold inputs (a bugreport zip is an input itself)
_OUTPUT_NAME = re.compile(r"^(findings\.json|report\.html|findings(-\d+-[A-Za-z0-9._-]+)?\.perfetto-trace)$")
# Documentation that sits beside data in a folder (a licence, a notice, a readme, a corpus' SOURCES.md): a folder
# walk leaves these out by name, quietly, as it leaves out hidden files; a file named on the command line is still
# read. Narrow on purpose: the names alone, bare or with a text extension (LICENSE-<id>.txt and NOTICE-<id> too), so
# that `readme_anr.txt`, `license_check.log` or `notes.md` are still inputs.
_DOC_NAME = re.compile(r"(?:(?:LICEN[CS]E|COPYING|NOTICE)(?:-[\w.+-]+)?|README|SOURCES)(?:\.(?:txt|md|rst|markdown))?",
                       re.IGNORECASE)


def is_doc_file(name: str) -> bool:
    """Whether a file name is a licence, notice, readme or SOURCES file that a folder walk leaves out."""
    return _DOC_NAME.fullmatch(name) is not None


@dataclass
class InputFile:
    """One input file and what it holds: a droidlag.io.detect kind, "bugreport", or None when skipped."""

    path: Path
    kind: str | None
    status: str = "pending"          # "pending" | "analyzed" | "skipped" | "failed"
    reason: str | None = None
    display: str | None = None       # name shown to the user (archive!member for files found inside an archive)

    def to_dict(self) -> dict[str, str | None]:
        return {"path": self.display or str(self.path), "kind": self.kind, "status": self.status, "reason": self.reason}


def _same(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def _own_outputs(folder: Path, filenames: list[str], is_out: bool) -> set[str]:
    """Names of droidlag's own outputs in a folder: those its marker lists, and in the run's --out folder (which
    may have no marker yet) every name droidlag writes there."""
    ours: set[str] = set()
    if OUTPUT_MARKER in filenames:
        try:
            listed = json.loads((folder / OUTPUT_MARKER).read_text(encoding="utf-8")).get("files") or []
            ours.update(str(n) for n in listed)
        except (OSError, ValueError, AttributeError):
            ours.update(n for n in filenames if _OUTPUT_NAME.match(n))
    if is_out:
        ours.update(n for n in filenames if _OUTPUT_NAME.match(n))
    return ours


def walk(root: Path, exclude: list[Path] | None = None) -> list[Path]:
    """Files under a folder, sorted, hidden ones skipped, symlinked folders not followed, depth bounded; droidlag's
    own outputs (in a folder holding its marker, or in a folder named in `exclude`, the run's --out) and
    documentation files by name (is_doc_file: LICENSE*, NOTICE, README, SOURCES.md, ...) are left out, the user's
    files beside them are not."""
    out: list[Path] = []
    base_depth = len(root.parts)
    skip = [p for p in exclude or [] if p.exists()]
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        folder = Path(dirpath)
        ours = _own_outputs(folder, filenames, any(_same(folder, p) for p in skip))
        if len(folder.parts) - base_depth >= MAX_DEPTH:
            dirnames[:] = []
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        out.extend(folder / f for f in sorted(filenames)
                   if not f.startswith(".") and f not in ours and not is_doc_file(f))
    return out


def _sniff_head(path: Path) -> str | None:
    """The kind of a file from its first bytes (the whole file is read only by the reader that takes it)."""
    with open(path, "rb") as fh:
        head = head_as_utf8(fh.read(SNIFF_BYTES))
    if not head.strip():
        raise InputError(path, "file is empty")
    gz = head[:2] == GZIP_MAGIC
    if gz:
        head = gunzip_head(head, path)
    if is_tar(head):   # log bundles (.tar, .tar.gz): before the text formats, which a tar of texts looks like
        return "tar"
    kind = sniff_file(path, head)
    if kind is None and gz:
        raise InputError(path, "gzip file holds no format droidlag reads")
    if kind == "zip":
        from zipfile import BadZipFile, ZipFile
        try:
            with ZipFile(path) as z:
                names = z.namelist()
        except (BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as e:
            raise InputError(path, f"unreadable zip archive ({e})") from None
        if any(Path(n).name.startswith("bugreport") and n.endswith(".txt") for n in names):
            return "bugreport"
        return "zip"
    return kind


def discover(paths: list[str | Path], exclude: list[Path] | None = None) -> list[InputFile]:
    """Every file under `paths` with its kind; files that cannot be used come back with status "skipped". Folders in
    `exclude` (the run's output folder) and droidlag report folders are left out."""
    found: list[InputFile] = []
    for p in map(Path, paths):
        if not p.exists():
            found.append(InputFile(p, None, "skipped", "no such file or folder"))
            continue
        from droidlag.io.android_res import looks_like_app_tree
        if p.is_dir() and looks_like_app_tree(p):   # an app's source tree: its layouts are one input
            found.append(InputFile(p, "android-layouts"))
            continue
        if p.is_file() and p.name in _own_outputs(p.parent, [OUTPUT_MARKER] if (p.parent / OUTPUT_MARKER).exists()
                                                  else [], False):
            found.append(InputFile(p, None, "skipped", "droidlag's own output, not an input"))
            continue
        files = walk(p, exclude) if p.is_dir() else [p]
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


def _extract(item: InputFile, tmp: Path) -> tuple[list[InputFile], list[ReadWarning]]:
    """The safe entries of a plain zip or a tar (gzip'd or not), written flat under a fresh folder (entry names only
    become display names, so no entry can clash with another or with the file system's limits); each comes back as
    an input. Every byte counts against the run's budget (droidlag.io.budget)."""
    from droidlag.io.archive import archive_entries
    from droidlag.io.source import read_bytes

    warnings: list[ReadWarning] = []
    target = Path(tempfile.mkdtemp(dir=tmp))
    written: dict[Path, str] = {}
    for k, (name, raw) in enumerate(archive_entries(item.path, read_bytes(item.path), warnings)):
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", name.rsplit("/", 1)[-1])[-80:] or "entry"
        dest = target / f"{k:05d}_{base}"
        dest.write_bytes(raw)
        written[dest] = name
    inner = discover(sorted(written))
    for i in inner:   # name inner files after the archive and the entry, not the temporary file
        i.display = f"{item.display or item.path}!{written.get(i.path, i.path.name)}"
    return inner, warnings


def expand_archives(items: list[InputFile], tmp: Path, depth: int = 0) -> list[InputFile]:
    """Replace plain zip and tar archives (not bugreports) by the inputs inside them, extracted safely under tmp;
    an archive nested deeper than the run's budget allows is kept as a skipped input saying so."""
    out: list[InputFile] = []
    max_depth = current_budget().max_depth
    for item in items:
        if item.kind not in ARCHIVE_KINDS:
            out.append(item)
            continue
        if depth >= max_depth:
            item.status, item.reason = "skipped", (f"archive nested {depth + 1} levels deep, past the limit of "
                                                   f"{max_depth}; not opened")
            out.append(item)
            continue
        try:
            inner, warnings = _extract(item, tmp)
        except InputError as e:
            item.status, item.reason = "skipped", e.reason
            out.append(item)
            continue
        except (OSError, ValueError, RuntimeError, EOFError) as e:   # damaged archives are one input's problem
            item.status, item.reason = "failed", f"archive could not be unpacked: {type(e).__name__}: {e}"
            out.append(item)
            continue
        item.status = "analyzed"
        item.reason = f"archive: {len(inner)} file(s) inside" + "".join(f"; {w.message}" for w in warnings)
        out.append(item)
        out.extend(expand_archives(inner, tmp, depth + 1))
    return out
