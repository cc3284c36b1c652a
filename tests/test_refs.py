"""packscope.core.repo.refs against git for-each-ref / rev-parse / check-ref-format."""

from __future__ import annotations

import subprocess

import pytest

from packscope.core.errors import BadRefError
from packscope.core.repo.packed_refs import parse_packed_refs
from packscope.core.repo.ref_syntax import Ref, check_refname
from packscope.core.repo.refs import MAX_SYMREF_READS, RefStore
from packscope.core.repo.repository import Repository
from tests.repos import REFS_REPO_CLASHES, git, git_env, git_text, refs_worktree


def store_for(path) -> RefStore:
    return RefStore(Repository.discover(path, env={}))


def git_for_each_ref(cwd) -> list[tuple[str, str]]:
    out = git_text("for-each-ref", "--format=%(refname) %(objectname)", cwd=cwd)
    return [tuple(line.split(" ")) for line in out.splitlines()]


def ours_resolved(store: RefStore, prefix: str = "refs/") -> list[tuple[str, str]]:
    rows = []
    for ref in store.iter_refs(prefix):
        try:
            rows.append((ref.name, store.resolve(ref.name).hex()))
        except BadRefError:
            continue  # git for-each-ref leaves out what does not resolve
    return rows


def rev_parse(cwd, name) -> str | None:
    out = git_text("rev-parse", "--verify", "-q", name, cwd=cwd, check=False).strip()
    return out or None


@pytest.fixture
def small(tmp_path):
    """A throwaway repository to damage: main and a tag, packed."""
    r = tmp_path / "small"
    git("init", "-q", "-b", "main", r)
    git("commit", "-q", "--allow-empty", "-m", "one", cwd=r)
    git("tag", "-a", "-m", "t", "v1", cwd=r)
    git("branch", "other", cwd=r)
    git("pack-refs", "--all", cwd=r)
    return r


def head_oid(r) -> bytes:
    return bytes.fromhex(git_text("rev-parse", "HEAD", cwd=r).strip())


# --- listing ------------------------------------------------------------------------


def test_iter_refs_matches_for_each_ref_in_the_main_worktree(refs_repo):
    assert ours_resolved(store_for(refs_repo)) == git_for_each_ref(refs_repo)


def test_iter_refs_matches_for_each_ref_in_a_linked_worktree(refs_repo):
    wt = refs_worktree(refs_repo)
    rows = ours_resolved(store_for(wt))
    assert rows == git_for_each_ref(wt)
    names = [n for n, _ in rows]
    assert "refs/bisect/bad" in names and "refs/worktree/mine" in names
    assert "refs/bisect/main-bisect" not in names  # the main worktree's, not ours


@pytest.mark.parametrize("prefix", ["refs/tags/", "refs/heads/x", "refs/remotes/origin/", "refs/x1", "refs/nope/"])
def test_iter_refs_filters_by_prefix_like_for_each_ref_patterns(refs_repo, prefix):
    store = store_for(refs_repo)
    expected = [row for row in git_for_each_ref(refs_repo) if row[0].startswith(prefix)]
    assert ours_resolved(store, prefix) == expected


def test_iter_refs_is_sorted_bytewise_and_reports_symrefs_as_stored(refs_repo):
    refs = list(store_for(refs_repo).iter_refs())
    names = [r.name for r in refs]
    assert names == sorted(names, key=str.encode)
    alias = next(r for r in refs if r.name == "refs/heads/alias")
    assert alias.symref == "refs/heads/main" and alias.oid is None


# --- sources and peeled values ------------------------------------------------------------------


def test_loose_refs_hide_packed_ones(refs_repo):
    store = store_for(refs_repo)
    side = store.read("refs/heads/side")
    assert side.source == "loose"
    assert side.oid.hex() == rev_parse(refs_repo, "refs/heads/side")
    packed = store.packed_refs()["refs/heads/side"]
    assert packed.oid != side.oid  # the stale packed value is still there, hidden
    assert store.read("refs/heads/o1").source == "packed"
    assert store.read("refs/tags/v2").source == "loose"


def test_packed_refs_header_traits_and_peeled_lines(refs_repo):
    store = store_for(refs_repo)
    store.packed_refs()
    assert {"peeled", "fully-peeled", "sorted"} <= store.packed_traits
    for tag in ("v1", "v1-outer", "tree-tag", "blob-tag"):
        ref = store.read(f"refs/tags/{tag}")
        assert ref.source == "packed"
        assert ref.peeled.hex() == rev_parse(refs_repo, f"{tag}^{{}}")
    assert store.read("refs/tags/light").peeled is None
    assert store.read("refs/heads/main").peeled is None


def test_ref_records_are_frozen_and_slotted(refs_repo):
    ref = store_for(refs_repo).read("HEAD")
    with pytest.raises(AttributeError):
        ref.name = "x"
    assert not hasattr(ref, "__dict__")
    assert isinstance(ref, Ref)


def test_object_ids_are_raw_bytes_of_the_repository_format(refs_repo):
    store = store_for(refs_repo)
    assert len(store.resolve("HEAD")) == store.fmt.rawsz


def test_absent_ref_reads_as_none(refs_repo):
    assert store_for(refs_repo).read("refs/heads/nope") is None


def test_invalid_names_are_refused(refs_repo):
    store = store_for(refs_repo)
    for bad in ("refs/heads/a..b", "refs/heads/x.lock", "../config", "refs/heads/", "logs/HEAD"):
        with pytest.raises(BadRefError) as e:
            store.read(bad)
        assert e.value.kind == "ref-bad-name"


# --- symbolic refs -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["HEAD", "refs/heads/alias", "refs/remotes/origin/HEAD", "ORIG_HEAD"])
def test_resolve_follows_symbolic_refs_like_rev_parse(refs_repo, name):
    assert store_for(refs_repo).resolve(name).hex() == rev_parse(refs_repo, name)


def test_follow_returns_the_chain(refs_repo):
    chain = store_for(refs_repo).follow("HEAD")
    assert [r.name for r in chain] == ["HEAD", "refs/heads/main"]
    assert chain[0].symref == "refs/heads/main" and chain[-1].oid is not None


def test_symref_depth_limit_matches_git(small):
    prev = "refs/heads/main"
    for i in range(MAX_SYMREF_READS + 1):
        git("symbolic-ref", f"refs/heads/s{i}", prev, cwd=small)
        prev = f"refs/heads/s{i}"
    store = store_for(small)
    for i in range(MAX_SYMREF_READS + 1):
        name = f"refs/heads/s{i}"
        git_ok = rev_parse(small, name) is not None
        if git_ok:
            assert store.resolve(name) == head_oid(small)
        else:
            with pytest.raises(BadRefError) as e:
                store.resolve(name)
            assert e.value.kind == "ref-too-deep"
    assert rev_parse(small, f"refs/heads/s{MAX_SYMREF_READS - 2}") is not None
    assert rev_parse(small, f"refs/heads/s{MAX_SYMREF_READS - 1}") is None


def test_symref_loop_is_reported_as_a_loop(small):
    git("symbolic-ref", "refs/heads/loop-a", "refs/heads/loop-b", cwd=small)
    git("symbolic-ref", "refs/heads/loop-b", "refs/heads/loop-a", cwd=small)
    git("symbolic-ref", "refs/heads/self", "refs/heads/self", cwd=small)
    store = store_for(small)
    for name in ("refs/heads/loop-a", "refs/heads/self"):
        with pytest.raises(BadRefError) as e:
            store.resolve(name)
        assert e.value.kind == "ref-loop" and "loop" in e.value.message
        assert rev_parse(small, name) is None
    assert ours_resolved(store) == git_for_each_ref(small)


def test_dangling_symref_is_reported_and_left_out_like_git(small):
    git("symbolic-ref", "refs/heads/dangling", "refs/heads/nowhere", cwd=small)
    store = store_for(small)
    with pytest.raises(BadRefError) as e:
        store.resolve("refs/heads/dangling")
    assert e.value.kind == "ref-dangling" and "refs/heads/nowhere" in e.value.message
    assert e.value.path.endswith("refs/heads/dangling")
    assert store.dwim("dangling") is None
    assert ours_resolved(store) == git_for_each_ref(small)


def test_unborn_head_is_dangling(tmp_path):
    r = tmp_path / "empty"
    git("init", "-q", "-b", "main", r)
    with pytest.raises(BadRefError, match="unborn") as e:
        store_for(r).resolve("HEAD")
    assert e.value.kind == "ref-dangling"


def test_missing_ref_resolves_to_ref_not_found(small):
    with pytest.raises(BadRefError) as e:
        store_for(small).resolve("refs/heads/nope")
    assert e.value.kind == "ref-not-found"


# --- dwim ---------------------------------------------------------------------------------


DWIM_NAMES = [
    "HEAD",
    "main",
    "heads/main",
    "refs/heads/main",
    *REFS_REPO_CLASHES,
    "tags/v1",
    "v1",
    "light",
    "alias",
    "nope",
]


@pytest.mark.parametrize("name", DWIM_NAMES)
def test_dwim_picks_the_ref_git_picks(refs_repo, name):
    # Every clashing candidate points at a different commit, so the id git
    # resolves the short name to tells which rule won.
    store = store_for(refs_repo)
    full = store.dwim(name)
    ours = None if full is None else store.resolve(full).hex()
    assert ours == rev_parse(refs_repo, name)


@pytest.mark.parametrize(
    "name, full",
    [
        ("x1", "refs/x1"),
        ("x2", "refs/tags/x2"),
        ("x3", "refs/heads/x3"),
        ("x4", "refs/remotes/x4"),
        ("origin", "refs/remotes/origin/HEAD"),
        ("main", "refs/heads/main"),
        ("HEAD", "HEAD"),
        ("heads/main", "refs/heads/main"),
        ("nope", None),
        ("", None),
        ("a..b", None),
    ],
)
def test_dwim_rule_order(refs_repo, name, full):
    assert store_for(refs_repo).dwim(name) == full


def test_dwim_all_lists_every_candidate_in_rule_order(refs_repo):
    assert store_for(refs_repo).dwim_all("x1") == ["refs/x1", "refs/tags/x1", "refs/heads/x1"]
    assert store_for(refs_repo).dwim_all("x3") == ["refs/heads/x3", "refs/remotes/x3"]


# --- worktrees ---------------------------------------------------------------------------------


def test_per_worktree_refs_live_in_each_worktrees_git_dir(refs_repo):
    wt = refs_worktree(refs_repo)
    main_store, wt_store = store_for(refs_repo), store_for(wt)
    assert main_store.follow("HEAD")[-1].name == "refs/heads/main"
    assert wt_store.follow("HEAD")[-1].name == "refs/heads/feature"
    assert wt_store.read("refs/bisect/bad") is not None
    assert main_store.read("refs/bisect/bad") is None
    assert wt_store.read("refs/bisect/main-bisect") is None
    assert wt_store.resolve("refs/heads/main") == main_store.resolve("refs/heads/main")  # shared


@pytest.mark.parametrize(
    "where, name",
    [
        ("wt", "main-worktree/HEAD"),
        ("main", "worktrees/{wt}/HEAD"),
        ("wt", "worktrees/{wt}/HEAD"),
        ("main", "main-worktree/HEAD"),
        ("wt", "main-worktree/refs/bisect/main-bisect"),
        ("main", "worktrees/{wt}/refs/bisect/bad"),
    ],
)
def test_cross_worktree_ref_forms_match_git(refs_repo, where, name):
    wt = refs_worktree(refs_repo)
    cwd = wt if where == "wt" else refs_repo
    name = name.format(wt=wt.name)
    expected = rev_parse(cwd, name)
    assert expected is not None
    assert store_for(cwd).resolve(name).hex() == expected


# --- damage -------------------------------------------------------------------------------


def test_bad_packed_refs_line_is_recorded_and_the_others_still_read(small):
    packed = small / ".git" / "packed-refs"
    lines = packed.read_bytes().split(b"\n")
    lines.insert(2, b"this is not a ref line")
    data = b"\n".join(lines)
    packed.write_bytes(data)
    store = store_for(small)
    assert store.resolve("refs/heads/other") == head_oid(small)
    assert store.read("refs/tags/v1").peeled == head_oid(small)
    (problem,) = store.problems
    assert problem.kind == "ref-unparseable"
    assert problem.path == str(packed)
    assert problem.line == 3 and "line 3" in problem.message
    assert problem.offset == data.index(b"this is not")
    assert [n for n, _ in ours_resolved(store)] == ["refs/heads/main", "refs/heads/other", "refs/tags/v1"]


@pytest.mark.parametrize(
    "garbage, why",
    [
        (b"^" + b"0" * 40 + b"\n", "peeled line without a ref"),
        (b"zz" + b"0" * 38 + b" refs/heads/bad\n", "hex digits"),
        (b"0" * 40 + b" refs/heads/a..b\n", "invalid ref name"),
        (b"0" * 40 + b"\trefs/heads/tab\n", "hex digits"),
        (b"0" * 40 + b" refs/heads/trailing", "unterminated"),
    ],
)
def test_packed_refs_parser_reports_each_kind_of_bad_line(garbage, why):
    header, good = b"# pack-refs with: peeled \n", b"1" * 40 + b" refs/heads/good\n"
    # A peeled line right after "good" would be good's; put the orphan first.
    data = header + garbage + good if garbage.startswith(b"^") else header + good + garbage
    refs, traits, problems = parse_packed_refs(data, 40, "packed-refs")
    assert "refs/heads/good" in refs and traits == {"peeled"}
    (problem,) = problems
    assert why in problem.message and problem.kind == "ref-unparseable"


def test_peeled_line_after_a_bad_line_is_dropped_with_it():
    data = b"x bad\n^" + b"2" * 40 + b"\n" + b"1" * 40 + b" refs/tags/t\n^" + b"3" * 40 + b"\n"
    refs, _, problems = parse_packed_refs(data, 40, "packed-refs")
    assert len(problems) == 1
    assert refs["refs/tags/t"].peeled == bytes.fromhex("3" * 40)


def test_malformed_loose_ref_is_recorded_and_skipped_but_raises_when_read(small):
    (small / ".git" / "refs" / "heads" / "broken").write_text("not an id\n")
    store = store_for(small)
    names = [r.name for r in store.iter_refs()]
    assert "refs/heads/broken" not in names and "refs/heads/main" in names
    (problem,) = store.problems
    assert problem.kind == "ref-unparseable" and problem.path.endswith("refs/heads/broken")
    with pytest.raises(BadRefError) as e:
        store.read("refs/heads/broken")
    assert e.value.kind == "ref-unparseable"
    assert ours_resolved(store) == git_for_each_ref(small)


def test_broken_loose_ref_hides_the_packed_one_like_git(small):
    (small / ".git" / "refs" / "heads" / "other").write_text("garbage\n")
    store = store_for(small)
    assert "refs/heads/other" not in [r.name for r in store.iter_refs()]
    assert ours_resolved(store) == git_for_each_ref(small)


def test_loose_ref_in_the_wrong_object_format_is_unparseable(small):
    (small / ".git" / "refs" / "heads" / "long").write_text("a" * 64 + "\n")
    with pytest.raises(BadRefError, match="sha1"):
        store_for(small).read("refs/heads/long")


def test_files_with_invalid_ref_names_are_recorded_not_listed(small):
    (small / ".git" / "refs" / "heads" / "x..y").write_text(git_text("rev-parse", "HEAD", cwd=small))
    (small / ".git" / "refs" / "heads" / "x.lock").write_text(git_text("rev-parse", "HEAD", cwd=small))
    store = store_for(small)
    names = [r.name for r in store.iter_refs()]
    assert "refs/heads/x..y" not in names and "refs/heads/x.lock" not in names
    assert [(p.kind, p.path) for p in store.problems] == [("ref-bad-name", str(small / ".git/refs/heads/x..y"))]


def test_loose_ref_with_trailing_text_reads_like_fetch_head(small):
    oid = git_text("rev-parse", "HEAD", cwd=small).strip()
    (small / ".git" / "FETCH_HEAD").write_text(f"{oid}\t\tbranch 'main' of somewhere\n")
    assert store_for(small).resolve("FETCH_HEAD").hex() == oid == rev_parse(small, "FETCH_HEAD")


def test_symlink_symref_is_read_as_symbolic(small):
    link = small / ".git" / "refs" / "heads" / "linked"
    link.symlink_to("refs/heads/main")  # git's old symlink form; the link text is the ref name
    store = store_for(small)
    assert store.read("refs/heads/linked").symref == "refs/heads/main"
    assert store.resolve("refs/heads/linked") == head_oid(small)


def test_packed_refs_are_reread_when_the_file_changes(small):
    store = store_for(small)
    assert store.read("refs/heads/gone-later") is None
    oid = git_text("rev-parse", "HEAD", cwd=small).strip()
    git("update-ref", "refs/heads/gone-later", oid, cwd=small)
    git("pack-refs", "--all", cwd=small)
    assert store.read("refs/heads/gone-later").source == "packed"


# --- ref name rules --------------------------------------------------------------------------------


REFNAMES = [
    "refs/heads/main",
    "main",
    "HEAD",
    "refs/heads/a..b",
    "refs/heads/.hidden",
    "refs/heads/x.lock",
    "refs/heads/x.lock/y",
    "refs/heads/a b",
    "refs/heads/a~b",
    "refs/heads/a^b",
    "refs/heads/a:b",
    "refs/heads/a?b",
    "refs/heads/a*b",
    "refs/heads/a[b",
    "refs/heads/a\\b",
    "refs/heads/a@{b",
    "@",
    "refs/heads/@",
    "refs/heads/a/",
    "/refs/heads/a",
    "refs//heads/a",
    "refs/heads/a.",
    "refs/heads/a{b}",
    "refs/heads/\u00e9",
    "refs/heads/a\x7fb",
    "refs/heads/a\tb",
    "refs/heads/-x",
    "refs/heads/a.b",
    "a",
    "refs/heads/a@b",
]


@pytest.mark.parametrize("name", REFNAMES)
@pytest.mark.parametrize("onelevel", [False, True])
def test_check_refname_agrees_with_git_check_ref_format(name, onelevel):
    args = ["git", "check-ref-format"] + (["--allow-onelevel"] if onelevel else []) + [name]
    git_ok = subprocess.run(args, env=git_env(), capture_output=True).returncode == 0
    assert check_refname(name, allow_onelevel=onelevel) is git_ok
