"""last-modified: the last commit of each entry of the root directory.

packscope answers every entry in one walk (``packscope.core.history.last_modified``); git is
asked the way a web front-end asks it, ``git log -1 --format=%H -- ENTRY``,
one process per entry.  Rows: ``packscope last-modified`` as a whole
process, ``packscope.core.history.last_modified`` in-process (with the same walk source the
command uses), and git's per-entry loop.  The answers are compared.  No
peer library has this operation.
"""

from __future__ import annotations

import hashlib
import time

from packscope.bench import inputs as inp
from packscope.bench.peers import bench_env, packscope_cmd
from packscope.bench.results import Case, ScenarioResult, Series
from packscope.bench.runner import ProcessRun, Run, WorkerRun, repeat
from packscope.bench.verify import line_count

NAME = "last-modified"
TITLE = "Last commit per root entry vs git log -1 -- ENTRY"
GIT_LOOP = "git log -1 -- ENTRY, one process per entry"


def run(ctx) -> ScenarioResult:
    res, source, repo = inp.on_real_history(ctx, NAME, TITLE)
    entries = root_entries(repo)
    case = Case(f"{source.label} · root directory", source.label, {"entries": len(entries)})
    runs: list[Run] = [
        ProcessRun(
            Series("packscope last-modified", "packscope", "job"),
            lambda i: packscope_cmd(repo, "last-modified"),
            verify=lambda p, i: line_count(p),
        )
    ]
    runs.append(
        WorkerRun(
            Series("packscope core.history.last_modified (in-process)", "packscope", "job"),
            "packscope.bench.scenarios.last_modified:packscope_last_modified",
            lambda i: {"repo": repo},
            check=lambda r, i: {"entries": r["entries"], "digest": r["digest"]},
        )
    )
    runs.append(
        WorkerRun(
            Series(GIT_LOOP, "peer", "job"),
            "packscope.bench.scenarios.last_modified:git_per_entry",
            lambda i: {"repo": repo, "entries": entries},
            check=lambda r, i: {"entries": r["entries"], "digest": r["digest"]},
        )
    )
    repeat(case, runs, lambda rep: {}, ctx)
    git_digest = case.series[-1].info.get("digest")
    for s in case.series:
        if "digest" in s.info and git_digest is not None:
            s.info["correct"] = s.info["digest"] == git_digest
    res.cases.append(case)
    return res


def root_entries(repo: str) -> list[str]:
    out = inp.git("ls-tree", "--name-only", "-z", "HEAD", cwd=repo).decode("utf-8", "surrogateescape")
    return [name for name in out.split("\0") if name]


def _digest(answers: dict[str, str]) -> str:
    return hashlib.sha1(repr(sorted(answers.items())).encode("utf-8", "surrogateescape")).hexdigest()[:16]


# --- in the worker --------------------------------------------------------------------------


def git_per_entry(repo: str, entries: list[str]) -> dict:
    import subprocess

    env = bench_env()
    t0 = time.perf_counter()
    answers = {}
    for name in entries:
        out = subprocess.run(
            ["git", "-C", repo, "--literal-pathspecs", "log", "-1", "--format=%H", "--", name],
            capture_output=True,
            env=env,
            check=True,
        ).stdout
        answers[name] = out.strip().decode()
    return {"seconds": time.perf_counter() - t0, "entries": len(answers), "digest": _digest(answers)}


def packscope_last_modified(repo: str) -> dict:
    from packscope.core.history.last_modified import last_modified
    from packscope.core.repo.session import open_session

    session = open_session(repo)
    t0 = time.perf_counter()
    walk_source = None
    try:
        from packscope.core.history.graph_walk import WalkSource

        walk_source = WalkSource.open(session.repo, session.store, refs=session.refs)
    except ImportError:
        pass
    head = session.refs.resolve("HEAD")
    answers = {
        name.decode("utf-8", "surrogateescape"): (oid.hex() if oid else "")
        for name, oid in last_modified(session.store, head, b"", source=walk_source)
    }
    seconds = time.perf_counter() - t0
    if walk_source is not None:
        walk_source.close()
    session.close()
    return {"seconds": seconds, "entries": len(answers), "digest": _digest(answers)}
