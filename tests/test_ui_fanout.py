"""The Fanout screen (key 5): bucket counts against git's own reading of
each .idx, the bucket list, and the current lookup's bucket."""

from __future__ import annotations

from collections import Counter

import pytest

from packscope.inspector.screens.fanout import BucketScreen, FanoutScreen
from packscope.inspector.widgets.fanout_chart import FanoutChart
from packscope.inspector.widgets.virtual_list import VirtualList
from tests import repos
from tests.ui_support import list_text, open_screen, plain, running, settle, until


def _git_counts(ids) -> list[int]:
    by_byte = Counter(int(oid[:2], 16) for oid in ids)
    return [by_byte.get(b, 0) for b in range(256)]


async def open_fanout(app, pilot) -> FanoutScreen:
    """Fanout (5), once its first index's statistics are in."""
    return await open_screen(app, pilot, "5", FanoutScreen, "the fanout statistics", lambda s: s.stats is not None)


@pytest.mark.asyncio
async def test_fanout_counts_match_git_show_index(ui_repo):
    async with running(ui_repo, poll_seconds=60) as (app, pilot):
        screen = await open_fanout(app, pilot)
        choices = screen.choices
        # The biggest index is chosen first: here, the multi-pack-index.
        assert choices[screen.selected].kind == "midx"
        assert screen.selected == max(range(len(choices)), key=lambda i: choices[i].objects)
        pack_dir = ui_repo / "objects" / "pack"
        midx_ids: set[str] = set()
        midx_packs = set(app.core.store.midxs[0].pack_names)
        lst = screen.query_one("#fanout-indexes", VirtualList)
        for row, c in enumerate(choices):
            if c.kind != "pack":
                continue
            ids = repos.show_index(pack_dir / c.name)
            if c.name in midx_packs:
                midx_ids.update(ids)
            lst.move_to(row)
            await until(pilot, lambda row=row: screen.selected == row, f"the cursor on {c.name} to select it")
            chart = screen.query_one(FanoutChart)
            assert list(chart.counts) == _git_counts(ids), c.name
            assert screen.stats.total == len(ids)
            assert f"{len(ids):,} objects" in plain(screen.query_one("#fanout-stats"))
        # The multi-pack-index: one bucket per first byte over all its packs.
        midx_row = next(i for i, c in enumerate(choices) if c.kind == "midx")
        lst.move_to(midx_row)
        await until(pilot, lambda: screen.selected == midx_row, "the cursor on the multi-pack-index to select it")
        assert list(screen.query_one(FanoutChart).counts) == _git_counts(midx_ids)
        s = screen.stats
        e = len(midx_ids) / 256
        assert s.chi_square == pytest.approx(sum((a - e) ** 2 / e for a in _git_counts(midx_ids)))
        assert "χ²" in plain(screen.query_one("#fanout-stats"))


@pytest.mark.asyncio
async def test_bucket_list_and_lookup_highlight(ui_repo):
    async with running(ui_repo, poll_seconds=60) as (app, pilot):
        screen = await open_fanout(app, pilot)
        chart = screen.query_one(FanoutChart)
        chart.focus()
        # A lookup anywhere: its bucket is highlighted (◆ under it).
        oid = app.core.store.midxs[0].name_at(0)
        with app.core.lock:
            app.core.store.locate(oid)
        await until(pilot, lambda: chart.lookup_bucket == oid[0], "the looked-up id's bucket to be highlighted")
        assert "◆" in chart.render().plain
        # Move to the busiest bucket and list it.
        target = max(range(256), key=lambda b: chart.counts[b])
        chart.cursor = (target - 65) % 256
        await pilot.press("l", "j")  # right one bucket, down one band (64)
        assert chart.cursor == target
        assert f"bucket {target:02x}" in plain(screen.query_one("#fanout-bucket"))
        await pilot.press("enter")
        await settle(app, pilot)
        sub = app.screen
        assert isinstance(sub, BucketScreen)
        rows = list_text(sub.query_one(VirtualList))
        m = app.core.store.midxs[0]
        expected = sorted(m.name_at(i).hex() for i in range(m.num_objects) if m.name_at(i)[0] == target)
        assert [r.split()[1] for r in rows] == expected
        assert len(rows) == chart.counts[target]
        await pilot.press("escape")
        assert isinstance(app.screen, FanoutScreen)


def _outside_midx(repo, app) -> tuple[str, bytes]:
    """(pack index name, an id) for a pack the multi-pack-index does not cover."""
    covered = set(app.core.store.midxs[0].pack_names)
    for p in repos.pack_files(repo):
        idx = p.with_suffix(".idx")
        if idx.name not in covered:
            return idx.name, bytes.fromhex(sorted(repos.show_index(idx))[0])
    raise AssertionError("every pack is in the multi-pack-index")


@pytest.mark.asyncio
async def test_marker_is_the_last_lookup_made_anywhere_on_the_indexes_that_hold_it(ui_repo):
    async with running(ui_repo, poll_seconds=60) as (app, pilot):
        name, oid = _outside_midx(ui_repo, app)
        # Looked up before the Fanout screen ever existed.
        with app.core.lock:
            assert app.core.store.locate(oid) is not None
        await until(pilot, lambda: app.last_lookup is not None, "the app to note the lookup")
        screen = await open_fanout(app, pilot)
        chart = screen.query_one(FanoutChart)
        # The multi-pack-index (chosen first) does not hold it: no mark, and it says so.
        assert screen.choices[screen.selected].kind == "midx"
        await until(pilot, lambda: screen.lookup_oid == oid.hex(), "the lookup to be taken in")
        assert chart.lookup_bucket is None
        assert "is not in this index" in plain(screen.query_one("#fanout-bucket"))
        # The pack that holds it: marked.
        row = next(i for i, c in enumerate(screen.choices) if c.name == name)
        screen.query_one("#fanout-indexes", VirtualList).move_to(row)
        await until(pilot, lambda: chart.lookup_bucket == oid[0], "the mark on the pack holding the id")
        # Another pack, which does not hold it: no mark.
        other = next(i for i, c in enumerate(screen.choices) if c.kind == "pack" and c.name != name)
        screen.query_one("#fanout-indexes", VirtualList).move_to(other)
        await until(pilot, lambda: screen.selected == other, "the other pack selected")
        await until(pilot, lambda: screen._shown == (app.last_lookup, other), "the mark recomputed")
        assert chart.lookup_bucket is None
        # A lookup that finds nothing: the bucket it would be in, on any index.
        absent = bytes([0xAB]) + bytes(19)
        with app.core.lock:
            assert app.core.store.locate(absent) is None
        await until(pilot, lambda: chart.lookup_bucket == 0xAB, "the would-be bucket marked")
        assert "would be in bucket ab" in plain(screen.query_one("#fanout-bucket"))


@pytest.mark.asyncio
async def test_one_tracer_listener_however_often_enter_is_pressed(ui_repo):
    async with running(ui_repo, poll_seconds=60) as (app, pilot):
        screen = await open_fanout(app, pilot)
        listeners = len(app.core.tracer._listeners)
        lst = screen.query_one("#fanout-indexes", VirtualList)
        for _ in range(3):
            lst.focus()
            await pilot.press("enter")  # choose the index: focus goes to the chart
            await until(pilot, lambda: screen.query_one(FanoutChart).has_focus, "the chart focused")
            await pilot.press("enter")  # list the bucket ...
            await until(pilot, lambda: isinstance(app.screen, BucketScreen), "the bucket list")
            await pilot.press("escape")  # ... and back
            await until(pilot, lambda: app.screen is screen, "the fanout screen back")
        assert len(app.core.tracer._listeners) == listeners


@pytest.mark.asyncio
async def test_at_80x24_the_chart_and_the_bucket_under_the_cursor_are_on_screen(ui_repo):
    async with running(ui_repo, poll_seconds=60, size=(80, 24)) as (app, pilot):
        screen = await open_fanout(app, pilot)
        chart = screen.query_one(FanoutChart)
        chart.cursor = 0x41
        await pilot.pause(0.2)
        rows = [strip.text for strip in app.screen._compositor.render_strips()]
        text = "\n".join(rows)
        import re

        for band in ("00", "40", "80", "c0"):
            assert any(re.match(rf"\s*{band} [│┤]", r) for r in rows), text
        # every band's axis whole: 64 buckets wide
        axes = [r.split("└", 1)[1].rstrip() for r in rows if "└" in r]
        assert len(axes) == 4 and all(len(a) == 64 for a in axes), axes
        assert "bucket 41" in text, text
