"""idx-search: binary vs interpolation vs hedged inside the fanout buckets.

On a synthetic 1M-entry v2 ``.idx`` written here (random ids: no pack is
needed to search an index) and on the real history's largest ``.idx``.
For each algorithm, in a fresh process per repetition, with fresh ids (half
present, half absent):

* µs per lookup on the first pass over a cold mapping (the sample), and on
  a second, warm pass;
* minor page faults of the cold pass (``getrusage``'s ``ru_minflt``; the
  kernel may map a few neighbouring pages per fault, so faults ≤ pages);
* mean probes and mean distinct 4 KiB pages touched per lookup, from the
  traced search (``PackIndex.find_traced``) — the seed thread's measure.

No peer exposes its index search, so this scenario compares packscope's
algorithms with each other (ratios against binary, git's choice).
"""

from __future__ import annotations

import gc
import hashlib
import os
import random
import resource
import struct
import time
from array import array
from pathlib import Path

from packscope.bench import inputs as inp
from packscope.bench.results import Case, ScenarioResult, Series
from packscope.bench.runner import WorkerRun, repeat

NAME = "idx-search"
TITLE = "Pack index search: probes, pages, faults, µs per lookup"
ALGORITHMS = ("binary", "interpolation", "hedged")
# The untraced batch form (packscope.core.store.prefix_column): bisect over each name's first
# four bytes, built on the first lookup (its cost is in the cold time).
COLUMN = "binary + prefix column"


def write_idx_v2(path: Path, n: int, seed: int = 1, rawsz: int = 20) -> None:
    """A valid version-2 .idx of ``n`` random ids (offsets increasing, CRCs
    zero, no large offsets), checksummed like git's."""
    rnd = random.Random(seed)
    blob = rnd.randbytes(rawsz * n)
    names = sorted(blob[i : i + rawsz] for i in range(0, len(blob), rawsz))
    counts = [0] * 256
    for name in names:
        counts[name[0]] += 1
    fanout, total = [], 0
    for c in counts:
        total += c
        fanout.append(total)
    offsets = array("I", range(12, 12 + 64 * n, 64))
    if struct.pack("=I", 1) != struct.pack(">I", 1):
        offsets.byteswap()  # .idx integers are big-endian
    body = b"".join(
        (
            b"\377tOc",
            struct.pack(">I", 2),
            struct.pack(">256I", *fanout),
            b"".join(names),
            bytes(4 * n),
            offsets.tobytes(),
            rnd.randbytes(rawsz),
        )
    )
    digest = hashlib.sha1(body).digest() if rawsz == 20 else hashlib.sha256(body).digest()
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_bytes(body + digest)
    os.replace(tmp, path)


def synthetic_idx(ctx, n: int) -> Path:
    path = ctx.work_dir / "idx" / f"synthetic-{n}-v1.idx"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_idx_v2(path, n)
    return path


def idx_names(path: Path, rawsz: int = 20) -> list[bytes]:
    from packscope.core.oid import SHA1, SHA256
    from packscope.core.store.pack_index import PackIndex

    idx = PackIndex(str(path), SHA1 if rawsz == 20 else SHA256)
    try:
        return list(idx.names())
    finally:
        idx.close()


def run(ctx) -> ScenarioResult:
    res = ScenarioResult(
        NAME,
        TITLE,
        columns=[
            ("warm_us", "warm µs"),
            ("minflt", "minor faults (cold)"),
            ("probes", "probes/lookup"),
            ("pages", "pages/lookup"),
            ("distinct_pages", "distinct pages (all)"),
        ],
    )
    k = ctx.size(20_000, 400)
    sources = [
        (
            "synthetic 1M-entry .idx" if not ctx.tiny else "synthetic 20k-entry .idx",
            synthetic_idx(ctx, ctx.size(1_000_000, 20_000)),
            20,
        )
    ]
    real = inp.real_history(ctx)
    idxs = sorted((real.path / "objects" / "pack").glob("*.idx"), key=lambda p: p.stat().st_size)
    if idxs:
        fmt = inp.object_format(real.path)
        sources.append((f"{real.label}: {idxs[-1].name[:17]}… .idx", idxs[-1], 20 if fmt == "sha1" else 32))
    if real.note:
        res.notes.append(real.note)
    for label, path, rawsz in sources:
        names = ctx.memo(("idx-names", str(path)), lambda path=path, rawsz=rawsz: idx_names(path, rawsz))
        present = set(names)

        def inputs(rep: int, label=label, names=names, present=present, rawsz=rawsz) -> dict:
            rnd = inp.rng_for(ctx, NAME, label, rep)
            ids = rnd.sample(names, min(k // 2, len(names)))
            while len(ids) < k:
                oid = rnd.randbytes(rawsz)
                if oid not in present:
                    ids.append(oid)
            rnd.shuffle(ids)
            return {"raw": inp.write_ids(ctx, ids, hex_lines=False), "present": min(k // 2, len(names))}

        case = Case(
            label,
            label,
            {"entries": len(names), "lookups": k, "present": min(k // 2, len(names)), "idx_bytes": path.stat().st_size},
            extra_ratios=[("interpolation", "binary"), ("hedged", "binary"), (COLUMN, "binary")],
        )
        runs = []
        for alg in (*ALGORITHMS, COLUMN):

            def probe_args(i: dict, alg: str = alg, path: Path = path, rawsz: int = rawsz) -> dict:
                return {"idx": str(path), "algorithm": alg, "ids": i["raw"], "rawsz": rawsz}

            runs.append(
                WorkerRun(
                    Series(alg, "packscope", "in-process", unit="µs/lookup"),
                    "packscope.bench.scenarios.idx_search:probe",
                    probe_args,
                    check=lambda r, i: {"found": r["found"], "correct": r["found"] == i["present"]},
                )
            )
        res.cases.append(repeat(case, runs, inputs, ctx))
    return res


# --- in the worker --------------------------------------------------------------------------


def probe(idx: str, algorithm: str, ids: str, rawsz: int = 20) -> dict:
    from packscope.bench.inproc import read_ids
    from packscope.core.oid import SHA1, SHA256
    from packscope.core.store.pack_index import PackIndex

    oids = read_ids(ids, rawsz)
    index = PackIndex(idx, SHA1 if rawsz == 20 else SHA256)
    index.open()  # maps the file and reads the header and fanout: not the names
    column = algorithm == COLUMN
    index.prefix_column_after = 0 if column else None  # the plain searches stay plain
    index.compiled_search = False  # these rows are the Python searches (the compiled one is _native.idx_find)
    if column:
        algorithm = "binary"
    find = index.find
    gc.disable()  # no collector pass inside the measured loops
    faults0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t0 = time.perf_counter()
    found = 0
    for oid in oids:
        if find(oid, algorithm) >= 0:
            found += 1
    cold = time.perf_counter() - t0
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults0
    t0 = time.perf_counter()
    for oid in oids:
        find(oid, algorithm)
    warm = time.perf_counter() - t0
    gc.enable()
    n = max(1, len(oids))
    traced: dict[str, float | None] = {"probes": None, "pages": None, "distinct_pages": None}
    if not column:  # the column has no probe-by-probe path: bisect runs in C over it
        probes = pages = 0
        touched: set[int] = set()
        for oid in oids:
            path = index.find_traced(oid, algorithm)
            probes += len(path.probes)
            pages += len(path.pages)
            touched.update(path.pages)
        traced = {"probes": probes / n, "pages": pages / n, "distinct_pages": len(touched)}
    index.close()
    return {
        "seconds": cold / n * 1e6,
        "warm_us": warm / n * 1e6,
        "minflt": faults,
        "found": found,
        **traced,
        "lookups": len(oids),
    }
