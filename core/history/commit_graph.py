"""Commit-graph files: ``objects/info/commit-graph`` and split chains.

File layout (gitformat-commit-graph): header ``CGPH``, version 1, hash
version (1 SHA-1, 2 SHA-256), number of chunks, number of base graphs;
a chunk table (packscope.core.store.chunk_file); chunks; the checksum.  Chunks read here:

* OIDF fanout, OIDL sorted commit ids;
* CDAT, per commit: tree id, parent 1, parent 2 (4-byte graph positions;
  0x70000000 = none; parent 2 with the top bit set indexes EDGE, the list
  of the remaining parents whose last entry has the top bit set), then
  8 bytes: 30-bit topological level and a 34-bit commit time;
* GDA2, corrected-commit-date offsets (top bit: index into GDO2, 8-byte
  overflow values); the older GDAT is ignored, as git ignores it;
* BIDX/BDAT changed-path Bloom filters (packscope.core.history.bloom);
* BASE, the hashes of the layers below, in a split chain.

A split chain is ``objects/info/commit-graphs/commit-graph-chain`` (layer
hashes, base first) plus ``graph-{hash}.graph`` files.  Positions are
global: a layer's commit ``i`` is at ``i + commits in the layers below``,
and parent positions in any layer use the same numbering.

git reads the single file when it exists and the chain only otherwise;
so does :meth:`CommitGraph.open`.  A chain that breaks partway (a layer
missing, unreadable, or not matching the layers below it) keeps its valid
base layers, as git keeps them for walks; why the rest was dropped is
reported to the caller.  Checking a graph against the object store is
fsck's business (packscope.core.fsck.commit_graph_checks).
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator
from typing import NamedTuple

from packscope.core.errors import BadCommitGraphError
from packscope.core.history.bloom import BloomFilter, BloomSettings
from packscope.core.oid import ObjectFormat
from packscope.core.store.chunk_file import Chunk, ChunkTable, read_chain, read_chunk_table, read_header
from packscope.core.store.mapped_file import MappedFile, read_fanout
from packscope.core.store.search import binary_search

SIGNATURE = b"CGPH"
HEADER_SIZE = 8
PARENT_NONE = 0x70000000
EDGE_FLAG = 0x80000000  # parent 2 indexes EDGE / last EDGE entry
OVERFLOW_FLAG = 0x80000000  # GDA2 value indexes GDO2
BLOOM_HEADER = 12
BLOOM_VERSIONS = (1, 2)
DAMAGED_LAYER = "commit-graph-chain-damaged"  # a chain layer git loads, then fails to verify

_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
_CDAT_TAIL = struct.Struct(">IIII")  # parent1, parent2, level|time-high, time-low
_BDAT_HEADER = struct.Struct(">III")


class CommitRecord(NamedTuple):
    """What the graph says about one commit (a NamedTuple: a log's walk
    imports no ``dataclasses``, ~5 ms of its start-up with ``inspect``)."""

    position: int  # global position
    oid: bytes
    tree: bytes
    parents: tuple[bytes, ...]
    parent_positions: tuple[int, ...]
    commit_time: int
    generation: int  # corrected commit date with GDA2 in every layer, else topo_level
    topo_level: int


class GraphLayer(MappedFile):
    """One commit-graph file (the single file or one layer of a chain)."""

    def __init__(self, path: str, fmt: ObjectFormat, *, commit_base: int = 0, index: int = 0) -> None:
        self.path = str(path)
        self.fmt = fmt
        self.name = os.path.basename(self.path)
        self.commit_base = commit_base  # commits in the layers below
        self.index = index  # 0 for the base
        self._map: mmap.mmap | None = None
        self._load()

    def _error(
        self, message: str, offset: int | None = None, kind: str = "bad-commit-graph", remedy: str | None = None
    ) -> BadCommitGraphError:
        return BadCommitGraphError(message, path=self.path, offset=offset, kind=kind, remedy=remedy)

    def _load(self) -> None:
        self._map_checked(self._parse, "commit-graph", "commit-graph")

    def _parse(self, m: mmap.mmap, size: int) -> None:
        rawsz = self.fmt.rawsz
        _, nchunks, nbase = read_header(
            m,
            size,
            signature=SIGNATURE,
            header_size=HEADER_SIZE,
            versions=(1,),
            fmt=self.fmt,
            error=self._error,
            what="commit-graph",
            kind="commit-graph",
        )
        self.num_base_graphs = nbase
        self._trailer_at = size - rawsz
        self._size = size
        ch = read_chunk_table(
            m,
            HEADER_SIZE,
            nchunks,
            end=self._trailer_at,
            path=self.path,
            error_cls=BadCommitGraphError,
            kind="commit-graph",
        )
        self.chunks: ChunkTable = ch
        oidf = ch.require(b"OIDF")
        ch.expect_size(b"OIDF", 1024, "a 256-entry fanout")
        fanout = read_fanout(m, oidf.offset, self._error, "commit-graph-fanout")
        self.fanout = fanout
        nr = self.num_commits = fanout[255]
        self._oidl = ch.require(b"OIDL").offset
        ch.expect_size(b"OIDL", nr * rawsz, f"{nr} commit ids")
        self._cdat = ch.require(b"CDAT").offset
        self._cdat_width = rawsz + 16
        ch.expect_size(b"CDAT", nr * self._cdat_width, f"{nr} commits")
        self._edge = ch.expect_rows(b"EDGE", 4)
        gda2 = ch.expect_size(b"GDA2", nr * 4, f"{nr} generation offsets")
        self._gda2 = gda2.offset if gda2 is not None else None
        self._gdo2 = ch.expect_rows(b"GDO2", 8)
        base = ch.get(b"BASE")
        if nbase:
            if base is None:
                raise self._error(
                    f"header names {nbase} base graphs but there is no BASE chunk", 7, "commit-graph-missing-chunk"
                )
            ch.expect_size(b"BASE", nbase * rawsz, f"{nbase} base graph ids")
            self.base_hashes = tuple(
                bytes(m[base.offset + k * rawsz : base.offset + (k + 1) * rawsz]) for k in range(nbase)
            )
        else:
            self.base_hashes = ()
        self._parse_bloom(m, ch, nr)

    def _parse_bloom(self, m: mmap.mmap, ch: ChunkTable, nr: int) -> None:
        # Like git, Bloom data is optional and ignored when half of it is
        # missing or its version is unknown; bloom_unusable says why.
        self.bloom_settings: BloomSettings | None = None
        self.bloom_unusable: str | None = None
        self._bidx: int | None = None
        self._bdat: Chunk | None = None
        bidx, bdat = ch.get(b"BIDX"), ch.get(b"BDAT")
        if bidx is None and bdat is None:
            return
        if bidx is None or bdat is None:
            self.bloom_unusable = "BIDX without BDAT" if bdat is None else "BDAT without BIDX"
            return
        ch.expect_size(b"BIDX", nr * 4, f"{nr} Bloom filter ends")
        if bdat.size < BLOOM_HEADER:
            raise self._error(
                f"BDAT chunk is {bdat.size} bytes, shorter than its header", bdat.offset, "commit-graph-chunk-size"
            )
        version, num_hashes, bits = _BDAT_HEADER.unpack_from(m, bdat.offset)
        if version not in BLOOM_VERSIONS:
            self.bloom_unusable = f"unsupported Bloom filter version {version}"
            return
        if num_hashes == 0 or bits == 0:
            self.bloom_unusable = f"unusable Bloom settings ({num_hashes} hashes, {bits} bits per entry)"
            return
        self.bloom_settings = BloomSettings(version, num_hashes, bits)
        self._bidx = bidx.offset
        self._bdat = bdat

    # --- accessors -------------------------------------------------------

    @property
    def has_generation_data(self) -> bool:
        return self._gda2 is not None

    @property
    def has_bloom(self) -> bool:
        return self.bloom_settings is not None

    @property
    def checksum(self) -> bytes:
        return self.map[self._trailer_at : self._size]

    def name_at(self, i: int) -> bytes:
        at = self._oidl + i * self.fmt.rawsz
        return self.map[at : at + self.fmt.rawsz]

    def find(self, oid: bytes) -> int:
        """Local position of ``oid`` or -1."""
        m, base, rawsz = self.map, self._oidl, self.fmt.rawsz
        b = oid[0]
        fan = self.fanout
        pos = binary_search(
            lambda i: m[base + i * rawsz : base + i * rawsz + rawsz],
            fan[b - 1] if b else 0,
            fan[b],
            self.num_commits,
            oid,
        )
        return pos if pos >= 0 else -1

    def cdat(self, i: int) -> tuple[bytes, int, int, int, int]:
        """(tree, parent1, parent2, topo_level, commit_time) of local commit ``i``."""
        m = self.map
        at = self._cdat + i * self._cdat_width
        rawsz = self.fmt.rawsz
        p1, p2, word, low = _CDAT_TAIL.unpack_from(m, at + rawsz)
        return bytes(m[at : at + rawsz]), p1, p2, word >> 2, ((word & 3) << 32) | low

    def walk_table(self) -> tuple[mmap.mmap, int, int, int, int, int, int]:
        """This layer as the compiled walk loop reads it (core/native_c/graph_read.c):
        mapping, the OIDF, OIDL and CDAT offsets, the commits, the GDA2
        offset (-1: none) and GDO2's rows."""
        gdo2_rows = self._gdo2.size // 8 if self._gdo2 is not None else 0
        gda2 = self._gda2 if self._gda2 is not None else -1
        oidf = self.chunks.require(b"OIDF").offset
        return self.map, oidf, self._oidl, self._cdat, self.num_commits, gda2, gdo2_rows

    def bloom_table(self) -> tuple[mmap.mmap, int, int, int, int]:
        """The changed-path filters as the compiled Bloom check reads them
        (core/native_c/graph_plain.c): mapping, commits, BIDX offset (-1:
        no usable filters), the filters' data offset and size in bytes."""
        bidx, bdat = self._bidx, self._bdat
        if self.bloom_settings is None or bidx is None or bdat is None:
            return self.map, self.num_commits, -1, 0, 0
        return self.map, self.num_commits, bidx, bdat.offset + BLOOM_HEADER, bdat.size - BLOOM_HEADER

    def edge_table(self) -> tuple[int, int]:
        """EDGE as the compiled walk over positions reads it
        (core/native_c/graph_plain.c): its offset (-1: none) and entries."""
        e = self._edge
        return (e.offset, e.size // 4) if e is not None else (-1, 0)

    def edge_list(self, start: int, i: int) -> list[int]:
        """Parent positions from EDGE starting at ``start`` (for local commit ``i``)."""
        e = self._edge
        cdat_at = self._cdat + i * self._cdat_width + self.fmt.rawsz + 4
        if e is None:
            raise self._error(
                f"commit {i} has an octopus parent list but there is no EDGE chunk", cdat_at, "commit-graph-edge"
            )
        count = e.size // 4
        out = []
        k = start
        while True:
            if k >= count:
                raise self._error(
                    f"commit {i}'s parent list runs past the EDGE chunk (entry {k} of {count})",
                    cdat_at,
                    "commit-graph-edge",
                )
            v = _U32.unpack_from(self.map, e.offset + 4 * k)[0]
            out.append(v & ~EDGE_FLAG)
            if v & EDGE_FLAG:
                return out
            k += 1

    def generation_offset(self, i: int) -> int:
        m = self.map
        gda2 = self._gda2
        if gda2 is None:
            raise self._error("this commit-graph has no generation data (GDA2)", None, "commit-graph-generation")
        v: int = _U32.unpack_from(m, gda2 + 4 * i)[0]
        if not v & OVERFLOW_FLAG:
            return v
        k = v & ~OVERFLOW_FLAG
        g = self._gdo2
        if g is None or k >= g.size // 8:
            raise self._error(
                f"generation offset of commit {i} points past the GDO2 overflow table",
                gda2 + 4 * i,
                "commit-graph-generation",
            )
        return int(_U64.unpack_from(m, g.offset + 8 * k)[0])

    def bloom_bytes(self, i: int) -> bytes | None:
        """The raw filter of local commit ``i`` (b"" when not computed), None without Bloom data."""
        bidx, bdat = self._bidx, self._bdat
        if self.bloom_settings is None or bidx is None or bdat is None:
            return None
        m = self.map
        end = _U32.unpack_from(m, bidx + 4 * i)[0]
        start = _U32.unpack_from(m, bidx + 4 * (i - 1))[0] if i else 0
        limit = bdat.size - BLOOM_HEADER
        if start > end or end > limit:
            raise self._error(
                f"Bloom filter of commit {i} spans [{start}, {end}), outside BDAT's {limit} bytes",
                bidx + 4 * i,
                "commit-graph-bloom",
            )
        at = bdat.offset + BLOOM_HEADER
        return bytes(m[at + start : at + end])

    # --- for checkers: where things are, errors located in this file ----

    def problem(self, message: str, offset: int | None, kind: str) -> BadCommitGraphError:
        return self._error(message, offset, kind)

    @property
    def trailer_offset(self) -> int:
        return self._trailer_at

    def id_offset(self, i: int) -> int:
        """Where local commit ``i``'s id is stored (OIDL)."""
        return self._oidl + i * self.fmt.rawsz

    def record_offset(self, i: int) -> int:
        """Where local commit ``i``'s CDAT record starts."""
        return self._cdat + i * self._cdat_width

    def computed_checksum(self) -> bytes:
        h = self.fmt.new_hash()
        h.update(memoryview(self.map)[: self._trailer_at])
        return h.digest()


class CommitGraph:
    """The repository's commit-graph: a single file or a chain of layers."""

    def __init__(self, layers: tuple[GraphLayer, ...], path: str) -> None:
        self.layers = layers  # base first
        self.path = path  # the single file or the chain file
        self.num_commits = sum(layer.num_commits for layer in layers)
        # git uses corrected commit dates only when every layer has them:
        # mixing them with topological levels would break gen(c) > gen(parent).
        self.uses_corrected_dates = all(layer.has_generation_data for layer in layers)

    @property
    def is_chain(self) -> bool:
        return os.path.basename(self.path) == "commit-graph-chain"

    @classmethod
    def open(
        cls,
        objects_dir: str,
        fmt: ObjectFormat,
        *,
        alternates: tuple[str, ...] = (),
        problems: list[BadCommitGraphError] | None = None,
    ) -> CommitGraph | None:
        """The graph under ``objects_dir``, or None when there is none.

        A chain keeps its valid base layers, as git does: reading stops at
        the first layer that is missing, unreadable or does not fit the
        layers below it, and why is appended to ``problems``.  Layer files
        are looked for in ``objects_dir`` and then in ``alternates`` (other
        object directories), where ``commit-graph write --split`` in a
        borrowing repository leaves the lender's layers."""
        single = os.path.join(objects_dir, "info", "commit-graph")
        if os.path.isfile(single):
            return cls((GraphLayer(single, fmt),), single)
        chain = os.path.join(objects_dir, "info", "commit-graphs", "commit-graph-chain")
        if not os.path.isfile(chain):
            return None
        dirs = (objects_dir, *alternates)
        return cls._open_chain(chain, fmt, dirs, problems if problems is not None else [])

    @classmethod
    def _open_chain(
        cls, chain: str, fmt: ObjectFormat, dirs: tuple[str, ...], problems: list[BadCommitGraphError]
    ) -> CommitGraph | None:
        layers: list[GraphLayer] = []
        hashes: list[bytes] = []
        base = 0
        lines = read_chain(
            chain, fmt, BadCommitGraphError, "commit-graph", "commit-graph", "; the layers above it are not used"
        )
        try:
            for at, line in lines:
                layer = cls._chain_layer(chain, line, at, fmt, dirs, base, hashes)
                layers.append(layer)
                hashes.append(layer.checksum)
                base += layer.num_commits
        except BadCommitGraphError as e:  # a layer (or its line): the ones below it stay
            problems.append(e)
        if not layers:
            return None  # git treats an empty chain as no graph
        return cls(tuple(layers), chain)

    @staticmethod
    def _chain_layer(
        chain: str, line: bytes, at: int, fmt: ObjectFormat, dirs: tuple[str, ...], base: int, hashes: list[bytes]
    ) -> GraphLayer:
        """The layer a chain line names, checked against the layers below it."""
        name = f"graph-{line.decode()}.graph"
        paths = [os.path.join(d, "info", "commit-graphs", name) for d in dirs]
        path = next((p for p in paths if os.path.isfile(p)), None)
        if path is None:
            raise BadCommitGraphError(
                f"chain names layer {line.decode()} but {name} is missing; the layers above it are not used",
                path=chain,
                offset=at,
                kind="commit-graph-chain",
                remedy="Rewrite the chain: git commit-graph write --reachable --split (or delete commit-graphs/).",
            )
        n = len(hashes)
        try:
            layer = GraphLayer(path, fmt, commit_base=base, index=n)
        except BadCommitGraphError as e:
            # git 2.39 loads a layer whose fanout goes down, or whose header
            # counts base graphs its BASE chunk does not hold, and then its
            # verify fails: damage (fsck's bit 16), not a layer left out
            if e.kind == "commit-graph-fanout" or "base graph" in e.message:
                e.kind = DAMAGED_LAYER
            e.message = f"layer {n} of the chain is not used: {e.message}"
            raise
        if layer.checksum != bytes.fromhex(line.decode()):
            # a layer whose trailer no longer matches its own bytes is damaged
            # (git verifies it, and fails); one whole but misnamed is left out
            damaged = layer.computed_checksum() != layer.checksum
            problem = (
                "its checksum does not match its name in the chain"
                + ("; its contents do not match their checksum either" if damaged else ""),
                layer._trailer_at,
                DAMAGED_LAYER if damaged else "commit-graph-chain",
            )
        elif n and not layer.num_base_graphs:
            problem = ("it lists no base graphs", 7, "commit-graph-chain")
        elif layer.base_hashes[:n] != tuple(hashes) or layer.num_base_graphs < n:
            problem = (f"its base graphs do not match the {n} layers below it", 7, "commit-graph-chain")
        elif layer.num_base_graphs > n:
            # git accepts such a layer and then fails on its parent positions
            problem = (
                f"it lists {layer.num_base_graphs} base graphs, but the chain has {n} below it",
                7,
                "commit-graph-chain-base",
            )
        else:
            return layer
        layer.close()
        message, offset, kind = problem
        raise layer.problem(f"layer {n} of the chain is not used: {message}", offset, kind)

    def close(self) -> None:
        for layer in self.layers:
            layer.close()

    # --- lookups ---------------------------------------------------------

    def layer_of(self, pos: int) -> GraphLayer:
        for layer in self.layers:
            if pos < layer.commit_base + layer.num_commits:
                if pos < 0:
                    break
                return layer
        raise IndexError(f"commit-graph position {pos} out of range (0..{self.num_commits - 1})")

    def lookup(self, oid: bytes) -> int | None:
        """Global position of commit ``oid``, or None when the graph lacks it."""
        for layer in reversed(self.layers):  # tip first, as git searches
            i = layer.find(oid)
            if i >= 0:
                return i + layer.commit_base
        return None

    def __contains__(self, oid: bytes) -> bool:
        return self.lookup(oid) is not None

    def oid_at(self, pos: int) -> bytes:
        layer = self.layer_of(pos)
        return layer.name_at(pos - layer.commit_base)

    def parent_positions(self, pos: int) -> tuple[int, ...]:
        layer = self.layer_of(pos)
        i = pos - layer.commit_base
        _, p1, p2, _, _ = layer.cdat(i)
        return self._parents(layer, i, p1, p2)

    def _parents(self, layer: GraphLayer, i: int, p1: int, p2: int) -> tuple[int, ...]:
        if p1 == PARENT_NONE:
            out: list[int] = []
        else:
            out = [p1]
            if p2 & EDGE_FLAG:
                out.extend(layer.edge_list(p2 & ~EDGE_FLAG, i))
            elif p2 != PARENT_NONE:
                out.append(p2)
        limit = layer.commit_base + layer.num_commits  # a layer never points above itself
        for p in out:
            if p >= limit:
                raise layer._error(
                    f"commit {i} names parent position {p}, beyond the {limit} commits visible to this layer",
                    layer._cdat + i * layer._cdat_width + layer.fmt.rawsz,
                    "commit-graph-parent",
                )
        return tuple(out)

    def commit_at(self, pos: int) -> CommitRecord:
        layer = self.layer_of(pos)
        i = pos - layer.commit_base
        tree, p1, p2, level, time = layer.cdat(i)
        parent_positions = self._parents(layer, i, p1, p2)
        generation = time + layer.generation_offset(i) if self.uses_corrected_dates else level
        return CommitRecord(
            position=pos,
            oid=layer.name_at(i),
            tree=tree,
            parents=tuple(self.oid_at(p) for p in parent_positions),
            parent_positions=parent_positions,
            commit_time=time,
            generation=generation,
            topo_level=level,
        )

    def commit(self, oid: bytes) -> CommitRecord | None:
        pos = self.lookup(oid)
        return None if pos is None else self.commit_at(pos)

    def bloom_filter(self, pos: int) -> BloomFilter | None:
        """The commit's changed-path filter; None when its layer has no Bloom
        data or the filter was not computed (zero length)."""
        layer = self.layer_of(pos)
        data = layer.bloom_bytes(pos - layer.commit_base)
        if not data or layer.bloom_settings is None:  # (bytes come only with settings)
            return None
        return BloomFilter(data, layer.bloom_settings)

    def __iter__(self) -> Iterator[CommitRecord]:
        for pos in range(self.num_commits):
            yield self.commit_at(pos)
