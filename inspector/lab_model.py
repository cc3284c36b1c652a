"""The Lookup lab's and the Fanout screen's models, without any widget.

* ``index_choices`` — every searchable index of the store (multi-pack-indexes
  and pack indexes), with its object count;
* ``traced_lookup`` — one lookup run through core with a recorder attached:
  the events core emitted, in order, turned into ``Stage``s; every bucket
  searched is searched again with the three algorithms by
  ``packscope.core.store.search.traced_search`` on the same index, bucket and target, so the
  drawn probes *are* core's trace;
* ``frames`` — the steps the lab animates: one per stage, and inside a
  bucket search one per probe (the three algorithms step together).

Batches of lookups are ``packscope.inspector.lab_batch``.

Every call into core takes ``lock`` (the store is not thread-safe), in small
pieces: one lookup per hold.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from packscope.core import trace
from packscope.core.errors import AmbiguousObjectError, PackscopeError
from packscope.core.store.location import PackHandle
from packscope.core.store.search import ALGORITHMS, traced_search

if TYPE_CHECKING:
    from packscope.core.store.midx import MultiPackIndex
    from packscope.core.store.pack_index import PackIndex

# --- indexes ---------------------------------------------------------------------


@dataclass(slots=True)
class IndexChoice:
    kind: str  # "midx" or "pack"
    name: str  # file name as core's events name it (pack-….idx / multi-pack-index)
    index: PackIndex | MultiPackIndex
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
    event: trace.Event  # the core event this stage shows
    index: PackIndex | MultiPackIndex | None = None  # the index searched (search stages)
    paths: dict = field(default_factory=dict)  # algorithm -> SearchPath (search stages)
    nr: int | None = None  # the search's table bound (search stages; None: not known)

    @property
    def is_search(self) -> bool:
        return bool(self.paths)

    @property
    def search(self) -> trace.PackSearched | None:
        """The store's own bucket search, when this stage shows one."""
        return self.event if isinstance(self.event, trace.PackSearched) else None

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


def index_by_name(store) -> dict[str, PackHandle | MultiPackIndex]:
    m: dict[str, PackHandle | MultiPackIndex] = {h.index.name: h for h in store.packs}
    for x in store.midxs:
        m[os.path.basename(x.path)] = x
    return m


def index_of(target: PackHandle | MultiPackIndex | None) -> PackIndex | MultiPackIndex | None:
    """The index to search for an ``index_by_name`` entry: a pack's index, or
    the multi-pack-index itself."""
    return target.index if isinstance(target, PackHandle) else target


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
        names = [c[0] for c in e.candidates]  # (in git's order: by type, then id)
        width = 12
        while len({n[:width] for n in names}) < len(names):
            width += 1  # never two candidates shown alike
        return None, "ambiguous: " + ", ".join(n[:width] for n in names[:6])
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
    by_name = index_by_name(store)

    def searched(e: trace.PackSearched):
        target = by_name.get(e.pack)
        index = index_of(target)
        alternate = isinstance(target, PackHandle) and not target.files.local
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
