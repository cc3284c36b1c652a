"""A writer's ``*.lock`` left behind (a crashed ``git commit``, a killed
``git pack-refs``) is not a ref: git's listings skip lock files and dotfiles
under ``refs/`` and ``logs/refs/`` without a word, and ``git fsck`` exits 0.
packscope's ``info``, ``fsck`` and ref listing follow the same rule."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests import repos
from tests.cli import packscope_in
from tests.repos import git_fsck, git_text, work_tree_with_commits


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    work = work_tree_with_commits(tmp_path_factory.mktemp("locks") / "w", 2)
    git_text("branch", "side", "HEAD~1", cwd=work)
    git_text("pack-refs", "--all", cwd=work)
    git_text("branch", "loose", cwd=work)
    return work


def leave_locks(repo: Path) -> list[Path]:
    """The locks git's writers take, each left as a crash leaves it."""
    git_dir = repo / ".git"
    branch = git_text("symbolic-ref", "HEAD", cwd=repo).strip()
    made = [
        git_dir / (branch + ".lock"),  # a loose ref's lock, beside the ref
        git_dir / "refs/heads/side.lock",  # a lock on a packed ref
        git_dir / "refs/heads/new-branch.lock",  # a ref being created
        git_dir / "refs/heads/.tmp-scratch",  # a dotfile
        git_dir / "packed-refs.lock",
        git_dir / "HEAD.lock",
        git_dir / "logs" / (branch + ".lock"),  # a reflog's lock
    ]
    head = git_text("rev-parse", "HEAD", cwd=repo)
    for path in made:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.name == "packed-refs.lock":
            shutil.copyfile(git_dir / "packed-refs", path)
        else:
            path.write_text(head)
    (git_dir / "refs/heads/.hidden-dir").mkdir()
    (git_dir / "refs/heads/.hidden-dir/x").write_text(git_text("rev-parse", "HEAD", cwd=repo))
    return made


@pytest.fixture
def locked(base, tmp_path) -> Path:
    repo = repos.copy_repo(base, tmp_path / "locked")
    leave_locks(repo)
    return repo


def test_info_lists_the_refs_git_lists_and_no_problem(locked):
    p = packscope_in(locked, "info", "--json")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["problems"] == []
    git_refs = git_text("for-each-ref", "--format=%(refname)", cwd=locked).split()
    assert report["refs"]["total"] == len(git_refs)


def test_fsck_exits_as_git_does_with_nothing_said_about_locks(locked):
    status, git_out = git_fsck(locked)
    p = packscope_in(locked, "fsck", "--no-progress")
    out = (p.stdout + p.stderr).decode()
    assert (p.returncode, status) == (0, 0), out
    assert ".lock" not in git_out and ".lock" not in out
    assert ".hidden" not in out
