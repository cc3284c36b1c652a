"""Rows where packscope's answer differed from git 2.39's: ``cat-file -e``
of a name whose object is missing, and the loose-object census ``info``
gives (``git count-objects -v`` is the oracle)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests import repos
from tests.cli import packscope_in
from tests.repos import git, git_text, work_tree_with_commits


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    work = work_tree_with_commits(tmp_path_factory.mktemp("census") / "w", 2)
    git("tag", "-a", "-m", "t", "t1", cwd=work)
    return work


def _status(args, cwd) -> int:
    import subprocess

    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, env=repos.git_env()).returncode


@pytest.mark.parametrize("name", ["HEAD", "main", "refs/heads/main", "HEAD~1", "HEAD^{tree}", "nosuch"])
def test_exists_on_a_ref_whose_commit_is_missing_answers_as_git(base, tmp_path, name):
    repo = repos.copy_repo(base, tmp_path / "r")
    git("branch", "-M", "main", cwd=repo)
    head = git_text("rev-parse", "HEAD", cwd=repo).strip()
    os.remove(repo / ".git" / "objects" / head[:2] / head[2:])
    want = _status(["cat-file", "-e", name], repo)
    assert packscope_in(repo, "cat-file", "-e", name).returncode == want
    if name == "HEAD":
        assert want == 1  # the name resolves; the object is absent


def _oddities(repo: Path) -> None:
    objects = repo / ".git" / "objects"
    some = next(p for p in objects.glob("[0-9a-f][0-9a-f]/*") if p.is_file())
    rest = len(some.name)
    (some.parent / some.name.upper()).write_bytes(some.read_bytes())  # counted: git reads hex in either case
    (some.parent / (some.name + "x")).write_bytes(b"")  # garbage: too long
    (some.parent / "tmp_obj_Ab12").write_bytes(b"")  # garbage: a writer's temp file
    (objects / "12" / ("1" * rest)).mkdir(parents=True)  # garbage: a directory with an id's name
    os.makedirs(objects / "34", exist_ok=True)
    (objects / "34" / ("5" * rest)).symlink_to(some)  # garbage: count-objects does not follow links
    os.makedirs(objects / "56", exist_ok=True)
    (objects / "56" / ("7" * rest)).write_bytes(b"")  # counted: a regular file with an id's name
    (objects / "AB").mkdir()  # not a subdirectory git reads
    (objects / "AB" / some.name).write_bytes(some.read_bytes())


def test_info_counts_loose_objects_and_garbage_as_count_objects_does(base, tmp_path):
    repo = repos.copy_repo(base, tmp_path / "odd")
    _oddities(repo)
    want = dict(line.split(": ", 1) for line in git_text("count-objects", "-v", cwd=repo).splitlines())
    p = packscope_in(repo, "info", "--json")
    assert p.returncode == 0, p.stderr
    loose = json.loads(p.stdout)["loose"]
    assert (loose["objects"], loose["garbage"], loose["also_packed"]) == (
        int(want["count"]),
        int(want["garbage"]),
        int(want["prune-packable"]),
    )


@pytest.mark.parametrize("target", ["logs/HEAD", "objects/info"])
def test_symref_escaping_refs_is_located_in_its_file(base, tmp_path, target):
    repo = repos.copy_repo(base, tmp_path / "esc")
    evil = repo / ".git" / "refs" / "heads" / "evil"
    evil.write_text(f"ref: {target}\n")
    p = packscope_in(repo, "info", "--json")
    (problem,) = json.loads(p.stdout)["problems"]
    assert problem["path"] == str(evil) and problem["remedy"]
    assert target in problem["message"]
    fsck = packscope_in(repo, "fsck", "--json", "--no-progress", "--no-dangling")
    (finding,) = [json.loads(line) for line in fsck.stdout.decode().splitlines() if '"kind"' in line]
    assert finding["path"] == str(evil)
    assert fsck.returncode == _status(["fsck", "--no-dangling"], repo)


@pytest.mark.parametrize(
    "setting",
    [
        ("core", "filemode", "tzue"),
        ("core", "bare", "maybe"),
        ("core", "logallrefupdates", "always"),
        ("core", "compression", "10"),
        ("core", "abbrev", "2"),
        ("core", "abbrev", "no"),
        ("core", "createobject", "copy"),
        ("core", "packedgitwindowsize", "-1"),
        ("core", "checkstat", "tzue"),
        ("pack", "compression", "-1"),
    ],
)
def test_a_config_value_git_dies_of_refuses_the_repository(base, tmp_path, setting):
    repo = repos.copy_repo(base, tmp_path / "cfg")
    section, key, value = setting
    with open(repo / ".git" / "config", "a") as f:
        f.write(f"[{section}]\n\t{key} = {value}\n")
    for args in (["log"], ["cat-file", "-t", "HEAD"], ["fsck"]):
        want = _status(args, repo)
        got = packscope_in(repo, *args, "--no-progress" if args == ["fsck"] else "--")
        assert got.returncode == want, (args, got.stderr)
        assert (want == 128) == (f"{key}" in got.stderr.decode().lower()), got.stderr


def _packed_damage(repo: Path, how: str) -> None:
    path = repo / ".git" / "packed-refs"
    lines = path.read_bytes().split(b"\n")
    first = next(i for i, line in enumerate(lines) if line[:1] not in (b"#", b"^", b""))
    if how == "garbage line":
        lines.insert(first, b"this is not a ref line")
    elif how == "cut inside an id":
        lines = lines[: first + 1]
        lines[first] = lines[first][:17]
    elif how == "a name with a space":
        lines[first] += b" more"
    elif how == "a name outside refs/":
        lines[first] = lines[first].replace(b" refs/", b" rafs/")
    elif how == "a NUL inside a name":
        lines[first] = lines[first].replace(b" refs/", b" ref\0s/")
    elif how == "a duplicate line":
        lines.insert(first, lines[first])
    path.write_bytes(b"\n".join(lines))


@pytest.mark.parametrize(
    "how",
    [
        "garbage line",
        "cut inside an id",
        "a name with a space",
        "a name outside refs/",
        "a NUL inside a name",
        "a duplicate line",
    ],
)
def test_log_all_and_fsck_on_damaged_packed_refs_exit_as_git(base, tmp_path, how):
    repo = repos.copy_repo(base, tmp_path / "pr")
    git("branch", "side", "HEAD~1", cwd=repo)
    git("pack-refs", "--all", cwd=repo)
    _packed_damage(repo, how)
    for args in (["log", "--all"], ["fsck"]):
        want = _status(args, repo)
        got = packscope_in(repo, *args, *(["--no-progress"] if args == ["fsck"] else []))
        assert got.returncode == want, (args, how, got.stdout[-400:], got.stderr)


@pytest.mark.parametrize("content", ["ref: refs/heads/main\v", "ref: refs/heads/main\f\n", "ref:\vrefs/heads/main\n"])
def test_head_with_a_space_git_does_not_trim_is_refused_as_git(base, tmp_path, content):
    """git trims space, tab, LF and CR around a symref's target, not VT or FF."""
    repo = repos.copy_repo(base, tmp_path / "hd")
    git("branch", "-M", "main", cwd=repo)
    (repo / ".git" / "HEAD").write_text(content)
    for args in (["fsck"], ["log"]):
        want = _status(args, repo)
        got = packscope_in(repo, *args, *(["--no-progress"] if args == ["fsck"] else []))
        assert got.returncode == want, (args, got.stderr)
