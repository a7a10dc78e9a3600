"""Reading for the analyses: files to models to findings. The analyses take models; this is where paths are read
(by the readers in `droidlag.io`) and handed to them, one input's failure kept as its reason."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import polars as pl

from droidlag.errors import InputError
from droidlag.frames import FramesConfig, FramesReport, frames_report
from droidlag.hangs import HangReport, HangsConfig, add_units, cluster_events
from droidlag.io.dump_units import expand_paths, load_units
from droidlag.io.frames_input import read_frames_input


def frames_from_file(path: str | Path, config: FramesConfig | None = None) -> FramesReport:
    """Read a trace or `dumpsys gfxinfo` text (chosen by content) and analyze its frames. InputError for files
    that are neither."""
    return frames_report(read_frames_input(path), config)


def frames_table(path: str | Path, config: FramesConfig | None = None) -> pl.DataFrame:
    """One row per frame (ns times, stages, verdicts) for a trace or gfxinfo file."""
    return frames_from_file(path, config).frames


def causes_table(path: str | Path, config: FramesConfig | None = None) -> pl.DataFrame:
    """One row per (SR/FF frame, cause), ranked, with shares against normal frames."""
    return frames_from_file(path, config).causes


def analyze_hangs(paths: Iterable[str | Path], config: HangsConfig | None = None,
                  progress: Callable[[Path], None] | None = None) -> HangReport:
    """Read every file (folders recursively, bugreport zips included), find the ANR/SNR events, cluster them by
    root cause and label causes. Unusable files are reported in `errors`, never raised."""
    config = config or HangsConfig()
    report = HangReport()
    for path in expand_paths(paths):
        report.files += 1
        try:
            units = load_units(path)
        except InputError as e:
            report.errors.append(e)
            continue
        finally:
            if progress is not None:
                progress(path)
        add_units(report, path, units, config)
    cluster_events(report, config)
    return report


__all__ = ["frames_from_file", "frames_table", "causes_table", "analyze_hangs", "expand_paths", "load_units"]
