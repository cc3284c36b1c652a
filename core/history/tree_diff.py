"""Differences between two trees, and path limiting.

:func:`diff_trees` yields what ``git diff-tree -r --name-status --no-renames``
prints, in the same order: both trees are merged in git's tree order (a
directory sorts as if its name ended in '/'), subtrees with equal ids are
skipped without being read, and a path that is a file on one side and a
directory on the other is a deletion plus additions, as in git.

:class:`PathLimiter` (and packscope.core.history.tree_entries.EntryPathLimiter,
over another tree source) answers the question history simplification asks for
every commit: "did anything under these paths change between these two
trees?"  It descends only along the given paths, so the cost does not grow
with the size of the tree, and it stops at the first difference.

Pathspecs are literal (git's ``--literal-pathspecs``): ``P`` matches ``P``
itself and everything under ``P/``; ``""`` or ``"."`` matches everything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from stat import S_IFMT, S_ISDIR
from typing import Generic, TypeVar

from packscope.core.errors import CorruptObjectError
from packscope.core.objects import ObjectReader, canonical_mode, tree_items, tree_sort_key

V = TypeVar("V")
E = TypeVar("E")  # a directory entry, as a limiter's trees give it

Items = list[tuple[int, bytes, bytes]]  # [(mode, name, oid), ...] in stored order
Entry = tuple[int, bytes]  # (mode, oid) of one name
Trie = dict[bytes, tuple[bool, "Trie"]]  # pathspec components: exact here?, deeper components


@dataclass(frozen=True, slots=True)
class TreeChange:
    status: str  # "A", "D", "M" or "T" (file <-> symlink <-> gitlink)
    path: bytes
    old_mode: int  # 0 when added
    new_mode: int  # 0 when deleted
    old_oid: bytes | None
    new_oid: bytes | None


class TreeReader:
    """Reads trees from an object store and keeps the parsed ones recently
    used (a walk compares each commit's trees with its parents', so every
    tree is wanted twice in a row)."""

    def __init__(self, store: ObjectReader, cache_size: int = 4096) -> None:
        self.store = store
        self.fmt = store.fmt
        self.empty_tree = store.fmt.hash_object("tree", b"")
        self._cache_size = cache_size
        self._items: dict[bytes, Items] = {}
        self._names: dict[bytes, dict[bytes, tuple[int, bytes]]] = {}

    def items(self, oid: bytes | None) -> Items:
        if oid is None or oid == self.empty_tree:
            return []
        hit = self._items.get(oid)
        if hit is not None:
            return hit
        typ, data = self.store.read(oid)
        if typ != "tree":
            raise CorruptObjectError(f"expected a tree, found a {typ}", oid=oid.hex())
        items = tree_items(data, self.fmt, oid)
        _remember(self._items, oid, items, self._cache_size)
        return items

    def by_name(self, oid: bytes) -> dict[bytes, tuple[int, bytes]]:
        hit = self._names.get(oid)
        if hit is None:
            # built backwards so that, for a duplicated name, the first wins
            hit = {name: (mode, entry) for mode, name, entry in reversed(self.items(oid))}
            _remember(self._names, oid, hit, self._cache_size)
        return hit


def _remember(cache: dict[bytes, V], key: bytes, value: V, limit: int) -> None:
    if len(cache) >= limit:
        # dicts keep insertion order: dropping the oldest quarter is a cheap LRU-ish policy
        for k in list(cache)[: limit // 4 or 1]:
            del cache[k]
    cache[key] = value


# --- pathspecs ----------------------------------------------------------------------

ALL, SOME, NONE = 2, 1, 0


def normalize_paths(paths: Iterable[bytes | str]) -> tuple[bytes, ...]:
    """Literal pathspecs as bytes without trailing slashes; "." becomes ""."""
    out: list[bytes] = []
    for p in paths:
        if isinstance(p, str):
            p = p.encode("utf-8", "surrogateescape")
        while p.startswith(b"./"):
            p = p[2:]
        p = p.rstrip(b"/")
        out.append(b"" if p == b"." else p)
    return tuple(out)


def _interest(path: bytes, is_dir: bool, specs: tuple[bytes, ...]) -> int:
    """ALL when the entry lies inside a spec, SOME when it is a directory
    that contains a spec, NONE otherwise."""
    some = False
    for s in specs:
        if not s or path == s or (path.startswith(s) and path[len(s) : len(s) + 1] == b"/"):
            return ALL
        if is_dir and s.startswith(path) and s[len(path) : len(path) + 1] == b"/":
            some = True
    return SOME if some else NONE


# --- the diff ---------------------------------------------------------------------


def diff_trees(
    store: ObjectReader,
    old_tree: bytes | None,
    new_tree: bytes | None,
    *,
    paths: Iterable[bytes | str] | None = None,
    recursive: bool = True,
    reader: TreeReader | None = None,
) -> Iterator[TreeChange]:
    """Changes from ``old_tree`` to ``new_tree`` (None is the empty tree), in
    ``git diff-tree`` order.  Without ``recursive`` a changed directory is
    reported once (mode 040000), as ``git diff-tree`` without ``-r`` does."""
    reader = reader or TreeReader(store)
    specs = None if paths is None else normalize_paths(paths)
    if specs is not None and b"" in specs:
        specs = None
    if old_tree == new_tree and old_tree is not None:
        return iter(())
    return _diff(reader, reader.items(old_tree), reader.items(new_tree), b"", specs, recursive)


def _diff(
    reader: TreeReader, a: Items, b: Items, base: bytes, specs: tuple[bytes, ...] | None, recursive: bool
) -> Iterator[TreeChange]:
    i = j = 0
    na, nb = len(a), len(b)
    while i < na or j < nb:
        if j >= nb:
            side = -1
        elif i >= na:
            side = 1
        else:
            ka = tree_sort_key(a[i][1], a[i][0])
            kb = tree_sort_key(b[j][1], b[j][0])
            side = -1 if ka < kb else (1 if ka > kb else 0)
        if side == 0:
            ma, name, oa = a[i]
            mb, _, ob = b[j]
            i += 1
            j += 1
            ma, mb = canonical_mode(ma), canonical_mode(mb)
            if oa == ob and ma == mb:
                continue
            path = base + name
            is_dir = S_ISDIR(ma)
            wanted, sub = _narrow(path, is_dir, specs)
            if not wanted:
                continue
            if is_dir and recursive:
                yield from _diff(reader, reader.items(oa), reader.items(ob), path + b"/", sub, True)
            elif S_IFMT(ma ^ mb):
                yield TreeChange("T", path, ma, mb, oa, ob)
            else:
                yield TreeChange("M", path, ma, mb, oa, ob)
        else:
            if side < 0:
                mode, name, oid = a[i]
                i += 1
            else:
                mode, name, oid = b[j]
                j += 1
            yield from _one_side(reader, canonical_mode(mode), base + name, oid, side > 0, specs, recursive)


def _narrow(path: bytes, is_dir: bool, specs: tuple[bytes, ...] | None) -> tuple[bool, tuple[bytes, ...] | None]:
    """Whether anything at or under ``path`` is wanted, and the specs that
    still apply below it (None: everything)."""
    if specs is None:
        return True, None
    interest = _interest(path, is_dir, specs)
    return interest != NONE, None if interest == ALL else specs


def _one_side(
    reader: TreeReader,
    mode: int,
    path: bytes,
    oid: bytes,
    added: bool,
    specs: tuple[bytes, ...] | None,
    recursive: bool,
) -> Iterator[TreeChange]:
    is_dir = S_ISDIR(mode)
    wanted, specs = _narrow(path, is_dir, specs)
    if not wanted:
        return
    if is_dir and recursive:
        for m, name, o in reader.items(oid):
            yield from _one_side(reader, canonical_mode(m), path + b"/" + name, o, added, specs, True)
    elif added:
        yield TreeChange("A", path, 0, mode, None, oid)
    else:
        yield TreeChange("D", path, mode, 0, oid, None)


# --- path limiting ------------------------------------------------------------------


class TrieLimiter(Generic[E]):
    """The descent both path limiters share ("did anything under ``paths``
    change between two trees?"): along the paths' components only, stopping
    at the first difference.  A subclass says how its trees answer: an entry
    by name (``_entry``, None when absent), whether two entries differ
    (``_entry_changed``), the tree an entry names when it is a directory
    (``_subtree``), and whether two whole trees differ (``_trees_changed``)."""

    _entry: Callable[[bytes | None, bytes], E | None]
    _entry_changed: Callable[[E | None, E | None], bool]
    _trees_changed: Callable[[bytes | None, bytes | None], bool]

    def __init__(self, paths: Iterable[bytes | str]) -> None:
        self.paths = normalize_paths(paths)
        if not self.paths:
            raise ValueError(f"{type(self).__name__} needs at least one path")
        self._everything = b"" in self.paths
        self._trie = pathspec_trie(self.paths)

    def _subtree(self, entry: E | None) -> bytes | None:
        raise NotImplementedError

    def changed(self, old_tree: bytes | None, new_tree: bytes | None) -> bool:
        """Whether ``git diff-tree old new -- paths`` would print anything."""
        if old_tree == new_tree:
            return False
        if self._everything:
            return self._trees_changed(old_tree, new_tree)
        return self._changed(old_tree, new_tree, self._trie)

    def touches(self, tree: bytes | None) -> bool:
        """Whether ``tree`` has anything under the paths (a root commit's
        comparison with the empty tree)."""
        return self.changed(None, tree)

    def _changed(self, a: bytes | None, b: bytes | None, trie: Trie) -> bool:
        if a == b:
            return False
        entry, entry_changed = self._entry, self._entry_changed
        for component, (exact, sub) in trie.items():
            ea, eb = entry(a, component), entry(b, component)
            if ea == eb:
                continue
            if exact:
                if entry_changed(ea, eb):
                    return True
            elif sub:
                ta, tb = self._subtree(ea), self._subtree(eb)
                if ta != tb and self._changed(ta, tb, sub):
                    return True
        return False


class PathLimiter(TrieLimiter[Entry]):
    """:class:`TrieLimiter` over a :class:`TreeReader`."""

    def __init__(self, store: ObjectReader, paths: Iterable[bytes | str], reader: TreeReader | None = None) -> None:
        super().__init__(paths)
        self.reader = r = reader or TreeReader(store)
        self._entry = lambda tree, name: r.by_name(tree).get(name) if tree is not None else None
        self._entry_changed = lambda a, b: _entry_changed(r, a, b)
        self._trees_changed = lambda a, b: _any_change(r, a, b)

    def _subtree(self, entry: Entry | None) -> bytes | None:
        return entry[1] if entry is not None and S_ISDIR(entry[0]) else None


def pathspec_trie(paths: Iterable[bytes]) -> Trie:
    """Pathspecs as a trie of their components: {component: (a path ends
    here, deeper components)}; the empty path (everything) is left out."""
    trie: Trie = {}
    for comps in (p.split(b"/") for p in paths if p):
        node = trie
        for k, c in enumerate(comps):
            exact, sub = node.get(c, (False, {}))
            if k == len(comps) - 1:
                exact = True
            node[c] = (exact, sub)
            node = sub
    return trie


def _entry_changed(reader: TreeReader, ea: Entry | None, eb: Entry | None) -> bool:
    """One directory entry named by a spec, on both sides (None: absent)."""
    a_tree = ea[1] if ea is not None and S_ISDIR(ea[0]) else None
    b_tree = eb[1] if eb is not None and S_ISDIR(eb[0]) else None
    if a_tree is not None or b_tree is not None:
        if ea is not None and eb is not None and (a_tree is None) != (b_tree is None):
            return True  # a file replaced by a directory, or the reverse
        # Compare contents: an added empty tree, or two spellings of the same
        # tree, show no change in git's recursive diff either.
        return _any_change(reader, a_tree, b_tree)
    if ea is None or eb is None:
        return True
    return ea[1] != eb[1] or canonical_mode(ea[0]) != canonical_mode(eb[0])


def _any_change(reader: TreeReader, a: bytes | None, b: bytes | None) -> bool:
    if a == b:
        return False
    for _ in _diff(reader, reader.items(a), reader.items(b), b"", None, True):
        return True
    return False


def paths_changed(
    store: ObjectReader, tree_a: bytes | None, tree_b: bytes | None, paths: Iterable[bytes | str]
) -> bool:
    """One-off form of :meth:`PathLimiter.changed`."""
    return PathLimiter(store, paths).changed(tree_a, tree_b)
