"""Packs and one pack's entries (the virtual list), against git."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

import packscope.inspector.pack_entries_model as pack_entries
from packscope.inspector.screens.object import ObjectScreen
from packscope.inspector.screens.pack_entries import PackScreen
from packscope.inspector.screens.pack_list import PacksScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests import repos
from tests.ui_support import SIZE, list_text, make_app, plain, settle, started, until


def _verify_pack(pack) -> dict[str, tuple]:
    """{id: (type, size, size-in-pack, offset, depth, base)} from git verify-pack -v."""
    out = repos.git_text("verify-pack", "-v", pack.with_suffix(".idx"))
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 5 and len(parts[0]) == 40 and parts[1] in ("commit", "tree", "blob", "tag"):
            depth, base = (int(parts[5]), parts[6]) if len(parts) >= 7 else (0, None)
            rows[parts[0]] = (parts[1], int(parts[2]), int(parts[3]), int(parts[4]), depth, base)
    return rows


@pytest.mark.asyncio
async def test_packs_table_matches_the_pack_directory(ui_repo):
    app = make_app(ui_repo)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, PacksScreen)
        table = screen.query_one(DataTable)
        packs = repos.pack_files(ui_repo)
        assert table.row_count == len(packs)
        counts = {p.stem: len(repos.show_index(p.with_suffix(".idx"))) for p in packs}
        midx_names = set(repos.git_text("multi-pack-index", "verify", cwd=ui_repo, check=False) and [])
        rows = [
            [plain(c) if not isinstance(c, str) else c for c in table.get_row_at(i)] for i in range(table.row_count)
        ]
        by_name = {r[1]: r for r in rows}
        assert set(by_name) == set(counts)
        for name, r in by_name.items():
            assert r[2] == f"{counts[name]:,}"
            assert r[4] == "v2"
        outside = [r for r in rows if r[5] != "yes"]
        assert sorted(r[0] for r in outside) == ["0", "1"]  # MRU ranks of the two packs outside the midx
        assert all(r[0] == "–" for r in rows if r[5] == "yes")
        del midx_names
        summary = plain(screen.query_one("#packs-summary"))
        assert f"{len(packs)} packs, {sum(counts.values()):,} objects" in summary


@pytest.mark.asyncio
async def test_mru_rank_follows_a_hit(ui_repo):
    app = make_app(ui_repo)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        table = app.screen.query_one(DataTable)
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        second = next(plain(r[1]) for r in rows if r[0] == "1")
        pack = ui_repo / "objects" / "pack" / f"{second}.idx"
        oid = next(iter(repos.show_index(pack)))
        with app.core.lock:
            app.core.store.locate(bytes.fromhex(oid))
        await until(
            pilot,
            lambda: any(
                r[0] == "0" and plain(r[1]) == second for r in (table.get_row_at(i) for i in range(table.row_count))
            ),
            f"MRU rank 0 for {second} after a hit in it",
        )
        assert any("MRU" in e.text.plain and second[:18] in e.text.plain for e in app.logbook.entries)


@pytest.mark.asyncio
async def test_pack_entries_match_git(packed_repo):
    app = make_app(packed_repo)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, PackScreen)
        lst = screen.query_one(VirtualList)
        pack = repos.pack_files(packed_repo)[0]
        truth = _verify_pack(pack)
        assert lst.row_count == len(truth)
        assert "pack order (by offset)" in plain(screen.query_one("#pack-title"))
        offsets, deltas = [], 0
        for line in list_text(lst):
            f = line.split()
            offset, oid, kind, disk, depth = int(f[0]), f[1], f[2], int(f[4]), int(f[5])
            t = truth[oid]
            assert (kind.rstrip("Δ"), disk, offset, depth) == (t[0], t[2], t[3], t[4]), oid
            # a delta is marked Δ and names its base's abbreviated id; a whole object neither
            base = t[5][:12] if depth else None
            assert (kind.endswith("Δ"), base is None or f[6] == base) == (bool(depth), True), line
            deltas += bool(depth)
            offsets.append(offset)
        assert offsets == sorted(offsets)
        assert deltas > len(truth) // 4  # the repository is built to have many
        # Sizes: git's cat-file reports the object's own size.
        sizes = repos.batch_check_all(packed_repo)
        first = list_text(lst, 30)
        for line in first:
            f = line.split()
            assert int(f[3]) == sizes[f[1]][1]


@pytest.mark.asyncio
async def test_list_keys_search_and_order(packed_repo):
    app = make_app(packed_repo)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        lst = app.screen.query_one(VirtualList)
        n = lst.row_count
        height = lst.scrollable_content_region.height
        await pilot.press("j", "j", "down")
        assert lst.cursor == 3
        await pilot.press("k", "up")
        assert lst.cursor == 1
        await pilot.press("G")
        assert lst.cursor == n - 1
        assert lst.scroll_offset.y >= n - height  # the cursor row is on screen
        await pilot.press("g")
        assert lst.cursor == 0 and lst.scroll_offset.y == 0
        await pilot.press("ctrl+d")
        assert lst.cursor == max(1, height // 2)
        await pilot.press("ctrl+u")
        assert lst.cursor == 0
        # Search by id prefix, then n / N.
        rows = list_text(lst)
        target = rows[n // 2].split()[1]

        async def search(query: str) -> None:
            from textual.widgets import Input

            await pilot.press("slash")
            await pilot.pause()
            app.screen.query_one(Input).value = query
            await pilot.press("enter")
            await pilot.pause()

        await search(target[:7])
        assert rows[lst.cursor].split()[1] == target
        prefix = target[:1]
        await search(prefix)
        matches = [i for i, r in enumerate(rows) if r.split()[1].startswith(prefix)]
        assert lst.cursor in matches
        at = lst.cursor
        await pilot.press("n")
        assert lst.cursor == next((m for m in matches if m > at), matches[0])
        await pilot.press("N")
        assert lst.cursor == at
        offset = int(rows[5].split()[0])
        await search(f"@{offset}")
        assert lst.cursor == 5
        # o: index order (sorted by id), keeping the cursor on the same object.
        oid = rows[5].split()[1]
        await pilot.press("o")
        ids = [r.split()[1] for r in list_text(lst)]
        assert ids == sorted(ids)
        assert ids[lst.cursor] == oid
        assert "index order" in plain(app.screen.query_one("#pack-title"))
        await pilot.press("y")
        assert app.clipboard == oid


@pytest.mark.asyncio
async def test_big_pack_opens_in_index_order_then_pack_order(packed_repo, monkeypatch):
    monkeypatch.setattr(pack_entries, "SYNC_LIMIT", 10)
    monkeypatch.setattr("packscope.inspector.screens.pack_entries.SYNC_LIMIT", 10)
    monkeypatch.setattr(pack_entries, "SLICE", 50)
    app = make_app(packed_repo)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        lst = screen.query_one(VirtualList)
        await until(
            pilot,
            lambda: screen.entries is not None and screen.entries.in_offset_order,
            "the big pack's entries in pack order",
            timeout=10,
        )
        await pilot.pause()
        offsets = [int(r.split()[0]) for r in list_text(lst)]
        assert offsets == sorted(offsets)
        assert "pack order" in plain(screen.query_one("#pack-title"))


@pytest.mark.asyncio
async def test_enter_opens_the_object_and_escape_comes_back(packed_repo):
    app = make_app(packed_repo)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        lst = app.screen.query_one(VirtualList)
        rows = list_text(lst)
        k = max(i for i, r in enumerate(rows) if int(r.split()[5]) >= 2)  # a delta of depth >= 2
        lst.move_to(k)
        f = rows[k].split()
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ObjectScreen)
        where = plain(screen.query_one("#object-where"), width=160)
        pack_name = repos.pack_files(packed_repo)[0].stem
        assert f[1] in where and f"{pack_name} @ {f[0]}" in where
        assert "delta chain" in where and "base, inflated" in where
        depth = int(f[5])
        assert f" {depth} @" in where
        truth = repos.batch_contents(packed_repo)[f[1]]
        assert screen.view.type_name == truth[0] and screen.view.size == len(truth[1])
        await pilot.press("escape")
        assert isinstance(app.screen, PackScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, PacksScreen)
        # Opening it again: its bases are now in the delta-base cache.
        await pilot.press("enter")
        await settle(app, pilot)
        app.screen.query_one(VirtualList).move_to(k)
        await pilot.press("enter")
        await settle(app, pilot)
        assert "in delta-base cache" in plain(app.screen.query_one("#object-where"), width=160)
