"""scale-growth: the same rows on histories 0.1×, 1×, 3×, 10× git.git's size.

Inputs from bench/synth.py (a seeded fast-import stream: git.git's commit
count times the scale, 2% merges, a topic branch per merge, a tag every
100 commits, a few thousand files; about 10 objects per commit), one pack
each (with ``--commit-graph``, a commit-graph with changed-path Bloom
filters beside it, as ``git gc`` leaves); sizes with ``--scale 0.1,1,3`` (default 0.1 and 1; ``--tiny``: 0.001).
Per size:

* whole processes: ``packscope log --all --format=%H`` vs ``git rev-list
  --all``; ``packscope cat-file --batch-check --batch-all-objects`` vs git's;
* the UI, headless in a fresh worker: first paint, History's first rows
  after ``7`` (the sample: seconds from spawn), ``G`` to the last row,
  opening HEAD's commit (every file of every parent counted), peak RSS;
  beside it tig's main view in a pseudo-terminal (first rows from spawn,
  ``G`` to the root commit, tig's peak RSS), skipped with a note when tig
  is not installed.

``report.growth_table`` turns a run into RESULTS.md's growth table: each row
at each size, the cost per 1,000 commits (or objects) between the smallest
and largest size, and peak RSS.
"""

from __future__ import annotations

import asyncio
import time
from functools import partial
from pathlib import Path

from packscope.bench.results import Case, ScenarioResult, Series
from packscope.bench.worker import peak_rss_bytes

NAME = "scale-growth"
TITLE = "Growth with history size: 0.1×–10× git.git (synthetic)"
UI_ROW = "packscope History (UI)"
TIG_ROW = "tig main view"


def run(ctx) -> ScenarioResult:
    from packscope.bench import inputs as inp
    from packscope.bench.peers import git_cmd, packscope_cmd, tig_unavailable
    from packscope.bench.runner import ProcessRun, repeat
    from packscope.bench.scenarios.walk import packed_objects
    from packscope.bench.verify import line_count

    res = ScenarioResult(
        NAME,
        TITLE,
        columns=[
            ("first_paint_seconds", "first paint"),
            ("first_rows_cpu_seconds", "first rows CPU"),
            ("history_seconds", "G to the end"),
            ("end_cpu_seconds", "end CPU"),
            ("open_commit_seconds", "open HEAD"),
            ("max_rss_bytes", "peak RSS"),
        ],
    )
    for scale in (0.001,) if ctx.tiny else ctx.scales:
        source = inp.scaled_input(ctx, scale, commit_graph=ctx.scale_graph)
        repo = str(source.path)
        inp.warm(ctx, repo)
        facts = synth_facts(source.path)
        workload = {
            **inp.describe(repo),
            **facts,
            "objects": packed_objects(source.path),
            "scale": scale,
            "commit_graph": ctx.scale_graph,
        }
        for what, ps_args, git_args in (
            ("log --all", ("log", "--all", "--format=%H"), ("rev-list", "--all")),
            (
                "all objects",
                ("cat-file", "--batch-check", "--batch-all-objects"),
                ("cat-file", "--batch-check", "--batch-all-objects"),
            ),
        ):
            case = Case(f"{scale:g}× · {what}", source.label, workload)
            runs = [
                ProcessRun(
                    Series("packscope " + " ".join(ps_args), "packscope"),
                    partial(packscope_argv, packscope_cmd, repo, ps_args),
                    verify=lambda p, i: line_count(p),
                ),
                ProcessRun(
                    Series("git " + " ".join(git_args)),
                    partial(packscope_argv, git_cmd, repo, git_args),
                    verify=lambda p, i: line_count(p),
                ),
            ]
            repeat(case, runs, lambda rep: {}, ctx)
            lines = {s.info.get("lines") for s in case.series if s.samples}
            for s in case.series:
                if s.samples:
                    s.info["correct"] = len(lines) == 1
            res.cases.append(case)
        res.cases.append(ui_case(ctx, f"{scale:g}× · History vs tig", source.label, repo, workload, tig_unavailable))
    return res


def packscope_argv(make, repo: str, args: tuple[str, ...], inputs: dict) -> list[str]:
    """A command line for ``ProcessRun`` (``make``: packscope_cmd or git_cmd)."""
    return make(repo, *args)


def synth_facts(repo: Path) -> dict:
    """What the generator wrote (commits, merges, tags, branches)."""
    out = {}
    f = repo / "synth.txt"
    if f.exists():
        for line in f.read_text().splitlines():
            k, _, v = line.partition(" ")
            out[k] = int(v)
    return out


def subjects(repo: str) -> tuple[str, str, str]:
    """HEAD's id, its subject and the root commit's subject (first 30
    characters: what a 120-column screen shows of them)."""
    from packscope.bench.inputs import git

    head = git("rev-parse", "HEAD", cwd=repo).decode().strip()
    first = git("log", "-1", "--format=%s", "HEAD", cwd=repo).decode().strip()
    roots = git("rev-list", "--max-parents=0", "HEAD", cwd=repo).decode().split()
    root = git("log", "-1", "--format=%s", roots[-1], cwd=repo).decode().strip()
    return head, first[:30], root[:30]


def ui_case(ctx, name: str, label: str, repo: str, workload: dict, tig_unavailable, open_commit: bool = True) -> Case:
    """packscope's History beside tig's main view on ``repo`` (one group:
    the ratio is of first rows from spawn)."""
    from packscope.bench.runner import WorkerRun, repeat

    head, first, root = subjects(repo)
    commits = workload.get("commits")
    case = Case(name, label, workload)
    ui = WorkerRun(
        Series(UI_ROW, "packscope", "ui"),
        "packscope.bench.scenarios.history_growth:history_ui",
        lambda i: {"repo": repo, "spawned_at": time.time(), "oid": head if open_commit else None},
        check=lambda r, i: {
            "correct": (commits is None or r.get("history_rows") == commits) and r.get("opened") in (None, head)
        },
    )
    tig = WorkerRun(
        Series(TIG_ROW, "peer", "ui"),
        "packscope.bench.peers:tig_history",
        lambda i: {"repo": repo, "first": first, "root": root},
    )
    why = tig_unavailable()
    if why:
        tig.series.skip(why)
    repeat(case, [ui, tig], lambda rep: {}, ctx)
    case.notes.append(
        "sample: first rows, seconds from spawn; G to the end: from the key until the last row is loaded "
        "(packscope) or the root commit is drawn (tig, G bound to move-last-line; its own key is End); "
        "tig's peak RSS is tig's alone, not the git log it reads"
    )
    return case


# --- in the worker --------------------------------------------------------------------------


def history_ui(repo: str, spawned_at: float, oid: str | None = None, size=(120, 36), timeout: float = 600.0) -> dict:
    """First paint, History's first rows after ``7``, ``G`` to the last row
    (and the search lines read after it), then HEAD's Commit screen with
    every change counted; seconds from spawn for the first two."""
    from packscope.inspector.cli import import_ui

    PackscopeApp = import_ui().PackscopeApp  # as `packscope REPO` imports it
    from textual.events import Ready

    out: dict = {}
    phase = ["start"]  # what is awaited: named by a worker that runs out of time

    async def go() -> None:
        app = PackscopeApp(repo)
        painted: list[float] = []

        def hook(message) -> None:
            if isinstance(message, Ready) and not painted:
                painted.append(time.time())

        async with app.run_test(size=tuple(size), message_hook=hook) as pilot:
            loop = asyncio.get_running_loop()
            end = loop.time() + timeout

            async def wait(cond, what: str, step: float = 0.01) -> None:
                phase[0] = what
                while not cond():
                    if loop.time() > end:
                        raise TimeoutError(f"history: {what} never came")
                    await pilot.pause(step)

            async def retry(act, cond, what: str) -> None:
                phase[0] = what
                while not cond():
                    await act()
                    give_up = loop.time() + 10
                    while not cond() and loop.time() < give_up:
                        await pilot.pause(0.02)
                    if loop.time() > end:
                        raise TimeoutError(f"history: {what} never came")

            await wait(lambda: bool(painted), "the first paint", 0.005)
            out["first_paint_seconds"] = painted[0] - spawned_at
            await wait(lambda: app.core.ready, "the core")
            # what `7` runs (pilot.press would first wait for the app to go idle)
            app.action_switch("history")
            await wait(
                lambda: getattr(app.screen, "history", None) is not None and app.screen.history.loaded > 0,
                "History's first rows",
            )
            out["seconds"] = time.time() - spawned_at
            out["first_rows_seconds"] = out["seconds"]
            # CPU time of this process from its start (the machine may be shared:
            # wall time then measures the wait for a core as much as the work)
            out["first_rows_cpu_seconds"] = time.process_time()
            screen = app.screen
            history = screen.history
            commit_cpu = 0.0
            if oid:  # Enter on the first row (HEAD), as a user opens it; then back
                from packscope.inspector.screens.commit import CommitScreen

                c1 = time.process_time()
                t1 = time.perf_counter()
                # (again if the key came before the table took the focus: nothing opened)
                await retry(lambda: pilot.press("enter"), lambda: isinstance(app.screen, CommitScreen), "Commit")
                commit = app.screen
                assert isinstance(commit, CommitScreen)
                await wait(
                    lambda: commit.changes is not None and all(pc.counting_done for pc in commit.changes),
                    "the commit's changes",
                )
                out["open_commit_seconds"] = time.perf_counter() - t1
                out["opened"] = commit.oid.hex()
                await retry(lambda: pilot.press("escape"), lambda: app.screen is screen, "History again")
                commit_cpu = time.process_time() - c1
            t0 = time.perf_counter()
            await retry(lambda: pilot.press("G"), lambda: history.done or history.want == float("inf"), "G")
            await wait(lambda: history.done, "the last row", 0.05)
            out["history_seconds"] = time.perf_counter() - t0
            # from spawn to the last row, without the commit opened in between
            out["end_cpu_seconds"] = time.process_time() - commit_cpu
            out["history_rows"] = history.loaded
            await wait(lambda: history.indexed >= history.loaded, "the search lines", 0.05)
            out["index_seconds"] = time.perf_counter() - t0
            if history.error:
                raise RuntimeError(history.error)

    async def bounded() -> None:
        try:
            await asyncio.wait_for(go(), timeout + 60)
        except TimeoutError as e:
            if e.args:  # a step that ran out of time, named
                raise
            raise TimeoutError(f"history: stuck waiting for {phase[0]}") from None

    asyncio.run(bounded())
    out["max_rss_bytes"] = peak_rss_bytes()
    return out


def history_to_root(repo: str) -> dict:
    """history-250k's measurement: ``history_ui`` without the commit."""
    return history_ui(repo, time.time())
