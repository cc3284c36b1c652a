"""packscope.core.repo.revision against git rev-parse and git cat-file --batch-check.

The object store here is core's ObjectStore (tests.object_source.core_store);
revision.py only uses the small read/read_header/resolve_prefix/fmt protocol.
"""

from __future__ import annotations

import hashlib

import pytest

from packscope.core.errors import (
    AmbiguousObjectError,
    BadRevisionError,
    LookupFailedError,
    MissingObjectError,
    PackscopeError,
)
from packscope.core.repo.refs import RefStore
from packscope.core.repo.repository import Repository
from packscope.core.repo.revision import Step, resolve_revision, split_revision
from tests.object_source import core_store
from tests.repos import (
    REFS_REPO_CLASHES,
    REFS_REPO_NAMES,
    REFS_REPO_PATHS,
    fill_placeholders,
    git,
    git_text,
    refs_repo_placeholders,
    refs_worktree,
)


class Ctx:
    def __init__(self, path) -> None:
        self.path = path
        self.repo = Repository.discover(path, env={})
        self.refs = RefStore(self.repo)
        self.store = core_store(path)

    def resolve(self, text: str, **kw) -> bytes:
        return resolve_revision(text, repo=self.repo, refs=self.refs, store=self.store, **kw)

    def git(self, text: str) -> str | None:
        out = git_text("rev-parse", "--verify", "-q", text, cwd=self.path, check=False).strip()
        return out or None


@pytest.fixture(scope="module")
def ctx(refs_repo):
    c = Ctx(refs_repo)
    yield c
    c.store.close()


def fill(rev: str, path) -> str:
    return fill_placeholders(rev, refs_repo_placeholders(path))


GOOD = [
    *REFS_REPO_NAMES,
    "v1^{}",
    "v1-outer^{}",
    "v1-outer^{tag}",
    "v1^{tag}",
    "v1-outer^{commit}",
    "v1^0",
    "v1-outer~1",
    "v1-outer^2",
    "v1-outer^2~1",
    "tree-tag",
    "tree-tag^{}",
    "tree-tag^{tree}",
    "tree-tag^{object}",
    "blob-tag^{}",
    "blob-tag^{blob}",
    "HEAD~",
    "HEAD^",
    "HEAD^^",
    "HEAD~3^2~1",
    "HEAD~1^3",
    "HEAD~1^3~1",
    "HEAD^1^2",
    "HEAD~0",
    "HEAD^0",
    "HEAD~01",
    "HEAD~2~2",
    "@~2",
    "@^{tree}",
    "HEAD^{tree}",
    "HEAD^{commit}",
    "HEAD^{object}",
    "HEAD^{}",
    "HEAD^{tree}^{}",
    "HEAD^{commit}^{tree}",
    "HEAD^{commit}~1^{tree}",
    *REFS_REPO_PATHS,
    "v1-outer:a.txt",
    "tree-tag:",
    "HEAD:./a.txt",
    "HEAD^{tree}:",
    *REFS_REPO_CLASHES,
    "main-worktree/HEAD",
    "worktrees/<wt>/HEAD",
    "<c2>",  # a full id wins over the branch of that name
    "<c1_8>",  # a branch named like an abbreviation wins over the abbreviation
    "<c5_7>",
    "<c5_12>^{tree}",
    "<c5_10_upper>",
    "<v1_9>",
    "<v1_9>^{}",
    "<c5_7>~1",
    "<c5_7>:dir",
    "v1-2-g<c5_7>",  # git describe output
]

BAD = [
    "nope",
    "HEAD~99",
    "HEAD^4",
    "HEAD~1^4",
    "v1^{blob}",
    "blob-tag^{commit}",
    "tree-tag~1",
    "tree-tag^0",
    "HEAD:nope",
    "HEAD:a.txt/",
    "HEAD:dir//sub",
    "HEAD:/a.txt",
    "HEAD:dir/.",
    "HEAD:dir/../a.txt",
    "HEAD^{tree}~0",
    "HEAD^{tree}^",
    "HEAD^{tag}",
    "HEAD~1x",
    "HEAD^{}x",
    "HEAD^{foo}",
    "HEAD^{commit",
    "HEAD~+1",
    "HEAD:a.txt:b",
    "abc",
    "0000000",
    "dangling-nothing",
    "refs/heads/",
    "",
]


@pytest.mark.parametrize("rev", GOOD)
def test_resolves_like_git_rev_parse(ctx, rev):
    text = fill(rev, ctx.path)
    expected = ctx.git(text)
    assert expected is not None, f"git cannot resolve {text!r}"
    assert ctx.resolve(text).hex() == expected


@pytest.mark.parametrize("rev", BAD)
def test_fails_where_git_fails(ctx, rev):
    text = fill(rev, ctx.path)
    assert ctx.git(text) is None if text else True
    with pytest.raises((BadRevisionError, LookupFailedError)):
        ctx.resolve(text)


def test_every_revision_agrees_with_cat_file_batch_check(ctx):
    texts = [fill(r, ctx.path) for r in GOOD]
    out = git_text("cat-file", "--batch-check", cwd=ctx.path, input="\n".join(texts) + "\n").splitlines()
    for text, line in zip(texts, out, strict=True):
        oid, typ, size = line.split()
        got = ctx.resolve(text)
        assert (got.hex(), *ctx.store.read_header(got)) == (oid, typ, int(size)), text


def test_ref_that_looks_like_hex_beats_the_abbreviation(ctx):
    n = refs_repo_placeholders(ctx.path)
    c1, c5 = ctx.git("main~5"), ctx.git("main~2")
    assert c1.startswith(n["<c1_8>"])
    assert ctx.resolve(n["<c1_8>"]).hex() == c5  # the branch, not the object c1
    assert ctx.resolve(c1[:9]).hex() == c1 == ctx.git(c1[:9])  # one digit longer: no such ref


def test_full_length_hex_is_always_an_id_even_when_a_branch_has_that_name(ctx):
    c2 = refs_repo_placeholders(ctx.path)["<c2>"]
    assert ctx.refs.read(f"refs/heads/{c2}") is not None
    assert ctx.resolve(c2).hex() == c2


def test_gitlink_path_resolves_to_the_recorded_id_without_verification(ctx):
    text = "HEAD:mod/ule"
    assert ctx.resolve(text, verify=False).hex() == ctx.git(text)
    assert ctx.resolve(text).hex() == ctx.git(text)  # not verified: it names another repository's commit


def test_absent_full_id_is_missing_when_verified(ctx):
    absent = "1" * ctx.store.fmt.hexsz
    assert ctx.resolve(absent, verify=False).hex() == absent == ctx.git(absent)
    with pytest.raises(MissingObjectError) as e:
        ctx.resolve(absent)
    assert e.value.oid == absent and absent in e.value.message
    with pytest.raises(MissingObjectError):
        ctx.resolve(absent + "^{commit}")
    with pytest.raises(MissingObjectError):
        ctx.resolve(absent + "~1")


@pytest.mark.parametrize(
    "rev, why",
    [
        ("HEAD@{0}", "reflog"),
        ("@{-1}", "reflog"),
        ("main@{upstream}", "reflog"),
        ("HEAD^{/c1}", "message search"),
        (":a.txt", "index"),
        (":/c1", "index"),
        ("HEAD^!", "range"),
        ("HEAD^@", "range"),
        ("HEAD^-", "range"),
        ("main..side", "range"),
        ("main...side", "range"),
        ("^main", "range"),
    ],
)
def test_unsupported_syntax_says_so(ctx, rev, why):
    with pytest.raises(BadRevisionError) as e:
        ctx.resolve(rev)
    assert why in e.value.message


def test_errors_explain_what_went_wrong(ctx):
    with pytest.raises(BadRevisionError, match="expected blob type, but the object dereferences to tree type"):
        ctx.resolve("v1^{blob}")
    with pytest.raises(BadRevisionError, match="path 'dir/nope' does not exist in 'HEAD'"):
        ctx.resolve("HEAD:dir/nope")
    with pytest.raises(BadRevisionError, match="has 3 parent"):
        ctx.resolve("HEAD~1^4")
    with pytest.raises(BadRevisionError, match="history ends after 5"):
        ctx.resolve("HEAD~99")
    with pytest.raises(BadRevisionError, match="unknown revision 'nope'"):
        ctx.resolve("nope")


def test_relative_paths_use_the_cwd_prefix(ctx):
    assert ctx.resolve("HEAD:./c.txt", cwd_prefix="dir/sub").hex() == ctx.git("HEAD:dir/sub/c.txt")
    assert ctx.resolve("HEAD:../b.txt", cwd_prefix="dir/sub").hex() == ctx.git("HEAD:dir/b.txt")
    assert ctx.resolve("HEAD:./", cwd_prefix="dir").hex() == ctx.git("HEAD:dir")
    with pytest.raises(BadRevisionError, match="outside"):
        ctx.resolve("HEAD:../x")


def test_split_revision_parses_chains():
    assert split_revision("HEAD~2^2~1") == ("HEAD", (Step("~", 2), Step("^", 2), Step("~", 1)), None)
    assert split_revision("v1^{}^{tree}:a/b") == ("v1", (Step("peel", type=""), Step("peel", type="tree")), "a/b")
    assert split_revision("x~^") == ("x", (Step("~", 1), Step("^", 1)), None)
    with pytest.raises(BadRevisionError, match="message search"):
        split_revision("HEAD^{/a:b}")  # the colon inside braces does not start a path


def test_worktree_head_and_per_worktree_refs_resolve_from_a_linked_worktree(refs_repo):
    wt = Ctx(refs_worktree(refs_repo))
    try:
        for rev in ("HEAD", "HEAD~1", "bisect/bad", "refs/worktree/mine", "main-worktree/HEAD", "@:a.txt"):
            assert wt.resolve(rev).hex() == wt.git(rev), rev
    finally:
        wt.store.close()


def test_unborn_head_says_so(tmp_path):
    r = tmp_path / "empty"
    git("init", "-q", "-b", "main", r)
    c = Ctx(r)
    try:
        with pytest.raises(BadRevisionError, match="unborn"):
            c.resolve("HEAD")
    finally:
        c.store.close()


# --- ambiguous abbreviations ------------------------------------------------------


def _write_blob_with_prefix(repo, fmt, prefix: str) -> str:
    i = 0
    while True:
        data = b"collide %d\n" % i
        h = hashlib.new(fmt.hashname, b"blob %d\0" % len(data) + data).hexdigest()
        if h.startswith(prefix):
            assert git_text("hash-object", "-w", "--stdin", cwd=repo, input=data).strip() == h
            return h
        i += 1


def _write_commit_with_prefix(repo, fmt, prefix: str, tree: str) -> str:
    i = 0
    while True:
        data = (
            f"tree {tree}\nauthor A <a@x> 1600000000 +0000\ncommitter A <a@x> 1600000000 +0000\n\ntwin {i}\n"
        ).encode()
        h = hashlib.new(fmt.hashname, b"commit %d\0" % len(data) + data).hexdigest()
        if h.startswith(prefix):
            assert git_text("hash-object", "-t", "commit", "-w", "--stdin", cwd=repo, input=data).strip() == h
            return h
        i += 1


@pytest.fixture(params=["sha1", "sha256"])
def amb(tmp_path, request):
    r = tmp_path / "amb"
    git("init", "-q", "-b", "main", f"--object-format={request.param}", r)
    (r / "f").write_text("f\n")
    git("add", "f", cwd=r)
    git(
        "commit",
        "-q",
        "-m",
        "first subject",
        cwd=r,
        env={"GIT_AUTHOR_DATE": "1600000000 +0000", "GIT_COMMITTER_DATE": "1600000000 +0000"},
    )
    git("tag", "-a", "-m", "tagged", "t1", cwd=r, env={"GIT_COMMITTER_DATE": "1600000000 +0000"})
    c = Ctx(r)
    commit, tag = c.git("HEAD"), c.git("t1")
    c.blob_twin = _write_blob_with_prefix(r, c.store.fmt, commit[:4])
    c.tag_twin = _write_blob_with_prefix(r, c.store.fmt, tag[:4])
    c.commit, c.tag = commit, tag
    yield c
    c.store.close()


def test_ambiguous_abbreviation_lists_candidates_with_types(amb):
    prefix = amb.commit[:4]
    assert amb.git(prefix) is None
    with pytest.raises(AmbiguousObjectError) as e:
        amb.resolve(prefix)
    err = e.value
    assert [c[:2] for c in err.candidates] == [(amb.commit, "commit"), (amb.blob_twin, "blob")]
    assert "2020-09-13 - first subject" in err.candidates[0][2]
    assert f"{amb.commit[:7]} commit 2020-09-13 - first subject" in err.message
    assert f"{amb.blob_twin[:7]} blob" in err.message
    assert err.kind == "ambiguous"


def test_tags_are_listed_first_among_candidates(amb):
    with pytest.raises(AmbiguousObjectError) as e:
        amb.resolve(amb.tag[:4])
    assert [c[1] for c in e.value.candidates] == ["tag", "blob"]
    assert "t1" in e.value.candidates[0][2]


@pytest.mark.parametrize("suffix", ["~0", "^{commit}", "^0", ":", ":f", "^{tree}"])
def test_what_the_next_step_needs_disambiguates_like_git(amb, suffix):
    text = amb.commit[:4] + suffix
    assert amb.resolve(text).hex() == amb.git(text)


def test_a_tag_that_peels_to_a_commit_counts_as_committish(amb):
    text = amb.tag[:4] + "~0"
    assert amb.resolve(text).hex() == amb.git(text) == amb.commit


@pytest.mark.parametrize("suffix", ["^{}", "^{tag}", "^{blob}"])
def test_other_peels_do_not_disambiguate(amb, suffix):
    text = amb.tag[:4] + suffix
    assert amb.git(text) is None
    with pytest.raises(AmbiguousObjectError):
        amb.resolve(text)


def test_two_commits_with_one_prefix_stay_ambiguous_for_commit_steps(amb):
    tree = amb.git("HEAD^{tree}")
    twin = _write_commit_with_prefix(amb.path, amb.store.fmt, amb.commit[:4], tree)
    text = amb.commit[:4] + "~0"
    assert amb.git(text) is None
    with pytest.raises(AmbiguousObjectError) as e:
        amb.resolve(text)
    assert {c[0] for c in e.value.candidates} == {amb.commit, twin, amb.blob_twin}
    longer = amb.commit[:5] if amb.commit[4] != twin[4] else amb.commit[:12]
    assert amb.resolve(longer + "~0").hex() == amb.git(longer + "~0")


def test_every_error_is_a_packscope_error(amb):
    for text in ("nope", amb.commit[:4], "HEAD:nope", "1" * amb.store.fmt.hexsz):
        with pytest.raises(PackscopeError):
            amb.resolve(text)


def test_a_store_of_another_object_format_is_refused(ctx, tmp_path):
    other = tmp_path / "other"
    fmt = "sha1" if ctx.store.fmt.name == "sha256" else "sha256"
    git("init", "-q", f"--object-format={fmt}", other)
    with pytest.raises(PackscopeError, match="object store reads"):
        resolve_revision("HEAD", repo=Repository.discover(other, env={}), refs=ctx.refs, store=ctx.store)
