"""Triage of a damaged repository in the UI: damage shown exactly (the entry
a truncation cuts, the step a read failed at, offsets that name no entry),
and a pack view left open across an outside `git repack -a -d`."""

from __future__ import annotations

import os
import subprocess

import pytest

from packscope.inspector.screens.object import ObjectScreen
from packscope.inspector.screens.pack_entries import PackScreen
from packscope.inspector.screens.pack_list import PacksScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests import repos
from tests.ui_support import SIZE, list_text, make_app, plain, started, until


def record_notifications(app) -> list[tuple[str, str]]:
    """(severity, message) of every notification the app shows from now on."""
    seen: list[tuple[str, str]] = []
    original = app.notify

    def notify(message, *a, severity="information", **kw):
        seen.append((severity, str(message)))
        return original(message, *a, severity=severity, **kw)

    app.notify = notify
    return seen


async def open_pack(app, pilot, name: str) -> PackScreen:
    await started(app, pilot)
    await pilot.press("2")
    packs = app.screen
    assert isinstance(packs, PacksScreen)
    await until(pilot, lambda: any(r.name == name for r in packs.view), f"{name} listed")
    packs.query_one(VirtualList).move_to(next(i for i, r in enumerate(packs.view) if r.name == name))
    await pilot.press("enter")
    screen = await until(pilot, lambda: isinstance(app.screen, PackScreen) and app.screen, "the pack view")
    await until(pilot, lambda: screen.entries is not None and screen.entries.in_offset_order, "pack order")
    return screen


async def search(app, pilot, query: str) -> None:
    from textual.widgets import Input

    await pilot.press("slash")
    await until(pilot, lambda: app.screen.query(Input), "the search prompt")
    app.screen.query_one(Input).value = query
    await pilot.press("enter")
    await pilot.pause()


@pytest.fixture
def truncated(packed_repo, tmp_path):
    """A copy of the packed repository whose pack is cut inside a delta entry
    (by git verify-pack of the intact pack: offsets, sizes in pack, bases)."""
    repo = repos.copy_repo(packed_repo, tmp_path / "truncated.git")
    pack, _idx = repos.the_pack(repo)
    rows = sorted(repos.verify_pack_rows(pack), key=lambda r: r["offset"])
    middle = rows[len(rows) // 2 :]
    victim = next(r for r in middle if r["depth"] >= 1 and r["packed"] >= 60)
    cut = victim["offset"] + victim["packed"] - 5
    data = pack.read_bytes()
    os.chmod(pack, 0o644)
    pack.write_bytes(data[:cut])
    return repo, pack, rows, victim


@pytest.mark.asyncio
async def test_the_entry_a_truncation_cuts_is_flagged_and_the_ones_past_it(truncated):
    repo, pack, rows, victim = truncated
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_pack(app, pilot, pack.stem)
        shown = {line.split()[1]: line for line in list_text(screen.query_one(VirtualList))}
        assert set(shown) == {r["oid"] for r in rows}
        for r in rows:
            line = shown[r["oid"]]
            if r["offset"] < victim["offset"]:
                assert "truncated" not in line and "past the end" not in line, line
            elif r is victim:
                assert "runs past the end of the data" in line and "truncated" in line, line
                assert r["type"] in line  # its header is still readable: the row says what it was
            else:
                assert "starts past the end of the data" in line, line


@pytest.mark.asyncio
async def test_object_screen_of_a_cut_entry_names_the_failed_step_never_applied(truncated):
    repo, pack, _rows, victim = truncated
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_pack(app, pilot, pack.stem)
        lst = screen.query_one(VirtualList)
        lst.move_to(next(i for i, line in enumerate(list_text(lst)) if line.split()[1] == victim["oid"]))
        await pilot.press("enter")
        obj = await until(pilot, lambda: isinstance(app.screen, ObjectScreen) and app.screen, "the object screen")
        await until(pilot, lambda: obj.view is not None, "the object read (or its failure)")
        where = plain(obj.query_one("#object-where"), width=200)
        assert "inflating the entry's zlib data" in where and "failed" in where, where
        assert "runs past the end of the pack's data" in where, where
        assert "applied" not in where, where
        chain = where[where.index("delta chain") :]
        assert f"@{victim['offset']}" in chain and "✗ failed here" in chain, chain
        assert victim["depth"] == chain.count("read before the failure")  # every link below it was read
        # git agrees the object cannot be read
        git = subprocess.run(
            ["git", "cat-file", "-p", victim["oid"]], cwd=repo, capture_output=True, env=repos.git_env()
        )
        assert git.returncode != 0


@pytest.mark.asyncio
async def test_an_offset_outside_the_pack_or_inside_an_entry_is_an_error_not_a_jump(packed_repo):
    pack, _ = repos.the_pack(packed_repo)
    rows = sorted(repos.verify_pack_rows(pack), key=lambda r: r["offset"])
    app = make_app(packed_repo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_pack(app, pilot, pack.stem)
        seen = record_notifications(app)
        lst = screen.query_one(VirtualList)
        lst.move_to(3)
        size = pack.stat().st_size
        await search(app, pilot, f"@{size + 999_999}")
        assert lst.cursor == 3
        assert seen and seen[-1][0] == "error" and "outside this pack's entries" in seen[-1][1], seen
        inside = rows[10]["offset"] + 1
        await search(app, pilot, f"@{inside}")
        assert lst.cursor == 3
        assert f"inside the entry at @{rows[10]['offset']:,}" in seen[-1][1], seen
        await search(app, pilot, f"@{rows[10]['offset']}")
        assert lst.cursor == 10 and list_text(lst)[10].split()[1] == rows[10]["oid"]
