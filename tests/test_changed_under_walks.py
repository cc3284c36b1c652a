"""History's walk and the last-commit walk record the repository's state
when they start and end, and say when another process changed it
meanwhile (a new pack and a new branch, as a fetch writes them); a walk
the repository did not change under says nothing."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from packscope.inspector.core_access import CoreAccess
from packscope.inspector.history_model import FIRST_CHUNK, HistoryLog
from packscope.inspector.last_commits import last_commits
from tests import repos
from tests.repos import git_text


@pytest.fixture(scope="module")
def long_history(tmp_path_factory) -> Path:
    return repos.build_packed(tmp_path_factory.mktemp("walks"), commits=4 * FIRST_CHUNK)


def copy(long_history: Path, tmp_path: Path) -> Path:
    return repos.copy_repo(long_history, tmp_path / "copy.git")


def history_walk(repo: Path, between=None) -> HistoryLog:
    """Walk --all: the first screenful, then ``between()``, then the rest."""
    core = CoreAccess(str(repo))
    core.open()
    try:
        log = HistoryLog(core, ["--all"])
        worker = threading.Thread(target=log.run, args=(lambda: None, lambda: False))
        worker.start()
        assert log.wait_for(FIRST_CHUNK, timeout=30)
        assert not log.done  # the walk is under way
        if between is not None:
            between()
        log.demand(float("inf"))
        worker.join(60)
        assert log.done and log.error is None
        return log
    finally:
        core.close()


@pytest.mark.parametrize("change", [False, True], ids=["quiet", "new-pack"])
def test_history_says_when_the_repository_changed_during_its_walk(long_history, tmp_path, change):
    repo = copy(long_history, tmp_path)
    log = history_walk(repo, (lambda: repos.add_pack_beside(repo)) if change else None)
    if change:
        assert log.changed is not None and log.changed.startswith("a new pack and refs updated at ")
    else:
        assert log.changed is None


@pytest.mark.parametrize("change", [False, True], ids=["quiet", "new-pack"])
def test_the_last_commit_walk_says_when_the_repository_changed(long_history, tmp_path, change):
    repo = copy(long_history, tmp_path)
    head = bytes.fromhex(git_text("rev-parse", "main", cwd=repo).strip())
    core = CoreAccess(str(repo))
    core.open()
    said: list[str] = []
    written = []

    def progress(n: int) -> None:
        if change and not written:  # inside the walk: another process writes
            written.append(n)
            repos.add_pack_beside(repo)

    try:
        last_commits(core, head, b"", set(), found=lambda batch: None, progress=progress, changed=said.append)
    finally:
        core.close()
    if change:
        assert written, "the walk never reported progress"
        assert len(said) == 1 and said[0].startswith("a new pack and refs updated at ")
    else:
        assert said == []
