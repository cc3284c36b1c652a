"""Health (8): fsck in a worker, grouped findings, details, cancel; the UI
on corrupt repositories; and a UI session that leaves the repository as it was."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from packscope.inspector.screens.health import FindingScreen, HealthScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests import ui_history_repos as hr
from tests.ui_support import SIZE, list_text, make_app, plain, started, until


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory):
    return hr.build_history_repo(tmp_path_factory.mktemp("health"), "base.git")


@pytest.fixture(scope="module")
def corrupt(base_repo, tmp_path_factory):
    return hr.corrupt_copies(base_repo, tmp_path_factory.mktemp("corrupt"))


async def run_health(app, pilot, timeout=20):
    await started(app, pilot)
    await pilot.press("8")
    screen = app.screen
    assert isinstance(screen, HealthScreen)
    await until(pilot, lambda: screen.state.finished, "the health check to finish", timeout=timeout)
    assert screen.state.error is None, screen.state.error  # finished, not crashed
    await pilot.pause(0.3)
    return screen


def kinds(screen) -> dict[str, int]:
    return {g.kind: len(g.findings) for g in screen.groups.values()}


@pytest.mark.asyncio
async def test_healthy_repository_has_no_errors(base_repo):
    app = make_app(base_repo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await run_health(app, pilot)
        assert screen.state.summary["exit"] == 0
        assert not [g for g in screen.groups.values() if g.severity == "error"]
        assert "done" in plain(screen.query_one("#health-title"), width=300)


@pytest.mark.parametrize(
    "name, kind_part",
    [
        ("truncated-pack", "pack"),
        ("flipped-byte", ""),
        ("garbage-loose", "loose"),
        ("broken-ref", "ref"),
        ("idx-without-pack", "orphan"),
    ],
)
@pytest.mark.asyncio
async def test_problems_grouped_with_details(corrupt, name, kind_part):
    repo = corrupt[name]
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await run_health(app, pilot)
        found = kinds(screen)
        assert found, name
        assert any(kind_part in k for k in found), found
        lst = screen.query_one(VirtualList)
        rows = list_text(lst)
        # groups, worst first, with counts
        first_group = next(g for g in screen.ordered_groups())
        assert (
            rows[0].startswith(("▾", "▸"))
            and first_group.kind in rows[0]
            and f"×{len(first_group.findings)}" in rows[0]
        )
        # Enter on a finding: location, elsewhere, remedy
        row = next(i for i, (k, _v) in enumerate(screen.rows) if k == "finding")
        lst.move_to(row)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, FindingScreen)
        detail = plain(app.screen.query_one("#finding-detail"), width=200)
        f = screen.rows[row][1]
        assert "remedy" in detail and "file" in detail and "offset" in detail
        assert f.path and os.path.basename(f.path) in detail
        assert f.remedy and f.remedy.split()[0] in detail
        await pilot.press("escape")
        assert app.screen is screen
        # Enter on a group closes and opens it
        lst.move_to(0)
        before = len(screen.rows)
        await pilot.press("enter")
        assert len(screen.rows) != before  # opened or closed


@pytest.mark.asyncio
async def test_overview_badge_leads_to_health(corrupt):
    app = make_app(corrupt["idx-without-pack"])
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        assert "Health" in str(app.screen.query_one("#ov-health").border_subtitle)
        await pilot.press("h")
        await pilot.pause()
        assert isinstance(app.screen, HealthScreen)
        await pilot.press("1")
        await pilot.pause()
        await pilot.click("#ov-health")
        await pilot.pause()
        assert isinstance(app.screen, HealthScreen)


@pytest.mark.asyncio
async def test_escape_cancels_a_running_check(base_repo, monkeypatch):
    import packscope.core.fsck.findings as ff

    real = ff.Ticker._report

    def slow(self):  # every progress step is slow: the check is still running when Esc comes
        import time

        time.sleep(0.05)
        real(self)

    real_init = ff.Ticker.__init__

    def every_step(self, progress=None, cancel=None, every=512):  # report (and sleep) on every step
        real_init(self, progress, cancel, 1)

    monkeypatch.setattr(ff.Ticker, "_report", slow)
    monkeypatch.setattr(ff.Ticker, "__init__", every_step)
    app = make_app(base_repo)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await pilot.press("8")
        screen = app.screen
        await until(
            pilot, lambda: screen.state.running and screen.state.done > 0, "the check to be running with progress"
        )
        assert "Esc cancels" in plain(screen.query_one("#health-title"), width=300)
        await pilot.press("escape")
        await until(pilot, lambda: screen.state.finished, "Esc to end the check", timeout=10)
        assert screen.state.cancelled
        assert isinstance(app.screen, HealthScreen)  # Esc cancelled; it did not go back
        assert "cancelled" in plain(screen.query_one("#health-title"), width=300)


def _fingerprint(repo) -> dict:
    out = {}
    for dirpath, dirs, files in os.walk(repo):
        for f in files + dirs:
            p = os.path.join(dirpath, f)
            st = os.lstat(p)
            digest = hashlib.sha1(Path(p).read_bytes()).hexdigest() if os.path.isfile(p) else "dir"
            out[os.path.relpath(p, repo)] = (digest, st.st_mtime_ns, st.st_size, st.st_mode)
    return out


@pytest.mark.asyncio
async def test_a_ui_session_leaves_every_file_unchanged(corrupt, base_repo):
    """A scripted session over every screen, on a healthy and two damaged
    repositories: nothing crashes, and no file changes (content, size, mode, mtime)."""
    for repo in (base_repo, corrupt["truncated-pack"]):
        before = _fingerprint(repo)
        await _tour_every_screen(repo, damaged=repo is not base_repo)
        assert _fingerprint(repo) == before


async def _tour_every_screen(repo, damaged: bool) -> None:
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await pilot.press("7")
        await until(
            pilot,
            lambda: (app.screen.history is not None and app.screen.history.done) or app.screen.history.loaded > 0,
            "some history",
        )
        await pilot.press("G", "enter")
        await until(pilot, lambda: getattr(app.screen, "last_done", False), "the last commit's screen", timeout=10)
        await pilot.press("escape", "8")
        await until(pilot, lambda: app.screen.state.finished, "the health check to finish", timeout=20)
        assert (app.screen.state.summary["exit"] != 0) is damaged
        for key in "1246":
            await pilot.press(key)
        await pilot.pause(0.2)
        await pilot.press("q")
