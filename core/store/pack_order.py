"""A pack's entries in pack order: sorted offsets and the index positions
in that order (disk sizes, OFS_DELTA base ids, the fastest reading order),
from a valid ``.rev`` file when there is one, else sorted in memory; and
what that order tells about an entry (``PackOrderFacts``, a mixin of
``Pack``: its disk size, its delta base's id, the offsets deltas build on,
the id at an offset)."""

from __future__ import annotations

import mmap
import sys
from array import array
from bisect import bisect_left
from itertools import pairwise
from typing import TYPE_CHECKING, Protocol

from packscope.core.errors import DeltaError, PackscopeError
from packscope.core.store.pack_entry import OBJ_OFS_DELTA, OBJ_REF_DELTA, HeaderTuple
from packscope.core.store.pack_entry import given as _given
from packscope.core.store.pack_index import PackIndex


def pack_order(index: PackIndex, rev_path: str) -> tuple[array[int], array[int]]:
    """(sorted offsets, index positions in that order).  A ``.rev`` file
    (``RIDX``, version 1, hash id, then one 4-byte index position per object
    in pack order, then two checksums) spares the sort when it is valid for
    this pack; otherwise sort (offset, position) pairs packed into one int,
    which is faster than sorting with a key function."""
    n = index.num_objects
    by_position = index.offsets()
    positions = read_rev(rev_path, index)
    if positions is not None:
        offsets = array("Q", [by_position[p] for p in positions])
        if all(a < b for a, b in pairwise(offsets)):
            return offsets, positions
    order = sorted(range(n), key=by_position.__getitem__)
    return array("Q", [by_position[i] for i in order]), array("I", order)


def read_rev(path: str, index: PackIndex) -> array[int] | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    n, rawsz = index.num_objects, index.fmt.rawsz
    hash_id = {"sha1": 1, "sha256": 2}.get(index.fmt.name)
    if (
        len(data) != 12 + 4 * n + 2 * rawsz
        or data[:4] != b"RIDX"
        or int.from_bytes(data[4:8], "big") != 1
        or int.from_bytes(data[8:12], "big") != hash_id
        or data[12 + 4 * n : 12 + 4 * n + rawsz] != index.pack_checksum
    ):
        return None
    positions = array("I", data[12 : 12 + 4 * n])  # "I" is 4 bytes on every platform CPython supports
    if sys.byteorder == "little":
        positions.byteswap()
    if any(p >= n for p in positions):
        return None
    return positions


if TYPE_CHECKING:
    # Type-only: the host is checked against it by mypy, nothing of it runs.
    class PackOrderHost(Protocol):
        """What PackOrderFacts' methods use of their host, Pack (core/store/pack.py): its methods are
        typed ``self: PackOrderHost``, so the host is checked against this (a
        rename on either side fails mypy) instead of the mixin re-declaring it."""

        path: str
        index: PackIndex
        _order: tuple[array[int], array[int]] | None
        _data_end: int

        def open(self) -> object: ...
        def release_pages(self, start: int = 0, length: int | None = None) -> bool: ...
        def _header(self, offset: int) -> HeaderTuple: ...
        def _find_offset(self, oid: bytes) -> int | None: ...
        def _error(
            self,
            message: str,
            offset: int | None,
            kind: str,
            cls: type[PackscopeError] = ...,
            oid: bytes | None = None,
        ) -> PackscopeError: ...

        # and PackOrderFacts' own methods that call one another
        def _pack_order(self) -> tuple[array[int], array[int]]: ...
        def _rank_of(self, offset: int) -> int | None: ...


class PackOrderFacts:
    """What pack order tells about entries, mixed into ``Pack``."""

    def _pack_order(self: PackOrderHost) -> tuple[array[int], array[int]]:
        """(offsets ascending, the index position of each), built once."""
        order = self._order
        if order is None:
            host = self  # (mypy takes `self.x = ...` as declaring x on the mixin: set it on the host)
            order = host._order = pack_order(self.index.open(), self.path[: -len(".pack")] + ".rev")
        return order

    def _rank_of(self: PackOrderHost, offset: int) -> int | None:
        offsets = self._pack_order()[0]
        k = bisect_left(offsets, offset)
        return k if k < len(offsets) and offsets[k] == offset else None

    def disk_size(self: PackOrderHost, offset: int) -> int:
        """Bytes the entry occupies: up to the next entry, or the trailer."""
        offsets = self._pack_order()[0]
        k = self._rank_of(offset)
        if k is None:
            raise self._error(f"no entry starts at offset {offset}", offset, "pack-offset")
        self.open()
        return (offsets[k + 1] if k + 1 < len(offsets) else self._data_end) - offset

    def delta_base(self: PackOrderHost, offset: int) -> bytes | None:
        """The id of the entry's delta base (``%(deltabase)``), None if not a delta."""
        type_num, _, _, base_offset, base_oid = self._header(offset)
        if type_num != OBJ_OFS_DELTA:
            return base_oid  # the id for REF_DELTA, None for the rest
        k = self._rank_of(_given(base_offset))
        if k is None:
            raise self._error(
                f"OFS_DELTA base offset {base_offset} is not the start of an entry",
                offset,
                "delta-base-offset",
                DeltaError,
            )
        return self.index.name_at(self._pack_order()[1][k])

    def base_offsets(self: PackOrderHost) -> set[int]:
        """Offsets of the entries some delta in this pack uses as its base
        (OFS_DELTA, and REF_DELTA bases found in this pack), from the headers
        alone; a damaged header is skipped here (the caller reports it)."""
        header = self._header
        find = self._find_offset
        out: set[int] = set()
        # The headers lie on nearly every page of the pack: each stretch read
        # is given back to the kernel behind the scan (as computed_checksum
        # does), or the whole pack stays resident (git.git: 500 MB).
        release = True
        page_mask = ~(mmap.PAGESIZE - 1)
        behind = 0
        for i, offset in enumerate(self._pack_order()[0]):
            try:
                type_num, _, _, base_offset, base_oid = header(offset)
                if type_num == OBJ_REF_DELTA:
                    base_offset = find(_given(base_oid))
            except PackscopeError:
                continue
            if base_offset is not None:
                out.add(base_offset)
            if release and i & 8191 == 8191 and (offset & page_mask) > behind:
                release = self.release_pages(behind, (offset & page_mask) - behind)
                behind = offset & page_mask
        return out

    def oid_at(self: PackOrderHost, offset: int) -> bytes | None:
        """The id of the entry starting at ``offset`` (None: no entry starts there)."""
        k = self._rank_of(offset)
        return None if k is None else self.index.name_at(self._pack_order()[1][k])

    def pack_order(self: PackOrderHost) -> list[int]:
        """Index positions sorted by pack offset (the fastest order to read)."""
        return list(self._pack_order()[1])
