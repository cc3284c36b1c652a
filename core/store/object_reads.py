"""Reading objects from the store (``read``, ``read_header``,
``object_info``): find the object, then read it where it was found — a pack
entry (through its delta chain) or a loose file.  A mixin of
``ObjectStore`` (core/store/odb.py).

Two things can happen between finding and reading, and both are handled
here once for every kind of read: the file vanished (a concurrent repack
deleted the pack, or packed and pruned the loose object) — rescan and look
again; or the pack entry is damaged — read another copy, as git does
(packscope.core.store.damaged_reads).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from packscope.core.errors import (
    BadPackError,
    CorruptObjectError,
    MissingObjectError,
    PackscopeError,
    PromisedObjectError,
)
from packscope.core.store.damaged_reads import read_around_damage
from packscope.core.store.location import CHANGED_KINDS, VANISHED_KINDS, Location, changed_under_us
from packscope.core.store.store_state import MAX_RESCAN_ROUNDS

if TYPE_CHECKING:
    from packscope.core.oid import ObjectFormat
    from packscope.core.store.odb import ObjectStore

T = TypeVar("T")


if TYPE_CHECKING:
    # Type-only: the host is checked against it by mypy, nothing of it runs.
    class ObjectReadsHost(Protocol):
        """What ObjectReads' methods use of their host, ObjectStore (core/store/odb.py): its methods are
        typed ``self: ObjectReadsHost``, so the host is checked against this (a
        rename on either side fails mypy) instead of the mixin re-declaring it."""

        fmt: ObjectFormat
        objects_dir: str
        empty_tree: bytes

        def locate(self, oid: bytes, quick: bool | None = None) -> Location | None: ...
        def rescan(self, reason: str = "request") -> None: ...
        def is_promised(self, oid: bytes) -> bool: ...

        # and ObjectReads' own methods that call one another
        def missing_error(self, oid: bytes) -> MissingObjectError | PromisedObjectError: ...
        def _at_location(self, oid: bytes, use: Callable[[Location], T], loc: Location | None = None) -> T: ...
        def read(self, oid: bytes, loc: Location | None = None) -> tuple[str, bytes]: ...
        def read_header(self, oid: bytes) -> tuple[str, int]: ...


class ObjectReads:
    """The store's reads, mixed into ``ObjectStore``."""

    def missing_error(self: ObjectReadsHost, oid: bytes) -> MissingObjectError | PromisedObjectError:
        if self.is_promised(oid):
            return PromisedObjectError(
                f"object {oid.hex()} is not in the object store; a promisor remote promises it (partial clone)",
                oid=oid.hex(),
                path=self.objects_dir,
            )
        return MissingObjectError(
            f"object {oid.hex()} is not in the object store", oid=oid.hex(), path=self.objects_dir
        )

    def _at_location(self: ObjectReadsHost, oid: bytes, use: Callable[[Location], T], loc: Location | None = None) -> T:
        """Locate ``oid`` (unless ``loc`` says where it was found) and apply
        ``use`` to its Location.  A file that vanished in between (a
        concurrent repack deleted the pack, or packed and pruned the loose
        object) means: rescan, look again."""
        for _ in range(MAX_RESCAN_ROUNDS):
            if loc is None:
                loc = self.locate(oid)
            if loc is None:
                raise self.missing_error(oid)
            try:
                return use(loc)
            except FileNotFoundError:
                pass
            except MissingObjectError as e:
                if loc.pack is not None or e.oid != oid.hex():
                    raise
            except PackscopeError as e:
                if not changed_under_us(e):
                    raise
            self.rescan("vanished")
            loc = None
        raise self.missing_error(oid)

    def read(self: ObjectReadsHost, oid: bytes, loc: Location | None = None) -> tuple[str, bytes]:
        """(type name, content) of ``oid`` (found at ``loc`` when given, as
        ``locate_many`` answered)."""
        from packscope.core.store.loose import read_loose

        if oid == self.empty_tree:
            return "tree", b""

        def use(loc: Location) -> tuple[str, bytes]:
            entry = loc.pack_entry()
            if entry is None:
                return read_loose(loc.loose_path(), self.fmt, oid)
            handle, offset = entry
            try:
                return handle.pack.read_at(offset)
            except (CorruptObjectError, BadPackError) as e:
                if e.kind in VANISHED_KINDS or e.kind in CHANGED_KINDS:
                    raise
                return read_around_damage(cast("ObjectStore", self), oid, loc, e)

        return self._at_location(oid, use, loc)

    def read_header(self: ObjectReadsHost, oid: bytes) -> tuple[str, int]:
        from packscope.core.store.loose import read_loose_header

        if oid == self.empty_tree:
            return "tree", 0

        def use(loc: Location) -> tuple[str, int]:
            entry = loc.pack_entry()
            if entry is None:
                return read_loose_header(loc.loose_path(), oid)
            handle, offset = entry
            return handle.pack.info_at(offset)

        return self._at_location(oid, use)

    def object_info(
        self: ObjectReadsHost, oid: bytes, storage: bool = False, loc: Location | None = None
    ) -> tuple[str, int, int | None, bytes | None]:
        """(type, size, bytes on disk, delta base id) with one lookup (none
        when ``loc`` says where ``locate_many`` found it); the last two only
        when ``storage`` is asked for (else None)."""
        from packscope.core.store.loose import read_loose_header

        if oid == self.empty_tree:
            return "tree", 0, (0 if storage else None), None

        def use(loc: Location) -> tuple[str, int, int | None, bytes | None]:
            entry = loc.pack_entry()
            if entry is None:
                path = loc.loose_path()
                type_name, size = read_loose_header(path, oid)
                return type_name, size, (os.stat(path).st_size if storage else None), None
            handle, offset = entry
            pack = handle.pack
            type_name, size = pack.info_at(offset)
            if not storage:
                return type_name, size, None, None
            return type_name, size, pack.disk_size(offset), pack.delta_base(offset)

        return self._at_location(oid, use, loc)

    def _read_for_delta(self: ObjectReadsHost, oid: bytes) -> tuple[str, bytes]:
        """REF_DELTA bases outside their own pack are found through the store."""
        return self.read(oid)

    def _header_for_delta(self: ObjectReadsHost, oid: bytes) -> tuple[str, int]:
        return self.read_header(oid)
