"""fsck on partial clones that had a life after the clone: local commits,
a push, a fetch on top.  git fsck is the oracle: every object it calls
missing is missing here, and nothing else is (its walk stops at promisor
objects — in a promisor pack, or referenced by an object of one).

Repositories are built here with git; git runs with GIT_NO_LAZY_FETCH=1 and
fsck never fetches.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import repos
from tests.repos import git, git_fsck, git_text


def _mktree(repo: Path, lines: list[str]) -> str:
    return git_text("mktree", "--missing", cwd=repo, input="".join(line + "\n" for line in lines)).strip()


def _local_commit(repo: Path, parent: str, path: str, body: str, message: str) -> tuple[str, str, str]:
    """A commit on ``parent`` adding ``path`` (a loose blob) under the parent's
    root tree, written with plumbing only (no blob of the clone is read):
    (commit, its root tree, the new blob)."""
    blob = git_text("hash-object", "-w", "--stdin", cwd=repo, input=body).strip()
    entries = git_text("ls-tree", parent, cwd=repo).splitlines()
    if "/" in path:
        sub, name = path.split("/", 1)
        subtree = _mktree(repo, [f"100644 blob {blob}\t{name}"])
        entries.append(f"040000 tree {subtree}\t{sub}")
    else:
        entries.append(f"100644 blob {blob}\t{path}")
    tree = _mktree(repo, entries)
    commit = git_text("commit-tree", tree, "-p", parent, "-m", message, cwd=repo).strip()
    return commit, tree, blob


@pytest.fixture(scope="module")
def pushed_then_fetched(tmp_path_factory):
    """A blob:none bare clone with a local commit L (new loose blob B in a new
    directory newdir/), pushed to the source, where a commit M on top of it was
    made and then fetched back: M's promisor pack references L and L's root
    tree, so both are promisor objects although they are stored locally."""
    root = tmp_path_factory.mktemp("partial-life")
    src = repos.init_bare(root / "src.git")
    repos.import_history(src, 6, seed=41)
    git("config", "uploadpack.allowFilter", "true", cwd=src)
    git("config", "uploadpack.allowAnySHA1InWant", "true", cwd=src)
    clone = root / "clone.git"
    git("clone", "-q", "--bare", "--no-local", "--filter=blob:none", f"file://{src}", clone)
    local, tree, blob = _local_commit(clone, "main", "newdir/new.txt", "a file made in the clone\n", "local")
    git("update-ref", "refs/heads/main", local, cwd=clone)
    git("push", "-q", f"file://{src}", "main", cwd=clone)
    upstream = git_text("commit-tree", tree, "-p", local, "-m", "upstream", cwd=src).strip()
    git("update-ref", "refs/heads/main", upstream, cwd=src)
    git("fetch", "-q", "origin", "+refs/heads/*:refs/heads/*", cwd=clone)
    assert git_text("rev-parse", "main", cwd=clone).strip() == upstream
    assert len(list((clone / "objects" / "pack").glob("*.promisor"))) == 2
    newdir = git_text("rev-parse", f"{tree}:newdir", cwd=clone).strip()
    return clone, {"local": local, "tree": tree, "blob": blob, "newdir": newdir, "upstream": upstream}


@pytest.fixture
def clone(pushed_then_fetched, tmp_path):
    repo, ids = pushed_then_fetched
    return repos.copy_repo(repo, tmp_path / "clone.git"), ids


def _remove_loose(repo: Path, oid: str) -> None:
    path = repo / "objects" / oid[:2] / oid[2:]
    assert path.is_file(), f"{oid} is not loose"
    path.unlink()


def git_missing(output: str) -> set[str]:
    """Every object git fsck calls missing, or names as a ref's/reflog's bad target."""
    hexid = r"[0-9a-f]{40,64}"
    found = set(re.findall(rf"^missing \w+ ({hexid})", output, re.MULTILINE))
    found |= set(re.findall(rf"invalid (?:sha1 pointer|reflog entry) ({hexid})", output))
    return found


def our_missing(findings) -> set[str]:
    return {
        f.oid
        for f in findings
        if f.severity == "error" and (f.kind == "missing" or f.details.get("object") == "missing")
    }


def dangling(findings) -> list[str]:
    return sorted(f.message for f in findings if f.kind == "dangling")


def git_dangling(output: str) -> list[str]:
    return sorted(line for line in output.splitlines() if line.startswith("dangling "))


def test_after_push_and_fetch_the_clone_is_healthy_for_both(clone, run_fsck):
    repo, _ = clone
    git_status, git_out = git_fsck(repo)
    for options in ({}, {"connectivity_only": True}):
        status, findings = run_fsck(repo, **options)
        assert status == git_status == 0, [(f.kind, f.message) for f in findings if f.severity != "info"]
        assert dangling(findings) == git_dangling(git_out)


def test_absent_blob_under_a_promisor_object_is_not_missing(clone, run_fsck):
    """B is reached only through L's tree, a promisor object (M references
    it): git does not follow it, since the promisor remote has all it
    references — B is not missing, for git nor here."""
    repo, ids = clone
    _remove_loose(repo, ids["blob"])
    git_status, git_out = git_fsck(repo)
    assert git_status == 0 and not git_missing(git_out)
    for options in ({}, {"connectivity_only": True}):
        status, findings = run_fsck(repo, **options)
        assert status == 0, [(f.kind, f.message) for f in findings if f.severity != "info"]
        assert not our_missing(findings)
        assert dangling(findings) == git_dangling(git_out)


def test_absent_objects_under_unpushed_commits_are_missing_as_git_says(clone, run_fsck):
    """An unpushed commit L2 on M is no promisor object: the walk follows it,
    into its tree R2 (not promised) and on into newdir/ (not promised either,
    only L's tree references it from a promisor pack's point of view), so the
    absent B and the absent new blob B2 are missing — for git and here."""
    repo, ids = clone
    local2, _, blob2 = _local_commit(repo, "main", "second.txt", "another local file\n", "local 2")
    git("update-ref", "refs/heads/main", local2, cwd=repo)
    _remove_loose(repo, ids["blob"])
    _remove_loose(repo, blob2)
    git_status, git_out = git_fsck(repo)
    assert git_status == 2 and git_missing(git_out) == {ids["blob"], blob2}
    for options in ({}, {"connectivity_only": True}):
        status, findings = run_fsck(repo, **options)
        assert status == 2
        assert our_missing(findings) == {ids["blob"], blob2}
        assert {f.kind for f in findings if f.severity == "error"} == {"missing"}


def test_a_ref_to_a_local_commit_whose_tree_is_gone_is_missing(clone, run_fsck):
    repo, _ = clone
    commit, tree, _ = _local_commit(repo, "main", "third.txt", "third\n", "local 3")
    git("update-ref", "refs/heads/broken", commit, cwd=repo)
    _remove_loose(repo, tree)
    git_status, git_out = git_fsck(repo)
    assert git_status == 2 and git_missing(git_out) == {tree}
    status, findings = run_fsck(repo)
    assert status == 2 and our_missing(findings) == {tree}


def test_without_its_promisor_marker_every_absent_blob_is_missing_and_counted(clone, tmp_path):
    """The .promisor files gone, nothing is promised: every blob left out by
    the filter is missing, for git and here.  The per-file limit shortens the
    list, never the summary's count; --limit 0 lists every one."""
    import json

    from tests.cli import packscope

    repo, _ = clone
    for marker in (repo / "objects" / "pack").glob("*.promisor"):
        marker.unlink()
    git_status, git_out = git_fsck(repo)
    expected = git_missing(git_out)
    assert git_status == 2 and len(expected) > 5

    def run(*args):
        p = packscope("-C", repo, "fsck", "--json", "--no-progress", *args, check=False)
        lines = [json.loads(line) for line in p.stdout.decode().splitlines()]
        return p.returncode, lines[:-1], lines[-1]["summary"]

    status, findings, summary = run("--limit", "0")
    assert status == summary["exit"] == 2
    assert {f["oid"] for f in findings if f["kind"] == "missing" and f["severity"] == "error"} == expected
    assert summary["missing"] == len(expected) and summary["promised"] == 0
    status, findings, summary = run("--limit", "3")
    assert status == 2 and summary["missing"] == len(expected)
    assert len([f for f in findings if f["kind"] == "missing" and f["severity"] == "error"]) == 3
    more = [f for f in findings if f["severity"] == "warning" and f["kind"] == "missing"]
    assert more and more[0]["details"]["suppressed"] == len(expected) - 3
    assert packscope("-C", repo, "fsck", "--limit", "-1", check=False).returncode == 2  # a usage error


def test_summary_counts_promised_objects_the_walk_reaches(clone):
    """An unpushed commit whose root tree names blobs that only the promisor
    remote has (the unchanged top-level files): the walk follows the local
    commit and tree and finds those blobs promised; the promisor commit and
    trees it stops at are not followed, so nothing else is counted."""
    import json

    from tests.cli import packscope

    repo, _ = clone
    local2, tree2, blob2 = _local_commit(repo, "main", "second.txt", "another local file\n", "local 2")
    git("update-ref", "refs/heads/main", local2, cwd=repo)
    top_blobs = {
        line.split()[2] for line in git_text("ls-tree", tree2, cwd=repo).splitlines() if line.split()[1] == "blob"
    }
    promised = top_blobs - {blob2}
    assert promised
    p = packscope("-C", repo, "fsck", "--json", "--no-progress", check=False)
    summary = json.loads(p.stdout.decode().splitlines()[-1])["summary"]
    assert p.returncode == summary["exit"] == git_fsck(repo)[0] == 0
    assert summary["missing"] == 0 and summary["promised"] == len(promised)


# --- .gitmodules and .gitattributes in a partial clone ------------------------------------------------

GITMODULES = '[submodule "lib"]\n\tpath = lib\n\turl = https://example.com/lib.git\n'


@pytest.fixture(scope="module")
def special_partial(tmp_path_factory):
    """A blob:none clone of a history whose trees name .gitmodules and
    .gitattributes: their blobs were left out by the filter."""
    root = tmp_path_factory.mktemp("partial-special")
    work = root / "work"
    git("init", "-q", "-b", "main", work)
    (work / ".gitmodules").write_text(GITMODULES)
    (work / ".gitattributes").write_text("*.c diff=cpp\n")
    (work / "a.c").write_text("int a;\n")
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "one", cwd=work)
    (work / "a.c").write_text("int a, b;\n")
    git("commit", "-q", "-am", "two", cwd=work)
    src = root / "src.git"
    git("clone", "-q", "--bare", work, src)
    git("config", "uploadpack.allowFilter", "true", cwd=src)
    clone = root / "clone.git"
    git("clone", "-q", "--bare", "--no-local", "--filter=blob:none", f"file://{src}", clone)
    return clone


def _no_listing(monkeypatch):
    """Make listing the promised set (reading every promisor pack) fail loudly."""
    from packscope.core.store.promisor import PromisorSet

    def refuse(self, *a, **kw):
        raise AssertionError("the promised set was listed")

    monkeypatch.setattr(PromisorSet, "build", refuse)


def test_absent_special_blobs_named_by_promisor_trees_are_promised_without_listing(
    special_partial, tmp_path, run_fsck, monkeypatch
):
    """The walk stops at the refs' promisor commits and the .gitmodules /
    .gitattributes blobs are named by trees of the promisor pack: nothing
    needs the promised set, which on a large clone takes minutes to list —
    twice, when the store listed its own to read those blobs."""
    repo = repos.copy_repo(special_partial, tmp_path / "clone.git")
    git_status, git_out = git_fsck(repo)
    assert git_status == 0 and "gitmodules" not in git_out
    _no_listing(monkeypatch)
    status, findings = run_fsck(repo)
    assert status == 0, [(f.kind, f.message) for f in findings if f.severity != "info"]
    assert not [f for f in findings if (f.msg_id or "").startswith(("gitmodules", "gitattributes"))]


def test_absent_local_gitmodules_blob_is_missing_as_git_says(special_partial, tmp_path, run_fsck):
    """A local commit with a new .gitmodules, its blob gone: nothing
    promises it — git reports gitmodulesMissing and the missing blob; so do we."""
    repo = repos.copy_repo(special_partial, tmp_path / "clone.git")
    body = GITMODULES + '[submodule "other"]\n\tpath = other\n\turl = https://example.com/other.git\n'
    blob = git_text("hash-object", "-w", "--stdin", cwd=repo, input=body).strip()
    entries = [
        line for line in git_text("ls-tree", "main", cwd=repo).splitlines() if not line.endswith("\t.gitmodules")
    ]
    tree = _mktree(repo, [*entries, f"100644 blob {blob}\t.gitmodules"])
    commit = git_text("commit-tree", tree, "-p", "main", "-m", "local", cwd=repo).strip()
    git("update-ref", "refs/heads/main", commit, cwd=repo)
    _remove_loose(repo, blob)
    git_status, git_out = git_fsck(repo)
    assert "gitmodulesMissing" in git_out and git_missing(git_out) == {blob}
    status, findings = run_fsck(repo)
    assert status == git_status == 3
    assert our_missing(findings) == {blob}
    assert [f.oid for f in findings if f.msg_id == "gitmodulesMissing"] == [blob]


# --- listing the promised set ---------------------------------------------------------------------


def test_tree_ids_fast_path_agrees_with_the_careful_loop():
    """The promised set reads every tree of the promisor packs; well-formed
    ones are split in C, anything else goes through the loop that stops at
    the first malformed entry."""
    from packscope.core.objects import tree_patterns
    from packscope.core.store import promisor

    whole = tree_patterns(20).whole
    a, b, c = bytes([1]) * 20, b"\0 1" * 6 + b"\0\0", bytes([0x30]) * 20  # ids with NULs, spaces and digits
    good = b"100644 a b\0" + a + b"40000 12 34\0" + b + b"160000 m\0" + c
    assert whole.fullmatch(good)
    assert promisor._tree_entry_ids(good, 20) == [a, b, c]
    assert promisor._tree_entry_ids(b"", 20) == []
    for bad, expected in [
        (good + b"100644 \0" + a, [a, b, c]),  # an empty name: the rest cannot be located
        (b"10x644 a\0" + a + good, []),  # a bad mode first
        (good[:-5], [a, b]),  # a truncated id
        (b"100644 a\0" + a + b"no-mode\0" + b, [a]),  # no space before the name
        (b"100644 a\0" + a + b"100648 b\0" + b, [a]),  # 8 is not an octal digit
    ]:
        assert not whole.fullmatch(bad)
        assert promisor._tree_entry_ids(bad, 20) == expected, bad
