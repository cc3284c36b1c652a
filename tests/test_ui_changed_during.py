"""Health when the repository changes while the check runs: a commit and
`git repack -a -d` between the check's listing of the packs and its reading
of them.  The list says so first, with what happened; findings about the
files that are gone (the old pack's index) and the branch that moved are
dropped; after the change, r gives git's answer (exit 0)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from packscope.inspector import health_run
from packscope.inspector.screens.health import HealthScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests import repos
from tests.repos import git
from tests.ui_support import list_text, open_screen, plain, running, until


def work_repo(root: Path) -> Path:
    work = repos.work_tree_with_commits(root / "work", 8)
    git("repack", "-a", "-d", "-q", cwd=work)
    return work


def repack_during_the_check(monkeypatch, work: Path) -> list[str]:
    """The check runs in this process (no fork: its progress is synchronous)
    and, at its first progress report — the packs listed, none read yet —
    a commit lands and the packs are rewritten.  Returns the phases seen."""
    phases: list[str] = []
    real = health_run._check

    def check(path, mode, progress, entry, cancelled, jobs):
        def spy(done, total, phase):
            if not phases:
                (work / "new").write_text("new\n")
                git("add", "new", cwd=work)
                git("commit", "-q", "-m", "during the check", cwd=work)
                git("repack", "-a", "-d", "-q", cwd=work)
            phases.append(phase)
            progress(done, total, phase)

        return real(path, mode, spy, entry, cancelled, jobs)

    monkeypatch.setattr(health_run, "forks", lambda: False)
    monkeypatch.setattr(health_run, "_check", check)
    return phases


def runs(app) -> int:
    """Health runs that have ended and been shown (the screen's end-of-run
    step records each in the shared health state)."""
    from packscope.inspector.health_state import health_state

    return health_state(app).runs


def unmarked_errors(screen: HealthScreen) -> list[str]:
    return [e.finding.message for e in screen.entries if e.finding.severity == "error" and not e.changed_during]


@pytest.mark.asyncio
async def test_a_repack_during_the_check_is_said_and_its_findings_dropped(tmp_path, monkeypatch):
    work = work_repo(tmp_path)
    phases = repack_during_the_check(monkeypatch, work)
    async with running(work) as (app, pilot):
        screen = await open_screen(app, pilot, "8", HealthScreen, "the check to end", lambda s: runs(app) == 1, 30)
        assert phases, "the check never reported progress"
        assert screen.state.error is None, screen.state.error
        rows = list_text(screen.query_one(VirtualList))
        assert rows and rows[0].strip().startswith("the repository changed during the check (a repack")
        assert "dropped" in rows[0] and rows[0].rstrip().endswith("r runs it again")
        title = plain(screen.query_one("#health-title"), width=300)
        assert "the repository changed during the check" in title
        # what git fsck of the final state says: nothing; no error stands unmarked
        assert repos.git_fsck(work)[0] == 0
        assert unmarked_errors(screen) == []
        assert screen.state.summary["exit"] == 0
        assert screen.state.dropped > 0
        # the shared health state says it too (the Overview's panel)
        from packscope.inspector.health_state import describe_run, health_state

        run = health_state(app).last_run
        assert run is not None and run.changed and "changed during the run" in describe_run(run)
        # the repository is quiet now: r runs it again and gives git's answer
        monkeypatch.setattr(health_run, "_check", REAL_CHECK)
        first = screen.state
        await pilot.press("r")
        await until(pilot, lambda: screen.state is not first and runs(app) == 2, "the second run to end", 30)
        assert screen.state.error is None and screen.state.changed is None
        assert screen.state.summary["exit"] == 0
        assert "changed during" not in plain(screen.query_one("#health-title"), width=300)
        assert list_text(screen.query_one(VirtualList))[0].strip() == "no problems found"


REAL_CHECK = health_run._check


@pytest.mark.asyncio
async def test_the_title_says_the_repository_is_changing_while_the_check_runs(tmp_path, monkeypatch):
    """The check is held at its first progress report after another process
    wrote a commit and repacked: the title says so before the run ends."""
    work = work_repo(tmp_path)
    release = threading.Event()
    real = health_run._check

    def check(path, mode, progress, entry, cancelled, jobs):
        def spy(done, total, phase):
            if not release.is_set():
                (work / "new").write_text("new\n")
                git("add", "new", cwd=work)
                git("commit", "-q", "-m", "during the check", cwd=work)
                git("repack", "-a", "-d", "-q", cwd=work)
                release.wait(60)  # until the test has seen the title
                release.set()
            progress(done, total, phase)

        return real(path, mode, spy, entry, cancelled, jobs)

    monkeypatch.setattr(health_run, "forks", lambda: False)
    monkeypatch.setattr(health_run, "_check", check)
    async with running(work) as (app, pilot):
        screen = await open_screen(app, pilot, "8", HealthScreen, "the check to start", lambda s: s.state.running)
        try:
            title = await until(
                pilot,
                lambda: (
                    # (the once-a-second look may come between the test's commit and its
                    # repack: "refs updated" or "a repack", either is the change)
                    "the repository is changing (" in (t := plain(screen.query_one("#health-title"), 300)) and t
                ),
                "the title to say the repository is changing",
                # a commit and a repack run first, inside the check: slow on a loaded machine
                30,
            )
            assert screen.state.running and "checking" in title
        finally:
            release.set()
        await until(pilot, lambda: runs(app) == 1, "the check to end", 30)
        assert screen.state.changed is not None
