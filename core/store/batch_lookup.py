"""Lookups in batches (``ObjectStore.locate_many``): the answers ``locate``
would give, computed at one moment with one check of the pack directories
and one ``stat`` per loose subdirectory, not one per miss.  A mixin of
``ObjectStore`` (core/store/odb.py), apart because it is a second way to
answer the same question, with its own bookkeeping."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from operator import attrgetter
from typing import TYPE_CHECKING, Protocol

from packscope.core import native
from packscope.core.errors import PackscopeError
from packscope.core.store.location import Location, PackHandle
from packscope.core.store.pack_directory import dir_mtime_ns
from packscope.core.store.store_state import MAX_RESCAN_ROUNDS, ObjectDir, Stamps, StoreCounters, StoreSettings

# A batch's objects read in one compiled call at most (packed_reads): they
# are held until answered, so this bounds the memory a run takes.
READ_RUN = 32

if TYPE_CHECKING:
    from packscope.core.oid import ObjectFormat
    from packscope.core.store.midx import MultiPackIndex
    from packscope.core.trace import Tracer

# The compiled form of the pack searches of a batch (``idx_find_many`` of
# core/native.py's backend): each id in the packs' most-recently-used order,
# a hit moving its pack to the front, as ``_find_packed`` does id by id.
_source = attrgetter("source")


if TYPE_CHECKING:
    # Type-only: the host is checked against it by mypy, nothing of it runs.
    class BatchLookupsHost(Protocol):
        """What BatchLookups' methods use of their host, ObjectStore (core/store/odb.py): its methods are
        typed ``self: BatchLookupsHost``, so the host is checked against this (a
        rename on either side fails mypy) instead of the mixin re-declaring it."""

        fmt: ObjectFormat
        tracer: Tracer
        counters: StoreCounters
        settings: StoreSettings
        _dirs: list[ObjectDir]
        _negative: dict[bytes, Stamps]
        _mru: list[PackHandle]
        _midxs: list[tuple[MultiPackIndex, list[PackHandle | None]]]

        def locate(self, oid: bytes, quick: bool | None = None) -> Location | None: ...
        def rescan(self, reason: str = "request") -> None: ...
        def _find_packed(self, oid: bytes, traced: bool) -> Location | None: ...
        def _pack_dirs_changed(self) -> str | None: ...
        def _pack_dirs_moving(self) -> bool: ...

        # and BatchLookups' own methods that call one another
        def _find_packed_compiled(self, oids: list[bytes]) -> list[Location | None] | None: ...
        def packed_read(self, loc: Location) -> tuple[str, bytes] | None: ...
        def _locate_loose_many(
            self, oids: list[bytes], misses: list[int], out: list[Location | None], quick: bool
        ) -> dict[int, Stamps]: ...
        def _remember_missing_many(self, oids: list[bytes], stamps: dict[int, Stamps]) -> None: ...


class BatchLookups:
    """``locate_many`` and its helpers, mixed into ``ObjectStore``."""

    def locate_many(self: BatchLookupsHost, oids: list[bytes], quick: bool | None = None) -> list[Location | None]:
        """Where each of ``oids`` is (None: absent), answered as one batch.

        The answers are those ``locate`` would give, computed at one moment:
        packs are searched for every id; the pack directories are checked
        for changes once for the batch rather than once per miss; a loose
        object directory ``objects/xx`` that does not exist answers for every
        miss under it with one ``stat``.  Traced stores and the ``git`` policy
        (whose point is a rescan per miss) go through ``locate`` one by one.
        """
        if quick is None:
            quick = self.settings.quick
        if self.tracer.active or (self.settings.policy == "git" and not quick):
            return [self.locate(oid, quick) for oid in oids]
        counters = self.counters
        counters.lookups += len(oids)
        null = self.fmt.null
        find = self._find_packed
        out = self._find_packed_compiled(oids)
        if out is None:
            out = [None if oid == null else find(oid, False) for oid in oids]
        nulls = oids.count(null)
        misses = [k for k, loc in enumerate(out) if loc is None]
        if nulls:
            misses = [k for k in misses if oids[k] != null]
        counters.null_lookups += nulls
        stamps: dict[int, Stamps] = {}
        if misses:
            stamps = self._locate_loose_many(oids, misses, out, quick)
            misses = [k for k in misses if out[k] is None]
        if misses and not quick:
            reason = self._pack_dirs_changed()
            if reason is None:
                counters.rescans_skipped += 1
            else:
                for _ in range(MAX_RESCAN_ROUNDS):
                    self.rescan(reason)
                    for k in misses:
                        out[k] = find(oids[k], False)
                    misses = [k for k in misses if out[k] is None]
                    if not misses or not self._pack_dirs_moving():
                        break
                    reason = "changed"
            if misses:
                self._remember_missing_many([oids[k] for k in misses], stamps)
        sources = Counter(map(_source, filter(None, out)))
        counters.misses += len(out) - sum(sources.values())
        counters.hits_pack += sources["pack"]
        counters.hits_midx += sources["midx"]
        counters.hits_loose += sources["loose"]
        return out

    def _find_packed_compiled(self: BatchLookupsHost, oids: list[bytes]) -> list[Location | None] | None:
        """The packs' answers for every id (None: not in a pack) from the
        compiled search, or None when it does not apply (not built, a
        multi-pack-index, another algorithm, an index that does not open or
        is switched to the pure searches): then ``_find_packed`` answers id
        by id, with the same results."""
        b = native.backend
        if b is None or self._midxs or self.settings.algorithm != "binary":
            return None
        handles = list(self._mru)
        tables = []
        try:
            for h in handles:
                table = h.index.search_table()
                if table is None:
                    return None
                tables.append(table)
        except PackscopeError:
            return None  # the id-by-id path notes the problem and skips that index
        # Opening one index may have closed another (the open-file LRU).
        if any(h.index._map is not t[0] for h, t in zip(handles, tables, strict=True)):
            return None
        got = b.idx_find_many(tables, oids, self.fmt.null)
        if got is None:
            return None
        found, order, moves = got
        host = self  # (mypy takes `self.x = ...` as declaring x on the mixin: set it on the host)
        host._mru = [handles[k] for k in order]
        self.counters.mru_moves += moves
        out: list[Location | None] = []
        append = out.append
        hit_packs: set[int] = set()
        for f in found:
            if f is None:
                append(None)
                continue
            k, pos, offset = f
            h = handles[k]
            hit_packs.add(k)
            append(Location("pack", h.objects_dir, h.files.local, h, offset if offset >= 0 else h.index.offset_at(pos)))
        for k in hit_packs:  # the open-file LRU counts hits, once per pack here
            index = handles[k].index
            if index._open_files is not None:
                index._open_files.touch(index)
        return out

    def packed_headers(self: BatchLookupsHost, locs: list[Location | None]) -> list[tuple[str, int] | None]:
        """(type, size) of each object ``locate_many`` found in a pack, as
        ``object_info`` answers them, with no lookup; None for the others
        (loose, absent) and for any whose entry does not read at once
        (damage, a vanished file): ``object_info`` answers those, with its
        retries and its errors."""
        out: list[tuple[str, int] | None] = [None] * len(locs)
        by_pack: dict[PackHandle, tuple[list[int], list[int]]] = {}
        for k, loc in enumerate(locs):
            if loc is not None and loc.pack is not None and loc.offset is not None:
                group = by_pack.get(loc.pack)
                if group is None:
                    group = by_pack[loc.pack] = ([], [])
                group[0].append(k)
                group[1].append(loc.offset)
        for handle, (ks, offsets) in by_pack.items():
            try:
                pack = handle.pack
                answers = pack.info_many(offsets)
            except (PackscopeError, OSError):
                continue
            for k, offset, answer in zip(ks, offsets, answers, strict=True):
                if answer is None:  # declined: the reference path
                    try:
                        answer = pack.info_at(offset)
                    except (PackscopeError, OSError):
                        continue
                out[k] = answer
        return out

    def packed_read(self: BatchLookupsHost, loc: Location) -> tuple[str, bytes] | None:
        """(type, content) of an object ``locate_many`` found in a pack, as
        ``read`` answers it, with no lookup; None if it is not in a pack or
        does not read at once (damage, a vanished file): ``read`` answers
        those, with its retries, its reading around damage and its errors."""
        handle = loc.pack
        if handle is None or loc.offset is None:
            return None
        try:
            return handle.pack.read_at(loc.offset)
        except (PackscopeError, OSError):
            return None

    def packed_reads(self: BatchLookupsHost, locs: list[Location | None]) -> Iterator[tuple[str, bytes] | None]:
        """``packed_read`` of each of ``locs`` in turn, lazily; a run of
        objects in one pack (up to READ_RUN of them, so memory stays
        bounded) is read in one compiled call (``Pack.read_run``)."""
        i, n = 0, len(locs)
        while i < n:
            loc = locs[i]
            if loc is None or loc.pack is None or loc.offset is None:
                yield None
                i += 1
                continue
            handle = loc.pack
            members, offsets = [loc], [loc.offset]
            j = i + 1
            while j < n and len(offsets) < READ_RUN:
                other = locs[j]
                if other is None or other.pack is not handle or other.offset is None:
                    break
                members.append(other)
                offsets.append(other.offset)
                j += 1
            try:
                run = handle.pack.read_run(offsets)
            except (PackscopeError, OSError):
                run = []
            yield from run
            i += len(run)
            if len(run) < len(members):  # the one the run stopped at: read_at's answer (or its error's None)
                yield self.packed_read(members[len(run)])
                i += 1

    def _locate_loose_many(
        self: BatchLookupsHost, oids: list[bytes], misses: list[int], out: list[Location | None], quick: bool
    ) -> dict[int, Stamps]:
        """Fill ``out[k]`` for the misses that are loose objects; return the
        mtime of each ``objects/xx`` looked at (by its first byte), per
        object directory (the negative cache's stamps)."""
        by_subdir: dict[int, list[int]] = {}
        for k in misses:
            first = oids[k][0]
            group = by_subdir.get(first)
            if group is None:
                by_subdir[first] = [k]
            else:
                group.append(k)
        stamps: dict[int, Stamps] = {}
        for first, ks in by_subdir.items():
            subdir = f"{first:02x}"
            stamp: Stamps
            if quick:  # the loose cache answers; no stamps (quick misses are not remembered)
                stamp = (None,) * len(self._dirs)
            else:
                stamp = tuple(dir_mtime_ns(os.path.join(d.path, subdir)) for d in self._dirs)
                self.counters.stats += len(self._dirs)
                stamps[first] = stamp
            for d, mtime in zip(self._dirs, stamp, strict=True):
                if quick:
                    hits = [k for k in ks if out[k] is None and d.loose.contains(oids[k])]
                elif mtime is None:
                    continue  # no such directory: none of these is loose here
                else:
                    self.counters.stats += len(ks)
                    hits = [
                        k
                        for k in ks
                        if out[k] is None and os.path.exists(os.path.join(d.path, subdir, oids[k].hex()[2:]))
                    ]
                for k in hits:
                    out[k] = Location("loose", d.path, d.local, path=os.path.join(d.path, subdir, oids[k].hex()[2:]))
        return stamps

    def _remember_missing_many(self: BatchLookupsHost, oids: list[bytes], stamps: dict[int, Stamps]) -> None:
        negative = self._negative
        if len(negative) + len(oids) > 1_000_000:
            negative.clear()  # bound memory on pathological input
        for oid in oids:
            negative[oid] = stamps[oid[0]]
