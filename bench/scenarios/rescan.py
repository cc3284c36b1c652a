"""rescan — the p5551 shape: K lookups of absent ids with P packs.

Under git's rule every miss re-reads ``objects/pack`` in case a concurrent
repack moved the object; with P in 1, 10, 100, 1000 that cost grows with P.
packscope runs the same K misses under policy ``git`` (rescan on every
miss), ``gated`` (rescan only when the directory changed) and ``quick`` (no
rescan; loose objects through the cache).  gated should approach quick;
``policy gated, batch`` answers the same K misses with one ``locate_many``.
Peers, for scale: dulwich and pygit2 in-process, and ``git cat-file
--batch-check`` as a whole process (git's own rescans, start-up included).
The P-pack repositories are built like p5551's: fast-import checkpoints.
"""

from __future__ import annotations

from packscope.bench import inputs as inp
from packscope.bench.peers import git_cmd
from packscope.bench.results import Case, ScenarioResult, Series, Target
from packscope.bench.runner import ProcessRun, Run, WorkerRun, api_series, repeat
from packscope.bench.verify import batch_check_counts

NAME = "rescan"
TITLE = "Misses with many packs (p5551): policy git vs gated vs quick"
POLICIES = (
    ("policy git", {"policy": "git"}),
    ("policy gated", {"policy": "gated"}),
    ("quick", {"policy": "gated", "quick": True}),
)
GATED_TARGET = 1.25


def none_found(result: dict, inputs: dict) -> dict:
    """Every id asked for is absent; packscope's answers also count its rescans."""
    facts = {"found": result["answer"], "correct": result["answer"] == 0}
    if "store_counters" in result:  # packscope's rows
        facts["rescans"] = result["store_counters"].get("rescans")
    return facts


def run(ctx) -> ScenarioResult:
    res = ScenarioResult(NAME, TITLE, layout="matrix")
    k = ctx.size(1000, 20)
    base = ctx.size(200, 40)  # tiny: the same repository as exists-mixed's (built once)
    res.notes.append(
        f"K = {k} absent ids per repetition; each P-pack repository holds a {base}-commit history "
        "in its first pack and one commit per further pack"
    )
    res.notes.append(f'target: policy gated ≤ {GATED_TARGET}× quick ("gated approaches quick")')
    for packs in ctx.size((1, 10, 100, 1000), (20,)):
        repo = str(inp.many_packs(ctx, packs, base))
        table = inp.object_table(ctx, repo)
        inp.warm(ctx, repo)

        def inputs(rep: int, packs=packs, table=table) -> dict:
            rnd = inp.rng_for(ctx, NAME, packs, rep)
            ids = inp.absent_ids(rnd, k, table.rawsz, table)
            return {
                "hex": inp.write_ids(ctx, ids, hex_lines=True),
                "raw": inp.write_ids(ctx, ids, hex_lines=False),
                "present": 0,
                "absent": len(ids),
            }

        case = Case(
            f"P = {packs}",
            f"{packs} packs",
            {"absent_lookups": k, **inp.describe(repo)},
            targets=[Target("policy gated", "quick", GATED_TARGET, f"gated ≤ {GATED_TARGET}× quick")],
            extra_ratios=[("policy git", "quick"), ("policy gated", "quick"), ("policy gated, batch", "quick")],
        )
        runs: list[Run] = []
        for label, options in POLICIES:

            def contains_args(i: dict, o: dict = options, repo: str = repo) -> dict:
                return {"system": "packscope", "op": "contains", "repo": repo, "ids": i["raw"], "options": o}

            runs.append(
                WorkerRun(
                    Series(label, "packscope", "in-process"),
                    "packscope.bench.inproc:api",
                    contains_args,
                    check=none_found,
                )
            )

        # The batch API (what `cat-file --batch-check` uses) under gated:
        # one pack-directory check per batch instead of one per miss.
        def batch_args(i: dict, repo: str = repo) -> dict:
            return {
                "system": "packscope",
                "op": "contains_batch",
                "repo": repo,
                "ids": i["raw"],
                "options": {"policy": "gated"},
            }

        runs.append(
            WorkerRun(
                Series("policy gated, batch", "packscope", "in-process"),
                "packscope.bench.inproc:api",
                batch_args,
                check=none_found,
            )
        )
        for lib, label in (("dulwich", "dulwich"), ("pygit2", "pygit2")):

            def peer_args(i: dict, lib: str = lib, repo: str = repo) -> dict:
                return {"system": lib, "op": "contains", "repo": repo, "ids": i["raw"]}

            runs.append(WorkerRun(api_series(lib, label), "packscope.bench.inproc:api", peer_args, check=none_found))

        def git_args(i: dict, repo: str = repo) -> list[str]:
            return git_cmd(repo, "cat-file", "--batch-check")

        runs.append(
            ProcessRun(
                Series("git cat-file --batch-check (process)", "peer", "process"),
                git_args,
                lambda i: i["hex"],
                lambda p, i: {**batch_check_counts(p), "correct": batch_check_counts(p)["missing"] == i["absent"]},
            )
        )
        res.cases.append(repeat(case, runs, inputs, ctx))
    return res
