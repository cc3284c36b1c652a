"""The Blame view: `b` on a changed file of a commit opens it; its rows fill
with the commits `git blame --porcelain` names for each line; Enter opens
the line's commit; `,` (and `<`) blames the line's commit's parent at
git's `previous` (commit and path: across the rename), the cursor near the
same line."""

from __future__ import annotations

import pytest

from packscope.inspector.screens.blame import BlameScreen
from packscope.inspector.screens.commit import CommitScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests.repos import git, git_dated, git_text
from tests.ui_support import list_text, plain, running, until


@pytest.fixture(scope="module")
def blame_repo(tmp_path_factory):
    repo = tmp_path_factory.mktemp("uiblame") / "repo"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    lines = [f"line {i}" for i in range(40)]
    (repo / "a.txt").write_text("\n".join(lines) + "\n")
    git("add", "-A", cwd=repo)
    git_dated("1700000000 +0000", "commit", "-q", "-m", "first", cwd=repo)
    lines[5] = "line 5 changed"
    (repo / "a.txt").write_text("\n".join(lines) + "\n")
    git("add", "-A", cwd=repo)
    git_dated("1700003600 +0000", "commit", "-q", "-m", "second", cwd=repo)
    git("mv", "a.txt", "b.txt", cwd=repo)
    git_dated("1700007200 +0000", "commit", "-q", "-m", "rename", cwd=repo)
    lines[30] = "line 30 changed"
    (repo / "b.txt").write_text("\n".join(lines) + "\n")
    git("add", "-A", cwd=repo)
    git_dated("1700010800 +0000", "commit", "-q", "-m", "third", cwd=repo)
    return repo


def git_porcelain(repo, rev: str, path: str) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """(each line's commit, {commit: (previous commit, previous path)}) from git."""
    commits: list[str] = []
    previous: dict[str, tuple[str, str]] = {}
    current = ""
    for line in git_text("blame", "--porcelain", rev, "--", path, cwd=repo).splitlines():
        word = line.split(" ")
        if line.startswith("\t"):
            commits.append(current)
        elif len(word[0]) == 40 and len(word) >= 3:
            current = word[0]
        elif word[0] == "previous":
            previous[current] = (word[1], word[2])
    return commits, previous


def rows_commits(screen: BlameScreen) -> list[str]:
    return [a.commit.hex() if a is not None else "" for a in screen.answers]


async def open_blame_from_changes(app, pilot, repo, rev: str, path: str) -> BlameScreen:
    oid = git_text("rev-parse", rev, cwd=repo).strip()
    app.push_screen(CommitScreen(bytes.fromhex(oid)))
    screen = await until(
        pilot,
        lambda: isinstance(app.screen, CommitScreen) and app.screen.changes is not None and app.screen,
        "the commit's changed files",
    )
    await pilot.pause()
    lst = screen.query_one(VirtualList)
    rows = list_text(lst)
    lst.move_to(next(i for i, (k, _) in enumerate(screen.rows) if k == "change" and path in rows[i]))
    await pilot.press("b")
    return await until(
        pilot,
        lambda: isinstance(app.screen, BlameScreen) and app.screen.done and app.screen,
        f"b on {path} to open its blame, every line answered",
    )


@pytest.mark.asyncio
async def test_blame_view_fills_with_gits_commits_and_walks_back(blame_repo):
    async with running(blame_repo) as (app, pilot):
        screen = await open_blame_from_changes(app, pilot, blame_repo, "main", "b.txt")
        want, previous = git_porcelain(blame_repo, "main", "b.txt")
        assert rows_commits(screen) == want
        assert screen.answered == len(want) == 40
        text = "\n".join(list_text(screen.query_one(VirtualList)))
        assert "line 30 changed" in text and "a.txt" in text  # lines from before the rename name the old path
        # every row names its path then, so the author and date columns stay aligned (as git blame's)
        assert len({row.index(" 2023-11-1") for row in list_text(screen.query_one(VirtualList))}) == 1

        # Enter on line 31 opens its commit ("third")
        lst = screen.query_one(VirtualList)
        lst.move_to(30)
        await pilot.press("enter")
        opened = await until(
            pilot, lambda: isinstance(app.screen, CommitScreen) and app.screen, "Enter to open the line's commit"
        )
        assert opened.oid.hex() == want[30]
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen, "Esc back to the blame")

        # `,` on line 6 ("second" changed it) blames second's parent, at a.txt
        lst.move_to(5)
        await pilot.press("comma")
        parent_view = await until(
            pilot,
            lambda: isinstance(app.screen, BlameScreen) and app.screen is not screen and app.screen.done and app.screen,
            "`,` to blame the parent",
        )
        before_commit, before_path = previous[want[5]]
        assert (parent_view.commit.hex(), parent_view.path.decode()) == (before_commit, before_path)
        assert rows_commits(parent_view) == git_porcelain(blame_repo, before_commit, before_path)[0]
        assert parent_view.query_one(VirtualList).cursor == 5

        # `<` on a line of the root commit: there is nothing before it
        await pilot.press("less_than_sign")
        await pilot.pause()
        assert app.screen is parent_view


@pytest.mark.asyncio
async def test_blame_key_is_listed_in_help(blame_repo):
    async with running(blame_repo) as (app, pilot):
        await open_blame_from_changes(app, pilot, blame_repo, "main", "b.txt")
        from packscope.inspector.screens.help import binding_rows

        rows = binding_rows(app.screen)
        assert any("," in keys and "<" in keys and desc == "Blame parent" for keys, desc in rows), rows


@pytest.fixture(scope="module")
def long_names_repo(tmp_path_factory):
    """A file written by an author with a long name, then renamed into a
    deep directory (so the path column shows) and changed by another."""
    repo = tmp_path_factory.mktemp("uiblame-narrow") / "repo"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    lines = [f"the line number {i} of a file whose lines are long enough to be cut" for i in range(30)]
    (repo / "a.txt").write_text("\n".join(lines) + "\n")
    git("add", "-A", cwd=repo)
    long_name = {"GIT_AUTHOR_NAME": "Bartholomew Maximilian Fitzgerald-Underwood"}
    git("commit", "-q", "-m", "first", cwd=repo, env=long_name)
    (repo / "some/deep/directory").mkdir(parents=True)
    git("mv", "a.txt", "some/deep/directory/renamed.txt", cwd=repo)
    git("commit", "-q", "-m", "move", cwd=repo)
    lines[3] = "changed"
    (repo / "some/deep/directory/renamed.txt").write_text("\n".join(lines) + "\n")
    git("commit", "-q", "-am", "change", cwd=repo)
    return repo


@pytest.mark.parametrize(("size", "author", "line_room"), [((80, 24), 8, 28), ((160, 40), 24, 60)])
@pytest.mark.asyncio
async def test_narrow_blame_leaves_the_line_room(long_names_repo, size, author, line_room):
    """At 80 columns the author and path columns give way (author 8, path
    12) so each row still shows a good part of its line; on a wide terminal
    they are as wide as their content (author 24, the whole path)."""
    async with running(long_names_repo, size=size) as (app, pilot):
        screen = await open_blame_from_changes(app, pilot, long_names_repo, "main", "renamed.txt")
        lst = screen.query_one(VirtualList)
        width = lst.scrollable_content_region.width
        rows = list_text(lst)
        names = {"Bartholomew Maximilian Fitzgerald-Underwood"[: author - 1] + "…"}
        first = [r for r in rows if "the line number" in r and "a.txt" in r]
        assert first and all(any(n in r for n in names) for r in first), first[:1]
        for i, row in enumerate(rows):
            start = row.index(f" {i + 1} ") + len(f" {i + 1} ")
            assert width - start >= line_room, f"row {i + 1} leaves {width - start} columns for its line: {row!r}"
        # the title keeps whether the walk ended even when cut
        title = plain(screen.query_one("#blame-title"), width=width)
        assert title[:width].find("done") != -1
