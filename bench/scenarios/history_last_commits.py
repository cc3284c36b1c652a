"""history-last-commits: the Commit screen's last-commit column, in the UI.

Headless (``App.run_test``) on the real history: History opens, Enter on
the first row (HEAD) opens its Commit screen, and the clock runs until
every root entry has its last commit, from the moment the key is sent.
Reported: that time, the CPU the whole process used meanwhile (the walk,
the screen's other workers and drawing), the entries answered, and the
process's peak resident set (VmHWM: Python objects, caches and the pack
pages the walk keeps resident).  Targets: ≤ 3 s and
≤ 250 MB on git.git.
"""

from __future__ import annotations

import asyncio
import time

from packscope.bench import inputs as inp
from packscope.bench.results import ScenarioResult
from packscope.bench.runner import one_worker_case
from packscope.bench.scenarios.ui_startup import peak_rss_bytes

NAME = "history-last-commits"
TITLE = "Commit screen: last-commit column of HEAD's root (UI, headless)"


def run(ctx) -> ScenarioResult:
    res, source, repo = inp.on_real_history(
        ctx, NAME, TITLE, columns=[("entries", "entries"), ("max_rss_bytes", "peak RSS")]
    )
    case = one_worker_case(
        ctx,
        f"{source.label} · HEAD's root",
        source.label,
        repo,
        "packscope Commit screen, last commits",
        "packscope.bench.scenarios.history_last_commits:column",
        lambda i: {"repo": repo},
        check=lambda r, i: {"correct": r["entries"] == r["answered"]},
    )
    res.cases.append(case)
    return res


# --- in the worker --------------------------------------------------------------------------


def column(repo: str, timeout: float = 600.0) -> dict:
    from packscope.inspector.app import PackscopeApp
    from packscope.inspector.screens.commit import CommitScreen
    from packscope.inspector.screens.history import HistoryScreen

    async def go() -> dict:
        app = PackscopeApp(repo)
        async with app.run_test(size=(160, 48)) as pilot:
            loop = asyncio.get_running_loop()
            end = loop.time() + timeout
            while not app.core.ready and loop.time() < end:
                await pilot.pause(0.02)
            app.action_switch("history")
            while loop.time() < end:
                screen = app.screen
                if isinstance(screen, HistoryScreen) and screen.history is not None and screen.history.loaded:
                    break
                await pilot.pause(0.02)
            # The clock starts as the key is sent: pilot.press returns only
            # after waiting for the app to go idle (up to a second, twice),
            # while the column's walk is already running.
            t0, c0 = time.perf_counter(), time.process_time()
            await pilot.press("enter")
            while not (isinstance(app.screen, CommitScreen) and app.screen.last_done) and loop.time() < end:
                await pilot.pause(0.02)
            seconds = time.perf_counter() - t0
            cpu = time.process_time() - c0
            screen = app.screen
            entries = len(screen.view.entries) if isinstance(screen, CommitScreen) and screen.view else 0
            answered = len(screen.last) if isinstance(screen, CommitScreen) else 0
        return {"seconds": seconds, "cpu_seconds": cpu, "entries": entries, "answered": answered}

    out = asyncio.run(go())
    out["max_rss_bytes"] = peak_rss_bytes()
    return out
