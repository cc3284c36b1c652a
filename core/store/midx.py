"""The multi-pack-index: one sorted table of the objects of many packs.

File layout (gitformat-pack, "multi-pack-index (MIDX) files"):

* header, 12 bytes: ``MIDX``, version (1), hash version (1 SHA-1,
  2 SHA-256), number of chunks, number of base files, number of packs
  (4 bytes);
* a chunk table (packscope.core.store.chunk_file);
* chunks: PNAM (the packs' ``.idx`` names, NUL-terminated, padded to 4
  bytes), OIDF (fanout), OIDL (sorted ids), OOFF (per object: pack-int-id
  and a 4-byte offset), optional LOFF (8-byte large offsets); RIDX, BTMP
  and others are skipped;
* the checksum of everything before it.

Incremental chains (git 2.47+) live in ``objects/pack/multi-pack-index.d``:
``multi-pack-index-chain`` lists layer hashes, oldest first, and each
``multi-pack-index-{hash}.midx`` is a complete MIDX file over its own packs.
Positions and pack-int-ids are global: a layer's local position ``i`` is
``i + objects in the layers below``, likewise for packs.

Like packscope.core.store.pack_index, files are memory-mapped read-only on first use and
validated then (header, chunk table, chunk sizes against counts, fanout);
a damaged file raises BadMultiPackIndexError naming the path and offset.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator
from typing import TYPE_CHECKING

from packscope.core.errors import BadMultiPackIndexError
from packscope.core.oid import ObjectFormat, Prefix
from packscope.core.store.chunk_file import (
    HASH_VERSIONS,
    ChunkTable,
    git_chunk_table,
    read_chain,
    read_chunk_table,
    read_header,
)
from packscope.core.store.mapped_file import FanoutFile, read_fanout
from packscope.core.store.search import NameAt, Steps, search_function, traced_search

if TYPE_CHECKING:
    from packscope.core.trace import SearchPath

MIDX_SIGNATURE = b"MIDX"
HEADER_SIZE = 12
PAGE_SIZE = 4096
# Version 1 is what git 2.39 writes.  Recent git also writes version 2 (MIDX
# compaction needs it); it reads the same way except that pack names need not
# be in name order.  The header's base-file count is written as 0 even in
# incremental layers, so it is recorded but not checked.
SUPPORTED_VERSIONS = (1, 2)
LARGE_OFFSET_FLAG = 0x80000000
CHAIN_DIR = "multi-pack-index.d"
CHAIN_FILE = "multi-pack-index-chain"

_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
_OOFF = struct.Struct(">II")


# The chunks git 2.39 dies without (load_multi_pack_index), in the order it asks.
GIT_REQUIRED_CHUNKS = (
    (b"PNAM", "pack-name"),
    (b"OIDF", "OID fanout"),
    (b"OIDL", "OID lookup"),
    (b"OOFF", "object offsets"),
)


def git_dies_loading(data: bytes, fmt: ObjectFormat) -> str | None:
    """What git 2.39 dies with ("fatal: ...") when it loads this
    multi-pack-index, as every command that reads objects does; None when it
    loads the file, or reports it and reads without it (too small, another
    hash, a chunk table it refuses).  packscope refuses a damaged file and
    reads the packs; this says where git instead stops (exit 128)."""
    if len(data) < HEADER_SIZE + fmt.rawsz:
        return None
    if data[:4] != MIDX_SIGNATURE:
        found, wanted = int.from_bytes(data[:4], "big"), int.from_bytes(MIDX_SIGNATURE, "big")
        return f"multi-pack-index signature 0x{found:08x} does not match signature 0x{wanted:08x}"
    if data[4] not in SUPPORTED_VERSIONS:  # (2.39 knows version 1 only; newer git writes and reads 2)
        return f"multi-pack-index version {data[4]} not recognized"
    if data[5] != HASH_VERSIONS[fmt.name]:
        return None
    chunks = git_chunk_table(data, HEADER_SIZE, data[6], fmt.rawsz)
    if chunks is None:
        return None
    for chunk_id, what in GIT_REQUIRED_CHUNKS:
        if chunk_id not in chunks:
            return f"multi-pack-index missing required {what} chunk"
    # git takes the pack names as C strings one after another, unbounded by
    # the chunk, and dies unless each sorts after the one before
    at, prev = chunks[b"PNAM"][0], b""
    for i in range(_U32.unpack_from(data, 8)[0]):
        nul = data.find(b"\0", at)
        if nul < 0:
            return "multi-pack-index pack names run past the end of the file"
        name = data[at:nul]
        if i and name <= prev:
            shown = prev.decode("utf-8", "replace"), name.decode("utf-8", "replace")
            return f"multi-pack-index pack names out of order: '{shown[0]}' before '{shown[1]}'"
        at, prev = nul + 1, name
    return None


class MidxLayer(FanoutFile):
    """One multi-pack-index file; positions and pack ids are local to it."""

    def __init__(self, path: str, fmt: ObjectFormat, *, object_base: int = 0, pack_base: int = 0) -> None:
        self.path = str(path)
        self.fmt = fmt
        self.name = os.path.basename(self.path)
        self.object_base = object_base  # objects in the layers below this one
        self.pack_base = pack_base
        self._map: mmap.mmap | None = None
        self.version = 0
        self.num_packs = 0
        self.num_base_files = 0
        self.num_objects = 0
        self.fanout: tuple[int, ...] = ()
        self.pack_names: list[str] = []
        self.chunks: ChunkTable | None = None

    # --- opening ---------------------------------------------------------

    def _error(
        self, message: str, offset: int | None = None, kind: str = "bad-multi-pack-index"
    ) -> BadMultiPackIndexError:
        return BadMultiPackIndexError(message, path=self.path, offset=offset, kind=kind)

    def _load(self) -> None:
        self._map_checked(self._parse, "multi-pack-index", "midx")

    def _parse(self, m: mmap.mmap, size: int) -> None:
        rawsz = self.fmt.rawsz
        version, nchunks, nbase = read_header(
            m,
            size,
            signature=MIDX_SIGNATURE,
            header_size=HEADER_SIZE,
            versions=SUPPORTED_VERSIONS,
            fmt=self.fmt,
            error=self._error,
            what="multi-pack-index",
            kind="midx",
        )
        self.version, self.num_base_files = version, nbase
        self.num_packs = _U32.unpack_from(m, 8)[0]
        trailer = size - rawsz
        chunks = read_chunk_table(
            m, HEADER_SIZE, nchunks, end=trailer, path=self.path, error_cls=BadMultiPackIndexError, kind="midx"
        )
        oidf = chunks.require(b"OIDF")
        chunks.expect_size(b"OIDF", 1024, "a 256-entry fanout")
        fanout = read_fanout(m, oidf.offset, self._error, "midx-fanout")
        nr = fanout[255]
        oidl = chunks.require(b"OIDL")
        chunks.expect_size(b"OIDL", nr * rawsz, f"{nr} object ids")
        ooff = chunks.require(b"OOFF")
        chunks.expect_size(b"OOFF", nr * 8, f"{nr} object offsets")
        loff = chunks.expect_rows(b"LOFF", 8)
        pnam = chunks.require(b"PNAM")
        self.pack_names = self._parse_pack_names(m, pnam.offset, pnam.size)
        self.fanout, self.num_objects, self.chunks = fanout, nr, chunks
        self._names_at = oidl.offset
        self._ooff_at = ooff.offset
        self._loff_at = loff.offset if loff is not None else None
        self._nlarge = loff.size // 8 if loff is not None else 0
        self._trailer_at = trailer
        self._size = size

    def _parse_pack_names(self, m: mmap.mmap, at: int, size: int) -> list[str]:
        names: list[str] = []
        pos, end = at, at + size
        for k in range(self.num_packs):
            nul = m.find(b"\0", pos, end)
            if nul < 0 or nul == pos:
                raise self._error(
                    f"pack-name chunk holds {k} names, the header promises {self.num_packs}", pos, "midx-pack-names"
                )
            name = bytes(m[pos:nul]).decode("utf-8", "surrogateescape")
            # git 2.39 refuses unsorted names (it looks packs up by bisection);
            # only version 1 promises the order.
            if self.version == 1 and names and names[-1] >= name:
                raise self._error(f"pack names out of order: {names[-1]!r} before {name!r}", pos, "midx-pack-names")
            names.append(name)
            pos = nul + 1
        if m[pos:end].strip(b"\0"):
            raise self._error("unexpected bytes after the last pack name", pos, "midx-pack-names")
        return names

    # --- accessors -------------------------------------------------------

    def name_accessor(self) -> NameAt:
        m = self.map
        base, rawsz = self._names_at, self.fmt.rawsz
        return lambda i: m[base + i * rawsz : base + i * rawsz + rawsz]

    def name_at(self, i: int) -> bytes:
        at = self._names_at + i * self.fmt.rawsz
        return self.map[at : at + self.fmt.rawsz]

    def page_of(self, i: int) -> int:
        return (self._names_at + i * self.fmt.rawsz) // PAGE_SIZE

    def entry_at(self, i: int) -> tuple[int, int]:
        """(local pack-int-id, offset in that pack) of object ``i``."""
        m = self.map
        at = self._ooff_at + 8 * i
        pack, off = _OOFF.unpack_from(m, at)
        if pack >= self.num_packs:
            raise self._error(f"object {i} names pack {pack}, but there are {self.num_packs}", at, "midx-pack-id")
        # The top bit means "see LOFF" only when that chunk exists: without it,
        # offsets below 4 GiB are stored whole (the format says "as in IDX v1").
        if off & LARGE_OFFSET_FLAG and self._loff_at is not None:
            k = off & ~LARGE_OFFSET_FLAG
            if k >= self._nlarge:
                raise self._error(
                    f"offset of object {i} points past the large-offset table ({k} >= {self._nlarge})",
                    at + 4,
                    "midx-large-offset",
                )
            off = _U64.unpack_from(m, self._loff_at + 8 * k)[0]
        return pack, off

    @property
    def checksum(self) -> bytes:
        return self.map[self._trailer_at : self._size]

    def computed_checksum(self) -> bytes:
        h = self.fmt.new_hash()
        h.update(memoryview(self.map)[: self._trailer_at])
        return h.digest()

    def verify_checksum(self) -> None:
        if self.computed_checksum() != self.checksum:
            raise self._error(
                "multi-pack-index checksum does not match its contents", self._trailer_at, "midx-checksum"
            )

    def find(self, oid: bytes, algorithm: str = "binary") -> int:
        """Local position of ``oid`` or -1."""
        fan = self.fanout if self._map is not None else self.open().fanout
        b = oid[0]
        pos = search_function(algorithm)(self.name_accessor(), fan[b - 1] if b else 0, fan[b], self.num_objects, oid)
        return pos if pos >= 0 else -1


class MultiPackIndex:
    """A multi-pack-index: one file, or an incremental chain of layers.

    ``path`` is ``objects/pack/multi-pack-index``, or (for a chain) the
    ``multi-pack-index.d`` directory or its ``multi-pack-index-chain`` file.
    Every position and pack-int-id below is global across layers.
    """

    def __init__(self, path: str, fmt: ObjectFormat) -> None:
        self.path = str(path)
        self.fmt = fmt
        self.name = os.path.basename(self.path)
        self._layers: tuple[MidxLayer, ...] | None = None
        p = self.path
        if os.path.basename(p) == CHAIN_DIR:
            p = os.path.join(p, CHAIN_FILE)
        self.is_chain = os.path.basename(p) == CHAIN_FILE
        self._chain_path = p if self.is_chain else None

    @classmethod
    def discover(cls, pack_dir: str, fmt: ObjectFormat) -> MultiPackIndex | None:
        """The repository's multi-pack-index in ``objects/pack``, or None.

        The single file wins over a chain (git reads it first; the two only
        coexist briefly while git converts one into the other).
        """
        single = os.path.join(pack_dir, "multi-pack-index")
        if os.path.isfile(single):
            return cls(single, fmt)
        chain = os.path.join(pack_dir, CHAIN_DIR, CHAIN_FILE)
        if os.path.isfile(chain) and os.path.getsize(chain) > 0:  # git treats empty as absent
            return cls(chain, fmt)
        return None

    # --- opening ---------------------------------------------------------

    @property
    def is_open(self) -> bool:
        return self._layers is not None

    def open(self) -> MultiPackIndex:
        if self._layers is None:
            layers = self._chain_layers() if self.is_chain else (MidxLayer(self.path, self.fmt),)
            try:
                for layer in layers:
                    layer.open()
            except BadMultiPackIndexError:
                for layer in layers:
                    layer.close()
                raise
            self._layers = layers
            self._pack_names = [n for layer in layers for n in layer.pack_names]
            self._num_objects = sum(layer.num_objects for layer in layers)
            fan = [0] * 256
            for layer in layers:
                for i, n in enumerate(layer.fanout):
                    fan[i] += n
            self._fanout = tuple(fan)
        return self

    def _chain_layers(self) -> tuple[MidxLayer, ...]:
        path = self._chain_path
        if path is None:
            raise BadMultiPackIndexError("not a multi-pack-index chain", path=self.path, kind="midx-chain")
        layers: list[MidxLayer] = []
        objects = packs = 0
        try:
            for _, line in read_chain(path, self.fmt, BadMultiPackIndexError, "multi-pack-index", "midx"):
                layer_path = os.path.join(os.path.dirname(path), f"multi-pack-index-{line.decode()}.midx")
                layer = MidxLayer(layer_path, self.fmt, object_base=objects, pack_base=packs)
                layer.open()
                layers.append(layer)
                # A layer is named by its checksum; a mismatch means files were mixed up.
                if layer.checksum != bytes.fromhex(line.decode()):
                    raise BadMultiPackIndexError(
                        "layer's checksum does not match its name in the chain",
                        path=layer_path,
                        offset=layer.size - self.fmt.rawsz,
                        kind="midx-chain",
                    )
                objects += layer.num_objects
                packs += layer.num_packs
        except BadMultiPackIndexError:
            for layer in layers:
                layer.close()
            raise
        if not layers:
            raise BadMultiPackIndexError(
                "multi-pack-index chain lists no layers", path=path, offset=0, kind="midx-chain"
            )
        return tuple(layers)

    def close(self) -> None:
        if self._layers is not None:
            for layer in self._layers:
                layer.close()
            self._layers = None

    @property
    def layers(self) -> tuple[MidxLayer, ...]:
        """Base layer first (one layer for a single file)."""
        return self.open()._layers  # type: ignore[return-value]

    # --- accessors -------------------------------------------------------

    @property
    def pack_names(self) -> list[str]:
        """The ``.idx`` names as stored, indexed by global pack-int-id."""
        self.open()
        return self._pack_names

    @property
    def num_objects(self) -> int:
        self.open()
        return self._num_objects

    @property
    def num_packs(self) -> int:
        return len(self.pack_names)

    @property
    def fanout(self) -> tuple[int, ...]:
        """Cumulative object counts by first byte (summed over layers)."""
        self.open()
        return self._fanout

    def _layer_of(self, i: int) -> MidxLayer:
        layers = self.layers
        if len(layers) == 1:
            return layers[0]
        for layer in layers:
            if i < layer.object_base + layer.num_objects:
                return layer
        raise IndexError(i)

    def name_at(self, i: int) -> bytes:
        layer = self._layer_of(i)
        return layer.name_at(i - layer.object_base)

    def name_accessor(self) -> NameAt:
        layers = self.layers
        if len(layers) == 1:
            return layers[0].name_accessor()
        return self.name_at

    def page_of(self, i: int) -> int:
        """The 4 KiB page of its layer's file that holds name ``i``."""
        layer = self._layer_of(i)
        return layer.page_of(i - layer.object_base)

    def bucket(self, first_byte: int) -> tuple[int, int]:
        """Positions [lo, hi) of the names starting with ``first_byte``.

        In a chain each layer has its own bucket; this is the tip layer's
        (searched first), and ``layer_buckets`` gives them all.
        """
        return self.layer_buckets(first_byte)[0]

    def layer_buckets(self, first_byte: int) -> list[tuple[int, int]]:
        """Every layer's bucket in global positions, tip layer first."""
        out = []
        for layer in reversed(self.layers):
            lo, hi = layer.bucket(first_byte)
            out.append((lo + layer.object_base, hi + layer.object_base))
        return out

    def entry_at(self, i: int) -> tuple[int, int]:
        """(global pack-int-id, offset in that pack) of object ``i``."""
        layer = self._layer_of(i)
        pack, off = layer.entry_at(i - layer.object_base)
        return pack + layer.pack_base, off

    def pack_name_at(self, i: int) -> str:
        return self.pack_names[self.entry_at(i)[0]]

    # --- search ----------------------------------------------------------

    def find(self, oid: bytes, algorithm: str = "binary") -> int:
        """Global position of ``oid`` or -1; the untraced path."""
        layers = self._layers if self._layers is not None else self.layers
        # Tip first, as git does; layers hold disjoint objects anyway.
        for layer in reversed(layers):
            i = layer.find(oid, algorithm)
            if i >= 0:
                return i + layer.object_base
        return -1

    def find_traced(self, oid: bytes, algorithm: str = "binary") -> SearchPath:
        """The search that found ``oid``, or (when absent) the last one run."""
        paths = self.find_traced_layers(oid, algorithm)
        for p in paths:
            if p.found is not None:
                return p
        return paths[-1]

    def find_traced_layers(self, oid: bytes, algorithm: str = "binary") -> list[SearchPath]:
        """One SearchPath per layer searched (tip first), global positions."""
        out = []
        name_at = self.name_accessor()
        for layer in reversed(self.layers):
            lo, hi = layer.bucket(oid[0])
            base = layer.object_base
            # nr bounds the layer, so interpolation never reads the next layer's names.
            p = traced_search(algorithm, name_at, lo + base, hi + base, base + layer.num_objects, oid, self.page_of)
            out.append(p)
            if p.found is not None:
                break
        return out

    def offset_of(self, oid: bytes, algorithm: str = "binary") -> tuple[int, int] | None:
        i = self.find(oid, algorithm)
        return None if i < 0 else self.entry_at(i)

    def find_prefix(
        self, prefix: Prefix, algorithm: str = "binary", limit: int | None = None, steps: Steps | None = None
    ) -> list[int]:
        """Positions of every name starting with ``prefix``, in name order."""
        found: list[tuple[bytes, int]] = []
        for layer in reversed(self.layers):
            lo, hi = layer.bucket(prefix.first_byte)
            name_at = layer.name_accessor()
            pos = search_function(algorithm)(name_at, lo, hi, layer.num_objects, prefix.low, steps)
            i = pos if pos >= 0 else -pos - 1
            taken = 0
            # Each layer is sorted, so its first ``limit`` matches suffice.
            while i < hi and (limit is None or taken < limit):
                name = name_at(i)
                if name > prefix.high:
                    break
                found.append((name, i + layer.object_base))
                taken += 1
                i += 1
        found.sort()
        out = [i for _, i in found]
        return out if limit is None else out[:limit]

    def names(self) -> Iterator[bytes]:
        for layer in self.layers:
            name_at = layer.name_accessor()
            for i in range(layer.num_objects):
                yield name_at(i)

    def entries(self) -> Iterator[tuple[bytes, int, int]]:
        """(name, global pack-int-id, offset) for every object, in position order."""
        for layer in self.layers:
            name_at = layer.name_accessor()
            for i in range(layer.num_objects):
                pack, off = layer.entry_at(i)
                yield name_at(i), pack + layer.pack_base, off

    def verify_checksum(self) -> None:
        """Every layer's trailing checksum; BadMultiPackIndexError on the first mismatch."""
        for layer in self.layers:
            layer.verify_checksum()
