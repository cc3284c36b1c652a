"""Noticing outside changes: another process (git fetch, gc, repack)
writing or removing packs and loose objects while the UI is open.

Creating or deleting a file changes its directory's mtime, so one stat() of
``objects/pack`` and of each ``objects/xx`` (257 per object directory)
tells what changed, without listing anything.  The app polls this from a
worker about once a second and, on a change, asks the store to rescan with
reason ``outside-change``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Change:
    objects_dir: str
    pack_dir: bool  # objects/pack changed
    subdirs: tuple[str, ...]  # loose subdirectories that changed ("3f", …)

    def describe(self) -> str:
        parts = []
        if self.pack_dir:
            parts.append("objects/pack")
        if self.subdirs:
            shown = ", ".join(f"{s}/" for s in self.subdirs[:6])
            more = f" and {len(self.subdirs) - 6} more" if len(self.subdirs) > 6 else ""
            parts.append(f"loose {shown}{more}")
        return " and ".join(parts)


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


class DirWatcher:
    """Remembers directory mtimes; ``poll()`` reports what changed since."""

    def __init__(self, objects_dirs: list[str]) -> None:
        self.objects_dirs = list(objects_dirs)
        self._last = [self._snapshot(d) for d in self.objects_dirs]
        self.polls = 0

    @staticmethod
    def _snapshot(objects_dir: str) -> tuple[int | None, list[int | None]]:
        return (
            _mtime(os.path.join(objects_dir, "pack")),
            [_mtime(os.path.join(objects_dir, f"{n:02x}")) for n in range(256)],
        )

    def poll(self) -> list[Change]:
        self.polls += 1
        changes = []
        for i, d in enumerate(self.objects_dirs):
            pack, subs = self._snapshot(d)
            old_pack, old_subs = self._last[i]
            self._last[i] = (pack, subs)
            changed = tuple(f"{n:02x}" for n in range(256) if subs[n] != old_subs[n])
            if pack != old_pack or changed:
                changes.append(Change(d, pack != old_pack, changed))
        return changes


def count_loose_on_disk(objects_dir: str, subdir: int, hexsz: int) -> int:
    """Entries of objects/xx that look like object files (no reading, no stat
    per entry): what the grid shows for subdirectories core has not read."""
    rest = hexsz - 2
    try:
        with os.scandir(os.path.join(objects_dir, f"{subdir:02x}")) as it:
            return sum(1 for e in it if len(e.name) == rest)
    except OSError:
        return 0
