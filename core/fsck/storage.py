"""fsck's storage checks: pack indexes, packs, loose objects, stray files
and the multi-pack-index (the commit-graph's are in
packscope.core.fsck.commit_graph_checks).

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
   object's syntax (packscope.core.fsck.syntax).

Every copy's verdict lands in the object table (one byte per object), so
later phases know which copies are good without reading them again.
"""

from __future__ import annotations

import os
from collections.abc import Container, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol, TypedDict, Unpack

from packscope.core.errors import (
    BadMultiPackIndexError,
    CorruptObjectError,
    MissingObjectError,
    PackscopeError,
    RepositoryError,
)
from packscope.core.fsck.findings import (
    ERROR,
    ERROR_MULTI_PACK_INDEX,
    ERROR_OBJECT,
    ERROR_PACK,
    INFO,
    REMEDIES,
    WARNING,
    Details,
    Finding,
    FindingPlace,
    Limiter,
    ObjectFields,
    Ticker,
    from_error,
)
from packscope.core.fsck.objects import CORRUPT, TYPE_CODES, ObjectTable, PackSlot, Unreadable
from packscope.core.fsck.syntax import check_object

if TYPE_CHECKING:
    from packscope.core.fsck.parallel import ObjectPass
    from packscope.core.fsck.reach import Promised
    from packscope.core.store.midx import MidxLayer, MultiPackIndex
    from packscope.core.store.odb import ObjectStore
    from packscope.core.store.pack import Pack
    from packscope.core.store.pack_index import PackIndex

REPACK_REMEDY = (
    "A good copy exists elsewhere ({where}): git repack -a -d rewrites the packs from good copies; "
    "then delete the damaged pack if it remains."
)


class PackPair(TypedDict):
    """The pack/idx pair a finding concerns (passed on as Finding's ``pack`` and ``idx``)."""

    pack: str
    idx: str


class _PackErrorFields(ObjectFields, total=False):
    remedy: str | None


class _SyntaxFields(FindingPlace, total=False):
    path: str | None


def _pack_error(kind: str, message: str, path: str, pair: PackPair, **fields: Unpack[_PackErrorFields]) -> Finding:
    """An error in a pack/idx pair, located in ``path`` (its .pack or its .idx)."""
    return Finding(kind, ERROR, message, "packs", ERROR_PACK, path=path, **pair, **fields)


def _idx_error(slot: PackSlot, pair: PackPair, kind: str, message: str, oid: bytes) -> Finding:
    """An error in the pair's .idx that a new index mends."""
    return _pack_error(kind, message, slot.idx_path, pair, oid=oid.hex(), remedy=_idx_remedy(slot))


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


def _syntax_finding(msg_id: str, severity: str, message: str, remedy: str, **fields: Unpack[_SyntaxFields]) -> Finding:
    """One of git's fsck messages about an object's content (``msg_id: message``)."""
    return Finding(
        msg_id,
        severity,
        f"{msg_id}: {message}",
        "objects",
        ERROR_OBJECT if severity == ERROR else 0,
        remedy=remedy,
        msg_id=msg_id,
        **fields,
    )


def _severity(msg_severity: str) -> str:
    return {"fatal": ERROR, "error": ERROR, "warning": WARNING}.get(msg_severity, INFO)


def syntax_findings(
    type_name: str,
    data: bytes,
    oid: bytes,
    table: ObjectTable,
    *,
    path: str,
    offset: int | None = None,
    pack: str | None = None,
    idx: str | None = None,
    severities: dict[str, str] | None = None,
    promisor: bool = False,
) -> Iterator[Finding]:
    clean_ids: list[tuple[bytes, ...]] = []
    if type_name == "tree":
        table.special_blobs.add_tree(data, table.fmt.rawsz, promisor)
    for p in check_object(type_name, data, table.fmt, severities, clean_ids):
        yield _syntax_finding(
            p.msg_id,
            _severity(p.severity),
            p.message,
            REMEDIES["syntax"],
            path=path,
            offset=offset,
            pack=pack,
            idx=idx,
            oid=oid.hex(),
            object_type=type_name,
            details={} if p.offset is None else {"content_offset": p.offset},
        )
    if table.referenced is not None:  # what it names, for the dangling phase
        if clean_ids:
            table.referenced.update(clean_ids[0])  # the syntax check's own parse
        else:
            table.note_references(type_name, data, oid)


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


def remedy_for_copies(elsewhere: tuple[str, ...]) -> str:
    good = [w for w in elsewhere if "damaged" not in w and "refused" not in w and w != "promised"]
    if good:
        return REPACK_REMEDY.format(where=", ".join(good))
    if "promised" in elsewhere:
        return "The promisor remote has it: git fetch it again (or re-clone), then repack."
    return REMEDIES["unreadable"]


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


# --- loose objects -------------------------------------------------------------------------


def check_loose(
    table: ObjectTable,
    ticker: Ticker,
    *,
    limiter: Limiter,
    promised: Promised | None = None,
    severities: dict[str, str] | None = None,
) -> Iterator[Finding]:
    from packscope.core.store.loose import loose_path, read_loose

    for d in table.loose:
        for sub in range(256):
            for oid in d.cache.entries(sub):
                ticker.tick()
                path = loose_path(d.path, oid.hex())
                try:
                    type_name, data = read_loose(path, table.fmt, oid, verify=True)
                except MissingObjectError:
                    continue  # removed while we looked (a concurrent gc)
                except PackscopeError as e:
                    table.loose_types[oid] = CORRUPT
                    if limiter.allow(d.path, e.kind):
                        elsewhere = table.elsewhere(oid, (d, None), promised)
                        remedy = remedy_for_copies(elsewhere) if elsewhere else e.remedy
                        yield from_error(
                            e, "objects", ERROR_OBJECT, elsewhere=elsewhere, path=path, oid=oid.hex(), remedy=remedy
                        )
                    continue
                table.loose_types[oid] = TYPE_CODES[type_name]
                if type_name != "blob":
                    for f in syntax_findings(type_name, data, oid, table, path=path, severities=severities):
                        if limiter.allow(d.path, f.kind):
                            yield f


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


# --- multi-pack-index ------------------------------------------------------------------------------


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
            if slot is None or slot.rejected:
                continue  # reported above, or the pack itself was refused
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


# --- .gitmodules and .gitattributes ---------------------------------------------------------


def check_special_blobs(
    table: ObjectTable, store: ObjectStore, promised: Promised | None, severities: dict[str, str] | None = None
) -> Iterator[Finding]:
    """The blobs the trees name .gitmodules/.gitattributes, read and checked
    once every object has been (packscope.core.fsck.special_blobs)."""
    from packscope.core.fsck.special_blobs import SEVERITIES

    overrides = severities or {}
    special = table.special_blobs
    if promised:  # a partial clone
        named_by_promisor = special.named_by_promisor

        def is_promised(oid: bytes) -> bool:
            # named by a tree of a promisor pack: promised without listing the promised set
            return oid in named_by_promisor or promised.is_promised(oid)
    else:

        def is_promised(oid: bytes) -> bool:
            return False

    def read(oid: bytes) -> tuple[str, bytes]:
        # fsck's own view (good copies, refused packs left out), not the
        # store's: in a partial clone its reads would list the promised set
        # a second time just to say "promised"
        try:
            type_name, data, _ = table.read(oid)
        except Unreadable as u:
            if not table.copies(oid, include_rejected=True):
                raise MissingObjectError("no copy of the object", oid=oid.hex()) from None
            raise u.errors[0] if u.errors else CorruptObjectError("no readable copy", oid=oid.hex()) from None
        return type_name, data

    for p in special.finish(read, is_promised, overrides):
        yield _syntax_finding(
            p.msg_id,
            _severity(overrides.get(p.msg_id) or SEVERITIES[p.msg_id]),
            p.message,
            REMEDIES["special-blob"],
            oid=p.oid.hex(),
            object_type=p.object_type,
            details={"named": p.which},
        )
