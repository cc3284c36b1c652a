"""Grafts and replace refs together: git 2.39 applies both (the graft is
looked up by the commit's own id, the replacement gives its contents), and
GIT_NO_REPLACE_OBJECTS turns off only the replace refs — packscope agrees."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.repos import git, git_env, git_text
from tests.test_history_rewrites import base_repo, grafted_repo  # noqa: F401  (fixtures)

ARGS = [[], ["--all", "--format=%H %P %s"], ["--topo-order", "--format=%H %P %T %s"], ["--format=%h", "--", "dir"]]


@pytest.fixture(scope="module")
def both(grafted_repo, tmp_path_factory):  # noqa: F811
    repo = tmp_path_factory.mktemp("both") / "r"
    shutil.copytree(grafted_repo, repo, symlinks=True)
    stored = {"GIT_NO_REPLACE_OBJECTS": "1"}
    c7, c5, s2 = git_text("rev-parse", "c7", "c6~1", "origin/side", cwd=repo, env=stored).split()
    # a grafted commit (c7) whose contents are replaced, and a replace-graft of
    # a commit the grafts file does not name (c5 onto s2)
    git("replace", c7, c5, cwd=repo)
    git("replace", "--graft", c5, s2, cwd=repo)
    return repo


@pytest.mark.parametrize("env", [None, {"GIT_NO_REPLACE_OBJECTS": "1"}], ids=["replace", "no-replace"])
def test_grafts_and_replace_refs_apply_together_as_in_git(both, env):
    for args in ARGS:
        want = subprocess.run(["git", "log", *args], cwd=both, capture_output=True, env=git_env(env))
        got = subprocess.run(
            [sys.executable, "-m", "packscope.inspector.cli", "log", *args],
            cwd=both,
            capture_output=True,
            env=git_env(env),
        )
        assert want.returncode == 0 and got.returncode == 0, got.stderr.decode()
        assert got.stdout == want.stdout, args
