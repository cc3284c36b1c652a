"""The stash list: `packscope stash list` prints what `git stash list`
prints, and the Refs screen (0) lists the same entries after the refs,
Enter opening the stash's commit — on a repository with three stash
entries (one with a message of its own, one dropped) built here."""

from __future__ import annotations

import pytest

from packscope.inspector.screens.commit import CommitScreen
from packscope.inspector.screens.refs import RefsScreen
from tests.cli import packscope
from tests.repos import git, git_dated, git_text
from tests.ui_support import list_text, running, until


@pytest.fixture(scope="module")
def stash_repo(tmp_path_factory):
    work = tmp_path_factory.mktemp("stash") / "work"
    git("init", "-q", "--initial-branch=main", work)
    (work / "f").write_text("0\n")
    git("add", "f", cwd=work)
    git_dated("1700000000 +0000", "commit", "-qm", "first", cwd=work)
    for n, (text, extra) in enumerate((("a\n", []), ("b\n", ["-m", "my own words"]), ("c\n", []), ("d\n", []))):
        (work / "f").write_text(text)
        git_dated(f"{1700000100 + n} +0000", "stash", "push", "-q", *extra, cwd=work)
        if n == 1:
            git("checkout", "-qb", "topic", cwd=work)  # the next stash is "WIP on topic"
    git("stash", "drop", "-q", "stash@{1}", cwd=work)
    return work


def test_stash_list_is_gits(stash_repo, tmp_path):
    want = git("stash", "list", cwd=stash_repo)
    assert want.count(b"\n") == 3 and b"my own words" in want and b"WIP on topic" in want
    got = packscope("stash", "list", cwd=stash_repo)
    assert got.returncode == 0 and got.stdout == want
    # no stash: nothing, as git prints
    empty = tmp_path / "empty"
    git("init", "-q", empty)
    assert packscope("stash", "list", cwd=empty).stdout == git("stash", "list", cwd=empty) == b""


@pytest.mark.asyncio
async def test_refs_screen_lists_the_stash_and_enter_opens_its_commit(stash_repo):
    want = git_text("stash", "list", cwd=stash_repo).splitlines()
    ids = git_text("stash", "list", "--format=%H", cwd=stash_repo).split()
    async with running(stash_repo) as (app, pilot):
        await pilot.press("0")
        screen = await until(
            pilot,
            lambda: isinstance(app.screen, RefsScreen) and app.screen.snapshot is not None and app.screen,
            "the Refs screen with its rows",
        )
        entries = screen.snapshot.entries
        stash_rows = [k for k, e in enumerate(entries) if e.kind == "stash"]
        rows = list_text(screen.vlist)
        # each row reads as git stash list's line: "stash@{n}:" then the message
        for k, line in zip(stash_rows, want, strict=True):
            name, message = line.split(" ", 1)
            assert name in rows[k] and rows[k].endswith(message), rows[k]
        screen.vlist.move_to(stash_rows[1])
        await pilot.press("enter")
        commit = await until(
            pilot, lambda: isinstance(app.screen, CommitScreen) and app.screen, "the stash's commit opened"
        )
        assert commit.oid.hex() == ids[1]
