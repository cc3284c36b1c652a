"""Helpers for the UI tests: start the app on a repository, wait for its
workers, and read what widgets show as plain text."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import time
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Input

from packscope.inspector.app import PackscopeApp
from packscope.inspector.screens.history import HistoryScreen

SIZE = (120, 36)


def plain(widget, width: int | None = None) -> str:
    """A Static's or Label's content rendered as plain text at the widget's
    width (the whole content, not just what fits its current height), with
    whitespace runs folded to one space (layout is not what tests check)."""
    content = getattr(widget, "content", widget)
    if width is None:
        width = getattr(getattr(widget, "content_size", None), "width", 0) or 116
    console = Console(width=width, file=io.StringIO(), color_system=None)
    with console.capture() as cap:
        console.print(content)
    return " ".join(cap.get().split())


def list_text(vlist, limit: int | None = None) -> list[str]:
    """Rows of a VirtualList, through its source (what render_line draws)."""
    n = vlist.row_count if limit is None else min(limit, vlist.row_count)
    return [vlist.source.row_text(i).plain for i in range(n)]


async def settle(app, pilot, rounds: int = 3) -> None:
    """Let workers finish and their results reach the widgets."""
    from textual.worker import WorkerCancelled

    for _ in range(rounds):
        with contextlib.suppress(WorkerCancelled):  # an exclusive worker replaced by a newer one
            await app.workers.wait_for_complete()
        await pilot.pause()


async def until(pilot, predicate, what: str, timeout: float = 10.0, step: float = 0.05):
    """Wait until ``predicate()`` is truthy and return that value; fail the
    test if it never is.

    ``what`` names the outcome waited for, in words ("the history is loaded"):
    on timeout this raises ``AssertionError("waited 10 s for <what>; ...")``
    with the predicate's last value, so a wait can never pass silently.
    ``timeout`` is in seconds; it only costs time when the outcome never comes.
    Exceptions raised by ``predicate`` propagate (a broken check is a failure too).

        await until(pilot, lambda: screen.history.done, "the whole history loaded")
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}; the condition was still {value!r:.200}")
        await pilot.pause(step)


def make_app(repo, **kw) -> PackscopeApp:
    return PackscopeApp(str(repo), **kw)


async def started(app, pilot) -> None:
    """Wait until the store is open and the first screen has its facts
    (a store that fails to open fails the test at once, with its error)."""
    await until(pilot, lambda: app.core.ready or app.core.error is not None, "the store to open", timeout=10)
    assert app.core.error is None, app.core.error
    await settle(app, pilot)


__all__ = ["SIZE", "asyncio", "list_text", "make_app", "plain", "settle", "started", "until"]


@contextlib.asynccontextmanager
async def running(repo, size=SIZE, **kw):
    """``async with running(repo) as (app, pilot)``: the app on ``repo``,
    headless, once started (see :func:`started`)."""
    app = make_app(repo, **kw)
    async with app.run_test(size=size) as pilot:
        await started(app, pilot)
        yield app, pilot


async def open_screen(app, pilot, key: str, screen_type: type, what: str, ready=None, timeout: float = 10.0):
    """Press ``key`` and wait for a ``screen_type`` screen to be on top (and,
    given ``ready``, for ``ready(screen)`` to be truthy); return the screen."""
    await pilot.press(key)

    def shown():
        screen = app.screen
        return isinstance(screen, screen_type) and (ready is None or ready(screen)) and screen

    return await until(pilot, shown, what, timeout=timeout)


async def answer_prompt(app, pilot, key: str, text: str) -> None:
    """Press ``key``, wait for the prompt it opens, put ``text`` in it and submit."""
    await pilot.press(key)
    await until(pilot, lambda: app.screen.query(Input), f"the prompt that {key} opens")
    app.screen.query_one(Input).value = text
    await pilot.press("enter")
    await pilot.pause()


async def search(app, pilot, query: str) -> None:
    """Search the screen's list for ``query`` (the / prompt)."""
    await answer_prompt(app, pilot, "slash", query)


async def open_history(app, pilot):
    """Press 7 and wait for History's first page of commits with their
    decorations (ref names)."""
    screen = await open_screen(
        app,
        pilot,
        "7",
        HistoryScreen,
        "the first page of history with its decorations",
        lambda s: s.history is not None and s.history.loaded > 0 and s.history.decor,
    )
    await pilot.pause()
    return screen


def fixed_snapshot_root(root: Path) -> Path:
    """``root``, created if needed: the snapshot repositories live at one
    fixed path because the paths on screen are drawn into the SVGs.  When
    another user owns it the snapshot tests are skipped with the reason
    (a different path would make every snapshot differ)."""
    try:
        root.mkdir(exist_ok=True)
        usable = os.access(root, os.W_OK | os.X_OK)
    except OSError:
        usable = False
    if not usable:
        pytest.skip(f"{root} is not writable (another user's?): snapshots need this fixed path; remove it")
    return root
