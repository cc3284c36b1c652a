"""One honest health state (inspector/health_state.py): the Overview, the
Packs badges and Health read and write one model.  With a byte flipped in
an .idx (git fsck fails): the Overview never says "no problems" about what
it did not check, `t` on the pack verifies the .idx checksum too and the
Overview shows it, and a Health run's findings about the pack reach the
Packs badge and the Overview."""

from __future__ import annotations

from pathlib import Path

import pytest

from packscope.inspector.health_state import health_state
from packscope.inspector.screens.health import HealthScreen
from packscope.inspector.screens.overview import OverviewScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests import repos
from tests.test_ui_packs import open_packs, pack_rows_shown
from tests.ui_support import open_screen, plain, running, until


@pytest.fixture(scope="module")
def healthy(tmp_path_factory) -> Path:
    return repos.build_packed(tmp_path_factory.mktemp("model"), commits=20)


@pytest.fixture
def flipped_idx(healthy, tmp_path) -> tuple[Path, Path]:
    """A copy whose pack's .idx has one CRC32 byte flipped: the index still
    opens and every lookup works; only its checksum (and the entry's CRC)
    tell — as git fsck does."""
    repo = repos.copy_repo(healthy, tmp_path / "flipped.git")
    pack, idx = repos.the_pack(repo)
    n = len(repos.show_index(idx))
    repos.flip_byte(idx, 8 + 256 * 4 + 20 * n + 2)
    assert repos.git_fsck(repo)[0] != 0
    return repo, pack


async def overview_health(app, pilot, what: str, predicate) -> str:
    """The Overview's Health panel once ``predicate(text)`` holds."""
    if not isinstance(app.screen, OverviewScreen):
        await pilot.press("1")

    def text():
        if not isinstance(app.screen, OverviewScreen):
            return ""
        t = plain(app.screen.query_one("#ov-health"), width=400)
        return predicate(t) and t

    return await until(pilot, text, what, timeout=15)


@pytest.mark.asyncio
async def test_the_overview_says_what_it_checked_not_no_problems(flipped_idx):
    repo, _pack = flipped_idx
    async with running(repo) as (app, pilot):
        text = await overview_health(app, pilot, "what opening found", lambda t: "opened without errors" in t)
        assert "checksums not verified — 8 runs the full check" in text
        assert "no problems" not in text and " OK " not in f" {text} "


@pytest.mark.asyncio
async def test_t_verifies_the_idx_checksum_and_the_overview_shows_it(flipped_idx):
    repo, pack = flipped_idx
    async with running(repo) as (app, pilot):
        screen = await open_packs(app, pilot)
        assert "with problems" not in plain(screen.query_one("#packs-summary"))  # cheap checks see nothing
        lst = screen.query_one(VirtualList)
        lst.move_to(next(i for i, r in enumerate(screen.view) if r.name == pack.stem))
        await pilot.press("t")
        row = await until(
            pilot,
            lambda: (r := dict(pack_rows_shown(screen))[pack.stem]) and "idx checksum:" in r and r,
            "t's verdict on the .idx",
        )
        assert "idx checksum: pack index checksum does not match its contents" in row
        assert "checksum ok" in row  # the .pack itself is intact: both are reported
        assert "✗" in row
        assert "1 with problems" in plain(screen.query_one("#packs-summary"))
        text = await overview_health(app, pilot, "the pack's damage in the Overview", lambda t: pack.stem in t)
        assert "ERROR" in text and "idx checksum: pack index checksum does not match" in text
        assert "verified every checksum" not in text


@pytest.mark.asyncio
async def test_health_findings_reach_the_packs_badge_and_the_overview(flipped_idx):
    repo, pack = flipped_idx
    async with running(repo) as (app, pilot):
        health = await open_screen(
            app, pilot, "8", HealthScreen, "the check", lambda s: health_state(app).runs == 1, 30
        )
        assert health.state.error is None and health.state.summary["exit"] != 0
        about_pack = sorted(
            {f.kind for f in health.findings if f.pack == str(pack) or f.idx == str(pack.with_suffix(".idx"))}
        )
        assert about_pack
        screen = await open_packs(app, pilot)
        row = await until(
            pilot, lambda: (r := dict(pack_rows_shown(screen))[pack.stem]) and "Health:" in r and r, "Health's badge"
        )
        assert "✗" in row and all(k in row for k in about_pack)
        assert "1 with problems" in plain(screen.query_one("#packs-summary"))
        text = await overview_health(app, pilot, "the run and the pack in the Overview", lambda t: pack.stem in t)
        assert "Health: " in text and "exit status" in text
        assert "verified every checksum" not in text


@pytest.mark.asyncio
async def test_a_clean_full_check_is_what_lets_the_overview_say_ok(healthy):
    async with running(healthy) as (app, pilot):
        text = await overview_health(app, pilot, "what opening found", lambda t: "opened without errors" in t)
        assert "checksums not verified" in text
        await open_screen(app, pilot, "8", HealthScreen, "the check", lambda s: health_state(app).runs == 1, 30)
        text = await overview_health(app, pilot, "the clean run", lambda t: "verified every checksum" in t)
        assert "OK" in text and "checksums not verified" not in text


def test_what_was_learnt_about_a_pack_is_forgotten_when_its_files_are_rewritten(healthy, tmp_path):
    """t's verdict and a run's findings are about the files as they were:
    a repack that writes a pack of the same name makes them moot, and a
    pack that is gone has nothing left to say."""
    import os

    from packscope.core.fsck.findings import Finding
    from packscope.inspector.health_state import HealthState, LastRun

    repo = repos.copy_repo(healthy, tmp_path / "rewritten.git")
    pack, idx = repos.the_pack(repo)
    state = HealthState()
    state.record_checksums(str(pack), "ok", "pack index checksum does not match its contents")
    finding = Finding("idx-checksum", "error", "bad", "packs", 4, path=str(idx), pack=str(pack), idx=str(idx))
    state.record_run(LastRun("full", 0.0, {"error": 1}, 4), [finding])
    assert state.known(str(pack)).problems() and state.damaged_packs()
    st = os.stat(idx)
    os.utime(idx, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))  # written again
    ph = state.known(str(pack))
    assert ph is not None and not ph.problems() and ph.idx_checksum is None
    assert state.damaged_packs() == []
    state.record_checksums(str(pack), "ok", "ok")
    pack.unlink()
    idx.unlink()
    assert state.known(str(pack)) is None and state.damaged_packs() == []
    # git's temporary pack (a repack under way) is never recorded as a pack with problems
    state.record_cheap(str(pack.parent / ".tmp-1-pack-abc.pack"), [], "cannot read pack index: No such file")
    assert state.packs == {} and state.damaged_packs() == []
