"""Changed-path Bloom filters, as git stores them in commit-graph files.

For each commit git collects every path changed against its first parent
(against the empty tree for a root), plus all of each path's leading
directories (``a/b/c`` adds ``a/b`` and ``a``), and sets, per path,
``num_hashes`` bits chosen by double hashing:

    h1 = murmur3_32(seed 0x293ae76f, path)   h2 = murmur3_32(seed 0x7e646e2c, path)
    bit_i = (h1 + i * h2) mod 2**32 mod (filter_bytes * 8),   i = 0 .. num_hashes-1
    byte[bit_i // 8] |= 1 << (bit_i % 8)

The filter is ``ceil(paths * bits_per_entry / 8)`` bytes.  Special cases
(gitformat-commit-graph): a commit that changes nothing gets one 0x00 byte;
one that changes more than 512 paths gets one 0xFF byte ("anything may have
changed"); a zero-length filter was not computed (``--max-new-filters``).

Hash version 1 is git's historical murmur3 over *signed* chars: on
platforms where ``char`` is signed, each byte >= 0x80 is sign-extended to
32 bits before being shifted into place, so paths with such bytes hash
differently from the textbook function.  Version 2 (git 2.46+) is the
textbook murmur3 over unsigned bytes.  Both are implemented here; the two
agree on pure-ASCII paths.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

SEED1 = 0x293AE76F
SEED2 = 0x7E646E2C
DEFAULT_NUM_HASHES = 7
DEFAULT_BITS_PER_ENTRY = 10

_M32 = 0xFFFFFFFF
_C1 = 0xCC9E2D51
_C2 = 0x1B873593


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def _signed_byte(b: int) -> int:
    """A byte as a C ``char`` (signed) converted to uint32: 0x80.. → 0xFFFFFF80.."""
    return (b | 0xFFFFFF00) if b & 0x80 else b


def murmur3_32(data: bytes, seed: int = 0, *, signed_chars: bool = False) -> int:
    """32-bit murmur3 (x86 variant).  ``signed_chars`` reproduces git's
    version-1 Bloom hashing, where bytes >= 0x80 are sign-extended."""
    h = seed & _M32
    n = len(data)
    nblocks = n // 4
    conv: Callable[[int], int] = _signed_byte if signed_chars else int  # int: identity on ints
    for i in range(nblocks):
        b = 4 * i
        # OR of the shifted bytes, as git's loop builds each block; with
        # sign extension a high byte floods the bits above it.
        k = (conv(data[b]) | (conv(data[b + 1]) << 8) | (conv(data[b + 2]) << 16) | (conv(data[b + 3]) << 24)) & _M32
        k = (k * _C1) & _M32
        k = _rotl(k, 15)
        k = (k * _C2) & _M32
        h ^= k
        h = _rotl(h, 13)
        h = (h * 5 + 0xE6546B64) & _M32
    tail = n & 3
    if tail:
        b = 4 * nblocks
        k1 = 0
        # The tail is folded in with XOR (highest byte first), which differs
        # from OR only when sign extension makes the bytes overlap.
        if tail == 3:
            k1 ^= (conv(data[b + 2]) << 16) & _M32
        if tail >= 2:
            k1 ^= (conv(data[b + 1]) << 8) & _M32
        k1 ^= conv(data[b]) & _M32
        k1 = (k1 * _C1) & _M32
        k1 = _rotl(k1, 15)
        k1 = (k1 * _C2) & _M32
        h ^= k1
    h ^= n & _M32
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h


class BloomSettings(NamedTuple):
    """The BDAT header: hash version (1 or 2), hashes per path, bits per path."""

    hash_version: int = 1
    num_hashes: int = DEFAULT_NUM_HASHES
    bits_per_entry: int = DEFAULT_BITS_PER_ENTRY

    @property
    def signed_chars(self) -> bool:
        return self.hash_version == 1


def path_hashes(path: bytes, settings: BloomSettings) -> tuple[int, ...]:
    """The ``num_hashes`` 32-bit values for one path (before the modulus)."""
    signed = settings.signed_chars
    h1 = murmur3_32(path, SEED1, signed_chars=signed)
    h2 = murmur3_32(path, SEED2, signed_chars=signed)
    return tuple((h1 + i * h2) & _M32 for i in range(settings.num_hashes))


def with_leading_dirs(paths: Iterable[bytes]) -> list[bytes]:
    """Every path plus its leading directories, once each, in first-seen order."""
    seen: dict[bytes, None] = {}
    for p in paths:
        p = p.rstrip(b"/")
        while p:
            if p in seen:
                break  # its parents were added with it
            seen[p] = None
            cut = p.rfind(b"/")
            p = p[:cut] if cut > 0 else b""
    return list(seen)


class BloomFilter:
    """One commit's filter: ``contains_hashes`` is False only when the path
    (hashed by ``path_hashes``) certainly did not change against the first
    parent."""

    __slots__ = ("data", "settings")

    def __init__(self, data: bytes, settings: BloomSettings) -> None:
        self.data = bytes(data)
        self.settings = settings

    def __len__(self) -> int:
        return len(self.data)

    @property
    def state(self) -> str:
        """ "not-computed", "too-many-changes", "no-changes" or "normal"."""
        if not self.data:
            return "not-computed"
        if self.data == b"\xff":
            return "too-many-changes"
        if not any(self.data):
            return "no-changes"
        return "normal"

    def contains_hashes(self, hashes: tuple[int, ...]) -> bool:
        nbits = len(self.data) * 8
        if nbits == 0:
            return True  # not computed: cannot rule anything out
        data = self.data
        for h in hashes:
            bit = h % nbits
            if not data[bit >> 3] & (1 << (bit & 7)):
                return False
        return True

    def __repr__(self) -> str:
        return f"BloomFilter({len(self.data)} bytes, {self.state}, v{self.settings.hash_version})"
