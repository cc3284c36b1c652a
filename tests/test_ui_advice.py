"""The Advice screen (key 9): maintenance rows, git-sizer's metrics and the
largest blobs as git counts them; Enter on a blob opens it; leaving the
screen stops the walk."""

from __future__ import annotations

import time

import pytest

from packscope.inspector.screens.advice import AdviceScreen
from packscope.inspector.screens.object import ObjectScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests.repos import git_text
from tests.ui_support import list_text, open_screen, plain, running, until


def git_blobs(repo) -> dict[str, int]:
    ids = [ln.split(" ", 1)[0] for ln in git_text("rev-list", "--objects", "--all", cwd=repo).splitlines()]
    out = git_text(
        "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)", cwd=repo, input="\n".join(ids) + "\n"
    )
    return {oid: int(size) for oid, kind, size in (ln.split() for ln in out.splitlines()) if kind == "blob"}


async def open_advice(app, pilot) -> AdviceScreen:
    return await open_screen(
        app, pilot, "9", AdviceScreen, "the advice walk to finish", lambda s: s.doc is not None, timeout=60
    )


@pytest.mark.asyncio
async def test_advice_shows_maintenance_sizes_and_largest_as_git_counts(ui_repo):
    async with running(ui_repo, poll_seconds=60) as (app, pilot):
        screen = await open_advice(app, pilot)
        blobs = git_blobs(ui_repo)
        assert screen.doc["sizes"]["uniqueBlobCount"]["value"] == len(blobs)
        maintenance = plain(screen.query_one("#advice-maintenance"))
        for task in ("gc-auto", "loose-objects", "incremental-repack", "commit-graph", "pack-refs", "geometric-repack"):
            assert task in maintenance
        # 2 packs outside the multi-pack-index, against the default 10, as a sentence
        assert "2 packs outside the multi-pack-index; fires at 10 or more (git's default) — quiet" in maintenance
        assert "True" not in maintenance and " 1 packs" not in maintenance
        sizes = plain(screen.query_one("#advice-sizes"))
        assert "uniqueBlobCount" in sizes and "maxCheckoutSubmoduleCount" in sizes
        rows = list_text(screen.query_one("#advice-largest", VirtualList))
        top = sorted(blobs.values(), reverse=True)[: len(rows) - 1]
        assert [b["size"] for b in screen.largest] == top
        assert screen.largest[0]["oid"][:12] in rows[1]
        assert "done" in plain(screen.query_one("#advice-status"))
        paths = plain(screen.query_one("#advice-paths"))
        top_path = screen.doc["largest"]["paths"][0]
        assert f"{top_path['blobs']} blobs {top_path['path']}" in paths
        whatif = "\n".join(list_text(screen.query_one("#advice-whatif", VirtualList)))
        for layout in ("multi-pack-index", "one-pack", "geometric", "commit-graph"):
            assert layout in whatif
        # 10 packs, 8 under a midx: a midx over all of them searches one index
        midx = next(w for w in screen.doc["whatif"] if w["layout"] == "multi-pack-index")
        assert midx["proposed"]["packs_searched"] == 1.0 < midx["current"]["packs_searched"]


@pytest.fixture(scope="module")
def deltas_repo(tmp_path_factory):
    """Files edited a line at a time, repacked: the largest blobs are deltas."""
    from tests.repos import fast_import_stream, git, init_bare

    repo = init_bare(tmp_path_factory.mktemp("advice-deltas") / "deltas.git")
    git("fast-import", "--quiet", cwd=repo, input=fast_import_stream(40, seed=9, files=4))
    git("repack", "-a", "-d", "-f", "-q", "--depth=8", cwd=repo)
    return repo


@pytest.mark.asyncio
async def test_enter_on_a_largest_blob_opens_its_pack_entry_and_delta_chain(deltas_repo):
    from tests.repos import verify_pack_rows

    packed = {}
    for pack in sorted((deltas_repo / "objects" / "pack").glob("*.pack")):
        for r in verify_pack_rows(pack):
            packed.setdefault(r["oid"], (pack.stem, r))
    async with running(deltas_repo, poll_seconds=60) as (app, pilot):
        screen = await open_advice(app, pilot)
        # a blob stored as a delta, if the largest have one (its chain is the point)
        row = next((i for i, b in enumerate(screen.largest) if b["delta_depth"] > 0 and b["oid"] in packed), None)
        assert row is not None, "the fixture's largest blobs include a delta"
        blob = screen.largest[row]
        pack, git_row = packed[blob["oid"]]
        assert blob["delta_depth"] == git_row["depth"]
        lst = screen.query_one("#advice-largest", VirtualList)
        lst.focus()
        lst.move_to(row + 1)
        await pilot.press("enter")
        want = bytes.fromhex(blob["oid"])
        shown = await until(
            pilot,
            lambda: (
                isinstance(app.screen, ObjectScreen)
                and app.screen.oid == want
                and app.screen.view is not None
                and app.screen
            ),
            "the blob's pack entry and delta chain in the Object view",
        )
        where = plain(shown.query_one("#object-where"))
        assert f"{pack} @ {git_row['offset']}" in where
        # the chain: the blob, then each base down to the whole object, as git counts the depth
        assert len(shown.view.chain) == git_row["depth"] + 1
        assert shown.view.chain[0].offset == git_row["offset"]
        assert "delta chain" in where and "stored whole" not in where


@pytest.mark.asyncio
async def test_leaving_the_screen_stops_the_walk(ui_repo, monkeypatch):
    from packscope.core.advise import sizes

    slow = sizes.SizeWalk._commit

    def commit(self, oid):
        time.sleep(0.05)  # a long walk, so that it is still running when the screen is left
        return slow(self, oid)

    monkeypatch.setattr(sizes.SizeWalk, "_commit", commit)
    async with running(ui_repo, poll_seconds=60) as (app, pilot):
        screen = await open_screen(
            app, pilot, "9", AdviceScreen, "the walk under way", lambda s: s.running and s.maintenance_rows is not None
        )
        await pilot.press("1")
        await until(pilot, lambda: not screen.running, "the walk to stop once the screen is left")
        assert screen.doc is None and screen.phase.startswith("stopped")


@pytest.mark.asyncio
async def test_w_replays_the_whatif_workload_in_the_lab(ui_repo):
    from packscope.core.advise.whatif import _Model
    from packscope.core.repo.session import open_session
    from packscope.inspector.screens.lab import LabScreen

    with open_session(str(ui_repo)) as s:
        want = _Model(s).sample()
    async with running(ui_repo, poll_seconds=60) as (app, pilot):
        screen = await open_advice(app, pilot)
        assert screen.workload == want
        await pilot.press("w")
        lab = await until(
            pilot,
            lambda: isinstance(app.screen, LabScreen) and app.screen.batch_ids is not None and app.screen,
            "the workload's batch to finish in the Lab",
            timeout=60,
        )
        assert lab.batch_ids == want
        assert lab.last_batch.lookups == len(want)


@pytest.mark.asyncio
@pytest.mark.parametrize("layout_kind", ["geometric", "walk"])
async def test_enter_on_a_whatif_row_replays_its_workload_in_the_lab(ui_repo, layout_kind):
    from packscope.inspector.screens.lab import LabScreen

    async with running(ui_repo, poll_seconds=60) as (app, pilot):
        screen = await open_advice(app, pilot)
        if layout_kind == "walk":
            row = next(i for i, w in enumerate(screen.whatifs) if w["workload"].startswith("walk: log -- "))
        else:
            row = next(i for i, w in enumerate(screen.whatifs) if w["layout"] == layout_kind)
        want = screen.workloads[row]
        assert want and want != screen.workloads[0] if layout_kind == "walk" else want
        lst = screen.query_one("#advice-whatif", VirtualList)
        lst.focus()
        lst.move_to(screen.whatif_lines.index(row) + 1)  # the row's second line (its workload)
        await pilot.press("enter")
        lab = await until(
            pilot,
            lambda: isinstance(app.screen, LabScreen) and app.screen.batch_ids is not None and app.screen,
            "the row's workload as a batch in the Lab",
            timeout=60,
        )
        assert lab.batch_ids == want
        assert lab.last_batch.lookups == len(want)
