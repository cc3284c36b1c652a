"""The Commit screen's last-commit column is fed by inspector.last_commits:
every answer reaches the screen (git's `log -1 -- ENTRY`), the first at once,
the rest handed over at most every FOUND_SECONDS (a redraw per short hold of
the core lock cost the walk as much CPU as the walk itself), the last batch
when the walk ends whatever the clock says.  The Commit screen reads its
commit once, however often it is resumed meanwhile."""

from __future__ import annotations

import pytest

from packscope.inspector import last_commits
from packscope.inspector.core_access import CoreAccess
from packscope.inspector.screens.commit import CommitScreen
from tests.repos import git_text
from tests.test_last_modified import git_answers
from tests.ui_support import plain, running, until


def feed(repo, monkeypatch, every: float) -> tuple[list[list[tuple[bytes, bytes]]], list[int]]:
    monkeypatch.setattr(last_commits, "FOUND_SECONDS", every)
    monkeypatch.setattr(last_commits, "HOLD_SECONDS", 0.0)  # a hold per answer: as many chances to hand over
    core = CoreAccess(str(repo))
    core.open()
    head = bytes.fromhex(git_text("rev-parse", "main", cwd=repo).strip())
    batches: list[list[tuple[bytes, bytes]]] = []
    walked: list[int] = []
    try:
        last_commits.last_commits(core, head, b"", set(), found=batches.append, progress=walked.append)
    finally:
        core.close()
    return batches, walked


@pytest.mark.parametrize("every", [0.0, 3600.0], ids=["every-hold", "once-an-hour"])
def test_every_answer_reaches_the_screen_as_git_gives_it(random_history_repo, monkeypatch, every):
    batches, walked = feed(random_history_repo, monkeypatch, every)
    got = [pair for batch in batches for pair in batch]
    want = git_answers(random_history_repo, "main", "")
    assert {name: oid.hex() for name, oid in got} == {n: c for n, c in want.items() if c}
    assert len(got) == len({name for name, _ in got})  # each once
    assert walked and walked == sorted(walked)
    if every:  # the first answers at once, all the others with the walk's end
        assert len(batches) == 2
    else:
        assert len(batches) > 2


@pytest.mark.asyncio
async def test_the_commit_is_read_once_even_when_the_screen_resumes_before_the_read_ends(
    random_history_repo, monkeypatch
):
    # A resume (a switch back, a closed modal) before the first read ended used
    # to start a second read, whose workers cancelled the first's; the
    # cancelled changes worker could hand its uncounted list over last.
    reads = []
    original = CommitScreen.load

    def counting(self):
        reads.append(self)
        return original(self)

    monkeypatch.setattr(CommitScreen, "load", counting)
    async with running(random_history_repo) as (app, pilot):
        head = bytes.fromhex(git_text("rev-parse", "main", cwd=random_history_repo).strip())
        screen = CommitScreen(head)
        await app.push_screen(screen)
        screen.refresh_data()  # what a resume does
        await until(
            pilot,
            lambda: screen.last_done and screen.changes is not None and all(pc.counting_done for pc in screen.changes),
            "the commit's last commits and counted changes",
            timeout=30,
        )
        assert reads == [screen]
        entries = len(screen.view.entries)
        assert f"last commits: {entries}/{entries}" in plain(screen.query_one("#commit-title"), width=300)
