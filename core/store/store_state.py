"""The object store's own state, apart from its behaviour: counters,
settings, and one record per object directory (core/store/odb.py)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from packscope.core.store.loose import LooseCache
from packscope.core.store.pack_directory import DirectoryScan

if TYPE_CHECKING:
    from packscope.core.store.midx import MultiPackIndex

POLICIES = ("git", "gated")
# What the store does with a pack git refuses to open because its trailing
# hash is not the one its .idx records (cut short at any length, or written
# over): the one place this is decided (packscope.core.store.pack's
# ``check_trailer``; ObjectStore.contains).
#   "git"     refused whole, as git does: none of its objects exists or is
#             read, not even the entries before the damage.  Every command's
#             reads, and fsck's walks.
#   "triage"  read past it: the entries before the damage read, the damage
#             named where it is.  The UI's views of packs and objects open
#             their session so; fsck's pack pass asks for one such pack at a
#             time (ObjectStore.pack_read_past).
READ_MODES = ("git", "triage")
Stamps = tuple[int | None, ...]  # objects/xx mtimes, one per object directory (None: absent)

MAX_RESCAN_ROUNDS = 5


class StoreCounters:
    """What the store did, counted (the Overview's counters, `lookup --summary`).

    (This module's records are plain classes, not dataclasses: every command
    builds them at start-up, and a dataclass costs about 1 ms to create.)"""

    __slots__ = (
        "hits_loose",
        "hits_midx",
        "hits_pack",
        "lookups",
        "loose_caches",  # the store's loose caches: each counts its own subdirectory reads
        "misses",
        "mru_moves",
        "negative_hits",
        "null_lookups",
        "opens",
        "pack_dir_reads",  # listings of objects/pack
        "rescans",
        "rescans_skipped",
        "stats",
    )

    def __init__(self) -> None:
        self.lookups = 0
        self.null_lookups = 0
        self.hits_midx = 0
        self.hits_pack = 0
        self.hits_loose = 0
        self.misses = 0
        self.negative_hits = 0
        self.rescans = 0
        self.rescans_skipped = 0
        self.pack_dir_reads = 0
        self.stats = 0
        self.opens = 0
        self.mru_moves = 0
        self.loose_caches: tuple[LooseCache, ...] = ()

    @property
    def dir_reads(self) -> int:
        """Directory listings: pack-directory scans plus loose subdirectory
        reads (each ``objects/xx`` a loose cache fills)."""
        return self.pack_dir_reads + sum(c.fills for c in self.loose_caches)

    def as_dict(self) -> dict[str, int]:
        out: dict[str, int] = {k: getattr(self, k) for k in self.__slots__ if k != "loose_caches"}
        out["dir_reads"] = self.dir_reads
        return out


class ObjectDir:
    """One object directory (the repository's, or an alternate): its pack scan, loose cache and midx."""

    __slots__ = ("local", "loose", "midx", "path", "scan", "subdirs")

    def __init__(
        self,
        path: str,
        local: bool,
        loose: LooseCache,
        scan: DirectoryScan | None = None,
        midx: MultiPackIndex | None = None,
    ) -> None:
        self.path = path
        self.local = local
        self.loose = loose
        self.scan = scan
        self.midx = midx
        self.subdirs = [os.path.join(path, f"{b:02x}") for b in range(256)]  # objects/00 … objects/ff, joined once


class StoreSettings:
    """The store's switchable settings (the UI and the Lab change them at run time)."""

    __slots__ = ("algorithm", "loose_strategy", "policy", "quick", "reads")

    def __init__(self) -> None:
        self.reads = "git"  # READ_MODES; fixed when the store is made
        self.policy = "gated"
        self.quick = False
        self.algorithm = "binary"
        self.loose_strategy = "per-subdir"
