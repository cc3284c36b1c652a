"""Tree diffs and path limiting, compared with ``git diff-tree``."""

from __future__ import annotations

import random

import pytest

from packscope.core.history.tree_diff import PathLimiter, diff_trees, normalize_paths, paths_changed
from tests.object_source import CountingStore, core_store
from tests.repos import SCENARIO_PATHSPECS, SCENARIO_PATHSPECS_NEVER_CHANGED, git, git_text

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def tree_of(repo, rev) -> str:
    return git_text("rev-parse", f"{rev}^{{tree}}", cwd=repo).strip()


def git_name_status(repo, a, b, paths=None, recursive=True) -> list[tuple[str, bytes]]:
    out = git(
        "diff-tree",
        *(["-r"] if recursive else []),
        "--name-status",
        "--no-renames",
        "-z",
        a,
        b,
        *(["--", *paths] if paths else []),
        cwd=repo,
    )
    parts = out.split(b"\0")[:-1]
    return [(parts[i].decode(), parts[i + 1]) for i in range(0, len(parts), 2)]


def ours(src, a, b, paths=None, recursive=True) -> list[tuple[str, bytes]]:
    a = None if a is None else bytes.fromhex(a)
    b = None if b is None else bytes.fromhex(b)
    return [(c.status, c.path) for c in diff_trees(src, a, b, paths=paths, recursive=recursive)]


def commit_pairs(repo) -> list[tuple[str, str]]:
    """(parent, child) for every commit and each of its parents."""
    pairs = []
    for line in git_text("rev-list", "--all", "--parents", cwd=repo).splitlines():
        c, *ps = line.split()
        pairs += [(p, c) for p in ps]
    return pairs


def test_name_status_matches_git_for_every_commit_and_parent(scenario):
    repo, src = scenario
    pairs = commit_pairs(repo)
    assert len(pairs) > 30
    for p, c in pairs:
        a, b = tree_of(repo, p), tree_of(repo, c)
        assert ours(src, a, b) == git_name_status(repo, a, b), (p, c)


def test_name_status_covers_every_kind_of_change(scenario):
    repo, src = scenario
    a, b = tree_of(repo, "main~2^{/^root}"), tree_of(repo, "main")
    got = ours(src, a, b)
    assert got == git_name_status(repo, a, b)
    statuses = {s for s, _ in got}
    assert statuses == {"A", "D", "M", "T"}
    # a file replaced by a directory: the file deleted, then the new entries added
    assert ("D", b"thing") in got and ("A", b"thing/inner") in got
    assert got.index(("D", b"thing")) < got.index(("A", b"thing/inner"))
    assert ("T", b"link") in got and ("T", b"sub") in got and ("M", b"run.sh") in got


@pytest.mark.parametrize("paths", SCENARIO_PATHSPECS, ids=",".join)
def test_path_limited_name_status_matches_git(scenario, paths):
    repo, src = scenario
    root, tip = tree_of(repo, "main~2^{/^root}"), tree_of(repo, "main")
    assert ours(src, root, tip, paths) == git_name_status(repo, root, tip, paths)
    assert ours(src, tip, root, paths) == git_name_status(repo, tip, root, paths)


def test_without_recursion_changed_directories_are_single_entries(scenario):
    repo, src = scenario
    for rev in ("main", "b1", "b3"):
        a, b = tree_of(repo, "main~2^{/^root}"), tree_of(repo, rev)
        assert ours(src, a, b, recursive=False) == git_name_status(repo, a, b, recursive=False)


def test_diffs_against_the_empty_tree_list_everything(scenario):
    repo, src = scenario
    tip = tree_of(repo, "main")
    git("mktree", cwd=repo, input="")  # so that git can read the empty tree by id
    assert ours(src, None, tip) == git_name_status(repo, EMPTY_TREE, tip)
    assert ours(src, tip, EMPTY_TREE) == git_name_status(repo, tip, EMPTY_TREE)
    assert ours(src, tip, tip) == []


def test_identical_subtrees_are_never_read(scenario):
    repo, src = scenario
    store = CountingStore(src)
    a, b = tree_of(repo, "main~1"), tree_of(repo, "main")  # only lib/old differs
    changes = list(diff_trees(store, bytes.fromhex(a), bytes.fromhex(b)))
    assert [(c.status, c.path) for c in changes] == git_name_status(repo, a, b)
    # the two roots and the two lib/ trees; dir/ and the rest are equal by id
    want = [git_text("rev-parse", f"{r}{d}", cwd=repo).strip() for r in ("main~1", "main") for d in ("^{tree}", ":lib")]
    assert sorted(store.reads) == sorted(bytes.fromhex(x) for x in want)


def git_changed_pairs(repo, tree_pairs, paths) -> list[bool]:
    """For each (tree, tree) pair, whether git diff-tree prints anything under
    paths — one git process for all pairs (each pair's "A B" header line is
    always printed, its changed paths follow)."""
    lines = "".join(f"{a} {b}\n" for a, b in tree_pairs)
    out = git_text("diff-tree", "--stdin", "-r", "--name-only", "--", *paths, cwd=repo, input=lines)
    changed: list[bool] = []
    for line in out.splitlines():
        words = line.split()
        if len(words) == 2 and all(len(w) == 40 for w in words):
            changed.append(False)
        else:
            changed[-1] = True
    assert len(changed) == len(tree_pairs)
    return changed


@pytest.mark.parametrize("paths", SCENARIO_PATHSPECS, ids=",".join)
def test_paths_changed_agrees_with_git_for_every_commit_and_parent(scenario, paths):
    repo, src = scenario
    trees = dict(line.split() for line in git_text("log", "--all", "--format=%H %T", cwd=repo).splitlines())
    pairs = [(trees[p], trees[c]) for p, c in commit_pairs(repo)]
    limiter = PathLimiter(src, paths)
    got = [limiter.changed(bytes.fromhex(a), bytes.fromhex(b)) for a, b in pairs]
    assert got == git_changed_pairs(repo, pairs, paths)
    assert any(got) or paths in SCENARIO_PATHSPECS_NEVER_CHANGED


def test_paths_changed_agrees_with_git_on_a_generated_history(random_history_repo):
    repo = random_history_repo
    src = core_store(repo)
    try:
        trees = dict(line.split() for line in git_text("log", "--all", "--format=%H %T", cwd=repo).splitlines())
        pairs = [(trees[p], trees[c]) for p, c in random.Random(3).sample(commit_pairs(repo), 150)]
        pairs += [(a, b) for (a, _), (_, b) in zip(pairs[:50], pairs[50:100], strict=True)]  # unrelated trees too
        for paths in (["d0"], ["d1/e1", "top.txt"], ["d2/e0/f8.txt"], ["d3/e2"]):
            got = [paths_changed(src, bytes.fromhex(a), bytes.fromhex(b), paths) for a, b in pairs]
            assert got == git_changed_pairs(repo, pairs, paths), paths
        for a, b in pairs[:25] + pairs[-10:]:
            assert ours(src, a, b, ["d0", "top.txt"]) == git_name_status(repo, a, b, ["d0", "top.txt"])
    finally:
        src.close()


def test_a_root_commit_touches_paths_only_if_it_has_them(scenario):
    repo, src = scenario
    root = bytes.fromhex(tree_of(repo, "main~2^{/^root}"))
    assert PathLimiter(src, ["dir"]).touches(root)
    assert not PathLimiter(src, ["other"]).touches(root)
    assert not PathLimiter(src, ["dir/a.txt/x"]).touches(root)


def test_path_limiting_reads_only_trees_along_the_paths(scenario):
    repo, src = scenario
    store = CountingStore(src)
    a, b = tree_of(repo, "main~2^{/^root}"), tree_of(repo, "main")
    assert PathLimiter(store, ["dir/sub/b.txt"]).changed(bytes.fromhex(a), bytes.fromhex(b))
    assert len(store.reads) == 6  # root, dir, dir/sub on each side


def test_pathspecs_are_normalised():
    assert normalize_paths(["dir/", "./a/b", ".", b"x//"]) == (b"dir", b"a/b", b"", b"x")
    with pytest.raises(ValueError):
        PathLimiter(None, [], reader=object())
