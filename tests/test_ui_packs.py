"""Packs and one pack's entries (the virtual list), against git."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

import packscope.inspector.pack_entries_model as pack_entries
from packscope.inspector.screens.object import ObjectScreen
from packscope.inspector.screens.pack_entries import PackScreen
from packscope.inspector.screens.pack_list import PacksScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests import repos
from tests.ui_support import list_text, open_screen, plain, running, search, settle, until


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


def pack_rows_shown(screen) -> list[tuple[str, str]]:
    """(name, rendered row) for every row of the Packs list, in list order."""
    lst = screen.query_one(VirtualList)
    return [(r.name, line) for r, line in zip(screen.view, list_text(lst), strict=True)]


async def open_packs(app, pilot) -> PacksScreen:
    screen = await open_screen(
        app,
        pilot,
        "2",
        PacksScreen,
        "every pack's index checked",
        lambda s: s.view and all(r.objects is not None or r.orphan for r in s.view),
    )
    await pilot.pause()
    return screen


async def open_first_pack(app, pilot) -> PackScreen:
    """Packs (2), then Enter on the first pack: its entries, once listed."""
    await pilot.press("2")
    await settle(app, pilot)
    screen = await open_screen(app, pilot, "enter", PackScreen, "the first pack's entries")
    await settle(app, pilot)
    return screen


@pytest.mark.asyncio
async def test_packs_list_matches_the_pack_directory(ui_repo):
    async with running(ui_repo) as (app, pilot):
        screen = await open_packs(app, pilot)
        packs = repos.pack_files(ui_repo)
        counts = {p.stem: len(repos.show_index(p.with_suffix(".idx"))) for p in packs}
        shown = pack_rows_shown(screen)
        assert sorted(n for n, _ in shown) == sorted(counts)
        for name, line in shown:
            f = line.split()
            at = f.index(name)
            assert f[at + 1] == f"{counts[name]:,}", line
        midx = {r.name for r in screen.view if r.in_midx}
        assert len(midx) == 8  # the repository's multi-pack-index covers 8 of its 10 packs
        ranks = sorted(line.split()[0] for name, line in shown if name not in midx)
        assert ranks == ["0", "1"]  # MRU ranks of the two packs outside the midx
        assert all(line.split()[0] == "–" and " yes " in line for name, line in shown if name in midx)
        summary = plain(screen.query_one("#packs-summary"))
        assert f"{len(packs)} packs, {sum(counts.values()):,} objects" in summary


@pytest.mark.asyncio
async def test_mru_rank_follows_a_hit(ui_repo):
    async with running(ui_repo) as (app, pilot):
        screen = await open_packs(app, pilot)
        second = next(name for name, line in pack_rows_shown(screen) if line.split()[0] == "1")
        pack = ui_repo / "objects" / "pack" / f"{second}.idx"
        oid = next(iter(repos.show_index(pack)))
        with app.core.lock:
            app.core.store.locate(bytes.fromhex(oid))
        await until(
            pilot,
            lambda: any(line.split()[0] == "0" and name == second for name, line in pack_rows_shown(screen)),
            f"MRU rank 0 for {second} after a hit in it",
        )
        assert any("MRU" in e.text.plain and second[:18] in e.text.plain for e in app.logbook.entries)


@pytest.mark.asyncio
async def test_packs_list_keys_and_mouse_on_300_packs(three_hundred_packs_repo):
    async with running(three_hundred_packs_repo) as (app, pilot):
        screen = await open_packs(app, pilot)
        lst = screen.query_one(VirtualList)
        assert lst.has_focus and lst.row_count == 300 == len(repos.pack_files(three_hundred_packs_repo))
        height = lst.scrollable_content_region.height
        await pilot.press("j", "j", "down")
        assert lst.cursor == 3
        await pilot.press("k")
        assert lst.cursor == 2
        await pilot.press("G")
        assert lst.cursor == 299 and lst.scroll_offset.y >= 300 - height
        await pilot.press("g")
        assert lst.cursor == 0 and lst.scroll_offset.y == 0
        await pilot.press("end")
        assert lst.cursor == 299
        await pilot.press("home", "ctrl+d")
        assert lst.cursor == max(1, height // 2)
        # A click on a row moves there; a double click opens that pack.
        await pilot.click("#packs-list", offset=(5, 4))
        assert lst.cursor == 4
        name = screen.view[4].name
        await pilot.click("#packs-list", offset=(5, 4), times=2)
        await until(pilot, lambda: isinstance(app.screen, PackScreen), "the clicked pack opened")
        assert app.screen.handle.name == name
        await pilot.press("escape")
        assert app.screen is screen and lst.has_focus
        # A click on the "size" header sorts by size; again reverses.
        x = screen.query_one("#packs-header").render().plain.index("size") + 1
        await pilot.click("#packs-header", offset=(x, 0))
        sizes = [r.size for r in screen.view]
        assert screen.sort == "size" and sizes == sorted(sizes)
        await pilot.click("#packs-header", offset=(x, 0))
        assert [r.size for r in screen.view] == sorted(sizes, reverse=True)


@pytest.mark.asyncio
async def test_o_sorts_by_each_column_as_the_files_say(ui_repo):
    async with running(ui_repo) as (app, pilot):
        screen = await open_packs(app, pilot)
        packs = {p.stem: p for p in repos.pack_files(ui_repo)}
        counts = {n: len(repos.show_index(p.with_suffix(".idx"))) for n, p in packs.items()}
        # the multi-pack-index's pack-name chunk lists the .idx of each pack it covers
        raw = (ui_repo / "objects" / "pack" / "multi-pack-index").read_bytes()
        midx = {m.decode()[:-4] for m in re.findall(rb"pack-[0-9a-f]{40}\.idx", raw)}

        def names() -> list[str]:
            out = [n for n, _ in pack_rows_shown(screen)]
            assert len(out) == len(packs)
            return out

        initial = names()  # search order
        await pilot.press("o")
        assert screen.sort == "problems" and names() == initial  # nothing damaged: search order
        await pilot.press("o")
        assert screen.sort == "name" and names() == sorted(packs)
        await pilot.press("o")
        assert screen.sort == "size"
        assert [packs[n].stat().st_size for n in names()] == sorted(p.stat().st_size for p in packs.values())
        await pilot.press("O")
        assert [packs[n].stat().st_size for n in names()] == sorted(
            (p.stat().st_size for p in packs.values()), reverse=True
        )
        await pilot.press("o")
        assert screen.sort == "objects" and [counts[n] for n in names()] == sorted(counts.values())
        await pilot.press("o")
        assert screen.sort == "age"
        mtimes = [int(packs[n].stat().st_mtime) for n in names()]
        assert mtimes == sorted(mtimes, reverse=True)  # youngest first
        await pilot.press("o")
        assert screen.sort == "midx"
        covered = [n in midx for n in names()]
        assert covered == sorted(covered, reverse=True) and sum(covered) == 8
        assert "sorted by midx" in plain(screen.query_one("#packs-summary"))


def duplicate_object(repo, oid: str) -> Path:
    """Write a second pack holding ``oid`` (as a fetch of an object already
    present can); returns the new .pack."""
    name = repos.git_text("pack-objects", str(repo / "objects" / "pack" / "pack"), cwd=repo, input=oid + "\n")
    return repo / "objects" / "pack" / f"pack-{name.strip()}.pack"


@pytest.mark.asyncio
async def test_filter_by_id_lists_every_pack_holding_it_with_offsets(many_packs_repo, tmp_path):
    repo = repos.copy_repo(many_packs_repo, tmp_path / "dup.git")
    first = repos.pack_files(repo)[3]
    oid = sorted(repos.show_index(first.with_suffix(".idx")))[0]
    duplicate_object(repo, oid)
    truth = {}
    for p in repos.pack_files(repo):
        idx = repos.show_index(p.with_suffix(".idx"))
        if oid in idx:
            truth[p.stem] = idx[oid]
    assert len(truth) == 2
    async with running(repo) as (app, pilot):
        screen = await open_packs(app, pilot)
        lst = screen.query_one(VirtualList)
        await search(app, pilot, oid[:10])
        shown = pack_rows_shown(screen)
        assert {n for n, _ in shown} == set(truth)
        for name, line in shown:
            assert f"holds {oid[:12]} @{truth[name]:,}" in line, line
        assert lst.cursor == 0
        await pilot.press("n")
        assert lst.cursor == 1
        # Enter opens the pack at that entry.
        await pilot.press("enter")
        pack_screen = app.screen
        assert isinstance(pack_screen, PackScreen)
        plst = pack_screen.query_one(VirtualList)
        await until(pilot, lambda: list_text(plst)[plst.cursor].split()[1] == oid, "the pack view on the held id")
        await pilot.press("escape")
        # Esc clears the filter; a name filter keeps the packs named so.
        await pilot.press("escape")
        assert len(screen.view) == len(repos.pack_files(repo)) and screen.filter == ""
        part = shown[0][0][5:13]
        await search(app, pilot, f"name:{part}")
        assert [n for n, _ in pack_rows_shown(screen)] == [p.stem for p in repos.pack_files(repo) if part in p.stem]


@pytest.mark.asyncio
async def test_badges_from_cheap_checks_and_checksum_on_demand(many_packs_repo, tmp_path):
    repo = repos.copy_repo(many_packs_repo, tmp_path / "badges.git")
    packs = repos.pack_files(repo)
    cut, flipped, lone, marked = packs[2], packs[5], packs[7], packs[9]
    data = cut.read_bytes()
    os.chmod(cut, 0o644)
    cut.write_bytes(data[: len(data) // 2])
    repos.flip_byte(flipped, 40)  # inside the entries: only the full hash sees it
    lone.unlink()  # its .idx stays: an orphan
    (marked.with_suffix(".keep")).write_text("")
    (marked.with_suffix(".promisor")).write_text("")
    # git agrees these two are damaged
    assert repos.git("verify-pack", cut.with_suffix(".idx"), cwd=repo, check=False) is not None
    async with running(repo) as (app, pilot):
        screen = await open_packs(app, pilot)
        rows = dict(pack_rows_shown(screen))
        assert "truncated" in rows[cut.stem] and "✗" in rows[cut.stem]
        m = int(max(repos.show_index(cut.with_suffix(".idx")).values()))
        assert f"entry at @{m:,}" in rows[cut.stem]
        orphan = f"{lone.stem}.idx"
        assert orphan in rows and "no .pack" in rows[orphan]
        assert " KP" in rows[marked.stem]
        clean = [n for n, line in rows.items() if "✗" in line]
        assert sorted(clean) == sorted([cut.stem, orphan])  # the flipped byte needs the full hash
        assert "2 with problems" in plain(screen.query_one("#packs-summary"))
        # o: the damaged ones first
        await pilot.press("o")
        assert screen.sort == "problems"
        assert sorted(r.name for r in screen.view[:2]) == sorted([cut.stem, orphan])
        # t hashes the selected pack: the flipped one fails, a good one passes.
        lst = screen.query_one(VirtualList)
        for pack, expect in ((flipped, "checksum: pack checksum does not match"), (packs[0], "checksum ok")):
            lst.move_to(next(i for i, r in enumerate(screen.view) if r.name == pack.stem))
            await pilot.press("t")
            await until(
                pilot, lambda p=pack, e=expect: e in dict(pack_rows_shown(screen))[p.stem], f"{expect} on {pack.stem}"
            )
        assert git_verify_fails(repo, flipped) and not git_verify_fails(repo, packs[0])


def git_verify_fails(repo, pack) -> bool:
    return (
        repos.git_fsck(repo)[0] != 0
        if pack is None
        else bool(
            subprocess.run(
                ["git", "verify-pack", str(pack.with_suffix(".idx"))],
                cwd=repo,
                capture_output=True,
                env=repos.git_env(),
            ).returncode
        )
    )


@pytest.mark.asyncio
async def test_pack_entries_match_git(packed_repo):
    async with running(packed_repo) as (app, pilot):
        screen = await open_first_pack(app, pilot)
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
    async with running(packed_repo) as (app, pilot):
        lst = (await open_first_pack(app, pilot)).query_one(VirtualList)
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
        await search(app, pilot, target[:7])
        assert rows[lst.cursor].split()[1] == target
        prefix = target[:1]
        await search(app, pilot, prefix)
        matches = [i for i, r in enumerate(rows) if r.split()[1].startswith(prefix)]
        assert lst.cursor in matches
        at = lst.cursor
        await pilot.press("n")
        assert lst.cursor == next((m for m in matches if m > at), matches[0])
        await pilot.press("N")
        assert lst.cursor == at
        offset = int(rows[5].split()[0])
        await search(app, pilot, f"@{offset}")
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
    async with running(packed_repo) as (app, pilot):
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
    async with running(packed_repo) as (app, pilot):
        lst = (await open_first_pack(app, pilot)).query_one(VirtualList)
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
