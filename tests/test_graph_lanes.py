"""The graph column's lanes against ``git log --graph``: every commit sits
in the column where git draws its ``*``, on histories with criss-cross
merges, octopus merges, several roots and many branches."""

from __future__ import annotations

import re

import pytest

from packscope.core.history.graph_lanes import GraphLanes, GraphRow, draw_row
from tests.repos import git_text

HEX = re.compile(r"[0-9a-f]{40}")


def git_graph(repo, *args: str) -> list[tuple[str, int]]:
    """(commit, column of its ``*``) in git's order, from ``git log --graph``."""
    out = []
    for line in git_text("log", "--graph", "--format=%H", *args, cwd=repo).splitlines():
        m = HEX.search(line)
        if m:
            star = line.index("*")
            assert star % 2 == 0, line
            out.append((m.group(0), star // 2))
    return out


def parents_of(repo) -> dict[str, list[str]]:
    table = {}
    for line in git_text("rev-list", "--all", "--parents", cwd=repo).splitlines():
        oid, *parents = line.split()
        table[oid] = parents
    return table


def lanes_in_order(order: list[str], parents: dict[str, list[str]]) -> list[GraphRow]:
    lanes = GraphLanes()
    return [lanes.add(bytes.fromhex(c), [bytes.fromhex(p) for p in parents[c]]) for c in order]


@pytest.mark.parametrize("repo_name", ["scenario_repo", "graph_repo", "random_history_repo"])
@pytest.mark.parametrize("args", [("--all",), ("--all", "--date-order"), ("HEAD",)])
def test_every_commit_sits_in_the_column_git_draws_it_in(request, repo_name, args):
    repo = request.getfixturevalue(repo_name)
    drawn = git_graph(repo, *args)
    assert len(drawn) > 10
    rows = lanes_in_order([c for c, _ in drawn], parents_of(repo))
    mismatches = [(c, col, row.lane) for (c, col), row in zip(drawn, rows, strict=True) if col != row.lane]
    assert mismatches == []


def test_the_histories_hold_the_shapes_that_matter(scenario_repo, graph_repo, random_history_repo):
    """The comparison above covers merges of two and of more parents, and
    commits placed right of the first column (the lane rule is exercised)."""
    shapes = set()
    for repo in (scenario_repo, graph_repo, random_history_repo):
        table = parents_of(repo)
        shapes |= {min(len(p), 3) for p in table.values()}
        assert any(col > 0 for _, col in git_graph(repo, "--all"))
    assert shapes == {0, 1, 2, 3}  # roots, plain commits, merges, octopus merges


def test_a_merge_opens_a_lane_and_the_lines_join_again():
    a, b, c, d = (bytes([i]) * 20 for i in range(1, 5))
    lanes = GraphLanes()
    merge = lanes.add(d, [c, b])  # d merges c (first parent) and b
    assert (merge.lane, merge.after) == (0, (c, b))
    assert draw_row(merge) == "*\\"
    side = lanes.add(b, [a])
    assert (side.lane, side.after) == (1, (c, a))
    main = lanes.add(c, [a])  # a is already expected right of c: the lines join
    assert (main.lane, main.after) == (0, (a,))
    assert lanes.add(a, []).after == ()  # a root ends its lane
