"""ui-startup: the terminal UI's first paint, headless (``App.run_test``).

Measured in a fresh process from spawn to the first screen painted (Python
start-up and imports included; the paint is the screen's first refresh, not
the moment the process goes idle), then until the core session is open (the
app opens it in a worker, so painting does not wait for it).  Then the
app switches to the History screen and goes to the end
(``G``: the lazy walk loads every commit): the time that takes, the rows
loaded and the resident set after it.  On the 1000-pack repository and
the real history.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from packscope.bench.worker import peak_rss_bytes, proc_kib_field

if TYPE_CHECKING:
    from packscope.bench.results import ScenarioResult

NAME = "ui-startup"
TITLE = "Terminal UI: first paint (headless) and memory"


def run(ctx) -> ScenarioResult:
    # (imported here: the worker that times the first paint loads this
    # module too, and should load what the UI loads, not the harness)
    from packscope.bench import inputs as inp
    from packscope.bench.results import ScenarioResult
    from packscope.bench.runner import one_worker_case

    res = ScenarioResult(
        NAME,
        TITLE,
        columns=[
            ("core_ready_seconds", "core ready"),
            ("history_seconds", "all history scrolled"),
            ("history_rows", "rows"),
            ("rss_after_history_bytes", "RSS after"),
            ("max_rss_bytes", "peak RSS"),
        ],
    )
    # Tiny runs (CI) paint once: the point there is that the code still runs.
    for source in (inp.real_history(ctx),) if ctx.tiny else (inp.thousand_packs(ctx), inp.real_history(ctx)):
        repo = str(source.path)
        inp.warm(ctx, repo)

        def paint_args(i: dict, repo: str = repo) -> dict:
            return {"repo": repo, "spawned_at": time.time(), "scroll_history": True}

        res.cases.append(
            one_worker_case(
                ctx,
                source.label,
                source.label,
                repo,
                "packscope UI first paint",
                "packscope.bench.scenarios.ui_startup:first_paint",
                paint_args,
            )
        )
    return res


# --- in the worker --------------------------------------------------------------------------


def rss_bytes() -> int | None:
    return proc_kib_field("/proc/self/status", "VmRSS")


async def scroll_all_history(app, pilot, timeout: float) -> dict:
    """Switch to History, press G, wait until the walk has loaded everything."""
    loop = asyncio.get_running_loop()
    t0 = time.perf_counter()
    app.action_switch("history")
    end = loop.time() + 30
    while getattr(app.screen, "history", None) is None and loop.time() < end:
        await pilot.pause(0.02)
    screen = app.screen
    if getattr(screen, "history", None) is None:
        return {}
    await pilot.press("G")
    end = loop.time() + timeout
    # (done: every row loaded; then the search lines, read after the rows)
    while not (screen.history.done and screen.history.indexed >= screen.history.loaded) and loop.time() < end:
        await pilot.pause(0.05)
    await pilot.pause()
    return {
        "history_seconds": time.perf_counter() - t0 if screen.history.done else None,
        "history_rows": screen.history.loaded,
        "rss_after_history_bytes": rss_bytes(),
    }


def first_paint(
    repo: str, spawned_at: float, size=(120, 36), scroll_history: bool = False, timeout: float = 900.0
) -> dict:
    from packscope.inspector.cli import import_ui

    PackscopeApp = import_ui().PackscopeApp  # as `packscope REPO` imports it
    from textual.events import Ready

    async def go() -> dict:
        app = PackscopeApp(repo)
        # The first frame is when Textual sends Ready (right after the first
        # screen's first refresh).  pilot.pause() would wait for the whole
        # process to go idle — the core opening in its worker too — and
        # call that the paint.
        painted_at: list[float] = []

        def note_first_frame(message) -> None:
            if isinstance(message, Ready) and not painted_at:
                painted_at.append(time.time())

        async with app.run_test(size=tuple(size), message_hook=note_first_frame) as pilot:
            loop = asyncio.get_running_loop()
            end = loop.time() + 120
            while not painted_at and loop.time() < end:
                await asyncio.sleep(0.005)
            if not painted_at:
                raise RuntimeError("the UI never painted its first frame")
            painted = painted_at[0] - spawned_at
            end = loop.time() + 120
            while not app.core.ready and loop.time() < end:
                await pilot.pause(0.01)
            ready = time.time() - spawned_at if app.core.ready else None
            await pilot.pause()
            scrolled = await scroll_all_history(app, pilot, timeout) if scroll_history and ready else {}
        return {"seconds": painted, "core_ready_seconds": ready, **scrolled}

    out = asyncio.run(go())
    out["max_rss_bytes"] = peak_rss_bytes()
    return out
