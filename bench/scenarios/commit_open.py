"""commit-open: opening a big commit and its biggest file's diff, in the UI.

Headless (``App.run_test``): the Commit screen of the commit opens and the
clock runs until every file of every parent is counted (or skipped by its
budget); then the Diff screen of the commit's biggest changed file opens
against the parent with the most changes, and Enter computes it past its
budget (the worst a user can ask for).  Then the same diff is started again
and the screen left 0.2 s later: how long its thread takes to stop.
Reported: those times and the process's peak resident set (VmHWM).

Beside it, whole processes: ``git show COMMIT`` and ``git diff PARENT
COMMIT`` (for a merge, ``git show`` prints the combined diff, which leaves
most files out; ``git diff`` against the parent shown is the comparable
work).  Target (issue 26): packscope's peak RSS ≤ 3 × ``git show``'s, with
a floor of 300 MB.

Inputs: git.git's merge ``3f664917c2`` (1,207 files against parent 2) when
``--repo`` names a repository that has it; and always a synthetic commit
built here: a 20 MB text file with every 37th line rewritten and 3,000 small
files touched.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

from packscope.bench import inputs as inp
from packscope.bench.peers import git_cmd
from packscope.bench.results import Case, ScenarioResult, Series
from packscope.bench.runner import ProcessRun, WorkerRun, repeat
from packscope.bench.worker import peak_rss_bytes

NAME = "commit-open"
TITLE = "Opening a big commit and its biggest diff (UI, headless) vs git show"
GIT_MERGE = "3f664917c20733253934d3c4ff8330a7a60f27b7"
RSS_FLOOR = 300 * 1024 * 1024
RSS_RATIO = 3.0
PS = "packscope Commit + Diff screens"


def big_commit_stream(big_bytes: int, small_files: int, *, seed: int = 37) -> bytes:
    """Two commits: a ``big_bytes`` text file and ``small_files`` small ones;
    then every 37th line of the big one rewritten and every small one
    touched (one line changed)."""
    rnd = random.Random(seed)
    words = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon", b"zeta", b"eta", b"theta"]
    lines = []
    size = 0
    i = 0
    while size < big_bytes:
        line = b"%08d %s %s %s\n" % (i, rnd.choice(words), rnd.choice(words), rnd.choice(words))
        lines.append(line)
        size += len(line)
        i += 1
    old = b"".join(lines)
    new = b"".join(b"%08d rewritten\n" % n if n % 37 == 0 else line for n, line in enumerate(lines))
    del lines

    def small(k: int, version: int) -> bytes:
        return b"".join(b"file %d line %d%s\n" % (k, n, b" (touched)" if version and n == 3 else b"") for n in range(8))

    s = inp._Stream()
    first = s.commit(
        "refs/heads/main",
        "big file and small files",
        [("big.txt", old)] + [(f"d{k % 30:02d}/f{k:05d}.txt", small(k, 0)) for k in range(small_files)],
    )
    s.commit(
        "refs/heads/main",
        "every 37th line of big.txt rewritten, every small file touched",
        [("big.txt", new)] + [(f"d{k % 30:02d}/f{k:05d}.txt", small(k, 1)) for k in range(small_files)],
        frm=first,
    )
    return s.bytes()


def big_commit_repo(ctx) -> Path:
    big = ctx.size(20 * 1024 * 1024, 200 * 1024)
    files = ctx.size(3000, 30)

    def build(path: Path) -> None:
        inp.init_bare(path)
        inp.git("fast-import", "--quiet", cwd=path, input=big_commit_stream(big, files))
        inp.git("symbolic-ref", "HEAD", "refs/heads/main", cwd=path)

    return inp.cached_repo(ctx.work_dir, f"big-commit-{big}-{files}", build)


def _has(repo: str, oid: str) -> bool:
    try:
        return inp.git("cat-file", "-t", oid, cwd=repo).strip() == b"commit"
    except RuntimeError:
        return False


def run(ctx) -> ScenarioResult:
    res = ScenarioResult(
        NAME,
        TITLE,
        columns=[
            ("max_rss_bytes", "peak RSS"),
            ("count_seconds", "count"),
            ("diff_seconds", "diff"),
            ("stop_seconds", "stop"),
        ],
    )
    cases: list[tuple[str, str, str]] = []
    if ctx.repo and _has(ctx.repo, GIT_MERGE):
        repo = str(Path(ctx.repo).resolve())
        inp.warm(ctx, repo)
        cases.append((f"real: {Path(repo).name} · merge {GIT_MERGE[:10]}", repo, GIT_MERGE))
    elif ctx.repo:
        res.notes.append(f"{ctx.repo} has no commit {GIT_MERGE[:10]} (git.git's merge): only the synthetic commit")
    synthetic = str(big_commit_repo(ctx))
    label = "synthetic: 20 MB file, every 37th line + 3,000 files" if not ctx.tiny else "synthetic (tiny)"
    cases.append((label, synthetic, "HEAD"))
    for name, repo, rev in cases:
        oid = inp.git("rev-parse", rev, cwd=repo).decode().strip()
        res.cases.append(_case(ctx, name, repo, oid))
    return res


def _case(ctx, name: str, repo: str, oid: str) -> Case:
    parents = inp.git("rev-list", "--parents", "-n", "1", oid, cwd=repo).decode().split()[1:]
    # the parent with the most changed files (a merge's side branch), as a user opens it
    parent = max(parents, key=lambda p: len(inp.git("diff", "--name-only", p, oid, cwd=repo).splitlines()))
    number = parents.index(parent) + 1
    case = Case(name, name, {**inp.describe(repo), "commit": oid, "parent": number})
    ps = WorkerRun(
        Series(PS, "packscope", "in-process"),
        "packscope.bench.scenarios.commit_open:open_commit",
        lambda i: {"repo": repo, "oid": oid, "parent": number},
    )
    show = ProcessRun(Series(f"git show {oid[:10]}"), lambda i: git_cmd(repo, "show", oid))
    diff = ProcessRun(Series(f"git diff P{number} {oid[:10]}"), lambda i: git_cmd(repo, "diff", parent, oid))
    repeat(case, [ps, show, diff], lambda rep: {}, ctx)
    ours, git_show = case.get(PS), case.get(show.series.system)
    peak = ours.metric_median("max_rss_bytes") if ours else None
    gpeak = git_show.metric_median("max_rss_bytes") if git_show else None
    if peak is not None and gpeak is not None:
        limit = max(RSS_RATIO * gpeak, RSS_FLOOR)
        verdict = "met" if peak <= limit else "MISSED"
        case.notes.append(
            f"target: peak RSS ≤ max(3 × git show's, 300 MB) = {limit / 2**20:.0f} MB: "
            f"{peak / 2**20:.0f} MB — {verdict}"
        )
    if ours is not None and "biggest" in ours.info:
        size = ours.metric_median("biggest_bytes") or 0
        skipped = ours.metric_median("skipped") or 0
        case.notes.append(
            f"biggest file: {ours.info['biggest']} ({size / 2**20:.1f} MB), "
            + ("over its budget, computed on Enter" if ours.info.get("forced") else "within its budget")
            + f"; {skipped:.0f} file(s) skipped by the budgets while counting; "
            "stop: leaving the Diff screen 0.2 s into that diff until its thread stopped (0: it had finished)"
        )
    return case


# --- in the worker --------------------------------------------------------------------------


def open_commit(repo: str, oid: str, parent: int, timeout: float = 900.0) -> dict:
    from packscope.core.history.commit_changes import change_size
    from packscope.inspector import commit_changes_model as model
    from packscope.inspector.app import PackscopeApp
    from packscope.inspector.screens.commit import CommitScreen
    from packscope.inspector.screens.diff import DiffScreen

    out: dict = {}

    async def go() -> None:
        app = PackscopeApp(repo)
        async with app.run_test(size=(160, 48)) as pilot:
            loop = asyncio.get_running_loop()
            end = loop.time() + timeout

            async def wait(cond) -> None:
                while not cond():
                    if loop.time() > end:
                        raise TimeoutError("commit-open: timed out")
                    await pilot.pause(0.01)

            await wait(lambda: app.core.ready)
            t0, c0 = time.perf_counter(), time.process_time()
            screen = CommitScreen(bytes.fromhex(oid))
            app.push_screen(screen)
            await wait(lambda: screen.changes is not None and all(pc.counting_done for pc in screen.changes))
            out["count_seconds"] = time.perf_counter() - t0
            listed = screen.changes or []
            pc = listed[parent - 1]
            out["files"] = len(pc.changes)
            out["skipped"] = sum(len(p.skipped) for p in listed)
            store = app.core.bulk.store
            with app.core.lock:
                sizes = [change_size(store, c) for c in pc.changes]
            biggest = max(range(len(sizes)), key=sizes.__getitem__)
            out["biggest"] = pc.changes[biggest].path.decode("utf-8", "replace")
            out["biggest_bytes"] = sizes[biggest]

            async def open_diff() -> DiffScreen:
                diff = DiffScreen(bytes.fromhex(oid), pc.parent, pc.changes, biggest)
                app.push_screen(diff)
                await wait(lambda: diff.is_mounted and (diff.lines is not None or diff.forced))
                if diff.skipped:
                    await pilot.press("enter")  # past the budget
                return diff

            t1 = time.perf_counter()
            diff = await open_diff()
            await wait(lambda: diff.forced is False or diff.lines is not None)
            await wait(lambda: diff.lines is not None)
            out["diff_seconds"] = time.perf_counter() - t1
            out["diff_lines"] = len(diff.lines or [])
            out["forced"] = diff.forced
            app.pop_screen()
            await wait(lambda: model.running.count == 0)
            # again, left 0.2 s after Enter: how long until its thread stops
            diff = await open_diff()
            await pilot.pause(0.2)
            was_running = model.running.count > 0
            t2 = time.perf_counter()
            app.pop_screen()
            await wait(lambda: model.running.count == 0)
            out["stop_seconds"] = time.perf_counter() - t2 if was_running else 0.0
            out["seconds"] = out["count_seconds"] + out["diff_seconds"]
            out["cpu_seconds"] = time.process_time() - c0

    asyncio.run(go())
    out["max_rss_bytes"] = peak_rss_bytes()
    return out
