# Types of the optional compiled module (core/_native.c; each part's C header in core/native_c/*.h).
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal, NamedTuple, Protocol, TypeVar

from packscope.core.trace import Tracer

class DeltaBaseCacheSurface(Protocol):
    """What the compiled read uses of a delta-base cache (core/store/cache.py
    DeltaBaseCache, the reference of core/native_c/cache.c): the entries in
    LRU order, the counts (hits, misses, fills, evictions, bytes) updated in
    place, the budget, and the tracer (while one listens the compiled read
    and cache_put decline)."""

    table: OrderedDict[tuple[str, int], tuple[str, bytes]]
    counts: list[int]
    budget: int
    tracer: Tracer | None

class ChainWalk(NamedTuple):
    """walk_chain's answer (a C structseq: a tuple with these names)."""

    hit: int  # the offset whose cache entry ended the walk, or -1
    base_type: int  # the whole object's type number at the bottom (-1 on a hit)
    base_offset: int
    base_data_offset: int
    base_size: int
    deltas: list[tuple[int, int, int]]  # (offset, data offset, size) of the deltas passed, top first
    misses: int  # the cache probes that found nothing

class TreeSums(NamedTuple):
    """tree_sums' answer (a C structseq): one tree's own entries summed."""

    entries: int  # how many entries the tree has
    length: int  # the longest name among entries that are not directories
    blobs: int  # entries that are neither directories, symbolic links nor gitlinks
    blob_bytes: int  # the sizes of those blobs that ``sizes`` knew
    links: int
    gitlinks: int
    subtrees: list[tuple[int, bytes, bytes]]  # (40000, name, id) of the directories, in tree order
    unseen: list[tuple[int, bytes, bytes]]  # (mode, name, id) of blobs and links ``sizes`` did not know

# What read_object and read_objects take of a pack, in one record:
# core/store/pack.py's PackReading (a NamedTuple: pack, end, max_depth,
# max_size, cache, name, decompress, inflate_big), unpacked by object_read.c.
PackReadingFields = tuple[
    object,
    int,
    int,
    int,
    DeltaBaseCacheSurface,
    str,
    Callable[[object, int, int], bytes] | None,
    Callable[[memoryview, int], bytes | None] | None,
]

# The walk's record type (WalkedCommit): walk_plain builds its answers as it.
_Walked = TypeVar("_Walked", bound=tuple[object, ...])

def apply_delta(base: bytes, delta: bytes, max_size: int = ...) -> bytes: ...
def try_apply_delta(base: bytes, delta: bytes, max_size: int) -> bytes | None: ...
def set_delta_fallback(func: Callable[[bytes, bytes, int], bytes], /) -> None: ...
def tree_items(data: bytes, rawsz: int, /) -> list[tuple[int, bytes, bytes]] | None: ...
def commit_header(data: bytes, hexsz: int, /) -> tuple[bytes, tuple[bytes, ...], int] | None: ...
def entry_header(
    pack: object, offset: int, data_end: int, rawsz: int, /
) -> tuple[int, int, int, int | None, bytes | None] | None: ...
def tree_diff_names(a: bytes, b: bytes, rawsz: int, /) -> set[bytes] | None: ...
def fsck_tree(
    data: bytes, rawsz: int, /
) -> tuple[int, tuple[bytes, ...] | None, list[tuple[int, bytes, bytes]] | None]: ...
def tree_unseen(data: bytes, rawsz: int, seen: set[bytes] | IdSet, /) -> list[tuple[bytes, int]] | None: ...
def tree_sums(data: bytes, rawsz: int, sizes: dict[bytes, int], /) -> TreeSums | None: ...
def idx_find(idx: object, fan_at: int, names_at: int, stride: int, oid: bytes, /) -> int | None: ...
def idx_find_many(
    indexes: Sequence[tuple[object, int, int, int, int, int, bool]], oids: list[bytes], null: bytes, /
) -> tuple[list[tuple[int, int, int] | None], list[int], int] | None: ...
def pack_info(
    pack: object, offset: int, data_end: int, rawsz: int, max_depth: int, memo: bytearray | None, /
) -> tuple[int, int] | None: ...
def pack_info_many(
    pack: object, offsets: list[int], data_end: int, rawsz: int, max_depth: int, memo: bytearray | None, /
) -> list[tuple[str, int] | None]: ...
def apply_chain(
    pack: object,
    base: bytes,
    deltas: list[tuple[int, int, int]],
    end: int,
    max_size: int,
    decompress: Callable[[object, int, int], bytes] | None = ...,
    inflate_big: Callable[[memoryview, int], bytes | None] | None = ...,
    /,
) -> list[bytes] | None: ...
def walk_chain(
    pack: object,
    offset: int,
    end: int,
    max_depth: int,
    cached: Mapping[tuple[str, int], tuple[str, bytes]],
    name: str,
    /,
) -> ChainWalk | None: ...
def cache_put(cache: DeltaBaseCacheSurface, name: str, offset: int, type_name: str, data: bytes, /) -> bool: ...
def read_object(reading: PackReadingFields, offset: int, keep: bool, /) -> tuple[str, bytes] | None: ...
def read_objects(reading: PackReadingFields, offsets: list[int], /) -> list[tuple[str, bytes]] | None: ...
def tree_entry(data: bytes, name: bytes, rawsz: int, /) -> tuple[bytes, bytes, bytes] | tuple[()] | None: ...
def tree_entry_near(data: bytes, name: bytes, rawsz: int, /) -> tuple[bytes, bytes, bytes] | None: ...
def commit_lookup(
    table: tuple[object, int, int, int, int, int, bool], pack: object, oid: bytes, hexsz: int, prefix: int, /
) -> tuple[bytes, tuple[bytes, ...], int] | Literal[False] | None: ...
def walk_plain(
    queue: list[tuple[int, int, bytes, bytes, tuple[bytes, ...]]],
    seen: set[bytes],
    counter: int,
    packs: list[tuple[object, object, Callable[[int, bytes], tuple[bytes, tuple[bytes, ...], int] | None]]],
    graph: tuple[tuple[tuple[object, int, int, int, int, int, int], ...], bool, dict[bytes, int]] | None,
    fallback: Callable[[bytes], tuple[object, ...]],
    first_parent: bool,
    walked_type: type[_Walked],
    hexsz: int,
    prefix: int,
    limit: int,
    /,
) -> tuple[list[_Walked], int, BaseException | None, int] | None: ...
def commit_facts_many(
    packs: list[tuple[object, object, Callable[[int, bytes], tuple[bytes, tuple[bytes, ...], int] | None]]],
    graph: tuple[tuple[tuple[object, int, int, int, int, int, int], ...], bool, dict[bytes, int]] | None,
    oids: list[bytes],
    hexsz: int,
    prefix: int,
    /,
) -> tuple[list[tuple[bytes, tuple[bytes, ...], int] | None], int]: ...
def blame_moves(
    entries: list[list[int]], deleted: bytearray, inserted: bytearray, /
) -> tuple[list[list[int]], list[list[int]]] | None: ...
def split_ids(data: bytes, table: dict[bytes, int], indents: dict[int, int], base: int, /) -> array[int] | None: ...
def same_lines(a: bytes, b: bytes, /) -> tuple[int, int, int, int] | None: ...
def common_tail_lines(a: bytes, b: bytes, /) -> int | None: ...
def git_diff_flags(
    a: Sequence[int],
    b: Sequence[int],
    indents: Mapping[int, int] | Sequence[int] | None,
    check: Callable[[], None] | None,
    /,
) -> tuple[bytearray, bytearray] | None: ...
def graph_walk_check(
    graph: tuple[tuple[tuple[object, int, int, int, int, int, int], ...], bool, dict[bytes, int]],
    edges: tuple[tuple[int, int], ...],
    hexsz: int,
    /,
) -> bool: ...
def graph_walk_enter(
    queue: list[tuple[int, int, bytes, bytes, tuple[bytes, ...]]],
    seen: set[bytes],
    graph: tuple[tuple[tuple[object, int, int, int, int, int, int], ...], bool, dict[bytes, int]],
    heap: bytearray,
    bits: bytearray,
    hexsz: int,
    /,
) -> bool: ...
def graph_walk_plain(
    heap: bytearray,
    bits: bytearray,
    counter: int,
    graph: tuple[tuple[tuple[object, int, int, int, int, int, int], ...], bool, dict[bytes, int]],
    edges: tuple[tuple[int, int], ...],
    first_parent: bool,
    walked_type: type[_Walked],
    hexsz: int,
    limit: int,
    /,
) -> tuple[list[_Walked], int, int]: ...
def graph_walk_ids(
    heap: bytearray,
    bits: bytearray,
    counter: int,
    graph: tuple[tuple[tuple[object, int, int, int, int, int, int], ...], bool, dict[bytes, int]],
    edges: tuple[tuple[int, int], ...],
    first_parent: bool,
    hexsz: int,
    limit: int,
    /,
) -> tuple[bytes, int, int]: ...
def graph_commit(
    graph: tuple[tuple[tuple[object, int, int, int, int, int, int], ...], bool, dict[bytes, int]],
    oid: bytes,
    hexsz: int,
    /,
) -> tuple[bytes, tuple[bytes, ...], int, int] | bool | None: ...
def graph_bloom_unchanged(
    blooms: tuple[tuple[object, int, int, int, int, tuple[tuple[tuple[int, ...], ...], ...]], ...],
    memo: dict[bytes, int],
    oid: bytes,
    /,
) -> bool | None: ...
def graph_walk_paths(
    heap: bytearray,
    bits: bytearray,
    counter: int,
    graph: tuple[tuple[tuple[object, int, int, int, int, int, int], ...], bool, dict[bytes, int]],
    edges: tuple[tuple[int, int], ...],
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
    graph: tuple[tuple[tuple[object, int, int, int, int, int, int], ...], bool, dict[bytes, int]],
    edges: tuple[tuple[int, int], ...],
    hexsz: int,
    tips: list[bytes],
    by_date: bool,
    first_parent: bool,
    /,
) -> tuple[tuple[bytearray, bytearray, bytearray, bytearray, list[int]], int] | None: ...
def graph_topo_next(
    graph: tuple[tuple[tuple[object, int, int, int, int, int, int], ...], bool, dict[bytes, int]],
    edges: tuple[tuple[int, int], ...],
    hexsz: int,
    state: tuple[bytearray, bytearray, bytearray, bytearray, list[int]],
    by_date: bool,
    first_parent: bool,
    walked_type: type[_Walked],
    limit: int,
    /,
) -> tuple[list[_Walked], int]: ...

class IdSet:
    def add(self, oid: bytes, /) -> None: ...
    def clear(self) -> None: ...
    def update(self, ids: Iterable[bytes], /) -> None: ...
    def update_joined(self, data: bytes, /) -> None: ...
    def joined(self) -> bytes: ...
    def __contains__(self, oid: object, /) -> bool: ...
    def __len__(self) -> int: ...

def id_set(rawsz: int, /) -> IdSet: ...
