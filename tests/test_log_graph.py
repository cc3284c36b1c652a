"""`packscope log --graph` prints what `git log --graph` prints, byte for
byte: `--oneline` and the default format, on histories this module builds
(linear, a branch and its merge, octopus merges beside long-lived lanes,
criss-cross merges, several roots and tips with --all, seeded random
histories), path-limited (git's rewritten parents), ranges, --first-parent
and -n; on the compiled and the pure path, with and without a
commit-graph (the incremental and the limited topological walk)."""

from __future__ import annotations

import io
import random
import shutil
import sys

import pytest

from packscope.core.history.graph_lines import GraphDrawing, graph_log
from packscope.inspector.cli import Words
from packscope.inspector.commands import log as log_command
from tests.repos import HistoryBuilder, git, init_bare

T = 1_700_000_000
FORMATS = [["--oneline"], []]  # --oneline, and git's default (medium) format


def shapes_history() -> HistoryBuilder:
    """One repository holding each shape on a branch of its own."""
    h = HistoryBuilder()
    # linear
    a = h.commit([], {"f": "1\n"}, T, "linear 1\n")
    b = h.derive(a, T + 10, {"f": "2\n"}, "linear 2\n")
    c = h.derive(b, T + 20, {"g": "1\n"}, "linear 3\n")
    h.ref("refs/heads/linear", c)
    # a branch and its merge, a long-lived lane beside it
    side1 = h.derive(c, T + 30, {"s": "1\n"}, "side 1\n")
    long1 = h.derive(c, T + 31, {"l": "1\n"}, "long-lived 1\n")
    main1 = h.derive(c, T + 32, {"f": "3\n"}, "main 1\n")
    side2 = h.derive(side1, T + 33, {"s": "2\n", "f": "side\n"}, "side 2\n")
    merge = h.derive([main1, side2], T + 34, {"s": "2\n"}, "merge side\n")
    # octopus merges: one with lanes to its right (it widens the graph first)
    o1 = h.derive(merge, T + 40, {"o1": "1\n"}, "octo 1\n")
    o2 = h.derive(merge, T + 41, {"o2": "1\n"}, "octo 2\n")
    o3 = h.derive(merge, T + 42, {"o3": "1\n"}, "octo 3\n")
    long2 = h.derive(long1, T + 43, {"l": "2\n"}, "long-lived 2\n")
    octo = h.derive([merge, o1, o2, o3], T + 44, {"o1": "1\n", "o2": "1\n", "o3": "1\n"}, "octopus of four\n")
    # criss-cross
    x1 = h.derive(octo, T + 50, {"x": "1\n"}, "x 1\n")
    y1 = h.derive(octo, T + 51, {"y": "1\n"}, "y 1\n")
    x2 = h.derive([x1, y1], T + 52, {"y": "1\n"}, "x merges y\n")
    y2 = h.derive([y1, x1], T + 53, {"x": "1\n"}, "y merges x\n")
    x3 = h.derive(x2, T + 54, {"f": "x\n"}, "x 3\n")
    cross = h.derive([x3, y2], T + 55, {}, "criss-cross merged\n")
    # merges that change nothing under f (rewritten parents collapse)
    p1 = h.derive(cross, T + 60, {"f": "p\n"}, "touch f\n")
    q1 = h.derive(cross, T + 61, {"q": "1\n"}, "q only\n")
    pq = h.derive([p1, q1], T + 62, {"q": "1\n"}, "merge q (f unchanged)\n")
    left = h.derive(long2, T + 63, {"f": "from long\n"}, "long-lived sets f\n")
    # a three-way merge skewed left: its first parent's lane is left of it
    skew = h.derive([long2, main1, side2], T + 64, {"f": "skewed\n"}, "skewed octopus\n")
    h.ref("refs/heads/main", pq)
    h.ref("refs/heads/long", left)
    h.ref("refs/heads/skew", skew)
    h.ref("refs/heads/cross", cross)
    # a second root with a tip of its own
    r1 = h.commit([], {"r": "1\n"}, T + 70, "second root\n")
    r2 = h.derive(r1, T + 71, {"f": "root f\n"}, "second root: f\n")
    h.ref("refs/heads/other-root", r2)
    # an octopus of a new lane (no child shown before it) and a lane to its right
    n1 = h.derive(r2, T + 72, {"n": "1\n"}, "n 1\n")
    n2 = h.derive(r2, T + 73, {"n": "2\n"}, "n 2\n")
    lone = h.derive([r2, n1, n2, o1], T + 74, {"n": "3\n"}, "octopus tip\n")
    h.ref("refs/heads/lone", lone)
    return h


def random_history(seed: int, commits: int) -> HistoryBuilder:
    """Branches forking from recent commits, merges of two to four tips,
    merges of old commits, a few more roots, clock skew; a few files."""
    rnd = random.Random(seed)
    h = HistoryBuilder()
    made: list[int] = []
    tips: dict[str, int] = {}
    when = T

    def add(branch: str, parents: list[int]) -> None:
        nonlocal when
        when += rnd.choice([1, 1, 1, 60, -30])
        changes = {rnd.choice(["a", "b", "d/c", "d/e"]): f"{len(made)}\n"} if rnd.random() < 0.9 else {}
        if parents:
            mark = h.derive(parents, when, changes, f"{branch} {len(made)}\n")
        else:
            mark = h.commit([], changes or {"a": "root\n"}, when, f"{branch} root {len(made)}\n")
        made.append(mark)
        tips[branch] = mark

    add("main", [])
    for i in range(commits):
        r = rnd.random()
        names = list(tips)
        if r < 0.45:
            b = rnd.choice(names)
            add(b, [tips[b]])
        elif r < 0.65:
            add(f"b{i}", [rnd.choice(made[-12:])])
        elif r < 0.85 and len(names) > 1:
            b = rnd.choice(names)
            others = [tips[x] for x in names if x != b]
            k = 1 if rnd.random() < 0.7 or len(others) < 2 else rnd.randint(2, min(3, len(others)))
            add(b, list(dict.fromkeys([tips[b], *rnd.sample(others, k)])))
        elif r < 0.9:
            add(f"r{i}", [])
        else:
            add(f"x{i}", list(dict.fromkeys(rnd.sample(made, min(3, len(made))))))
    for name, mark in tips.items():
        h.ref(f"refs/heads/{name}", mark)
    return h


@pytest.fixture(scope="module")
def graph_repos(tmp_path_factory):
    """{name: bare repository}: the shapes, two random histories, and each
    again with a commit-graph (changed-path filters too)."""
    root = tmp_path_factory.mktemp("log-graph")
    out = {}
    for name, builder in (
        ("shapes", shapes_history()),
        ("random-1", random_history(1, 70)),
        ("random-2", random_history(2, 70)),
    ):
        repo = builder.write(init_bare(root / f"{name}.git"))
        out[name] = repo
        with_graph = root / f"{name}-cg.git"
        shutil.copytree(repo, with_graph)
        git("commit-graph", "write", "--reachable", "--changed-paths", cwd=with_graph)
        out[name + "+cg"] = with_graph
    return out


def packscope_log(repo, args: list[str], monkeypatch) -> bytes:
    """`packscope log ARGS` in this process (the path the door chose)."""
    out = io.BytesIO()

    class Stdout:
        buffer = out

    with monkeypatch.context() as m:
        m.chdir(repo)
        m.setattr(sys, "stdout", Stdout())
        status = log_command.run(Words("log", args))
    assert status == 0
    return out.getvalue()


def assert_same_as_git(repo, args: list[str], monkeypatch) -> None:
    for fmt in FORMATS:
        want = git("log", "--graph", *fmt, *args, cwd=repo)
        got = packscope_log(repo, ["--graph", *fmt, *args], monkeypatch)
        assert got == want, f"log --graph {' '.join(fmt + args)} in {repo.name}"


SHAPE_ARGS = [
    ["linear"],
    ["main"],
    ["--all"],
    ["skew"],
    ["lone"],
    ["cross", "long"],
    ["main..skew"],
    ["--all", "^cross"],
    ["--first-parent", "--all"],
    ["--date-order", "--all"],
    ["-n", "9", "--all"],
]
PATH_ARGS = [
    ["--all", "--", "f"],
    ["main", "--", "f"],
    ["--all", "--", "x", "y"],
    ["--all", "--", "s", "o2"],
    ["--all", "^cross", "--", "f"],
    ["--first-parent", "--all", "--", "f"],
]
RANDOM_ARGS = [
    ["--all"],
    ["main"],
    ["--all", "--", "d"],
    ["--all", "--", "a"],
    ["--all", "--", "b", "d/e"],
    ["--all", "^main~2", "--", "d/c"],
]


@pytest.mark.parametrize("variant", ["", "+cg"], ids=["limited-walk", "commit-graph"])
def test_graph_of_each_shape_is_gits(graph_repos, backend_path, variant, monkeypatch):
    repo = graph_repos["shapes" + variant]
    for args in SHAPE_ARGS:
        assert_same_as_git(repo, args, monkeypatch)


@pytest.mark.parametrize("variant", ["", "+cg"], ids=["limited-walk", "commit-graph"])
def test_path_limited_graph_is_drawn_over_rewritten_parents_as_git(graph_repos, backend_path, variant, monkeypatch):
    repo = graph_repos["shapes" + variant]
    for args in PATH_ARGS:
        assert_same_as_git(repo, args, monkeypatch)


@pytest.mark.parametrize("name", ["random-1", "random-2", "random-1+cg"])
def test_graph_of_random_histories_is_gits(graph_repos, backend_path, name, monkeypatch):
    repo = graph_repos[name]
    for args in RANDOM_ARGS:
        assert_same_as_git(repo, args, monkeypatch)


def test_the_shapes_hold_what_the_drawing_is_particular_about(graph_repos):
    """The comparisons above meet every kind of line: an octopus widening
    the graph, its dashes, a left-skewed merge, lanes crossing with ``_``,
    collapsing ``/`` lines, and a path limit that hides commits and merges."""
    shapes = graph_repos["shapes"]
    drawn = git("log", "--graph", "--oneline", "--all", cwd=shapes).decode()
    for mark in ("*-.", "*---.", "|\\", "|/", " \\ \\", "_", "|/|"):
        assert mark in drawn, mark
    limited = git("log", "--graph", "--oneline", "--all", "--", "f", cwd=shapes).decode()
    assert "merge q" not in limited and limited.count("\n") < drawn.count("\n") // 2


def test_merge_line_names_the_rewritten_parents(graph_repos, monkeypatch):
    """In the default format a merge's ``Merge:`` line lists its parents as
    rewritten (a merge whose sides rewrite to one commit has none)."""
    repo = graph_repos["shapes"]
    args = ["--graph", "--all", "--", "x", "y"]
    got = packscope_log(repo, args, monkeypatch)
    assert got == git("log", *args, cwd=repo)
    assert b"Merge:" in got


def test_a_format_with_lines_of_its_own(graph_repos, monkeypatch):
    """``--format`` entries that span lines or end in a newline: every line
    after the first gets the graph's next line, as in git; an empty format
    leaves only the graph's lines, run together as git runs them."""
    repo = graph_repos["shapes"]
    for fmt in (
        "--format=%h%n%s",
        "--format=%h%n%s%n",
        "--format=format:%h %s",
        "--format=format:%h%n%s%n",
        "--format=",
    ):
        got = packscope_log(repo, ["--graph", fmt, "--all"], monkeypatch)
        assert got == git("log", "--graph", fmt, "--all", cwd=repo), fmt


def test_the_drawing_waits_for_the_commits_text():
    """graph_log is lazy: the first entry's lines come before the next
    commit is asked for (a long log streams)."""
    asked = []

    def entries():
        for n in range(3):
            asked.append(n)
            yield bytes([n + 1]) * 20, [bytes([n + 2]) * 20] if n < 2 else [], b"%d" % n

    it = graph_log(entries(), terminated=True)
    assert next(it) == b"* 0\n" and asked == [0]
    assert b"".join(it) == b"* 1\n* 2\n"


def test_a_drawing_cut_short_says_so():
    """A commit drawn before the last one finished its lines (a caller that
    skipped them) starts with git's ``...`` line."""
    g = GraphDrawing()
    g.update(b"m", [b"a", b"b"])
    assert g.next_line() == ("*   ", True)
    g.update(b"b", [])
    assert g.next_line()[0].startswith("...")
