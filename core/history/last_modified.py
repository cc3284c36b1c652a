"""The last commit that touched each entry of a directory, in one walk.

For entry E of directory D at revision R, the answer is what
``git --literal-pathspecs log -1 --format=%H R -- D/E`` prints: the first
commit git's walk *shows* for that path with default history
simplification.  Before that first shown commit every commit is TREESAME
for D/E, and a TREESAME merge keeps only the first parent it is TREESAME
to, so git's walk for one entry is a single chain:

* a commit with one parent: E changed against it → the answer; else go on
  to the parent;
* a merge: go on to the first parent against which E is unchanged; if E
  changed against every parent → the merge is the answer;
* a root: the answer if E exists there (with content).

The chains of different entries run together and split only at merges, so
they are followed in ONE walk: each commit is read once, with the group of
entries whose chains reach it, and compares only D's subtree (equal subtree
ids: nothing under D changed, no entry is looked at).  Two different
subtrees are compared by one compiled pass over both (the names whose entry
bytes differ, packscope.core.history.tree_entries); only the group's names
among them are looked at closely.  Commits come newest first (by generation
when the commit-graph gives them), so groups meeting at a commit are handled
together.  Changed-path Bloom filters (against the
first parent) spare reading trees: when a filter answers "definitely not"
for D, or for every entry of the group, the whole group moves on unread;
otherwise only the entries it cannot rule out are compared.

Answers are yielded as they are found — ``(entry name, commit id)`` — with a
``progress`` callback and a ``cancelled`` check (CancelledError), so a UI can
fill a listing while the walk runs.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Literal

from packscope.core.errors import BadRevisionError, CancelledError
from packscope.core.history.bloom import path_hashes, with_leading_dirs
from packscope.core.history.commit_reader import (
    CommitHeaderReader,
    CommitReader,
    StoreView,
    commit_facts,
    peel_to_commit,
)
from packscope.core.history.tree_diff import normalize_paths
from packscope.core.history.tree_entries import TreeEntries
from packscope.core.objects import tree_items

if TYPE_CHECKING:
    from packscope.core.history.bloom import BloomSettings
    from packscope.core.history.graph_walk import WalkSource
    from packscope.core.history.walked import CommitInfo

# Where the walk has the entries of one commit go next: arrive(parent, entries).
Arrive = Callable[[bytes, AbstractSet[bytes]], None]
_NONE: frozenset[bytes] = frozenset()

CHECK_EVERY = 64  # commits between two looks at ``cancelled`` (and progress reports)
# Trees kept: each commit's directory is compared with its parents' and the walk
# moves on; git.git's root tree costs ~150 KB parsed, so 512 of them were 75 MB.
TREE_CACHE = 64


@dataclass(frozen=True, slots=True)
class Progress:
    answered: int  # entries with an answer so far
    total: int  # entries in the directory
    commits: int  # commits examined so far


class _Commit:
    __slots__ = ("date", "dir_tree", "generation", "parents", "tree")

    def __init__(self, tree: bytes, parents: tuple[bytes, ...], date: int, generation: int) -> None:
        self.tree = tree
        self.parents = parents
        self.date = date
        self.generation = generation
        self.dir_tree: bytes | Literal[False] | None = False  # False: not looked up yet


def last_modified(
    store: StoreView,
    rev: bytes,
    path: bytes | str = b"",
    *,
    source: WalkSource | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Iterator[tuple[bytes, bytes | None]]:
    """``(entry name, commit id)`` for every entry of directory ``path`` (""
    for the top) of commit (or tag) ``rev``, as each answer is found (None
    at the end for an entry git's ``log -1`` would show nothing for).

    ``source`` is a packscope.core.history.graph_walk.WalkSource (commit-graph, Bloom filters,
    fast commit reads); without one, commits are read from the store.
    BadRevisionError when ``path`` is not a directory of ``rev``."""
    return _LastModified(store, source, progress, cancelled).run(rev, path)


def entries_of(
    store: StoreView, rev: bytes, path: bytes | str = b"", *, source: WalkSource | None = None
) -> list[bytes]:
    """The names in directory ``path`` of ``rev``, in tree order (what
    :func:`last_modified` answers for; ``source`` as there, so that a
    replaced commit lists its replacement's entries)."""
    lm = _LastModified(store, source, None, None)
    return lm.entries(lm.peel(rev), _dir_parts(path))[1]


def _dir_parts(path: bytes | str) -> tuple[bytes, ...]:
    spec = normalize_paths([path])[0]
    return tuple(spec.split(b"/")) if spec else ()


class _LastModified:
    def __init__(
        self,
        store: StoreView,
        source: WalkSource | None,
        progress: Callable[[Progress], None] | None,
        cancelled: Callable[[], bool] | None,
    ) -> None:
        self.store = store
        self.fmt = store.fmt
        self.source = source
        quick: CommitReader = source.reader if source is not None else CommitHeaderReader(store)
        self.info: CommitInfo = source.commit_info if source is not None else quick
        self.trees = TreeEntries(quick.read, store.fmt, cache_size=TREE_CACHE)
        self.progress = progress
        self.cancelled = cancelled
        self.commits: dict[bytes, _Commit] = {}
        self.examined = 0
        self.parts: tuple[bytes, ...] = ()  # the directory's path components

    # --- commits and trees ---------------------------------------------------------

    def commit(self, oid: bytes) -> _Commit:
        c = self.commits.get(oid)
        if c is None:
            c = self.commits[oid] = _Commit(*commit_facts(self.store, self.info, oid))
        return c

    def peel(self, oid: bytes) -> bytes:
        return peel_to_commit(self.store, oid)

    def dir_tree(self, c: _Commit) -> bytes | None:
        """The commit's tree at the directory, None when it is not one there."""
        if c.dir_tree is False:
            tree: bytes | None = c.tree
            for part in self.parts:
                entry = self.trees.entry(tree, part)
                if entry is None or not self.trees.is_dir(entry):
                    tree = None
                    break
                tree = entry[2]
            c.dir_tree = tree
        return c.dir_tree

    def entries(self, start: bytes, parts: tuple[bytes, ...]) -> tuple[_Commit, list[bytes]]:
        self.parts = parts
        c = self.commit(start)
        tree = self.dir_tree(c)
        if tree is None:
            shown = b"/".join(parts).decode("utf-8", "replace")
            raise BadRevisionError(
                f"{shown!r} is not a directory in {start.hex()}",
                remedy="Name a directory of that revision (git ls-tree REV shows them).",
            )
        _, data = self.trees.read(tree)
        names: list[bytes] = []
        seen = set()
        for _, name, _ in tree_items(data, self.fmt, tree):  # tree order
            if name not in seen:  # a duplicated name (damage): git's lookups see the first
                seen.add(name)
                names.append(name)
        return c, names

    # --- Bloom filters ------------------------------------------------------------------

    def _filter_keys(self, names: list[bytes]) -> None:
        prefix = b"/".join(self.parts)
        self.dir_keys = with_leading_dirs([prefix]) if prefix else []
        self.entry_key = {n: (prefix + b"/" + n if prefix else n) for n in names}
        self._settings: BloomSettings | None = None  # the Bloom settings the hashes below are for
        self._hashes: dict[bytes, tuple[int, ...]] = {}

    def _hashes_for(self, settings: BloomSettings) -> dict[bytes, tuple[int, ...]]:
        if settings is not self._settings:  # layers almost always share one settings object
            self._settings, self._hashes = settings, {}
        return self._hashes

    def filter_maybe(self, oid: bytes, group: Collection[bytes]) -> list[bytes] | None:
        """The entries of ``group`` that the commit's Bloom filter says may
        have changed against its first parent (the others certainly did
        not; [] when the directory itself did not), or None without one."""
        if self.source is None:
            return None
        f = self.source.changed_path_filter(oid)
        if f is None:
            return None
        table = self._hashes_for(f.settings)
        contains = f.contains_hashes
        for key in self.dir_keys:
            h = table.get(key)
            if h is None:
                h = table[key] = path_hashes(key, f.settings)
            if not contains(h):
                return []  # nothing under the directory changed
        maybe = []
        for e in group:
            key = self.entry_key[e]
            h = table.get(key)
            if h is None:
                h = table[key] = path_hashes(key, f.settings)
            if contains(h):
                maybe.append(e)
        return maybe

    # --- the walk --------------------------------------------------------------------------

    def run(self, rev: bytes, path: bytes | str) -> Iterator[tuple[bytes, bytes | None]]:
        start_oid = self.peel(rev)
        _, names = self.entries(start_oid, _dir_parts(path))
        self._filter_keys(names)
        order = {name: k for k, name in enumerate(names)}  # answers of one commit come in tree order
        total = len(names)
        answered = 0
        done: set[bytes] = set()
        # commit -> the entries whose chain is there.  A group is a set handed
        # over, never copied: most commits pass their whole group on unchanged.
        pending: dict[bytes, set[bytes]] = {}
        heap: list[tuple[int, int, int, bytes]] = []  # (-generation, -date, arrival, commit)
        counter = 0

        def arrive(oid: bytes, group: AbstractSet[bytes]) -> None:
            nonlocal counter
            if not group:
                return
            waiting = pending.get(oid)
            if waiting is None:
                pending[oid] = group if isinstance(group, set) else set(group)
                c = self.commit(oid)
                heappush(heap, (-c.generation, -c.date, counter, oid))
                counter += 1
            else:
                waiting |= group

        arrive(start_oid, set(names))
        while heap:
            oid = heappop(heap)[3]
            group = pending.pop(oid)
            self.examined += 1
            if self.examined % CHECK_EVERY == 1:  # the first commit, then every CHECK_EVERY
                if self.cancelled is not None and self.cancelled():
                    raise CancelledError("last-modified cancelled")
                if self.progress is not None:
                    self.progress(Progress(answered, total, self.examined))
            found = self.step(oid, group, arrive)
            if found:
                answered += len(found)
                done.update(found)
                if self.progress is not None:
                    self.progress(Progress(answered, total, self.examined))
                for name in sorted(found, key=order.__getitem__):
                    yield name, oid
        # Only odd trees leave an entry without an answer (its chain ended at
        # a root where it is an empty directory): git's log -1 prints nothing.
        for name in names:
            if name not in done:
                yield name, None

    def step(self, oid: bytes, group: AbstractSet[bytes], arrive: Arrive) -> AbstractSet[bytes]:
        """Move ``group`` on from commit ``oid`` (handing its sets on to
        ``arrive``); the entries it answers."""
        c = self.commit(oid)
        here = self.dir_tree(c)
        if not c.parents:  # present with content: added here
            present = self.trees.entries_named(here, group)
            return {e for e in group if self.trees.changed(None, present.get(e))}
        undecided = group
        for nth, p in enumerate(c.parents):
            same, undecided = self.split(oid, here, p, undecided, first=nth == 0)
            arrive(p, same)
            if not undecided:
                return _NONE
        return undecided  # changed against every parent: shown, the answer

    def split(
        self, oid: bytes, here: bytes | None, parent: bytes, group: AbstractSet[bytes], first: bool
    ) -> tuple[AbstractSet[bytes], AbstractSet[bytes]]:
        """(entries unchanged against ``parent``, entries changed): new sets,
        or ``group`` itself as the first when nothing of it changed."""
        there = self.dir_tree(self.commit(parent))
        if there == here:
            return group, _NONE
        if first:
            maybe = self.filter_maybe(oid, group)
            if maybe is not None and len(maybe) < len(group):
                if not maybe:
                    return group, _NONE
                changed = self._changed(there, here, set(maybe))
                return (group - changed if changed else group), changed
        changed = self._changed(there, here, group)
        return (group - changed if changed else group), changed

    def _changed(self, there: bytes | None, here: bytes | None, group: AbstractSet[bytes]) -> AbstractSet[bytes]:
        # The names whose entry bytes differ between the two trees, in one
        # compiled pass; only those of the group are compared the exact way
        # (a different spelling of the same mode or tree is no change).
        differ = self.trees.diff_names(there, here)
        if not differ:
            return _NONE
        maybe = group & differ
        if not maybe:
            return _NONE
        # (both sides' entries in one pass each, whatever the number of
        # names: one lookup per name would scan the tree per name)
        trees = self.trees
        before, after = trees.entries_named(there, maybe), trees.entries_named(here, maybe)
        return {e for e in maybe if trees.changed(before.get(e), after.get(e))} or _NONE

    def changed(self, there: bytes | None, here: bytes | None, e: bytes) -> bool:
        return self.trees.changed(self.trees.entry(there, e), self.trees.entry(here, e))
