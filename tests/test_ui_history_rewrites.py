"""History (7) on a shallow clone and on grafted or replaced history: the
rows are what `git rev-list` lists (the walk ends at the boundary, follows
grafts), and the commits concerned are marked; the Overview says what
rewrites history."""

from __future__ import annotations

import re

import pytest

from packscope.inspector.screens.history import HistoryScreen
from tests.repos import git
from tests.test_history_rewrites import base_repo, grafted_repo  # noqa: F401  (fixtures)
from tests.ui_support import plain, running, until


async def all_rows(repo) -> list[str]:
    async with running(repo) as (app, pilot):
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


@pytest.mark.asyncio
async def test_history_marks_the_boundary_grafts_and_replacements(base_repo, grafted_repo, tmp_path):  # noqa: F811
    shallow = tmp_path / "shallow"
    git("clone", "-q", "--depth", "2", f"file://{base_repo}", shallow)
    boundary = (shallow / ".git" / "shallow").read_text().split()
    rows = await row_texts(shallow)
    assert [oid for oid, text in rows.items() if "shallow" in marks(text)] == boundary
    grafts = [line.split()[0] for line in (grafted_repo / ".git" / "info" / "grafts").read_text().split("\n") if line]
    rows = await row_texts(grafted_repo)
    marked = {oid for oid, text in rows.items() if "grafted" in marks(text)}
    assert marked == {g for g in grafts if len(g) == 40 and g in rows}
    assert marked  # the grafts file's commits are on the main line
    replaced = tmp_path / "replaced"
    git("clone", "-q", "--no-local", base_repo, replaced)
    old, new = git("rev-parse", "HEAD~1", "HEAD~2", cwd=replaced).decode().split()
    git("replace", old, new, cwd=replaced)
    rows = await row_texts(replaced)
    assert [oid for oid, text in rows.items() if any(m.startswith("replaced by") for m in marks(text))] == [old]
    assert f"replaced by {new[:10]}" in marks(rows[old])


def marks(row: str) -> list[str]:
    """A row's decorations, as git log's %d joins them: "(a, b)"."""
    found = re.search(r"\(([^()]*)\) ", row)
    return found.group(1).split(", ") if found else []


async def row_texts(repo) -> dict[str, str]:
    """{commit id: its row as drawn}, once the decorations are in."""
    from tests.ui_support import list_text

    async with running(repo, size=(200, 48)) as (app, pilot):
        await pilot.press("7")
        screen = app.screen
        await until(pilot, lambda: screen.history is not None and screen.history.decor, "decorations", timeout=10)
        await pilot.press("G")
        await until(pilot, lambda: screen.history.done, "the whole history", timeout=10)
        await pilot.pause()
        ids = [c.oid.hex() for c in screen.history.rows]
        texts = list_text(screen.vlist)
        assert len(texts) >= len(ids), "every row drawn"
        return dict(zip(ids, texts, strict=False))


@pytest.mark.asyncio
async def test_overview_says_what_rewrites_history(base_repo, grafted_repo, tmp_path):  # noqa: F811
    shallow = tmp_path / "shallow"
    git("clone", "-q", "--depth", "2", "--no-single-branch", f"file://{base_repo}", shallow)
    boundary = len((shallow / ".git" / "shallow").read_text().split())
    git("replace", "HEAD", "HEAD~1", cwd=shallow)
    for repo, want in (
        (shallow, f"shallow clone ({boundary} boundary commits); 1 replace refs"),
        (grafted_repo, "3 grafts (info/grafts)"),
    ):
        async with running(repo) as (app, pilot):
            await until(pilot, lambda app=app: app.screen.facts.rewrites is not None, "the history line", timeout=10)
            await pilot.pause()
            text = plain(app.screen.query_one("#ov-store"), width=400)
            line = next((row for row in text.splitlines() if "history" in row), "")
            assert want in line, text
