"""The Commit screen's changed files and the Diff screen, against git:
the file list with status and line counts equals ``git diff --numstat
-M100%`` (and ``--name-status``) against each parent; Enter on a file shows
``git diff``'s text for it; binary and long files are said as git says."""

from __future__ import annotations

import pytest

from packscope.inspector.screens.commit import CommitScreen
from packscope.inspector.screens.diff import DiffScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests.repos import git, git_text
from tests.ui_support import SIZE, list_text, make_app, started, until

FIRST = {
    "keep.txt": "one\ntwo\nthree\n",
    "edit.c": "int f(void)\n{\n  return 1;\n}\n\nint g(void)\n{\n  return 2;\n}\n" * 3,
    "gone.txt": "bye\n",
    "moved/old-name.txt": "moving content\nexactly the same\n",
    "script.sh": "#!/bin/sh\necho hi\n",
    "link-target": "target\n",
    "noeol.txt": "last line has no newline",
    "bin.dat": "binary\0data\n",
}


@pytest.fixture(scope="module")
def changes_repo(tmp_path_factory):
    repo = tmp_path_factory.mktemp("uichanges") / "repo"
    git("init", "-q", "-b", "main", repo)
    for name, text in FIRST.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "first", cwd=repo)
    git("branch", "side", cwd=repo)
    (repo / "edit.c").write_text(FIRST["edit.c"].replace("return 2;", "return 3;", 1) + "int h(void)\n{\n}\n")
    (repo / "gone.txt").unlink()
    (repo / "moved/old-name.txt").rename(repo / "new-name.txt")
    (repo / "script.sh").chmod(0o755)
    (repo / "link-target").unlink()
    (repo / "link-target").symlink_to("keep.txt")
    (repo / "noeol.txt").write_text("last line has no newline\nnow it has one\n")
    (repo / "bin.dat").write_bytes(b"binary\0data changed\n")
    (repo / "long.txt").write_text("".join(f"line {i}\n" for i in range(6000)))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "second", cwd=repo)
    git("checkout", "-q", "side", cwd=repo)
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
    status = git_text("diff", "--name-status", "-M100%", old, new, cwd=repo).splitlines()
    numstat = git("diff", "--numstat", "-z", "-M100%", old, new, cwd=repo).split(b"\0")
    counts = {}
    i = 0
    while i < len(numstat) - 1:
        added, deleted, path = numstat[i].decode().split("\t")
        if path == "":  # a rename: old and new paths follow
            path = numstat[i + 2].decode()
            i += 3
        else:
            i += 1
        counts[path] = (added, deleted)
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


async def open_commit(app, pilot, oid: str) -> CommitScreen:
    await started(app, pilot)
    app.push_screen(CommitScreen(bytes.fromhex(oid)))
    return await until(
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


@pytest.mark.asyncio
async def test_changed_files_and_counts_equal_git_diff_numstat(changes_repo):
    app = make_app(changes_repo)
    async with app.run_test(size=SIZE) as pilot:
        second = rev(changes_repo, "main~1")
        screen = await open_commit(app, pilot, second)
        await pilot.pause()
        shown = shown_changes(screen)
        assert shown == [git_changes(changes_repo, f"{second}^", second)]
        assert {s for s, *_ in shown[0]} == {"A", "D", "M", "T", "R100"}
        assert ("M", "bin.dat", "-", "-") in shown[0]  # binary: numstat's "- -"
        text = "\n".join(list_text(screen.query_one(VirtualList)))
        want = git_text("diff", "--shortstat", "-M100%", f"{second}^", second, cwd=changes_repo).strip()
        n, plus, minus = (int(part.split()[0]) for part in want.split(", "))
        assert f"{n} files changed, +{plus:,} -{minus:,}" in text


@pytest.mark.asyncio
async def test_a_merge_lists_its_changes_against_each_parent(changes_repo):
    app = make_app(changes_repo)
    async with app.run_test(size=SIZE) as pilot:
        merge = rev(changes_repo, "main")
        screen = await open_commit(app, pilot, merge)
        await pilot.pause()
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
    app = make_app(changes_repo)
    async with app.run_test(size=SIZE) as pilot:
        second = rev(changes_repo, "main~1")
        screen = await open_commit(app, pilot, second)
        await pilot.pause()
        for path in ("edit.c", "noeol.txt", "script.sh", "bin.dat", "link-target"):
            diff = await open_diff(app, pilot, screen, path)
            want = git_text("diff", "-M100%", f"{second}^", second, "--", path, cwd=changes_repo).splitlines()
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
    app = make_app(changes_repo)
    async with app.run_test(size=SIZE) as pilot:
        merge = rev(changes_repo, "main")
        screen = await open_commit(app, pilot, merge)
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
        app = make_app(changes_repo)
        async with app.run_test(size=SIZE) as pilot:
            second = rev(changes_repo, "main~1")
            screen = await open_commit(app, pilot, second)
            await pilot.pause()
            diff = await open_diff(app, pilot, screen, "edit.c")
            want = git_text("diff", f"{second}^", second, "--", "edit.c", cwd=changes_repo).splitlines()
            assert want[1].startswith("index ") and len(want[1].split()[1]) == 12 * 2 + 2
            assert list_text(diff.query_one(VirtualList)) == want
    finally:
        git("config", "--unset", "core.abbrev", cwd=changes_repo)
