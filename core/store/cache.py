"""Two caches a store shares among its packs: delta bases and open files.

``DeltaBaseCache`` keeps recently built objects that served as delta bases,
keyed by (pack name, offset), evicting the least recently used once a byte
budget is exceeded — git's delta base cache, so that reading many objects
of one chain does not rebuild the chain from its root each time.

``OpenFiles`` bounds how many pack and index files are mapped at once.
CPython's mmap keeps a duplicate file descriptor per mapping, so a store
with thousands of packs would run out of descriptors (``ulimit -n``) if
every file stayed mapped.  Owners (a ``Pack``, a ``PackIndex``) register
when they map and are asked to ``close()`` when they are the least recently
used one over the limit; they reopen themselves on next use.  ``newest``
is the owner last opened or touched while open (None when unknown), so a
hot loop over one pack can skip touching what is already most recent.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

from packscope.core import trace  # (the event classes load when a tracer listens)
from packscope.core.trace import Tracer

DEFAULT_DELTA_BASE_BUDGET = 96 * 1024 * 1024
HITS, MISSES, FILLS, EVICTIONS, BYTES = range(5)  # DeltaBaseCache.counts
Data = bytes  # (inside DeltaBaseCache, `bytes` is its byte total)


class DeltaBaseCacheStats(NamedTuple):
    hits: int
    misses: int
    fills: int
    evictions: int
    bytes: int
    entries: int
    budget: int


class DeltaBaseCache:
    """LRU of (type name, bytes) keyed by (pack name, offset), by byte budget.

    ``get`` and ``put`` are the reference of a pair: the compiled read
    (core/native_c/cache.c) applies the same rules — a hit moved to the end
    and counted, an entry over the budget not kept, a key put again
    replacing its entry, the least recently used evicted until the bytes
    fit — and tests/test_delta_base_cache_pair.py drives both with the same
    puts.  A change to one is a change to both.

    The compiled read's surface (declared in _native.pyi as
    ``DeltaBaseCacheSurface``): ``table``, the entries in LRU order (oldest
    first); ``counts``, one list of hits, misses, fills, evictions and bytes
    (the attributes of those names read it), updated in place; ``budget``;
    and ``tracer`` (while one listens, the compiled read leaves the work to
    this class, which emits the events)."""

    __slots__ = ("budget", "counts", "table", "tracer")

    def __init__(self, budget_bytes: int = DEFAULT_DELTA_BASE_BUDGET, tracer: Tracer | None = None) -> None:
        self.budget = budget_bytes
        self.tracer = tracer
        self.table: OrderedDict[tuple[str, int], tuple[str, Data]] = OrderedDict()
        self.counts = [0, 0, 0, 0, 0]

    hits = property(lambda self: self.counts[HITS])
    misses = property(lambda self: self.counts[MISSES])
    fills = property(lambda self: self.counts[FILLS])
    evictions = property(lambda self: self.counts[EVICTIONS])
    bytes = property(lambda self: self.counts[BYTES])

    def __len__(self) -> int:
        return len(self.table)

    def __contains__(self, key: tuple[str, int]) -> bool:
        """Membership without counting or reordering (for displays)."""
        return key in self.table

    def peek(self, pack: str, offset: int) -> tuple[str, Data] | None:
        """The entry without counting or reordering (for displays and type walks)."""
        return self.table.get((pack, offset))

    def count_misses(self, n: int) -> None:
        self.counts[MISSES] += n

    def get(self, pack: str, offset: int) -> tuple[str, Data] | None:
        key = (pack, offset)
        entry = self.table.get(key)
        if entry is None:
            self.counts[MISSES] += 1
            return None
        self.table.move_to_end(key)
        self.counts[HITS] += 1
        tracer = self.tracer
        if tracer is not None and tracer.active:
            tracer.emit(trace.DeltaBaseCacheEvent("hit", pack, offset, len(entry[1])))
        return entry

    def put(self, pack: str, offset: int, type_name: str, data: Data) -> None:
        size = len(data)
        if size > self.budget:  # would only evict everything else and then itself
            return
        key = (pack, offset)
        entries = self.table
        counts = self.counts
        old = entries.pop(key, None)
        if old is not None:
            counts[BYTES] -= len(old[1])
        entries[key] = (type_name, data)
        counts[BYTES] += size
        counts[FILLS] += 1
        tracer = self.tracer if self.tracer is not None and self.tracer.active else None
        if tracer is not None:
            tracer.emit(trace.DeltaBaseCacheEvent("fill", pack, offset, size))
        while counts[BYTES] > self.budget:
            (epack, eoffset), (_, edata) = entries.popitem(last=False)
            counts[BYTES] -= len(edata)
            counts[EVICTIONS] += 1
            if tracer is not None:
                tracer.emit(trace.DeltaBaseCacheEvent("evict", epack, eoffset, len(edata)))

    def clear(self) -> None:
        self.table.clear()
        self.counts[BYTES] = 0

    def stats(self) -> DeltaBaseCacheStats:
        hits, misses, fills, evictions, size = self.counts
        return DeltaBaseCacheStats(hits, misses, fills, evictions, size, len(self.table), self.budget)


def default_open_limit() -> int:
    """Half the soft descriptor limit (the rest is the program's), within [16, 4096]."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return 256
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return 4096
    return max(16, min(soft // 2, 4096))


class OpenFiles:
    """LRU of mapped files shared by every pack and index of a store.

    Owners call ``opened(self)`` after mapping, ``closed(self)`` when they
    unmap, and ``touch(self)`` once per lookup (not per probe: the order only
    needs to be roughly right).  Over ``limit`` the least recently used
    owner's ``close()`` is called.
    """

    __slots__ = ("_owners", "evictions", "limit", "newest", "opens")

    def __init__(self, limit: int | None = None) -> None:
        self.limit = default_open_limit() if limit is None else max(1, int(limit))
        self._owners: OrderedDict[int, object] = OrderedDict()
        self.opens = 0
        self.evictions = 0
        self.newest: object | None = None

    def __len__(self) -> int:
        return len(self._owners)

    def __contains__(self, owner: object) -> bool:
        return id(owner) in self._owners

    def opened(self, owner: object) -> None:
        self.opens += 1
        key = id(owner)
        self._owners[key] = owner
        self._owners.move_to_end(key)
        self.newest = owner
        while len(self._owners) > self.limit:
            self._evict_one(keep=key)

    def touch(self, owner: object) -> None:
        key = id(owner)
        if key in self._owners:  # closed owners are not in the LRU
            self._owners.move_to_end(key)
            self.newest = owner

    def closed(self, owner: object) -> None:
        self._owners.pop(id(owner), None)
        if owner is self.newest:
            self.newest = None

    def _evict_one(self, keep: int | None = None) -> bool:
        for key in self._owners:
            if key != keep:
                owner = self._owners.pop(key)
                if owner is self.newest:
                    self.newest = None
                self.evictions += 1
                owner.close()  # type: ignore[attr-defined]
                return True
        return False

    def relieve(self) -> bool:
        """Close half of the open files (the process ran out of descriptors)."""
        closed = False
        for _ in range(max(1, len(self._owners) // 2)):
            closed = self._evict_one() or closed
        return closed

    def close_all(self) -> None:
        while self._owners:
            self._evict_one()
