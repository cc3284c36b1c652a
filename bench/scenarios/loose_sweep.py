"""loose-sweep: 256×N loose objects, quick-checked and abbreviated, each one.

The seed thread's table (p0008 / p4205): with a cache of loose object names,
filling one sorted array and sorting it again after each of the 256
subdirectories costs O(256·n) per fill; one sorted list per subdirectory
does not.  For each N, every loose object is looked up with *quick* and
abbreviated (the shortest unique prefix from 7 hex digits) three ways:

* ``per-subdir`` — packscope's loose cache, one sorted list per subdirectory;
* ``global-resort`` — one list for everything, sorted again after each fill;
* ``stat`` — no cache: ``stat`` for existence, and a fresh listing of the
  subdirectory for each abbreviation (git before the cache).  That is
  O(N) per object, so above a few thousand objects the abbreviations are
  timed on a sample and the sweep's total is extrapolated (marked ~).
"""

from __future__ import annotations

import time

from packscope.bench import inputs as inp
from packscope.bench.results import Case, ScenarioResult, Series
from packscope.bench.runner import WorkerRun, repeat

NAME = "loose-sweep"
TITLE = "Loose objects: quick checks and abbreviations over 256×N objects"
METHODS = ("per-subdir", "global-resort", "stat")
STAT_SAMPLE = 2000


def run(ctx) -> ScenarioResult:
    res = ScenarioResult(NAME, TITLE, layout="matrix")
    ns = ctx.size((1, 10, 100, 250, 500, 1000), (1, 2))
    res.notes.append(
        "each cell: quick-check + abbreviate every loose object once, in a fresh process "
        "(cache fills included); ~ marks an extrapolated total (stat abbreviations sampled)"
    )
    built: list[int] = []
    for n in ns:
        repo = str(inp.loose_repo(ctx, n, smaller=built))
        built.append(n)
        table = inp.object_table(ctx, repo)

        def inputs(rep: int, n=n, table=table) -> dict:
            rnd = inp.rng_for(ctx, NAME, n, rep)
            ids = list(table.ids)
            rnd.shuffle(ids)  # a fresh order: which subdirectory fills first differs per repetition
            return {"raw": inp.write_ids(ctx, ids, hex_lines=False), "n": len(ids)}

        case = Case(
            f"256×{n}",
            f"{256 * n} loose objects",
            {"loose_objects": len(table)},
            extra_ratios=[("global-resort", "per-subdir"), ("stat", "per-subdir")],
        )
        runs = []
        for m in METHODS:

            def sweep_args(i: dict, m: str = m, repo: str = repo) -> dict:
                return {"repo": repo, "method": m, "ids": i["raw"], "stat_sample": STAT_SAMPLE}

            runs.append(
                WorkerRun(
                    Series(m, "packscope", "in-process"),
                    "packscope.bench.scenarios.loose_sweep:sweep",
                    sweep_args,
                    check=lambda r, i: {
                        "found": r["found"],
                        "correct": r["found"] == i["n"],
                        **({"mark": "~"} if r.get("extrapolated") else {}),
                    },
                )
            )
        res.cases.append(repeat(case, runs, inputs, ctx))
    return res


# --- in the worker --------------------------------------------------------------------------


def abbreviate(oid: bytes, fmt, matches) -> str:
    """Shortest unique hex prefix of at least 7 digits, as %h gives."""
    from packscope.core.oid import parse_prefix

    hexid = oid.hex()
    for n in range(7, len(hexid) + 1):
        if len(matches(parse_prefix(hexid[:n], fmt))) <= 1:
            return hexid[:n]
    return hexid


def sweep(repo: str, method: str, ids: str, stat_sample: int = STAT_SAMPLE) -> dict:
    from packscope.bench.inproc import read_ids
    from packscope.core.repo.session import open_session
    from packscope.core.store.loose import LooseCache

    session = open_session(
        repo, quick=method != "stat", loose_strategy="global-resort" if method == "global-resort" else "per-subdir"
    )
    store = session.store
    fmt = store.fmt
    oids = read_ids(ids, fmt.rawsz)
    contains = store.contains
    found = 0
    abbrev_seconds = 0.0
    c0 = time.process_time()
    if method != "stat":
        t0 = time.perf_counter()
        for oid in oids:
            if contains(oid):
                found += 1
            abbreviate(oid, fmt, store.resolve_prefix)
        seconds = time.perf_counter() - t0
        extrapolated = False
    else:
        t0 = time.perf_counter()
        for oid in oids:
            if contains(oid):  # not quick: stat() of objects/xx/yyyy
                found += 1
        check_seconds = time.perf_counter() - t0
        objects_dir = store.objects_dir
        sample = oids[:stat_sample]

        def listing(prefix):  # no cache: read the subdirectory again, as git did before the cache
            return LooseCache(objects_dir, fmt).matches(prefix)

        c1, t0 = time.process_time(), time.perf_counter()
        for oid in sample:
            abbreviate(oid, fmt, listing)
        abbrev_seconds = time.perf_counter() - t0
        abbrev_cpu = time.process_time() - c1
        extrapolated = len(sample) < len(oids)
        scale = len(oids) / max(1, len(sample))
        seconds = check_seconds + abbrev_seconds * scale
        c0 -= abbrev_cpu * (scale - 1)  # the CPU time is extrapolated the same way
    cpu = time.process_time() - c0
    session.close()
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "found": found,
        "objects": len(oids),
        "extrapolated": extrapolated,
        "us_per_object": seconds / max(1, len(oids)) * 1e6,
    }
