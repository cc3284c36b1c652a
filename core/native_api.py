"""The compiled path's face: what core may call on it, typed.

``NativeApi`` mirrors core/_native.pyi function by function.  The door
(core/native.py) declares ``backend: NativeApi | None`` and assigns the
compiled module to it, so mypy checks the module's stub against this
Protocol there, and every call site (``native.backend.read_object(...)``)
against these signatures: a wrong argument count or type fails strict mypy.

Every function answers what the pure reference would, or None ("not mine:
ask the reference"); the pure path is the reference itself at each call
site (``backend is None``), not a second object of this type.  Imported
only by the type checker (and tests): nothing here runs at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

if TYPE_CHECKING:
    from array import array

    # The compiled set's class, the chain walk's record and the cache's
    # surface, from the stub: the one type on both sides.
    from packscope.core._native import ChainWalk, DeltaBaseCacheSurface, IdSet, PackReadingFields, TreeSums

# What the compiled lookups read a pack's .idx as (PackIndex.search_table):
# (map, fanout at, names at, stride, offsets at, large offsets at, v2).
IdxTable = tuple[object, int, int, int, int, int, bool]
# A commit's (tree, parents, commit time), as commit_header answers.
CommitHeader = tuple[bytes, tuple[bytes, ...], int]
# The packs a compiled walk reads: (search table, pack map, read one commit).
WalkPacks = list[tuple[object, object, Callable[[int, bytes], CommitHeader | None]]]
# The commit-graph as the compiled walk reads it (CommitGraph.walk_table).
WalkGraph = tuple[tuple[tuple[object, int, int, int, int, int, int], ...], bool, dict[bytes, int]]
# A commit-graph's octopus edge lists, per layer (CommitGraph.edge_table).
GraphEdges = tuple[tuple[int, int], ...]
# The compiled incremental topo walk's state (graph_topo_start hands it out).
TopoState = tuple[bytearray, bytearray, bytearray, bytearray, list[int]]
# The walk's record type (WalkedCommit): walk_plain builds its answers as it.
_Walked = TypeVar("_Walked", bound=tuple[object, ...])
Decompress = Callable[[object, int, int], bytes]
InflateBig = Callable[[memoryview, int], bytes | None]


class NativeApi(Protocol):
    """core/_native.pyi as a type: one implementation, the compiled module."""

    def apply_delta(self, base: bytes, delta: bytes, max_size: int = ..., /) -> bytes: ...
    def try_apply_delta(self, base: bytes, delta: bytes, max_size: int, /) -> bytes | None: ...
    def set_delta_fallback(self, func: Callable[[bytes, bytes, int], bytes], /) -> None: ...
    def tree_items(self, data: bytes, rawsz: int, /) -> list[tuple[int, bytes, bytes]] | None: ...
    def commit_header(self, data: bytes, hexsz: int, /) -> CommitHeader | None: ...
    def entry_header(
        self, pack: object, offset: int, data_end: int, rawsz: int, /
    ) -> tuple[int, int, int, int | None, bytes | None] | None: ...
    def tree_diff_names(self, a: bytes, b: bytes, rawsz: int, /) -> set[bytes] | None: ...
    def fsck_tree(
        self, data: bytes, rawsz: int, /
    ) -> tuple[int, tuple[bytes, ...] | None, list[tuple[int, bytes, bytes]] | None]: ...
    def tree_unseen(self, data: bytes, rawsz: int, seen: set[bytes] | IdSet, /) -> list[tuple[bytes, int]] | None: ...
    def tree_sums(self, data: bytes, rawsz: int, sizes: dict[bytes, int], /) -> TreeSums | None: ...
    def idx_find(self, idx: object, fan_at: int, names_at: int, stride: int, oid: bytes, /) -> int | None: ...
    def idx_find_many(
        self, indexes: Sequence[IdxTable], oids: list[bytes], null: bytes, /
    ) -> tuple[list[tuple[int, int, int] | None], list[int], int] | None: ...
    def pack_info(
        self, pack: object, offset: int, data_end: int, rawsz: int, max_depth: int, memo: bytearray | None, /
    ) -> tuple[int, int] | None: ...
    def pack_info_many(
        self, pack: object, offsets: list[int], data_end: int, rawsz: int, max_depth: int, memo: bytearray | None, /
    ) -> list[tuple[str, int] | None]: ...
    def apply_chain(
        self,
        pack: object,
        base: bytes,
        deltas: list[tuple[int, int, int]],
        end: int,
        max_size: int,
        decompress: Decompress | None = ...,
        inflate_big: InflateBig | None = ...,
        /,
    ) -> list[bytes] | None: ...
    def walk_chain(
        self,
        pack: object,
        offset: int,
        end: int,
        max_depth: int,
        cached: Mapping[tuple[str, int], tuple[str, bytes]],
        name: str,
        /,
    ) -> ChainWalk | None: ...
    def cache_put(
        self, cache: DeltaBaseCacheSurface, name: str, offset: int, type_name: str, data: bytes, /
    ) -> bool: ...
    def read_object(self, reading: PackReadingFields, offset: int, keep: bool, /) -> tuple[str, bytes] | None: ...
    def read_objects(self, reading: PackReadingFields, offsets: list[int], /) -> list[tuple[str, bytes]] | None: ...
    def tree_entry(self, data: bytes, name: bytes, rawsz: int, /) -> tuple[bytes, bytes, bytes] | tuple[()] | None: ...
    def tree_entry_near(self, data: bytes, name: bytes, rawsz: int, /) -> tuple[bytes, bytes, bytes] | None: ...
    def commit_lookup(
        self, table: IdxTable, pack: object, oid: bytes, hexsz: int, prefix: int, /
    ) -> CommitHeader | Literal[False] | None: ...
    def walk_plain(
        self,
        queue: list[tuple[int, int, bytes, bytes, tuple[bytes, ...]]],
        seen: set[bytes],
        counter: int,
        packs: WalkPacks,
        graph: WalkGraph | None,
        fallback: Callable[[bytes], tuple[object, ...]],
        first_parent: bool,
        walked_type: type[_Walked],
        hexsz: int,
        prefix: int,
        limit: int,
        /,
    ) -> tuple[list[_Walked], int, BaseException | None, int] | None: ...
    def commit_facts_many(
        self, packs: WalkPacks, graph: WalkGraph | None, oids: list[bytes], hexsz: int, prefix: int, /
    ) -> tuple[list[CommitHeader | None], int]: ...
    def id_set(self, rawsz: int, /) -> IdSet: ...
    def blame_moves(
        self, entries: list[list[int]], deleted: bytearray, inserted: bytearray, /
    ) -> tuple[list[list[int]], list[list[int]]] | None: ...
    def split_ids(
        self, data: bytes, table: dict[bytes, int], indents: dict[int, int], base: int, /
    ) -> array[int] | None: ...
    def same_lines(self, a: bytes, b: bytes, /) -> tuple[int, int, int, int] | None: ...
    def common_tail_lines(self, a: bytes, b: bytes, /) -> int | None: ...
    def git_diff_flags(
        self,
        a: Sequence[int],
        b: Sequence[int],
        indents: Mapping[int, int] | Sequence[int] | None,
        check: Callable[[], None] | None,
        /,
    ) -> tuple[bytearray, bytearray] | None: ...
    def graph_walk_check(self, graph: WalkGraph, edges: GraphEdges, hexsz: int, /) -> bool: ...
    def graph_walk_enter(
        self,
        queue: list[tuple[int, int, bytes, bytes, tuple[bytes, ...]]],
        seen: set[bytes],
        graph: WalkGraph,
        heap: bytearray,
        bits: bytearray,
        hexsz: int,
        /,
    ) -> bool: ...
    def graph_walk_plain(
        self,
        heap: bytearray,
        bits: bytearray,
        counter: int,
        graph: WalkGraph,
        edges: GraphEdges,
        first_parent: bool,
        walked_type: type[_Walked],
        hexsz: int,
        limit: int,
        /,
    ) -> tuple[list[_Walked], int, int]: ...
    def graph_walk_ids(
        self,
        heap: bytearray,
        bits: bytearray,
        counter: int,
        graph: WalkGraph,
        edges: GraphEdges,
        first_parent: bool,
        hexsz: int,
        limit: int,
        /,
    ) -> tuple[bytes, int, int]: ...
    def graph_commit(
        self, graph: WalkGraph, oid: bytes, hexsz: int, /
    ) -> tuple[bytes, tuple[bytes, ...], int, int] | bool | None: ...
    def graph_bloom_unchanged(
        self,
        blooms: tuple[tuple[object, int, int, int, int, tuple[tuple[tuple[int, ...], ...], ...]], ...],
        memo: dict[bytes, int],
        oid: bytes,
        /,
    ) -> bool | None: ...
    def graph_walk_paths(
        self,
        heap: bytearray,
        bits: bytearray,
        counter: int,
        graph: WalkGraph,
        edges: GraphEdges,
        first_parent: bool,
        walked_type: type[_Walked],
        hexsz: int,
        limit: int,
        blooms: tuple[tuple[object, int, int, int, int, tuple[tuple[tuple[int, ...], ...], ...]], ...],
        changed: Callable[[bytes | None, bytes | None], bool],
        touches: Callable[[bytes], bool],
        /,
    ) -> tuple[list[_Walked], int, int, BaseException | None]: ...
    def graph_topo_start(
        self,
        graph: WalkGraph,
        edges: GraphEdges,
        hexsz: int,
        tips: list[bytes],
        by_date: bool,
        first_parent: bool,
        /,
    ) -> tuple[TopoState, int] | None: ...
    def graph_topo_next(
        self,
        graph: WalkGraph,
        edges: GraphEdges,
        hexsz: int,
        state: TopoState,
        by_date: bool,
        first_parent: bool,
        walked_type: type[_Walked],
        limit: int,
        /,
    ) -> tuple[list[_Walked], int]: ...
