"""Reading a file through a read-only memory map: the one opener
(``map_readonly``) and what every reader of one mapped file shares
(``MappedFile``: mapping and checking on open, ``is_open``, ``close()``).

Subclasses keep the mapping in ``self._map`` and, when they belong to a
store's open-file LRU, the LRU in ``self._open_files``.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, Self

if TYPE_CHECKING:
    from packscope.core.store.cache import OpenFiles

# Out of descriptors or address space: closing other maps may help.
_RELIEVABLE = (errno.EMFILE, errno.ENFILE, errno.ENOMEM)


def map_readonly(path: str, open_files: OpenFiles | None = None) -> tuple[mmap.mmap | None, int]:
    """Map ``path`` read-only: (map, size); map is None for an empty file
    (mmap refuses those).  The map keeps its own descriptor; ours is closed.

    Out of descriptors or mappings (EMFILE, ENFILE, ENOMEM), close some of
    ``open_files``' maps and retry.
    """
    while True:
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size == 0:
                    return None, 0
                return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), size
        except OSError as e:
            if e.errno not in _RELIEVABLE or open_files is None:
                raise
            if not open_files.relieve():
                raise


class FileIdentity(NamedTuple):
    """What tells one version of a file from another: a rename puts another
    inode in place, a writer changes the size or the mtime."""

    dev: int
    ino: int
    size: int
    mtime_ns: int


def file_identity(path: str) -> FileIdentity | None:
    """``path``'s identity now, or None when it cannot be stat'ed (gone)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return FileIdentity(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


FANOUT = struct.Struct(">256I")


def read_fanout(m: mmap.mmap, at: int, error: Callable[[str, int, str], Exception], kind: str) -> tuple[int, ...]:
    """A fanout table (256 cumulative big-endian counts) at ``at``: pack
    index, multi-pack-index and commit-graph share it.  A count below the
    one before is ``error(message, offset, kind)``."""
    fanout: tuple[int, ...] = FANOUT.unpack_from(m, at)
    prev = 0
    for i, n in enumerate(fanout):
        if n < prev:
            raise error(f"fanout table is not monotonic at byte 0x{i:02x} ({n} < {prev})", at + 4 * i, kind)
        prev = n
    return fanout


def fanout_bucket(fanout: tuple[int, ...], first_byte: int) -> tuple[int, int]:
    """[lo, hi) of the names whose first byte is ``first_byte``."""
    return (fanout[first_byte - 1] if first_byte else 0), fanout[first_byte]


class MappedFile:
    path: str
    _map: mmap.mmap | None = None
    _open_files: OpenFiles | None = None

    def _error(self, message: str, offset: int | None, kind: str) -> Exception:
        raise NotImplementedError

    def _load(self) -> None:
        """Map and parse the file (subclasses: through ``_map_checked``)."""
        raise NotImplementedError

    @property
    def map(self) -> mmap.mmap:
        """The mapping, made (and the file checked) on first use."""
        if self._map is None:
            self._load()
        if self._map is None:  # _load raises rather than leave it unmapped
            raise self._error("file is not mapped", None, "unmapped")
        return self._map

    def _map_checked(self, check: Callable[[mmap.mmap, int], None], what: str, kind: str) -> mmap.mmap:
        """Map the file, let ``check(map, size)`` parse or reject it (it raises
        the subclass's error), keep the map and register it with the LRU.
        Unreadable and empty files are ``<kind>-unreadable`` and
        ``<kind>-truncated`` errors naming the file as ``what``."""
        before = file_identity(self.path)
        try:
            m, size = map_readonly(self.path, self._open_files)
        except OSError as e:
            raise self._error(f"cannot read {what}: {e.strerror}", None, f"{kind}-unreadable") from e
        if m is None:
            self._raise_if_changed(before, 0, what, kind)
            raise self._error(f"{what} is empty", 0, f"{kind}-truncated")
        try:
            check(m, size)
        except Exception as e:
            m.close()
            if not isinstance(e, OSError | MemoryError):
                self._raise_if_changed(before, size, what, kind)
            raise
        self._map = m
        if self._open_files is not None:
            self._open_files.opened(self)
        return m

    def _raise_if_changed(self, before: FileIdentity | None, size: int, what: str, kind: str) -> None:
        """After a file failed its checks: if it is not the file that was
        mapped any more (gone, replaced, grown or shrunk: someone is writing
        it or a repack swapped it), raise ``<kind>-changed`` — the file
        changed under us, which says nothing about damage."""
        after = file_identity(self.path)
        if before is not None and after == before and after.size == size:
            return
        now = "is gone" if after is None else "changed"
        raise self._error(
            f"{what} {now} while it was being read (a concurrent writer or repack)", None, f"{kind}-changed"
        )

    @property
    def is_open(self) -> bool:
        return self._map is not None

    def release_pages(self, start: int = 0, length: int | None = None) -> bool:
        """Let the kernel take back the mapping's pages from ``start`` (a page
        boundary) for ``length`` bytes, or to the end when ``length`` is None.  A
        read-only file mapping: they stay in the page cache, and a later read
        maps them again.  A walk over a whole pack otherwise keeps every page
        it touched resident in this process.  False where that cannot be done
        (no MADV_DONTNEED on this system, or a stand-in without madvise), so a
        caller going through a file can stop asking."""
        m = self._map
        release = getattr(mmap, "MADV_DONTNEED", None)
        if m is None or release is None or not hasattr(m, "madvise"):
            return False
        try:
            # madvise's length 0 means no bytes, not "to the end"
            m.madvise(release, start, len(m) - start if length is None else length)
        except (OSError, ValueError):
            return False
        return True

    def close(self) -> None:
        m = self._map
        if m is None:
            return
        with contextlib.suppress(BufferError):  # a view is still exported; the GC will unmap
            m.close()
        self._map = None
        self._forget_mapping()
        if self._open_files is not None:
            self._open_files.closed(self)

    def _forget_mapping(self) -> None:
        """Drop anything bound to the old mapping (subclasses)."""


class FanoutFile(MappedFile):
    """A mapped table of sorted names behind a fanout (a pack index, one
    multi-pack-index layer), mapped and checked on first use."""

    fanout: tuple[int, ...] = ()
    _size = 0

    def open(self) -> Self:
        if self._map is None:
            self._load()
        return self

    @property
    def size(self) -> int:
        self.open()
        return self._size

    def bucket(self, first_byte: int) -> tuple[int, int]:
        """[lo, hi) of the names whose first byte is ``first_byte``."""
        self.open()
        return fanout_bucket(self.fanout, first_byte)
