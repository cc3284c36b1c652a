"""history-250k: a history of 250,000 commits with 5,000 merges in History.

Issue 28's memory goal: the UI opens on it, ``7`` switches to History,
``G`` goes to the end, and the process stays ≤ 300 MB until the root
commit's row is loaded.  Headless (``App.run_test``) in a fresh worker:
reported are the time to History's first rows, the time to the last row
from ``G``, the rows, and the process's peak resident set (VmHWM).  The
history comes from bench/synth.py (one pack; 1–2 files changed per commit,
so about 1.5 M objects); ``--tiny`` uses 500 commits and 10 merges.
"""

from __future__ import annotations

from packscope.bench.results import ScenarioResult
from packscope.bench.synth import Shape

NAME = "history-250k"
TITLE = "History of 250,000 commits (5,000 merges): to the root with G (UI, headless)"
RSS_GOAL = 300 * 1024 * 1024


def goal_shape(tiny: bool) -> Shape:
    if tiny:
        return Shape(commits=500, merges=10, files=40, changes=(1, 2))
    return Shape(commits=250_000, merges=5_000, files=3_000, changes=(1, 2))


def run(ctx) -> ScenarioResult:
    from packscope.bench import inputs as inp
    from packscope.bench.runner import one_worker_case

    shape = goal_shape(ctx.tiny)
    res = ScenarioResult(
        NAME,
        TITLE,
        columns=[
            ("first_rows_seconds", "first rows"),
            ("history_seconds", "G to the root"),
            ("history_rows", "rows"),
            ("max_rss_bytes", "peak RSS"),
        ],
    )
    repo = str(inp.synthetic_scaled(ctx, shape))
    inp.warm(ctx, repo)
    label = f"synthetic {shape.commits:,} commits, {shape.merges:,} merges"
    case = one_worker_case(
        ctx,
        label,
        label,
        repo,
        "packscope History, 7 then G",
        "packscope.bench.scenarios.history_growth:history_to_root",
        lambda i: {"repo": repo},
        check=lambda r, i: {"correct": r.get("history_rows") == shape.commits},
    )
    peak = case.series[0].metric_median("max_rss_bytes") if case.series else None
    if peak is not None:
        verdict = "met" if peak <= RSS_GOAL else "NOT met"
        case.notes.append(f"goal: peak RSS ≤ 300 MB — {verdict} ({peak / 2**20:.0f} MiB)")
    res.cases.append(case)
    return res
