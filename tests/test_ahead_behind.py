"""ahead_behind counts what `git rev-list --count --left-right A...B`
counts, on a history with merges, criss-crosses and an octopus."""

from __future__ import annotations

import itertools

import pytest

from packscope.core.history.ahead_behind import ahead_behind, with_store_fallback
from packscope.core.history.graph_walk import WalkSource
from packscope.core.repo.session import open_session
from tests.repos import build_graph_repo, git_text


@pytest.fixture(scope="module")
def graph_repo(tmp_path_factory):
    return build_graph_repo(tmp_path_factory.mktemp("ahead-behind"))


def test_counts_equal_git_rev_list_left_right(graph_repo) -> None:
    names = git_text("for-each-ref", "--format=%(refname)", "refs/heads", "refs/tags", cwd=graph_repo).split()
    assert len(names) >= 3
    with open_session(str(graph_repo)) as session:
        source = WalkSource.open(session.repo, session.store, refs=session.refs)
        checked = 0
        for a, b in itertools.permutations(names[:8], 2):
            left, right = git_text("rev-list", "--count", "--left-right", f"{a}...{b}", cwd=graph_repo).split()
            oa, ob = session.resolve(f"{a}^{{commit}}"), session.resolve(f"{b}^{{commit}}")
            got = ahead_behind(with_store_fallback(source.commit_info, session.objects), oa, ob)
            assert (got.left, got.right, got.exact) == (int(left), int(right), True), (a, b)
            checked += int(left) + int(right)
        source.close()
    assert checked, "the refs should differ somewhere"


def test_the_count_stops_at_its_bound(graph_repo) -> None:
    with open_session(str(graph_repo)) as session:
        source = WalkSource.open(session.repo, session.store, refs=session.refs)
        root = git_text("rev-list", "--max-parents=0", "HEAD", cwd=graph_repo).split()[0]
        total = int(git_text("rev-list", "--count", f"{root}..HEAD", cwd=graph_repo))
        head = session.resolve("HEAD")
        info = with_store_fallback(source.commit_info, session.objects)
        got = ahead_behind(info, head, bytes.fromhex(root), limit=2)
        # below the clock skew at the top of this history: dates decrease
        tip, near = session.resolve("HEAD~6"), session.resolve("HEAD~8")
        stopped_near = ahead_behind(info, tip, near, limit=2)
        source.close()
    assert total > 4 * 2  # else the walk ends before its bound
    assert not got.exact and not got.left_exact and 2 <= got.left < total
    # HEAD~8 is reached from HEAD~6 before the bound: its side is known to be 0
    assert not stopped_near.left_exact
    assert (stopped_near.right, stopped_near.right_exact) == (0, True)
