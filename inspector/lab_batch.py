"""The Lookup lab's batches, without any widget: many lookups through the
store (a fresh one per run unless warm), and per algorithm the
distributions of probes, names read, pages and microseconds per lookup,
plus the rescans and loose-cache fills the store did.

Every call into core takes ``lock`` (the store is not thread-safe), in small
pieces: one lookup per hold.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass, field

from packscope.core import trace
from packscope.core.errors import PackscopeError
from packscope.core.store.loose import LooseCache
from packscope.core.store.search import ALGORITHMS, Steps, search_function
from packscope.inspector.lab_model import index_by_name, index_of, resolve, search_bounds

# --- batches ----------------------------------------------------------------------------

BATCH_MODES = ("mixed", "present", "absent")


def sample_ids(store, lock, k: int, mode: str, seed: int | None = None) -> list[bytes]:
    """``k`` ids: present ones drawn from the indexes and the loose store,
    absent ones random; ``mixed`` is half and half."""
    rnd = random.Random(seed)
    n_present = {"present": k, "absent": 0}.get(mode, k // 2)
    ids: list[bytes] = []
    if n_present:
        with lock:
            tables = [m for m in store.midxs] + [h.index for h in store.packs if not h.in_midx]
        sizes = []
        for t in tables:
            try:
                with lock:
                    sizes.append(t.open().num_objects)
            except PackscopeError:
                sizes.append(0)
        # A cache of its own: the store's (and its trace) stay as the user left
        # them; a subdirectory git prunes meanwhile reads as empty.
        listing = LooseCache(store.objects_dir, store.fmt)
        loose = [oid for n in range(256) for oid in listing.entries(n)]
        total = sum(sizes) + len(loose)
        for _ in range(n_present if total else 0):
            r = rnd.randrange(total)
            for t, size in zip(tables, sizes, strict=True):
                if r < size:
                    with lock:
                        ids.append(t.name_at(r))
                    break
                r -= size
            else:
                ids.append(loose[r])
    ids += [rnd.randbytes(store.fmt.rawsz) for _ in range(k - len(ids))]
    rnd.shuffle(ids)
    return ids


def read_ids(session, lock, path: str, limit: int = 1_000_000) -> tuple[list[bytes], int]:
    """Ids from a file, one per line (first word: `git rev-list --objects
    --all` output works); full ids directly, anything else resolved.
    Returns (ids, lines that resolved to nothing)."""
    from packscope.core.oid import is_hex

    hexsz = session.fmt.hexsz
    ids, bad = [], 0
    with open(os.path.expanduser(path), encoding="utf-8", errors="replace") as f:
        for line in f:
            word = line.split(maxsplit=1)
            if not word:
                continue
            w = word[0]
            if len(w) == hexsz and is_hex(w):
                ids.append(bytes.fromhex(w))
            else:
                with lock:
                    oid, _ = resolve(session, w)
                if oid is None:
                    bad += 1
                else:
                    ids.append(oid)
            if len(ids) >= limit:
                break
    return ids, bad


@dataclass(slots=True)
class BatchResult:
    label: str
    settings: dict
    lookups: int = 0
    found: int = 0
    missing: int = 0
    searches: int = 0
    rescans: int = 0
    rescans_skipped: int = 0
    fills: int = 0
    dir_reads: int = 0
    stats: int = 0
    seconds: float = 0.0  # the store's own time (LookupFinished), summed
    wall: float = 0.0
    # per algorithm, one value per lookup (summed over its bucket searches)
    probes: dict = field(default_factory=lambda: {a: [] for a in ALGORITHMS})
    reads: dict = field(default_factory=lambda: {a: [] for a in ALGORITHMS})  # names read
    pages: dict = field(default_factory=lambda: {a: [] for a in ALGORITHMS})
    micros: dict = field(default_factory=lambda: {a: [] for a in ALGORITHMS})
    cancelled: bool = False
    # the repository changed while the batch ran ("a repack at 14:02"): its
    # found/missing counts mix the states before and after
    changed: str | None = None
    vanished: int = 0  # searches not repeated: their index was gone by then


# Settings a batch run is made under, in the order the runs table shows them.
RUN_SETTINGS = ("algorithm", "policy", "quick", "loose", "cache")


def store_settings(store, warm: bool = True) -> dict:
    s = store.settings
    return {
        "algorithm": s.algorithm,
        "policy": s.policy,
        "quick": s.quick,
        "loose": s.loose_strategy,
        "cache": "warm" if warm else "cold",
    }


def fresh_session(session, lock):
    """A new session on the same repository under the same store settings,
    with empty caches (negative cache, loose-name cache, MRU order), and a
    tracer of its own: a cold batch run measures the store, not what the
    runs before it left behind.  The caller closes it."""
    from packscope.core.repo.session import open_session

    with lock:
        s = session.store.settings
        repo = session.repo  # the repository as found once, not found again from its git directory
    return open_session(
        repo=repo,
        tracer=trace.Tracer(),
        policy=s.policy,
        quick=s.quick,
        loose_strategy=s.loose_strategy,
        algorithm=s.algorithm,
    )


TIMING_REPEATS = 3  # each search timed this often, the fastest kept: a GC pause is not the algorithm's


def run_batch(
    store, lock, ids: list[bytes], label: str, progress=None, cancelled=None, warm: bool = True, repo=None
) -> BatchResult:
    """Look every id up (traced), and search each bucket the store searched
    again with each algorithm: traced (probes, names read, pages) and
    untraced (time).  Given ``repo``, the repository's state is recorded
    before and after (``packscope.core.repo.repo_state``): a change in
    between is the result's ``changed``."""
    from packscope.core.repo.repo_state import compare, state_of

    start = state_of(repo) if repo is not None else None
    fns = {a: search_function(a) for a in ALGORITHMS}
    recorder = trace.Recorder()
    unsubscribe = store.tracer.subscribe(recorder)
    with lock:
        res = BatchResult(label, store_settings(store, warm))
        before = store.counters.as_dict()
        by_name = index_by_name(store)
    perf = time.perf_counter_ns
    t_start = time.perf_counter()
    try:
        for n, oid in enumerate(ids):
            if cancelled is not None and n % 64 == 0 and cancelled():
                res.cancelled = True
                break
            probes = dict.fromkeys(ALGORITHMS, 0)
            reads = dict.fromkeys(ALGORITHMS, 0)
            pages = dict.fromkeys(ALGORITHMS, 0)
            ns = dict.fromkeys(ALGORITHMS, 0)
            with lock:
                recorder.events.clear()
                loc = store.locate(oid)
                events = recorder.events
                recorder.events = []
                for e in events:
                    if isinstance(e, trace.PackSearched):
                        target = by_name.get(e.pack)
                        if target is None:  # new after a rescan
                            by_name = index_by_name(store)
                            target = by_name.get(e.pack)
                        index = index_of(target)
                        if index is None:
                            continue
                        lo, hi = e.path.bucket
                        try:
                            nr = search_bounds(index, e.path.bucket)
                            name_at = index.name_accessor()
                        except PackscopeError:
                            # the index is gone since the lookup searched it (a repack):
                            # nothing to search again; the summary counts these
                            res.vanished += 1
                            continue
                        res.searches += 1
                        for a in ALGORITHMS:
                            fn = fns[a]
                            steps = Steps(index.page_of)
                            fn(name_at, lo, hi, nr, oid, steps)
                            probes[a] += len(steps.probes)
                            reads[a] += len(steps.reads)
                            pages[a] += len(steps.pages())
                            timings = []
                            for _ in range(TIMING_REPEATS):
                                t0 = perf()
                                fn(name_at, lo, hi, nr, oid)
                                timings.append(perf() - t0)
                            ns[a] += min(timings)
                    elif isinstance(e, trace.LooseCacheFilled):
                        res.fills += 1
                    elif isinstance(e, trace.PackDirScanned):
                        res.rescans += 1
                        by_name = index_by_name(store)
                    elif isinstance(e, trace.LookupFinished):
                        res.seconds += e.seconds
            res.lookups += 1
            if loc is None:
                res.missing += 1
            else:
                res.found += 1
            for a in ALGORITHMS:
                res.probes[a].append(probes[a])
                res.reads[a].append(reads[a])
                res.pages[a].append(pages[a])
                res.micros[a].append(ns[a] / 1000)
            if progress is not None and n % 200 == 199:
                progress(n + 1, len(ids))
    finally:
        unsubscribe()
        res.wall = time.perf_counter() - t_start
        with lock:
            after = store.counters.as_dict()
    if start is not None:
        change = compare(start, state_of(repo))
        res.changed = None if change is None else change.describe()
    res.rescans_skipped = after["rescans_skipped"] - before["rescans_skipped"]
    res.dir_reads = after["dir_reads"] - before["dir_reads"]
    res.stats = after["stats"] - before["stats"]
    return res


# --- histograms ---------------------------------------------------------------------------


def histogram(values: list[float], bins: int, lo: float, hi: float, integer: bool = False) -> tuple[list[int], float]:
    """(counts, bin width) over [lo, hi]; values beyond land in the end bins.
    Integer data gets one bin per value when the range allows."""
    if integer:
        first, last = int(lo), int(hi)
        step = max(1, -(-(last - first + 1) // bins))
        n = (last - first) // step + 1
        lo, width = first, float(step)
    else:
        width = (hi - lo) / bins or 1.0
        n = bins
    counts = [0] * n
    for v in values:
        k = int((v - lo) // width)
        counts[min(max(k, 0), n - 1)] += 1
    return counts, float(width)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]
