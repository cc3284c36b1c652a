# Types of the optional compiled module (core/_native.c).
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal, TypeVar

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
    pack: object, offset: int, end: int, max_depth: int, cached: Mapping[tuple[str, int], object], name: str, /
) -> tuple[int, int, int, int, int, list[tuple[int, int, int]], int] | None: ...
def read_object(
    pack: object,
    offset: int,
    end: int,
    max_depth: int,
    max_size: int,
    cache: object,
    name: str,
    keep: bool,
    decompress: Callable[[object, int, int], bytes] | None,
    inflate_big: Callable[[memoryview, int], bytes | None] | None,
    /,
) -> tuple[str, bytes] | None: ...
def read_objects(
    pack: object,
    offsets: list[int],
    end: int,
    max_depth: int,
    max_size: int,
    cache: object,
    name: str,
    decompress: Callable[[object, int, int], bytes] | None,
    inflate_big: Callable[[memoryview, int], bytes | None] | None,
    /,
) -> list[tuple[str, bytes]] | None: ...
def tree_entry(data: bytes, name: bytes, rawsz: int, /) -> tuple[bytes, bytes, bytes] | tuple[()] | None: ...
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

class IdSet:
    def add(self, oid: bytes, /) -> None: ...
    def clear(self) -> None: ...
    def update(self, ids: Iterable[bytes], /) -> None: ...
    def update_joined(self, data: bytes, /) -> None: ...
    def joined(self) -> bytes: ...
    def __contains__(self, oid: object, /) -> bool: ...
    def __len__(self) -> int: ...

def id_set(rawsz: int, /) -> IdSet: ...
