"""`packscope show` of what is not a commit, and of several revisions, as
`git show` prints them: an annotated tag (its tag line, tagger, message and
signature as stored, then what it tags — a commit, a tree, another tag), a
tree's names (`HEAD^{tree}`, `HEAD:dir`; a directory with a `/`, a
submodule without), a blob's bytes, several revisions in one call (a blank
line between entries where git puts one, a commit shown once however often
it is named), the default format's Author lines through `.mailmap`, and
`format:` entries without a newline of their own.  In this process."""

from __future__ import annotations

import pytest

from tests.cli import packscope_show_here
from tests.repos import git, git_dated

SIGNED = "release one\n\nwith a body\n-----BEGIN PGP SIGNATURE-----\n\nnot a real one\n-----END PGP SIGNATURE-----\n"


@pytest.fixture(scope="module")
def objects_repo(tmp_path_factory):
    repo = tmp_path_factory.mktemp("objects") / "repo"
    git("init", "-q", "-b", "main", repo)
    clock = [1_700_000_000]
    env = {"GIT_AUTHOR_NAME": "old name", "GIT_AUTHOR_EMAIL": "old@example.com"}

    def commit(msg: str, add: bool = True) -> None:
        clock[0] += 60
        if add:
            git("add", "-A", cwd=repo)
        git("commit", "-q", "-m", msg, cwd=repo, env={**env, "GIT_AUTHOR_DATE": f"{clock[0]} +0530"})

    (repo / "sub").mkdir()
    (repo / "sub" / "inner.txt").write_text("inner\n")
    (repo / "file.txt").write_text("one\ntwo\n")
    commit("first")
    (repo / "file.txt").write_text("one\ntwo\nthree\n")
    (repo / ".mailmap").write_text("New Name <new@example.com> <old@example.com>\n")
    first = git("rev-parse", "HEAD", cwd=repo).decode().strip()
    git("add", "-A", cwd=repo)
    git("update-index", "--add", "--cacheinfo", f"160000,{first},module", cwd=repo)  # a submodule entry
    commit("second", add=False)
    tagger = {"GIT_COMMITTER_NAME": "A Tagger", "GIT_COMMITTER_EMAIL": "tagger@example.com"}
    for name, target, message in (
        ("v1", "HEAD~1", SIGNED),
        ("nested", "v1", "a tag of a tag\n"),
        ("treetag", "HEAD^{tree}", "a tree's tag\n"),
    ):
        clock[0] += 60
        git_dated(f"{clock[0]} -0700", "tag", "-a", name, "-m", message, target, cwd=repo)
    git("tag", "light", "HEAD", cwd=repo, env=tagger)
    return repo


CASES = [
    ["v1"],
    ["-s", "v1"],
    ["-s", "--format=%s", "v1"],
    ["-s", "--format=", "v1"],
    ["--stat", "nested"],
    ["treetag"],
    ["light", "-s"],
    ["HEAD^{tree}"],
    ["HEAD:sub"],
    ["HEAD:file.txt"],
    ["-s", "HEAD", "HEAD~1", "HEAD", "v1"],  # each commit once
    ["HEAD:file.txt", "-s", "HEAD", "HEAD^{tree}", "HEAD:file.txt", "v1"],
    ["--format=%h %aN", "--stat", "HEAD", "HEAD~1"],
    ["--pretty=format:%h", "--stat", "HEAD", "HEAD~1"],
    ["-s", "--pretty=format:%h", "v1", "HEAD"],
    ["-s", "--pretty=format:%h"],
]


@pytest.mark.parametrize("words", CASES, ids=" ".join)
def test_show_equals_git_show(objects_repo, words, monkeypatch):
    want = git("show", *words, cwd=objects_repo, env={"COLUMNS": "80"})
    assert packscope_show_here(objects_repo, words, monkeypatch) == want


def test_the_repository_holds_what_the_tests_are_about(objects_repo):
    """A tag of a tag and of a tree, a signature in a tag's message, a
    submodule and a directory in the tree, an author the mailmap maps."""
    assert git("cat-file", "-t", "nested^{tag}^{tag}", cwd=objects_repo) == b"tag\n"
    assert git("cat-file", "-p", "nested", cwd=objects_repo).startswith(b"object ")
    listing = git("show", "HEAD^{tree}", cwd=objects_repo).decode()
    assert "\nsub/\n" in listing and "\nmodule\n" in listing
    assert "BEGIN PGP SIGNATURE" in git("show", "v1", cwd=objects_repo).decode()
    assert "Author: New Name <new@example.com>" in git("show", "-s", "HEAD", cwd=objects_repo).decode()
