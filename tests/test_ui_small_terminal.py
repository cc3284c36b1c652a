"""80×24 stays legible: the Overview's counters are abbreviated, never cut
mid-word; Packs keeps every column (the names are shortened); e and s show
the live panels that a small terminal folds away."""

from __future__ import annotations

import re

import pytest

from packscope.inspector.screens.overview import COUNTER_LABELS, OverviewScreen, compact_bytes, compact_number
from packscope.inspector.screens.pack_list import PacksScreen, shown_name
from packscope.inspector.widgets.event_log import EventLogPanel
from packscope.inspector.widgets.rates import RatesPanel
from tests import repos
from tests.ui_support import list_text, open_screen, plain, running, until

SMALL = (80, 24)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return repos.build_midx_repo(tmp_path_factory.mktemp("small"), packs=3)


def test_compact_numbers_and_sizes_fit_in_five_cells():
    for n in (0, 9_999, 10_000, 99_949, 99_960, 123_456, 999_999, 1_234_567, 98_765_432_100):
        assert len(compact_number(n)) <= 6, n  # (5, plus a unit at most once past 99.9)
    assert compact_number(123_456) == "123k" and compact_number(1_234_567) == "1.2M"
    for n in (0, 1023, 1024, 96 << 20, (1 << 30) + 1):
        assert len(compact_bytes(n)) <= 5, n
    assert compact_bytes(96 << 20) == "96.0M"


@pytest.mark.asyncio
async def test_overview_counters_fit_80_columns_uncut(repo):
    async with running(repo, size=SMALL, poll_seconds=60) as (app, pilot):
        screen = app.screen
        assert isinstance(screen, OverviewScreen)
        panel = screen.query_one("#ov-counters")
        short = [s for _full, s in COUNTER_LABELS]
        text = await until(
            pilot,
            lambda: (t := plain(panel, width=panel.content_size.width)) and "Δ budget" in t and t,
            "the counters drawn with their short labels",
        )
        assert "…" not in text
        for label in short:  # each label whole, between blanks: nothing cut mid-word
            assert re.search(rf"(^|\s){re.escape(label)}(\s|$)", text), (label, text)


@pytest.mark.asyncio
async def test_packs_keeps_every_column_at_80_columns(repo):
    async with running(repo, size=SMALL, poll_seconds=60) as (app, pilot):
        screen = await open_screen(
            app,
            pilot,
            "2",
            PacksScreen,
            "every pack's index read",
            lambda s: s.view and all(r.objects is not None for r in s.view),
        )
        header = plain(screen.query_one("#packs-header"), width=78)
        for column in ("rank", "pack", "objects", "size", "age", "midx", "files", "checks"):
            assert re.search(rf"\b{column}\b", header), (column, header)
        lst = screen.query_one("#packs-list")
        assert lst.scroll_x == 0
        rows = list_text(lst)
        packs = {p.stem for p in repos.pack_files(repo)}
        assert any(r.in_midx for r in screen.view)
        for row, r in zip(rows, screen.view, strict=True):
            visible = row[: lst.size.width]
            assert r.name in packs
            assert shown_name(r.name, screen.name_width) in visible  # the name, shortened, in view
            assert (r.in_midx and " yes " in visible) or (not r.in_midx)
            assert re.search(r"\d{4}-\d\d-\d\d|\d+[smh]\b", visible), visible  # the age
            assert re.search(r"[K·][P·][B·][R·]", visible), visible  # the files column


@pytest.mark.asyncio
async def test_e_and_s_show_the_folded_panels_in_a_small_terminal(repo):
    async with running(repo, size=SMALL, poll_seconds=60) as (app, pilot):
        log = app.screen.query_one(EventLogPanel)
        rates = app.screen.query_one(RatesPanel)
        assert not log.display and not rates.display  # folded away: the screen keeps the rows
        await pilot.press("e")
        await until(pilot, lambda: log.display and log.size.height > 0, "e to show the event log")
        await pilot.press("s")
        await until(pilot, lambda: rates.display and rates.size.height > 0, "s to show the rates")
        await pilot.press("e", "s")
        await until(pilot, lambda: not log.display and not rates.display, "e and s to fold them again")
