"""A plain runtime dump file is read a block at a time (io.anr's streaming path): the units must be exactly those
of reading the whole text, whatever the block size cuts through (CRLF, invalid UTF-8, NUL bytes, old Mac newlines),
and a file that turns out to hold bugreport sections must come out as the whole-text reader reads it."""
from __future__ import annotations

from pathlib import Path

import pytest

import droidlag.io.anr as anr
from droidlag.errors import InputError


def _units(path: Path, data: bytes | None) -> object:
    try:
        return [(u.source, u.nbytes, repr(u.processes), repr(u.header), [str(w) for w in u.warnings],
                 u.wait_channels, u.pasted, u.snapshot) for u in anr.read_anr(path, data)]
    except InputError as e:
        return str(e)


def _runtime_dumps(corpus: Path) -> list[Path]:
    out = [p for p in sorted((corpus / "anr").rglob("*")) if p.is_file()
           and p.read_bytes()[:4096].lstrip().startswith(b"----- pid ")]
    assert len(out) >= 5   # the corpus has many: a test that streamed none would prove nothing
    return out


@pytest.mark.parametrize("block", [1000, 4 << 20])
def test_streamed_read_equals_whole_text_read(corpus: Path, monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    monkeypatch.setattr(anr, "STREAM_BLOCK", block)
    streamed = []
    real = anr._streamed_blocks

    def spy(*a: object) -> object:
        streamed.append(1)
        return real(*a)  # type: ignore[arg-type]
    monkeypatch.setattr(anr, "_streamed_blocks", spy)
    for p in _runtime_dumps(corpus):
        assert _units(p, None) == _units(p, p.read_bytes()), p
    assert streamed   # the data=None reads did take the streaming path


def test_streamed_read_of_damaged_text(corpus: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(anr, "STREAM_BLOCK", 997)
    src = (corpus / "anr" / "sailfish_android10_vm_traces_just_now_54procs.txt").read_bytes()
    if not src.lstrip().startswith(b"----- pid "):   # the file opens with its bugreport section title
        src = src[src.index(b"----- pid "):]
    cases = {"crlf": src.replace(b"\n", b"\r\n"), "cr": src.replace(b"\n", b"\r"),
             "utf8": src[:50000] + b"\xff\xe2\x82\n" + src[50000:] + b"\xc3",
             "nul": src[:3000] + b"\x00\x00" + src[3000:],
             "section": src[:70000] + b"\n------ VM TRACES AT LAST ANR (/data/anr/x) ------\n" + src[70000:]}
    for name, data in cases.items():
        f = tmp_path / f"{name}.txt"
        f.write_bytes(data)
        whole = _units(f, data)
        assert _units(f, None) == whole, name
        if name == "utf8":   # the warning names the line of the first bad byte, counted across blocks
            line = src[:50000].count(b"\n") + 1
            assert any("invalid UTF-8" in w and w.split(":")[1].startswith(str(line)) for w in whole[0][4])
        if name == "section":
            assert len(whole) == 2   # read as bugreport text: the part before the title and the section
