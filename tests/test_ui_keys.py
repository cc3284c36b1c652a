"""Keys as a tig user expects them, on every top-level screen: q closes the
view and quits at the top, Q quits from anywhere (the Lab included: its
quick-lookups toggle is U), and Tab into the event log never turns one of
the screen's keys into the log's.  ? lists every key that works, the log's
included."""

from __future__ import annotations

import pytest

from packscope.inspector.app import SCREEN_TABLE
from packscope.inspector.screens.help import HelpScreen
from packscope.inspector.screens.lab import LabScreen
from packscope.inspector.widgets.event_log import EventLogList
from packscope.inspector.widgets.prompt import Prompt
from tests import repos
from tests.repos import git_text
from tests.ui_support import answer_prompt, open_screen, plain, running, until

TOP_KEYS = [spec.key for spec in SCREEN_TABLE]


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return repos.build_packed(tmp_path_factory.mktemp("keys"), commits=8)


async def _on_screen(app, pilot, key: str):
    await pilot.press(key)
    name = next(spec.name for spec in SCREEN_TABLE if spec.key == key)
    return await until(
        pilot, lambda: app.current_mode == name and app.screen.is_mounted and app.screen, f"{key} to its screen"
    )


@pytest.mark.parametrize("key", TOP_KEYS)
@pytest.mark.asyncio
async def test_q_on_a_top_level_screen_quits(repo, key):
    async with running(repo, poll_seconds=60) as (app, pilot):
        await _on_screen(app, pilot, key)
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running, f"q on screen {key} to quit")


@pytest.mark.parametrize("key", TOP_KEYS)
@pytest.mark.asyncio
async def test_Q_quits_from_every_screen_the_lab_included(repo, key):
    async with running(repo, poll_seconds=60) as (app, pilot):
        await _on_screen(app, pilot, key)
        await pilot.press("Q")
        await until(pilot, lambda: not app.is_running, f"Q on screen {key} to quit")


@pytest.mark.asyncio
async def test_q_closes_an_inner_view_before_it_quits(repo):
    async with running(repo, poll_seconds=60) as (app, pilot):
        await answer_prompt(app, pilot, "colon", "HEAD")  # the Object tab, with a way back here
        await until(pilot, lambda: app.current_mode == "object", ": to the Object tab")
        await pilot.press("q")
        await until(pilot, lambda: app.current_mode == "overview", "q back to the Overview")
        assert app.is_running
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running, "q at the top to quit")


@pytest.mark.asyncio
async def test_U_toggles_quick_lookups_in_the_lab(repo):
    async with running(repo, poll_seconds=60) as (app, pilot):
        await open_screen(app, pilot, "6", LabScreen, "the Lab")
        quick = app.core.store.settings.quick
        await pilot.press("U")
        await until(pilot, lambda: app.core.store.settings.quick is not quick, "U to toggle quick lookups")
        assert app.is_running


@pytest.mark.asyncio
async def test_after_tab_the_labs_keys_stay_the_labs(repo):
    async with running(repo, poll_seconds=60) as (app, pilot):
        screen = await open_screen(app, pilot, "6", LabScreen, "the Lab")
        head = git_text("rev-parse", "HEAD", cwd=repo).strip()
        await answer_prompt(app, pilot, "l", head)
        await until(pilot, lambda: screen.run is not None and screen.run.found, "the lookup of HEAD")
        log = screen.query_one(EventLogList)
        await pilot.press("tab")
        await until(pilot, lambda: app.focused is log, "Tab into the event log")
        await pilot.press("home", "p")
        await until(pilot, lambda: screen.playing, "p to play the Lab's lookup")
        assert not app.logbook.paused
        await pilot.press("p")
        await until(pilot, lambda: not screen.playing, "p again to pause the Lab")
        assert not app.logbook.paused
        k = screen.batch_k
        await pilot.press("k")
        await until(pilot, lambda: screen.batch_k != k, "k to cycle the Lab's batch size")
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, Prompt), "f to ask the Lab's ids file")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen, "the Lab back")
        # The log's keys the Lab leaves it still work there.
        assert app.logbook.entries
        app.set_focus(log)
        await pilot.press("c")
        await until(pilot, lambda: not app.logbook.entries, "c in the log to clear it")


@pytest.mark.asyncio
async def test_after_tab_the_log_keys_work_where_the_screen_has_none(repo):
    async with running(repo, poll_seconds=60) as (app, pilot):
        log = app.screen.query_one(EventLogList)
        await pilot.press("tab")
        await until(pilot, lambda: app.focused is log, "Tab into the event log")
        await pilot.press("p")
        await until(pilot, lambda: app.logbook.paused, "p in the log to pause it")


@pytest.mark.parametrize("key", TOP_KEYS)
@pytest.mark.asyncio
async def test_help_lists_every_binding_of_the_screen_the_app_and_the_log(repo, key):
    async with running(repo, poll_seconds=60) as (app, pilot):
        screen = await _on_screen(app, pilot, key)
        log = screen.query_one(EventLogList)
        wanted = {
            b.description
            for node in (app, screen)
            for bindings in node._bindings.key_to_bindings.values()
            for b in bindings
            if b.show and b.description and node.check_action(b.action.split("(")[0], ()) is not False
        }  # (Back is hidden at the bottom of a screen's stack: it means nothing there)
        log_keys = {
            b.description
            for bs in log._bindings.key_to_bindings.values()
            for b in bs
            if b.id and b.id.startswith("log.")
        }
        await pilot.press("question_mark")
        helpscreen = await until(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen, "? to open help")
        text = plain(helpscreen.query_one("#help-keys"), width=300)
        missing = [d for d in wanted if d not in text]
        assert missing == []
        assert log_keys  # (the log keeps some keys on every screen: c clears it)
        for d in log_keys:
            assert f"{d} (in the event log: Tab)" in text
