"""A pack entry's type and size without reading the object
(``cat-file --batch-check``, ``object_info``): a whole object's are in its
header; a delta's size is the result size in its first bytes, and its type
is its chain's base's, found by walking headers down the chain (or asking
the cache, or another pack for a REF_DELTA base that is not here).  A
mixin of ``Pack`` (core/store/pack.py).

Every delta passed on a walk learns its type too: a delta's type never
changes, and git.git's chains are about 12 headers deep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from packscope.core import native
from packscope.core.errors import DeltaError
from packscope.core.store.delta import delta_sizes
from packscope.core.store.pack_entry import OBJ_OFS_DELTA, TYPE_NAMES, HeaderTuple
from packscope.core.store.pack_entry import given as _given
from packscope.core.store.pack_inflate import inflate_prefix

if TYPE_CHECKING:
    import mmap
    from collections.abc import Callable
    from typing import TypeVar

    from packscope.core.errors import PackscopeError
    from packscope.core.oid import ObjectFormat
    from packscope.core.store.cache import DeltaBaseCache
    from packscope.core.store.pack import ChainEnd
    from packscope.core.store.pack_index import PackIndex

    T = TypeVar("T")

# The compiled type-and-size reader (``pack_info`` of core/native.py's
# backend): info_at's answer for an object or an OFS_DELTA chain, or None
# (the reference decides); ``pack_info_many`` for several in one call.


def _type_memo(num_objects: int) -> bytearray:
    """pack_info's memo for a pack of ``num_objects``: a power of two of
    8-byte slots, about one per four objects, 4 KiB to 512 KiB."""
    slots = 512
    while slots < min(num_objects // 4, 1 << 16):
        slots *= 2
    return bytearray(8 * slots)


if TYPE_CHECKING:
    # Type-only: the host is checked against it by mypy, nothing of it runs.
    class PackInfoHost(Protocol):
        """What PackInfo's methods use of their host, Pack (core/store/pack.py): its methods are
        typed ``self: PackInfoHost``, so the host is checked against this (a
        rename on either side fails mypy) instead of the mixin re-declaring it."""

        path: str
        name: str
        fmt: ObjectFormat
        index: PackIndex
        cache: DeltaBaseCache | None
        max_chain_depth: int
        resolve_ref: Callable[[bytes], tuple[str, bytes]] | None
        resolve_ref_info: Callable[[bytes], tuple[str, int]] | None
        _map: mmap.mmap | None
        _data_end: int
        _delta_types: dict[int, str]
        _type_memo: bytearray | None
        _active: set[int]

        def _open(self) -> mmap.mmap: ...
        def _header(self, offset: int) -> HeaderTuple: ...
        def _walk_chain(self, offset: int, head: HeaderTuple, probe: Callable[[int], T | None]) -> ChainEnd[T]: ...
        def _external_base(
            self, offset: int, oid: bytes, chain: set[int], resolve: Callable[[bytes], tuple[str, T]] | None
        ) -> tuple[str, T]: ...
        def _error(
            self,
            message: str,
            offset: int | None,
            kind: str,
            cls: type[PackscopeError] = ...,
            oid: bytes | None = None,
        ) -> PackscopeError: ...

        # and PackInfo' own methods that call one another
        def delta_result_size(self, offset: int, start: int, size: int) -> int: ...
        def _chain_type(self, offset: int) -> str: ...
        def _walk_chain_type(self, offset: int) -> str: ...


class PackInfo:
    """``info_at`` / ``info_many`` and the chain-type walk, mixed into ``Pack``."""

    def info_at(self: PackInfoHost, offset: int) -> tuple[str, int]:
        """(type name, size) without inflating whole objects: a delta's
        result size is in its first bytes, its type is its chain's base's."""
        if self._active and offset in self._active:
            raise self._error("delta chain loops back through another pack", offset, "delta-loop", DeltaError)
        b = native.backend
        if b is not None:
            m = self._map if self._map is not None else self._open()
            memo = self._type_memo
            if memo is None:
                host = self  # (mypy takes `self.x = ...` as declaring x on the mixin: set it on the host)
                memo = host._type_memo = _type_memo(self.index.num_objects)
            found = b.pack_info(m, offset, self._data_end, self.fmt.rawsz, self.max_chain_depth, memo)
            if found is not None:
                return TYPE_NAMES[found[0]], found[1]
        type_num, size, start, _, _ = self._header(offset)
        if type_num < OBJ_OFS_DELTA:
            return TYPE_NAMES[type_num], size
        return self._chain_type(offset), self.delta_result_size(offset, start, size)

    def info_many(self: PackInfoHost, offsets: list[int]) -> list[tuple[str, int] | None]:
        """``info_at``'s answers for many entries in one compiled call; None
        where it declines (and always without the compiled module): ask
        ``info_at``, which answers or raises."""
        b = native.backend
        if b is None or self._active:  # a chain waiting on another pack: info_at checks loops
            return [None] * len(offsets)
        m = self._map if self._map is not None else self._open()
        memo = self._type_memo
        if memo is None:
            host = self  # (as in info_at)
            memo = host._type_memo = _type_memo(self.index.num_objects)
        return b.pack_info_many(m, offsets, self._data_end, self.fmt.rawsz, self.max_chain_depth, memo)

    def delta_result_size(self: PackInfoHost, offset: int, start: int, size: int) -> int:
        """The result size a delta entry declares, from its first bytes
        (``start``: its zlib stream, ``size``: the delta's own size)."""
        m = self._map if self._map is not None else self._open()
        prefix = inflate_prefix(
            m, offset, start, min(size, 20), self._data_end, self.path
        )  # two varints of at most 10 bytes
        try:
            return delta_sizes(prefix)[1]
        except DeltaError as e:
            e.path, e.offset = self.path, offset
            raise

    def _chain_type(self: PackInfoHost, offset: int) -> str:
        """A delta's type: its base's, found by headers alone (or the cache)."""
        known = self._delta_types.get(offset)
        if known is None:
            known = self._delta_types[offset] = self._walk_chain_type(offset)
        return known

    def _walk_chain_type(self: PackInfoHost, offset: int) -> str:
        # Pack._walk_chain, the one walk read_at makes too, by headers
        # alone; a base whose type is known (memoised, or its object in the
        # cache: peeked, not counted) ends it.  Every delta passed on the
        # way learns the type too.
        memo = self._delta_types
        cache = self.cache
        name = self.name

        def probe(at: int) -> str | None:
            known = memo.get(at)
            if known is None and cache is not None:
                hit = cache.peek(name, at)
                known = hit[0] if hit is not None else None
            return known

        walked = self._walk_chain(offset, self._header(offset), probe)
        if walked.found is not None:
            result = walked.found
        elif walked.whole is not None:
            result = TYPE_NAMES[walked.whole[0]]
        else:  # a REF_DELTA base in another pack: its type alone, if the store can say
            ref, chain = _given(walked.external), {d[0] for d in walked.deltas}
            if self.resolve_ref_info is not None:
                result = self._external_base(walked.at, ref, chain, self.resolve_ref_info)[0]
            else:
                result = self._external_base(walked.at, ref, chain, self.resolve_ref)[0]
        for o, _, _ in walked.deltas:
            memo[o] = result
        return result
