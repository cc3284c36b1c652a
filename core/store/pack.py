"""One ``.pack`` file: reading objects through delta chains, and what a
pack's order says about its entries (disk sizes, delta-base ids).

Layout (gitformat-pack): ``PACK``, version (2 or 3), object count, then the
entries, then the hash of everything before it.  Entry headers are parsed
in pack_entry.py, entry data inflated (bounded) in pack_inflate.py.

Reading resolves delta chains with a loop, not recursion: walk down to a
base (or a cached intermediate object), then apply the deltas upwards,
caching every object that served as a base, as git does.  Checksums and
CRCs are verified only on request (``verify_checksum``, ``crc_ok``), never
on ordinary reads.
"""

from __future__ import annotations

import mmap
import os
import zlib
from array import array
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar

from zlib_ng import zlib_ng

from packscope.core import native
from packscope.core.errors import (
    BadPackError,
    DeltaError,
    LimitExceededError,
    LookupFailedError,
    PackscopeError,
)
from packscope.core.oid import ObjectFormat
from packscope.core.store.cache import DeltaBaseCache, OpenFiles
from packscope.core.store.delta import apply_delta_py
from packscope.core.store.mapped_file import MappedFile
from packscope.core.store.pack_chain import ChainLink, delta_chain
from packscope.core.store.pack_entry import (
    OBJ_OFS_DELTA,
    OBJ_REF_DELTA,
    TYPE_NAMES,
    EntryHeader,
    HeaderTuple,
    parse_entry_header,
)
from packscope.core.store.pack_entry import given as _given
from packscope.core.store.pack_index import PackIndex
from packscope.core.store.pack_inflate import inflate_entry
from packscope.core.store.pack_info import PackInfo
from packscope.core.store.pack_order import PackOrderFacts
from packscope.core.store.zlib_errors import ZlibError

if TYPE_CHECKING:
    from packscope.core._native import ChainWalk

# The compiled path (core/native.py ``backend``, read at each call so the
# tests' one switch reaches it): ``read_object`` reads an object whole with
# the delta-base cache's counts and order as read_at's loop makes them, or
# None; then ``walk_chain`` (headers and cache probes down to a cached or
# whole object) and ``apply_chain`` (every delta of a chain inflated and
# applied in one call), or read_at's loop; ``read_objects`` several objects
# of one pack in one call (Pack.read_run).
# Entries up to this size are inflated in one call (see _inflate): one
# output allocation, no growth.  Its window's worst case (a hostile stream)
# is 1032 x 72 KiB, about 76 MB, for a moment.
ONE_CALL_INFLATE = 64 << 10
_decompress = zlib_ng.decompress

DEFAULT_MAX_OBJECT_SIZE = 4 << 30
# git reads a delta chain of any depth (its unpack_entry is iterative; only
# writers bound depth, pack-objects at 4095), and so do these readers: every
# walk is a loop, an OFS_DELTA's base lies strictly earlier in the pack (no
# loop possible) and a REF_DELTA loop is caught by the offsets seen.  The
# depth rule stays for callers that want a bound (tests, fsck's budgets);
# by default it is one no pack can reach, so the compiled and pure paths
# answer alike, as git does, however deep a chain is.
DEFAULT_MAX_CHAIN_DEPTH = 1 << 62

ResolveRef = Callable[[bytes], tuple[str, bytes]]
ResolveRefInfo = Callable[[bytes], tuple[str, int]]


T = TypeVar("T")


def _inflate(m: mmap.mmap, offset: int, start: int, size: int, end: int, max_size: int, path: str) -> bytes:
    """``inflate_entry``'s bytes for a small sound entry in one call: zlib's
    one-shot decompress of the window ``inflate_entry`` would read first
    (it costs about half of a decompressor object's set-up and calls).  It
    must end the stream (or it raises) with exactly ``size`` bytes; anything
    else — a big entry, a cut, corrupt, short or long stream — goes to
    ``inflate_entry``, which raises the error.  A hostile stream can make no
    more than 1032 times the small window."""
    if size <= ONE_CALL_INFLATE and size <= max_size:
        try:
            data = _decompress(m[start : min(end, start + size + (size >> 3) + 64)], 15, size + 1)
        except ZlibError:
            data = None
        if data is not None and len(data) == size:
            return data
    return inflate_entry(m, offset, start, size, end, max_size, path)


def _inflate_capped(data: memoryview, size: int) -> bytes | None:
    """Exactly ``size`` bytes inflated from ``data`` (a window of a bigger
    delta's stream) with zlib-ng, output capped; None for anything else
    (apply_chain's choice for deltas over ONE_CALL_INFLATE)."""
    d = zlib_ng.decompressobj()
    # Fed in two parts: the input left after the stream's end is copied
    # (unused_data), and most streams end within half their size.
    first = (size >> 1) + 64
    try:
        out = d.decompress(data[:first], size + 1)
        if not d.eof and len(data) > first and len(out) <= size:  # (all of the first part consumed)
            out += d.decompress(data[first:], size + 1 - len(out))
    except ZlibError:
        return None
    return out if d.eof and len(out) == size else None


class PackReading(NamedTuple):
    """What the compiled whole reads (``read_object``, ``read_objects``)
    take of one pack besides the offsets: one record per pack, kept while
    the map, the cache and the limits stay (``Pack._reading``)."""

    pack: mmap.mmap  # the mapped .pack
    end: int  # start of its trailing checksum
    max_depth: int  # Pack.max_chain_depth
    max_size: int  # Pack.max_object_size
    cache: DeltaBaseCache
    name: str  # the pack's name: the cache's key with an offset
    decompress: Callable[[object, int, int], bytes] | None  # a small entry inflated in one call
    inflate_big: Callable[[memoryview, int], bytes | None] | None  # a big delta inflated, capped


class ChainEnd(NamedTuple, Generic[T]):
    """Where ``Pack._walk_chain`` stopped, below the deltas it passed.

    Exactly one of ``found``, ``whole`` and ``external`` is set."""

    deltas: list[tuple[int, int, int]]  # (offset, data offset, size) of each delta passed, top first
    at: int  # the offset the walk stopped at (probed, whole; external: the last delta's)
    found: T | None  # the probe's answer for ``at``
    whole: HeaderTuple | None  # the header of the whole object at ``at``
    external: bytes | None  # a REF_DELTA base's id that this pack does not hold


class Pack(PackInfo, PackOrderFacts, MappedFile):
    """A read-only view of one .pack file and its index."""

    def __init__(
        self,
        path: str,
        index: PackIndex | None = None,
        *,
        fmt: ObjectFormat | None = None,
        resolve_ref: ResolveRef | None = None,
        resolve_ref_info: ResolveRefInfo | None = None,
        cache: DeltaBaseCache | None = None,
        open_files: OpenFiles | None = None,
        max_object_size: int = DEFAULT_MAX_OBJECT_SIZE,
        max_chain_depth: int = DEFAULT_MAX_CHAIN_DEPTH,
        check_trailer: bool = True,
    ) -> None:
        self.path = str(path)
        # git refuses a pack whose trailing hash is not the one its .idx
        # records (cut, or another pack's .idx): none of its objects is
        # read, not even the entries before the damage.  The store decides
        # whether to check (store_state.READ_MODES: the UI's views and
        # fsck's pack pass read past it, to show and say how it is damaged).
        self.check_trailer = check_trailer
        self.name = os.path.basename(self.path)
        if index is None:
            if fmt is None:
                raise ValueError("Pack needs an index or an object format")
            index = PackIndex(self.path[: -len(".pack")] + ".idx", fmt, open_files=open_files)
        self.index = index
        self.fmt = fmt or index.fmt
        self.resolve_ref = resolve_ref
        self.resolve_ref_info = resolve_ref_info
        self.cache = cache
        self.max_object_size = max_object_size
        self.max_chain_depth = max_chain_depth
        self._open_files = open_files
        self._map = None
        self._size = 0
        self._data_end = 0  # start of the trailing checksum
        self.version = 0
        self._order: tuple[array[int], array[int]] | None = None
        # offset -> type of the chain's base: a delta's type never changes, and
        # finding it walks every header down the chain (about 12 in git.git).
        self._delta_types: dict[int, str] = {}
        self._type_memo: bytearray | None = None  # the compiled reader's (pack_info's) memo of the same
        self._active: set[int] = set()  # offsets whose chain waits on resolve_ref (loop guard)
        # offset -> (type, content) read from another copy because this
        # pack's entry is damaged (the store fills it): chains through a
        # damaged base use the good copy, as git does.
        self.good_copies: dict[int, tuple[str, bytes]] = {}
        self._read_args: PackReading | None = None  # see _reading

    # --- opening ---------------------------------------------------------

    def open(self) -> Pack:
        if self._map is None:
            self._open()
        return self

    def _error(
        self,
        message: str,
        offset: int | None,
        kind: str,
        cls: type[PackscopeError] = BadPackError,
        oid: bytes | None = None,
    ) -> PackscopeError:
        return cls(message, path=self.path, offset=offset, kind=kind, oid=None if oid is None else oid.hex())

    def _open(self) -> mmap.mmap:
        return self._map_checked(self._check_header, "pack", "pack")

    def _load(self) -> None:
        self._open()

    def _forget_mapping(self) -> None:
        self._read_args = None  # it holds the old map

    def _check_header(self, m: mmap.mmap, size: int) -> None:
        if size < 12 + self.fmt.rawsz:
            raise self._error(f"pack is truncated ({size} bytes)", size, "pack-truncated")
        if m[:4] != b"PACK":
            raise self._error("not a pack file (no PACK signature)", 0, "pack-signature")
        version = int.from_bytes(m[4:8], "big")
        if version not in (2, 3):
            raise self._error(f"unsupported pack version {version}", 4, "pack-version")
        count = int.from_bytes(m[8:12], "big")
        if count != self.index.open().num_objects:
            raise self._error(f"pack holds {count} objects, its index {self.index.num_objects}", 8, "pack-count")
        rawsz = self.fmt.rawsz
        if self.check_trailer and m[size - rawsz : size] != self.index.pack_checksum:
            raise self._error(
                "pack does not match its index (its trailing hash is not the one the .idx records: "
                "cut short, or written over); git uses none of its objects",
                size - rawsz,
                "pack-index-mismatch",
            )
        self.version = version
        self._size, self._data_end = size, size - rawsz

    @property
    def size(self) -> int:
        self.open()
        return self._size

    @property
    def num_objects(self) -> int:
        return self.index.open().num_objects

    @property
    def checksum(self) -> bytes:
        m = self.map
        return m[self._data_end : self._size]

    # --- entries ---------------------------------------------------------

    def entry_header(self, offset: int) -> EntryHeader:
        """The parsed header of the entry starting at ``offset``."""
        type_num, size, start, base_offset, base_oid = self._header(offset)
        return EntryHeader(offset, type_num, size, start - offset, start, base_offset, base_oid)

    def _header(self, offset: int) -> HeaderTuple:
        """(type number, size, data offset, base offset, base id)."""
        m = self._map if self._map is not None else self._open()
        b = native.backend
        if b is not None:
            # The compiled parser answers what the reference would, or None
            # (anything it would refuse): then the reference says why.
            found = b.entry_header(m, offset, self._data_end, self.fmt.rawsz)
            if found is not None:
                return found
        # The reference directly, not through _header_py: no extra call per entry.
        return parse_entry_header(m, offset, self._data_end, self.fmt.rawsz, self.path)

    def _header_py(self, offset: int) -> HeaderTuple:
        """``_header`` in pure Python: the reference, and every error's source."""
        m = self._map if self._map is not None else self._open()
        return parse_entry_header(m, offset, self._data_end, self.fmt.rawsz, self.path)

    def _inflate(self, offset: int, start: int, size: int) -> bytes:
        """The data of the entry at ``offset`` (zlib stream at ``start``):
        exactly ``size`` bytes, or a typed error (read_at calls
        ``inflate_entry`` itself: no extra call per entry)."""
        m = self._map if self._map is not None else self._open()
        return _inflate(m, offset, start, size, self._data_end, self.max_object_size, self.path)

    # --- objects ---------------------------------------------------------
    #
    # The hot paths use the tuple from _header() rather than EntryHeader:
    # building a frozen dataclass costs more than parsing the header.

    def read_at(self, offset: int, keep: bool = False) -> tuple[str, bytes]:
        """(type name, content) of the object whose entry starts at ``offset``.

        ``keep``: also put the object itself in the delta-base cache — for a
        whole-pack pass that knows it will serve as a later entry's base
        (``base_offsets``), so its chain is not rebuilt then."""
        if self._active and offset in self._active:
            raise self._error("delta chain loops back through another pack", offset, "delta-loop", DeltaError)
        files = self._open_files
        if files is not None and files.newest is not self:  # (already the most recent: nothing to move)
            files.touch(self)
        cache = self.cache
        b = native.backend
        if cache is not None and not self.good_copies and b is not None:
            m = self._map if self._map is not None else self._open()
            # The whole read and the cache's bookkeeping in one call; else the walk.
            got = b.read_object(self._reading(m, cache), offset, keep)
            if got is not None:
                return got
            walked = b.walk_chain(m, offset, self._data_end, self.max_chain_depth, cache.table, self.name)
            if walked is not None:
                built = self._build(m, walked, keep, cache)
                if built is not None:
                    return built
        type_num, size, start, base_offset, base_oid = self._header(offset)
        m = self._map if self._map is not None else self._open()  # _header mapped it
        end, max_size, path = self._data_end, self.max_object_size, self.path
        if type_num < OBJ_OFS_DELTA:  # the common case: no chain, no cache
            data = _inflate(m, offset, start, size, end, max_size, path)
            if keep and self.cache is not None:
                self.cache.put(self.name, offset, TYPE_NAMES[type_num], data)
            return TYPE_NAMES[type_num], data
        cache = self.cache
        name = self.name
        if cache is not None:
            hit = cache.get(name, offset)
            if hit is not None:
                return hit
        good = self.good_copies

        def probe(at: int) -> tuple[str, bytes] | None:
            # a base already made: in the cache (counted), or a good copy of a damaged one
            hit = cache.get(name, at) if cache is not None else None
            if hit is None and good:
                hit = good.get(at)
            return hit

        ended = self._walk_chain(offset, (type_num, size, start, base_offset, base_oid), probe)
        deltas = ended.deltas
        if ended.found is not None:
            base = ended.found
        elif ended.whole is not None:
            type_num, size, start, _, _ = ended.whole
            base = (TYPE_NAMES[type_num], _inflate(m, ended.at, start, size, end, max_size, path))
            if cache is not None:
                cache.put(name, ended.at, base[0], base[1])
        else:  # outside this pack: ask the store
            ref = _given(ended.external)
            base = self._external_base(ended.at, ref, {d[0] for d in deltas}, self.resolve_ref)
        return self._apply_deltas(m, base, deltas, keep, cache)

    def read_run(self, offsets: list[int]) -> list[tuple[str, bytes]]:
        """``read_at`` of the first of ``offsets``, in order, as many as the
        compiled read answers in one call (``read_objects``): possibly none;
        the caller reads the next one with ``read_at`` (which answers or
        raises) and goes on after it."""
        cache = self.cache
        b = native.backend
        if b is None or cache is None or self.good_copies or self._active:
            return []
        files = self._open_files
        if files is not None and files.newest is not self:
            files.touch(self)
        m = self._map if self._map is not None else self._open()
        got = b.read_objects(self._reading(m, cache), offsets)
        return [] if got is None else got

    def _reading(self, m: mmap.mmap, cache: DeltaBaseCache) -> PackReading:
        """The compiled reads' record for this pack: the one kept, unless the
        map, the cache or a limit changed since it was made."""
        r = self._read_args
        if (
            r is None
            or r.pack is not m
            or r.cache is not cache
            or r.max_depth != self.max_chain_depth
            or r.max_size != self.max_object_size
        ):
            r = self._read_args = PackReading(
                m,
                self._data_end,
                self.max_chain_depth,
                self.max_object_size,
                cache,
                self.name,
                _decompress,
                _inflate_capped,
            )
        return r

    def _build(
        self,
        m: mmap.mmap,
        walked: ChainWalk,
        keep: bool,
        cache: DeltaBaseCache,
    ) -> tuple[str, bytes] | None:
        """read_at's object from a compiled walk (``walk_chain``): the cache
        counts and orders as read_at's own loop makes it, the base is
        inflated and cached as there, then the deltas applied."""
        hit, deltas, base_offset = walked.hit, walked.deltas, walked.base_offset
        cache.count_misses(walked.misses)
        name = self.name
        if hit >= 0:
            base = cache.get(name, hit)  # counts the hit, as the loop's probe would
            if base is None:
                return None
            if not deltas:
                return base
        else:
            base = (
                TYPE_NAMES[walked.base_type],
                _inflate(
                    m,
                    base_offset,
                    walked.base_data_offset,
                    walked.base_size,
                    self._data_end,
                    self.max_object_size,
                    self.path,
                ),
            )
            if not deltas:  # a whole object on top: not a base of anything here
                if keep:
                    cache.put(name, base_offset, base[0], base[1])
                return base
            cache.put(name, base_offset, base[0], base[1])
        return self._apply_deltas(m, base, deltas, keep, cache)

    def _apply_deltas(
        self,
        m: mmap.mmap,
        base: tuple[str, bytes],
        deltas: list[tuple[int, int, int]],
        keep: bool,
        cache: DeltaBaseCache | None,
    ) -> tuple[str, bytes]:
        """``deltas`` (top first) applied upwards from ``base``; every object
        made but the top one (and it too with ``keep``) is cached."""
        name, end, max_size, path = self.name, self._data_end, self.max_object_size, self.path
        type_name, data = base
        b = native.backend
        if b is not None:
            made = b.apply_chain(m, data, deltas, end, max_size, _decompress, _inflate_capped)
            if made is not None:
                if cache is not None:  # as the loop below: bottom first, the top one only if kept
                    for k in range(len(deltas) - 1, -1 if keep else 0, -1):
                        cache.put(name, deltas[k][0], type_name, made[k])
                return type_name, made[0]
        apply_delta = apply_delta_py if b is None else b.apply_delta
        for k in range(len(deltas) - 1, -1, -1):
            here, start, size = deltas[k]
            try:
                data = apply_delta(data, _inflate(m, here, start, size, end, max_size, path), max_size)
            except (DeltaError, LimitExceededError) as e:
                e.path, e.offset = self.path, here
                raise
            if (k or keep) and cache is not None:  # every object but the top served as a base
                cache.put(name, here, type_name, data)
        return type_name, data

    def _walk_chain(self, offset: int, head: HeaderTuple, probe: Callable[[int], T | None]) -> ChainEnd[T]:
        """The one delta-chain walk of the pure path (read_at's for the
        object, info_at's for its type; the compiled path's twin is
        ``chain_walk_from`` in native_c/chain.c): from the delta at
        ``offset`` (its header ``head``) down, base by base, by headers
        alone.  ``probe(base offset)`` is asked before each base is visited
        and may answer for it (an object cached, a good copy, a type known):
        the walk stops there; else it stops at a whole object, or at a
        REF_DELTA base this pack does not hold.  Every walk keeps the same
        rules: the depth rule (``_check_chain_depth``) per delta passed, and
        an offset met twice is a loop."""
        type_num, size, start, base_offset, base_oid = head
        deltas = [(offset, start, size)]  # top first
        self._check_chain_depth(1, offset)
        seen = {offset}
        while True:
            if type_num == OBJ_REF_DELTA:
                ref = _given(base_oid)
                base_offset = self._find_offset(ref)
                if base_offset is None:
                    return ChainEnd(deltas, deltas[-1][0], None, None, ref)
            base_offset = _given(base_offset)
            if base_offset in seen:
                raise self._error(f"delta chain loops back to offset {base_offset}", offset, "delta-loop", DeltaError)
            seen.add(base_offset)
            found = probe(base_offset)
            if found is not None:
                return ChainEnd(deltas, base_offset, found, None, None)
            here = base_offset
            header = self._header(here)
            type_num, size, start, base_offset, base_oid = header
            if type_num < OBJ_OFS_DELTA:
                return ChainEnd(deltas, here, None, header, None)
            deltas.append((here, start, size))
            self._check_chain_depth(len(deltas), offset)

    def _check_chain_depth(self, deltas: int, offset: int) -> None:
        """The one depth rule of every chain walk: a chain of up to
        ``max_chain_depth`` deltas above its base is read; ``deltas`` is how
        many the walk from ``offset`` has met so far."""
        if deltas > self.max_chain_depth:
            raise self._error(
                f"delta chain is deeper than {self.max_chain_depth}", offset, "delta-too-deep", DeltaError
            )

    def _find_offset(self, oid: bytes) -> int | None:
        """Offset of ``oid`` in this pack, through the index."""
        pos = self.index.find(oid)
        return None if pos < 0 else self.index.offset_at(pos)

    def _external_base(
        self, offset: int, oid: bytes, chain: set[int], resolve: Callable[[bytes], tuple[str, T]] | None
    ) -> tuple[str, T]:
        """A REF_DELTA base from the store, through ``resolve``: the store's
        ``read`` gives (type, bytes), its header reader (type, size)."""
        if resolve is None:
            raise self._error(
                f"REF_DELTA base {oid.hex()} is not in this pack and there is no store to ask",
                offset,
                "delta-missing-base",
                DeltaError,
                oid,
            )
        # The store may come back to this pack; an offset of this chain
        # reached again means the chain loops through other packs.
        self._active.update(chain)
        try:
            return resolve(oid)
        except LookupFailedError as e:
            raise self._error(
                f"REF_DELTA base {oid.hex()} is missing: {e.message}", offset, "delta-missing-base", DeltaError, oid
            ) from e
        finally:
            self._active.difference_update(chain)

    def delta_chain(self, offset: int) -> list[ChainLink]:
        """The chain from the entry at ``offset`` (depth 0) down to its base."""
        return delta_chain(self, offset)

    # --- verification (on request only) --------------------------------------

    def computed_checksum(self) -> bytes:
        """The hash of the pack's bytes before its trailer.  Each 4 MiB read
        is given back to the kernel once hashed (MADV_DONTNEED on a
        read-only file mapping: the pages stay in the page cache): hashing a
        500 MB pack otherwise leaves all of it resident in this process."""
        m = self.map
        h = self.fmt.new_hash()
        step = 1 << 22  # a multiple of the page size
        release = True
        with memoryview(m) as view:
            for at in range(0, self._data_end, step):
                size = min(step, self._data_end - at)
                h.update(view[at : at + size])
                if release:
                    release = self.release_pages(at, size)
        return h.digest()

    def verify_checksum(self) -> None:
        """The trailer hashes the pack, and the index records the same hash."""
        if self.computed_checksum() != self.checksum:
            raise self._error("pack checksum does not match its contents", self._data_end, "pack-checksum")
        if self.index.pack_checksum != self.checksum:
            raise self._error(
                f"pack checksum differs from the one its index {self.index.name} records",
                self._data_end,
                "pack-index-mismatch",
            )

    def crc_ok(self, position: int) -> bool | None:
        """Whether the raw entry of index position ``position`` matches the
        index's CRC32; None when the index has no CRCs (version 1)."""
        expected = self.index.open().crc_at(position)  # crc_at needs the index parsed
        if expected is None:
            return None
        offset = self.index.offset_at(position)
        size = self.disk_size(offset)
        return zlib.crc32(self.map[offset : offset + size]) & 0xFFFFFFFF == expected


if TYPE_CHECKING:
    from packscope.core.store.pack_info import PackInfoHost
    from packscope.core.store.pack_order import PackOrderHost

    def _mixins_hosted(pack: Pack) -> None:
        """Pack checked against what its mixins' methods use of it (never runs)."""
        info: PackInfoHost = pack  # noqa: F841
        order: PackOrderHost = pack  # noqa: F841
