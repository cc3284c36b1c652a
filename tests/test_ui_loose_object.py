"""Loose grid, Object screen, the command palette, and outside changes."""

from __future__ import annotations

import os

import pytest

from packscope.inspector.screens.loose import LooseDirScreen, LooseScreen
from packscope.inspector.screens.object import ObjectScreen
from packscope.inspector.widgets.subdir_grid import SubdirGrid
from packscope.inspector.widgets.virtual_list import VirtualList
from tests import repos
from tests.ui_support import list_text, plain, running, settle, until


def _disk_counts(repo) -> list[int]:
    objects = repo / "objects"
    return [len(os.listdir(objects / f"{n:02x}")) if (objects / f"{n:02x}").is_dir() else 0 for n in range(256)]


@pytest.mark.asyncio
async def test_loose_grid_counts_fills_and_lists(ui_repo):
    async with running(ui_repo) as (app, pilot):
        await pilot.press("3")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, LooseScreen)
        disk = _disk_counts(ui_repo)
        assert screen.state.on_disk == disk
        assert not any(screen.state.seen)
        grid_text = screen.query_one(SubdirGrid).render().plain
        assert grid_text.splitlines()[0].split()[:3] == ["_0", "_1", "_2"]
        # f fills every subdirectory through core; the grid follows the events.
        await pilot.press("f")
        await settle(app, pilot)
        await until(pilot, lambda: all(screen.state.seen), "f to fill every subdirectory")
        assert screen.state.cached == disk
        assert app.core.store.loose_cache().subdirs_seen == 256
        assert f"256/256 subdirectories read, {sum(disk):,} names" in plain(screen.query_one("#loose-summary"))
        fills = [e for e in app.logbook.entries if e.kind == "loose" and "fill" in e.text.plain]
        assert len(fills) >= 40  # folded lines aside, the log shows the fills
        # x flushes; Enter on a subdirectory lists it (and fills that one entry).
        await pilot.press("x")
        await until(pilot, lambda: not any(screen.state.seen), "x to flush every subdirectory")
        n = next(i for i, c in enumerate(disk) if c)
        grid = screen.query_one(SubdirGrid)
        grid.cursor = 0
        for _ in range(n % 16):
            await pilot.press("l")
        for _ in range(n // 16):
            await pilot.press("j")
        assert grid.cursor == n
        await pilot.press("enter")
        await settle(app, pilot)
        sub = app.screen
        assert isinstance(sub, LooseDirScreen)
        ids = sorted(f"{n:02x}" + name for name in os.listdir(ui_repo / "objects" / f"{n:02x}"))
        rows = list_text(sub.query_one(VirtualList))
        assert [r.split()[0] for r in rows] == ids
        assert all(r.split()[1] == "blob" for r in rows)
        assert app.core.store.loose_cache().seen(n)
        await pilot.press("enter")
        await settle(app, pilot)
        obj = app.screen
        assert isinstance(obj, ObjectScreen)
        assert "loose:" in plain(obj.query_one("#object-where"), width=200)
        assert list_text(obj.query_one(VirtualList))[0].startswith("loose blob ")
        await pilot.press("escape")
        assert isinstance(app.screen, LooseDirScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, LooseScreen)
        assert screen.state.seen[n]


@pytest.mark.asyncio
async def test_object_screen_shows_repository_text_literally(ui_repo):
    odd = repos.git_text("rev-parse", "refs/heads/odd~1", cwd=ui_repo).strip()
    async with running(ui_repo) as (app, pilot):
        await pilot.press("colon")
        await pilot.press(*odd[:10], "enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ObjectScreen)
        rows = list_text(screen.query_one(VirtualList))
        assert rows[0].startswith("tree ")
        text = "\n".join(rows)
        assert "[bold red]boom[/]" in text  # markup shown, not applied
        assert "\\e[31mred\\e[0m" in text  # the escape sequence spelled out
        assert "\\u202eevil\\u202c" in text  # the bidi override made visible
        assert "\x1b" not in text and "\u202e" not in text
        # Enter on the tree line opens the tree; its entry name is literal too.
        screen.query_one(VirtualList).move_to(0)
        await pilot.press("enter")
        await settle(app, pilot)
        tree = app.screen
        assert isinstance(tree, ObjectScreen) and tree is not screen
        entries = list_text(tree.query_one(VirtualList))
        assert any(e.endswith(repos.UI_HOSTILE_NAME) for e in entries)
        await pilot.press("y")
        assert app.clipboard == entries[0].split()[2]
        # Tab 4 shows the last object opened.
        await pilot.press("4")
        await settle(app, pilot)
        assert app.screen.oid == tree.oid


@pytest.mark.asyncio
async def test_command_palette_changes_store_settings(ui_repo):
    async with running(ui_repo) as (app, pilot):
        store = app.core.store
        assert store.settings.policy == "gated"

        async def run(command: str, offer: str) -> None:
            """Type ``command`` into the palette, wait until its first
            (highlighted) hit is ``offer``, and choose it."""
            from textual.command import CommandList, CommandPalette
            from textual.widgets import Input

            await pilot.press("ctrl+p")
            await pilot.pause()
            assert isinstance(app.screen, CommandPalette)
            app.screen.query_one(Input).value = command  # typing it key by key is slow

            def highlighted() -> str:
                hits = app.screen.query_one(CommandList)
                if hits.highlighted is None:
                    return ""
                prompt = hits.get_option_at_index(hits.highlighted).prompt
                return getattr(prompt, "plain", str(prompt)).split("\n")[0]  # the title; help follows

            await until(pilot, lambda: highlighted() == offer, f"the palette to offer {offer!r} first")
            await pilot.press("enter")
            await settle(app, pilot)

        await run("Miss policy: git", "Miss policy: git")
        assert store.settings.policy == "git"
        # The other fixed commands, by title (the palette lists the same callbacks).
        from packscope.inspector.palette import palette_commands

        commands = {title: cb for title, _help, cb in palette_commands(app)}
        commands["Search algorithm: hedged"]()
        assert store.settings.algorithm == "hedged"
        commands["Loose cache strategy: global-resort"]()
        assert store.settings.loose_strategy == "global-resort"
        rescans = store.counters.rescans
        commands["Rescan now"]()
        assert store.counters.rescans == rescans + 1
        app.drain_events()
        assert any("(request)" in e.text.plain for e in app.logbook.entries if e.kind == "scan")
        head = repos.git_text("rev-parse", "main", cwd=ui_repo).strip()
        await run(head, f"Go to object {head}")
        assert isinstance(app.screen, ObjectScreen) and app.screen.oid.hex() == head


# How long to wait for the app to notice outside changes.  It polls every
# 0.2 s here, but on a loaded machine a poll, its rescan and the drain of its
# events can take many times that, and the new pack and the new loose object
# may be noticed by different polls: each outcome is waited for, not assumed
# after a fixed time.  A generous deadline only costs time when noticing is broken.
NOTICE_DEADLINE = 60.0


@pytest.mark.asyncio
async def test_outside_changes_are_noticed(ui_repo_copy):
    async with running(ui_repo_copy, poll_seconds=0.2) as (app, pilot):
        # the watcher's first look must come before the changes, or they are not changes
        await until(
            pilot, lambda: app.core.ready and app.watcher is not None, "the watcher to start", timeout=NOTICE_DEADLINE
        )
        await pilot.press("2")
        await settle(app, pilot)
        before = len(app.core.store.packs)
        # Another process: a fetch-like new pack, and a new loose object.
        repos.add_pack_beside(ui_repo_copy)
        new_loose = repos.add_loose(ui_repo_copy, 1, seed=99)[0]
        on_disk = len(repos.pack_files(ui_repo_copy))
        assert on_disk > before

        def logged(test) -> bool:
            app.drain_events()  # the trace events of the rescans, into the log book
            return any(test(e) for e in app.logbook.entries)

        async def eventually(predicate, what: str) -> None:
            await until(pilot, predicate, what, timeout=NOTICE_DEADLINE)

        await eventually(
            lambda: app.outside_changes > 0 and len(app.core.store.packs) == on_disk, "the new pack to be noticed"
        )
        await eventually(
            lambda: logged(lambda e: e.kind == "outside" and "objects/pack" in e.text.plain),
            "an 'outside' log line for objects/pack",
        )
        await eventually(
            lambda: logged(lambda e: "rescan (outside-change)" in e.text.plain), "a logged outside-change rescan"
        )
        # The new loose object is found, and its subdirectory was reported
        # (by the same poll as the pack, or a later one).
        await eventually(
            lambda: logged(lambda e: e.kind == "outside" and f"loose {new_loose[:2]}/" in e.text.plain),
            f"an 'outside' log line for loose {new_loose[:2]}/",
        )
        assert app.core.store.locate(bytes.fromhex(new_loose)) is not None
        # The packs screen follows.
        await eventually(
            lambda: app.screen.query_one("#packs-list").row_count == on_disk, "the Packs list to list the new pack"
        )
