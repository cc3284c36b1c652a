"""The Refs screen (0) and its reflog view, on the repository
tests/test_refs_cli.py builds: rows are git for-each-ref's refs then the
stash list, ahead/behind equal git rev-list --count --left-right, Enter
opens History at the ref, `l` shows git reflog's entries."""

from __future__ import annotations

import shutil

import pytest
from textual.widgets import LoadingIndicator

from packscope.inspector.screens.help import HelpScreen
from packscope.inspector.screens.history import HistoryScreen
from packscope.inspector.screens.refs import ReflogScreen, RefsScreen
from tests.repos import git, git_text
from tests.test_refs_cli import _build
from tests.ui_support import list_text, plain, running, until


@pytest.fixture(scope="module")
def refs_repo(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("ui-refs"))


async def open_refs(app, pilot) -> RefsScreen:
    await pilot.press("0")
    screen = await until(
        pilot,
        lambda: isinstance(app.screen, RefsScreen) and app.screen.snapshot is not None and app.screen,
        "the Refs screen with its rows",
    )
    return screen


def git_counts(repo, ref: str) -> tuple[int, int]:
    left, right = git_text("rev-list", "--count", "--left-right", f"HEAD...{ref}", cwd=repo).split()
    return int(left), int(right)


@pytest.mark.asyncio
async def test_refs_rows_are_for_each_ref_then_the_stash_with_git_counts(refs_repo):
    async with running(refs_repo) as (app, pilot):
        screen = await open_refs(app, pilot)
        entries = screen.snapshot.entries
        refs = [e.name for e in entries if e.kind != "stash"]
        assert refs == git_text("for-each-ref", "--format=%(refname)", cwd=refs_repo).split()
        stash = git_text("stash", "list", "--format=%gd %H", cwd=refs_repo).splitlines()
        assert [f"{e.name} {e.oid.hex()}" for e in entries if e.kind == "stash"] == stash
        await until(pilot, lambda: not screen.counting and not screen.reading, "the ahead/behind counts")
        entries = screen.snapshot.entries
        assert not app.screen.query(LoadingIndicator), "nothing covers the rows once they are read"
        for e in entries:
            target = e.name if e.kind != "stash" else e.oid.hex()
            assert (e.ahead, e.behind) == git_counts(refs_repo, target), e.name
        rows = list_text(screen.vlist)
        topic = rows[refs.index("refs/heads/topic2")]
        assert "topic2" in topic and "topic work" in topic
        want_ahead, want_behind = git_counts(refs_repo, "refs/heads/topic2")
        assert f"↑{want_ahead} ↓{want_behind}" in topic
        assert rows[refs.index("refs/heads/main")].startswith("* ")


@pytest.mark.asyncio
async def test_enter_opens_history_at_the_ref(refs_repo):
    async with running(refs_repo) as (app, pilot):
        screen = await open_refs(app, pilot)
        row = [e.name for e in screen.snapshot.entries].index("refs/heads/topic2")
        screen.vlist.move_to(row)
        await pilot.press("enter")
        history = await until(
            pilot,
            lambda: (
                isinstance(app.screen, HistoryScreen)
                and app.screen.history is not None
                and app.screen.history.loaded > 0
                and app.screen
            ),
            "History opened at topic2",
        )
        assert history.history.rows[0].oid.hex() == git_text("rev-parse", "topic2", cwd=refs_repo).strip()
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen, "back on Refs")


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("ref", "key", "shown"),
    [("refs/heads/topic2", "l", "topic2"), ("stash@{0}", "l", "stash"), ("refs/heads/side", "L", "HEAD")],
)
async def test_l_shows_the_reflog_as_git_reflog_shows_it(refs_repo, ref, key, shown):
    async with running(refs_repo) as (app, pilot):
        screen = await open_refs(app, pilot)
        screen.vlist.move_to([e.name for e in screen.snapshot.entries].index(ref))
        await pilot.press(key)
        view = await until(
            pilot,
            lambda: isinstance(app.screen, ReflogScreen) and app.screen.rows is not None and app.screen,
            "the reflog view with its entries",
        )
        want = git_text("reflog", "show", shown, cwd=refs_repo).splitlines()
        assert list_text(view.query_one("#reflog-list")) == want
        assert want


@pytest.mark.asyncio
async def test_refs_keys_are_listed_in_help(refs_repo):
    async with running(refs_repo) as (app, pilot):
        await open_refs(app, pilot)
        await pilot.press("question_mark")
        help_screen = await until(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen, "the help screen")
        keys = plain(help_screen.query_one("#help-keys"), width=200)
        assert "Reflog" in keys and "History" in keys


@pytest.mark.asyncio
async def test_a_repack_keeps_the_counts_it_does_not_move(refs_repo, tmp_path):
    """A repack beside the screen (an outside change: the refs are read
    again) keeps the ahead/behind counts of refs that still name the same
    commit: they are not walked again (under a repack loop the walk used
    to restart every second and never reached the lower rows)."""
    work = tmp_path / "copy"
    shutil.copytree(refs_repo, work, symlinks=True)
    async with running(work, poll_seconds=0.1) as (app, pilot):
        screen = await open_refs(app, pilot)
        await until(pilot, lambda: not screen.counting and not screen.reading, "the ahead/behind counts")
        first = screen.snapshot
        walks: list[int] = []
        real_count = screen.count
        screen.count = lambda snapshot: (walks.append(len(snapshot.entries)), real_count(snapshot))  # type: ignore[method-assign]
        seen = app.outside_changes
        git("repack", "-a", "-d", "-q", cwd=work)
        await until(pilot, lambda: app.outside_changes > seen, "the repack noticed")
        await until(pilot, lambda: screen.snapshot is not first and not screen.reading, "the refs read again")
        assert walks == [], "the counts were walked again though no ref moved"
        assert not screen.counting
        for e in screen.snapshot.entries:
            target = e.name if e.kind != "stash" else e.oid.hex()
            assert (e.ahead, e.behind) == git_counts(work, target), e.name


@pytest.mark.parametrize("size", [(80, 24), (160, 40)])
@pytest.mark.asyncio
async def test_refs_rows_show_their_subject_at_80_columns(refs_repo, tmp_path, size):
    """At 80 columns a long ref name and the date give way so each row
    still shows its commit's subject, and the title says whether the
    counts are done; at 160 the date and the whole name are there."""
    work = tmp_path / "copy"
    shutil.copytree(refs_repo, work, symlinks=True)
    long_name = "a-branch-name-long-enough-to-fill-the-column"
    git("branch", long_name, "main", cwd=work)
    async with running(work, size=size) as (app, pilot):
        screen = await open_refs(app, pilot)
        await until(pilot, lambda: not screen.counting and not screen.reading, "the ahead/behind counts")
        width = screen.vlist.scrollable_content_region.width
        rows = list_text(screen.vlist)
        for e, row in zip(screen.snapshot.entries, rows, strict=True):
            if e.commit is not None:
                assert e.subject[:10] in row[:width], f"{e.name}: {row[:width]!r}"
                assert (e.date in row) == (size[0] >= 100), row
        assert any(long_name[:39] in row for row in rows) == (size[0] >= 100)
        title = plain(screen.query_one("#refs-title"), width=width)
        assert "ahead/behind: done" in title[:width]


@pytest.mark.asyncio
async def test_the_reflog_view_reads_again_after_a_commit(refs_repo, tmp_path):
    """A commit made while the reflog view is open (an outside change: new
    objects) shows as its newest entry, as `git reflog show` then lists it,
    without leaving the view; the cursor stays on the entry it was on."""
    work = tmp_path / "copy"
    shutil.copytree(refs_repo, work, symlinks=True)
    git("checkout", "-q", "main", cwd=work)
    async with running(work, poll_seconds=0.1) as (app, pilot):
        screen = await open_refs(app, pilot)
        screen.vlist.move_to([e.name for e in screen.snapshot.entries].index("refs/heads/main"))
        await pilot.press("l")
        view = await until(
            pilot,
            lambda: isinstance(app.screen, ReflogScreen) and app.screen.rows is not None and app.screen,
            "the reflog",
        )
        lst = view.query_one("#reflog-list")
        before = list_text(lst)
        lst.move_to(1)
        git("commit", "-q", "--allow-empty", "-m", "made while the view was open", cwd=work)
        want = git_text("reflog", "show", "main", cwd=work).splitlines()
        assert len(want) == len(before) + 1
        await until(pilot, lambda: list_text(lst) == want, "the new reflog entry", timeout=5)
        assert lst.cursor == 2  # still on the entry it was on, one further down now
