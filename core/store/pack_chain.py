"""A delta chain as the UI shows it: each link from an entry down to its
base, read from entry headers alone (nothing is inflated), with whether
the delta-base cache holds it now.

Reading objects through chains is ``Pack.read_at``; this is the report.
It follows the pack's own rules (its chain-depth limit, loop errors and
index lookups for REF_DELTA bases).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from packscope.core.errors import DeltaError
from packscope.core.store.pack_entry import OBJ_OFS_DELTA, EntryHeader, given

if TYPE_CHECKING:
    from packscope.core.store.pack import Pack


class ChainLink(NamedTuple):
    """One entry of a delta chain, top (depth 0) first.  ``offset`` is None
    for a REF_DELTA base that lives outside this pack (type "external")."""

    offset: int | None
    type_name: str
    depth: int
    cached: bool
    base_oid: bytes | None = None


def delta_chain(pack: Pack, offset: int) -> list[ChainLink]:
    """The chain from the entry at ``offset`` (depth 0) down to its base."""
    cache = pack.cache
    links: list[ChainLink] = []
    for depth, hdr in enumerate(_walk(pack, offset)):
        if hdr is None:
            links.append(ChainLink(None, "external", depth, False, links[-1].base_oid))
        else:
            cached = cache is not None and (pack.name, hdr.offset) in cache
            links.append(ChainLink(hdr.offset, hdr.type_name, depth, cached, hdr.base_oid))
    return links


def _walk(pack: Pack, offset: int) -> Iterator[EntryHeader | None]:
    """Entry headers from ``offset`` down its delta chain; a final None
    stands for a REF_DELTA base outside this pack."""
    hdr = pack.entry_header(offset)
    seen = {offset}
    while True:
        yield hdr
        if not hdr.is_delta:
            return
        pack._check_chain_depth(len(seen), offset)
        if hdr.type_num == OBJ_OFS_DELTA:
            base_offset = hdr.base_offset
        else:
            base_offset = pack._find_offset(given(hdr.base_oid))
        if base_offset is None:
            yield None
            return
        if base_offset in seen:
            raise pack._error(f"delta chain loops back to offset {base_offset}", offset, "delta-loop", DeltaError)
        seen.add(base_offset)
        hdr = pack.entry_header(base_offset)
