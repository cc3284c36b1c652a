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
from tests.ui_support import list_text, open_screen, plain, running, search, until


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
    packs = await open_screen(
        app, pilot, "2", PacksScreen, f"{name} listed", lambda s: any(r.name == name for r in s.view)
    )
    packs.query_one(VirtualList).move_to(next(i for i, r in enumerate(packs.view) if r.name == name))
    await pilot.press("enter")
    screen = await until(pilot, lambda: isinstance(app.screen, PackScreen) and app.screen, "the pack view")
    await until(pilot, lambda: screen.entries is not None and screen.entries.in_offset_order, "pack order")
    return screen


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
    async with running(repo) as (app, pilot):
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
        # x: to the entry the end of the data cuts
        lst = screen.query_one(VirtualList)
        await pilot.press("g", "x")
        assert list_text(lst)[lst.cursor].split()[1] == victim["oid"]


@pytest.mark.asyncio
async def test_object_screen_of_a_cut_entry_names_the_failed_step_never_applied(truncated):
    repo, pack, _rows, victim = truncated
    async with running(repo) as (app, pilot):
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
        assert "failed step" in where and "remedy" in where and "\\n" not in where  # rows, not escaped newlines
        chain = where[where.index("delta chain") :]
        assert f"@{victim['offset']}" in chain and "✗ failed here" in chain, chain
        assert victim["depth"] == chain.count("read before the failure")  # every link below it was read
        # git agrees the object cannot be read
        git = subprocess.run(
            ["git", "cat-file", "-p", victim["oid"]], cwd=repo, capture_output=True, env=repos.git_env()
        )
        assert git.returncode != 0


@pytest.fixture
def trailer_written_over(packed_repo, tmp_path):
    """A copy whose pack lost its trailer to other bytes (cut by 20, 20 others
    appended): every entry intact, but git refuses the whole pack."""
    repo = repos.copy_repo(packed_repo, tmp_path / "written-over.git")
    pack, _idx = repos.the_pack(repo)
    rows = sorted(repos.verify_pack_rows(pack), key=lambda r: r["offset"])
    data = pack.read_bytes()
    os.chmod(pack, 0o644)
    pack.write_bytes(data[:-20] + bytes(b ^ 0x5A for b in data[-20:]))
    return repo, pack, rows, packed_repo


@pytest.mark.asyncio
async def test_a_pack_git_refuses_still_shows_its_entries_and_delta_chains(trailer_written_over):
    """The command line answers as git (the pack's objects are missing); the
    Packs entry list and the Object screen read past the refusal."""
    repo, pack, rows, intact = trailer_written_over
    deepest = max(rows, key=lambda r: r["depth"])
    assert deepest["depth"] >= 2
    git = subprocess.run(["git", "cat-file", "-e", deepest["oid"]], cwd=repo, env=repos.git_env())
    assert git.returncode == 1  # refused by git: the object does not exist for it
    async with running(repo) as (app, pilot):
        screen = await open_pack(app, pilot, pack.stem)
        lst = screen.query_one(VirtualList)
        shown = {line.split()[1]: line for line in list_text(lst)}
        assert set(shown) == {r["oid"] for r in rows}
        for r in rows:
            assert r["type"] in shown[r["oid"]] and "?" not in shown[r["oid"]].split()[2:4], shown[r["oid"]]
        lst.move_to(next(i for i, line in enumerate(list_text(lst)) if line.split()[1] == deepest["oid"]))
        await pilot.press("enter")
        obj = await until(pilot, lambda: isinstance(app.screen, ObjectScreen) and app.screen, "the object screen")
        await until(pilot, lambda: obj.view is not None, "the object read (or its failure)")
        assert obj.view.error is None, obj.view.error
        size = int(repos.git_text("cat-file", "-s", deepest["oid"], cwd=intact))  # as read before the damage
        assert (obj.view.type_name, obj.view.size) == (deepest["type"], size)
        chain = plain(obj.query_one("#object-where"), width=200)
        chain = chain[chain.index("delta chain") :]
        assert f"@{deepest['offset']}" in chain and "failed" not in chain, chain


@pytest.mark.asyncio
async def test_an_offset_outside_the_pack_or_inside_an_entry_is_an_error_not_a_jump(packed_repo):
    pack, _ = repos.the_pack(packed_repo)
    rows = sorted(repos.verify_pack_rows(pack), key=lambda r: r["offset"])
    async with running(packed_repo) as (app, pilot):
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


@pytest.mark.asyncio
async def test_a_pack_view_open_across_an_outside_repack_says_so_and_follows_the_object(packed_repo, tmp_path):
    repo = repos.copy_repo(packed_repo, tmp_path / "repacked.git")
    old_pack, _ = repos.the_pack(repo)
    repos.add_pack_beside(repo)  # two packs: the repack below merges them and deletes both
    async with running(repo, poll_seconds=0.2) as (app, pilot):
        screen = await open_pack(app, pilot, old_pack.stem)
        await until(pilot, lambda: app.watcher is not None, "the watcher started")
        lst = screen.query_one(VirtualList)
        lst.move_to(7)
        oid = list_text(lst)[7].split()[1]
        repos.git("repack", "-a", "-d", "-q", cwd=repo)
        (new_pack,) = repos.pack_files(repo)
        new_offset = repos.show_index(new_pack.with_suffix(".idx"))[oid]
        title = await until(
            pilot,
            lambda: "removed by a repack at" in (t := plain(screen.query_one("#pack-title"), width=200)) and t,
            "the pack view to say its pack was removed",
        )
        assert old_pack.stem in title
        # ids and offsets stay listed (the view's own mapping of the deleted index)
        assert list_text(lst)[7].split()[1] == oid and "removed by a repack" in list_text(lst)[7]
        await pilot.press("enter")
        obj = await until(pilot, lambda: isinstance(app.screen, ObjectScreen) and app.screen, "the object screen")
        await until(pilot, lambda: obj.view is not None, "the object read")
        where = plain(obj.query_one("#object-where"), width=240)
        assert "pack removed by a repack at" in where
        assert f"now lives in {new_pack.stem} @ {new_offset}" in where, where
        assert "unpack-objects" not in where and "No such file" not in where and obj.view.error is None
        size = int(repos.git_text("cat-file", "-s", oid, cwd=repo))
        assert obj.view.size == size
        # f in the Object screen: the entry in the pack that holds it now
        await pilot.press("f")
        await until(pilot, lambda: obj.view is not None and obj.entry_pack is not None, "the object re-read there")
        assert obj.entry_pack.name == new_pack.stem and obj.entry_offset == new_offset
        await pilot.press("escape")
        assert app.screen is screen
        # f in the pack view: the new pack, at the object's entry
        await pilot.press("f")
        moved = await until(
            pilot, lambda: isinstance(app.screen, PackScreen) and app.screen is not screen and app.screen, "new pack"
        )
        mlst = moved.query_one(VirtualList)
        await until(
            pilot,
            lambda: moved.entries is not None and list_text(mlst)[mlst.cursor].split()[1] == oid,
            "the new pack's view on the object",
        )
        assert moved.handle.name == new_pack.stem


def test_a_vanished_pack_error_says_repack_not_damage(packed_repo, tmp_path):
    """core: opening a pack the scan listed but a repack deleted since is
    explained as such, with a remedy that is not a repair."""
    from packscope.core.errors import PackscopeError
    from packscope.core.repo.session import open_session

    repo = repos.copy_repo(packed_repo, tmp_path / "vanish.git")
    pack, idx = repos.the_pack(repo)
    session = open_session(str(repo))
    try:
        (handle,) = session.store.packs
        pack.unlink()
        idx.unlink()
        with pytest.raises(PackscopeError) as caught:
            handle.index.open()
        session.store.note_problem(caught.value)
        (problem,) = session.store.problems
        assert "concurrent repack" in problem.message and "Nothing is damaged" in problem.remedy
        assert "unpack-objects" not in problem.remedy
    finally:
        session.close()


@pytest.mark.asyncio
async def test_dir_reads_counts_loose_subdirectory_reads(loose_repo):
    """The Overview's "dir reads": listings of objects/pack plus each loose
    objects/xx the store reads — one per subdirectory holding the ids asked."""
    loose = sorted(repos.loose_files(loose_repo))
    subdirs = sorted({oid[:2] for oid in loose})[:5]
    asked = [next(o for o in loose if o.startswith(s)) for s in subdirs]
    async with running(loose_repo) as (app, pilot):

        def shown() -> int:
            text = plain(app.screen.query_one("#ov-counters"), width=200)
            return int(text.split("dir reads ")[1].split()[0].replace(",", ""))

        before = app.core.counters()["dir_reads"]
        await until(pilot, lambda: shown() == before, "the counters panel drawn")
        with app.core.lock:
            for oid in asked + asked:  # the second round is answered from the cache
                assert app.core.store.locate(bytes.fromhex(oid), quick=True) is not None
        assert app.core.counters()["dir_reads"] == before + len(subdirs)
        await until(pilot, lambda: shown() == before + len(subdirs), "the Overview to show the loose reads")
