"""The scenarios of ``packscope bench``, in the order they run.

Each module has ``NAME``, ``TITLE`` and ``run(ctx) -> ScenarioResult``.
"""

from __future__ import annotations

import importlib

SCENARIOS = {
    "exists-mixed": "exists_mixed",
    "read-random": "read_random",
    "walk": "walk",
    "graph-walks": "graph_walks",
    "fsck": "fsck",
    "startup": "startup",
    "rescan": "rescan",
    "loose-sweep": "loose_sweep",
    "idx-search": "idx_search",
    "last-modified": "last_modified",
    "blame": "blame",
    "history-search": "history_search",
    "history-last-commits": "history_last_commits",
    "commit-open": "commit_open",
    "tracing-overhead": "tracing_overhead",
    "ui-startup": "ui_startup",
    "scale-growth": "history_growth",
    "history-250k": "history_scale",
    "history-tig": "history_tig",
}


def load(name: str):
    return importlib.import_module(f"packscope.bench.scenarios.{SCENARIOS[name]}")
