"""read-random: the contents of 20k random objects, deltas included.

``packscope cat-file --batch`` vs ``git cat-file --batch`` (whole processes,
start-up included), and ``ObjectStore.read`` vs dulwich's ``get_raw`` and
pygit2's ``Odb.read``.  The ids are a uniform sample of every object, so
the share of deltas is the repository's own (given in the workload).
"""

from __future__ import annotations

from packscope.bench import inputs as inp
from packscope.bench.results import Case, ScenarioResult
from packscope.bench.runner import WorkerRun, api_series, cat_file_case, repeat
from packscope.bench.verify import batch_counts

NAME = "read-random"
TITLE = "Reading the contents of random objects (deltas included)"


def run(ctx) -> ScenarioResult:
    res, source, repo = inp.on_real_history(ctx, NAME, TITLE)
    table = inp.object_table(ctx, repo)
    n = min(ctx.size(20_000, 200), len(table))

    counts = table.counts()
    workload = {
        "objects": n,
        "objects_in_repo": len(table),
        "delta_share_in_repo": round(counts["deltas"] / max(1, len(table)), 3),
        "delta_share_in_samples": [],
        **inp.describe(repo),
    }

    def inputs(rep: int) -> dict:
        rnd = inp.rng_for(ctx, NAME, source.label, rep)
        picks = rnd.sample(range(len(table)), n)
        ids = [table.ids[i] for i in picks]
        if len(workload["delta_share_in_samples"]) <= rep:  # both cases draw the same ids per repetition
            workload["delta_share_in_samples"].append(round(sum(table.deltas[i] for i in picks) / max(1, n), 3))
        return {
            "hex": inp.write_ids(ctx, ids, hex_lines=True),
            "raw": inp.write_ids(ctx, ids, hex_lines=False),
            "present": len(ids),
            "absent": 0,
        }

    def check(counts: dict, i: dict) -> dict:
        counts["correct"] = counts["found"] == i["present"] and counts["missing"] == 0
        return counts

    target = (1.0, "read-random ≤ 1.0× git (start-up included)")
    verify = lambda p, i: check(batch_counts(p), i)  # noqa: E731
    res.cases.append(cat_file_case(ctx, source.label, repo, workload, "--batch", target, verify, inputs))

    case = Case(f"{source.label} · in-process read", source.label, workload)
    runs = []
    for system, label in (
        ("packscope", "packscope ObjectStore.read"),
        ("dulwich", "dulwich get_raw"),
        ("pygit2", "pygit2 Odb.read"),
    ):

        def read_args(i: dict, system: str = system) -> dict:
            return {"system": system, "op": "read", "repo": repo, "ids": i["raw"], "rawsz": table.rawsz}

        runs.append(
            WorkerRun(
                api_series(system, label),
                "packscope.bench.inproc:api",
                read_args,
                check=lambda r, i: {"objects": r["items"], "content_bytes": r["answer"]},
            )
        )
    res.cases.append(repeat(case, runs, inputs, ctx))
    # The same bytes from every system, or the comparison means nothing.
    sizes = {s.system: s.info.get("content_bytes") for c in res.cases for s in c.series if s.samples}
    if len(set(sizes.values())) > 1:
        res.notes.append(f"content bytes differ between systems (last repetition): {sizes}")
    return res
