"""The object store's own state, apart from its behaviour: counters,
settings, and one record per object directory (core/store/odb.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from packscope.core.store.loose import LooseCache
from packscope.core.store.pack_directory import DirectoryScan

if TYPE_CHECKING:
    from packscope.core.store.midx import MultiPackIndex

POLICIES = ("git", "gated")
Stamps = tuple[int | None, ...]  # objects/xx mtimes, one per object directory (None: absent)

MAX_RESCAN_ROUNDS = 5


@dataclass(slots=True)
class StoreCounters:
    """What the store did, counted (the Overview's counters, `lookup --summary`)."""

    lookups: int = 0
    null_lookups: int = 0
    hits_midx: int = 0
    hits_pack: int = 0
    hits_loose: int = 0
    misses: int = 0
    negative_hits: int = 0
    rescans: int = 0
    rescans_skipped: int = 0
    pack_dir_reads: int = 0  # listings of objects/pack
    stats: int = 0
    opens: int = 0
    mru_moves: int = 0
    loose_caches: tuple[LooseCache, ...] = ()  # the store's loose caches: each counts its own subdirectory reads

    @property
    def dir_reads(self) -> int:
        """Directory listings: pack-directory scans plus loose subdirectory
        reads (each ``objects/xx`` a loose cache fills)."""
        return self.pack_dir_reads + sum(c.fills for c in self.loose_caches)

    def as_dict(self) -> dict[str, int]:
        out: dict[str, int] = {k: getattr(self, k) for k in self.__slots__ if k != "loose_caches"}
        out["dir_reads"] = self.dir_reads
        return out


@dataclass(slots=True)
class ObjectDir:
    """One object directory (the repository's, or an alternate): its pack scan, loose cache and midx."""

    path: str
    local: bool
    loose: LooseCache
    scan: DirectoryScan | None = None
    midx: MultiPackIndex | None = None
    subdirs: list[str] = field(default_factory=list)  # objects/00 … objects/ff, joined once

    def __post_init__(self) -> None:
        self.subdirs = [os.path.join(self.path, f"{b:02x}") for b in range(256)]


@dataclass(slots=True)
class StoreSettings:
    """The store's switchable settings (the UI and the Lab change them at run time)."""

    policy: str = "gated"
    quick: bool = False
    algorithm: str = "binary"
    loose_strategy: str = "per-subdir"
