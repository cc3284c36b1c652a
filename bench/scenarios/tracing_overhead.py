"""tracing-overhead: what watching the store costs.

The same lookups (present and absent ids mixed) and reads (random present
objects) with:

* ``off`` — the store made without a tracer (it creates its own, idle);
* ``inactive`` — a tracer that had a listener and lost it (``active`` is
  False again): the flag check alone;
* ``recorder`` — a ``packscope.core.trace.Recorder`` listening: every event built and kept;
* ``ui adapter`` — ``packscope.inspector.events.EventPump``, the UI's listener (a
  deque append per event).

Ratios are against ``off``; no peer has tracing to compare with.
"""

from __future__ import annotations

import time

from packscope.bench import inputs as inp
from packscope.bench.results import Case, ScenarioResult, Series
from packscope.bench.runner import WorkerRun, repeat

NAME = "tracing-overhead"
TITLE = "Tracing overhead: off, inactive, recorder, UI adapter"
MODES = ("off", "inactive", "recorder", "ui adapter")


def run(ctx) -> ScenarioResult:
    res, source, repo = inp.on_real_history(ctx, NAME, TITLE, layout="matrix")
    table = inp.object_table(ctx, repo)
    n_lookups, n_reads = ctx.size(10_000, 200), ctx.size(3_000, 100)
    for op, label, n in (("contains", "lookups (half absent)", n_lookups), ("read", "reads", n_reads)):

        def inputs(rep: int, op=op, n=n) -> dict:
            rnd = inp.rng_for(ctx, NAME, op, rep)
            ids = inp.sample_present(table, rnd, n if op == "read" else n // 2)
            if op == "contains":
                ids += inp.absent_ids(rnd, n - len(ids), table.rawsz, table)
                rnd.shuffle(ids)
            return {"raw": inp.write_ids(ctx, ids, hex_lines=False)}

        case = Case(
            f"{source.label} · {n} {label}",
            source.label,
            {"items": n, "op": op},
            extra_ratios=[(m, "off") for m in MODES[1:]],
        )
        runs = []
        for m in MODES:

            def traced_args(i: dict, m: str = m, op: str = op) -> dict:
                return {"repo": repo, "mode": m, "op": op, "ids": i["raw"], "rawsz": table.rawsz}

            runs.append(
                WorkerRun(
                    Series(m, "packscope", "in-process"),
                    "packscope.bench.scenarios.tracing_overhead:traced",
                    traced_args,
                    check=lambda r, i: {"events": r.get("events")},
                )
            )
        res.cases.append(repeat(case, runs, inputs, ctx))
    return res


# --- in the worker --------------------------------------------------------------------------


def traced(repo: str, mode: str, op: str, ids: str, rawsz: int = 20) -> dict:
    from packscope.bench.inproc import read_ids
    from packscope.core import trace
    from packscope.core.repo.session import open_session

    tracer = None
    recorder = pump = None
    if mode != "off":
        tracer = trace.Tracer()
        if mode == "inactive":
            tracer.subscribe(lambda e: None)()  # subscribe, then unsubscribe at once
        elif mode == "recorder":
            recorder = trace.Recorder()
            tracer.subscribe(recorder)
        elif mode == "ui adapter":
            from packscope.inspector.events import EventPump

            pump = EventPump(tracer)
    session = open_session(repo, tracer=tracer)
    store = session.store
    oids = read_ids(ids, rawsz)
    c0, t0 = time.process_time(), time.perf_counter()
    if op == "contains":
        contains = store.contains
        for oid in oids:
            contains(oid)
    else:
        read = store.read
        for oid in oids:
            read(oid)
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0
    events = len(recorder.events) if recorder else (len(pump) if pump else 0)
    session.close()
    return {"seconds": seconds, "cpu_seconds": cpu, "events": events}
