"""Walks that read the commit-graph (packscope.core.history.graph_walk) list what git lists.

Every repository is walked in several states built with ``git commit-graph
write``: no graph, a single file with and without changed-path Bloom
filters, a split chain whose layers have all, none and some filters, and a
stale graph that lacks the newest commits.  git runs on the same state, so
its walk uses the same graph (with a graph, --topo-order and --date-order
stream through git's incremental walk, whose order can differ from the
limited sort's); a damaged graph is compared with git told not to read one.
"""

from __future__ import annotations

import functools
import itertools

import pytest

from packscope.core.errors import BadCommitGraphError
from packscope.core.history.graph_walk import WalkSource
from packscope.core.history.walk import Excluded, walk
from tests import repos
from tests.object_source import core_store
from tests.repos import git, git_text

ORDERS = {"default": [], "date": ["--date-order"], "topo": ["--topo-order"]}


def build_variant(src, dst, variant: str):
    """A copy of ``src`` with the commit-graph state ``variant``."""
    repo = repos.copy_repo(src, dst)
    for p in (repo / "objects" / "info").glob("commit-graph*"):
        p.unlink() if p.is_file() else None
    if variant == "none":
        return repo
    if variant == "bloom":
        git("commit-graph", "write", "--reachable", "--changed-paths", cwd=repo)
    elif variant == "plain":
        git("commit-graph", "write", "--reachable", "--no-changed-paths", cwd=repo)
    elif variant in ("chain", "stale"):
        # oldest third of the commits (with filters), then the next third
        # (without), then the rest with only 3 filters computed
        commits = git_text("rev-list", "--all", "--topo-order", "--reverse", cwd=repo).split()
        third = len(commits) // 3
        git(
            "commit-graph",
            "write",
            "--stdin-commits",
            "--split=no-merge",
            "--changed-paths",
            cwd=repo,
            input="\n".join(commits[:third]) + "\n",
        )
        if variant == "chain":
            git(
                "commit-graph",
                "write",
                "--stdin-commits",
                "--split=no-merge",
                "--no-changed-paths",
                cwd=repo,
                input="\n".join(commits[: 2 * third]) + "\n",
            )
            git(
                "commit-graph",
                "write",
                "--reachable",
                "--split=no-merge",
                "--changed-paths",
                "--max-new-filters=3",
                cwd=repo,
            )
    else:
        raise ValueError(variant)
    return repo


VARIANTS = ["none", "bloom", "plain", "chain", "stale"]


@pytest.fixture(scope="module", params=VARIANTS)
def scenario_variant(request, scenario_repo, tmp_path_factory):
    repo = build_variant(scenario_repo, tmp_path_factory.mktemp("gw") / "scenario.git", request.param)
    return request.param, repo


@pytest.fixture(scope="module", params=VARIANTS)
def big_variant(request, random_history_repo, tmp_path_factory):
    repo = build_variant(random_history_repo, tmp_path_factory.mktemp("gw") / "big.git", request.param)
    return request.param, repo


@functools.cache
def _resolve(repo: str, revs: tuple) -> tuple:
    out = []
    for r in revs:
        if r == "--all":
            out += [bytes.fromhex(x) for x in git_text("for-each-ref", "--format=%(objectname)", cwd=repo).split()]
            out.append(bytes.fromhex(git_text("rev-parse", "HEAD", cwd=repo).strip()))
        elif ".." in r:
            a, b = r.split("..")
            out += [
                Excluded(bytes.fromhex(git_text("rev-parse", a, cwd=repo).strip())),
                bytes.fromhex(git_text("rev-parse", b, cwd=repo).strip()),
            ]
        else:
            out.append(bytes.fromhex(git_text("rev-parse", r, cwd=repo).strip()))
    return tuple(out)


def git_log(repo, revs, order, first_parent=False, paths=None, *, no_graph=False) -> list[str]:
    args = ["-c", "core.commitGraph=false"] if no_graph else []
    args += ["log", "--format=%H", *ORDERS[order], *(["--first-parent"] if first_parent else []), *revs]
    return git_text(*args, *(["--", *paths] if paths else []), cwd=repo).split()


def problems_walking(repo, cases, *, no_graph=False) -> list[str]:
    store = core_store(repo)
    source = WalkSource.open(None, store)
    try:
        out = []
        for revs, order, first_parent, paths in cases:
            want = git_log(repo, revs, order, first_parent, paths, no_graph=no_graph)
            got = [
                c.oid.hex()
                for c in walk(
                    store,
                    _resolve(str(repo), tuple(revs)),
                    order=order,
                    first_parent=first_parent,
                    paths=paths,
                    **source.walk_options(paths),
                )
            ]
            if got != want:
                at = next(i for i, (a, b) in enumerate(itertools.zip_longest(want, got)) if a != b)
                out.append(
                    f"{revs} {order} fp={first_parent} {paths}: git {len(want)}, ours {len(got)}, "
                    f"first difference at {at}"
                )
        return out
    finally:
        source.close()
        store.close()


SCENARIO_PATHS = [None, ["dir"], ["lib/x.c"], ["README"], ["gone.txt"], ["thing/inner"], ["dir/sub", "lib"]]


def test_scenario_walks_equal_gits_in_every_graph_state(scenario_variant):
    _, repo = scenario_variant
    cases = [
        (revs, order, fp, paths)
        for revs in (["--all"], ["main"], ["b3", "b1", "b2"], ["main..b1"], ["x", "y"])
        for order in ORDERS
        for fp in (False, True)
        for paths in SCENARIO_PATHS
    ]
    assert problems_walking(repo, cases) == []


def test_generated_history_walks_equal_gits_in_every_graph_state(big_variant):
    _, repo = big_variant
    cases = [
        (revs, order, fp, paths)
        for revs in (["--all"], ["mid..main"])
        for order in ORDERS
        for fp in (False, True)
        for paths in (None, ["d0"], ["d1/e1", "top.txt"])
    ]
    assert problems_walking(repo, cases) == []


def test_the_graph_answers_and_generations_switch_on_the_incremental_topo_walk(big_variant):
    variant, repo = big_variant
    store = core_store(repo)
    source = WalkSource.open(None, store)
    try:
        assert (source.graph is not None) == (variant != "none")
        assert source.generation_numbers == (variant != "none")
        list(walk(store, _resolve(str(repo), ("--all",)), **source.walk_options()))
        if variant in ("bloom", "plain", "chain"):
            assert source.graph_commits > 0 and source.reader.declined < 100
    finally:
        source.close()
        store.close()


def test_without_a_graph_first_parent_topo_order_differs_from_the_graphs(scenario_repo, tmp_path):
    # The case that makes the incremental walk necessary: with --first-parent,
    # y2 (merged as a second parent) is held back by the limited sort only.
    with_graph = build_variant(scenario_repo, tmp_path / "g.git", "plain")
    args = ("topo", True, ["README"])
    assert git_log(with_graph, ["--all"], *args) != git_log(with_graph, ["--all"], *args, no_graph=True)
    assert problems_walking(with_graph, [(["--all"], *args)]) == []
    assert problems_walking(build_variant(scenario_repo, tmp_path / "n.git", "none"), [(["--all"], *args)]) == []


def test_bloom_filters_spare_tree_reads_and_change_nothing(random_history_repo, tmp_path):
    repo = build_variant(random_history_repo, tmp_path / "bloom.git", "bloom")
    store = core_store(repo)
    source = WalkSource.open(None, store)
    try:
        hook = source.first_parent_unchanged(["d0"])
        assert hook is not None
        calls = []

        def counting(oid):
            result = hook(oid)
            calls.append(result)
            return result

        starts = _resolve(str(repo), ("main",))
        got = [
            c.oid.hex()
            for c in walk(store, starts, paths=["d0"], commit_info=source.commit_info, first_parent_unchanged=counting)
        ]
        assert got == git_log(repo, ["main"], "default", paths=["d0"])
        assert any(calls) and not all(calls)
        assert source.first_parent_unchanged(["."]) is None  # everything: no filter can say "unchanged"
    finally:
        source.close()
        store.close()


def test_git_would_not_use_the_graph_so_neither_do_we(scenario_repo, tmp_path):
    repo = build_variant(scenario_repo, tmp_path / "off.git", "bloom")
    from packscope.core.repo.repository import Repository

    git("config", "core.commitGraph", "false", cwd=repo)
    source = WalkSource.open(Repository.open(repo), core_store(repo))
    assert source.graph is None and source.reasons == ["core.commitGraph is false"]
    git("config", "--unset", "core.commitGraph", cwd=repo)
    git(
        "update-ref",
        "refs/replace/" + git_text("rev-parse", "b1", cwd=repo).strip(),
        git_text("rev-parse", "b2", cwd=repo).strip(),
        cwd=repo,
    )
    source = WalkSource.open(Repository.open(repo), core_store(repo))
    assert source.graph is None and source.reasons == ["refs/replace/ refs exist"]


def _corrupt_parent_position(repo):
    """Point the first commit's first parent far past the end of the graph."""
    path = repo / "objects" / "info" / "commit-graph"
    data = bytearray(path.read_bytes())
    nchunks = data[6]
    table = {
        bytes(data[8 + 12 * k : 12 + 12 * k]): int.from_bytes(data[12 + 12 * k : 20 + 12 * k], "big")
        for k in range(nchunks)
    }
    cdat = table[b"CDAT"]
    data[cdat + 20 : cdat + 24] = (0x0FFFFFFF).to_bytes(4, "big")
    path.write_bytes(bytes(data))


def test_a_damaged_graph_is_dropped_once_and_the_walk_equals_gits_without_it(scenario_repo, tmp_path):
    repo = build_variant(scenario_repo, tmp_path / "bad.git", "bloom")
    _corrupt_parent_position(repo)
    store = core_store(repo)
    source = WalkSource.open(None, store)
    got = [c.oid.hex() for c in walk(store, _resolve(str(repo), ("--all",)), **source.walk_options())]
    assert got == git_log(repo, ["--all"], "default", no_graph=True)
    assert len(source.problems) == 1 and isinstance(source.problems[0], BadCommitGraphError)
    assert source.graph is None
    # a file that does not even open: recorded at once, walks read objects
    (repo / "objects" / "info" / "commit-graph").write_bytes(b"CGPH\x01")
    source = WalkSource.open(None, core_store(repo))
    assert source.graph is None and len(source.problems) == 1
    assert problems_walking(repo, [(["--all"], "topo", False, None)], no_graph=True) == []
