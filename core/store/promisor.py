"""Partial clones: which absent objects a promisor remote promises.

A repository is a *partial clone* when it has a promisor remote:
``extensions.partialClone = NAME`` or ``remote.NAME.promisor = true``
(:meth:`packscope.core.repo.repository.Repository.promisor_remotes`).  Packs fetched from
such a remote carry an empty ``pack-*.promisor`` companion file.

An object is *promised* — what git's ``is_promisor_object`` answers — when it
is in a promisor pack, or is referenced by an object there: a commit's tree
and parents, every entry of a tree (gitlinks too), a tag's target.  A
promised object that is absent is not damage: git fetches it on demand
(unless ``GIT_NO_LAZY_FETCH=1``).  Like git, nothing is promised in a
repository without a promisor remote, whatever ``.promisor`` files lie
around; the store asks only when the repository is a partial clone
(``packscope.core.repo.session.is_partial_clone``).

:class:`PromisorSet` computes the answer lazily, once: on the first question
it reads every commit, tree and tag of the promisor packs in pack order
(blobs are typed from their headers, never inflated) and keeps the ids they
reference — those not in the pack itself, whose members its index answers —
as one sorted byte string of raw ids (``rawsz`` bytes each, no per-id
object).  Promisor packs that appear later (a fetch) are read on the next
question.  Reading big packs takes a while: ``progress(done, total, phase)``
reports every few hundred objects and ``cancel()`` stops the build
(:class:`packscope.core.errors.CancelledError`; nothing partial is kept).

Departures from git: an object of a promisor pack that cannot be read or
parsed is skipped and counted (git stops building the set there); objects
are not hash-checked.
"""

from __future__ import annotations

import contextlib
import heapq
import threading
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from packscope.core.errors import CancelledError, CorruptObjectError, PackscopeError
from packscope.core.objects import commit_header_fast, parse_tag, tree_mode, tree_patterns
from packscope.core.oid import ObjectFormat
from packscope.core.store.location import PackHandle

if TYPE_CHECKING:  # the store builds this set; names only, for types
    from packscope.core.store.odb import ObjectStore

PHASE = "promised objects"
CHUNK_IDS = 1 << 18  # ids gathered before they are sorted into a run
TICK_EVERY = 512

Progress = Callable[[int, int, str], None]


def referenced_ids(type_name: str, data: bytes, fmt: ObjectFormat) -> list[bytes]:
    """The ids an object of a promisor pack promises: a commit's tree and
    parents, every tree entry (gitlinks included), a tag's target.
    CorruptObjectError when a commit or tag does not parse; a tree yields its
    entries up to the first malformed one."""
    if type_name == "commit":
        tree, parents, _ = commit_header_fast(data, fmt)
        return [tree, *parents]
    if type_name == "tree":
        return _tree_entry_ids(data, fmt.rawsz)
    if type_name == "tag":
        return [parse_tag(data, fmt).object]
    return []


# A well-formed tree, checked whole, then its ids found, both in C (a Python
# loop per entry is most of the time listing a big clone's promised objects).
def _tree_entry_ids(data: bytes, rawsz: int) -> list[bytes]:
    patterns = tree_patterns(rawsz)
    if patterns.whole.fullmatch(data) is not None:
        return patterns.ids.findall(data)
    out = []
    pos, n = 0, len(data)
    find = data.find
    while pos < n:
        nul = find(b"\0", pos)
        if nul < 0 or nul + 1 + rawsz > n:
            break
        sp = find(b" ", pos, nul)
        if sp <= pos or sp + 1 == nul or tree_mode(data[pos:sp]) is None:
            break  # no mode, a bad mode or an empty name: nothing after it can be located
        out.append(data[nul + 1 : nul + 1 + rawsz])
        pos = nul + 1 + rawsz
    return out


class _IdView:
    """A sorted byte string of fixed-width ids as a sequence (for bisect)."""

    __slots__ = ("data", "rawsz")

    def __init__(self, data: bytes, rawsz: int) -> None:
        self.data, self.rawsz = data, rawsz

    def __len__(self) -> int:
        return len(self.data) // self.rawsz

    def __getitem__(self, i: int) -> bytes:
        at = i * self.rawsz
        return self.data[at : at + self.rawsz]

    def __contains__(self, oid: bytes) -> bool:
        i = bisect_left(self, oid)
        return i < len(self) and self[i] == oid

    def __iter__(self) -> Iterator[bytes]:
        data, rawsz = self.data, self.rawsz
        for at in range(0, len(data), rawsz):
            yield data[at : at + rawsz]


class _Runs:
    """Ids gathered in chunks, each chunk sorted and deduplicated into a run,
    so that the peak memory is one chunk of Python objects."""

    def __init__(self, rawsz: int) -> None:
        self.rawsz = rawsz
        self.buf: set[bytes] = set()
        self.runs: list[bytes] = []

    def update(self, ids: Iterable[bytes]) -> None:
        self.buf.update(ids)
        if len(self.buf) >= CHUNK_IDS:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            self.runs.append(b"".join(sorted(self.buf)))
            self.buf = set()

    def merged_with(self, existing: bytes) -> bytes:
        """One sorted, duplicate-free byte string of every run and ``existing``."""
        self.flush()
        runs = [r for r in (existing, *self.runs) if r]
        if not runs:
            return b""
        if len(runs) == 1:
            return runs[0]
        out = bytearray()
        last = None
        for oid in heapq.merge(*(iter(_IdView(r, self.rawsz)) for r in runs)):
            if oid != last:
                out += oid
                last = oid
        return bytes(out)


@dataclass(slots=True)
class PromisorStats:
    packs: int = 0  # promisor packs read
    objects: int = 0  # their objects
    parsed: int = 0  # commits, trees and tags read for their references
    skipped: int = 0  # objects that could not be read or parsed
    seconds: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__slots__}


class PromisorSet:
    """``is_promised(oid)``: git's ``is_promisor_object`` over ``store``'s
    promisor packs (alternates' included).  ``skip(handle)`` may leave packs
    out (fsck leaves out packs it refused).  Callable, as a predicate."""

    def __init__(
        self,
        store: ObjectStore,
        *,
        skip: Callable[[PackHandle], bool] | None = None,
        progress: Progress | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> None:
        self.store = store
        self.fmt = store.fmt
        self.skip = skip
        self.progress = progress
        self.cancel = cancel
        self.stats = PromisorStats()
        self.problems: list[PackscopeError] = []  # the first few unreadable objects
        self._ids = _IdView(b"", self.fmt.rawsz)
        self._done: set[str] = set()  # bases of the packs read
        self._lock = threading.RLock()
        self._builder: int | None = None  # the thread building: its own reads (REF_DELTA bases) must not build again

    # --- questions ------------------------------------------------------------------

    def packs(self) -> list[PackHandle]:
        """The store's promisor packs (PackHandle), minus skipped ones."""
        skip = self.skip
        return [h for h in self.store.packs if h.files.promisor and not (skip is not None and skip(h))]

    def __bool__(self) -> bool:
        return bool(self.packs())

    def __len__(self) -> int:
        """Referenced ids kept (members of the promisor packs are not counted)."""
        return len(self._ids)

    def referenced(self) -> Iterator[bytes]:
        """The kept ids (referenced from outside their pack), sorted; as
        built so far (call :meth:`build` first for all of them)."""
        return iter(self._ids)

    @property
    def built(self) -> bool:
        return not self._pending(self.packs())

    def is_promised(self, oid: bytes) -> bool:
        packs = self.packs()
        if not packs:
            return False
        if self._builder != threading.get_ident() and self._pending(packs):
            self.build()
        if oid in self._ids:
            return True
        for h in packs:
            try:
                if h.index.find(oid) >= 0:
                    return True
            except PackscopeError:
                continue  # an unreadable index promises nothing
        return False

    __call__ = is_promised

    # --- building -------------------------------------------------------------------

    def _pending(self, packs: list[PackHandle]) -> list[PackHandle]:
        return [h for h in packs if h.files.base not in self._done]

    def build(self, progress: Progress | None = None, cancel: Callable[[], bool] | None = None) -> int:
        """Read the promisor packs not read yet; the number of ids kept."""
        progress = progress or self.progress
        cancel = cancel or self.cancel
        with self._lock:
            pending = self._pending(self.packs())
            if not pending:
                return len(self._ids)
            t0 = time.perf_counter()
            total = 0
            for h in pending:
                with contextlib.suppress(PackscopeError):  # a bad index is the reader's to report
                    total += h.index.open().num_objects
            runs = _Runs(self.fmt.rawsz)
            done = [0]

            def tick() -> None:
                if cancel is not None and cancel():
                    raise CancelledError(
                        f"listing promised objects cancelled ({done[0]} of {total} objects read)",
                        remedy="Ask again; the promised objects are listed on first need.",
                    )
                if progress is not None:
                    progress(done[0], total, PHASE)

            tick()
            stats = PromisorStats()
            self._builder = threading.get_ident()
            try:
                for h in pending:
                    self._read_pack(h, runs, stats, done, tick)
            finally:
                self._builder = None
            self._ids = _IdView(runs.merged_with(self._ids.data), self.fmt.rawsz)
            self._done.update(h.files.base for h in pending)
            s = self.stats
            s.packs += stats.packs
            s.objects += stats.objects
            s.parsed += stats.parsed
            s.skipped += stats.skipped
            s.seconds += time.perf_counter() - t0
            done[0] = total
            if progress is not None:
                progress(total, total, PHASE)
            return len(self._ids)

    def _note(self, e: PackscopeError, stats: PromisorStats) -> None:
        stats.skipped += 1
        if len(self.problems) < 20:
            self.problems.append(e)

    def _read_pack(
        self, handle: PackHandle, runs: _Runs, stats: PromisorStats, done: list[int], tick: Callable[[], None]
    ) -> None:
        fmt = self.fmt
        try:
            index = handle.index.open()
            pack = handle.pack
            order: Iterable[int]
            try:
                order = pack.pack_order()  # offset order: sequential reads, deltas after their bases
            except PackscopeError:
                order = range(index.num_objects)
            find = index.find
        except PackscopeError as e:
            self._note(e, stats)
            return
        stats.packs += 1
        # Ids referenced, gathered (most are referenced many times) before
        # the pack's own members are left out: one index lookup per id, not
        # per reference.
        gathered: set[bytes] = set()

        def spill() -> None:
            runs.update(r for r in gathered if find(r) < 0)
            gathered.clear()

        for pos in order:
            done[0] += 1
            if done[0] % TICK_EVERY == 0:
                tick()
            stats.objects += 1
            try:
                offset = index.offset_at(pos)
                type_name, _ = pack.info_at(offset)
                if type_name == "blob":
                    continue  # references nothing: never inflated
                type_name, data = pack.read_at(offset)
                refs = referenced_ids(type_name, data, fmt)
            except CorruptObjectError as e:
                self._note(e, stats)
                continue
            except PackscopeError as e:
                self._note(e, stats)
                continue
            stats.parsed += 1
            gathered.update(refs)
            if len(gathered) >= CHUNK_IDS:
                spill()
        spill()


__all__ = ["PHASE", "PromisorSet", "PromisorStats", "referenced_ids"]
