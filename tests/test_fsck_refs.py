"""`packscope fsck` on every form of broken ref gives git fsck's exit status
and git's error lines (``error: REF: invalid sha1 pointer ID``, ``error:
REF: invalid reflog entry ID``), and says
in which file (and, for packed-refs, on which line) the ref is."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests import repos
from tests.cli import packscope_in
from tests.repos import git, git_fsck, git_text, work_tree_with_commits

NULL = "0" * 40
MISSING = "deadbeef" * 5
POINTER = re.compile(r"^error: (\S.*?: invalid (?:sha1 pointer|reflog entry) [0-9a-f]{40})", re.M)


def packscope_fsck(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return packscope_in(repo, "fsck", "--no-progress", *args)


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """A work tree with three commits, a tag, packed refs and reflogs."""
    work = work_tree_with_commits(tmp_path_factory.mktemp("refs") / "small", 3)
    git("tag", "-a", "-m", "t", "v1", cwd=work)
    git("gc", "-q", cwd=work)  # packs the refs too
    return work


@pytest.fixture
def repo(small, tmp_path) -> Path:
    return repos.copy_repo(small, tmp_path / "small")


def refs_dir(repo: Path) -> Path:
    return repo / ".git" / "refs"


def add_packed(repo: Path, *records: str) -> None:
    """Records (a line, and its '^' line if any) added to packed-refs in
    name order (git trusts the header's 'sorted')."""
    path = repo / ".git" / "packed-refs"
    header, *lines = path.read_text().splitlines()
    entries: list[list[str]] = []
    for line in lines:
        if line.startswith("^"):
            entries[-1].append(line)
        else:
            entries.append([line])
    entries += [record.split("\n") for record in records]
    entries.sort(key=lambda entry: entry[0].split(" ", 1)[-1])
    path.write_text("\n".join([header, *(line for entry in entries for line in entry)]) + "\n")


def loose(repo: Path, name: str, text: str) -> Path:
    path = repo / ".git" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


CASES = {
    "null id, loose": lambda r: loose(r, "refs/heads/nul", NULL + "\n"),
    "null id, packed": lambda r: add_packed(r, f"{NULL} refs/heads/pnul"),
    "null id, packed tag with a peeled line": lambda r: add_packed(r, f"{NULL} refs/tags/pt\n^{NULL}"),
    "missing object, loose": lambda r: loose(r, "refs/heads/miss", MISSING + "\n"),
    "missing object, packed": lambda r: add_packed(r, f"{MISSING} refs/heads/pmiss"),
    "symref loop": lambda r: (
        git("symbolic-ref", "refs/heads/a", "refs/heads/b", cwd=r),
        git("symbolic-ref", "refs/heads/b", "refs/heads/a", cwd=r),
    ),
    "dangling symref": lambda r: git("symbolic-ref", "refs/heads/dsym", "refs/heads/nowhere", cwd=r),
    "symref to a null ref": lambda r: (
        loose(r, "refs/heads/nul", NULL + "\n"),
        git("symbolic-ref", "refs/heads/s", "refs/heads/nul", cwd=r),
    ),
    "symrefs nested too deep": lambda r: (
        [loose(r, f"refs/heads/d{i}", f"ref: refs/heads/d{i + 1}\n") for i in range(1, 7)]
        + [git("update-ref", "refs/heads/d7", "main", cwd=r)]
    ),
    "garbage in a loose ref": lambda r: loose(r, "refs/heads/garb", "notahexsha\n"),
    "empty loose ref": lambda r: loose(r, "refs/heads/empty", ""),
    "symref to a bad name": lambda r: loose(r, "refs/heads/sbad", "ref: refs/heads/a..b\n"),
    "bad name, loose": lambda r: loose(r, "refs/heads/bad..name", git_text("rev-parse", "main", cwd=r)),
    "name with a space, loose": lambda r: loose(r, "refs/heads/a b", git_text("rev-parse", "main", cwd=r)),
    "bad name, packed": lambda r: add_packed(r, git_text("rev-parse", "main", cwd=r).strip() + " refs/heads/x..y"),
    ".lock name, packed": lambda r: add_packed(r, git_text("rev-parse", "main", cwd=r).strip() + " refs/heads/x.lock"),
    "stale lock file": lambda r: loose(r, "refs/heads/main.lock", git_text("rev-parse", "main", cwd=r)),
    "dotfile under refs": lambda r: loose(r, "refs/heads/.hidden", git_text("rev-parse", "main", cwd=r)),
    "dot directory under refs": lambda r: loose(r, "refs/.cache/heads/x", "garbage\n"),
    "duplicate packed line": lambda r: add_packed(r, git_text("rev-parse", "main", cwd=r).strip() + " refs/heads/main"),
    "unparseable packed line": lambda r: add_packed(r, "1234 refs/heads/short"),
    "peeled value that is not an id": lambda r: add_packed(
        r, git_text("rev-parse", "main", cwd=r).strip() + " refs/tags/t2\n^nothex"
    ),
    "HEAD on a branch holding the null id": lambda r: (
        loose(r, "refs/heads/nul", NULL + "\n"),
        git("symbolic-ref", "HEAD", "refs/heads/nul", cwd=r),
    ),
    "HEAD on a garbage branch": lambda r: loose(r, "refs/heads/main", "garbage\n"),
    "HEAD on a branch naming a missing object": lambda r: loose(r, "refs/heads/main", MISSING + "\n"),
    "reflog entry naming a missing object": lambda r: (
        (r / ".git" / "logs" / "refs" / "heads" / "main").open("a").write(f"{NULL} {MISSING} A <a@b> 1 +0000\tx\n")
    ),
    "detached HEAD at the null id": lambda r: loose(r, "HEAD", NULL + "\n"),
    "HEAD in a symref loop": lambda r: (
        loose(r, "HEAD", "ref: refs/heads/hl\n"),
        loose(r, "refs/heads/hl", "ref: HEAD\n"),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_broken_ref_gets_gits_exit_status_and_error_lines(repo, case):
    CASES[case](repo)
    git_status, git_out = git_fsck(repo)
    p = packscope_fsck(repo)
    out = p.stdout.decode()
    assert p.returncode == git_status, out
    # every "REF: invalid sha1 pointer ID" (or "invalid reflog entry") git prints, and no other
    assert sorted(POINTER.findall(out)) == sorted(POINTER.findall(git_out)), out


def test_the_cases_cover_every_exit_status_git_gives(tmp_path, small):
    """The table above is not vacuous: git answers 0, 2, 8, 10 and 128 among its cases."""
    statuses = set()
    for case in (
        "stale lock file",
        "null id, loose",
        "detached HEAD at the null id",
        "HEAD in a symref loop",
        "unparseable packed line",
    ):
        r = repos.copy_repo(small, tmp_path / case.replace(" ", "-"))
        CASES[case](r)
        statuses.add(git_fsck(r)[0])
    assert statuses == {0, 2, 8, 10, 128}


def findings(p: subprocess.CompletedProcess) -> list[dict]:
    rows = [json.loads(line) for line in p.stdout.decode().splitlines()]
    return [row for row in rows if "summary" not in row]


def test_null_id_in_packed_refs_names_the_file_and_line(repo):
    add_packed(repo, f"{NULL} refs/heads/pnul")
    packed = repo / ".git" / "packed-refs"
    line_no = packed.read_text().splitlines().index(f"{NULL} refs/heads/pnul") + 1
    p = packscope_fsck(repo, "--json")
    assert p.returncode == git_fsck(repo)[0] == 2
    (f,) = [f for f in findings(p) if f["severity"] == "error"]
    assert f["kind"] == "ref-null" and f["path"] == str(packed) and f["line"] == line_no
    assert packed.read_bytes()[f["offset"] :].startswith(f"{NULL} refs/heads/pnul\n".encode())
    assert f["message"].startswith(f"refs/heads/pnul: invalid sha1 pointer {NULL}")


def test_null_id_in_a_loose_ref_names_its_file(repo):
    path = loose(repo, "refs/heads/nul", NULL + "\n")
    p = packscope_fsck(repo, "--json")
    (f,) = [f for f in findings(p) if f["severity"] == "error"]
    assert f["kind"] == "ref-null" and f["path"] == str(path) and f["line"] is None


def test_unparseable_packed_line_is_located_and_fatal_like_git(repo):
    add_packed(repo, "1234 refs/heads/short")
    packed = repo / ".git" / "packed-refs"
    line_no = packed.read_text().splitlines().index("1234 refs/heads/short") + 1
    p = packscope_fsck(repo, "--json")
    git_status, git_out = git_fsck(repo)
    assert p.returncode == git_status == 128 and "fatal: unexpected line" in git_out
    (f,) = [f for f in findings(p) if f["severity"] == "error"]
    assert f["path"] == str(packed) and f["line"] == line_no
    # the run went on: the healthy refs were still walked
    summary = json.loads(p.stdout.decode().splitlines()[-1])["summary"]
    assert summary["reachable"] > 0


def test_head_on_a_null_branch_is_unborn_as_git_says(repo):
    CASES["HEAD on a branch holding the null id"](repo)
    git_out = git_fsck(repo)[1]
    out = packscope_fsck(repo).stdout.decode()
    assert "notice: HEAD points to an unborn branch (nul)" in git_out
    assert "notice: HEAD points to an unborn branch (nul)" in out
