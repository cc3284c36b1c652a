"""Directory entries by name, at C speed, and git's "did this entry change?".

last_modified compares a few entries of one directory between thousands of
commit pairs; parsing every tree into Python tuples (packscope.core.objects.tree_items)
would cost more than everything else together for a directory of hundreds
of entries.  Here a tree becomes ``{name: (mode bytes, name, id)}`` through
one regex pass and C-level iteration only, checked to cover the whole tree
(one that is not a clean run of entries goes through tree_items, which
names the damage).

:meth:`TreeEntries.diff_names` (the names whose entries differ between two
trees) and :meth:`TreeEntries.entry` (one entry by name) answer through
compiled passes over the tree bytes when the module is built
(``_native.tree_diff_names`` / ``tree_entry``: no object per entry), with
the pure code as their reference and for any tree they decline.

:meth:`TreeEntries.changed` answers what git's pathspec-limited tree diff
answers for one entry (packscope.core.history.tree_diff's rules): modes count canonically
(100664 is 100644), a file and a directory of the same name differ, and two
directories differ only if something inside differs — an added empty
directory, or two spellings of the same tree, are no change.  Only entries
whose bytes differ are looked at closely.

Names as file systems see them (:func:`is_dotgit`, :func:`is_special_name`)
close the module: which entries a checkout would write as ``.git`` or
``.gitmodules``, asked by fsck.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from enum import Enum
from functools import lru_cache
from operator import itemgetter
from stat import S_ISDIR
from typing import Final, Literal, TypeVar

from packscope.core import native
from packscope.core.errors import CorruptObjectError
from packscope.core.history.tree_diff import TrieLimiter
from packscope.core.objects import canonical_mode, tree_items, tree_mode, tree_patterns
from packscope.core.oid import ObjectFormat

V = TypeVar("V")

CACHE_SIZE = 512  # trees kept: a walk compares each commit's directory with its parent's, then moves on
_mode = itemgetter(0)
_name = itemgetter(1)
RawEntry = tuple[bytes, bytes, bytes]  # (mode as the tree spells it, name, id)


class _Far(Enum):
    """near()'s answer when the entry, if any, lies too far into the tree to look for it by hand
    (a one-member enum, so that ``a is FAR`` tells a type checker which answer it is)."""

    FAR = "far"


FAR: Final = _Far.FAR
_NOTHING: frozenset[bytes] = frozenset()
RAW_CACHE = 16
# Names looked up one by one in a tree not indexed (entries_named); more
# than this and the tree is indexed once instead (each lookup is a pass).
FEW_NAMES = 8


def tree_diff_names_py(a: bytes, b: bytes, rawsz: int) -> set[bytes] | None:
    """The names of the entries that are not byte for byte in both trees
    (mode or id changed, or on one side only), None unless both are clean
    runs of entries.  The reference of the compiled ``tree_diff_names``,
    which answers the same in one merge pass over sorted trees (and None
    for trees out of git's order, which this set comparison handles)."""
    split = tree_patterns(rawsz).tokens.findall
    ta, tb = split(a), split(b)
    if sum(map(len, ta)) != len(a) or sum(map(len, tb)) != len(b):
        return None
    return {t[t.index(b" ") + 1 : -rawsz - 1] for t in set(ta).symmetric_difference(tb)}


def token(entry: RawEntry) -> bytes:
    """The raw bytes of an entry ``(mode, name, id)`` as the tree holds them."""
    return entry[0] + b" " + entry[1] + b"\0" + entry[2]


class TreeEntries:
    """``entries(tree) -> {name: (mode, name, id)}`` with a small cache;
    ``read(oid) -> (type, data)`` is the object source (a store, or
    packscope.core.history.commit_reader's quick reads)."""

    def __init__(
        self, read: Callable[[bytes], tuple[str, bytes]], fmt: ObjectFormat, cache_size: int = CACHE_SIZE
    ) -> None:
        self.read = read
        self.fmt = fmt
        self.cache_size = cache_size
        self._cache: dict[bytes, dict[bytes, RawEntry]] = {}
        self._token_cache: dict[bytes, frozenset[bytes]] = {}
        self._one: dict[tuple[bytes, bytes], RawEntry | _Far | None] = {}  # (tree, name) -> entry, from near()
        self._raw: dict[bytes, bytes] = {}
        patterns = tree_patterns(fmt.rawsz)
        self._entry = patterns.entries
        self._token = patterns.tokens
        self._modes: dict[bytes, int] = {}
        self.empty_tree = fmt.hash_object("tree", b"")

    def _data(self, tree: bytes) -> bytes:
        # The last few trees' bytes: a quick look (near) is often followed by
        # indexing the same tree.
        raw = self._raw
        data = raw.get(tree)
        if data is None:
            typ, data = self.read(tree)
            if typ != "tree":
                raise CorruptObjectError(f"expected a tree, found a {typ}", oid=tree.hex())
            if len(raw) >= RAW_CACHE:
                del raw[next(iter(raw))]
            raw[tree] = data
        return data

    def _remember(self, cache: dict[bytes, V], tree: bytes, value: V) -> None:
        if len(cache) >= self.cache_size:
            for k in list(cache)[: self.cache_size // 4]:
                del cache[k]
        cache[tree] = value

    def tokens(self, tree: bytes | None) -> frozenset[bytes]:
        """Every entry of the tree as its raw bytes (``mode SP name NUL id``,
        see :func:`token`): one C-speed pass, one object per entry.  An
        entry's bytes found here are exactly an entry of this tree."""
        if tree is None or tree == self.empty_tree:
            return _NOTHING
        hit = self._token_cache.get(tree)
        if hit is None:
            data = self._data(tree)
            found = self._token.findall(data)
            if sum(map(len, found)) != len(data):  # not a clean run of entries
                tree_items(data, self.fmt, tree)  # says where it breaks
            hit = frozenset(found)
            self._remember(self._token_cache, tree, hit)
        return hit

    def diff_names(self, a: bytes | None, b: bytes | None) -> set[bytes] | frozenset[bytes]:
        """The names whose entries are not byte for byte the same in trees
        ``a`` and ``b`` (None: absent): a superset of the names whose entry
        :meth:`changed` calls changed.  Compiled, one pass without an object
        per entry; else (pure path, unsorted or damaged trees) through the
        trees' cached entry sets, which name any damage."""
        if a == b:
            return _NOTHING
        compiled = native.backend
        if compiled is not None:
            got = compiled.tree_diff_names(
                b"" if a is None or a == self.empty_tree else self._data(a),
                b"" if b is None or b == self.empty_tree else self._data(b),
                self.fmt.rawsz,
            )
            if got is not None:
                return got
        rawsz = self.fmt.rawsz
        return {t[t.index(b" ") + 1 : -rawsz - 1] for t in self.tokens(a).symmetric_difference(self.tokens(b))}

    def entries(self, tree: bytes | None) -> dict[bytes, RawEntry]:
        if tree is None or tree == self.empty_tree:
            return {}
        hit = self._cache.get(tree)
        if hit is not None:
            return hit
        by_name = self._index(tree)
        self._remember(self._cache, tree, by_name)
        return by_name

    def entries_named(self, tree: bytes | None, names: AbstractSet[bytes]) -> dict[bytes, RawEntry]:
        """``{name: entry(tree, name)}`` for those of ``names`` the tree has,
        in time linear in the tree whatever the number of names: a few are
        looked up one by one (one compiled pass each), more in one indexing
        of the tree.  Compiled, that index is not kept (a directory of a
        million entries would keep a million tuples per tree); pure, it is
        the cached ``entries``."""
        if tree is None or tree == self.empty_tree or not names:
            return {}
        whole = self._cache.get(tree)
        if whole is None and len(names) <= FEW_NAMES:
            found = {}
            for n in names:
                e = self.entry(tree, n)
                if e is not None:
                    found[n] = e
            return found
        if whole is None:
            whole = self._index(tree) if native.backend is not None else self.entries(tree)
        if len(names) < len(whole):
            return {n: whole[n] for n in names if n in whole}
        return {n: e for n, e in whole.items() if n in names}

    def _index(self, tree: bytes) -> dict[bytes, RawEntry]:
        """The tree as ``{name: (mode, name, id)}``, not remembered."""
        data = self._data(tree)
        found = self._entry.findall(data)
        # The entries tile the tree exactly iff their lengths add up (findall
        # never overlaps and parses each entry the only way it can be read).
        if (
            len(found) * (2 + self.fmt.rawsz) + sum(map(len, map(_mode, found))) + sum(map(len, map(_name, found)))
        ) != len(data):
            found = [(b"%o" % m, n, o) for m, n, o in tree_items(data, self.fmt, tree)]  # raises on damage
        # {name: (mode, name, id)}, built from the end so that a duplicated
        # name keeps its first entry, as git's lookups do.
        found.reverse()
        return dict(zip(map(_name, found), found, strict=True))

    def lookup(self, tree: bytes | None, name: bytes) -> RawEntry | None:
        return self.entries(tree).get(name)

    def entry(self, tree: bytes | None, name: bytes) -> RawEntry | None:
        """``lookup`` without indexing the tree: compiled, :meth:`near`'s
        answer (``tree_entry_near``) or one pass over it; else reading only
        as far into it as needed when the entry lies near its start (see
        :meth:`near`).  Compiled answers are remembered with
        :meth:`near`'s: a path-limited walk asks each tree for the same name
        twice (as a commit's, then as its parent's), a third of its asks on
        git.git, and the tree may have left the raw cache in between."""
        compiled = native.backend
        if compiled is not None and tree is not None and tree != self.empty_tree and tree not in self._cache:
            key = (tree, name)
            one = self._one
            if key in one:
                known = one[key]
                if not isinstance(known, _Far):
                    return known
            data = self._data(tree)
            # near()'s answer in C when the entry lies near the start (root
            # trees, capitalised names): no pass over the whole tree
            got = compiled.tree_entry_near(data, name, self.fmt.rawsz) or compiled.tree_entry(
                data, name, self.fmt.rawsz
            )
            if got is not None:  # None: not a clean tree, left to the pure path (which names the damage)
                if len(one) >= 4 * self.cache_size:
                    one.clear()
                answer = one[key] = got or None
                return answer
        found = self.near(tree, name)
        return self.entries(tree).get(name) if isinstance(found, _Far) else found

    def near(self, tree: bytes | None, name: bytes) -> RawEntry | Literal[_Far.FAR] | None:
        """The entry named ``name`` (or None) when that is settled by reading
        the tree's first part only, else :data:`FAR`.  A path-limited walk
        asks each tree for a name or two, often near the start (git sorts
        upper case first), and indexing whole trees of hundreds of entries
        would cost it most of its time.  Where the bytes ``SP name NUL``
        occur, the entries before are parsed one by one to prove it is an
        entry; beyond the first eighth of the tree that costs more than
        indexing it at C speed."""
        if tree is None or tree == self.empty_tree:
            return None
        whole = self._cache.get(tree)
        if whole is not None:
            return whole.get(name)
        key = (tree, name)
        if key in self._one:
            return self._one[key]
        found = self._scan(self._data(tree), name)
        one = self._one
        if len(one) >= 4 * self.cache_size:
            one.clear()
        one[key] = found
        return found

    def _scan(self, data: bytes, name: bytes) -> RawEntry | _Far | None:
        needle = b" " + name + b"\0"
        at = data.find(needle)
        if at < 0:
            return None  # every entry named so would hold these bytes
        limit = len(data) >> 3
        rawsz = self.fmt.rawsz
        find = data.find
        pos = 0
        while at <= limit:
            sp = find(b" ", pos)
            nul = find(b"\0", sp + 1)
            if sp <= pos or nul < 0 or tree_mode(data[pos:sp]) is None:
                return FAR  # odd bytes: indexing the tree checks it (and names the damage)
            if sp == at:
                return data[pos:sp], name, data[nul + 1 : nul + 1 + rawsz]
            pos = nul + 1 + rawsz
            if pos > at:  # the bytes were inside an entry: look further on
                at = find(needle, pos - 1)
                if at < 0:
                    return None
        return FAR

    def mode(self, raw: bytes) -> int:
        m = self._modes.get(raw)
        if m is None:
            m = self._modes[raw] = tree_mode(raw) or 0  # raw came from a match: never None
        return m

    def is_dir(self, entry: RawEntry | None) -> bool:
        return entry is not None and S_ISDIR(self.mode(entry[0]))

    def changed(self, a: RawEntry | None, b: RawEntry | None) -> bool:
        """One entry, ``(mode, name, id)`` or None (absent) on each side."""
        if a == b:
            return False
        a_tree = a[2] if a is not None and self.is_dir(a) else None
        b_tree = b[2] if b is not None and self.is_dir(b) else None
        if a_tree is not None or b_tree is not None:
            if a is not None and b is not None and (a_tree is None) != (b_tree is None):
                return True  # a file replaced by a directory, or the reverse
            return self.tree_changed(a_tree, b_tree)
        if a is None or b is None:
            return True
        return a[2] != b[2] or canonical_mode(self.mode(a[0])) != canonical_mode(self.mode(b[0]))

    def tree_changed(self, a: bytes | None, b: bytes | None) -> bool:
        """Whether a recursive diff of two trees (None: absent) shows anything."""
        if a == b:
            return False
        # diff_names may name more than the first-wins lookups see differ
        # (a name repeated in a damaged tree): changed() settles each.
        entry = self.entry
        return any(self.changed(entry(a, name), entry(b, name)) for name in self.diff_names(a, b))


class EntryPathLimiter(TrieLimiter[RawEntry]):
    """packscope.core.history.tree_diff.PathLimiter's answers over
    :class:`TreeEntries`: the same descent and the same entry rules, with
    trees indexed at C speed.  History walks ask it once per commit."""

    def __init__(
        self, read: Callable[[bytes], tuple[str, bytes]], fmt: ObjectFormat, paths: Iterable[bytes | str]
    ) -> None:
        super().__init__(paths)
        self.trees = trees = TreeEntries(read, fmt)
        self._entry = trees.entry  # (quick when the name is near the start)
        self._entry_changed = trees.changed
        self._trees_changed = trees.tree_changed

    def _subtree(self, entry: RawEntry | None) -> bytes | None:
        return entry[2] if entry is not None and self.trees.is_dir(entry) else None


# --- entry names as file systems see them ----------------------------------------------
# Checked out, a tree entry's name may land on a file system that folds case
# (both), drops some code points (HFS+) or trailing dots and spaces and
# knows 8.3 short names (NTFS): ".GIT", ".g\u200cit" and "git~1" are all
# ".git" there.  fsck's syntax checks and its .gitmodules/.gitattributes
# scan ask the same question of names.

# Code points HFS+ ignores when comparing names.
HFS_IGNORED = frozenset(
    [
        0x200C,
        0x200D,
        0x200E,
        0x200F,
        0x202A,
        0x202B,
        0x202C,
        0x202D,
        0x202E,
        0x206A,
        0x206B,
        0x206C,
        0x206D,
        0x206E,
        0x206F,
        0xFEFF,
    ]
)


def _folds_to(name: bytes, target: str, short_names: tuple[str, ...]) -> bool:
    """Whether some file system could open ``name`` as ``target``."""
    try:
        text = name.decode("utf-8")
    except UnicodeDecodeError:
        text = name.decode("latin-1")
    hfs = "".join(c for c in text if ord(c) not in HFS_IGNORED)
    if unicodedata.normalize("NFC", hfs).casefold() == target:
        return True
    ntfs = text.split(":", 1)[0].rstrip(" .").casefold()
    return ntfs == target or ntfs in short_names


@lru_cache(maxsize=1 << 16)  # names repeat across the trees of a history
def is_dotgit(name: bytes) -> bool:
    """Whether an entry called ``name`` is checked out as ``.git`` somewhere."""
    if b"\xe2" not in name and b"\xef" not in name and b"git" not in name.lower():
        return False  # the common case: no "git" and none of HFS+'s ignorable code points
    return _folds_to(name, ".git", ("git~1",))


@lru_cache(maxsize=1 << 16)  # the same few names (gitattributes.txt…) come back in every version of their tree
def is_special_name(name: bytes, base: str) -> bool:
    """Whether an entry called ``name`` is checked out as ``base`` (one of
    ``.gitmodules``, ``.gitattributes``, ``.gitignore``, ``.mailmap``) on
    some file system: case folding, HFS+ ignorables, NTFS short names."""
    short = base[1:7].casefold() + "~1"
    return _folds_to(name, base, (short,))


def tree_entries_fast(data: bytes, rawsz: int) -> list[tuple[bytes, bytes, bytes]]:
    """(mode, name, id) of every well-formed entry, found in C; malformed
    stretches are skipped (fsck's check_tree reports them)."""
    return tree_patterns(rawsz).entries.findall(data)
