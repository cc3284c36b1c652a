"""The Commit screen's changed files and the Diff screen, against git:
the file list with status and line counts equals ``git diff --numstat
-M`` (and ``--name-status``) against each parent; Enter on a file shows
``git diff``'s text for it; binary and long files are said as git says."""

from __future__ import annotations

import pytest

from packscope.inspector.screens.commit import CommitScreen
from packscope.inspector.screens.diff import DiffScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests.repos import build_every_change_kind, git, git_numstat, git_text
from tests.ui_support import list_text, running, until


@pytest.fixture(scope="module")
def changes_repo(tmp_path_factory):
    repo = tmp_path_factory.mktemp("uichanges") / "repo"
    long = "".join(f"line {i}\n" for i in range(6000))
    build_every_change_kind(repo, {}, {"long.txt": long})
    git("checkout", "-q", "-b", "side", "main~1", cwd=repo)
    (repo / "side.txt").write_text("side\n")
    git("add", "side.txt", cwd=repo)
    git("commit", "-q", "-m", "side", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    git("merge", "-q", "--no-ff", "-m", "merge side", "side", cwd=repo)
    return repo


def rev(repo, name: str) -> str:
    return git_text("rev-parse", name, cwd=repo).strip()


def git_changes(repo, old: str, new: str) -> list[tuple[str, str, str, str]]:
    """(status, shown path, added, deleted) from git, in git's order."""
    status = git_text("diff", "--name-status", "-M", old, new, cwd=repo).splitlines()
    counts = git_numstat(repo, old, new)
    out = []
    for line in status:
        st, *paths = line.split("\t")
        shown = " → ".join(paths)
        out.append((st, shown, *counts[paths[-1]]))
    return out


def shown_changes(screen: CommitScreen) -> list[list[tuple[str, str, str, str]]]:
    """Each parent's changed files as the screen lists them."""
    rows = list_text(screen.query_one(VirtualList))
    kinds = [k for k, _ in screen.rows]
    sections: list[list] = []
    for text, kind in zip(rows, kinds, strict=True):
        if kind == "changes":
            sections.append([])
        elif kind == "change":
            st, added, deleted, rest = text.split(maxsplit=3)
            path = rest.split("  ")[0]
            sections[-1].append(
                (st, path, added.lstrip("+").replace(",", ""), deleted.lstrip("-").replace(",", "") or "-")
            )
    return sections


async def open_commit(app, pilot, repo, name: str) -> tuple[str, CommitScreen]:
    """The Commit screen of revision ``name`` once its changed files are
    counted: (the commit's id, the screen)."""
    oid = rev(repo, name)
    app.push_screen(CommitScreen(bytes.fromhex(oid)))
    screen = await until(
        pilot,
        lambda: (
            isinstance(app.screen, CommitScreen)
            and app.screen.changes is not None
            and all(pc.counting_done for pc in app.screen.changes)
            and app.screen
        ),
        "the commit's changed files with their line counts",
        timeout=20,
    )
    await pilot.pause()
    return oid, screen


@pytest.mark.asyncio
async def test_changed_files_and_counts_equal_git_diff_numstat(changes_repo):
    async with running(changes_repo) as (app, pilot):
        second, screen = await open_commit(app, pilot, changes_repo, "main~1")
        shown = shown_changes(screen)
        assert shown == [git_changes(changes_repo, f"{second}^", second)]
        assert {s for s, *_ in shown[0]} == {"A", "D", "M", "T", "R100"}
        assert ("M", "bin.dat", "-", "-") in shown[0]  # binary: numstat's "- -"
        text = "\n".join(list_text(screen.query_one(VirtualList)))
        want = git_text("diff", "--shortstat", "-M", f"{second}^", second, cwd=changes_repo).strip()
        n, plus, minus = (int(part.split()[0]) for part in want.split(", "))
        assert f"{n} files changed, +{plus:,} -{minus:,}" in text


@pytest.mark.asyncio
async def test_a_merge_lists_its_changes_against_each_parent(changes_repo):
    async with running(changes_repo) as (app, pilot):
        merge, screen = await open_commit(app, pilot, changes_repo, "main")
        shown = shown_changes(screen)
        assert shown == [git_changes(changes_repo, f"{merge}^1", merge), git_changes(changes_repo, f"{merge}^2", merge)]
        assert len(shown[0]) == 1 and len(shown[1]) > 5
        root = rev(changes_repo, "main~2")
        app.push_screen(CommitScreen(bytes.fromhex(root)))
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, CommitScreen)
                and app.screen.oid.hex() == root
                and app.screen.changes
                and app.screen.changes[0].counting_done
            ),
            "the root commit's changes",
        )
        await pilot.pause()
        empty = git_text("hash-object", "-t", "tree", "/dev/null", cwd=changes_repo).strip()
        assert shown_changes(app.screen) == [git_changes(changes_repo, empty, root)]
        assert "against the empty tree" in "\n".join(list_text(app.screen.query_one(VirtualList)))


async def open_diff(app, pilot, screen: CommitScreen, path: str) -> DiffScreen:
    lst = screen.query_one(VirtualList)
    rows = list_text(lst)
    lst.move_to(next(i for i, (k, _) in enumerate(screen.rows) if k == "change" and f" {path}" in rows[i]))
    await pilot.press("enter")
    return await until(
        pilot,
        lambda: isinstance(app.screen, DiffScreen) and app.screen.lines is not None and app.screen,
        f"Enter on {path} to open its diff",
    )


@pytest.mark.asyncio
async def test_enter_on_a_file_shows_git_diffs_text(changes_repo):
    async with running(changes_repo) as (app, pilot):
        second, screen = await open_commit(app, pilot, changes_repo, "main~1")
        for path in ("edit.c", "noeol.txt", "script.sh", "bin.dat", "link-target"):
            diff = await open_diff(app, pilot, screen, path)
            want = git_text("diff", "-M", f"{second}^", second, "--", path, cwd=changes_repo).splitlines()
            assert list_text(diff.query_one(VirtualList)) == want, path
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is screen, "Esc back to the commit")
        # binary: git's words
        diff = await open_diff(app, pilot, screen, "bin.dat")
        assert "Binary files a/bin.dat and b/bin.dat differ" in list_text(diff.query_one(VirtualList))
        # ] moves to the next changed file
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: diff.change.path == b"edit.c" and diff.lines is not None, "] to open the next file")
        await pilot.press("escape")
        # a long diff is cut with a note, and the list scrolls to its end
        diff = await open_diff(app, pilot, screen, "long.txt")
        lst = diff.query_one(VirtualList)
        rows = list_text(lst)
        assert rows[-1].startswith("[... the rest of this diff is not shown: over 5000 lines]")
        assert rows[:4] == git_text("diff", f"{second}^", second, "--", "long.txt", cwd=changes_repo).splitlines()[:4]
        await pilot.press("G")
        await until(pilot, lambda: lst.cursor == len(rows) - 1, "G to the end of the long diff")
        assert lst.scroll_y > 0


@pytest.mark.asyncio
async def test_d_goes_to_the_changed_files_and_t_to_the_tree(changes_repo):
    async with running(changes_repo) as (app, pilot):
        _merge, screen = await open_commit(app, pilot, changes_repo, "main")
        lst = screen.query_one(VirtualList)
        firsts = [i for i, (k, _v) in enumerate(screen.rows) if k == "change" and screen.rows[i - 1][0] == "changes"]
        assert len(firsts) == 2  # one section per parent
        await pilot.press("d")
        await until(pilot, lambda: lst.cursor == firsts[0], "d to the first parent's changed files")
        await pilot.press("d")
        await until(pilot, lambda: lst.cursor == firsts[1], "d again to the second parent's")
        await pilot.press("t")
        await until(pilot, lambda: screen.rows[lst.cursor][0] == "entry", "t to the tree")
        await pilot.press("d", "enter")
        await until(
            pilot,
            lambda: isinstance(app.screen, DiffScreen) and app.screen.change.path == b"side.txt",
            "d then Enter to open the first changed file's diff",
        )


@pytest.mark.asyncio
async def test_the_diffs_index_line_abbreviates_ids_as_git_does_here(changes_repo):
    git("config", "core.abbrev", "12", cwd=changes_repo)
    try:
        async with running(changes_repo) as (app, pilot):
            second, screen = await open_commit(app, pilot, changes_repo, "main~1")
            diff = await open_diff(app, pilot, screen, "edit.c")
            want = git_text("diff", f"{second}^", second, "--", "edit.c", cwd=changes_repo).splitlines()
            assert want[1].startswith("index ") and len(want[1].split()[1]) == 12 * 2 + 2
            assert list_text(diff.query_one(VirtualList)) == want
    finally:
        git("config", "--unset", "core.abbrev", cwd=changes_repo)


@pytest.fixture(scope="module")
def rename_merge_repo(tmp_path_factory):
    """A rename at 9x% similarity, then a merge whose combined diff has a
    hunk (both parents changed one line, the merge wrote a third text)."""
    repo = tmp_path_factory.mktemp("uirenames") / "repo"
    git("init", "-q", "-b", "main", repo)
    body = "".join(f"line {i} of the file\n" for i in range(40))
    (repo / "old.txt").write_text(body)
    (repo / "m.c").write_text("int f(void)\n{\n\treturn 1;\n}\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "base", cwd=repo)
    (repo / "old.txt").unlink()
    (repo / "new.txt").write_text(body.replace("line 7 ", "LINE 7 "))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "rename with an edit", cwd=repo)
    git("checkout", "-q", "-b", "side", cwd=repo)
    (repo / "m.c").write_text("int f(void)\n{\n\treturn 2;\n}\n")
    git("commit", "-q", "-am", "side", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    (repo / "m.c").write_text("int f(void)\n{\n\treturn 3;\n}\n")
    git("commit", "-q", "-am", "main", cwd=repo)
    git("merge", "-q", "--no-commit", "side", cwd=repo, check=False)
    (repo / "m.c").write_text("int f(void)\n{\n\treturn 2 + 3;\n}\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "--no-edit", cwd=repo)
    return repo


@pytest.mark.asyncio
async def test_a_similarity_rename_shows_gits_score(rename_merge_repo):
    repo = rename_merge_repo
    async with running(repo) as (app, pilot):
        second, screen = await open_commit(app, pilot, repo, "main~2")
        want = git_text("diff", "--name-status", "-M", f"{second}^", second, cwd=repo).split()
        assert want[0].startswith("R0") and want[0] != "R100"  # a similarity rename, not an exact one
        rows = list_text(screen.query_one(VirtualList))
        assert any(row.split()[:1] == [want[0]] and "old.txt → new.txt" in row for row in rows), rows


@pytest.mark.asyncio
async def test_c_toggles_the_merges_combined_diff(rename_merge_repo):
    repo = rename_merge_repo
    async with running(repo) as (app, pilot):
        merge, screen = await open_commit(app, pilot, repo, "main")
        lst = screen.query_one(VirtualList)
        assert "commit.combined" in {b.id for b in screen.BINDINGS}
        await pilot.press("c")
        await until(
            pilot, lambda: screen.combined is not None and "diff --cc m.c" in list_text(lst), "c to show the --cc diff"
        )
        want = [line.expandtabs(8) for line in git_text("show", "--format=", merge, cwd=repo).splitlines()]
        rows = list_text(lst)
        start = rows.index("diff --cc m.c")
        assert rows[start : start + len(want)] == want
        assert any("against parent 2" in row for row in rows)  # beside the per-parent lists
        await pilot.press("c")
        await until(pilot, lambda: "diff --cc m.c" not in list_text(lst), "c again to hide it")


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
@pytest.mark.asyncio
async def test_tree_rows_at_80_columns_show_the_last_commits_subject(tmp_path, size):
    """Under 100 columns a tree row leaves out the mode digits and gives
    names 24 columns, so the last commit's subject still shows; wider, the
    mode is there and names have 36."""
    repo = tmp_path / "repo"
    git("init", "-q", "-b", "main", repo)
    names = ["a-file-with-a-rather-long-name-indeed.txt", "short.txt"]
    for name in names:
        (repo / name).write_text(name + "\n")
        git("add", name, cwd=repo)
        git("commit", "-q", "-m", f"the subject that added {name}", cwd=repo)
    head = git_text("rev-parse", "HEAD", cwd=repo).strip()
    async with running(repo, size=size) as (app, pilot):
        app.push_screen(CommitScreen(bytes.fromhex(head)))
        screen = await until(
            pilot,
            lambda: isinstance(app.screen, CommitScreen) and app.screen.last_done and app.screen,
            "the tree's last commits",
        )
        lst = screen.query_one(VirtualList)
        width = lst.scrollable_content_region.width
        rows = [r for r in list_text(lst) if "blob" in r]
        assert len(rows) == 2
        for row, name in zip(rows, names, strict=True):
            assert name[:20] in row and f"the subject that added {name}"[:20] in row[:width], row[:width]
            assert row.startswith("100644 blob") == (size[0] >= 100), row
