"""Navigation as a tig user expects it: q closes the view (quits at the
top), Q quits; `:` shows the object in the Object tab with a way back;
tabs answer a click; ? lists every key (no binding ids) and scrolls with
list keys; y says how the id was copied and shows it."""

from __future__ import annotations

import pytest

from packscope.inspector.screens.commit import CommitScreen
from packscope.inspector.screens.help import HelpScreen
from packscope.inspector.screens.history import HistoryScreen
from packscope.inspector.screens.object import ObjectScreen
from tests import ui_history_repos as hr
from tests.repos import git_text
from tests.ui_support import answer_prompt, open_history, plain, running, until


@pytest.fixture(scope="module")
def history_repo(tmp_path_factory):
    return hr.build_history_repo(tmp_path_factory.mktemp("nav"))


@pytest.mark.asyncio
async def test_q_closes_the_view_and_quits_at_the_top(history_repo):
    async with running(history_repo) as (app, pilot):
        history = await open_history(app, pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, CommitScreen), "Enter to open the commit")
        await pilot.press("q")
        await until(pilot, lambda: app.screen is history, "q to close the commit view, back on History")
        assert app.is_running
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running, "q at the top to quit")


@pytest.mark.asyncio
async def test_Q_quits_at_once_from_any_depth(history_repo):
    async with running(history_repo) as (app, pilot):
        await open_history(app, pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, CommitScreen), "Enter to open the commit")
        await pilot.press("Q")
        await until(pilot, lambda: not app.is_running, "Q to quit at once")


@pytest.mark.asyncio
async def test_colon_shows_the_object_in_the_object_tab_with_a_way_back(history_repo):
    async with running(history_repo) as (app, pilot):
        history = await open_history(app, pilot)
        head = git_text("rev-parse", "HEAD", cwd=history_repo).strip()
        await answer_prompt(app, pilot, "colon", "HEAD")
        screen = await until(
            pilot,
            lambda: (
                app.current_mode == "object"
                and isinstance(app.screen, ObjectScreen)
                and app.screen.oid is not None
                and app.screen.oid.hex() == head
                and app.screen
            ),
            "`:HEAD` to show HEAD's commit in the Object tab",
        )
        await pilot.pause()
        tabs = plain(screen.query_one("#tabs"), width=200)
        assert "4 Object" in tabs and "← Esc: back to History" in tabs
        await pilot.press("escape")
        await until(pilot, lambda: app.current_mode == "history" and app.screen is history, "Esc back to History")
        # picking the Object tab by hand offers no way back
        await pilot.press("4")
        await until(pilot, lambda: app.current_mode == "object", "4 to the Object tab")
        await pilot.pause()
        assert "back to" not in plain(app.screen.query_one("#tabs"), width=200)


@pytest.mark.asyncio
async def test_a_click_on_a_tab_switches_to_it(history_repo):
    async with running(history_repo) as (app, pilot):
        bar = app.screen.query_one("#tabs")
        for start, _end, name in bar.spans:
            if name == "health":
                await pilot.click("#tabs", offset=(start + 2, 0))
        await until(pilot, lambda: app.current_mode == "health", "a click on the Health tab")


@pytest.mark.asyncio
async def test_help_lists_every_key_without_ids_and_scrolls_with_list_keys(history_repo):
    async with running(history_repo, start="health", size=(100, 24)) as (app, pilot):
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "? to open help on Health")
        text = plain(app.screen.query_one("#help-keys"), width=100)
        assert "o (finding details) Open the finding's object" in text  # a pop-up's key
        assert "Ctrl-P Command palette" in text
        assert "health." not in text and "app." not in text
        await pilot.press("escape")
        await pilot.press("7")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen), "7 to History")
        await pilot.press("question_mark")
        helpscreen = await until(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen, "? on History")
        text = plain(helpscreen.query_one("#help-keys"), width=100)
        for row in ("t Graph on/off", "/ Search", "n Next match", "r Revisions", "q Close view", "Q Quit now"):
            assert row in text
        box = helpscreen.box
        assert box.max_scroll_y > 0
        await pilot.press("G")
        await until(pilot, lambda: box.scroll_y == box.max_scroll_y, "G to the bottom of help")
        await pilot.press("k")
        await until(pilot, lambda: box.scroll_y == box.max_scroll_y - 1, "k one line up")
        await pilot.press("g")
        await until(pilot, lambda: box.scroll_y == 0, "g to the top of help")
        await pilot.press("j")
        await until(pilot, lambda: box.scroll_y == 1, "j one line down")


@pytest.mark.asyncio
async def test_y_says_how_the_id_was_copied_and_shows_it(history_repo, monkeypatch):
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    async with running(history_repo) as (app, pilot):
        history = await open_history(app, pilot)
        head = history.history.rows[0].oid.hex()
        await pilot.press("y")
        note = await until(
            pilot,
            lambda: next((n for n in app._notifications if head in str(n.message)), None),
            "y to show the copied id",
        )
        assert "OSC 52" in note.message and "select the id" in note.message
        assert app.copied == head
