"""blame: `packscope blame HEAD -- FILE` beside `git blame HEAD -- FILE`.

FILE is git.git's `revision.c` when the history has it (issue 30's case:
~4,800 lines, ~1,000 versions, a walk through most of git.git's 75,000
commits), else the largest file of HEAD.  Whole processes: packscope on
the compiled path and its pure twin, and git.  Each output's digest is
compared with git's (the command must print git's bytes).  Target (issue
30): ≤ 1.5× git's time, with a commit-graph and changed-path filters (the
scenario notes whether the repository has them: `git commit-graph write
--reachable --changed-paths`).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from packscope.bench import inputs as inp
from packscope.bench.peers import git_cmd, packscope_cmd
from packscope.bench.results import Case, ScenarioResult, Series, Target
from packscope.bench.runner import ProcessRun, Run, pure_twin, repeat

NAME = "blame"
TITLE = "packscope blame vs git blame (one file's whole history)"
PS = "packscope blame"
GIT = "git blame"
WANTED = "revision.c"


def digest(path: Path, inputs: dict) -> dict:
    data = path.read_bytes()
    return {"lines": data.count(b"\n"), "digest": hashlib.sha1(data).hexdigest()[:16]}


def pick_file(repo: str) -> str:
    listing = inp.git("ls-tree", "-r", "-l", "HEAD", cwd=repo).decode("utf-8", "surrogateescape")
    best, size = "", -1
    for row in listing.splitlines():
        meta, path = row.split("\t", 1)
        mode, kind, _oid, length = meta.split()
        if path == WANTED:
            return path
        if kind == "blob" and mode.startswith("100") and int(length) > size:
            best, size = path, int(length)
    return best


def graph_note(repo: str) -> str:
    git_dir = inp.git("rev-parse", "--git-dir", cwd=repo).decode().strip()
    info = Path(repo, git_dir, "objects", "info") if not os.path.isabs(git_dir) else Path(git_dir, "objects", "info")
    if (info / "commit-graph").exists() or (info / "commit-graphs").exists():
        return "the repository has a commit-graph (changed-path filters if written with --changed-paths)"
    return "no commit-graph: every commit's tree is read (git commit-graph write --reachable --changed-paths)"


def run(ctx) -> ScenarioResult:
    res, source, repo = inp.on_real_history(ctx, NAME, TITLE)
    path = pick_file(repo)
    res.notes.append(graph_note(repo))
    case = Case(f"{source.label} · {path}", source.label, {"file": path})
    compiled = ProcessRun(
        Series(PS, "packscope"), lambda i: packscope_cmd(repo, "blame", "HEAD", "--", path), verify=digest
    )
    runs: list[Run] = [
        compiled,
        pure_twin(compiled),
        ProcessRun(Series(GIT), lambda i: git_cmd(repo, "blame", "HEAD", "--", path), verify=digest),
    ]
    repeat(case, runs, lambda rep: {}, ctx)
    want = case.series[-1].info.get("digest")
    for s in case.series:
        if "digest" in s.info and want is not None:
            s.info["correct"] = s.info["digest"] == want
    case.targets.append(Target(PS, GIT, 1.5, f"blame ≤ 1.5× git blame ({path})"))
    res.cases.append(case)
    return res
