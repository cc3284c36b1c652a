"""The diff view's split toggle (`v`): side by side, each side's lines are
the old and the new file's own lines at the numbers shown (checked against
the blobs git reads), removed and added lines paired row by row; `v` again
gives back git diff's text; at 80 columns long lines are cut to fit, and
under 60 columns the view stays unified and says why."""

from __future__ import annotations

import pytest

from packscope.core.history.split_diff import CHANGE, CONTEXT, split_rows
from packscope.inspector.screens.commit import CommitScreen
from packscope.inspector.screens.diff import DiffScreen
from packscope.inspector.screens.help import HelpScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests.repos import git, git_text
from tests.ui_support import list_text, plain, running, until

OLD = "".join(f"line {i}\n" for i in range(1, 31))
NEW_LINES = [f"line {i}\n" for i in range(1, 31)]
NEW_LINES[2] = "line 3, changed\n"
del NEW_LINES[10:13]  # three removed
NEW_LINES[14:14] = ["added a\n", "added b\n"]
NEW_LINES[20] = "a long line " + "x" * 150 + "\n"
NEW = "".join(NEW_LINES)


@pytest.fixture(scope="module")
def split_repo(tmp_path_factory):
    work = tmp_path_factory.mktemp("split") / "work"
    git("init", "-q", "--initial-branch=main", work)
    (work / "f.txt").write_text(OLD)
    git("add", "f.txt", cwd=work)
    git("commit", "-qm", "old", cwd=work)
    (work / "f.txt").write_text(NEW)
    git("commit", "-qam", "new", cwd=work)
    return work


async def open_the_diff(app, pilot, repo) -> DiffScreen:
    head = git_text("rev-parse", "HEAD", cwd=repo).strip()
    app.push_screen(CommitScreen(bytes.fromhex(head)))
    screen = await until(
        pilot,
        lambda: isinstance(app.screen, CommitScreen) and app.screen.changes and app.screen,
        "the commit's changed files",
    )
    lst = screen.query_one(VirtualList)
    lst.move_to(next(i for i, (k, _) in enumerate(screen.rows) if k == "change"))
    await pilot.press("enter")
    return await until(
        pilot,
        lambda: isinstance(app.screen, DiffScreen) and app.screen.lines is not None and app.screen,
        "the diff of f.txt",
    )


def sides(row: str) -> tuple[tuple[int, str] | None, tuple[int, str] | None]:
    """(number, text) on each side of a split row (None: nothing there)."""
    left, right = row.split(" │ ")

    def one(side: str):
        if not side.strip():
            return None
        number, _, text = side.strip().partition(" ")
        return int(number), text

    return one(left), one(right)


@pytest.mark.asyncio
async def test_v_shows_the_diff_side_by_side_and_back(split_repo):
    old_lines, new_lines = OLD.splitlines(), NEW.splitlines()
    unified = git_text("diff", "HEAD^", "HEAD", cwd=split_repo).splitlines()
    async with running(split_repo, size=(200, 50)) as (app, pilot):
        diff = await open_the_diff(app, pilot, split_repo)
        lst = diff.query_one(VirtualList)
        assert list_text(lst) == unified
        await pilot.press("v")
        await until(pilot, lambda: diff.split and " │ " in "".join(list_text(lst)), "v to split the diff")
        rows = [r for r in list_text(lst) if " │ " in r]
        pairs = [sides(r) for r in rows]
        for left, right in pairs:
            if left:
                assert old_lines[left[0] - 1] == left[1], left
            if right:
                assert new_lines[right[0] - 1].startswith(right[1].rstrip("…")), right
        # every removed and added line of git's diff is on its side (a long one cut with "…")
        lefts = [left[1] for left, _ in pairs if left]
        rights = {right[0]: right[1] for _, right in pairs if right}
        for u in unified:
            if u.startswith("-") and not u.startswith("---"):
                assert u[1:] in lefts, u
            elif u.startswith("+") and not u.startswith("+++"):
                n = new_lines.index(u[1:]) + 1
                assert n in rights and u[1:].startswith(rights[n].rstrip("…")), u
        # a changed line sits beside the line it replaced
        assert ((3, "line 3"), (3, "line 3, changed")) in pairs
        assert "split" in plain(diff.query_one("#diff-title"))
        await pilot.press("v")
        await until(pilot, lambda: not diff.split and list_text(lst) == unified, "v back to git diff's text")


@pytest.mark.asyncio
async def test_split_at_80_columns_cuts_long_lines_and_under_60_stays_unified(split_repo):
    async with running(split_repo, size=(80, 24)) as (app, pilot):
        diff = await open_the_diff(app, pilot, split_repo)
        lst = diff.query_one(VirtualList)
        await pilot.press("v")
        await until(pilot, lambda: diff.split and " │ " in "".join(list_text(lst)), "v to split at 80 columns")
        rows = list_text(lst)
        assert all(len(r) <= 80 for r in rows)
        long_row = next(r for r in rows if "a long line" in r)
        assert long_row.rstrip().endswith("…")
        # narrower than the split view needs: unified again, and said
        await pilot.resize_terminal(50, 24)
        await until(
            pilot,
            lambda: "@@" in "".join(list_text(lst)) and " │ " not in "".join(list_text(lst)),
            "unified at 50 columns",
        )
        assert "too narrow" in plain(diff.query_one("#diff-title"))
    async with running(split_repo, size=(50, 24)) as (app, pilot):
        diff = await open_the_diff(app, pilot, split_repo)
        await pilot.press("v")
        await pilot.pause()
        assert not diff.split
        assert list_text(diff.query_one(VirtualList)) == git_text("diff", "HEAD^", "HEAD", cwd=split_repo).splitlines()


@pytest.mark.asyncio
async def test_the_split_key_is_listed_in_help(split_repo):
    async with running(split_repo) as (app, pilot):
        await open_the_diff(app, pilot, split_repo)
        await pilot.press("question_mark")
        help_screen = await until(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen, "the help screen")
        assert "Split/unified" in plain(help_screen.query_one("#help-keys"), width=200)


def test_split_rows_pair_removed_and_added_runs():
    lines = [
        b"diff --git a/f b/f",
        b"@@ -1,4 +1,3 @@",
        b" same",
        b"-old 1",
        b"-old 2",
        b"+new 1",
        b" tail",
        b"\\ No newline at end of file",
    ]
    rows = split_rows(lines)
    assert [r.kind for r in rows] == ["header", "hunk", CONTEXT, CHANGE, CHANGE, CONTEXT, "note"]
    assert rows[3][1:5] == (2, b"old 1", 2, b"new 1")
    assert rows[4][1:5] == (3, b"old 2", None, None)
    assert rows[5][1:5] == (4, b"tail", 3, b"tail")


@pytest.mark.asyncio
async def test_tabs_in_the_diff_are_laid_out_not_spelled(tmp_path):
    """Source indented with tabs (every C file of git.git) reads as it does
    in the file: the tabs of a hunk line's body become spaces to the next
    8-column stop, in the unified and the split view — not the literal
    ``\\t`` of a control character."""
    work = tmp_path / "work"
    git("init", "-q", "--initial-branch=main", work)
    (work / "t.c").write_text("int f(void)\n{\n\treturn 0;\n}\n")
    git("add", "t.c", cwd=work)
    git("commit", "-qm", "old", cwd=work)
    (work / "t.c").write_text("int f(void)\n{\n\tint x;\t/* x */\n\treturn x;\n}\n")
    git("commit", "-qam", "new", cwd=work)
    unified = git_text("diff", "HEAD^", "HEAD", cwd=work).splitlines()
    async with running(work, size=(120, 36)) as (app, pilot):
        diff = await open_the_diff(app, pilot, work)
        lst = diff.query_one(VirtualList)
        rows = await until(pilot, lambda: list_text(lst), "the diff's rows")
        want = [line[:1] + line[1:].expandtabs(8) if line[:1] in " +-" else line for line in unified]
        assert rows == want
        assert "+        int x;  /* x */" in rows and not any("\\t" in r for r in rows)
        await pilot.press("v")
        await until(pilot, lambda: diff.split and " │ " in "".join(list_text(lst)), "v to split the diff")
        split = list_text(lst)
        assert not any("\\t" in r for r in split)
        news = [sides(r)[1] for r in split if " │ " in r]
        assert (3, "        int x;  /* x */") in news  # the 8-column indent, then the body


@pytest.mark.asyncio
async def test_a_similarity_renames_diff_is_gits_and_help_says_so(tmp_path):
    """A file renamed with a change (R0xx in the changed files) opens as
    `git diff -M` prints it (similarity index, rename from/to, the hunks),
    and the diff view's help no longer says similarity renames are not
    searched."""
    work = tmp_path / "work"
    git("init", "-q", "--initial-branch=main", work)
    (work / "old.txt").write_text("".join(f"line {i}\n" for i in range(20)))
    git("add", "old.txt", cwd=work)
    git("commit", "-qm", "old", cwd=work)
    git("mv", "old.txt", "new.txt", cwd=work)
    (work / "new.txt").write_text("".join(f"line {i}\n" for i in range(20)).replace("line 7\n", "seven\n"))
    git("commit", "-qam", "rename with a change", cwd=work)
    want = git_text("diff", "-M", "HEAD^", "HEAD", cwd=work).splitlines()
    assert any(line.startswith("similarity index 9") for line in want)
    async with running(work, size=(120, 36)) as (app, pilot):
        diff = await open_the_diff(app, pilot, work)
        assert diff.change.name_status.startswith("R0")
        assert list_text(diff.query_one(VirtualList)) == want
        await pilot.press("question_mark")
        help_screen = await until(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen, "the help")
        text = " ".join(plain(w, width=200) for w in help_screen.query("Static, Label"))
        assert "similarity index" in text and "not searched" not in text
