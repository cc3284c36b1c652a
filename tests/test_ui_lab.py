"""The Lookup lab (key 6): drawn probes are core's trace, stepping and
playing, batches and the store settings' effect on rescans."""

from __future__ import annotations

import pytest

from packscope.core.store.search import ALGORITHMS
from packscope.inspector import lab_model as lab
from packscope.inspector.screens.lab import LabScreen
from packscope.inspector.widgets.lab_views import METRICS, SearchView
from tests import repos
from tests.ui_support import SIZE, make_app, plain, settle, started, until


async def _lab(app, pilot) -> LabScreen:
    await started(app, pilot)
    await pilot.press("6")
    await settle(app, pilot)
    assert isinstance(app.screen, LabScreen)
    return app.screen


def _outside_midx_id(repo, app) -> str:
    covered = set(app.core.store.midxs[0].pack_names)
    outside = [
        sorted(repos.show_index(p.with_suffix(".idx")))
        for p in repos.pack_files(repo)
        if p.with_suffix(".idx").name not in covered
    ]
    ids = max(outside, key=len)
    return ids[len(ids) // 2]


@pytest.mark.asyncio
async def test_drawn_probes_are_cores_trace(ui_repo):
    from tests.repos import age_directories

    age_directories(ui_repo)  # a fresh pack directory would make the miss rescan (provisional scan)
    app = make_app(ui_repo, poll_seconds=60)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _lab(app, pilot)
        present = _outside_midx_id(ui_repo, app)
        absent = "ff" * 2 + "0" * 36
        # (typed text, found?, words the stage list must show)
        cases = [
            (present, True, ["found in pack"]),
            (present[:10], True, ["found in pack"]),
            (absent, False, ["missing", "loose", "no rescan"]),
        ]
        for text, found, words in cases:
            screen.lookup(text)
            await settle(app, pilot)
            run = screen.run
            assert run is not None and run.oid is not None
            searches = [s for s in run.stages if s.is_search]
            assert searches and searches[0].kind == "midx"  # the midx is asked first
            # then the packs outside it: the last search is a pack's, found or not
            assert run.found is found and searches[-1].kind == "pack"
            view = screen.query_one(SearchView)
            for i, s in enumerate(run.stages):
                if not s.is_search:
                    continue
                # The store's own trace is the drawn path of its algorithm ...
                assert s.paths[s.event.path.algorithm] == s.event.path
                for a in ALGORITHMS:
                    # ... and every algorithm's drawn path is core's trace of that search.
                    assert s.paths[a] == s.index.find_traced(run.oid, a)
                # Jump to this search's last step: the widget's model and its text.
                # (Equal stages can repeat — a provisional scan rescans — so go by position.)
                screen.set_frame(run.frames().index((i, s.steps)))
                await pilot.pause()
                assert view.stage is s and view.step == s.steps
                drawn = view.render().plain
                for a in ALGORITHMS:
                    assert view.paths[a] is s.paths[a]
                    for k, p in enumerate(s.paths[a].probes):
                        assert f"#{k + 1} {lab.probe_label(p)}" in drawn
                    verdict = (
                        f"found at {s.paths[a].found}"
                        if s.paths[a].found is not None
                        else f"would be at {s.paths[a].insert_at}"
                    )
                    assert verdict in drawn
            stages = plain(screen.query_one("#lab-stages"))
            for word in words:
                assert word in stages, (text, stages)


@pytest.fixture(scope="module")
def full_buckets_repo(tmp_path_factory):
    """One pack of about 4,000 objects: buckets of ~16 ids, so a search
    takes several probes (the UI repository's buckets hold one or two)."""
    repo = repos.init_bare(tmp_path_factory.mktemp("lab") / "full-buckets.git")
    repos.import_history(repo, 1000)
    repos.git("repack", "-a", "-d", "-q", cwd=repo)
    repos.age_directories(repo)
    return repo


@pytest.mark.asyncio
async def test_stepping_and_playing(full_buckets_repo):
    app = make_app(full_buckets_repo, poll_seconds=60)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _lab(app, pilot)
        ids = sorted(repos.show_index(repos.pack_files(full_buckets_repo)[0].with_suffix(".idx")))
        screen.lookup(ids[len(ids) // 2])
        await settle(app, pilot)
        n = len(screen.frames)
        assert n >= 4 and screen.frame == n - 1  # a finished lookup first
        await pilot.press("home")
        assert screen.frame == 0
        await pilot.press("space")
        await pilot.press("right")
        assert screen.frame == 2
        assert f"frame 3/{n}" in plain(screen.query_one("#lab-frame"))
        await pilot.press("left")
        assert screen.frame == 1
        # Mid-search: frame 1 is the first probe of a search that takes
        # several; the probes drawn are that step's, not the whole search.
        assert screen.frames[1] == (0, 1)
        stage = screen.run.stages[0]
        assert stage.is_search and stage.steps > 2
        view = screen.query_one(SearchView)
        assert view.stage is stage and view.step == 1
        assert [len(view.shown_probes(a)) for a in ALGORITHMS] == [1] * len(ALGORITHMS)
        assert max(len(view.paths[a].probes) for a in ALGORITHMS) == stage.steps
        for _ in range(5):
            await pilot.press("minus")
        assert screen.speed == 0
        await pilot.press("p")  # play from frame 1 at 1 frame/s ...
        assert screen.playing and "▶ playing" in plain(screen.query_one("#lab-frame"))
        for _ in range(5):
            await pilot.press("plus")  # ... faster: 30 frames/s
        assert screen.speed == 5
        await until(
            pilot, lambda: screen.frame == n - 1 and not screen.playing, "play to reach the last frame and stop"
        )
        assert "⏸ paused" in plain(screen.query_one("#lab-frame"))


@pytest.mark.asyncio
async def test_batch_shows_distributions_per_algorithm(ui_repo):
    app = make_app(ui_repo, poll_seconds=60)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _lab(app, pilot)
        worker = screen.start_batch(k=300, mode="mixed", seed=5)
        await worker.wait()
        await settle(app, pilot)
        res = screen.last_batch
        assert res.lookups == 300 and res.found == 150 and res.missing == 150
        for a in ALGORITHMS:
            assert len(res.probes[a]) == len(res.pages[a]) == len(res.micros[a]) == 300
            assert sum(res.probes[a]) > 0
        # Binary probes are git's: the same count the store traced with it.
        chart = plain(screen.query_one("#lab-batch-chart"))
        for a in ALGORITHMS:
            assert a in chart
        assert chart.count("mean") == len(METRICS) * len(ALGORITHMS)
        assert "300 lookups" in plain(screen.query_one("#lab-batch-summary"))
        assert screen.query_one("#lab-views").current == "lab-batch"


@pytest.mark.asyncio
async def test_batch_result_leaves_textuals_batch_to_textual(ui_repo):
    """The Lab keeps its last batch as last_batch: an attribute named batch
    would hide Widget.batch(), which Textual calls to batch a screen's
    updates (App.recompose)."""
    app = make_app(ui_repo, poll_seconds=60)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _lab(app, pilot)
        await (screen.start_batch(k=50, mode="mixed", seed=3)).wait()
        await settle(app, pilot)
        assert screen.last_batch is not None and screen.last_batch.lookups == 50
        async with screen.batch():  # a TypeError when a batch result hides it
            screen.query_one("#lab-batch-summary").refresh()


@pytest.mark.asyncio
async def test_policy_switch_changes_rescans(ui_repo):
    from tests.repos import age_directories

    age_directories(ui_repo)  # no provisional scan: gated must owe nothing to timing
    app = make_app(ui_repo, poll_seconds=60)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _lab(app, pilot)
        assert app.core.store.settings.policy == "gated"
        await (screen.start_batch(k=200, mode="absent", seed=7)).wait()
        await settle(app, pilot)
        gated = screen.last_batch
        assert gated.rescans == 0 and gated.rescans_skipped == 200
        summary = plain(screen.query_one("#lab-batch-summary"))
        assert "rescans 0 (skipped 200)" in summary
        await pilot.press("P")  # miss policy: git rescans on every miss
        assert app.core.store.settings.policy == "git"
        assert "policy git" in plain(screen.query_one("#lab-settings"))
        await pilot.press("r")  # the same ids again
        await settle(app, pilot)
        await until(pilot, lambda: len(screen.runs) == 2, "a second batch run under the git policy")
        git = screen.last_batch
        assert git.rescans == 200 and git.rescans_skipped == 0
        assert "rescans 200 (skipped 0)" in plain(screen.query_one("#lab-batch-summary"))
        runs = plain(screen.query_one("#lab-batch-runs"))
        assert "gated" in runs and " git " in runs
        # quick: no rescans at all, loose objects through the cache (fills).
        await pilot.press("U")
        await pilot.press("r")
        await settle(app, pilot)
        await until(pilot, lambda: len(screen.runs) == 3, "a third batch run under the quick policy")
        assert screen.last_batch.rescans == 0 and screen.last_batch.fills > 0
