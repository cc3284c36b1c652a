"""The trace events: what core did, step by step, as values.

Frozen, slotted dataclasses; the inspector's adapter, the CLI's ``--json``
and the tests all consume the very same objects, so they cannot disagree.
They live apart from the ``Tracer`` (packscope.core.trace) because building
fourteen dataclasses costs a one-shot command about as much as the rest of
its own code: a module that emits an event imports this one when a tracer
is listening, and an untraced run never loads it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Probe:
    """One step of a bucket search: the window [lo, hi), the slot probed,
    the comparison of the name at ``mi`` with the target (-1, 0, 1) and the
    4 KiB page of the index file holding that name."""

    lo: int
    mi: int
    hi: int
    cmp: int
    page: int


@dataclass(frozen=True, slots=True)
class SearchPath:
    """A whole search inside one fanout bucket."""

    algorithm: str
    bucket: tuple[int, int]
    probes: tuple[Probe, ...]
    pages: tuple[int, ...]  # distinct pages, in first-touch order
    found: int | None  # position in the table, or None
    insert_at: int  # where the target would go when absent


# --- lookup-level events ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class LookupStarted:
    oid: str
    quick: bool


@dataclass(frozen=True, slots=True)
class NullOidShortcut:
    """The null id is 'missing' at once, with no probe (git does the same)."""

    oid: str


@dataclass(frozen=True, slots=True)
class PackSearched:
    """One pack index (or multi-pack-index) consulted during a lookup."""

    pack: str  # file name of the .idx / multi-pack-index
    source: str  # "pack" or "midx"
    path: SearchPath
    offset: int | None  # pack offset when found


@dataclass(frozen=True, slots=True)
class LooseChecked:
    """The loose store consulted: through the name cache or by stat()."""

    objects_dir: str
    subdir: str
    method: str  # "cache" or "stat"
    found: bool


@dataclass(frozen=True, slots=True)
class LooseCacheFilled:
    objects_dir: str
    subdir: str
    added: int
    seconds: float
    strategy: str  # "per-subdir" or "global-resort"


@dataclass(frozen=True, slots=True)
class LooseCacheFlushed:
    objects_dir: str
    reason: str


@dataclass(frozen=True, slots=True)
class PackDirScanned:
    """objects/pack/ was (re)read.  reason: startup, miss, changed, outside-change, request."""

    objects_dir: str
    reason: str
    packs: int
    added: tuple[str, ...]
    removed: tuple[str, ...]
    seconds: float


@dataclass(frozen=True, slots=True)
class RescanSkipped:
    """A miss under the gated policy that did not rescan, and why."""

    objects_dir: str
    reason: str


@dataclass(frozen=True, slots=True)
class NegativeCacheHit:
    oid: str


@dataclass(frozen=True, slots=True)
class MruMoved:
    pack: str
    from_rank: int


@dataclass(frozen=True, slots=True)
class DeltaBaseCacheEvent:
    action: str  # "fill", "hit", "evict"
    pack: str
    offset: int
    size: int


@dataclass(frozen=True, slots=True)
class LookupFinished:
    oid: str
    source: str | None  # "midx", "pack", "loose", "alternate-…", or None when missing
    where: str | None  # pack name or loose path
    seconds: float
    rescans: int
