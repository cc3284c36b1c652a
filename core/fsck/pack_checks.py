"""fsck's checks of pack/idx pairs, and of the pack directories' stray halves.

Per pack, in git's order of suspicion:

1. the ``.idx`` opens (magic, version, monotonic fanout, size matching the
   object count) and the ``.pack`` opens (signature, version, object count
   agreeing with the index);
2. the pack's trailer equals the pack checksum the index recorded — if not,
   the pair does not belong together (or the pack was truncated) and, as
   git does, fsck *refuses* the pack: its objects count as unavailable;
3. with full checks: the index's own checksum, the pack's checksum over its
   content, the index's structure (ids sorted and in their fanout buckets),
   then every entry in pack order: its offset (inside the pack, not shared),
   CRC32 against the index, inflate (bounded by the declared size), delta
   bases, and the object id recomputed from the content; finally the
   object's syntax (packscope.core.fsck.syntax_findings).

Every copy's verdict lands in the object table (one byte per object), so
later phases know which copies are good without reading them again.
Loose objects: packscope.core.fsck.loose_checks; the multi-pack-index:
packscope.core.fsck.midx_checks.
"""

from __future__ import annotations

import os
from collections.abc import Container, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol, TypedDict, Unpack

from packscope.core.errors import PackscopeError, RepositoryError
from packscope.core.fsck.findings import (
    ERROR,
    ERROR_PACK,
    REMEDIES,
    WARNING,
    Details,
    Finding,
    Limiter,
    ObjectFields,
    Ticker,
    from_error,
    remedy_for_copies,
)
from packscope.core.fsck.objects import CORRUPT, TYPE_CODES, ObjectTable, PackSlot
from packscope.core.fsck.syntax_findings import syntax_findings

if TYPE_CHECKING:
    from packscope.core.fsck.parallel import ObjectPass
    from packscope.core.fsck.reach import Promised
    from packscope.core.store.odb import ObjectStore
    from packscope.core.store.pack import Pack
    from packscope.core.store.pack_index import PackIndex


class PackPair(TypedDict):
    """The pack/idx pair a finding concerns (passed on as Finding's ``pack`` and ``idx``)."""

    pack: str
    idx: str


class _PackErrorFields(ObjectFields, total=False):
    remedy: str | None


def _pack_error(kind: str, message: str, path: str, pair: PackPair, **fields: Unpack[_PackErrorFields]) -> Finding:
    """An error in a pack/idx pair, located in ``path`` (its .pack or its .idx)."""
    return Finding(kind, ERROR, message, "packs", ERROR_PACK, path=path, **pair, **fields)


def _idx_error(slot: PackSlot, pair: PackPair, kind: str, message: str, oid: bytes) -> Finding:
    """An error in the pair's .idx that a new index mends."""
    return _pack_error(kind, message, slot.idx_path, pair, oid=oid.hex(), remedy=_idx_remedy(slot))


# --- packs --------------------------------------------------------------------------------


def check_pack(
    table: ObjectTable,
    slot: PackSlot,
    ticker: Ticker,
    *,
    full: bool,
    limiter: Limiter,
    promised: Promised | None = None,
    severities: dict[str, str] | None = None,
    object_pass: ObjectPass | None = None,
) -> Iterator[Finding]:
    pair: PackPair = {"pack": slot.pack_path, "idx": slot.idx_path}
    idx = slot.handle.index
    why = "its index cannot be read"
    try:
        idx.open()
        why = "it cannot be opened"
        pack = slot.handle.pack.open()
    except PackscopeError as e:
        if e.kind == "pack-index-mismatch":
            # refused by the store's reads, as git refuses it (the walks find
            # none of its objects); read past here, to say how (cut or another pack's)
            past = table.store.pack_read_past(slot.handle)
            try:
                yield _refuse(slot, past.open(), idx, pair)
            finally:
                if past is not slot.handle.pack:
                    past.close()
            return
        slot.rejected = why
        yield from_error(e, "packs", ERROR_PACK, message=f"{e.message}; the pack cannot be used", **pair)
        return
    if pack.checksum != idx.pack_checksum:
        yield _refuse(slot, pack, idx, pair)
        return
    if not full:
        return
    if idx.computed_checksum() != idx.idx_checksum:
        yield _pack_error(
            "idx-checksum",
            "pack index checksum does not match its contents",
            slot.idx_path,
            pair,
            offset=idx.size - table.fmt.rawsz,
            remedy=_idx_remedy(slot),
        )
    if pack.computed_checksum() != pack.checksum:
        yield _pack_error(
            "pack-checksum",
            "pack checksum does not match its contents",
            slot.pack_path,
            pair,
            offset=pack.size - table.fmt.rawsz,
            remedy=REMEDIES["unreadable"],
        )
    yield from _check_idx_structure(slot, pack, limiter, pair)
    try:
        order = pack.pack_order()  # offsets, whatever the order of the ids
    except PackscopeError as e:
        yield from_error(e, "packs", ERROR_PACK, **pair)
        ticker.tick(idx.num_objects)
        return
    yield from _check_entries(table, slot, pack, order, ticker, limiter, promised, severities, object_pass)


def _refuse(slot: PackSlot, pack: Pack, idx: PackIndex, pair: PackPair) -> Finding:
    end = pack.size - len(pack.checksum)
    beyond = 0
    for i in range(idx.num_objects):
        try:
            if idx.offset_at(i) >= end:
                beyond += 1
        except PackscopeError:
            beyond += 1
    if beyond:
        slot.rejected = "it is truncated"
        kind = "pack-truncated"
        message = (
            f"pack is truncated: {beyond} of its index's {idx.num_objects} entries start beyond its "
            f"{pack.size} bytes; fsck refuses the pack, as git does"
        )
    else:
        slot.rejected = "it does not match its index"
        kind = "pack-index-mismatch"
        message = (
            "pack checksum differs from the one its index records (the pack does not match its index); "
            "fsck refuses the pack, as git does"
        )
    return _pack_error(
        kind,
        message,
        slot.pack_path,
        pair,
        offset=end,
        remedy="Restore the pack and its .idx from a good copy as a pair, or regenerate the index "
        "(git index-pack) if the pack itself is sound; then refetch what is missing.",
        details={"unavailable_objects": idx.num_objects},
    )


def _idx_remedy(slot: PackSlot) -> str:
    return f"Regenerate it: git index-pack {slot.pack_path} (writes a new .idx beside the pack)."


def _check_idx_structure(slot: PackSlot, pack: Pack, limiter: Limiter, pair: PackPair) -> Iterator[Finding]:
    """Ids in increasing order (repeats allowed) and each inside its fanout bucket.  Offsets
    are checked while entries are read in pack order (_check_entries: one
    outside the pack fails to read there, two alike follow each other)."""
    idx = slot.handle.index
    n = idx.num_objects
    fan = idx.fanout
    name_at = idx.name_accessor()
    prev = None
    bucket, bucket_end = 0, fan[0]
    for i in range(n):
        name = name_at(i)
        while i >= bucket_end and bucket < 255:
            bucket += 1
            bucket_end = fan[bucket]
        # the same id twice is allowed (git's index-pack writes it for a pack that
        # stores an object twice, and git fsck accepts it); going backwards is not
        if (prev is not None and name < prev) and limiter.allow(slot.idx_path, "idx-order"):
            yield _idx_error(slot, pair, "idx-order", f"index ids out of order at position {i}", name)
        if name[0] != bucket and limiter.allow(slot.idx_path, "idx-fanout"):
            yield _idx_error(slot, pair, "idx-fanout", f"id at position {i} lies outside its fanout bucket", name)
        prev = name


def _check_entries(
    table: ObjectTable,
    slot: PackSlot,
    pack: Pack,
    order: Sequence[int],
    ticker: Ticker,
    limiter: Limiter,
    promised: Promised | None,
    severities: dict[str, str] | None,
    object_pass: ObjectPass | None,
) -> Iterator[Finding]:
    # Objects that later entries build on stay in the delta-base cache when
    # read: in pack order a base often comes long before its deltas, and
    # without this ~1.5 delta applications per delta object were needed on
    # git.git instead of ~1.15.
    try:
        bases = pack.base_offsets()
    except PackscopeError:
        bases = set()
    if object_pass is not None and object_pass.splits(len(order)):
        yield from object_pass.check_entries(slot, order, bases, ticker)
    else:
        yield from check_range(table, slot, order, ticker, limiter, promised, severities, bases)


class _Ticks(Protocol):
    def tick(self, n: int = 1) -> None: ...


def check_range(
    table: ObjectTable,
    slot: PackSlot,
    order: Sequence[int],
    ticker: _Ticks,
    limiter: Limiter,
    promised: Promised | None,
    severities: dict[str, str] | None,
    bases: Container[int],
    prev_offset: int | None = None,
) -> Iterator[Finding]:
    """Check the entries at ``order`` (index positions in pack order — the
    whole pack, or one worker's range of it: packscope.core.fsck.parallel).
    ``bases``: offsets worth keeping in the delta-base cache; ``prev_offset``:
    the entry before the range (two ids at one offset follow each other)."""
    pack = slot.handle.pack.open()
    pair: PackPair = {"pack": slot.pack_path, "idx": slot.idx_path}
    idx = slot.handle.index
    types = slot.type_table()
    hash_object = table.fmt.hash_object
    path = slot.pack_path
    for pos in order:
        ticker.tick()
        oid = idx.name_at(pos)
        offset = idx.offset_at(pos)
        if offset == prev_offset and limiter.allow(slot.idx_path, "idx-offset"):
            # one of the two cannot be what is stored there: the hash check below tells which
            yield _idx_error(slot, pair, "idx-offset", f"index gives offset {offset} to two ids", oid)
        prev_offset = offset
        problem = None
        try:
            crc = pack.crc_ok(pos)
        except PackscopeError as e:
            crc, problem = None, e
        if crc is False and limiter.allow(path, "pack-crc"):
            yield _object_finding(
                table,
                slot,
                pos,
                oid,
                "pack-crc",
                "entry's CRC32 does not match the index (the stored bytes changed)",
                offset,
                pair,
                promised,
            )
        if problem is None:
            try:
                type_name, data = pack.read_at(offset, keep=offset in bases)
            except PackscopeError as e:
                problem = e
        if problem is not None:
            types[pos] = CORRUPT
            if limiter.allow(path, problem.kind):
                if problem.offset is not None and problem.offset != offset:
                    message = (
                        f"cannot rebuild the object: at offset {problem.offset} of its delta chain, {problem.message}"
                    )
                    kind = "delta-base-unreadable"
                else:
                    message, kind = f"cannot read the object: {problem.message}", problem.kind
                yield _object_finding(
                    table,
                    slot,
                    pos,
                    oid,
                    kind,
                    message,
                    offset,
                    pair,
                    promised,
                    details={"error_offset": problem.offset, "error_kind": problem.kind},
                )
            continue
        if hash_object(type_name, data) != oid:
            types[pos] = CORRUPT
            if limiter.allow(path, "hash-mismatch"):
                yield _object_finding(
                    table,
                    slot,
                    pos,
                    oid,
                    "hash-mismatch",
                    f"the {type_name} stored here hashes to {hash_object(type_name, data).hex()}, not to its name",
                    offset,
                    pair,
                    promised,
                )
            continue
        types[pos] = TYPE_CODES[type_name]
        if type_name != "blob":
            for f in syntax_findings(
                type_name,
                data,
                oid,
                table,
                path=path,
                offset=offset,
                severities=severities,
                promisor=slot.promisor,
                **pair,
            ):
                if limiter.allow(path, f.kind):
                    yield f


def _object_finding(
    table: ObjectTable,
    slot: PackSlot,
    pos: int,
    oid: bytes,
    kind: str,
    message: str,
    offset: int,
    pair: PackPair,
    promised: Promised | None,
    details: Details | None = None,
) -> Finding:
    elsewhere = table.elsewhere(oid, (slot, pos), promised)
    remedy = remedy_for_copies(elsewhere)
    return _pack_error(
        kind,
        message,
        slot.pack_path,
        pair,
        offset=offset,
        oid=oid.hex(),
        elsewhere=elsewhere,
        remedy=remedy,
        details=details or {},
    )


# --- stray files and alternates ---------------------------------------------------------------


def check_directories(store: ObjectStore) -> Iterator[Finding]:
    for scan in store.directory_scans():
        for name in scan.orphans:
            path = os.path.join(scan.pack_dir, name)
            half = "index without its pack" if name.endswith(".idx") else "pack without its index"
            yield Finding(
                "orphan-idx" if name.endswith(".idx") else "orphan-pack",
                WARNING,
                f"{half}: git ignores it, and so do lookups",
                "packs",
                0,
                path=path,
                remedy=REMEDIES["orphan"],
            )
    for e in store.problems:
        if isinstance(e, RepositoryError) and e.kind.startswith("alternates"):
            yield from_error(e, "alternates", 0, severity=WARNING)
