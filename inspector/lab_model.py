"""The Lookup lab's and the Fanout screen's models, without any widget.

* ``index_choices`` — every searchable index of the store (multi-pack-indexes
  and pack indexes), with its object count;
* ``traced_lookup`` — one lookup run through core with a recorder attached:
  the events core emitted, in order, turned into ``Stage``s; every bucket
  searched is searched again with the three algorithms by
  ``packscope.core.store.search.traced_search`` on the same index, bucket and target, so the
  drawn probes *are* core's trace;
* ``frames`` — the steps the lab animates: one per stage, and inside a
  bucket search one per probe (the three algorithms step together);
* ``run_batch`` — many lookups, and per algorithm the distributions of
  probes, pages and microseconds per lookup, plus the rescans and loose-cache
  fills the store did.

Every call into core takes ``lock`` (the store is not thread-safe), in small
pieces: one lookup per hold.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass, field

from packscope.core import trace
from packscope.core.errors import AmbiguousObjectError, PackscopeError
from packscope.core.store.search import ALGORITHMS, Steps, search_function, traced_search

# --- indexes ---------------------------------------------------------------------


@dataclass(slots=True)
class IndexChoice:
    kind: str  # "midx" or "pack"
    name: str  # file name as core's events name it (pack-….idx / multi-pack-index)
    index: object  # packscope.core.store.pack_index.PackIndex or packscope.core.store.midx.MultiPackIndex
    objects: int | None = None
    local: bool = True
    error: str | None = None

    @property
    def label(self) -> str:
        return f"{self.kind:<4} {self.name}"


def index_choices(store, lock, count: bool = True) -> list[IndexChoice]:
    """Multi-pack-indexes first, then every pack index (search order)."""
    with lock:
        midxs = list(store.midxs)
        packs = list(store.packs)
    out = [IndexChoice("midx", os.path.basename(m.path), m) for m in midxs]
    out += [IndexChoice("pack", h.index.name, h.index, local=h.files.local) for h in packs]
    if count:
        for c in out:
            count_index(c, lock)
    return out


def count_index(c: IndexChoice, lock) -> None:
    try:
        with lock:
            c.objects = c.index.open().num_objects
    except PackscopeError as e:
        c.error = e.message


def biggest(choices: list[IndexChoice]) -> int:
    best, at = -1, 0
    for i, c in enumerate(choices):
        if c.objects is not None and c.objects > best:
            best, at = c.objects, i
    return at


# --- fanout ------------------------------------------------------------------------


@dataclass(slots=True)
class FanoutStats:
    counts: tuple[int, ...]  # objects per first byte (256)
    total: int
    expected: float
    chi_square: float  # sum (actual - expected)^2 / expected, 255 degrees of freedom
    max_dev_bucket: int
    max_dev: float  # (actual - expected) / expected of the worst bucket

    def z(self, b: int) -> float:
        e = self.expected
        return (self.counts[b] - e) / e**0.5 if e else 0.0


def fanout_counts(fanout) -> tuple[int, ...]:
    """Per-bucket counts from a cumulative fanout table."""
    return tuple(fanout[b] - (fanout[b - 1] if b else 0) for b in range(256))


def fanout_stats(fanout) -> FanoutStats:
    counts = fanout_counts(fanout)
    total = sum(counts)
    e = total / 256
    chi = sum((a - e) ** 2 for a in counts) / e if e else 0.0
    worst = max(range(256), key=lambda b: abs(counts[b] - e)) if e else 0
    dev = (counts[worst] - e) / e if e else 0.0
    return FanoutStats(counts, total, e, chi, worst, dev)


def bucket_ids(index, first_byte: int, lock) -> tuple[list[int], list[bytes]]:
    """(positions, ids) of one bucket, in index order; for a chained
    multi-pack-index, every layer's bucket (tip layer first)."""
    with lock:
        spans = index.layer_buckets(first_byte) if hasattr(index, "layer_buckets") else [index.bucket(first_byte)]
        positions = [i for lo, hi in spans for i in range(lo, hi)]
        ids = [index.name_at(i) for i in positions]
    return positions, ids


def index_holds(index, oid: bytes, lock) -> bool:
    """Whether ``index`` lists ``oid``: its bucket searched with the pure
    binary search (no counters, caches or recency of the store touched)."""
    from packscope.core.store.search import binary_search

    with lock:
        index.open()
        first = oid[0]
        spans = index.layer_buckets(first) if hasattr(index, "layer_buckets") else [index.bucket(first)]
        name_at = index.name_accessor()
        return any(binary_search(name_at, lo, hi, search_bounds(index, (lo, hi)), oid) >= 0 for lo, hi in spans)


# --- one traced lookup --------------------------------------------------------------

CMP = {-1: "<", 0: "=", 1: ">"}


def probe_label(p: trace.Probe) -> str:
    """How the lab writes one probe: the slot probed, the window, the
    comparison of the name there with the target, and the page read."""
    return f"{p.mi} [{p.lo},{p.hi}) {CMP[p.cmp]} p{p.page}"


@dataclass(slots=True)
class Stage:
    kind: str  # midx, pack, loose, fill, rescan, skipped, negative, null, mru, finished
    text: str  # one line, as the stage list shows it
    event: object
    index: object = None  # the index searched (search stages)
    paths: dict = field(default_factory=dict)  # algorithm -> SearchPath (search stages)
    nr: int | None = None  # the search's table bound (search stages; None: not known)

    @property
    def is_search(self) -> bool:
        return bool(self.paths)

    @property
    def steps(self) -> int:
        return max((len(p.probes) for p in self.paths.values()), default=0)


@dataclass(slots=True)
class LookupRun:
    text: str
    oid: bytes | None
    error: str | None
    events: list
    stages: list[Stage]
    found: bool
    where: str | None
    source: str | None
    seconds: float
    store_algorithm: str

    def frames(self) -> list[tuple[int, int]]:
        """(stage, step) pairs in play order; a search has steps 0…N (step k
        shows the first k probes of each algorithm)."""
        out = []
        for i, s in enumerate(self.stages):
            if s.is_search:
                out += [(i, k) for k in range(s.steps + 1)]
            else:
                out.append((i, 0))
        return out or [(0, 0)]


def _index_by_name(store) -> dict:
    m = {h.index.name: h for h in store.packs}
    for x in store.midxs:
        m[os.path.basename(x.path)] = x
    return m


def names_read(path, nr: int | None = None) -> int:
    """Every name the search compared or read, as core's ``Steps`` counts
    them: the probes, and for interpolation and hedged also the names at
    the window's ends they read to make a guess (the first and, unless the
    bucket ends the table, the one past it before the first probe; the new
    low end after each probe that moved it).  ``nr`` unknown (a recorded
    trace): taken as not the table's end."""
    probes = path.probes
    if path.algorithm == "binary":
        return len(probes)
    lo, hi = path.bucket
    if lo >= hi:
        return 0
    ends_table = nr is not None and hi >= nr
    reads = len(probes) + 1 + (0 if ends_table else 1)
    reads += sum(1 for p in probes if p.cmp < 0 and p.mi + 1 < p.hi)
    return reads


def search_bounds(index, bucket: tuple[int, int]) -> int:
    """``nr`` for a search of ``bucket`` in ``index``: the table size, or, in
    a chained multi-pack-index, the end of the layer holding the bucket
    (as core's own search bounds it)."""
    layers = getattr(index, "layers", None)
    if layers and len(layers) > 1:
        lo, hi = bucket
        for layer in layers:
            end = layer.object_base + layer.num_objects
            if layer.object_base <= lo and hi <= end:
                return end
    return index.num_objects


def compare_paths(index, bucket: tuple[int, int], oid: bytes) -> dict:
    """The same bucket of the same index searched by each algorithm."""
    lo, hi = bucket
    nr = search_bounds(index, bucket)
    name_at = index.name_accessor()
    return {a: traced_search(a, name_at, lo, hi, nr, oid, index.page_of) for a in ALGORITHMS}


def resolve(session, text: str) -> tuple[bytes | None, str | None]:
    """``text``'s object id by core's one revision resolver, unverified (the
    traced lookup that follows is the check); else None and why, for people."""
    try:
        return session.resolve(text, verify=False), None
    except AmbiguousObjectError as e:
        names = [c[0] if isinstance(c, tuple) else c for c in e.candidates]
        return None, "ambiguous: " + ", ".join(n[:12] for n in names[:6])
    except PackscopeError as e:
        return None, f"{e.kind}: {e.message}"


def traced_lookup(session, lock, text: str) -> LookupRun:
    """Resolve ``text`` and look it up with a recorder attached."""
    store = session.store
    recorder = trace.Recorder()
    unsubscribe = store.tracer.subscribe(recorder)
    try:
        with lock:
            oid, error = resolve(session, text)
            if oid is None:
                return LookupRun(text, None, error, [], [], False, None, None, 0.0, store.settings.algorithm)
            recorder.events.clear()
            t0 = time.perf_counter()
            loc = store.locate(oid)
            seconds = time.perf_counter() - t0
            events = list(recorder.events)
            drawn = stages(events, oid, store.objects_dir, live_searches(store, oid))
    finally:
        unsubscribe()
    return LookupRun(
        text,
        oid,
        None,
        events,
        drawn,
        loc is not None,
        loc.where if loc else None,
        loc.source if loc else None,
        seconds,
        store.settings.algorithm,
    )


def live_searches(store, oid: bytes):
    """For ``stages``: each bucket search of a live lookup searched again
    by every algorithm on the very index the store searched."""
    by_name = _index_by_name(store)

    def searched(e: trace.PackSearched):
        target = by_name.get(e.pack)
        index = getattr(target, "index", target)
        alternate = getattr(target, "files", None) is not None and not target.files.local
        if index is None:
            return None, {e.path.algorithm: e.path}, None, alternate
        return index, compare_paths(index, e.path.bucket, oid), search_bounds(index, e.path.bucket), alternate

    return searched


def stages(events, oid: bytes, objects_dir: str, searched) -> list[Stage]:
    """The stages the lab draws for a lookup's events; ``searched(event)``
    gives a bucket search's (index, paths by algorithm, nr, alternate?)."""
    return [s for e in events if (s := _stage(e, oid, objects_dir, searched)) is not None]


def _stage(e, oid: bytes, objects_dir: str, searched) -> Stage | None:
    if isinstance(e, trace.PackSearched):
        index, paths, nr, alternate = searched(e)
        where = " (alternate)" if alternate else ""
        lo, hi = e.path.bucket
        verdict = f"found at {e.path.found}" if e.path.found is not None else f"absent (would be at {e.path.insert_at})"
        text = (
            f"{e.pack}{where}  bucket {oid[0]:02x} [{lo},{hi}) {hi - lo} name{'' if hi - lo == 1 else 's'}  {verdict}"
        )
        return Stage(e.source, text, e, index, paths, nr)
    if isinstance(e, trace.LooseChecked):
        alt = "" if e.objects_dir == objects_dir else f" (alternate {e.objects_dir})"
        return Stage("loose", f"loose {e.subdir}/ by {e.method}{alt}: {'found' if e.found else 'absent'}", e)
    if isinstance(e, trace.LooseCacheFilled):
        return Stage(
            "fill", f"loose cache fill {e.subdir}/: {e.added} names ({e.strategy}, {e.seconds * 1e6:.0f} µs)", e
        )
    if isinstance(e, trace.PackDirScanned):
        delta = (f", +{len(e.added)}" if e.added else "") + (f", -{len(e.removed)}" if e.removed else "")
        return Stage("rescan", f"rescan ({e.reason}): {e.packs} packs{delta}, {e.seconds * 1e3:.2f} ms", e)
    if isinstance(e, trace.RescanSkipped):
        return Stage("skipped", f"no rescan: {e.reason}", e)
    if isinstance(e, trace.NegativeCacheHit):
        return Stage("negative", "negative cache: known missing, nothing searched", e)
    if isinstance(e, trace.NullOidShortcut):
        return Stage("null", "the null id: missing without a probe", e)
    if isinstance(e, trace.MruMoved):
        return Stage("mru", f"MRU: {e.pack} moves to the front (was rank {e.from_rank})", e)
    if isinstance(e, trace.LookupFinished):
        res = f"found in {e.source} {e.where}" if e.source else "missing"
        extra = f", {e.rescans} rescan{'s' if e.rescans != 1 else ''}" if e.rescans else ""
        return Stage("finished", f"{res}  ({e.seconds * 1e6:.0f} µs{extra})", e)
    return None


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
        loose = []
        for n in range(256):
            sub = os.path.join(store.objects_dir, f"{n:02x}")
            if os.path.isdir(sub):
                loose += [bytes.fromhex(f"{n:02x}{x}") for x in os.listdir(sub) if len(x) == store.fmt.hexsz - 2]
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
        git_dir = str(session.repo.git_dir)
    return open_session(
        git_dir,
        tracer=trace.Tracer(),
        policy=s.policy,
        quick=s.quick,
        loose_strategy=s.loose_strategy,
        algorithm=s.algorithm,
    )


TIMING_REPEATS = 3  # each search timed this often, the fastest kept: a GC pause is not the algorithm's


def run_batch(
    store, lock, ids: list[bytes], label: str, progress=None, cancelled=None, warm: bool = True
) -> BatchResult:
    """Look every id up (traced), and search each bucket the store searched
    again with each algorithm: traced (probes, names read, pages) and
    untraced (time)."""
    fns = {a: search_function(a) for a in ALGORITHMS}
    recorder = trace.Recorder()
    unsubscribe = store.tracer.subscribe(recorder)
    with lock:
        res = BatchResult(label, store_settings(store, warm))
        before = store.counters.as_dict()
        by_name = _index_by_name(store)
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
                            by_name = _index_by_name(store)
                            target = by_name.get(e.pack)
                        index = getattr(target, "index", target)
                        if index is None:
                            continue
                        res.searches += 1
                        lo, hi = e.path.bucket
                        nr = search_bounds(index, e.path.bucket)
                        name_at = index.name_accessor()
                        for a in ALGORITHMS:
                            fn = fns[a]
                            steps = Steps(index.page_of)
                            fn(name_at, lo, hi, nr, oid, steps)
                            probes[a] += len(steps.probes)
                            reads[a] += len(steps.reads)
                            pages[a] += len(steps.pages())
                            best = None
                            for _ in range(TIMING_REPEATS):
                                t0 = perf()
                                fn(name_at, lo, hi, nr, oid)
                                took = perf() - t0
                                best = took if best is None or took < best else best
                            ns[a] += best
                    elif isinstance(e, trace.LooseCacheFilled):
                        res.fills += 1
                    elif isinstance(e, trace.PackDirScanned):
                        res.rescans += 1
                        by_name = _index_by_name(store)
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
    res.rescans_skipped = after["rescans_skipped"] - before["rescans_skipped"]
    res.dir_reads = after["dir_reads"] - before["dir_reads"]
    res.stats = after["stats"] - before["stats"]
    return res


# --- histograms ---------------------------------------------------------------------------


def histogram(values: list[float], bins: int, lo: float, hi: float, integer: bool = False) -> tuple[list[int], float]:
    """(counts, bin width) over [lo, hi]; values beyond land in the end bins.
    Integer data gets one bin per value when the range allows."""
    if integer:
        lo, hi = int(lo), int(hi)
        width = max(1, -(-(hi - lo + 1) // bins))
        n = (hi - lo) // width + 1
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
