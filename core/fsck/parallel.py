"""fsck's object pass over several processes.

The entries of a pack are checked in pack (offset) order; with ``jobs`` > 1
that order is cut into contiguous ranges, and a pool of forked worker
processes checks the ranges — each with its own delta-base cache, so a range
keeps the locality the serial pass has.  Results come back range by range in
order (``imap``), and the parent merges them exactly as the serial pass would
have produced them:

* the type byte of every entry (the object table's verdicts);
* the findings, in order, with the limiter key each was allowed under —
  the parent applies its own per-file limit over the merged stream and adds
  what a worker's limiter refused to the counts, so "N more findings" lines
  are the same;
* the ``.gitmodules``/``.gitattributes`` blobs named (first name wins, in
  order) and the ids the objects reference (for the dangling phase).

Forking needs no pickling of the store: the children inherit the opened
object table.  Progress comes through one shared counter that the parent
polls while waiting; cancel is asked at every poll and terminates the pool.
Small packs are checked in the parent (a range of fewer than
``min_chunk`` objects is not worth a round trip).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from array import array
from collections.abc import Callable, Container, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from packscope.core.fsck.findings import Finding, Limiter
from packscope.core.fsck.objects import add_joined, joined_ids, new_id_set
from packscope.core.fsck.special_blobs import SpecialBlobs

if TYPE_CHECKING:
    from multiprocessing.pool import Pool

    from packscope.core.fsck.findings import Ticker
    from packscope.core.fsck.objects import ObjectTable, PackSlot
    from packscope.core.fsck.reach import Promised

# Fewest objects in a range: below this a pack is checked in the parent.
# PACKSCOPE_FSCK_MIN_CHUNK overrides it (tests split tiny packs with 1).
MIN_CHUNK = 2048
CHUNKS_PER_JOB = 4  # more ranges than workers: a slow range does not leave a core idle for long


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def min_chunk() -> int:
    try:
        return max(1, int(os.environ.get("PACKSCOPE_FSCK_MIN_CHUNK", "")))
    except ValueError:
        return MIN_CHUNK


class _KeyedLimiter(Limiter):
    """A worker's limiter: remembers the key of the last finding it allowed
    (each finding is yielded right after its ``allow``)."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.last: tuple[str, str] = ("", "")

    def allow(self, where: str, kind: str) -> bool:
        self.last = (where, kind)
        return super().allow(where, kind)


class _SharedTicks:
    """A worker's ticker: adds to the counter the parent polls, every 256
    entries; every RELEASE_EVERY entries, gives the pack pages read so far
    back to the kernel (``release``): a range can span hundreds of MB of
    pack (git.git's blobs), and its pages would otherwise stay resident in
    the worker until the range ends."""

    __slots__ = ("counter", "pending", "release", "since_release")
    RELEASE_EVERY = 4096

    def __init__(self, counter: Any, release: Callable[[], None] | None = None) -> None:
        self.counter, self.pending = counter, 0
        self.release, self.since_release = release, 0

    def tick(self, n: int = 1) -> None:
        self.pending += n
        if self.pending >= 256:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            with self.counter.get_lock():
                self.counter.value += self.pending
            self.since_release += self.pending
            self.pending = 0
            if self.release is not None and self.since_release >= self.RELEASE_EVERY:
                self.release()
                self.since_release = 0


# What a forked worker inherits (set in the parent just before the fork).
_STATE: dict[str, Any] = {}


Task = tuple[int, bytes, bytes, int]  # pack number, positions, base offsets in the range, offset before it
Result = tuple[
    list[tuple[tuple[str, str], Finding]], dict[tuple[str, str], int], bytes, dict[bytes, str], set[bytes], bytes | None
]


def _check_range(task: Task) -> Result:
    """In a worker: check one range (pack_checks.check_range) and return what the parent merges."""
    from packscope.core.fsck.pack_checks import check_range

    slot_no, raw, raw_bases, before = task
    positions, bases = array("I"), array("Q")
    positions.frombytes(raw)
    bases.frombytes(raw_bases)
    table: ObjectTable = _STATE["table"]
    slot = table.packs[slot_no]
    table.special_blobs = SpecialBlobs()
    if table.referenced is not None:
        table.referenced = new_id_set(table.fmt.rawsz)
    limiter = _KeyedLimiter(_STATE["limit"])
    ticks = _SharedTicks(_STATE["counter"], slot.handle.release_pages)
    found = []
    for f in check_range(
        table,
        slot,
        positions,
        ticks,
        limiter,
        _STATE["promised"],
        _STATE["severities"],
        set(bases),
        None if before < 0 else before,
    ):
        found.append((limiter.last, f))
    ticks.flush()
    slot.handle.release_pages()  # the range's pack pages: a worker's resident set stays one range's worth
    types = slot.type_table()
    codes = bytes([types[p] for p in positions])
    refs = joined_ids(table.referenced) if table.referenced is not None else None
    special = table.special_blobs
    return found, limiter.counts, codes, special.found, special.named_by_promisor, refs


def _ignore_interrupts() -> None:
    """Ctrl-C is the parent's to handle: it terminates the pool (no traceback per worker)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


class ObjectPass:
    """The worker pool for one fsck run (a context manager; the pool starts
    at the first pack large enough to split)."""

    def __init__(
        self,
        table: ObjectTable,
        jobs: int,
        limiter: Limiter,
        promised: Promised | None,
        severities: dict[str, str] | None,
    ) -> None:
        self.table, self.jobs, self.limiter = table, jobs, limiter
        self.promised, self.severities = promised, severities
        self.min_chunk = min_chunk()
        self._pool: Pool | None = None
        self._counter: Any = None

    def __enter__(self) -> ObjectPass:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()  # also after a cancel: the workers stop mid-range
            self._pool.join()
            self._pool = None

    def splits(self, n: int) -> bool:
        # without fork (Windows) the children could not inherit the opened table: one process
        return self.jobs > 1 and n >= 2 * self.min_chunk and "fork" in multiprocessing.get_all_start_methods()

    def _start(self) -> Pool:
        if self._pool is None:
            ctx = multiprocessing.get_context("fork")
            self._counter = ctx.Value("q", 0)
            _STATE.update(
                table=self.table,
                limit=self.limiter.limit,
                counter=self._counter,
                promised=self.promised,
                severities=self.severities,
            )
            # Objects the children inherit stay out of their garbage
            # collections (a collection touches every tracked object's header:
            # each page it touches is copied into the child).
            gc.freeze()
            try:
                self._pool = ctx.Pool(self.jobs, initializer=_ignore_interrupts)
            finally:
                gc.unfreeze()
                _STATE.clear()  # the children have their copy; the parent keeps no reference
        return self._pool

    def check_entries(
        self, slot: PackSlot, order: Sequence[int], bases: Container[int], ticker: Ticker
    ) -> Iterator[Finding]:
        """What pack_checks.check_range yields for ``order``, computed by the workers."""
        from multiprocessing import TimeoutError as Timeout

        pool = self._start()
        offset_at = slot.handle.index.offset_at
        n = len(order)
        parts = max(2, min(self.jobs * CHUNKS_PER_JOB, n // self.min_chunk))
        bounds = [n * i // parts for i in range(parts + 1)]
        tasks: list[Task] = []
        for i in range(parts):
            rng = order[bounds[i] : bounds[i + 1]]
            lo, hi = offset_at(rng[0]), offset_at(rng[-1])
            # only a base inside the range is worth keeping there: later ranges have their own caches
            kept = array("Q", sorted(b for b in bases if lo <= b <= hi)) if isinstance(bases, set) else array("Q")
            before = offset_at(order[bounds[i] - 1]) if i else -1
            tasks.append((slot.no, array("I", rng).tobytes(), kept.tobytes(), before))
        with self._counter.get_lock():
            self._counter.value = 0
        reported = 0
        results = pool.imap(_check_range, tasks)
        types = slot.type_table()
        table, limiter = self.table, self.limiter
        for i in range(parts):
            while True:
                try:
                    found, counts, codes, special, by_promisor, refs = results.next(timeout=0.1)
                    break
                except Timeout:
                    done = self._counter.value
                    ticker.tick(done - reported)  # asks cancel too, every `every` entries
                    reported = done
                    ticker.poll()  # and between them: a slow range still stops promptly
            for pos, code in zip(order[bounds[i] : bounds[i + 1]], codes, strict=True):
                types[pos] = code
            for key, f in found:
                if limiter.allow(*key):
                    yield f
            for key, count in counts.items():
                refused = count - min(count, limiter.limit)
                if refused:  # what the worker's limiter left out counts here as if refused here
                    limiter.counts[key] = limiter.counts.get(key, 0) + refused
            for oid, which in special.items():
                table.special_blobs.found.setdefault(oid, which)
            table.special_blobs.named_by_promisor.update(by_promisor)
            if refs is not None and table.referenced is not None:
                add_joined(table.referenced, refs, table.fmt.rawsz)
        ticker.tick(n - reported)
