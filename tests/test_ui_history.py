"""History (7) and the commit screen, on repositories built with git."""

from __future__ import annotations

import os
import re

import pytest

from packscope.inspector.screens.commit import CommitScreen
from packscope.inspector.screens.object import ObjectScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests import ui_history_repos as hr
from tests.repos import git
from tests.ui_support import answer_prompt, list_text, open_history, plain, running, settle, until

LONG = int(os.environ.get("PACKSCOPE_LONG_HISTORY", "20000"))  # 100000 by hand


@pytest.fixture(scope="module")
def history_repo(tmp_path_factory):
    return hr.build_history_repo(tmp_path_factory.mktemp("history"))


@pytest.fixture(scope="module")
def long_repo(tmp_path_factory):
    return hr.build_long_history(tmp_path_factory.mktemp("long"), LONG)


def revlist(repo, *args) -> list[str]:
    return git("rev-list", *args, cwd=repo).decode().split()


def title(screen, wid) -> str:
    return plain(screen.query_one(wid), width=300)


@pytest.mark.asyncio
async def test_history_lists_what_git_log_lists_with_decorations(history_repo):
    async with running(history_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        expected = revlist(history_repo, "HEAD")
        lst = screen.vlist
        await pilot.press("G")
        await until(pilot, lambda: screen.history.done, "G to load the whole history", timeout=10)
        await pilot.pause()
        assert [c.oid.hex() for c in screen.history.rows] == expected
        assert lst.cursor == len(expected) - 1
        assert f"{len(expected)} commits" in title(screen, "#history-title")
        rows = list_text(lst)
        assert "(HEAD -> main)" in rows[0]
        tag_row = rows[expected.index(git("rev-parse", "v1.0^{commit}", cwd=history_repo).decode().strip())]
        assert "(tag: v1.0)" in tag_row
        assert "(tag: light)" in rows[expected.index(git("rev-parse", "light", cwd=history_repo).decode().strip())]
        assert any(" M Merge side" in r for r in rows)


@pytest.mark.asyncio
async def test_history_shows_hostile_text_literally(history_repo):
    async with running(history_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        rows = list_text(screen.vlist)
        # invalid UTF-8: replacement characters, never an error
        assert "Bad \ufffd\ufffd Name" in rows[0] and "invalid \ufffd( utf-8" in rows[0]
        # latin-1 commit decoded with its encoding header
        assert "Ren\xe9 Lat" in rows[1] and hr.LATIN1_SUBJECT in rows[1]
        # markup, escape and bidi spelled out
        assert "[bold red]boom[/] \\e[31mred \\u202eevil\\u202c end" in rows[2]
        # the bidi branch name is shown escaped
        assert "evil\\u202ebranch" in rows[3]
        # What is drawn (render_line) is the same literal text.
        screen.vlist.refresh()
        await pilot.pause()
        drawn = "".join(seg.text for seg in screen.vlist.render_line(2))
        assert "[bold red]boom[/]" in drawn and "\u202e" not in drawn and "\x1b" not in drawn


def logged(repo, *args) -> list[tuple[str, str]]:
    """(id, "author\0email\0subject" lower-cased) in git log --topo-order's order."""
    out = git("log", "--topo-order", "--format=%H%x00%an%x00%ae%x00%s%x01", *args, cwd=repo)
    rows = []
    for rec in out.decode("utf-8", "replace").split("\x01")[:-1]:
        oid, rest = rec.strip("\n").split("\0", 1)
        rows.append((oid, rest.lower()))
    return rows


def wanted_matches(rows, query: str) -> list[int]:
    q = query.lower()
    return [i for i, (oid, text) in enumerate(rows) if q in text or (len(q) >= 4 and oid.startswith(q))]


def search(pilot, query: str):
    return pilot.press("slash", *query, "enter")


@pytest.mark.asyncio
async def test_search_lists_matches_with_a_counter_and_n_N_skip_the_cursors_row(history_repo):
    async with running(history_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        lst = screen.vlist
        rows = logged(history_repo, "HEAD")
        await pilot.press("G")
        await until(pilot, lambda: screen.history.done, "the whole history")
        await pilot.press("g")
        assert [c.oid.hex() for c in screen.history.rows] == [oid for oid, _ in rows]
        # an author
        side = revlist(history_repo, "side", "-1")[0]
        await search(pilot, "S Ide")
        await until(pilot, lambda: lst.cursor == [o for o, _ in rows].index(side), "/S Ide to reach the side commit")
        assert screen.matches == wanted_matches(rows, "S Ide")
        # subject text: every match listed at once, the counter says which
        want = wanted_matches(rows, "commit 3")
        assert len(want) == 11  # "commit 3" and "commit 30".."commit 39"
        lst.move_to(0)
        await search(pilot, "commit 3")
        await until(pilot, lambda: lst.cursor == want[0], "/commit 3 to reach its first match")
        assert screen.matches == want
        await until(pilot, lambda: "match 1/11" in title(screen, "#history-title"), "the counter 'match 1/11'")
        # n skips the cursor's own row (a match), N comes back
        await pilot.press("n")
        await until(pilot, lambda: lst.cursor == want[1], "n to the second match")
        assert "match 2/11" in title(screen, "#history-title")
        await pilot.press("N")
        await until(pilot, lambda: lst.cursor == want[0], "N back to the first match")
        # / from a matching row does not stay on it
        await search(pilot, "commit 3")
        await until(pilot, lambda: lst.cursor == want[1], "/ from a match to move on to the next")
        # past the last match, n wraps to the first and says so; N from the first wraps to the last
        lst.move_to(want[-1])
        await pilot.press("n")
        await until(pilot, lambda: lst.cursor == want[0], "n past the last match to wrap to the first")
        assert "wrapped to the top" in title(screen, "#history-title")
        await pilot.press("N")
        await until(pilot, lambda: lst.cursor == want[-1], "N from the first match to wrap to the last")
        assert "wrapped to the bottom" in title(screen, "#history-title")
        # an id prefix
        await search(pilot, rows[-1][0][:8])
        await until(pilot, lambda: lst.cursor == len(rows) - 1, "an id-prefix search to reach the root commit")
        # no match: said, the cursor stays; forgotten once the screen is left
        await search(pilot, "no such text anywhere")
        await until(pilot, lambda: "no match" in title(screen, "#history-title"), "'no match' in the title")
        assert lst.cursor == len(rows) - 1
        await pilot.press("1")
        await pilot.press("7")
        await until(pilot, lambda: app.screen is screen, "back on History")
        await pilot.pause()
        assert "no match" not in title(screen, "#history-title")


async def load_all(pilot, screen, chosen, what: str) -> None:
    """Go to the end of History and wait for the whole history the picker
    ``chosen`` (a test of screen.history) describes."""
    screen.go_to_end()
    await until(pilot, lambda: screen.history.done and chosen(screen.history), what, timeout=10)


@pytest.mark.asyncio
async def test_revision_picker_and_path_limiting(history_repo):
    async with running(history_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        await answer_prompt(app, pilot, "r", "--all")
        await load_all(pilot, screen, lambda h: h.revs == ["--all"], "the whole --all history")
        assert [c.oid.hex() for c in screen.history.rows] == revlist(history_repo, "--all")
        assert "--all" in title(screen, "#history-title")
        await answer_prompt(app, pilot, "p", "dir1/sub")
        await load_all(pilot, screen, lambda h: h.paths == ["dir1/sub"], "the whole history limited to dir1/sub")
        # the graph stays on: git log --graph's order over rewritten parents
        want = [c for c, _ in git_graph_columns(history_repo, "--all", "--", "dir1/sub")]
        assert [c.oid.hex() for c in screen.history.rows] == want
        assert "-- dir1/sub" in title(screen, "#history-title")
        assert "graph" in title(screen, "#history-title")
        assert any("●" in r for r in list_text(screen.vlist))
        # A bad revision is an error on screen, not a crash.
        screen.revs = ["no-such-branch"]
        screen.paths = []
        screen.restart()
        await until(pilot, lambda: screen.history.done, "the walk of a bad revision to end")
        await pilot.pause()
        assert "no-such-branch" in title(screen, "#history-title")


@pytest.mark.asyncio
async def test_commit_screen_parents_idents_tree_and_last_commits(history_repo):
    async with running(history_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        merge = revlist(history_repo, "--merges", "HEAD")[0]
        screen.vlist.move_to([c.oid.hex() for c in screen.history.rows].index(merge))
        await pilot.press("enter")
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, CommitScreen)
                and app.screen.last_done
                and app.screen.changes is not None
                and all(pc.counting_done for pc in app.screen.changes)
            ),
            "the merge's commit screen with its last commits and changed files",
            timeout=30,
        )
        commit = app.screen
        await pilot.pause()
        rows = list_text(commit.query_one(VirtualList))
        text = "\n".join(rows)
        p1, p2 = git("rev-parse", f"{merge}^1", f"{merge}^2", cwd=history_repo).decode().split()
        assert f"parent     {p1}" in text and f"parent     {p2}" in text
        assert "author     A U Thor <author@example.com>  2020-09-15" in text and "+0200" in text
        assert "committer  C O Mitter <committer@example.com>" in text and "-0500" in text
        assert "    Merge side" in text
        # every entry's last commit is git's `log -1 -- entry`
        for name, oid in commit.last.items():
            path = name.decode("utf-8", "surrogateescape")
            want = git("log", "-1", "--format=%H", merge, "--", path, cwd=history_repo).decode().strip()
            assert oid.hex() == want, path
        assert len(commit.last) == len(commit.view.entries)
        assert "last commits: " in title(commit, "#commit-title")
        # Enter on the second parent follows it.
        lst = commit.query_one(VirtualList)
        lst.move_to(next(i for i, r in enumerate(rows) if r.startswith(f"parent     {p2}")))
        await pilot.press("enter")
        await until(
            pilot,
            lambda: isinstance(app.screen, CommitScreen) and app.screen.oid.hex() == p2,
            "Enter on the second parent to open it",
        )
        await pilot.press("escape")
        assert app.screen is commit
        # Enter on a directory opens its tree (with its own last commits) ...
        lst.move_to(next(i for i, r in enumerate(rows) if r.startswith("040000 tree") and "dir1/" in r))
        await pilot.press("enter")
        await until(
            pilot,
            lambda: isinstance(app.screen, CommitScreen) and app.screen.path == b"dir1/" and app.screen.last_done,
            "Enter on dir1/ to open its tree with last commits",
            timeout=10,
        )
        sub = app.screen
        sub_rows = list_text(sub.query_one(VirtualList))
        assert any("sub/" in r for r in sub_rows)
        want = git("log", "-1", "--format=%H", merge, "--", "dir1/sub", cwd=history_repo).decode().strip()
        assert sub.last[b"sub"].hex() == want
        # ... and Enter on a file opens the Object screen.
        sub.query_one(VirtualList).move_to(next(i for i, r in enumerate(sub_rows) if "file" in r))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ObjectScreen), "Enter on a file to open the Object screen")
        await settle(app, pilot)
        assert "blob" in plain(app.screen.query_one("#object-where"), width=200)


async def commit_text_at(app, pilot, history, row: int, what: str) -> str:
    """Enter on History's ``row``: the Commit screen's text once it is shown."""
    history.vlist.move_to(row)
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, CommitScreen) and app.screen.view is not None, what)
    return "\n".join(list_text(app.screen.query_one(VirtualList)))


@pytest.mark.asyncio
async def test_commit_screen_shows_encodings_and_hostile_paths(history_repo):
    async with running(history_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        text = await commit_text_at(app, pilot, screen, 1, "the latin-1 commit's screen")
        assert "Ren\xe9 Lat <rene@example.com>  2020-09-15 21:00:00 +0100" in text
        assert "encoding   ISO-8859-1" in text and "    " + hr.LATIN1_SUBJECT in text
        await pilot.press("escape")
        text = await commit_text_at(app, pilot, screen, 0, "the hostile commit's screen")
        assert "-0330" in text and "Bad \ufffd\ufffd Name" in text
        lst = app.screen.query_one(VirtualList)
        rows = list_text(lst)
        lst.move_to(next(i for i, r in enumerate(rows) if r.split()[-1:] == ["docs/"] or " docs/" in r))
        await pilot.press("enter")
        await until(
            pilot,
            lambda: isinstance(app.screen, CommitScreen) and app.screen.path == b"docs/",
            "Enter on docs/ to open its tree",
        )
        await pilot.pause()
        assert any("\\u202etxt.exe" in r for r in list_text(app.screen.query_one(VirtualList)))


@pytest.mark.asyncio
async def test_long_history_scrolls_to_the_end_and_searches_deep(long_repo):
    async with running(long_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        log = screen.history
        assert log.estimate == LONG
        assert f"of ~{LONG:,}" in title(screen, "#history-title")
        assert log.loaded < LONG  # lazily: a few pages, not the history
        # a search for a commit deep in it loads as it goes
        deep = LONG - 1 - LONG // 50  # the row of "step LONG//50"
        oid = git("rev-parse", f"main~{deep}", cwd=long_repo).decode().strip()
        screen.start_search(oid[:10], 1, restart=True)
        lst = screen.vlist
        await until(
            pilot,
            lambda: lst.cursor == deep,
            "an id search deep in the history",
            timeout=40 * max(1, LONG // 20000),
        )
        assert list_text(lst)[lst.cursor].endswith(f"step {LONG // 50}")
        await pilot.press("G")
        await until(pilot, lambda: log.done, "G to load the whole long history", timeout=40 * max(1, LONG // 20000))
        await pilot.pause()
        assert log.loaded == LONG and lst.cursor == LONG - 1
        assert list_text(lst)[-1].endswith("step 0")
        assert f"{LONG:,} commits" in title(screen, "#history-title")
        await pilot.press("g")
        assert lst.cursor == 0


def git_graph_columns(repo, *args: str) -> list[tuple[str, int]]:
    """(commit, column of git's ``*``) from ``git log --graph --format=%H``."""
    import re

    out = []
    for line in git("log", "--graph", "--format=%H", *args, cwd=repo).decode().splitlines():
        m = re.search(r"[0-9a-f]{40}", line)
        if m:
            out.append((m.group(0), line.index("*") // 2))
    return out


@pytest.mark.asyncio
@pytest.mark.parametrize("revs", ["HEAD", "--all"])
async def test_graph_column_places_every_commit_where_git_log_graph_does(scenario_repo, revs):
    """criss-cross and octopus merges: History lists git log --graph's order
    and draws each commit's marker in git's column."""
    async with running(scenario_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        if revs != "HEAD":
            screen.revs = [revs]
            screen.restart()
        await pilot.press("G")
        await until(
            pilot, lambda: screen.history.done and screen.history.revs == [revs], "the whole history", timeout=20
        )
        await pilot.pause()
        want = git_graph_columns(scenario_repo, revs)
        assert [c.oid.hex() for c in screen.history.rows] == [c for c, _ in want]
        rows = list_text(screen.vlist)
        drawn = []
        for text, (commit, _col) in zip(rows, want, strict=True):
            marker = min(i for i in (text.find("●"), text.find("◉")) if i >= 0)
            assert text[marker + 2 :].startswith(commit[:10]) or commit[:10] in text
            drawn.append((commit, marker // 2))
        assert drawn == want
        assert any(col > 0 for _, col in want)  # lanes right of the first are exercised
        assert "◉" in "".join(rows)  # merges are drawn as merges


@pytest.mark.asyncio
@pytest.mark.parametrize("paths", [["dir"], ["lib/x.c", "README"]])
async def test_graph_under_a_path_limit_places_commits_where_git_log_graph_does(scenario_repo, paths):
    """With paths (`p`) the graph is drawn over rewritten parents: the rows
    are git log --graph -- PATH's commits in its order, each marker in git's
    column, and a merge whose sides rewrite to one commit drawn as a merge
    only if git draws it so."""
    async with running(scenario_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        await answer_prompt(app, pilot, "r", "--all")
        await answer_prompt(app, pilot, "p", " ".join(paths))
        await pilot.press("G")
        await until(
            pilot,
            lambda: screen.history.done and screen.history.paths == paths and screen.history.revs == ["--all"],
            "the whole path-limited history",
            timeout=20,
        )
        await pilot.pause()
        want = git_graph_columns(scenario_repo, "--all", "--", *paths)
        assert [c.oid.hex() for c in screen.history.rows] == [c for c, _ in want]
        drawn = []
        merges = []
        for text in list_text(screen.vlist):
            marker = min(i for i in (text.find("●"), text.find("◉")) if i >= 0)
            drawn.append(marker // 2)
            merges.append(text[marker] == "◉")
        assert drawn == [col for _, col in want]
        listed = git("log", "--graph", "--format=%P", "--all", "--", *paths, cwd=scenario_repo).decode()
        git_merges = [len(re.findall(r"[0-9a-f]{40}", line)) > 1 for line in re.findall(r"[*].*", listed)]
        # (the graph drawn with %P: a merge lists two ids)
        assert merges == git_merges
        assert any(col > 0 for _, col in want)


@pytest.mark.asyncio
async def test_t_hides_the_graph_and_lists_in_git_logs_default_order(scenario_repo):
    async with running(scenario_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        await pilot.press("t")
        await until(pilot, lambda: screen.history.graph is False, "t to restart without the graph")
        await pilot.press("G")
        await until(pilot, lambda: screen.history.done and not screen.history.graph, "the date-ordered history")
        await pilot.pause()
        assert [c.oid.hex() for c in screen.history.rows] == revlist(scenario_repo, "HEAD")
        assert not any("●" in r for r in list_text(screen.vlist))


@pytest.mark.parametrize(("size", "author"), [((80, 24), 12), ((120, 36), 18)])
@pytest.mark.asyncio
async def test_at_80_columns_the_author_column_narrows(tmp_path, size, author):
    """Under 100 columns the author takes 12 columns (a longer name cut
    with …) so the subject keeps room beside the graph; wider, 18."""
    repo = tmp_path / "repo"
    git("init", "-q", "-b", "main", repo)
    name = "Bartholomew Maximilian Fitzgerald"
    for i in range(3):
        (repo / "f.txt").write_text(f"{i}\n")
        git("add", "f.txt", cwd=repo)
        git("commit", "-q", "-m", f"subject number {i}", cwd=repo, env={"GIT_AUTHOR_NAME": name})
    async with running(repo, size=size) as (app, pilot):
        screen = await open_history(app, pilot)
        lst = screen.query_one(VirtualList)
        rows = await until(pilot, lambda: len(list_text(lst)) == 3 and list_text(lst), "the three commits")
        width = lst.scrollable_content_region.width
        for i, row in enumerate(rows):
            assert f" {name[: author - 1]}… " in row and f"subject number {2 - i}" in row[:width], row
