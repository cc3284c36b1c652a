"""Pack index files (.idx), versions 1 and 2, SHA-1 and SHA-256.

Layout (gitformat-pack):

* v1: fanout[256] (4-byte big-endian cumulative counts), then per object
  a 4-byte offset followed by the name; then the pack's and the index's
  checksums.
* v2: magic ``\\377tOc``, version 2, fanout[256], names, CRC32s, 4-byte
  offsets (MSB set: index into the 8-byte large-offset table), large
  offsets, then the two checksums.

The file is memory-mapped read-only on first use.  Opening validates magic,
version, a monotonic fanout and that the file's size matches the object
count, so a truncated or empty file is a typed error naming it.

Given an ``OpenFiles`` (packscope.core.store.cache), the mapping joins the store's open-file
LRU: it may be closed while the index is least recently used, and is
reopened on demand.
"""

from __future__ import annotations

import mmap
import os
import struct
import sys
from array import array
from collections.abc import Iterator
from typing import TYPE_CHECKING

from packscope.core import native
from packscope.core.errors import BadPackIndexError
from packscope.core.oid import ObjectFormat, Prefix
from packscope.core.store.cache import OpenFiles
from packscope.core.store.mapped_file import FanoutFile, read_fanout
from packscope.core.store.prefix_column import build_prefix_column, prefix_column_search
from packscope.core.store.search import SEARCHES as _SEARCHES
from packscope.core.store.search import NameAt, Steps, search_function, traced_search

if TYPE_CHECKING:
    from packscope.core.trace import SearchPath

IDX_MAGIC = b"\377tOc"
# The compiled bucket search (``idx_find`` of core/native.py's backend):
# what binary_search answers over the same bucket, or None when it doubts
# the table.
PAGE_SIZE = 4096
_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")


class PackIndex(FanoutFile):
    """A read-only view of one .idx file."""

    def __init__(self, path: str, fmt: ObjectFormat, *, open_files: OpenFiles | None = None) -> None:
        self.path = str(path)
        self.fmt = fmt
        self.name = os.path.basename(self.path)
        self._map: mmap.mmap | None = None
        self._cached_accessor: NameAt | None = None  # name_at bound to the current mapping
        self._open_files = open_files
        # Untraced binary lookups switch to a prefix column (packscope.core.store.prefix_column)
        # once this many have been asked: set at open from the object count,
        # None turns the column off (benchmarks of the plain searches).
        self.prefix_column_after: int | None = -1
        self._lookups = 0
        self._prefix_column: array[int] | None = None
        # Untraced binary lookups run compiled when the module is built
        # (False: the pure searches, for tests and benchmarks of them).
        self.compiled_search = native.backend is not None
        self._fan_at = 0
        self.version = 0
        self.fanout: tuple[int, ...] = ()
        self.num_objects = 0

    # --- opening ---------------------------------------------------------

    def _forget_mapping(self) -> None:
        self._cached_accessor = None

    def _error(self, message: str, offset: int | None = None, kind: str = "bad-pack-index") -> BadPackIndexError:
        return BadPackIndexError(message, path=self.path, offset=offset, kind=kind)

    def _load(self) -> None:
        self._map_checked(self._parse, "pack index", "idx")

    def _parse(self, m: mmap.mmap, size: int) -> None:
        rawsz = self.fmt.rawsz
        if size >= 8 and m[:4] == IDX_MAGIC:
            version = _U32.unpack_from(m, 4)[0]
            if version != 2:
                raise self._error(f"unsupported pack index version {version}", 4, "idx-version")
            fan_at = 8
        else:
            version = 1
            fan_at = 0
        if size < fan_at + 1024 + 2 * rawsz:
            raise self._error(
                f"pack index is truncated ({size} bytes, too short for a fanout table)", size, "idx-truncated"
            )
        fanout = read_fanout(m, fan_at, self._error, "idx-fanout")
        self._fan_at = fan_at
        nr = fanout[255]
        self.version, self.fanout, self.num_objects = version, fanout, nr
        if version == 1:
            self._names_at = fan_at + 1024 + 4
            self._stride = rawsz + 4
            expected = 1024 + nr * (rawsz + 4) + 2 * rawsz
            if size != expected:
                raise self._error(
                    f"pack index size {size} does not match its {nr} objects (expected {expected})",
                    min(size, expected),
                    "idx-truncated" if size < expected else "idx-size",
                )
            self._crc_at = None
            self._off_at = fan_at + 1024
            self._large_at = 0  # v1 has no large-offset table (and _nlarge = 0)
            self._nlarge = 0
        else:
            self._names_at = fan_at + 1024
            self._stride = rawsz
            self._crc_at = self._names_at + nr * rawsz
            self._off_at = self._crc_at + nr * 4
            self._large_at = self._off_at + nr * 4
            minimum = self._large_at + 2 * rawsz
            extra = size - minimum
            # Large offsets: at most one per object beyond the first 2 GiB.
            if extra < 0 or extra % 8 or (nr and extra // 8 > nr - 1) or (not nr and extra):
                raise self._error(
                    f"pack index size {size} does not match its {nr} objects (at least {minimum})",
                    min(size, minimum),
                    "idx-truncated" if extra < 0 else "idx-size",
                )
            self._nlarge = extra // 8
        self._trailer_at = size - 2 * rawsz
        self._size = size

    # --- accessors -------------------------------------------------------

    def name_accessor(self) -> NameAt:
        """A fast ``name_at(i)`` bound to the current mapping."""
        m = self.map
        base, stride, rawsz = self._names_at, self._stride, self.fmt.rawsz
        if stride == rawsz:
            return lambda i: m[base + i * rawsz : base + i * rawsz + rawsz]
        return lambda i: m[base + i * stride : base + i * stride + rawsz]

    def name_at(self, i: int) -> bytes:
        m = self.map
        at = self._names_at + i * self._stride
        return m[at : at + self.fmt.rawsz]

    def page_of(self, i: int) -> int:
        """The 4 KiB page of the file that holds name ``i``."""
        return (self._names_at + i * self._stride) // PAGE_SIZE

    def offset_at(self, i: int) -> int:
        m = self.map
        if self.version == 1:
            return int(_U32.unpack_from(m, self._off_at + i * self._stride)[0])
        off: int = _U32.unpack_from(m, self._off_at + 4 * i)[0]
        if off & 0x80000000:
            k = off & 0x7FFFFFFF
            if k >= self._nlarge:
                raise self._error(
                    f"offset of object {i} points past the large-offset table ({k} >= {self._nlarge})",
                    self._off_at + 4 * i,
                    "idx-large-offset",
                )
            return int(_U64.unpack_from(m, self._large_at + 8 * k)[0])
        return off

    def offsets(self) -> array[int]:
        """Every object's pack offset, in name order, as one array — read in
        bulk, because a million ``offset_at`` calls take seconds."""
        m = self.map
        n = self.num_objects
        if self.version == 1:
            raw = array(
                "I",
                b"".join(m[self._off_at + i * self._stride : self._off_at + i * self._stride + 4] for i in range(n)),
            )
        else:
            raw = array("I", m[self._off_at : self._off_at + 4 * n])
        if sys.byteorder == "little":
            raw.byteswap()
        out = array("Q", raw)
        if self.version == 2 and n and max(raw) & 0x80000000:
            for i, off in enumerate(raw):
                if off & 0x80000000:
                    out[i] = self.offset_at(i)
        return out

    def crc_at(self, i: int) -> int | None:
        self.open()
        if self._crc_at is None:
            return None
        return int(_U32.unpack_from(self.map, self._crc_at + 4 * i)[0])

    @property
    def pack_checksum(self) -> bytes:
        return self.map[self._trailer_at : self._trailer_at + self.fmt.rawsz]

    @property
    def idx_checksum(self) -> bytes:
        return self.map[self._trailer_at + self.fmt.rawsz : self._size]

    def computed_checksum(self) -> bytes:
        h = self.fmt.new_hash()
        h.update(memoryview(self.map)[: self._trailer_at + self.fmt.rawsz])
        return h.digest()

    def verify_checksum(self) -> None:
        if self.computed_checksum() != self.idx_checksum:
            raise self._error(
                "pack index checksum does not match its contents", self._trailer_at + self.fmt.rawsz, "idx-checksum"
            )

    def _iteration_accessor(self) -> NameAt:
        # A bound accessor holds the current mapping, which the open-file LRU
        # may close while a caller is between two items: under an LRU, go
        # through name_at, which reopens the file when needed.
        self.open()
        return self.name_accessor() if self._open_files is None else self.name_at

    def names(self) -> Iterator[bytes]:
        name_at = self._iteration_accessor()
        for i in range(self.num_objects):
            yield name_at(i)

    def entries(self) -> Iterator[tuple[bytes, int]]:
        """(name, offset) for every object, in name order."""
        name_at = self._iteration_accessor()
        for i in range(self.num_objects):
            yield name_at(i), self.offset_at(i)

    # --- search ----------------------------------------------------------

    def search_table(self) -> tuple[mmap.mmap, int, int, int, int, int, bool] | None:
        """The index as the compiled batch lookup reads it (core/_native.c
        idx_find_many): mapping, fanout, names and their stride, 4-byte
        offsets and theirs, and whether a set high bit means a large offset
        (version 2); None when the compiled searches are off for it."""
        if not self.compiled_search:
            return None
        m = self.map
        v1 = self.version == 1
        return m, self._fan_at, self._names_at, self._stride, self._off_at, self._stride if v1 else 4, not v1

    def find(self, oid: bytes, algorithm: str = "binary") -> int:
        """Position of ``oid`` or -1; the untraced path."""
        compiled = native.backend
        if (
            compiled is not None
            and algorithm == "binary"
            and self.compiled_search
            and self.prefix_column_after is not None
        ):
            m = self._map if self._map is not None else self.map
            pos = compiled.idx_find(m, self._fan_at, self._names_at, self._stride, oid)
            if pos is not None:
                if pos < 0:
                    return -1
                if self._open_files is not None:
                    self._open_files.touch(self)
                return int(pos)
        name_at = self._cached_accessor
        if name_at is None:
            self.open()
            name_at = self._cached_accessor = self.name_accessor()
        fan = self.fanout
        b = oid[0]
        column = self._prefix_column
        if column is None and algorithm == "binary" and self.prefix_column_after is not None:
            self._lookups += 1
            if self._lookups > self._column_threshold():
                column = self._build_prefix_column()
        if column is not None and algorithm == "binary":
            pos = prefix_column_search(column, name_at, fan[b - 1] if b else 0, fan[b], oid)
        else:
            pos = _SEARCHES[algorithm](name_at, fan[b - 1] if b else 0, fan[b], self.num_objects, oid)
        if pos < 0:
            return -1
        if self._open_files is not None:  # recency counts hits only: cheap misses across many packs
            self._open_files.touch(self)
        return pos

    def _column_threshold(self) -> int:
        if self.prefix_column_after is None or self.prefix_column_after >= 0:
            return self.prefix_column_after if self.prefix_column_after is not None else 1 << 62
        # Building reads every name once (~1 ms per 100k objects); a plain
        # search costs ~5 µs more than a column lookup, so the column pays
        # for itself after about num_objects/256 lookups.
        return 64 + self.num_objects // 256

    def _build_prefix_column(self) -> array[int]:
        column = self._prefix_column = build_prefix_column(self.map, self._names_at, self.num_objects, self._stride)
        return column

    def find_traced(self, oid: bytes, algorithm: str = "binary") -> SearchPath:
        lo, hi = self.bucket(oid[0])
        return traced_search(algorithm, self.name_accessor(), lo, hi, self.num_objects, oid, self.page_of)

    def offset_of(self, oid: bytes, algorithm: str = "binary") -> int | None:
        i = self.find(oid, algorithm)
        return None if i < 0 else self.offset_at(i)

    def find_prefix(
        self, prefix: Prefix, algorithm: str = "binary", limit: int | None = None, steps: Steps | None = None
    ) -> list[int]:
        """Positions of every name starting with ``prefix`` (at most ``limit``).
        Untraced, the first is found by the compiled search (``idx_find``
        answers where an absent id would go: a ``%h`` per commit of a log
        asks this)."""
        lo, hi = self.bucket(prefix.first_byte)
        name_at = self.name_accessor()
        compiled = native.backend
        pos = None
        if (
            compiled is not None
            and steps is None
            and algorithm == "binary"
            and self.compiled_search
            and self.prefix_column_after is not None
        ):
            pos = compiled.idx_find(
                self._map if self._map is not None else self.map, self._fan_at, self._names_at, self._stride, prefix.low
            )
        if pos is None:
            pos = search_function(algorithm)(name_at, lo, hi, self.num_objects, prefix.low, steps)
        i = pos if pos >= 0 else -pos - 1
        out = []
        while i < hi and name_at(i) <= prefix.high:
            out.append(i)
            if limit is not None and len(out) >= limit:
                break
            i += 1
        return out
