"""cat-file on repositories git reads in its own particular way: packs whose
names do not start with ``pack-``, the empty tree (an object git always has),
``-e`` on names that do not resolve, and trees with non-canonical modes.

Each test builds its repository with git and compares packscope's stdout
and exit status with git's.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli import packscope
from tests.repos import git, git_env, git_text, hash_literally, init_bare, work_tree_with_commits

FORMAT = "%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase)"


def run_git(repo: Path, *args, input: bytes | str | None = None) -> subprocess.CompletedProcess:
    if isinstance(input, str):
        input = input.encode()
    return subprocess.run(["git", *map(str, args)], cwd=repo, input=input, capture_output=True, env=git_env())


def both(repo: Path, *args, input: str | None = None):
    """(git, packscope) results of the same command."""
    return run_git(repo, *args, input=input), packscope(*args, cwd=repo, input=input, check=False)


def small_history(repo: Path, commits: int = 3) -> None:
    work = work_tree_with_commits(repo.parent / (repo.name + "-work"), commits)
    git("clone", "-q", "--bare", work, repo)


# --- class 5: pack files named anything.idx -----------------------------------------------


@pytest.fixture(scope="module")
def renamed_packs(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("renamed") / "r.git"
    small_history(repo)
    git("repack", "-adq", cwd=repo)
    git("commit-graph", "write", "--reachable", cwd=repo, check=False)
    pack_dir = repo / "objects" / "pack"
    for f in pack_dir.iterdir():
        if f.name.startswith("pack-"):
            f.rename(pack_dir / ("odd" + f.name[len("pack-") :]))
    assert not list(pack_dir.glob("pack-*"))
    return repo


def test_packs_without_the_pack_prefix_are_read_as_git_reads_them(renamed_packs):
    g, p = both(renamed_packs, "cat-file", "--batch-all-objects", f"--batch-check={FORMAT}")
    assert g.returncode == 0 and g.stdout.count(b"\n") >= 9
    assert (p.returncode, p.stdout) == (0, g.stdout)
    g, p = both(renamed_packs, "cat-file", "--batch", input="HEAD\nHEAD~2^{tree}\nmain:f1\n")
    assert (p.returncode, p.stdout) == (0, g.stdout)


def test_info_counts_the_renamed_pack(renamed_packs):
    import json

    info = json.loads(packscope("info", "--json", cwd=renamed_packs).stdout)
    counts = dict(line.split(": ") for line in git_text("count-objects", "-v", cwd=renamed_packs).splitlines())
    assert info["packs"]["count"] == int(counts["packs"]) == 1
    assert info["packs"]["objects"] == int(counts["in-pack"])
    assert info["packs"]["list"][0]["name"].startswith("odd")
    assert info["problems"] == []


# --- class 6: the empty tree --------------------------------------------------------------


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def empty_tree_repo(request, tmp_path_factory):
    repo = init_bare(tmp_path_factory.mktemp("empty-tree") / "r.git", request.param)
    blob = git_text("hash-object", "-w", "--stdin", cwd=repo, input="x\n").strip()
    empty = git_text("hash-object", "-t", "tree", "--stdin", cwd=repo, input=b"").strip()
    assert not (repo / "objects" / empty[:2] / empty[2:]).exists()
    return repo, empty, blob


def test_the_empty_tree_is_there_when_not_stored(empty_tree_repo):
    repo, empty, blob = empty_tree_repo
    for mode in ("-t", "-s", "-e", "-p"):
        g, p = both(repo, "cat-file", mode, empty)
        assert g.returncode == 0
        assert (p.returncode, p.stdout) == (g.returncode, g.stdout), mode
    names = f"{empty}\n{empty}^{{tree}}\n{blob}\n"
    for batch in (f"--batch-check={FORMAT}", "--batch"):
        g, p = both(repo, "cat-file", batch, input=names)
        assert b"missing" not in g.stdout
        assert (p.returncode, p.stdout) == (0, g.stdout), batch


def test_the_stored_empty_tree_takes_no_disk_space_as_git_reports_it(empty_tree_repo, tmp_path):
    repo, empty, _ = empty_tree_repo
    fmt = git_text("rev-parse", "--show-object-format", cwd=repo).strip()
    stored = init_bare(tmp_path / "s.git", fmt)
    git("hash-object", "-w", "-t", "tree", "--stdin", cwd=stored, input=b"")
    assert (stored / "objects" / empty[:2] / empty[2:]).stat().st_size > 0
    g, p = both(stored, "cat-file", "--batch-all-objects", f"--batch-check={FORMAT}")
    assert g.stdout.split()[3] == b"0"  # git 2.39: the cached object answers first
    assert (p.returncode, p.stdout) == (0, g.stdout)
    git("repack", "-adq", cwd=stored)
    g, p = both(stored, "cat-file", f"--batch-check={FORMAT}", input=empty + "\n")
    assert (p.returncode, p.stdout) == (0, g.stdout)


# --- class 7: -e on names that do not resolve -----------------------------------------------


@pytest.fixture(scope="module")
def one_parent_repo(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("exists") / "r.git"
    small_history(repo, 2)
    return repo


@pytest.mark.parametrize(
    "name",
    ["nosuchref", "HEAD^2", "HEAD:nosuchpath", "HEAD~5", "HEAD^{blob}", "0000000", "1" * 40, "HEAD", "HEAD:f1"],
)
def test_exists_exit_status_and_message_follow_git(one_parent_repo, name):
    g, p = both(one_parent_repo, "cat-file", "-e", name)
    assert p.returncode == g.returncode
    if g.returncode == 128:
        git_fatal = [line for line in g.stderr.decode().splitlines() if line.startswith("fatal: ")][-1]
        first = p.stderr.decode().splitlines()[0]
        assert first.startswith("packscope: " + git_fatal[len("fatal: ") :]), (first, git_fatal)


def test_exists_on_an_unborn_head_is_fatal_as_in_git(tmp_path):
    repo = init_bare(tmp_path / "unborn.git")
    g, p = both(repo, "cat-file", "-e", "HEAD")
    assert g.returncode == p.returncode == 128
    assert p.stderr.startswith(b"packscope: Not a valid object name HEAD")


# --- class 8: canonical modes in -p of a tree ---------------------------------------------


def test_pretty_tree_prints_canonical_modes(one_parent_repo):
    blob = bytes.fromhex(git_text("rev-parse", "HEAD:f1", cwd=one_parent_repo).strip())
    modes = [b"100664", b"100775", b"40755", b"120777", b"160001", b"100000", b"644", b"0", b"20000", b"170000"]
    body = b"".join(m + b" e%d\0" % i + blob for i, m in enumerate(modes))
    tree = hash_literally(one_parent_repo, "tree", body)
    g, p = both(one_parent_repo, "cat-file", "-p", tree)
    assert g.returncode == 0 and b"100644 blob" in g.stdout and b"100664" not in g.stdout
    assert (p.returncode, p.stdout) == (0, g.stdout)


def test_lookup_says_the_unstored_empty_tree_is_one_git_always_has(empty_tree_repo):
    import json

    repo, empty, _ = empty_tree_repo
    doc = json.loads(packscope("lookup", "--json", empty, cwd=repo).stdout)
    assert doc["found"] is False and doc["error"] == "not stored"
    assert "git always has" in doc["message"]
