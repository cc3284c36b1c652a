"""Commit headers straight from packs, at history-walk speed.

A walk reads every commit of a history once and needs three things from
each: tree, parents, committer time.  ``ObjectStore.read`` is built for one
lookup watched closely (policies, MRU, counters, a Location per hit) and
inflates the whole object; a walk of a 100k-commit history pays that 100k
times.  :class:`CommitHeaderReader` instead

* looks ids up through each pack index's untraced search, which a walk's
  thousands of lookups switch to the prefix column (packscope.core.store.prefix_column:
  4 bytes per object, a C bisect per lookup — per-bucket dicts of every
  name were no faster here and took ~100 bytes per object), and
* inflates only the first bytes of the commit (:func:`prefix_size`): the header
  lines come first, and the message — most of the bytes — stays compressed.

It reads the index and pack layouts itself (gitformat-pack: .idx v2 name and
offset tables, the entry header's type and size varint) because the hot
path must not pay for objects it does not need; every step is checked, and
anything else gets None — a commit stored as a delta, a loose commit, a
pack that appeared after the reader looked, a header longer than the
prefix, a non-commit, any damage — so that the caller asks the store,
which rescans, resolves chains and reports damage with its full context.
While the store's tracer is active the reader always says None: a traced
walk shows every lookup, as the inspector promises.

The reader is also a store-like view (``fmt``, ``read``, ``read_header``)
using the same lookups, for the tags at a walk's tips and the trees of
path-limited walks; it falls back to the store in the same way.
"""

from __future__ import annotations

import mmap
import struct
from binascii import unhexlify
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from zlib_ng import zlib_ng

from packscope.core import native
from packscope.core.errors import BadRevisionError, CorruptObjectError, PackscopeError
from packscope.core.history.walk_flags import GENERATION_INFINITY
from packscope.core.objects import (
    ObjectReader,
    commit_header_fast,
    commit_header_fields,
    commit_header_regex,
    parse_tag,
)
from packscope.core.store.zlib_errors import ZlibError

if TYPE_CHECKING:
    from packscope.core.history.walked import CommitInfo
    from packscope.core.oid import ObjectFormat
    from packscope.core.store.location import PackHandle
    from packscope.core.store.pack import Pack
    from packscope.core.store.store_state import StoreCounters
    from packscope.core.trace import Tracer

# (tree, parents, commit time): what the reader answers for a commit.
CommitHeader = tuple[bytes, tuple[bytes, ...], int]


class StoreView(ObjectReader, Protocol):
    """A store-like object: the object store, or a view of it (GitView);
    the reader finds its packs, tracer and counters when it has them."""

    def read_header(self, oid: bytes) -> tuple[str, int]: ...


class CommitReader(StoreView, Protocol):
    """What a walk asks of its commit reader (this module's, or
    packscope.core.history.commit_rewrites'): the header hook, and a
    store-like view."""

    def __call__(self, oid: bytes) -> CommitHeader | None: ...


_V2_NAMES_AT = 8 + 1024  # .idx v2: magic and version, the fanout, then the names
_OBJ_COMMIT = 1
_OBJ_OFS_DELTA = 6
_U32 = struct.Struct(">I")
_LARGE = 0x80000000  # an offset with this bit indexes the 8-byte table (or: ask offset_at)

# The compiled path (core/native.py's backend): ``commit_header`` matches
# what commit_header_regex does (the reference); ``commit_lookup`` reads a
# plain commit's header from one pack in one call, False when the pack lacks
# the id, or None (then the Python path below answers).


# The most packs walk_packs maps at once for the compiled walk loop.
WALK_MAPS_PACKS = 64
# One pack as the compiled walk loop reads it: (index table, pack map, delta reader).
WalkPack = tuple[
    tuple[mmap.mmap, int, int, int, int, int, bool], mmap.mmap, Callable[[int, bytes], CommitHeader | None]
]
# What the compiled walk loop reads with: (packs, hexsz, prefix, and a commit-graph or None:
# its layers' walk_table, base first, whether its generations are corrected dates, and the
# walk source's position memo).
GraphLayerTable = tuple[mmap.mmap, int, int, int, int, int, int]
WalkTables = tuple[list[WalkPack], int, int, tuple[tuple[GraphLayerTable, ...], bool, dict[bytes, int]] | None]


def prefix_size(hexsz: int) -> int:
    """Bytes inflated per commit: a tree line, two parent lines and two
    ident lines of about 80 bytes (320 for SHA-1) — all but rare headers
    (octopus merges, long names), which are then read whole."""
    return 160 + 4 * hexsz


class _PackLookup:
    """One pack: its index (searched untraced), where its 4-byte offsets
    are, and the two mappings (re-fetched after the open-file LRU closes one)."""

    __slots__ = ("delta_reader", "find_position", "handle", "idx_map", "index", "offsets_at", "pack_map", "table")

    def __init__(self, handle: PackHandle, rawsz: int) -> None:
        self.handle = handle
        index = self.index = handle.index.open()
        nr = index.num_objects
        # v2: names, CRC32s, then the 4-byte offsets; v1 interleaves them (offset_at)
        self.offsets_at = _V2_NAMES_AT + nr * rawsz + nr * 4 if index.version == 2 else None
        self.idx_map: mmap.mmap | None = None
        self.pack_map: mmap.mmap | None = None
        self.find_position = index.find  # -1 when absent
        # the index as the compiled lookup reads it (None: the Python path)
        self.table: tuple[mmap.mmap, int, int, int, int, int, bool] | None = None
        self.delta_reader: Callable[[int, bytes], CommitHeader | None] | None = None  # for walk_packs

    def maps(self) -> tuple[mmap.mmap, mmap.mmap]:
        """(index map, pack map), fetched again."""
        self.idx_map = idx_map = self.index.map
        self.pack_map = pack_map = self.handle.pack.map
        self.table = self.index.search_table() if native.backend is not None else None
        return idx_map, pack_map


class CommitHeaderReader:
    """``reader(oid) -> (tree, parents, commit_time) | None`` — the shape of
    ``history.walk``'s ``commit_info`` hook."""

    def __init__(self, store: StoreView) -> None:
        self.store = store
        self.fmt = store.fmt
        self._tracer: Tracer | None = getattr(store, "tracer", None)
        self._counters: StoreCounters | None = getattr(store, "counters", None)
        self._packs: list[_PackLookup] | None = None
        self._rescans = -1
        self._rx = commit_header_regex(store.fmt.hexsz)
        self._hexsz = store.fmt.hexsz
        self._one_parent = len(b"parent \n") + store.fmt.hexsz
        self._prefix = prefix_size(store.fmt.hexsz)
        self.declined = 0  # commits left to the store (deltas answered here count as answered)
        self._declined: tuple[bytes, Pack, int] | None = None  # (oid, pack, offset) of the last non-commit seen
        self._null = bytes(store.fmt.rawsz)

    def _reload(self) -> list[_PackLookup]:
        # (Re)learn the packs after a rescan, keeping the buckets built so far.
        old = {id(p.handle): p for p in self._packs or ()}
        packs = []
        handles: Iterable[PackHandle] = getattr(self.store, "packs", ())
        for h in handles:
            try:
                packs.append(old.get(id(h)) or _PackLookup(h, self.fmt.rawsz))
            except PackscopeError:
                continue  # a damaged index: the store reports it when asked
        self._packs = packs
        self._rescans = self._counters.rescans if self._counters is not None else 0
        return packs

    def walk_packs(self) -> WalkTables | None:
        """What the compiled walk loop (core/native_c/plain_walk.c) reads with
        in place of calls to this reader: ``([(table, pack map, delta reader),
        ...] in this reader's order, hexsz, prefix, None)``, answering as
        :meth:`__call__`'s compiled lines and :meth:`_unusual` do (the delta
        reader says None where __call__ would not answer, which then does);
        None when those lines would not all run (a tracer listening, a pack
        that cannot be mapped or is not searched compiled)."""
        tracer = self._tracer
        if native.backend is None or (tracer is not None and tracer.active):
            return None
        packs = self._packs
        if packs is None or (self._counters is not None and self._counters.rescans != self._rescans):
            packs = self._reload()
        tables: list[WalkPack] = []
        for p in packs:
            table, pack_map = p.table, p.pack_map
            if table is None or pack_map is None:
                # __call__ maps a pack when it first holds a commit asked for; the
                # loop needs every index, so a few packs are mapped here (many
                # would crowd the open-file limit: they keep the calls).
                if len(packs) > WALK_MAPS_PACKS:
                    return None
                try:
                    pack_map = p.maps()[1]
                except (PackscopeError, ValueError, OSError):
                    return None  # the store's read says what is wrong
                table = p.table
                if table is None:
                    return None
            reader = p.delta_reader
            if reader is None:
                reader = p.delta_reader = self._delta_reader(p.handle.pack)
            tables.append((table, pack_map, reader))
        return tables, self._hexsz, self._prefix, None

    def _delta_reader(self, pack: Pack) -> Callable[[int, bytes], CommitHeader | None]:
        fmt = self.fmt

        def read(offset: int, oid: bytes) -> CommitHeader | None:
            try:
                return _delta_commit(pack, offset, oid, fmt)
            except (PackscopeError, ValueError, IndexError, ZlibError):
                return None  # damage, or a closed map: __call__ sorts it out

        return read

    def __call__(self, oid: bytes) -> CommitHeader | None:
        # One function for the usual case on purpose: a walk calls it once
        # per commit, and each Python call costs as much as a dict lookup.
        tracer = self._tracer
        if tracer is not None and tracer.active:
            self.declined += 1
            return None
        compiled = native.backend
        packs = self._packs
        if packs is None or (self._counters is not None and self._counters.rescans != self._rescans):
            packs = self._reload()
        p = None
        try:
            for p in packs:
                table = p.table
                if table is not None and compiled is not None:
                    # The compiled form of the lines below (same answers).
                    found = compiled.commit_lookup(table, p.pack_map, oid, self._hexsz, self._prefix)
                    if found is False:
                        continue
                    if found is not None:
                        break
                pos = p.find_position(oid)
                if pos < 0:
                    continue
                idx_map, m = p.idx_map, p.pack_map
                if idx_map is None or m is None:
                    idx_map, m = p.maps()
                at = p.offsets_at
                offset = _U32.unpack_from(idx_map, at + 4 * pos)[0] if at is not None else _LARGE
                if offset & _LARGE:
                    offset = p.index.offset_at(pos)  # v1, or a large offset
                c = m[offset]
                if (c >> 4) & 7 != _OBJ_COMMIT:
                    found = self._unusual(p, offset, c, oid)
                    break
                size = c & 15
                shift = 4
                at = offset + 1
                while c & 0x80:
                    c = m[at]
                    at += 1
                    size |= (c & 0x7F) << shift
                    shift += 7
                    if shift > 70:
                        raise IndexError  # no real size needs this: damage
                n = size if size < self._prefix else self._prefix
                # n output bytes never need more than about n + n/8 input bytes.
                data = zlib_ng.decompressobj().decompress(m[at : at + n + (n >> 3) + 64], n)
                if len(data) < n:
                    found = None
                elif n == size:
                    found = commit_header_fast(data, self.fmt, oid)
                elif compiled is not None:
                    # The compiled form of the regex below (same answers).
                    found = compiled.commit_header(data, self._hexsz)
                else:
                    # The common shape never looks past the byte after the
                    # committer line: a match in the prefix is the match in
                    # the whole commit.
                    match = self._rx.match(data)
                    if match is None:
                        found = None
                    else:
                        tree, ps, t = match.groups()
                        one = self._one_parent
                        if len(t) < 20:  # the usual commits, spelled out
                            if len(ps) == one:
                                return unhexlify(tree), (unhexlify(ps[7:-1]),), int(t)
                            if len(ps) == 2 * one:
                                return (
                                    unhexlify(tree),
                                    (unhexlify(ps[7 : one - 1]), unhexlify(ps[one + 7 : -1])),
                                    int(t),
                                )
                        found = commit_header_fields(match, self.fmt.hexsz)
                break
            else:
                found = None
        except ValueError:
            # A mapping closed by the open-file LRU: fetch them again next time.
            if p is not None:
                p.idx_map = p.pack_map = p.table = None
            found = None
        except (PackscopeError, IndexError, ZlibError):
            found = None  # damage, or a file gone: the store's read says what it is
        if found is None:
            self.declined += 1
        return found

    # --- a store-like view: fmt, read, read_header -----------------------------------------

    def _locate(self, oid: bytes) -> tuple[Pack, int] | None:
        """(pack, offset) by the quick lookup, or None (then: the store)."""
        tracer = self._tracer
        if tracer is not None and tracer.active:
            return None
        last = self._declined
        if last is not None and last[0] == oid:
            return last[1], last[2]
        packs = self._packs
        if packs is None or (self._counters is not None and self._counters.rescans != self._rescans):
            packs = self._reload()
        compiled = native.backend
        null = self._null
        for p in packs:
            if compiled is not None and oid != null:
                # the search and the offset in one compiled call (the lines
                # below answer the same); a few packs are mapped for it
                table = p.table
                if table is None and p.pack_map is None and len(packs) <= WALK_MAPS_PACKS:
                    try:
                        p.maps()
                    except (PackscopeError, ValueError, OSError):
                        p.idx_map = p.pack_map = p.table = None  # the lines below say what is wrong
                    table = p.table
                got = None
                if table is not None:
                    try:
                        got = compiled.idx_find_many([table], [oid], null)
                    except ValueError:  # a map the open-file LRU closed: fetched again next time
                        p.idx_map = p.pack_map = p.table = None
                if got is not None:
                    hit = got[0][0]
                    if hit is None:
                        continue
                    return p.handle.pack, hit[2] if hit[2] >= 0 else p.index.offset_at(hit[1])
            pos = p.find_position(oid)
            if pos >= 0:
                return p.handle.pack, p.index.offset_at(pos)
        return None

    def read(self, oid: bytes) -> tuple[str, bytes]:
        """Any object, ``(type, data)``: found by the quick lookup and read
        by its pack (which resolves delta chains with the store's base
        cache), else by the store.  Walks read tags and trees through it."""
        try:
            found = self._locate(oid)
            if found is not None:
                return found[0].read_at(found[1])
        except (PackscopeError, ValueError):
            pass  # the store's read below says what is wrong
        return self.store.read(oid)

    def read_header(self, oid: bytes) -> tuple[str, int]:
        try:
            found = self._locate(oid)
            if found is not None:
                return found[0].info_at(found[1])
        except (PackscopeError, ValueError):
            pass
        return self.store.read_header(oid)

    def _unusual(self, p: _PackLookup, offset: int, c: int, oid: bytes) -> CommitHeader | None:
        """An entry that is not a plain commit: a deltified commit (the pack
        resolves its chain, with its base cache), or another type (None: a
        tag at a tip is the store's business)."""
        if (c >> 4) & 7 < _OBJ_OFS_DELTA:
            self._declined = (oid, p.handle.pack, offset)  # the caller reads it next (a tag at a tip)
            return None
        return _delta_commit(p.handle.pack, offset, oid, self.fmt)


def _delta_commit(pack: Pack, offset: int, oid: bytes, fmt: ObjectFormat) -> CommitHeader | None:
    """A deltified entry's header when it is a commit: the pack resolves its
    chain, with its base cache."""
    type_name, data = pack.read_at(offset)
    return commit_header_fast(data, fmt, oid) if type_name == "commit" else None


def commit_facts(store: ObjectReader, info: CommitInfo | None, oid: bytes) -> tuple[bytes, tuple[bytes, ...], int, int]:
    """(tree, parents, date, generation) of one commit: the walk's hook
    when it answers (the commit-graph), else the object's header read."""
    got = info(oid) if info is not None else None
    if got is None:
        typ, data = store.read(oid)
        if typ != "commit":
            raise CorruptObjectError(f"expected a commit, found a {typ}", oid=oid.hex())
        got = commit_header_fast(data, store.fmt, oid)
    return got[0], tuple(got[1]), got[2], got[3] if len(got) > 3 else GENERATION_INFINITY


def peel_to_commit(store: ObjectReader, oid: bytes) -> bytes:
    """``oid``, or the commit its tags point to (at most 64 tags deep)."""
    for _ in range(64):
        typ, data = store.read(oid)
        if typ == "commit":
            return oid
        if typ != "tag":
            raise BadRevisionError(f"{oid.hex()} is a {typ}, not a commit", oid=oid.hex())
        oid = parse_tag(data, store.fmt, oid).object
    raise CorruptObjectError("tag chain too long (a loop?)", oid=oid.hex())
