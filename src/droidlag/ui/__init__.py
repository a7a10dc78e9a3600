"""Redundant UI layers (RUIR) and overdraw (Lin et al., TMC 2023, III): findings in an app's layout files with
includes, merges, themes and drawables resolved (`analyze_layouts`), and layer counts, covered views and
same-bounds chains in a runtime view hierarchy (`analyze_hierarchy`)."""
from droidlag.ui.hierarchy import HierarchyConfig, HierarchyReport, analyze_hierarchy
from droidlag.ui.layouts import LayoutConfig, LayoutFinding, LayoutReport, analyze_layouts

__all__ = ["analyze_layouts", "analyze_hierarchy", "LayoutConfig", "LayoutFinding", "LayoutReport",
           "HierarchyConfig", "HierarchyReport"]
