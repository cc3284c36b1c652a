"""Every place a person types a revision asks core's one resolver, in git's
order: a full id, then refs (dwim order), then abbreviations.  The case that
used to differ: a branch whose name is also the prefix of a blob's id."""

from __future__ import annotations

import pytest

from packscope.inspector.screens.lab import LabScreen
from packscope.inspector.screens.object import ObjectScreen
from tests.cli import packscope
from tests.repos import git, git_text
from tests.ui_support import open_screen, running, settle, until


@pytest.fixture(scope="module")
def branch_named_like_a_blob(tmp_path_factory):
    """(repo, name, commit id, blob id): a branch ``name`` on the commit,
    where ``name`` is also a unique abbreviation of a blob's id."""
    repo = tmp_path_factory.mktemp("resolver") / "repo"
    git("init", "-q", "-b", "main", repo)
    (repo / "file.txt").write_text("the blob a branch name abbreviates\n")
    git("add", "file.txt", cwd=repo)
    git("commit", "-q", "-m", "one", cwd=repo)
    blob = git_text("rev-parse", "HEAD:file.txt", cwd=repo).strip()
    name = blob[:6]
    git("branch", name, "HEAD", cwd=repo)
    commit = git_text("rev-parse", "HEAD", cwd=repo).strip()
    # git's own answer is the oracle: the ref wins over the abbreviation.
    assert git_text("rev-parse", name, cwd=repo).strip() == commit
    assert git_text("cat-file", "-t", blob[:6] + "^{blob}", cwd=repo, check=False).strip() != "blob"
    return repo, name, commit, blob


def test_cli_lookup_and_cat_file_take_the_branch_not_the_blob(branch_named_like_a_blob):
    repo, name, commit, _ = branch_named_like_a_blob
    assert packscope("cat-file", "-t", name, cwd=repo).stdout.strip() == b"commit"
    out = packscope("lookup", name, "--json", cwd=repo).stdout.decode()
    assert f'"oid": "{commit}"' in out


@pytest.mark.asyncio
async def test_goto_prompt_opens_the_commit_the_branch_names(branch_named_like_a_blob):
    repo, name, commit, _ = branch_named_like_a_blob
    async with running(repo, poll_seconds=60) as (app, pilot):
        await pilot.press("colon", *name)
        screen = await open_screen(app, pilot, "enter", ObjectScreen, "the Object screen to open")
        assert screen.oid.hex() == commit


@pytest.mark.asyncio
async def test_lab_looks_up_the_commit_the_branch_names(branch_named_like_a_blob):
    repo, name, commit, _ = branch_named_like_a_blob
    async with running(repo, poll_seconds=60) as (app, pilot):
        lab = await open_screen(app, pilot, "6", LabScreen, "the Lab to open")
        await pilot.press("l", *name, "enter")
        await settle(app, pilot)
        run = await until(pilot, lambda: lab.run is not None and lab.run, "the Lab's lookup to finish")
        assert run.oid is not None and run.oid.hex() == commit


@pytest.mark.asyncio
async def test_history_revision_picker_walks_from_the_commit_the_branch_names(branch_named_like_a_blob):
    from packscope.inspector.screens.history import HistoryScreen

    repo, name, commit, _ = branch_named_like_a_blob
    async with running(repo, poll_seconds=60) as (app, pilot):
        history = await open_screen(app, pilot, "7", HistoryScreen, "the History screen to open")
        # ctrl+u: the prompt starts with the current revisions
        await pilot.press("r", "ctrl+u", *name, "enter")
        await until(pilot, lambda: history.revs == [name], "the picked revision to be taken")
        rows = await until(pilot, lambda: history.history.rows, "the walk from the picked revision")
        assert rows[0].oid.hex() == commit
