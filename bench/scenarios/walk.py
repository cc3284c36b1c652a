"""walk: every commit of a history, as ``--all`` lists them.

``packscope log --all --format=%H`` vs ``git rev-list --all`` (whole
processes).  While the ``log`` command does not exist, packscope's number is
``packscope.core.history.walk.walk`` over every ref and HEAD in a worker (in-process, so
without start-up) and the row says so.  In-process peers: dulwich's
``get_walker`` and pygit2's ``Repository.walk`` (time order) over all refs.
"""

from __future__ import annotations

from pathlib import Path

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


# Issue 21's targets: ≤ 1.2× on a git.git-sized history (849k objects), ≤ 1.5×
# on a dulwich-sized one (56k objects), where packscope's fixed start-up
# weighs more; the line between them is drawn by the packed object count.
LARGE_HISTORY_OBJECTS = 200_000


def walk_target(objects: int) -> Target:
    """The walk row's target for a repository of ``objects`` packed objects."""
    if objects >= LARGE_HISTORY_OBJECTS:
        return Target(PS_PROC, GIT_PROC, 1.2, f"walk ≤ 1.2× git rev-list --all (git.git-sized: {objects:,} objects)")
    return Target(PS_PROC, GIT_PROC, 1.5, f"walk ≤ 1.5× git rev-list --all (dulwich-sized: {objects:,} objects)")


def packed_objects(repo: Path) -> int:
    """Objects in the repository's pack indexes (the last fanout entry of
    each .idx, v1 or v2), without opening the store."""
    total = 0
    for idx in (repo / "objects" / "pack").glob("*.idx"):
        with open(idx, "rb") as f:
            head = f.read(8 + 1024)
        fanout_at = 8 if head[:4] == b"\377tOc" else 0
        if len(head) >= fanout_at + 1024:
            total += int.from_bytes(head[fanout_at + 1020 : fanout_at + 1024], "big")
    return total


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
    case.targets.append(walk_target(packed_objects(source.path)))
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
