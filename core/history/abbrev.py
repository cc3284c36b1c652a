"""Abbreviated object ids, as git's ``%h`` and ``Merge:`` lines print them.

git (core.abbrev=auto) starts from a length chosen by the approximate
object count — objects in packs and multi-pack-indexes, loose objects not
counted — and lengthens an abbreviation until no other object shares it
(packed or loose).  Two ways to ask "who else shares it?":

* :class:`SortedAbbreviator` — over a sorted list of every id (tests, small
  stores);
* :class:`StoreAbbreviator` — through the object store's prefix search
  (``resolve_prefix``), so nothing is materialised: each abbreviation costs
  one bucket search per index and a look at one loose subdirectory.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING

from packscope.core.errors import PackscopeError
from packscope.core.oid import parse_prefix

if TYPE_CHECKING:
    from packscope.core.repo.config import Config
    from packscope.core.store.odb import ObjectStore

FALLBACK_ABBREV = 7


def default_abbrev_len(object_count: int) -> int:
    """git's core.abbrev=auto: about 2^n objects expect a collision at
    2^(n/2), 4 bits per hex digit, at least 7.  ``object_count`` is git's
    *approximate* count: objects in packs (loose objects are not counted)."""
    if object_count <= 0:
        return FALLBACK_ABBREV
    bits = object_count.bit_length()  # = msb + 1
    return max(FALLBACK_ABBREV, (bits + 1) // 2)


def configured_abbrev(config: Config | None, hexsz: int) -> int | None:
    """``core.abbrev``: None for auto (the default), else the minimum length
    (``false``/``no``: the whole id); ValueError for what git refuses (a
    length below 4 or above the id's)."""
    value = config.get("core", "abbrev") if config is not None else None
    if value is None or value.strip().lower() == "auto":
        return None
    text = value.strip().lower()
    if text in ("false", "no", "off"):
        return hexsz
    try:
        n = int(text)
    except ValueError:
        raise ValueError(f"core.abbrev={value!r} is not a length, auto or false") from None
    if n < 4 or n > hexsz:
        raise ValueError(f"core.abbrev={n}: abbreviation length out of range (4..{hexsz})")
    return n


def approximate_object_count(store: ObjectStore) -> int:
    """git's repo_approximate_object_count(): the objects of every
    multi-pack-index plus those of the packs no multi-pack-index covers."""
    count: int = sum(m.num_objects for m in store.midxs)
    for h in store.packs:
        if not h.in_midx:
            try:
                count += h.index.open().num_objects
            except PackscopeError:  # gone since the scan (a repack), or damaged: git counts the packs it opens
                continue
    return count


class SortedAbbreviator:
    """``abbrev(oid)`` over a sorted list of every object id: at least
    ``min_len`` hex digits, lengthened until no other object shares them."""

    def __init__(self, sorted_oids: list[bytes], min_len: int) -> None:
        self.oids = sorted_oids
        self.min_len = min_len

    def __call__(self, oid: bytes) -> str:
        hx = oid.hex()
        need = self.min_len
        i = bisect_left(self.oids, oid)
        for j in (i - 1, i + 1 if i < len(self.oids) and self.oids[i] == oid else i):
            if 0 <= j < len(self.oids) and self.oids[j] != oid:
                need = max(need, _common_hex(hx, self.oids[j].hex()) + 1)
        return hx[:need]


class StoreAbbreviator:
    """``abbrev(oid)`` answered by the store: the ids sharing the first
    ``min_len`` digits (usually none but ``oid``) decide how much longer it
    must be.  Answers are remembered (a log names parents again and again)."""

    def __init__(self, store: ObjectStore, min_len: int | None = None) -> None:
        self.store = store
        self.min_len = default_abbrev_len(approximate_object_count(store)) if min_len is None else min_len
        self._known: dict[bytes, str] = {}

    def __call__(self, oid: bytes) -> str:
        hit = self._known.get(oid)
        if hit is not None:
            return hit
        hx = oid.hex()
        need = self.min_len
        if need < len(hx):
            for other in self.store.resolve_prefix(parse_prefix(hx[:need], self.store.fmt)):
                if other != oid:
                    need = max(need, _common_hex(hx, other.hex()) + 1)
        out = self._known[oid] = hx[:need]
        return out


def _common_hex(a: str, b: str) -> int:
    """Hex digits two full ids (of one format) share at their start."""
    n = 0
    for x, y in zip(a, b, strict=True):
        if x != y:
            break
        n += 1
    return n
