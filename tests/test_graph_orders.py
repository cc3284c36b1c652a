"""Every walk order over a commit-graph lists what git lists: with and
without a graph, with and without changed-path Bloom filters, generation
numbers v1 (topological levels) and v2 (corrected commit dates), split
chains (mixing the two, and missing the newest commits), on a history with
criss-cross merges, octopus merges, same-second runs and clock skew.

git reads the same graph as core does (with generation numbers it streams
--topo-order and --date-order through its incremental walk), so each
state is its own oracle.
"""

from __future__ import annotations

import itertools
import random

import pytest

from packscope.core import native
from packscope.core.history.graph_walk import WalkSource
from packscope.core.history.walk import walk, walk_ids
from tests import repos
from tests.cli import packscope_in
from tests.object_source import core_store
from tests.repos import HistoryBuilder, git, git_text, init_bare

ORDERS = {"default": [], "date": ["--date-order"], "topo": ["--topo-order"]}
REVS = (["--all"], ["main"], ["side", "main"])
PATHS = (None, ["a"], ["d1/f1", "top"])


def tangled_history(seed: int = 5) -> HistoryBuilder:
    """Branches forking and merging at random: two-parent merges (some
    criss-cross), octopus merges of three and four, same-second runs, dates
    skewed into the past and the future."""
    rnd = random.Random(seed)
    h = HistoryBuilder()
    T = 1_700_000_000
    paths = ["a", "top", "d1/f1", "d1/f2", "d2/f3", "d2/e/f4"]
    heads = {"main": h.commit([], {p: f"{p} 0\n" for p in paths[:3]}, T, "root\n")}
    clock = T
    for n in range(220):
        clock += 60
        roll = rnd.random()
        when = (
            h.when[max(heads.values())]
            if roll < 0.15
            else clock - rnd.randrange(3600, 90_000)
            if roll < 0.2
            else clock + rnd.randrange(600, 9000)
            if roll < 0.23
            else clock
        )
        branch = rnd.choice(sorted(heads))
        tip = heads[branch]
        action = rnd.random()
        others = [b for b in sorted(heads) if heads[b] != tip]
        if action < 0.08 and len(others) >= 2:
            # an octopus of three or four
            merged = [heads[b] for b in rnd.sample(others, min(len(others), rnd.choice((2, 3))))]
            files = dict(h.files[tip])
            for m in merged:
                files.update({p: v for p, v in h.files[m].items() if rnd.random() < 0.5})
            heads[branch] = h.commit([tip, *merged], files, when, f"octopus {n}\n")
        elif action < 0.2 and others:
            other = rnd.choice(others)
            o = heads[other]
            files = dict(h.files[tip])
            files.update({p: v for p, v in h.files[o].items() if rnd.random() < 0.5})
            heads[branch] = h.commit([tip, o], files, when, f"merge {n}\n")
            if rnd.random() < 0.3:  # criss-cross: the other side merges the old tip
                heads[other] = h.commit([o, tip], dict(h.files[o]), when, f"criss-cross {n}\n")
        elif action < 0.27:
            heads[f"b{n}"] = h.derive(tip, when, {rnd.choice(paths): f"fork {n}\n"})
        else:
            changes = {rnd.choice(paths): f"{n}\n"}
            if rnd.random() < 0.05:
                changes[rnd.choice(paths)] = None
            heads[branch] = h.derive(tip, when, changes)
    heads.setdefault("side", heads[sorted(heads)[-1]])
    for name, mark in heads.items():
        h.ref(f"refs/heads/{name}", mark)
    return h


@pytest.fixture(scope="module")
def tangled_repo(tmp_path_factory):
    repo = init_bare(tmp_path_factory.mktemp("orders") / "tangled.git")
    tangled_history().write(repo)
    octopus = git_text("rev-list", "--all", "--min-parents=3", cwd=repo).split()
    assert len(octopus) >= 3  # the history has what it says
    return repo


def _write(repo, *args, version: int = 2, stdin: list[str] | None = None) -> None:
    git(
        "-c",
        f"commitGraph.generationVersion={version}",
        "commit-graph",
        "write",
        *args,
        cwd=repo,
        input=None if stdin is None else "\n".join(stdin) + "\n",
    )


def build_state(src, dst, state: str):
    """A copy of ``src`` with the commit-graph state ``state``."""
    repo = repos.copy_repo(src, dst)
    if state == "none":
        return repo
    commits = git_text("rev-list", "--all", "--topo-order", "--reverse", cwd=repo).split()
    third = len(commits) // 3
    if state == "v2-bloom":
        _write(repo, "--reachable", "--changed-paths")
    elif state == "v1-bloom":
        _write(repo, "--reachable", "--changed-paths", version=1)
    elif state == "v1-plain":
        _write(repo, "--reachable", "--no-changed-paths", version=1)
    elif state == "chain-v1-under-v2":  # corrected dates only in the top layer: levels are used
        _write(repo, "--stdin-commits", "--split=no-merge", "--changed-paths", version=1, stdin=commits[:third])
        _write(repo, "--reachable", "--split=no-merge", "--changed-paths")
    elif state == "chain-v2":  # three layers, filters in the first and the last
        _write(repo, "--stdin-commits", "--split=no-merge", "--changed-paths", stdin=commits[:third])
        _write(repo, "--stdin-commits", "--split=no-merge", "--no-changed-paths", stdin=commits[: 2 * third])
        _write(repo, "--reachable", "--split=no-merge", "--changed-paths")
    elif state == "stale-chain":  # the newest commits are in no layer
        _write(repo, "--stdin-commits", "--split=no-merge", "--changed-paths", stdin=commits[:third])
        _write(repo, "--stdin-commits", "--split=no-merge", "--changed-paths", stdin=commits[: 2 * third])
    else:
        raise ValueError(state)
    return repo


STATES = ["none", "v2-bloom", "v1-bloom", "v1-plain", "chain-v1-under-v2", "chain-v2", "stale-chain"]


@pytest.fixture(scope="module", params=STATES)
def state(request, tangled_repo, tmp_path_factory):
    return request.param, build_state(tangled_repo, tmp_path_factory.mktemp("st") / "repo.git", request.param)


def git_log(repo, revs, order, first_parent, paths, *extra) -> list[str]:
    args = ["log", "--format=%H", *ORDERS[order], *(["--first-parent"] if first_parent else []), *extra, *revs]
    return git_text(*args, *(["--", *paths] if paths else []), cwd=repo).split()


def starts(repo, revs) -> list[bytes]:
    out = []
    for r in revs:
        if r == "--all":
            out += [bytes.fromhex(x) for x in git_text("for-each-ref", "--format=%(objectname)", cwd=repo).split()]
            out.append(bytes.fromhex(git_text("rev-parse", "HEAD", cwd=repo).strip()))
        else:
            out.append(bytes.fromhex(git_text("rev-parse", r, cwd=repo).strip()))
    return out


BUILT = native.compiled_module() is not None


class Counted:
    """A compiled loop over graph positions, counted through the door (the
    plain walk's by default); nothing counted when the module is not built."""

    def __init__(self, door, name: str = "graph_walk_plain") -> None:
        self.calls = 0
        if not BUILT:
            return
        door.use("compiled")
        inner = getattr(native.compiled_module(), name)

        def counted(*args):
            self.calls += 1
            return inner(*args)

        door.stub(name, counted)


def core_log(repo, revs, order, first_parent, paths, max_count=None) -> tuple[list[str], WalkSource]:
    store = core_store(repo)
    source = WalkSource.open(None, store)
    try:
        got = walk(
            source.objects,
            starts(repo, revs),
            order=order,
            first_parent=first_parent,
            paths=paths,
            max_count=max_count,
            **source.walk_options(paths),
        )
        return [c.oid.hex() for c in got], source
    finally:
        source.close()
        store.close()


def core_log_ids(repo, revs, order, first_parent, paths, max_count=None) -> list[str]:
    """walk_ids' runs (log --format=%H's), split into hex ids."""
    store = core_store(repo)
    source = WalkSource.open(None, store)
    try:
        runs = list(
            walk_ids(
                source.objects,
                starts(repo, revs),
                order=order,
                first_parent=first_parent,
                paths=paths,
                max_count=max_count,
                **source.walk_options(paths),
            )
        )
        assert all(type(r) is bytes and r and len(r) % 20 == 0 for r in runs)
        joined = b"".join(runs)
        return [joined[i : i + 20].hex() for i in range(0, len(joined), 20)]
    finally:
        source.close()
        store.close()


def first_difference(want: list[str], got: list[str]) -> int | None:
    return next((i for i, (a, b) in enumerate(itertools.zip_longest(want, got)) if a != b), None)


def test_every_order_lists_gits_commits_in_every_graph_state(state):
    name, repo = state
    problems = []
    for revs, order, fp, paths in itertools.product(REVS, ORDERS, (False, True), PATHS):
        want = git_log(repo, revs, order, fp, paths)
        for n in (None, 1, 7, 60):
            got, _ = core_log(repo, revs, order, fp, paths, n)
            at = first_difference(want[:n] if n is not None else want, got)
            if at is not None:
                problems.append(f"{name} {revs} {order} fp={fp} {paths} -n {n}: first difference at {at}")
    assert problems == []


def test_a_count_stops_gits_walk_where_it_stops_ours(state):
    # -n is a prefix of the whole listing in every order, for git as for core
    _, repo = state
    for order in ORDERS:
        want = git_log(repo, ["--all"], order, False, None, "-n", "9")
        assert len(want) == 9
        assert core_log(repo, ["--all"], order, False, None, 9)[0] == want


def test_the_log_command_prints_gits_lines_in_every_order(state):
    _, repo = state
    for args in (
        ["--all"],
        ["--topo-order", "-n", "25", "main"],
        ["--date-order", "--first-parent", "--all"],
        ["--all", "--", "d1"],
        ["-n", "5", "main", "--", "a", "d2/e"],
        ["--first-parent", "side", "--", "top"],
    ):
        want = git_text("log", "--format=%H %P", *args, cwd=repo)
        got = packscope_in(repo, "log", "--format=%H %P", *args)
        assert got.returncode == 0, got.stderr
        assert got.stdout.decode() == want


def test_a_plain_walk_over_a_sound_graph_runs_on_its_positions(state, door):
    name, repo = state
    counted = Counted(door)
    for fp in (False, True):
        got, _ = core_log(repo, ["--all"], "default", fp, None)
        assert got == git_log(repo, ["--all"], "default", fp, None)
    if not BUILT:
        pytest.skip("the compiled module is not built")
    # a graph holding every tip takes the loop over positions (a stale one
    # takes it only once no commit outside it waits in the queue)
    if name == "none":
        assert counted.calls == 0
    elif name != "stale-chain":
        assert counted.calls > 0


def test_the_ids_alone_are_gits_list_on_both_paths(state, door):
    # log --format=%H's walk (walk_ids): the plain walk hands out runs of ids,
    # over graph positions from the compiled loop (graph_walk_ids) without a
    # record per commit; the pure path joins the reference walk's ids; other
    # walks hand out one id per run.  Every cut (-n) as git's.
    name, repo = state
    cases = [
        (revs, order, fp, paths, n)
        for revs in (["--all"], ["side", "main"])
        for order, fp, paths in (("default", False, None), ("default", True, None), ("topo", False, ["a"]))
        for n in (None, 0, 1, 17)
    ]
    want = [
        git_log(repo, revs, order, fp, paths, *(["-n", str(n)] if n is not None else []))
        for revs, order, fp, paths, n in cases
    ]
    counted = Counted(door, "graph_walk_ids")
    assert [core_log_ids(repo, *case) for case in cases] == want
    if BUILT and name not in ("none", "stale-chain"):
        assert counted.calls > 0  # a sound graph holding every tip: ids from the compiled loop
    if BUILT and name == "none":
        assert counted.calls == 0
    door.use("pure")
    assert [core_log_ids(repo, *case) for case in cases] == want


def test_the_log_command_prints_gits_full_ids(state):
    # (the cuts and orders are the test above's: here the bytes, twice a state)
    _, repo = state
    for fmt, args in (("--format=%H", ["--all"]), ("--pretty=tformat:%H", ["-n", "30", "side", "--", "d1"])):
        want = git_text("log", fmt, *args, cwd=repo)
        got = packscope_in(repo, "log", fmt, *args)
        assert got.returncode == 0, got.stderr
        assert got.stdout.decode() == want


def test_the_path_limited_walk_in_python_lists_what_the_compiled_one_does(state, door):
    # the default order with paths: the compiled loop over graph positions
    # (Bloom filters asked by position, trees compared through the limiter)
    # and the reference (walk.py's stream and simplify) both list git's commits
    name, repo = state
    paths = (["a"], ["d1/f1", "top"], ["d2"], ["d2/e/f4", "nowhere"])
    cases = list(itertools.product((["--all"], ["side", "main"]), paths, (False, True)))
    want = [git_log(repo, revs, "default", fp, p) for revs, p, fp in cases]
    compiled = Counted(door, "graph_walk_paths")
    assert [core_log(repo, revs, "default", fp, p)[0] for revs, p, fp in cases] == want
    if BUILT and name not in ("none", "stale-chain"):
        assert compiled.calls > 0  # a sound graph holding every tip: the compiled walk
    door.use("pure")
    assert [core_log(repo, revs, "default", fp, p)[0] for revs, p, fp in cases] == want


def test_the_incremental_walk_in_python_lists_what_the_compiled_one_does(state, door):
    # the reference (core/history/topo_walk.py) with the compiled walk over
    # graph positions turned off, and on: both git's order
    name, repo = state
    cases = list(itertools.product((["--all"], ["side", "main"]), ("topo", "date"), (False, True)))
    want = [git_log(repo, revs, order, fp, None) for revs, order, fp in cases]
    compiled = Counted(door, "graph_topo_next")
    assert [core_log(repo, revs, order, fp, None)[0] for revs, order, fp in cases] == want
    if BUILT and name not in ("none", "stale-chain"):
        assert compiled.calls > 0  # a sound graph holding every tip: the compiled walk
    if BUILT:
        door.stub("graph_topo_start")  # declines: the Python reference walks
    assert [core_log(repo, revs, order, fp, None)[0] for revs, order, fp in cases] == want


def test_topo_order_with_generation_numbers_reads_only_what_it_shows(state):
    # git's incremental walk: a short --topo-order listing reads a few
    # generations, not the whole history (without numbers it must sort it all)
    name, repo = state
    total = len(git_log(repo, ["--all"], "default", False, None))
    for order in ("topo", "date"):
        got, source = core_log(repo, ["main"], order, False, None, 3)
        assert got == git_log(repo, ["main"], order, False, None, "-n", "3")
        if name in ("v2-bloom", "v1-bloom", "v1-plain", "chain-v1-under-v2", "chain-v2"):
            assert source.generation_numbers
            assert 0 < source.graph_commits < total // 2
        elif name == "none":
            assert source.graph_commits == 0
