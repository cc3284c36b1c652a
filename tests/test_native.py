"""Which path runs (the compiled module or pure Python), how to choose it,
and that a user sees the same bytes from both: `--version` names the path,
PACKSCOPE_PURE=1 forces the pure one, and `cat-file --batch` of every object
of repositories full of deltas matches git's output on both paths."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.delta_paths import NOT_BUILT, _native
from tests.repos import build_big_copies, build_deep_chain, build_packed, git, git_env


def run(*args, pure: bool, input: bytes | None = None, cwd=None) -> subprocess.CompletedProcess:
    env = git_env()
    env.pop("PACKSCOPE_PURE", None)
    if pure:
        env["PACKSCOPE_PURE"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "packscope.inspector.cli", *map(str, args)],
        input=input,
        capture_output=True,
        env=env,
        cwd=cwd,
        check=True,
    )


def in_process(code: str, *, pure: bool) -> str:
    env = dict(os.environ)
    env.pop("PACKSCOPE_PURE", None)
    if pure:
        env["PACKSCOPE_PURE"] = "1"
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, env=env, check=True, text=True
    ).stdout.strip()


@NOT_BUILT
def test_version_names_the_compiled_path_when_the_module_is_built():
    out = run("--version", pure=False).stdout.decode()
    assert out.startswith("packscope ") and "(compiled path: " in out


def test_pure_env_forces_the_pure_path_everywhere():
    out = run("--version", pure=True).stdout.decode()
    assert "(pure path: PACKSCOPE_PURE is set)" in out
    code = "from packscope.core import native;print(native.PATH, native.backend is None)"
    assert in_process(code, pure=True) == "pure True"
    assert in_process(code, pure=False) == ("compiled False" if _native else "pure True")


def test_compiled_module_is_built_where_a_compiler_is_available():
    # With a C compiler and Python's headers the install must not silently fall back.
    cc = shlex.split(sysconfig.get_config_var("CC") or "cc")[0]
    headers = Path(sysconfig.get_paths()["include"], "Python.h")
    if not (shutil.which(cc) and headers.exists()):
        pytest.skip("no C compiler or no Python headers here: the pure path is expected")
    assert _native is not None, "a compiler is available but packscope.core._native was not built"


@pytest.fixture(scope="module")
def delta_repos(tmp_path_factory):
    root = tmp_path_factory.mktemp("native")
    return [build_packed(root, commits=80), build_deep_chain(root, revisions=300), build_big_copies(root)]


@pytest.mark.both_paths
@pytest.mark.parametrize("pure", [True, False], ids=["pure", "compiled"])
def test_cat_file_batch_matches_git_on_both_paths(delta_repos, pure):
    for repo in delta_repos:
        ids = git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo)
        expected = git("cat-file", "--batch", cwd=repo, input=ids)
        assert run("-C", repo, "cat-file", "--batch", pure=pure, input=ids).stdout == expected


@pytest.mark.both_paths
@pytest.mark.parametrize("pure", [True, False], ids=["pure", "compiled"])
def test_info_says_which_path_runs(delta_repos, pure):
    doc = json.loads(run("-C", delta_repos[0], "info", "--json", pure=pure).stdout)
    path = "pure" if pure or _native is None else "compiled"
    assert doc["implementation"]["path"] == path
    assert ("PACKSCOPE_PURE" in doc["implementation"]["reason"]) == pure
    text = run("-C", delta_repos[0], "info", pure=pure).stdout.decode()
    assert re.search(rf"packscope path +{path} \(", text)


@pytest.mark.both_paths
@pytest.mark.parametrize("pure", [True, False], ids=["pure", "compiled"])
def test_walks_print_what_git_prints_on_both_paths(delta_repos, pure):
    # the commit headers are read by the compiled match or by the regex
    for repo in delta_repos:
        for args in (["--all", "--format=%H %T %P"], ["--all", "--date-order", "--format=%H"]):
            assert run("-C", repo, "log", *args, pure=pure).stdout == git("log", *args, cwd=repo)
