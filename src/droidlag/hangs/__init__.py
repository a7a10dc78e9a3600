"""Hangs: ANR and SNR root-cause analysis from real thread dumps (Lin et al., TMC 2023): wait-for graph, critical
threads, deadlocks, normalization, features, similarity, clustering and cause labels. Takes dump units (models);
`droidlag.findings.analyze_hangs(paths)` reads the files."""
from droidlag.hangs.analyze import HangEvent, HangReport, add_units, cluster_events, events_from_unit
from droidlag.hangs.cluster import cluster_features
from droidlag.hangs.config import HangsConfig
from droidlag.hangs.features import Features, event_features
from droidlag.hangs.normalize import normalize_frame
from droidlag.hangs.similarity import similarity
from droidlag.hangs.waitfor import WaitForGraph, build_wait_for_graph

__all__ = ["HangReport", "HangEvent", "HangsConfig", "add_units", "cluster_events", "events_from_unit",
           "build_wait_for_graph", "WaitForGraph", "normalize_frame", "event_features", "Features", "similarity",
           "cluster_features"]
