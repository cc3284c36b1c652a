"""In-process operations run inside a worker (see packscope.bench.worker).

``api`` opens one library on a repository, converts the ids to its own form,
then times one bulk operation over them.  Opening is timed separately
(``open_seconds``): for an in-process API the interesting number is the
per-lookup cost, and the open cost is shown next to it rather than mixed in.
"""

from __future__ import annotations

import time

from packscope.bench.peers import adapter


def read_ids(path: str, rawsz: int) -> list[bytes]:
    with open(path, "rb") as f:
        data = f.read()
    return [data[i : i + rawsz] for i in range(0, len(data), rawsz)]


def api(system: str, op: str, repo: str, ids: str | None = None, rawsz: int = 20, options: dict | None = None) -> dict:
    a = adapter(system)
    t0 = time.perf_counter()
    a.open(repo, **(options or {}))
    opened = time.perf_counter() - t0
    items = a.prepare(read_ids(ids, rawsz)) if ids else []
    func = getattr(a, op)
    c0, t0 = time.process_time(), time.perf_counter()
    answer = func(items) if ids else func()
    seconds = time.perf_counter() - t0
    # CPU time of the timed region: on a shared, loaded machine wall time
    # stretches with other people's work, CPU time much less.
    cpu = time.process_time() - c0
    out = {"seconds": seconds, "cpu_seconds": cpu, "open_seconds": opened, "answer": answer, "items": len(items)}
    counters = getattr(getattr(a, "store", None), "counters", None)
    if system == "packscope" and counters is not None:
        out["store_counters"] = counters.as_dict()
    a.close()
    return out
