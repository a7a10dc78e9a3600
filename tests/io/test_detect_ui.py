"""Input detection of UI data: view dumps by content, app source trees as one input, and a folder of mixed data
(the corpus) not taken for an app."""
from pathlib import Path

from droidlag.io.inputs import discover


def test_view_dumps_detected_by_content(corpus: Path):
    kinds = {i.path.name: i.kind for i in discover([corpus / "viewhierarchy"])}
    dumps = [n for n in kinds if n.endswith((".json", ".xml"))]
    assert len(dumps) == 10 and all(kinds[n] == "view-hierarchy" for n in dumps), kinds
    assert "SOURCES.md" not in kinds   # documentation beside the data: not an input (io.inputs.is_doc_file)
    assert kinds["screen_2017-08-11_155430.png"] is None


def test_app_tree_is_one_input(corpus: Path):
    items = discover([corpus / "layouts" / "TeamNewPipe_NewPipe"])
    assert [(i.kind, i.status) for i in items] == [("android-layouts", "pending")]


def test_mixed_folder_is_walked_not_taken_for_an_app(corpus: Path):
    kinds = {i.kind for i in discover([corpus / "layouts"])}
    assert "android-layouts" not in kinds
