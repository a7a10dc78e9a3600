"""Thread-dump inputs by content: the dump units (`DumpUnit`) of a bugreport zip or of dump/bugreport text, and
the files a list of paths names (folders walked as `droidlag analyze` walks them). Readers only: the hangs
analysis takes the units."""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from droidlag.io.inputs import walk
from droidlag.models.dumps import DumpUnit


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, folders walked as `droidlag analyze` walks them (sorted; hidden files skipped), `*.md` notes
    skipped."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(q for q in walk(p) if q.suffix.lower() != ".md")
        else:
            out.append(p)
    return out


def load_units(path: str | Path, data: bytes | None = None) -> list[DumpUnit]:
    """The dump units of one file: a bugreport zip, or dump/bugreport text (gzip ok). InputError if unusable.
    data: the file's bytes when the caller has read them already (fleet ingest hashes and sniffs them first)."""
    from droidlag.io.anr import read_anr
    from droidlag.io.bugreport import read_bugreport_zip
    from droidlag.io.source import read_bytes

    if data is None:
        data = read_bytes(path)
    if data[:4] == b"PK\x03\x04":
        return read_bugreport_zip(path, data)
    return read_anr(path, data)
