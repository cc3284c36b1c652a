"""A directory named like a loose object answers as git 2.39 does.

git checks a loose object's existence with access(F_OK), so ``cat-file -e``
answers 0 for ``objects/ab/<rest>`` when it is a directory; every read opens
it and dies mapping it ("mmap failed: No such device", 128): ``-t``, ``-p``,
``--batch``, ``--batch-check``, ``--batch-all-objects`` (after the lines
before it), ``log`` when the object is a commit it walks, and ``fsck``.
Each case is built with git; exit status and stdout are compared with git's,
on the compiled and the pure path.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli import packscope
from tests.repos import git, git_env, git_text

PATHS = {"compiled": None, "pure": {"PACKSCOPE_PURE": "1"}}


def _as_directory(repo: Path, oid: str) -> None:
    path = repo / ".git" / "objects" / oid[:2] / oid[2:]
    path.unlink()
    path.mkdir()
    (path / "inside").write_bytes(b"not an object")


@pytest.fixture(scope="module")
def repos(tmp_path_factory):
    """{"blob": (repo, id), "commit": (repo, id)}: two loose-only
    repositories, in each one object replaced by a directory of its name."""
    out = {}
    for what in ("blob", "commit"):
        work = tmp_path_factory.mktemp(f"dir-{what}") / "w"
        git("init", "-q", "--initial-branch=main", work)
        for i in (1, 2):
            (work / "f").write_text(f"content {i}\n")
            git("add", "f", cwd=work)
            git("commit", "-qm", f"c{i}", cwd=work)
        oid = git_text("rev-parse", "HEAD~1:f" if what == "blob" else "HEAD~1", cwd=work).strip()
        _as_directory(work, oid)
        out[what] = (work, oid)
    return out


def both(repo: Path, args: list[str], stdin: str, path: str):
    g = subprocess.run(["git", *args], cwd=repo, input=stdin.encode(), capture_output=True, env=git_env())
    p = packscope(*args, cwd=repo, input=stdin, check=False, env=PATHS[path])
    assert b"Traceback" not in p.stderr
    return g, p


SINGLE = [["cat-file", "-e"], ["cat-file", "-t"], ["cat-file", "-s"], ["cat-file", "-p"]]
BATCH = [["cat-file", "--batch"], ["cat-file", "--batch-check"]]


@pytest.mark.both_paths
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("what", ["blob", "commit"])
@pytest.mark.parametrize("args", SINGLE, ids=lambda a: a[-1])
def test_one_object_that_is_a_directory_answers_as_git(repos, what, args, path):
    repo, oid = repos[what]
    g, p = both(repo, [*args, oid], "", path)
    assert (p.returncode, p.stdout) == (g.returncode, g.stdout)


@pytest.mark.both_paths
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("what", ["blob", "commit"])
@pytest.mark.parametrize("args", BATCH, ids=lambda a: a[-1])
def test_a_batch_dies_at_the_directory_as_git(repos, what, args, path):
    repo, oid = repos[what]
    g, p = both(repo, args, f"HEAD\n{oid}\nHEAD:f\n", path)
    assert (p.returncode, p.stdout) == (g.returncode, g.stdout)
    if p.returncode == 128:
        assert p.stderr.startswith(b"packscope: ")


@pytest.mark.both_paths
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("what", ["blob", "commit"])
@pytest.mark.parametrize("args", BATCH, ids=lambda a: a[-1])
def test_all_objects_batch_stops_at_the_directory_as_git(repos, what, args, path):
    repo, _ = repos[what]
    g, p = both(repo, [*args[:1], "--batch-all-objects", *args[1:]], "", path)
    assert (p.returncode, p.stdout) == (g.returncode, g.stdout)


@pytest.mark.both_paths
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("what", ["blob", "commit"])
def test_log_all_answers_as_git(repos, what, path):
    repo, _ = repos[what]
    g, p = both(repo, ["log", "--all", "--format=%H %s"], "", path)
    assert (p.returncode, p.stdout) == (g.returncode, g.stdout)


@pytest.mark.both_paths
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("what", ["blob", "commit"])
def test_fsck_exits_128_as_git_and_names_the_directory(repos, what, path):
    repo, oid = repos[what]
    g = subprocess.run(["git", "fsck", "--full", "--no-progress"], cwd=repo, capture_output=True, env=git_env())
    p = packscope("fsck", "--no-progress", cwd=repo, check=False, env=PATHS[path])
    assert (p.returncode, g.returncode) == (128, 128)
    assert b"is a directory" in p.stdout + p.stderr and oid.encode() in p.stdout + p.stderr


def test_git_does_answer_so(repos, tmp_path):
    """Guards the fixture: git really says "exists" and really dies on reading."""
    repo, oid = repos["blob"]
    assert subprocess.run(["git", "cat-file", "-e", oid], cwd=repo, env=git_env()).returncode == 0
    r = subprocess.run(["git", "cat-file", "-t", oid], cwd=repo, env=git_env(), capture_output=True)
    assert r.returncode == 128 and b"mmap failed" in r.stderr
    # and a regular copy of the repository (the directory removed) is whole again but for that object
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy)
    shutil.rmtree(copy / ".git" / "objects" / oid[:2] / oid[2:])
    assert subprocess.run(["git", "cat-file", "-e", oid], cwd=copy, env=git_env()).returncode == 1
