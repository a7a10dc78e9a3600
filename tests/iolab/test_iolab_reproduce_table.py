"""The reproduce table explains every figure that misses its tolerance."""
import pytest

from droidlag.iolab.reproduce import format_table


def test_every_miss_is_explained_under_the_table():
    result = {"seed": 0, "scale": 1.0, "rows": [
        {"figure": "Gallery x", "paper": "x2.6", "droidlag": "x4.9", "tolerance": "±40%", "within_tolerance": False,
         "note": "allocations wait on BG writeback"},
        {"figure": "Camera FG", "paper": "< 1 s", "droidlag": "0.31 s", "tolerance": "< 1 s",
         "within_tolerance": True, "note": "fine"}]}
    text = format_table(result)
    assert "1/2 figures within tolerance" in text
    why = text.split("Why not:")[1]
    assert "Gallery x: allocations wait on BG writeback" in why and "Camera FG" not in why


def test_chart_places_values_on_the_tolerance_band():
    from droidlag.iolab.plots import _position
    from droidlag.iolab.reproduce import _pp_row, _ratio_row

    # x2.6 ±40%: band 1.56..3.64; the paper's figure mid-band, x4.9 beyond the high edge
    r = _ratio_row("gallery", 2.6, 4.9).to_dict()
    x, px = _position(r)
    assert abs(px - 0.5) < 1e-9 and abs(x - (4.9 - 1.56) / (3.64 - 1.56)) < 1e-9 and not r["within_tolerance"]
    # 91% ±15 points: 97% sits at (97-76)/30
    x, px = _position(_pp_row("faio", 91, 97.0).to_dict())
    assert abs(x - 21 / 30) < 1e-9 and abs(px - 0.5) < 1e-9
    assert _position({"value": 1.0, "band_low": None}) == (None, None)


def test_reproduce_chart_is_written(tmp_path):
    from droidlag.iolab.plots import plot_reproduce
    from droidlag.iolab.reproduce import _ratio_row

    rows = [_ratio_row("a", 2.6, 2.5).to_dict(), {"figure": "b", "paper": "UFS > eMMC", "droidlag": "yes",
                                                  "tolerance": "", "within_tolerance": True, "value": 3.8,
                                                  "band_low": 0.0, "band_high": None, "paper_value": None}]
    out = tmp_path / "r.png"
    plot_reproduce({"rows": rows}, str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# The misses of the published calibration (docs/iolab.md, and the closing note of the WAM issue), written down
# from that run: a change to the simulator that moves any row across its tolerance shows here by name.
KNOWN_MISSES = {
    "Gallery launch, FG+BG / FG only",
    "Camera suspension, FG+BG / FG only",
    "Game loading, FG+BG",
    "faio-fid delay cut, camera",
    "FastTrack vs stock, six BG apps",
    "SmartIO read slowdown under writes, rand",
}


@pytest.mark.slow
def test_reproduce_fast_rows_pass_and_miss_as_calibrated():
    """A real `iolab reproduce` (the simulator rows, seed 0, no WAM days): 19 rows, 13 within tolerance, and the
    six misses are exactly the documented ones."""
    from droidlag.iolab.reproduce import reproduce

    rows = reproduce(seed=0, wam=False)["rows"]
    missed = {r["figure"] for r in rows if not r["within_tolerance"]}
    assert len(rows) == 19
    assert missed == KNOWN_MISSES
