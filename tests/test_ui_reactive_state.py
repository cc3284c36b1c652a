"""The UI's state drives its redraws: the app's panel toggles and status
line, History's search state and Packs' sort and filter are reactive, so
setting one redraws what shows it — with no call to the screen."""

from __future__ import annotations

import pytest

from packscope.inspector.screens.history import HistoryScreen
from packscope.inspector.screens.pack_list import PacksScreen
from packscope.inspector.widgets.event_log import EventLogPanel
from packscope.inspector.widgets.rates import RatesPanel
from tests import repos
from tests.ui_support import open_screen, plain, running, until


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return repos.build_midx_repo(tmp_path_factory.mktemp("reactive"), packs=3)


@pytest.mark.asyncio
async def test_the_apps_panel_toggles_and_status_redraw_the_shown_screen(repo):
    async with running(repo, poll_seconds=60) as (app, pilot):
        screen = app.screen
        log, rates = screen.query_one(EventLogPanel), screen.query_one(RatesPanel)
        assert log.display and rates.display  # 120×36: room for both
        app.show_log = False
        await until(pilot, lambda: not log.display and rates.display, "the log hidden by show_log alone")
        app.show_rates = False
        await until(pilot, lambda: not rates.display, "the rates hidden by show_rates alone")
        app.show_log = True
        await until(pilot, lambda: log.display, "the log shown again")
        app.status_text = "counting the moon"
        await until(pilot, lambda: "counting the moon" in plain(screen.query_one("#status")), "the status line")


@pytest.mark.asyncio
async def test_historys_search_state_redraws_its_title(repo):
    async with running(repo, poll_seconds=60) as (app, pilot):
        screen = await open_screen(app, pilot, "7", HistoryScreen, "History's first rows", lambda s: s.history)
        title = screen.query_one("#history-title")
        screen.search_state = "searching 'moon': 3 loaded…"
        await until(pilot, lambda: "searching 'moon'" in plain(title, width=300), "the search state in the title")
        screen.search_state = ""
        await until(pilot, lambda: "searching" not in plain(title, width=300), "the title without it")


@pytest.mark.asyncio
async def test_packs_sort_and_filter_rebuild_the_view(repo):
    async with running(repo, poll_seconds=60) as (app, pilot):
        screen = await open_screen(
            app, pilot, "2", PacksScreen, "every pack's index read", lambda s: s.view and all(r.objects for r in s.view)
        )
        screen.sort = "size"
        sizes = [r.size for r in screen.view]
        assert sizes == sorted(sizes) and "sorted by size" in plain(screen.query_one("#packs-summary"))
        screen.reverse = True
        assert [r.size for r in screen.view] == sorted(sizes, reverse=True)
        name = screen.view[-1].name
        screen.filter = name[5:15]
        assert [r.name for r in screen.view] == [name]
        assert "1 shown" in plain(screen.query_one("#packs-summary"))
        screen.filter = ""
        assert len(screen.view) == len(sizes)
