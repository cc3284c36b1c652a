"""walk: every commit of a history, as ``--all`` lists them.

``packscope log --all --format=%H`` vs ``git rev-list --all`` (whole
processes).  While the ``log`` command does not exist, packscope's number is
``packscope.core.history.walk.walk`` over every ref and HEAD in a worker (in-process, so
without start-up) and the row says so.  In-process peers: dulwich's
``get_walker`` and pygit2's ``Repository.walk`` (time order) over all refs.
"""

from __future__ import annotations

from packscope.bench import inputs as inp
from packscope.bench.peers import git_cmd, packscope_cmd
from packscope.bench.results import Case, ScenarioResult, Series, Target
from packscope.bench.runner import ProcessRun, Run, WorkerRun, api_series, pure_twin, repeat
from packscope.bench.verify import line_count

NAME = "walk"
TITLE = "Walking all commits (--all)"
GIT_PROC = "git rev-list --all"
PS_PROC = "packscope log --all --format=%H"
PS_INPROC = "packscope core.history.walk"


def run(ctx) -> ScenarioResult:
    res, source, repo = inp.on_real_history(ctx, NAME, TITLE)
    graph = (source.path / "objects" / "info" / "commit-graph").exists() or (
        source.path / "objects" / "info" / "commit-graphs"
    ).exists()
    workload = {**inp.describe(repo), "commit_graph": graph}
    case = Case(f"{source.label} · all commits", source.label, workload)
    git_series = Series(GIT_PROC)
    runs: list[Run] = [
        ProcessRun(git_series, lambda i: git_cmd(repo, "rev-list", "--all"), verify=lambda p, i: line_count(p))
    ]
    ps = Series(PS_PROC, "packscope")
    compiled = ProcessRun(
        ps, lambda i: packscope_cmd(repo, "log", "--all", "--format=%H"), verify=lambda p, i: line_count(p)
    )
    runs[0:0] = [compiled, pure_twin(compiled)]
    case.targets.append(Target(PS_PROC, GIT_PROC, 2.0, "walk ≤ 2× git rev-list --all"))
    for system, label in (
        ("packscope", PS_INPROC),
        ("dulwich", "dulwich get_walker"),
        ("pygit2", "pygit2 Repository.walk"),
    ):

        def walk_args(i: dict, system: str = system) -> dict:
            return {"system": system, "op": "walk_all", "repo": repo}

        runs.append(
            WorkerRun(
                api_series(system, label),
                "packscope.bench.inproc:api",
                walk_args,
                check=lambda r, i: {"commits": r["answer"]},
            )
        )
    repeat(case, runs, lambda rep: {}, ctx)
    expected = git_series.info.get("lines")
    for s in case.series:
        got = s.info.get("commits", s.info.get("lines"))
        if expected is not None and got is not None:
            s.info["correct"] = got == expected
    if not graph:
        case.notes.append("no commit-graph in this repository: every system parses commits from the packs")
    res.cases.append(case)
    return res
