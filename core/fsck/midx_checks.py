"""fsck's checks of the multi-pack-index (one file or a chain of layers):
each layer's checksum, the packs it names, its ids in order, and each
object's offset against the named pack's own index."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Unpack

from packscope.core.errors import BadMultiPackIndexError, PackscopeError
from packscope.core.fsck.findings import (
    ERROR,
    ERROR_MULTI_PACK_INDEX,
    Finding,
    FindingPlace,
    Limiter,
    Ticker,
    from_error,
)
from packscope.core.fsck.objects import ObjectTable, PackSlot

if TYPE_CHECKING:
    from packscope.core.store.midx import MidxLayer, MultiPackIndex
    from packscope.core.store.odb import ObjectStore


def _midx_error(kind: str, message: str, path: str, **fields: Unpack[FindingPlace]) -> Finding:
    return Finding(
        kind,
        ERROR,
        message,
        "midx",
        ERROR_MULTI_PACK_INDEX,
        path=path,
        remedy=BadMultiPackIndexError.default_remedy,
        **fields,
    )


def check_midx(table: ObjectTable, store: ObjectStore, ticker: Ticker, limiter: Limiter) -> Iterator[Finding]:
    for e in store.problems:
        if isinstance(e, BadMultiPackIndexError):
            yield from_error(e, "midx", ERROR_MULTI_PACK_INDEX)
    slots = {os.path.basename(s.idx_path): s for s in table.packs}
    for m in store.midxs:
        try:
            layers = m.layers
        except PackscopeError as e:
            yield from_error(e, "midx", ERROR_MULTI_PACK_INDEX)
            continue
        ticker.start("multi-pack-index", m.num_objects)
        pack_dir = os.path.dirname(m.path) if not m.is_chain else os.path.dirname(os.path.dirname(m.path))
        for layer in layers:
            if layer.computed_checksum() != layer.checksum:
                yield _midx_error(
                    "midx-checksum",
                    "multi-pack-index checksum does not match its contents",
                    layer.path,
                    offset=layer.size - table.fmt.rawsz,
                )
        names = m.pack_names
        for name in names:
            if name not in slots and not os.path.exists(os.path.join(pack_dir, name)):
                yield _midx_error(
                    "midx-pack-missing", f"multi-pack-index names pack {name}, which is not there", m.path
                )
        yield from _check_midx_objects(m, layers, names, slots, ticker, limiter)
        ticker.finish()


def _check_midx_objects(
    m: MultiPackIndex,
    layers: Sequence[MidxLayer],
    names: list[str],
    slots: dict[str, PackSlot],
    ticker: Ticker,
    limiter: Limiter,
) -> Iterator[Finding]:
    unusable: set[str] = set()
    for layer in layers:
        prev = None
        for i in range(layer.num_objects):
            ticker.tick()
            name = layer.name_at(i)
            if prev is not None and name <= prev and limiter.allow(layer.path, "midx-order"):
                yield _midx_error("midx-order", f"ids out of order at position {i}", layer.path, oid=name.hex())
            prev = name
            try:
                pack_id, offset = layer.entry_at(i)
            except PackscopeError as e:
                if limiter.allow(layer.path, e.kind):
                    yield from_error(e, "midx", ERROR_MULTI_PACK_INDEX, oid=name.hex())
                continue
            pack_name = names[pack_id + layer.pack_base] if pack_id + layer.pack_base < len(names) else None
            slot = slots.get(pack_name) if pack_name is not None else None
            if slot is None or pack_name is None:
                continue  # reported above
            if slot.rejected:
                # git's verify cannot load the pack an entry names (its index
                # unreadable, the pack not matching it): a multi-pack-index
                # error too (bit 32), once per pack here
                if pack_name not in unusable:
                    unusable.add(pack_name)
                    yield _midx_error(
                        "midx-pack-unusable",
                        f"multi-pack-index lists objects in {pack_name}, which cannot be used ({slot.rejected})",
                        layer.path,
                        oid=name.hex(),
                        pack=slot.pack_path,
                        idx=slot.idx_path,
                    )
                continue
            try:
                pos = slot.handle.index.find(name)
                actual = slot.handle.index.offset_at(pos) if pos >= 0 else None
            except PackscopeError:
                continue
            if actual != offset and limiter.allow(layer.path, "midx-offset"):
                what = (
                    "is not in that pack's index"
                    if actual is None
                    else f"is at offset {actual} there, the multi-pack-index says {offset}"
                )
                yield _midx_error(
                    "midx-offset",
                    f"object listed for {pack_name} {what}",
                    layer.path,
                    oid=name.hex(),
                    pack=slot.pack_path,
                    idx=slot.idx_path,
                )
