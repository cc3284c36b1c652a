"""Scanning an ``objects/pack/`` directory.

A scan lists every ``*.idx`` file with its ``.pack`` (whatever the name:
git does not require the ``pack-`` prefix), notes ``.keep``,
``.promisor``, ``.rev`` and ``.bitmap`` companions, and reports orphans (an
``.idx`` without its ``.pack`` or the reverse) instead of using them.  It
also records the directory's mtime so the store can tell later whether a
rescan could possibly find anything new.

git's temporary files are never packs nor orphans (``tmp_pack_*``,
``.tmp-<pid>-pack-*``, …: the one rule is
:func:`packscope.core.store.temporary_files.is_git_temporary`), so a scan
skips them, and every other hidden file as well: :func:`is_pack_candidate`.
(git itself would open a leftover ``.tmp-*.idx``; a repack that finishes
renames it, one that was killed left a copy of objects that are still in the
old packs.)
"""

from __future__ import annotations

import os
import time
from typing import NamedTuple

from packscope.core.store.temporary_files import is_git_temporary


class PackFiles(NamedTuple):
    """One usable pack: its .idx and .pack and which companions exist."""

    base: str  # path without extension
    name: str  # the stem, usually "pack-<hash>"
    local: bool
    mtime: int  # whole seconds of the .pack, as git sorts by
    pack_size: int
    keep: bool
    promisor: bool
    rev: bool
    bitmap: bool

    @property
    def idx_path(self) -> str:
        return self.base + ".idx"

    @property
    def pack_path(self) -> str:
        return self.base + ".pack"


class DirectoryScan(NamedTuple):
    pack_dir: str
    packs: tuple[PackFiles, ...]  # in git's readdir-based order, not yet sorted
    orphans: tuple[str, ...]  # file names of .idx without .pack or .pack without .idx
    midx: bool
    mtime_ns: int | None  # of the directory when the scan began; None if absent
    started_ns: int  # wall clock when the scan began
    seconds: float

    @property
    def provisional(self) -> bool:
        """A scan that began within 2 s of the directory's last change may
        have raced a writer whose new file shares the same mtime, so the next
        miss must rescan rather than trust it."""
        return self.mtime_ns is not None and self.started_ns - self.mtime_ns < 2_000_000_000


def is_pack_candidate(name: str) -> bool:
    """Whether the scan looks at ``name`` in ``objects/pack``: not one of
    git's temporary files, and not hidden: the scan has always left out
    every dot file, not only git's ``.tmp-*`` (a stray ``.nfs*`` or
    editor file is no pack of ours either), so it goes further than the
    temporary rule."""
    return not (is_git_temporary(name) or name.startswith("."))


def dir_mtime_ns(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def scan_pack_dir(objects_dir: str, local: bool = True) -> DirectoryScan:
    pack_dir = os.path.join(objects_dir, "pack")
    t0 = time.perf_counter()
    started_ns = time.time_ns()
    mtime_ns = dir_mtime_ns(pack_dir)
    names: list[str] = []
    try:
        with os.scandir(pack_dir) as it:
            names = [e.name for e in it if is_pack_candidate(e.name)]
    except OSError:
        names = []
    present = set(names)
    packs = []
    orphans = []
    for n in names:
        if n.endswith(".idx"):
            stem = n[:-4]
            if stem + ".pack" not in present:
                orphans.append(n)
                continue
            base = os.path.join(pack_dir, stem)
            try:
                st = os.stat(base + ".pack")
            except OSError:
                orphans.append(n)
                continue
            packs.append(
                PackFiles(
                    base,
                    stem,
                    local,
                    int(st.st_mtime),
                    st.st_size,
                    stem + ".keep" in present,
                    stem + ".promisor" in present,
                    stem + ".rev" in present,
                    stem + ".bitmap" in present,
                )
            )
        elif n.endswith(".pack") and n[:-5] + ".idx" not in present:
            orphans.append(n)
    # git prepends each pack it finds, then sorts stably: the reversed
    # directory order is what breaks ties between equal mtimes.
    packs.reverse()
    return DirectoryScan(
        pack_dir,
        tuple(packs),
        tuple(sorted(orphans)),
        "multi-pack-index" in present or "multi-pack-index.d" in present,
        mtime_ns,
        started_ns,
        time.perf_counter() - t0,
    )


def git_pack_order(packs: list[PackFiles]) -> list[PackFiles]:
    """Local packs first, then newest first; stable for ties (as git's sort_pack)."""
    return sorted(packs, key=lambda p: (not p.local, -p.mtime))
