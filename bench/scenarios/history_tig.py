"""history-tig: History beside tig's main view on the real history.

The same measurement as scale-growth's UI rows (see history_growth): the
packscope UI headless in a fresh worker — History's first rows after
``7`` from spawn, ``G`` to the last row, peak RSS — and Debian's ``tig``
in a pseudo-terminal — first rows from spawn, ``G`` (bound to
move-last-line) until the root commit is drawn, tig's peak RSS.  On
``--repo`` (git.git in RESULTS.md), else the synthetic history.  Skipped
with a note where tig is not installed.
"""

from __future__ import annotations

from packscope.bench.results import ScenarioResult

NAME = "history-tig"
TITLE = "History vs tig: first rows, to the end, peak RSS (real history)"


def run(ctx) -> ScenarioResult:
    from packscope.bench import inputs as inp
    from packscope.bench.peers import tig_unavailable
    from packscope.bench.scenarios.history_growth import ui_case

    res, source, repo = inp.on_real_history(
        ctx,
        NAME,
        TITLE,
        columns=[("history_seconds", "G to the end"), ("history_rows", "rows"), ("max_rss_bytes", "peak RSS")],
    )
    commits = int(inp.git("rev-list", "--count", "HEAD", cwd=repo))
    workload = {**inp.describe(repo), "commits": commits}
    res.cases.append(ui_case(ctx, f"{source.label} · HEAD", source.label, repo, workload, tig_unavailable, False))
    return res
