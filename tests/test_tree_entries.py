"""packscope.core.history.tree_entries: entries found the quick ways are the entries git sees,
and the walk's path limiter answers what `git diff-tree -- PATHS` answers."""

from __future__ import annotations

import itertools

import pytest

from packscope.core.errors import CorruptObjectError
from packscope.core.history.tree_diff import PathLimiter
from packscope.core.history.tree_entries import EntryPathLimiter, TreeEntries, token
from packscope.core.oid import SHA1
from tests import repos
from tests.object_source import core_store
from tests.repos import SCENARIO_PATHSPECS, git, git_text


def raw_tree(entries) -> bytes:
    return b"".join(m + b" " + n + b"\0" + o for m, n, o in entries)


def source(trees: dict):
    def read(oid):
        return "tree", trees[oid]

    return read


def test_a_name_inside_another_entry_is_not_taken_for_an_entry():
    one, two = b"\1" * 20, b"\2" * 20
    # " a\0" first occurs inside the entry named "x a", and "b" only inside "x b"
    data = raw_tree([(b"100644", b"x a", one), (b"100644", b"x b", two), (b"100644", b"a", two)])
    tid = SHA1.hash_object("tree", data)
    t = TreeEntries(source({tid: data}), SHA1)
    assert t.entry(tid, b"a") == (b"100644", b"a", two)
    assert t.entry(tid, b"b") is None
    assert t.entry(tid, b"x a") == (b"100644", b"x a", one)
    assert t.entries(tid)[b"a"] == (b"100644", b"a", two)
    assert token(t.entry(tid, b"x b")) in t.tokens(tid)


def test_an_id_holding_the_name_bytes_is_not_taken_for_an_entry():
    fake = b" a\0" + b"\7" * 17  # an id whose bytes spell " a\0"
    data = raw_tree([(b"100644", b"q", fake), (b"40000", b"a", b"\3" * 20)])
    tid = SHA1.hash_object("tree", data)
    t = TreeEntries(source({tid: data}), SHA1)
    assert t.entry(tid, b"a") == (b"40000", b"a", b"\3" * 20)


def test_a_damaged_tree_is_reported():
    data = raw_tree([(b"100644", b"a", b"\1" * 20)]) + b"10x644 b\0" + b"\2" * 20
    tid = SHA1.hash_object("tree", data)
    t = TreeEntries(source({tid: data}), SHA1)
    for ask in (lambda: t.entries(tid), lambda: t.tokens(tid), lambda: t.entry(tid, b"b")):
        with pytest.raises(CorruptObjectError):
            ask()


@pytest.mark.parametrize("bad_mode", [b"100648", b"9"])
def test_a_mode_with_8_or_9_near_the_start_is_damage_not_an_entry(bad_mode):
    # Early in a long tree, so that entry() reads it entry by entry (near())
    # rather than indexing the whole tree.
    later = [(b"100644", b"z%02d" % i, bytes([i]) * 20) for i in range(40)]
    data = raw_tree(
        [(b"100644", b"a", b"\1" * 20), (bad_mode, b"b", b"\2" * 20), (b"100644", b"c", b"\3" * 20), *later]
    )
    tid = SHA1.hash_object("tree", data)
    for name in (b"b", b"c"):
        t = TreeEntries(source({tid: data}), SHA1)
        with pytest.raises(CorruptObjectError):
            t.entry(tid, name)
    # Spelled in octal digits, the same tree reads near its start.
    good = data.replace(bad_mode + b" b", b"100644 b")
    gid = SHA1.hash_object("tree", good)
    t = TreeEntries(source({gid: good}), SHA1)
    assert t.near(gid, b"b") == (b"100644", b"b", b"\2" * 20)


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@pytest.mark.parametrize("paths", SCENARIO_PATHSPECS, ids=" ".join)
def test_the_walks_limiter_agrees_with_git_diff_tree(scenario_repo, paths):
    store = core_store(scenario_repo)
    ours = EntryPathLimiter(store.read, store.fmt, paths)
    theirs = PathLimiter(store, paths)
    lines = git_text("rev-list", "--all", "--parents", cwd=scenario_repo).splitlines()
    for line in lines:
        c, *ps = line.split()
        tree = git_text("rev-parse", f"{c}^{{tree}}", cwd=scenario_repo).strip()
        for p in ps or [None]:
            ptree = git_text("rev-parse", f"{p}^{{tree}}", cwd=scenario_repo).strip() if p else None
            args = [ptree or EMPTY_TREE, tree]  # a root commit: against the empty tree
            want = bool(git("diff-tree", "-r", "--name-only", *args, "--", *paths, cwd=scenario_repo).strip())
            a = bytes.fromhex(ptree) if ptree else None
            assert ours.changed(a, bytes.fromhex(tree)) == want == theirs.changed(a, bytes.fromhex(tree)), (c, p)


def test_mode_spellings_and_empty_directories_are_no_change(tmp_path):
    from tests.test_last_modified import build_spellings_repo

    repo = build_spellings_repo(tmp_path)
    store = core_store(repo)
    trees = [bytes.fromhex(x) for x in git_text("log", "--format=%T", "main", cwd=repo).split()][::-1]
    for paths, want in (
        (["f"], [False, False]),
        (["d"], [False, False]),
        (["e"], [False, False]),
        (["keep"], [False, True]),
        (["."], [False, True]),
    ):
        limiter = EntryPathLimiter(store.read, store.fmt, paths)
        assert [limiter.changed(a, b) for a, b in itertools.pairwise(trees)] == want, paths
        assert [PathLimiter(store, paths).changed(a, b) for a, b in itertools.pairwise(trees)] == want, paths


def test_the_limiter_needs_a_path(scenario_repo):
    with pytest.raises(ValueError):
        EntryPathLimiter(core_store(scenario_repo).read, SHA1, [])
    assert repos  # (the builders module is what made the repositories above)
