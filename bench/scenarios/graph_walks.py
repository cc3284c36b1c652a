"""graph-walks: issue 28's walk rows, whole processes, on the real history.

Three commands beside git's, best read on a repository with a commit-graph
and changed-path Bloom filters (``git commit-graph write --reachable
--changed-paths``, as ``git gc`` and ``git maintenance`` leave one) and
again on one without:

* ``packscope log --all --format=%H`` vs ``git rev-list --all``;
* ``packscope log --format=%H -- PATH`` vs ``git rev-list HEAD -- PATH``
  (PATH: ``Documentation/RelNotes`` when HEAD has it, as on git.git, else
  the first directory of HEAD's root tree) — the path-limited walk, asking
  the Bloom filters when there are some;
* ``packscope log --topo-order -n 100 --format=%H`` vs ``git rev-list
  --topo-order -n 100 HEAD`` — streamed with generation numbers.  git
  answers in a few ms, under the interpreter's own start-up, so the case
  also has ``python -c pass`` (the floor of any Python process) and the
  walk timed in-process (a worker: the store, the graph and the 100
  commits, without start-up).

Targets: ≤ 1.2×, ≤ 1.2× and ≤ 1.5× git (issue 28), read against CPU time
as well as wall time (the machine is shared).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from packscope.bench import inputs as inp
from packscope.bench.peers import git_cmd, packscope_cmd
from packscope.bench.results import Case, ScenarioResult, Series, Target
from packscope.bench.runner import ProcessRun, Run, WorkerRun, repeat
from packscope.bench.verify import line_count

NAME = "graph-walks"
TITLE = "Walks over a commit-graph: --all, a Bloom path, --topo-order -n 100"
RELNOTES = "Documentation/RelNotes"
TOPO_COUNT = 100
PYTHON = "python -c pass"
IN_PROCESS = "packscope topo walk, in process"


def has_graph(repo: Path) -> bool:
    info = repo / "objects" / "info"
    return (info / "commit-graph").exists() or (info / "commit-graphs" / "commit-graph-chain").exists()


def limit_path(repo: str) -> str:
    """RELNOTES when HEAD has it, else the first directory of HEAD's root tree."""
    names = inp.git("ls-tree", "--name-only", "HEAD", cwd=repo).decode().split("\n")
    if RELNOTES.split("/")[0] in names:
        inside = inp.git("ls-tree", "--name-only", "HEAD", RELNOTES, cwd=repo).decode().split()
        if RELNOTES in inside:
            return RELNOTES
    dirs = inp.git("ls-tree", "-d", "--name-only", "HEAD", cwd=repo).decode().split()
    return dirs[0] if dirs else names[0]


def run(ctx) -> ScenarioResult:
    res, source, repo = inp.on_real_history(
        ctx, NAME, TITLE, columns=[("max_rss_bytes", "peak RSS"), ("walk_cpu_seconds", "walk CPU")]
    )
    graph = has_graph(source.path)
    workload = {**inp.describe(repo), "commit_graph": graph}
    state = "with a commit-graph" if graph else "no commit-graph"
    path = limit_path(repo)
    rows = (
        ("all commits", ("log", "--all", "--format=%H"), ("rev-list", "--all"), 1.2),
        (f"path {path}", ("log", "--format=%H", "--", path), ("rev-list", "HEAD", "--", path), 1.2),
        (
            f"--topo-order -n {TOPO_COUNT}",
            ("log", "--topo-order", "-n", str(TOPO_COUNT), "--format=%H"),
            ("rev-list", "--topo-order", "-n", str(TOPO_COUNT), "HEAD"),
            1.5,
        ),
    )
    for what, ps_args, git_args, ratio in rows:
        case = Case(f"{source.label} ({state}) · {what}", source.label, {**workload, "path": path})
        ps_name, git_name = "packscope " + " ".join(ps_args), "git " + " ".join(git_args)
        git_series = Series(git_name)
        runs: list[Run] = [
            ProcessRun(Series(ps_name, "packscope"), partial(command, packscope_cmd, repo, ps_args), verify=lines),
            ProcessRun(git_series, partial(command, git_cmd, repo, git_args), verify=lines),
        ]
        topo = what.startswith("--topo-order")
        if topo:
            runs.append(ProcessRun(Series(PYTHON), lambda i: [sys.executable, "-c", "pass"]))
            runs.append(
                WorkerRun(
                    Series(IN_PROCESS, "packscope", "in-process"),
                    "packscope.bench.scenarios.graph_walks:topo_in_process",
                    lambda i: {"repo": repo, "count": TOPO_COUNT},
                    check=lambda r, i: {"lines": r.get("commits")},
                )
            )
        case.targets.append(Target(ps_name, git_name, ratio, f"{what}: ≤ {ratio}× git ({state})"))
        repeat(case, runs, lambda rep: {}, ctx)
        expected = git_series.info.get("lines")
        for s in case.series:
            got = s.info.get("lines")
            if s.role == "packscope" and expected is not None and got is not None:
                s.info["correct"] = got == expected
        if topo:
            case.notes.append(
                "python -c pass is the floor of any Python process; the in-process row is the walk alone "
                "(open the repository and the graph, then 100 commits: walk CPU, after the open)"
            )
        res.cases.append(case)
    return res


def lines(path: Path, inputs: dict) -> dict:
    return line_count(path)


def command(make: Callable[..., list[str]], repo: str, args: tuple[str, ...], inputs: dict) -> list[str]:
    """A command line for ``ProcessRun`` (``make``: packscope_cmd or git_cmd)."""
    return make(repo, *args)


# --- in the worker --------------------------------------------------------------------------


def topo_in_process(repo: str, count: int) -> dict:
    """``log --topo-order -n COUNT`` without start-up: the session, the walk
    source and the walk's first ``count`` commits, timed after the imports."""
    from packscope.core.history.graph_walk import WalkSource
    from packscope.core.history.rev_args import walk_starts
    from packscope.core.history.walk import walk
    from packscope.core.repo.session import open_session

    c0, t0 = time.process_time(), time.perf_counter()
    session = open_session(repo)
    source = WalkSource.open(session.repo, session.store, refs=session.refs)
    try:
        starts = walk_starts(["HEAD"], repo=session.repo, refs=session.refs, store=session.objects)
        opened = time.process_time()
        walked = list(walk(source.objects, starts, order="topo", max_count=count, **source.walk_options(None)))
        end = time.process_time()
        return {
            "seconds": time.perf_counter() - t0,
            "cpu_seconds": end - c0,
            "open_cpu_seconds": opened - c0,
            "walk_cpu_seconds": end - opened,
            "commits": len(walked),
            "graph_commits": source.graph_commits,
        }
    finally:
        source.close()
        session.close()
