"""Damaged RICO/DroidBot JSON: a name damaged into a number and bounds damaged into text are read as absent (with a
warning for bounds), never a traceback. Found by typing the JSON as `dict[str, object]` (issue 17)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from droidlag.errors import InputError
from droidlag.io.view_hierarchy import read_hierarchy


def _rico(tmp_path: Path, root: dict, **top: object) -> Path:
    p = tmp_path / "rico.json"
    p.write_text(json.dumps({"activity": {"root": root}, **top}))
    return p


def test_rico_activity_name_not_text_is_absent(tmp_path: Path):
    p = _rico(tmp_path, {"class": "A", "bounds": [0, 0, 10, 20], "resource-id": 7, "children": []},
              activity_name=5)
    h, _ = read_hierarchy(p)
    assert h.activity is None and h.package is None
    assert h.root.resource_id is None
    assert h.root.bounds == (0, 0, 10, 20)


def test_rico_child_bounds_not_numbers_skipped_with_warning(tmp_path: Path):
    root = {"class": "A", "bounds": [0, 0, 10, 20],
            "children": [{"class": "B", "bounds": ["a", 0, 1, 1]}, {"class": "C", "bounds": [1, 1, 2, 2]}]}
    h, warnings = read_hierarchy(_rico(tmp_path, root, activity_name="com.x/.Main"))
    assert [c.cls for c in h.root.children] == ["C"]
    assert any("children[0]" in w.message and "bounds" in w.message for w in warnings)


def test_rico_root_bounds_not_numbers_is_input_error(tmp_path: Path):
    with pytest.raises(InputError, match="RICO root without bounds"):
        read_hierarchy(_rico(tmp_path, {"class": "A", "bounds": ["a", 0, 1, 1], "children": []},
                             activity_name="com.x/.Main"))


def test_droidbot_activity_not_text_is_absent(tmp_path: Path):
    p = tmp_path / "state.json"
    p.write_text(json.dumps({"foreground_activity": ["x"], "views": [
        {"class": "A", "bounds": [[0, 0], [10, 20]], "parent": -1, "children": [], "resource_id": 3}]}))
    h, _ = read_hierarchy(p)
    assert h.activity is None and h.root.resource_id is None
