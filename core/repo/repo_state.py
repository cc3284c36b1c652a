"""A cheap stamp of the repository's state, for jobs that take a while.

A long job (fsck, a batch of lookups, a history walk, the last commit of
each entry of a directory) reads the repository for seconds or minutes;
git may commit, repack or gc meanwhile.  :func:`take_state` records, with
a few hundred ``stat`` calls and no reads, what such a change rewrites:

* the pack directory: every ``.pack``/``.idx`` and companion (size, mtime,
  inode), git's temporary files left out (``.tmp-*``, ``tmp_pack_*``, …:
  a repack's work in progress is not a pack; the store's rule,
  :func:`packscope.core.store.temporary_files.is_git_temporary`);
* the refs: ``HEAD``, ``packed-refs``, every directory under ``refs/``
  (git writes a loose ref to a lock file and renames it, which changes the
  directory's mtime), a reftable stack's ``tables.list``;
* the loose objects: the mtime of each ``objects/xx`` directory;
* the commit-graph (file or chain) and multi-pack-index files.

:func:`compare` tells two stamps apart and says what happened in words a
user knows ("a repack at 14:02"), with the time taken from the files that
changed.  A job records the state when it starts and when it ends; when
they differ, what it found may be about files that are gone, and it says
so (the fsck side: ``packscope.core.fsck.changed_during``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from packscope.core.store.temporary_files import is_git_temporary

if TYPE_CHECKING:
    from packscope.core.repo.repository import Repository

PACK_SUFFIXES = (".pack", ".idx", ".rev", ".bitmap", ".keep", ".promisor", ".mtimes")


class Stamp(NamedTuple):
    """What a rewrite of one file or directory changes."""

    size: int
    mtime_ns: int
    ino: int


def stamp_of(path: str) -> Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return Stamp(st.st_size, st.st_mtime_ns, st.st_ino)


class RepoState(NamedTuple):
    """One stamp of the repository (paths are absolute)."""

    taken: float  # wall clock
    packs: dict[str, Stamp]  # the pack directory's files (no temporary ones)
    refs: dict[str, Stamp]  # HEAD, packed-refs, refs/ and its directories, reftable's list
    loose: dict[str, Stamp]  # objects/xx directories
    graphs: dict[str, Stamp]  # commit-graph files, multi-pack-index files

    def stamp(self, path: str) -> Stamp | None:
        """The stamp recorded for ``path`` (a pack file, a ref file…), if any."""
        path = os.path.abspath(path)
        for table in (self.packs, self.refs, self.graphs, self.loose):
            s = table.get(path)
            if s is not None:
                return s
        return None


def _scan_dir(directory: str, keep: Callable[[str], bool], out: dict[str, Stamp]) -> None:
    try:
        it = os.scandir(directory)
    except OSError:
        return
    with it:
        for e in it:
            if keep(e.name) and not is_git_temporary(e.name):
                try:
                    st = e.stat()
                except OSError:  # gone between the listing and the stat
                    continue
                out[e.path] = Stamp(st.st_size, st.st_mtime_ns, st.st_ino)


def _ref_dirs(top: str, out: dict[str, Stamp]) -> None:
    """``top`` and every directory below it (directories only: a ref's
    rewrite renames a file into its directory)."""
    stack = [top]
    while stack:
        d = stack.pop()
        s = stamp_of(d)
        if s is None:
            continue
        out[d] = s
        try:
            with os.scandir(d) as it:
                stack.extend(e.path for e in it if e.is_dir(follow_symlinks=False))
        except OSError:
            continue


def take_state(
    git_dir: str | os.PathLike[str], common_dir: str | os.PathLike[str], objects_dir: str | os.PathLike[str]
) -> RepoState:
    """The state now (a few hundred stats; git.git: well under 10 ms)."""
    git_dir, common_dir, objects_dir = (os.path.abspath(os.fspath(p)) for p in (git_dir, common_dir, objects_dir))
    taken = time.time()
    packs: dict[str, Stamp] = {}
    _scan_dir(os.path.join(objects_dir, "pack"), lambda n: n.endswith(PACK_SUFFIXES), packs)
    refs: dict[str, Stamp] = {}
    for path in {
        os.path.join(git_dir, "HEAD"),
        os.path.join(common_dir, "packed-refs"),
        os.path.join(common_dir, "reftable", "tables.list"),
    }:
        s = stamp_of(path)
        if s is not None:
            refs[path] = s
    _ref_dirs(os.path.join(common_dir, "refs"), refs)
    if git_dir != common_dir:
        _ref_dirs(os.path.join(git_dir, "refs"), refs)  # a linked worktree's own refs
    loose: dict[str, Stamp] = {}
    for n in range(256):
        path = os.path.join(objects_dir, f"{n:02x}")
        s = stamp_of(path)
        if s is not None:
            loose[path] = s
    graphs: dict[str, Stamp] = {}
    info = os.path.join(objects_dir, "info")
    for path in (os.path.join(info, "commit-graph"), os.path.join(objects_dir, "pack", "multi-pack-index")):
        s = stamp_of(path)
        if s is not None:
            graphs[path] = s
    _scan_dir(os.path.join(info, "commit-graphs"), lambda n: True, graphs)
    _scan_dir(os.path.join(objects_dir, "pack", "multi-pack-indexes"), lambda n: True, graphs)
    return RepoState(taken, packs, refs, loose, graphs)


def state_of(repo: Repository) -> RepoState:
    """:func:`take_state` for a ``Repository``."""
    return take_state(repo.git_dir, repo.common_dir, repo.objects_dir)


class Change(NamedTuple):
    """How two stamps differ."""

    packs_added: tuple[str, ...]  # pack files (paths) new since the start
    packs_rewritten: tuple[str, ...]  # there at the start, written again since (another inode, size, mtime)
    packs_removed: tuple[str, ...]  # pack files gone since the start
    refs: bool
    loose: bool
    graphs: bool
    at: float  # when: the newest mtime among what changed (wall clock)

    def what(self) -> str:
        """ "a repack", "refs updated", … joined."""
        parts = []
        added = any(p.endswith(".pack") for p in self.packs_added)
        removed = any(p.endswith(".pack") for p in self.packs_removed + self.packs_rewritten)
        if removed or (added and self.loose):
            parts.append("a repack")
        elif added:
            parts.append("a new pack")
        elif self.packs_added or self.packs_removed or self.packs_rewritten:
            parts.append("pack files rewritten")
        if self.refs:
            parts.append("refs updated")
        if self.loose and parts[:1] != ["a repack"]:
            parts.append("loose objects written or pruned")
        if self.graphs:
            parts.append("the commit-graph or multi-pack-index rewritten")
        if len(parts) > 1:
            return ", ".join(parts[:-1]) + " and " + parts[-1]
        return parts[0] if parts else "files rewritten"

    def describe(self) -> str:
        """ "a repack and refs updated at 14:02"."""
        return f"{self.what()} at {time.strftime('%H:%M', time.localtime(self.at))}"


def _differ(a: dict[str, Stamp], b: dict[str, Stamp]) -> tuple[list[str], list[str]]:
    """(new or rewritten in ``b``, gone from ``b``)."""
    added = [p for p, s in b.items() if a.get(p) != s]
    removed = [p for p in a if p not in b]
    return added, removed


def compare(start: RepoState, end: RepoState) -> Change | None:
    """None when nothing a long job reads changed between the two stamps."""
    packs_added, packs_removed = _differ(start.packs, end.packs)
    refs_added, refs_removed = _differ(start.refs, end.refs)
    loose_added, loose_removed = _differ(start.loose, end.loose)
    graphs_added, graphs_removed = _differ(start.graphs, end.graphs)
    if not any((packs_added, packs_removed, refs_added, refs_removed, loose_added, loose_removed)) and not (
        graphs_added or graphs_removed
    ):
        return None
    times = [
        table[p].mtime_ns
        for table, changed in (
            (end.packs, packs_added),
            (end.refs, refs_added),
            (end.loose, loose_added),
            (end.graphs, graphs_added),
        )
        for p in changed
    ]
    at = max(times) / 1e9 if times else end.taken
    return Change(
        tuple(sorted(p for p in packs_added if p not in start.packs)),
        tuple(sorted(p for p in packs_added if p in start.packs)),
        tuple(sorted(packs_removed)),
        bool(refs_added or refs_removed),
        bool(loose_added or loose_removed),
        bool(graphs_added or graphs_removed),
        min(at, end.taken),
    )
