"""tests/cli.py runs the CLI in a process forked from one that has imported
packscope (tests/cli_zygote.py): each run must be what a fresh
``python -m packscope.inspector.cli`` gives: the same output, exit status,
errors, standard input, directory, environment and path."""

from __future__ import annotations

import pytest

from tests import repos
from tests.cli import run_cli
from tests.repos import git_env


@pytest.fixture(scope="module")
def small_repo(tmp_path_factory):
    return repos.build_packed(tmp_path_factory.mktemp("harness"), commits=3)


def answers(argv, **kw):
    p = run_cli(argv, **kw)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.both_paths  # it runs each path itself (PACKSCOPE_PURE in the runs' environment)
def test_a_forked_run_answers_as_a_spawned_one(small_repo, monkeypatch, tmp_path):
    env = {k: v for k, v in git_env().items() if k != "PACKSCOPE_PURE"}
    runs = [
        (["cat-file", "-t", "HEAD"], {"cwd": small_repo}),
        (["-C", str(small_repo), "cat-file", "--batch-check"], {"input": b"HEAD\nHEAD~1\nnope\n"}),
        (["cat-file", "-p", "HEAD"], {"cwd": tmp_path, "env": {**env, "GIT_DIR": str(small_repo / ".git")}}),
        (["-C", str(small_repo), "cat-file", "-p", "no-such-rev"], {}),
        (["-C", str(tmp_path / "absent"), "log"], {}),
        (["cat-file", "--no-such-option"], {}),
        (["--version"], {"env": {**env, "PACKSCOPE_PURE": "1"}}),
        (["--version"], {}),
    ]
    got = {}
    for mode in ("0", "1"):
        monkeypatch.setenv("PACKSCOPE_TESTS_SPAWN", mode)
        got[mode] = [answers(argv, **{"env": env, **kw}) for argv, kw in runs]
    assert got["0"] == got["1"]
    statuses = [status for status, _, _ in got["0"]]
    assert statuses[0] == 0 and statuses[3] == 128 and statuses[5] == 2
    assert b"pure path" in got["0"][6][1] and b"compiled path" in got["0"][7][1]
