"""The three searches inside a fanout bucket, as pure functions.

Each search looks for ``target`` among the sorted names at positions
[lo, hi) of a table of ``nr`` names, reading names only through
``name_at(i)``.  So a pack index, a multi-pack-index, a synthetic table in a
benchmark or a list in a test all drive the same code.

* ``binary`` — git's search: always probe the middle.
* ``interpolation`` — ids are uniformly distributed, so guess where the target
  lies from the two bytes after the prefix that the bounds share.
* ``hedged`` — interpolation pulled slightly towards the middle, so an
  overshoot costs less.

Return value: the position when found, else ``-(insert_at) - 1``.

Pass a :class:`Steps` to record the search path; the untraced path (the
default ``None``) records and allocates nothing per probe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from packscope.core import trace  # (the event classes load on the traced path only)

if TYPE_CHECKING:
    from packscope.core.trace import Probe, SearchPath

NameAt = Callable[[int], bytes]
ALGORITHMS = ("binary", "interpolation", "hedged")


class Steps:
    """Collects probes and the positions read (for the pages they touch)."""

    __slots__ = ("page_of", "probes", "reads")

    def __init__(self, page_of: Callable[[int], int] | None = None) -> None:
        self.probes: list[Probe] = []
        self.reads: list[int] = []
        self.page_of = page_of or (lambda i: 0)

    def probe(self, lo: int, mi: int, hi: int, cmp: int) -> None:
        self.probes.append(trace.Probe(lo, mi, hi, cmp, self.page_of(mi)))
        self.reads.append(mi)

    def read(self, i: int) -> None:
        self.reads.append(i)

    def pages(self) -> tuple[int, ...]:
        seen: dict[int, None] = {}
        for i in self.reads:
            seen.setdefault(self.page_of(i), None)
        return tuple(seen)


def binary_search(name_at: NameAt, lo: int, hi: int, nr: int, target: bytes, steps: Steps | None = None) -> int:
    while lo < hi:
        mi = (lo + hi) >> 1
        name = name_at(mi)
        if name == target:
            if steps is not None:
                steps.probe(lo, mi, hi, 0)
            return mi
        if name > target:
            if steps is not None:
                steps.probe(lo, mi, hi, 1)
            hi = mi
        else:
            if steps is not None:
                steps.probe(lo, mi, hi, -1)
            lo = mi + 1
    return -lo - 1


def _two_bytes(key: bytes, ofs: int, wide: bool) -> int:
    return (key[ofs] << 8) | key[ofs + 1] if wide else key[ofs]


def _interpolate(name_at: NameAt, lo: int, hi: int, nr: int, target: bytes, steps: Steps | None, hedge: bool) -> int:
    if lo >= hi:
        return -lo - 1
    rawsz = len(target)
    lo_key = name_at(lo)
    hi_key = name_at(hi) if hi < nr else None
    if steps is not None:
        steps.read(lo)
        if hi_key is not None:
            steps.read(hi)
    ofs = 0  # bytes [0, ofs) are shared by every name in [lo, hi]
    while lo < hi:
        # Outside the window's known bounds: absent (keeps the guess valid).
        if target < lo_key:
            return -lo - 1
        if hi_key is not None:
            if target >= hi_key:
                return -hi - 1
            while ofs < rawsz - 1 and lo_key[ofs] == hi_key[ofs]:
                ofs += 1
        wide = ofs + 1 < rawsz
        lov = _two_bytes(lo_key, ofs, wide)
        kyv = _two_bytes(target, ofs, wide)
        if hi_key is not None:
            hiv = _two_bytes(hi_key, ofs, wide)
        else:
            hiv = 0x10000 if wide else 0x100
        if hiv <= lov:  # only in a corrupt (unsorted) table: fall back to halving
            kyv, lov, hiv = 1, 0, 2
        if hedge:
            # Pull the guess a little towards the middle: overshooting near
            # an end would shrink the window by only a sliver.
            kyv = (kyv * 1022 + lov + hiv) >> 10
            if lov < hiv - 1:
                if kyv == lov:
                    kyv += 1
                elif kyv == hiv:
                    kyv -= 1
        elif kyv == lov and lov < hiv - 1:
            kyv += 1
        elif kyv == hiv - 1 and lov < kyv:
            kyv -= 1
        mi = (hi - lo - 1) * (kyv - lov) // (hiv - lov) + lo
        if mi >= hi:
            mi = hi - 1
        name = name_at(mi)
        if name == target:
            if steps is not None:
                steps.probe(lo, mi, hi, 0)
            return mi
        if name > target:
            if steps is not None:
                steps.probe(lo, mi, hi, 1)
            hi = mi
            hi_key = name
        else:
            if steps is not None:
                steps.probe(lo, mi, hi, -1)
            lo = mi + 1
            if lo < hi:
                lo_key = name_at(lo)
                if steps is not None:
                    steps.read(lo)
    return -lo - 1


def interpolation_search(name_at: NameAt, lo: int, hi: int, nr: int, target: bytes, steps: Steps | None = None) -> int:
    return _interpolate(name_at, lo, hi, nr, target, steps, hedge=False)


def hedged_search(name_at: NameAt, lo: int, hi: int, nr: int, target: bytes, steps: Steps | None = None) -> int:
    return _interpolate(name_at, lo, hi, nr, target, steps, hedge=True)


class Search(Protocol):
    """The three searches' common signature: position of ``target`` among
    names [lo, hi) of ``nr``, or -(insertion point) - 1."""

    def __call__(
        self, name_at: NameAt, lo: int, hi: int, nr: int, target: bytes, steps: Steps | None = None
    ) -> int: ...


SEARCHES: dict[str, Search] = {
    "binary": binary_search,
    "interpolation": interpolation_search,
    "hedged": hedged_search,
}


def search_function(algorithm: str) -> Search:
    try:
        return SEARCHES[algorithm]
    except KeyError:
        raise ValueError(f"unknown search algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}") from None


def traced_search(
    algorithm: str,
    name_at: NameAt,
    lo: int,
    hi: int,
    nr: int,
    target: bytes,
    page_of: Callable[[int], int] | None = None,
) -> SearchPath:
    """Run one search recording every probe; the result as a SearchPath."""
    steps = Steps(page_of)
    pos = search_function(algorithm)(name_at, lo, hi, nr, target, steps)
    found = pos if pos >= 0 else None
    insert_at = pos if pos >= 0 else -pos - 1
    return trace.SearchPath(algorithm, (lo, hi), tuple(steps.probes), steps.pages(), found, insert_at)
