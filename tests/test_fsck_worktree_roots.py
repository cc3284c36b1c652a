"""fsck's roots in a repository with linked worktrees are git 2.39's: every
worktree's HEAD and reflogs, but only the current worktree's index and
per-worktree refs (refs/bisect/, refs/worktree/), so the dangling set
depends on where fsck runs, exactly as git's does."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli import packscope_in
from tests.repos import git, git_env, git_text


def _dangling_and_notices(text: str) -> list[str]:
    return sorted(line for line in text.splitlines() if line.startswith(("dangling ", "notice: ")))


@pytest.fixture(scope="module")
def three(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("wts")
    main = root / "main"
    git("init", "-q", "-b", "main", main)
    git("commit", "-q", "--allow-empty", "-m", "a", cwd=main)
    (main / "m").write_text("staged in main\n")
    git("add", "m", cwd=main)
    git("worktree", "add", "-q", "--detach", root / "two", cwd=main)
    git("worktree", "add", "-q", "-b", "b3", root / "three", cwd=main)
    two, three = root / "two", root / "three"
    git("commit", "-q", "--allow-empty", "-m", "detached", cwd=two)
    (two / "s").write_text("staged in two\n")
    git("add", "s", cwd=two)
    tree = git_text("rev-parse", "HEAD^{tree}", cwd=two).strip()
    git("update-ref", "refs/bisect/bad", git_text("commit-tree", tree, "-m", "bisected", cwd=two).strip(), cwd=two)
    git("update-ref", "refs/worktree/w", git_text("commit-tree", tree, "-m", "wref", cwd=two).strip(), cwd=two)
    (three / "s3").write_text("staged in three\n")
    git("add", "s3", cwd=three)
    git("update-ref", "refs/bisect/x", git_text("commit-tree", tree, "-m", "x3", cwd=three).strip(), cwd=three)
    git("reflog", "expire", "--expire=now", "--all", cwd=main)
    return root


@pytest.mark.parametrize("where", ["main", "two", "three", "three-deleted"])
def test_dangling_set_is_gits_from_each_worktree(three, tmp_path, where):
    root = tmp_path / "copy"
    shutil.copytree(three, root, symlinks=True)
    # the worktrees' gitdir files name absolute paths: point them at the copy
    for gitdir in (root / "main/.git/worktrees").glob("*/gitdir"):
        gitdir.write_text(gitdir.read_text().replace(str(three), str(root)))
    for wt in ("two", "three"):
        dotgit = root / wt / ".git"
        dotgit.write_text(dotgit.read_text().replace(str(three), str(root)))
    cwd = root / where.split("-")[0]
    if where == "three-deleted":
        shutil.rmtree(root / "three")
        cwd = root / "main"
    p = subprocess.run(["git", "fsck", "--no-progress"], cwd=cwd, capture_output=True, env=git_env())
    theirs = _dangling_and_notices((p.stdout + p.stderr).decode())
    assert any(line.startswith("dangling blob") for line in theirs) or where in ("two", "three")
    ours = packscope_in(cwd, "fsck", "--no-progress")
    assert ours.returncode == p.returncode
    assert _dangling_and_notices(ours.stdout.decode()) == theirs
