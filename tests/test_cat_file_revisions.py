"""`packscope cat-file` and `lookup` accept any revision, and answer as git does.

The repository is build_refs_repo (both object formats): branches, annotated
and nested tags, packed and loose refs, symbolic refs, name clashes for the
dwim order, and a linked worktree with its own per-worktree refs.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.cli import packscope
from tests.repos import (
    REFS_REPO_CLASHES,
    REFS_REPO_NAMES,
    REFS_REPO_PATHS,
    fill_placeholders,
    git,
    git_env,
    git_text,
    refs_repo_placeholders,
    refs_worktree,
)

# Every form packscope.core.repo.revision supports, and forms it must refuse the way git's
# cat-file does (a range is several commits: "missing").  Placeholders <…>
# are filled with ids of the repository at hand.
MIX = [
    # full and abbreviated ids
    "<c1>",
    "<c1_7>",
    "<c5_12>",
    "<c5_10_upper>",
    "<v1_9>",
    "<absent>",
    "<absent_9>",
    "<null>",
    # ref names in dwim order: X, refs/X, refs/tags/X, refs/heads/X, refs/remotes/X, refs/remotes/X/HEAD
    *REFS_REPO_NAMES,
    "tags/v2",
    *REFS_REPO_CLASHES,
    "refs/x1",
    "<c1_8>",
    "<c2>",
    "worktrees/<wt>/HEAD",
    "main-worktree/HEAD",
    # peeling
    "HEAD^{tree}",
    "HEAD^{commit}",
    "HEAD^{}",
    "HEAD^{object}",
    "v1^{}",
    "v1-outer^{}",
    "v1-outer^{tag}",
    "v1-outer^{commit}",
    "v1^{tree}",
    "tree-tag^{}",
    "tree-tag^{tree}",
    "blob-tag^{}",
    "blob-tag^{blob}",
    "<c5_7>^{tree}",
    "HEAD^{tree}^{}",
    # ancestry
    "HEAD~",
    "HEAD~0",
    "HEAD~1",
    "HEAD~3",
    "HEAD^",
    "HEAD^0",
    "HEAD^2",
    "HEAD~1^3",
    "HEAD~3^2~1",
    "@~2",
    "v1-outer~1",
    "v1-outer^2",
    "<c5_7>~1",
    "x1~1",
    # paths
    *REFS_REPO_PATHS,
    "<c5_7>:dir",
    "HEAD:mod/ule",
    # describe output
    "v1-2-g<c5_7>",
    # refused or unknown: git prints "missing" for each
    "main..side",
    "main...side",
    "^main",
    "HEAD^!",
    "HEAD^@",
    "HEAD^-",
    "HEAD~99",
    "HEAD^4",
    "v1^{blob}",
    "blob-tag^{commit}",
    "tree-tag~1",
    "HEAD:nope",
    "HEAD:a.txt/",
    "nope",
    "refs/heads/",
    "HEAD^{foo}",
    "HEAD~1x",
    "abc",
]


def batch_input(path, revs=MIX) -> str:
    values = refs_repo_placeholders(path)
    return "".join(fill_placeholders(r, values) + "\n" for r in revs)


@pytest.mark.parametrize("fmt", [None, "%(objectname) %(objecttype) %(objectsize) %(objectsize:disk)"])
def test_batch_check_of_every_revision_form_equals_git(refs_repo, fmt):
    stdin = batch_input(refs_repo)
    opt = "--batch-check" if fmt is None else f"--batch-check={fmt}"
    want = git("cat-file", opt, cwd=refs_repo, input=stdin).decode().splitlines()
    p = packscope("-C", refs_repo, "cat-file", opt, input=stdin)
    got = p.stdout.decode().splitlines()
    assert len(got) == len(want) == len(MIX)
    for rev, g, w in zip(stdin.splitlines(), got, want, strict=True):
        assert g == w, rev
    assert b"Traceback" not in p.stderr


def test_batch_contents_of_revisions_equal_git(refs_repo):
    revs = [
        "HEAD",
        "v1",
        "v1-outer^{}",
        "HEAD^{tree}",
        "HEAD:a.txt",
        "tree-tag^{}",
        "blob-tag^{}",
        "HEAD~3^2",
        "<c5_7>:dir",
        "nope",
        "main..side",
    ]
    stdin = batch_input(refs_repo, revs)
    assert packscope("-C", refs_repo, "cat-file", "--batch", input=stdin).stdout == git(
        "cat-file", "--batch", cwd=refs_repo, input=stdin
    )


def test_batch_check_from_a_linked_worktree_uses_its_own_head_and_refs(refs_repo):
    wt = refs_worktree(refs_repo)
    revs = [
        "HEAD",
        "HEAD~1",
        "HEAD:a.txt",
        "bisect/bad",
        "refs/bisect/bad",
        "worktree/mine",
        "main-worktree/HEAD",
        "main-worktree/HEAD~1",
        "bisect/main-bisect",
        "feature",
        "main",
    ]
    stdin = "".join(r + "\n" for r in revs)
    assert packscope("-C", wt, "cat-file", "--batch-check", input=stdin).stdout == git(
        "cat-file", "--batch-check", cwd=wt, input=stdin
    )


@pytest.mark.parametrize(
    "rev",
    [
        "HEAD",
        "v1-outer",
        "v1-outer^{}",
        "HEAD^{tree}",
        "HEAD:dir/sub/c.txt",
        "<c5_7>~1",
        "tree-tag",
        "x3",
        "HEAD~3^2:side.txt",
        "<c1_8>",
    ],
)
def test_single_object_modes_accept_revisions(refs_repo, rev):
    rev = fill_placeholders(rev, refs_repo_placeholders(refs_repo))
    for mode in ("-t", "-s", "-p"):
        assert packscope("-C", refs_repo, "cat-file", mode, rev).stdout == git("cat-file", mode, rev, cwd=refs_repo)
    assert packscope("-C", refs_repo, "cat-file", "-e", rev).returncode == 0


@pytest.mark.parametrize(
    "rev, says",
    [
        ("nope", "unknown revision 'nope'"),
        ("HEAD~99", "history ends after"),
        ("v1^{blob}", "expected blob type"),
        ("HEAD:nope", "path 'nope' does not exist in 'HEAD'"),
        ("main..side", "ranges"),
        ("^main", "range"),
        ("HEAD@{1}", "reflog"),
        ("<absent>", "is not in the object store"),
    ],
)
def test_bad_revisions_are_clear_errors(refs_repo, rev, says):
    rev = fill_placeholders(rev, refs_repo_placeholders(refs_repo))
    p = packscope("-C", refs_repo, "cat-file", "-t", rev, check=False)
    err = p.stderr.decode()
    assert p.returncode == 128 and p.stdout == b""
    assert "Traceback" not in err and says in err and "remedy:" in err
    # -e: 1 for a full id that is absent, else (a name that does not resolve) 128, as git
    exists = packscope("-C", refs_repo, "cat-file", "-e", rev, check=False).returncode
    if "@{" in rev:
        assert exists == 128  # reflog syntax: refused (packscope does not read reflogs for revisions)
    else:
        assert exists == subprocess.run(["git", "cat-file", "-e", rev], cwd=refs_repo, env=git_env()).returncode


def test_lookup_accepts_revisions_and_a_ref_beats_an_abbreviation(refs_repo):
    values = refs_repo_placeholders(refs_repo)
    revs = ["HEAD", "v1-outer^{}", "HEAD:dir/sub/c.txt", values["<c1_8>"], values["<c5_7>"], "main..side", "nope"]
    docs = [json.loads(line) for line in packscope("-C", refs_repo, "lookup", "--json", *revs).stdout.splitlines()]
    assert len(docs) == len(revs)
    for rev, d in zip(revs[:5], docs[:5], strict=True):
        assert d["found"] and d["oid"] == git_text("rev-parse", rev, cwd=refs_repo).strip()
        assert "promised" not in d
    assert docs[3]["oid"] == git_text("rev-parse", "main~2", cwd=refs_repo).strip()  # the branch, not c1
    for d in docs[5:]:
        assert not d["found"] and d["error"] == "bad-revision" and d["promised"] is False and d["message"]


# --- damaged refs: clear errors, never a traceback ------------------------------------


@pytest.fixture
def bad_refs_repo(tmp_path):
    repo = tmp_path / "bad-refs"
    git("init", "-q", "-b", "main", repo)
    (repo / "f.txt").write_text("x\n")
    git("add", "f.txt", cwd=repo)
    git("commit", "-q", "-m", "one", cwd=repo)
    git("tag", "good", cwd=repo)
    git("branch", "packed-one", cwd=repo)
    git("pack-refs", "--all", cwd=repo)
    refs = repo / ".git" / "refs"
    (refs / "heads" / "broken").write_text("not an id\n")
    (refs / "heads" / "dangling").write_text("ref: refs/heads/nowhere\n")
    (refs / "heads" / "loop-a").write_text("ref: refs/heads/loop-b\n")
    (refs / "heads" / "loop-b").write_text("ref: refs/heads/loop-a\n")
    (refs / "heads" / "to-main").write_text("ref: refs/heads/main\n")
    (refs / "heads" / "bad..name").write_text(git_text("rev-parse", "HEAD", cwd=repo))
    return repo


def test_bad_refs_are_clear_errors_in_cat_file(bad_refs_repo):
    for name, says in [("broken", "unparseable"), ("dangling", "dangling symbolic ref"), ("loop-a", "loop")]:
        p = packscope("-C", bad_refs_repo, "cat-file", "-t", name, check=False)
        err = p.stderr.decode()
        assert p.returncode == 128 and "Traceback" not in err, err
        assert f"unknown revision '{name}'" in err and says in err and "remedy:" in err
    stdin = "broken\ndangling\nloop-a\ngood\npacked-one\nmain\n"
    p = packscope("-C", bad_refs_repo, "cat-file", "--batch-check", input=stdin)
    assert b"Traceback" not in p.stderr
    assert p.stdout == git("cat-file", "--batch-check", cwd=bad_refs_repo, input=stdin, check=False)


def test_bad_refs_are_listed_by_info_never_fatal(bad_refs_repo):
    p = packscope("-C", bad_refs_repo, "info", "--json")
    assert p.returncode == 0 and b"Traceback" not in p.stderr
    info = json.loads(p.stdout)
    kinds = {(pb["area"], pb["kind"]) for pb in info["problems"]}
    assert {
        ("refs", "ref-unparseable"),
        ("refs", "ref-dangling"),
        ("refs", "ref-loop"),
        ("refs", "ref-bad-name"),
    } <= kinds
    listed = git_text("for-each-ref", "--format=%(refname)", cwd=bad_refs_repo).split()
    assert info["refs"]["total"] == len(listed) == 4  # good, main, packed-one, and the symref to main
    # A bad packed-refs line (git dies on it) is one more problem; the other refs still count.
    packed = bad_refs_repo / ".git" / "packed-refs"
    packed.write_text(packed.read_text() + "this line is garbage\n")
    info = json.loads(packscope("-C", bad_refs_repo, "info", "--json").stdout)
    assert info["refs"]["total"] == len(listed)
    assert any(
        pb["kind"] == "ref-unparseable" and pb["path"] == str(packed) and pb["offset"] is not None
        for pb in info["problems"]
    )
    people = packscope("-C", bad_refs_repo, "info")
    assert people.returncode == 0 and b"problems" in people.stdout and b"Traceback" not in people.stderr
