"""History (7) on a shallow clone and on grafted history: the rows are
what `git rev-list` lists (the walk ends at the boundary, follows grafts)."""

from __future__ import annotations

import pytest

from packscope.inspector.screens.history import HistoryScreen
from tests.repos import git
from tests.test_history_rewrites import base_repo, grafted_repo  # noqa: F401  (fixtures)
from tests.ui_support import SIZE, make_app, started, until


async def all_rows(repo) -> list[str]:
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await pilot.press("7")
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await until(pilot, lambda: screen.history is not None and screen.history.loaded > 0, "history", timeout=10)
        await pilot.press("G")
        await until(pilot, lambda: screen.history.done, "G to load the whole history", timeout=10)
        assert screen.history.error is None, screen.history.error
        return [c.oid.hex() for c in screen.history.rows]


@pytest.mark.asyncio
async def test_history_of_a_shallow_clone_ends_at_the_boundary(base_repo, tmp_path):  # noqa: F811
    repo = tmp_path / "shallow"
    git("clone", "-q", "--depth", "3", f"file://{base_repo}", repo)
    assert await all_rows(repo) == git("rev-list", "HEAD", cwd=repo).decode().split()


@pytest.mark.asyncio
async def test_history_follows_grafts(grafted_repo):  # noqa: F811
    assert await all_rows(grafted_repo) == git("rev-list", "HEAD", cwd=grafted_repo).decode().split()
