"""Where an object was found: a pack handle (index opened lazily, pack data
on first read) and the location a lookup answers with.

Kept apart from the store so that the readers that act on a location (the
store itself, reading around damage) share these names without importing
each other."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from packscope.core.errors import PackscopeError
from packscope.core.oid import ObjectFormat
from packscope.core.store.pack_directory import PackFiles
from packscope.core.store.pack_index import PackIndex

if TYPE_CHECKING:
    from packscope.core.store.cache import OpenFiles
    from packscope.core.store.pack import Pack

# Error kinds that mean "the file was there when we listed it and is gone
# now" (a concurrent repack), as opposed to damage inside a file.
VANISHED_KINDS = ("pack-unreadable", "idx-unreadable", "midx-unreadable")
# Error kinds that mean "the file failed its checks, and is not the file we
# mapped any more" (packscope.core.store.mapped_file): half-written, or
# replaced while we read it.  Never damage.
CHANGED_KINDS = ("pack-changed", "idx-changed", "midx-changed")


def changed_under_us(e: PackscopeError) -> bool:
    """Whether ``e`` says the file changed under us (deleted, replaced or
    still being written after the store listed it) rather than that it is
    damaged: the answer is to rescan and look again."""
    if e.kind in CHANGED_KINDS:
        return True
    return e.kind in VANISHED_KINDS and bool(e.path) and not os.path.exists(e.path or "")


VANISHED_REMEDY = (
    "Nothing is damaged: the file was deleted after the store listed it — a concurrent git repack, gc or"
    " prune replaced it.  Rescan (the UI's R) and look the object up again: it lives in the new pack."
)


def explain_vanished(e: PackscopeError) -> PackscopeError:
    """An error opening a pack or index that is gone from disk now means a
    concurrent repack removed it, not damage: give it that remedy (in place)."""
    if changed_under_us(e):
        e.remedy = VANISHED_REMEDY
        if e.kind in VANISHED_KINDS and "removed since" not in e.message:
            e.message += " (removed since the store listed it: a concurrent repack?)"
    return e


class PackHandle:
    """One pack known to the store: its index (opened lazily) and its data,
    opened on first use by ``open_pack`` (the store counts and wires it)."""

    __slots__ = ("_open_pack", "_pack", "files", "in_midx", "index", "objects_dir")

    def __init__(
        self,
        files: PackFiles,
        fmt: ObjectFormat,
        open_files: OpenFiles,
        open_pack: Callable[[PackHandle], Pack],
    ) -> None:
        self.files = files
        self.objects_dir = os.path.dirname(os.path.dirname(files.base))
        self.index = PackIndex(files.idx_path, fmt, open_files=open_files)
        self._pack: Pack | None = None
        self._open_pack = open_pack
        self.in_midx = False

    @property
    def name(self) -> str:
        return self.files.name

    @property
    def pack(self) -> Pack:
        if self._pack is None:
            self._pack = self._open_pack(self)
        return self._pack

    def release_pages(self) -> None:
        """The pack's and its index's mapped pages back to the kernel (see
        MappedFile.release_pages): a lookup touches a few index pages again."""
        self.index.release_pages()
        if self._pack is not None:
            self._pack.release_pages()

    def close(self) -> None:
        self.index.close()
        if self._pack is not None:
            self._pack.close()
            self._pack = None


class Location(NamedTuple):
    """Where a lookup found an object: in a pack (through a midx or the
    pack's own index) at ``offset``, or a loose file at ``path``."""

    source: str  # "midx", "pack" or "loose"
    objects_dir: str
    local: bool
    pack: PackHandle | None = None
    offset: int | None = None
    path: str | None = None

    def pack_entry(self) -> tuple[PackHandle, int] | None:
        """(pack, offset) for an object found in a pack; None for a loose one."""
        if self.pack is None or self.offset is None:
            return None
        return self.pack, self.offset

    def loose_path(self) -> str:
        """The loose file of an object found loose."""
        if self.path is None:
            raise ValueError(f"not a loose object's location: {self!r}")
        return self.path

    @property
    def where(self) -> str:
        return self.pack.name if self.pack is not None else self.path or ""
