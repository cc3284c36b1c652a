"""fsck: verifying the whole repository, as ``git fsck --full`` does.

``packscope fsck`` with one job and with the default (one worker process
per CPU; also on the pure-Python path) against ``git fsck --full`` on the same repository, whole
processes: wall time, CPU (the workers' included) and peak resident set
(the largest process of the tree, as ``/usr/bin/time`` reports it).  The
exit status is the verdict, not a failure; each side's dangling objects are
counted and must agree.
"""

from __future__ import annotations

from pathlib import Path

from packscope.bench import inputs as inp
from packscope.bench.peers import git_cmd, packscope_cmd
from packscope.bench.results import Case, ScenarioResult, Series, Target
from packscope.bench.runner import ProcessRun, pure_twin, repeat

NAME = "fsck"
TITLE = "Verifying the repository (fsck --full)"
GIT_PROC = "git fsck --full"
PS_ONE = "packscope fsck --jobs 1"
PS_DEFAULT = "packscope fsck"
VERDICTS = tuple(range(128))  # git fsck's bit set: an answer; 128 and signals are failures


def dangling(path: Path, inputs: dict) -> dict:
    lines = path.read_bytes().splitlines()
    return {"dangling": sum(1 for line in lines if line.startswith(b"dangling "))}


def run(ctx) -> ScenarioResult:
    res, source, repo = inp.on_real_history(ctx, NAME, TITLE, columns=[("max_rss_bytes", "peak RSS")])
    case = Case(f"{source.label} · whole repository", source.label, inp.describe(repo))
    git_series = Series(GIT_PROC)
    compiled = ProcessRun(
        Series(PS_DEFAULT, "packscope"),
        lambda i: packscope_cmd(repo, "fsck", "--no-progress"),
        verify=dangling,
        ok=VERDICTS,
    )
    runs = [
        compiled,
        pure_twin(compiled),
        ProcessRun(
            Series(PS_ONE, "packscope"),
            lambda i: packscope_cmd(repo, "fsck", "--no-progress", "--jobs", "1"),
            verify=dangling,
            ok=VERDICTS,
        ),
        ProcessRun(
            git_series, lambda i: git_cmd(repo, "fsck", "--full", "--no-progress"), verify=dangling, ok=VERDICTS
        ),
    ]
    case.targets.append(Target(PS_DEFAULT, GIT_PROC, 1.0, "fsck ≤ 1.0× git fsck --full"))
    repeat(case, runs, lambda rep: {}, ctx)
    expected = git_series.info.get("dangling")
    for s in case.series:
        if expected is not None and s is not git_series and "dangling" in s.info:
            s.info["correct"] = s.info["dangling"] == expected
    res.cases.append(case)
    return res
