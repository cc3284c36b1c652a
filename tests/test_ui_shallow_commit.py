"""A shallow clone's boundary commit: its parents were never fetched, and
git shows it as a root (its changes against the empty tree), not as
"0 files changed" against objects that are not there."""

from __future__ import annotations

import pytest

from packscope.inspector.screens.commit import CommitScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests.repos import git, git_text, work_tree_with_commits
from tests.test_ui_commit_changes import git_changes, shown_changes
from tests.ui_support import list_text, running, until


@pytest.mark.asyncio
async def test_the_shallow_boundary_shows_its_changes_as_git_does(tmp_path):
    origin = work_tree_with_commits(tmp_path / "origin", 5)
    shallow = tmp_path / "shallow"
    git("clone", "-q", "--depth", "2", f"file://{origin}", shallow)
    boundary = (shallow / ".git" / "shallow").read_text().split()[0]
    empty = git_text("hash-object", "-t", "tree", "/dev/null", cwd=shallow).strip()
    want = git_changes(shallow, empty, boundary)
    assert len(want) == 4  # f0 … f3: everything, as `git show` of the boundary lists it
    assert git_text("show", "--format=", "--name-only", boundary, cwd=shallow).split() == [w[1] for w in want]
    async with running(shallow, poll_seconds=60) as (app, pilot):
        app.push_screen(CommitScreen(bytes.fromhex(boundary)))
        screen = await until(
            pilot,
            lambda: (
                isinstance(app.screen, CommitScreen)
                and app.screen.changes is not None
                and all(pc.counting_done for pc in app.screen.changes)
                and app.screen
            ),
            "the boundary commit's changes counted",
        )
        await pilot.pause()
        assert shown_changes(screen) == [want]
        text = "\n".join(list_text(screen.query_one(VirtualList)))
        assert "against the empty tree" in text and "not in the object store" not in text
