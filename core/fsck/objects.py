"""Where fsck finds objects: every copy, and what verification said of it.

The store answers "where is the object" with the first copy it finds; fsck
needs more: *every* copy (to say whether a damaged object exists
elsewhere, and to read a good copy when the first is bad), and packs it has
refused (a pack whose trailer disagrees with its index is unusable, as in
git).  It also remembers, per pack, one byte per object — the object's type
once verified, and a flag when the copy is corrupt — so the connectivity
walk can check a blob's type without reading it.  That bytearray, indexed
by the object's position in the ``.idx``, is the only per-object memory
this table adds.

Lookups search only the packs whose fanout has ids under the object's first
byte (fullest first), then the loose name caches.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from stat import S_IFDIR, S_IFLNK, S_IFREG
from typing import TYPE_CHECKING

from packscope.core import native
from packscope.core.errors import CorruptObjectError, PackscopeError
from packscope.core.fsck.special_blobs import SpecialBlobs
from packscope.core.objects import commit_header_fast, parse_tag, tree_items

if TYPE_CHECKING:
    from packscope.core._native import IdSet
    from packscope.core.oid import ObjectFormat
    from packscope.core.store.location import PackHandle
    from packscope.core.store.loose import LooseCache
    from packscope.core.store.odb import ObjectStore

TYPE_CODES = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}
TYPE_NAMES = (None, "commit", "tree", "blob", "tag")
TYPE_MASK = 0x07
CORRUPT = 0x80  # this copy failed verification (CRC, inflate, delta, hash)


_FOLLOWED = frozenset((S_IFDIR, S_IFREG, S_IFLNK))  # file types whose entries name objects here (not gitlinks)


def references(
    type_name: str,
    data: bytes,
    fmt: ObjectFormat,
    oid: bytes | None = None,
    grafted: Mapping[bytes, tuple[bytes, ...]] | None = None,
) -> list[bytes]:
    """Ids an object points to (gitlinks excluded); [] if it does not parse.
    ``grafted``: {commit id: parents} of shallow and grafted commits."""
    try:
        if type_name == "commit":
            tree, parents, _ = commit_header_fast(data, fmt)
            if grafted and oid is not None and oid in grafted:
                parents = grafted[oid]
            return [tree, *parents]
        if type_name == "tree":
            return [oid for mode, _, oid in tree_items(data, fmt) if mode & 0o170000 in _FOLLOWED]
        if type_name == "tag":
            return [parse_tag(data, fmt).object]
    except CorruptObjectError:
        pass
    return []


def new_id_set(rawsz: int) -> set[bytes] | IdSet:
    """A set of raw ids: compiled (ids inline, no object per id) or the pure path's set."""
    compiled = native.backend
    return compiled.id_set(rawsz) if compiled is not None else set()


def joined_ids(ids: set[bytes] | IdSet) -> bytes:
    """Every id of ``ids`` back to back (a worker's answer to the parent)."""
    return b"".join(ids) if isinstance(ids, set) else ids.joined()


def add_joined(ids: set[bytes] | IdSet, raw: bytes, rawsz: int) -> None:
    """Add the ids ``raw`` holds back to back (:func:`joined_ids`)."""
    if isinstance(ids, set):
        ids.update([raw[j : j + rawsz] for j in range(0, len(raw), rawsz)])
    else:
        ids.update_joined(raw)


class PackSlot:
    """One pack as fsck sees it."""

    __slots__ = ("handle", "idx_path", "local", "no", "pack_path", "promisor", "rejected", "types")

    def __init__(self, no: int, handle: PackHandle) -> None:
        self.no = no
        self.handle = handle
        self.local = handle.files.local
        self.promisor = handle.files.promisor
        self.pack_path = handle.files.pack_path
        self.idx_path = handle.files.idx_path
        self.rejected: str | None = None  # why fsck refuses this pack
        self.types: bytearray | None = None

    @property
    def name(self) -> str:
        return os.path.basename(self.pack_path)

    def type_table(self) -> bytearray:
        if self.types is None:
            self.types = bytearray(self.handle.index.open().num_objects)
        return self.types


class LooseDir:
    __slots__ = ("cache", "local", "no", "path")

    def __init__(self, no: int, path: str, local: bool, cache: LooseCache) -> None:
        self.no, self.path, self.local, self.cache = no, path, local, cache


# One copy of an object: a pack and the object's position in its .idx, or a
# loose directory.
Where = tuple[PackSlot, int] | tuple[LooseDir, None]


class Unreadable(Exception):
    """No copy of an object could be read (internal to fsck)."""

    def __init__(self, oid: bytes, errors: list[PackscopeError], rejected: list[str]) -> None:
        super().__init__(oid.hex())
        self.oid, self.errors, self.rejected = oid, errors, rejected


class ObjectTable:
    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        self.fmt = store.fmt
        self.packs = [PackSlot(i, h) for i, h in enumerate(store.packs)]
        local = store.objects_dir
        self.loose = [LooseDir(i, d, d == local, store.loose_cache(d)) for i, d in enumerate(store.object_dirs)]
        self.loose_types: dict[bytes, int] = {}  # oid -> type code | CORRUPT, for verified loose objects
        self.special_blobs = SpecialBlobs()  # .gitmodules/.gitattributes named by the trees read
        self._by_byte: list[list[PackSlot]] | None = None
        # Every id a verified commit, tree or tag names, noted by the object
        # pass so the dangling phase need not read the unreachable objects
        # again (None: not collected — a connectivity-only run).  An id set
        # (new_id_set) while the pass runs; then (:meth:`seal`) the same
        # compiled set, or the pure path's set compacted to sorted raw ids.
        self.referenced: set[bytes] | IdSet | None = None
        self._named: bytes | IdSet | None = None
        self.grafted: Mapping[bytes, tuple[bytes, ...]] = {}

    def note_references(self, type_name: str, data: bytes, oid: bytes) -> None:
        """Remember what a verified object names (see ``referenced``)."""
        if self.referenced is not None:
            self.referenced.update(references(type_name, data, self.fmt, oid, self.grafted))

    def seal(self) -> None:
        """End of the object pass: the pure path's set of ``referenced`` ids
        becomes one sorted bytes string (20 or 32 bytes an id instead of a
        set entry: ~4x less memory during the walk); the compiled set is
        kept as it is (ids inline already)."""
        if self.referenced is not None:
            named = self.referenced
            self._named = b"".join(sorted(named)) if isinstance(named, set) else named
            self.referenced = None

    @property
    def references_noted(self) -> bool:
        """Whether the object pass noted what the objects it verified name (after :meth:`seal`)."""
        return self._named is not None

    def was_referenced(self, oid: bytes) -> bool:
        """Whether a verified object names ``oid`` (after :meth:`seal`)."""
        blob, size = self._named, len(oid)
        if blob is None:
            return False
        if not isinstance(blob, bytes):
            return oid in blob
        lo, hi = 0, len(blob) // size
        while lo < hi:
            mid = (lo + hi) // 2
            if blob[mid * size : mid * size + size] < oid:
                lo = mid + 1
            else:
                hi = mid
        return lo * size < len(blob) and blob[lo * size : lo * size + size] == oid

    # --- locating ------------------------------------------------------------------

    def _buckets(self) -> list[list[PackSlot]]:
        """Per first byte, the packs that hold ids starting with it, the
        fullest bucket first: with a thousand small packs most have nothing
        under a given byte, and skipping them is what keeps lookups cheap."""
        if self._by_byte is None:
            lists: list[list[tuple[int, int, PackSlot]]] = [[] for _ in range(256)]
            for slot in self.packs:
                try:
                    fan = slot.handle.index.open().fanout
                except PackscopeError:
                    continue  # reported (and the pack refused) by the pack checks
                prev = 0
                for b in range(256):
                    if fan[b] > prev:
                        lists[b].append((prev - fan[b], slot.no, slot))
                    prev = fan[b]
            self._by_byte = [[slot for _, _, slot in sorted(lst)] for lst in lists]
        return self._by_byte

    def find(self, oid: bytes) -> Where | None:
        """The first usable copy: (PackSlot, index position) or (LooseDir, None); None if none."""
        for slot in self._buckets()[oid[0]]:
            if slot.rejected:
                continue
            try:
                pos = slot.handle.index.find(oid)
            except PackscopeError:
                continue  # an index that cannot be opened was reported (and refused) already
            if pos >= 0:
                return slot, pos
        for d in self.loose:
            if d.cache.contains(oid):
                return d, None
        return None

    def copies(self, oid: bytes, *, include_rejected: bool = False) -> list[Where]:
        """Every copy: (PackSlot, position) and (LooseDir, None), packs first."""
        out: list[Where] = []
        for slot in self._buckets()[oid[0]]:
            if slot.rejected and not include_rejected:
                continue
            try:
                pos = slot.handle.index.find(oid)
            except PackscopeError:
                continue
            if pos >= 0:
                out.append((slot, pos))
        for d in self.loose:
            if d.cache.contains(oid):
                out.append((d, None))
        return out

    def rejected_copies(self, oid: bytes) -> list[str]:
        return [
            describe(where)
            for where in self.copies(oid, include_rejected=True)
            if isinstance(where[0], PackSlot) and where[0].rejected
        ]

    def type_of(self, where: Where, oid: bytes) -> str | None:
        """The type verification recorded for this copy, if any."""
        if isinstance(where[0], PackSlot):
            slot, pos = where
            code = slot.types[pos] if slot.types is not None else 0
        else:
            code = self.loose_types.get(oid, 0)
        return TYPE_NAMES[code & TYPE_MASK]

    def is_corrupt(self, where: Where, oid: bytes) -> bool:
        if isinstance(where[0], PackSlot):
            slot, pos = where
            return slot.types is not None and bool(slot.types[pos] & CORRUPT)
        return bool(self.loose_types.get(oid, 0) & CORRUPT)

    # --- reading ------------------------------------------------------------------------

    def read_copy(self, where: Where, oid: bytes, verify: bool = False) -> tuple[str, bytes]:
        from packscope.core.store.loose import loose_path, read_loose

        if isinstance(where[0], PackSlot):
            slot, pos = where
            index = slot.handle.index
            type_name, data = slot.handle.pack.read_at(index.offset_at(pos))
            if verify and self.fmt.hash_object(type_name, data) != oid:
                raise CorruptObjectError(
                    "object does not hash to its name",
                    path=slot.pack_path,
                    offset=index.offset_at(pos),
                    oid=oid.hex(),
                    kind="hash-mismatch",
                )
            return type_name, data
        return read_loose(loose_path(where[0].path, oid.hex()), self.fmt, oid, verify=verify)

    def read(self, oid: bytes, first: Where | None = None) -> tuple[str, bytes, Where]:
        """(type, content, copy) from the first copy that reads; copies
        verification found corrupt are skipped.  Unreadable if none."""
        errors: list[PackscopeError] = []
        candidates = [first] if first is not None else []
        tried_all = False
        while True:
            for where in candidates:
                if self.is_corrupt(where, oid):
                    continue
                try:
                    type_name, data = self.read_copy(where, oid)
                except PackscopeError as e:  # damaged, or a REF_DELTA base that is missing
                    errors.append(e)
                    continue
                except FileNotFoundError as e:  # removed under us
                    errors.append(CorruptObjectError(f"vanished while reading: {e}", oid=oid.hex(), kind="vanished"))
                    continue
                return type_name, data, where
            if tried_all:
                break
            tried_all = True
            candidates = [c for c in self.copies(oid) if c != first]
        raise Unreadable(oid, errors, self.rejected_copies(oid))

    def read_header(self, oid: bytes, where: Where) -> str:
        """The type of a copy without reading it all (for connectivity-only runs)."""
        from packscope.core.store.loose import loose_path, read_loose_header

        known = self.type_of(where, oid)
        if known:
            return known
        if isinstance(where[0], PackSlot):
            slot, pos = where
            return slot.handle.pack.info_at(slot.handle.index.offset_at(pos))[0]
        return read_loose_header(loose_path(where[0].path, oid.hex()), oid)[0]

    # --- enumeration ------------------------------------------------------------------------

    def total_objects(self) -> int:
        n = 0
        for slot in self.packs:
            with contextlib.suppress(PackscopeError):  # a bad index is reported by the pack checks
                n += slot.handle.index.open().num_objects
        for d in self.loose:
            n += sum(len(d.cache.entries(sub)) for sub in range(256))
        return n

    def elsewhere(self, oid: bytes, here: Where, promised: Callable[[bytes], bool] | None = None) -> tuple[str, ...]:
        """Other copies of ``oid`` that read back correctly, described, plus
        "promised" when a promisor remote has it."""
        out = []
        for where in self.copies(oid, include_rejected=True):
            if where == here:
                continue
            slot = where[0]
            if isinstance(slot, PackSlot) and slot.rejected:
                out.append(describe(where) + " (refused pack)")
                continue
            try:
                self.read_copy(where, oid, verify=True)
            except PackscopeError:
                out.append(describe(where) + " (also damaged)")
                continue
            out.append(describe(where))
        if promised is not None and promised(oid):
            out.append("promised")
        return tuple(out)


def describe(where: Where) -> str:
    slot = where[0]
    if isinstance(slot, PackSlot):
        return slot.name + ("" if slot.local else f" (alternate {os.path.dirname(os.path.dirname(slot.pack_path))})")
    return "loose" + ("" if slot.local else f" (alternate {slot.path})")
