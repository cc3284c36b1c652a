"""A walk reads each commit once: the tips of `log --all` too (a tip's
header, read to learn its type, is the header the walk keeps), with and
without a commit-graph, in every order; and the commits it lists are git's."""

from __future__ import annotations

from collections import Counter

import pytest

from packscope.core.history.graph_walk import WalkSource
from packscope.core.history.rev_args import ALL, walk_starts
from packscope.core.history.walk import walk
from packscope.core.repo.session import open_session
from tests.repos import git_text


@pytest.mark.parametrize("fixture", ["scenario_repo", "random_history_repo", "graph_repo"])
@pytest.mark.parametrize("order", ["default", "date", "topo"])
def test_every_commit_is_read_once(request, fixture, order):
    repo = request.getfixturevalue(fixture)
    session = open_session(str(repo))
    source = WalkSource.open(session.repo, session.store, refs=session.refs)
    try:
        options = source.walk_options(None)
        hook = options["commit_info"]
        reads: Counter[bytes] = Counter()

        def counted(oid: bytes):
            reads[oid] += 1
            return hook(oid)

        options["commit_info"] = counted
        starts = walk_starts([ALL], repo=session.repo, refs=session.refs, store=session.objects, cwd_prefix="")
        listed = [c.oid.hex() for c in walk(source.objects, starts, order=order, **options)]
    finally:
        source.close()
        session.close()
    flag = {"default": [], "date": ["--date-order"], "topo": ["--topo-order"]}[order]
    assert listed == git_text("rev-list", "--all", *flag, cwd=repo).split()
    assert reads and max(reads.values()) == 1, [o.hex() for o, n in reads.items() if n > 1][:3]
