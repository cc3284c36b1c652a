"""Which commit last brought each line of a file: what ``git blame REV --
PATH`` answers (git's default options: every parent followed, whole-file
renames found, no -M/-C moves inside or across files).

The work is a walk back from REV with *origins*: an origin is a file at a
commit (commit, path, blob), holding the lines of the final file it is
still suspected of ("entries": final line, line in the origin's blob,
count).  An origin is taken up once every commit after it has handed its
lines over (newest first: generation numbers when the commit-graph gives
them, commit dates otherwise — an origin that gets more lines after it was
taken up is simply taken up again with those), and:

* for each parent in order, the file's origin there: the same path when the
  parent holds a file of the same kind there (the commit's changed-path
  Bloom filter against its first parent answers "unchanged" without reading
  a tree), else the path it was renamed from (the whole trees compared,
  added and deleted files paired as git's rename detection pairs them:
  exact renames first, then by similarity at -M's 50%);
* a parent holding the very same blob takes every line, and nothing else is
  looked at; parents holding a blob an earlier parent holds are skipped;
* otherwise, parent by parent, the lines the diff (parent → this blob) finds
  unchanged move to that parent's origin (their line numbers in the
  parent's blob), the rest stay for the next parent;
* what is left after the last parent is this commit's: the answer for those
  lines.  A root commit keeps every line it still holds (a *boundary*
  unless ``show_root``).

The diff is the project's linear-space Myers (line_diff) with git's own
choices where several scripts are minimal — the xdiff pre-pass and its
indent heuristic — so that a line that could come from two places comes
from the one git picks.

Answers come as :class:`BlameGroup` runs as they are found (a UI fills
while the walk runs); :func:`coalesce` puts them in file order and joins
neighbours the way git prints them.  ``check`` is called now and then and
may raise (CancelledError) to stop.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from heapq import heappop, heappush
from itertools import count as counting
from itertools import islice
from stat import S_IFMT, S_ISDIR
from typing import TYPE_CHECKING, NamedTuple

from packscope.core import native
from packscope.core.errors import BadRevisionError, CorruptObjectError
from packscope.core.history.commit_changes import file_changes
from packscope.core.history.commit_reader import (
    CommitHeaderReader,
    CommitReader,
    StoreView,
    commit_facts,
    peel_to_commit,
)
from packscope.core.history.git_diff_heuristics import line_indent
from packscope.core.history.line_diff import NO_EOL, git_diff_flags, same_head, same_tail
from packscope.core.history.renames import DEFAULT_SCORE
from packscope.core.history.tree_diff import TreeReader, diff_trees
from packscope.core.history.tree_entries import TreeEntries
from packscope.core.objects import S_IFGITLINK

if TYPE_CHECKING:
    from packscope.core.history.graph_walk import WalkSource
    from packscope.core.history.walked import CommitInfo

Check = Callable[[], None]

CHECK_EVERY = 64  # commits between two calls of ``check``
TREE_CACHE = 64


def _no_check() -> None:
    return None


class BlameGroup(NamedTuple):
    """``length`` lines of the final file from ``final_start`` (0-based) came
    from ``commit``'s ``path``, where they are lines ``orig_start`` on."""

    final_start: int
    orig_start: int
    length: int
    commit: bytes
    path: bytes


@dataclass(slots=True)
class Origin:
    commit: bytes
    path: bytes
    blob: bytes
    mode: int
    entries: list[list[int]] = field(default_factory=list)  # [final, orig, count], any order
    previous: Origin | None = None  # the first parent's origin the lines were diffed against
    taken: bool = False  # taken up once already
    guilty: bool = False  # answers for some lines


class _Commit:
    __slots__ = ("date", "generation", "origins", "parents", "tree")

    def __init__(self, tree: bytes, parents: tuple[bytes, ...], date: int, generation: int) -> None:
        self.tree = tree
        self.parents = parents
        self.date = date
        self.generation = generation
        self.origins: dict[bytes, Origin] = {}  # path -> origin at this commit


@dataclass
class BlameResult:
    """What :meth:`Blame.run` leaves behind once it has ended."""

    final: Origin
    data: bytes  # the final file's bytes
    groups: list[BlameGroup]  # in file order, joined as git prints them
    boundaries: set[bytes]  # commits shown as boundaries (roots, unless show_root)
    previous: dict[tuple[bytes, bytes], tuple[bytes, bytes]]  # (commit, path) -> (commit, path) before
    paths_of: dict[bytes, set[bytes]]  # commit -> the paths it answers for


class Blame:
    """One blame of ``path`` at commit ``rev``: :meth:`run` yields groups."""

    def __init__(
        self,
        store: StoreView,
        *,
        source: WalkSource | None = None,
        check: Check = _no_check,
        show_root: bool = False,
    ) -> None:
        self.store = store
        self.fmt = store.fmt
        self.source = source
        quick: CommitReader = source.reader if source is not None else CommitHeaderReader(store)
        self.read = quick.read
        # the walk's own hook: one compiled call per commit while the graph answers
        self.info: CommitInfo = source.walk_options()["commit_info"] if source is not None else quick
        self.trees = TreeEntries(quick.read, store.fmt, cache_size=TREE_CACHE)
        self.check = check
        self.show_root = show_root
        self.commits: dict[bytes, _Commit] = {}
        self.lines: dict[bytes, int] = {}  # line text -> number, shared by every blob
        self.indents: dict[int, int] = {}  # line number -> its indentation (git's indent heuristic)
        self.next_id = 0  # above every line number given so far
        self.ids: dict[bytes, tuple[array[int], bytes]] = {}  # blob -> (its lines as numbers, bytes), while wanted
        self.boundaries: set[bytes] = set()
        self.guilty: list[Origin] = []
        self.examined = 0
        self.final: Origin | None = None
        self.data = b""
        self._bloom: dict[bytes, Callable[[bytes], bool] | None] = {}  # path -> "unchanged?" (None: no filters)

    # --- commits, trees, blobs ------------------------------------------------------

    def commit(self, oid: bytes) -> _Commit:
        c = self.commits.get(oid)
        if c is None:
            c = self.commits[oid] = _Commit(*commit_facts(self.store, self.info, oid))
        return c

    def peel(self, oid: bytes) -> bytes:
        return peel_to_commit(self.store, oid)

    def entry_at(self, tree: bytes, path: bytes) -> tuple[bytes, int] | None:
        """(blob, mode) of the file at ``path`` in ``tree``; None when there
        is none there (absent, a directory, a submodule)."""
        trees = self.trees
        parts = path.split(b"/")
        for part in parts[:-1]:
            e = trees.entry(tree, part)
            if e is None or not trees.is_dir(e):
                return None
            tree = e[2]
        e = trees.entry(tree, parts[-1])
        if e is None:
            return None
        mode = trees.mode(e[0])
        if S_ISDIR(mode) or S_IFMT(mode) == S_IFGITLINK:
            return None
        return e[2], mode

    def blob(self, oid: bytes) -> bytes:
        typ, data = self.read(oid)
        if typ != "blob":
            raise CorruptObjectError(f"expected a blob, found a {typ}", oid=oid.hex())
        return data

    def line_ids(self, blob: bytes) -> tuple[array[int], bytes]:
        got = self.ids.get(blob)
        if got is None:
            data = self.blob(blob)
            got = self.ids[blob] = (split_ids(data, self.lines, self.indents, self.next_id), data)
            self.next_id += len(got[0])
        return got

    def parent_ids(self, blob: bytes, child: array[int], child_data: bytes) -> tuple[array[int], bytes]:
        """``line_ids`` of a parent's blob, made from the child's where the
        two texts agree at their start and end (whole lines): only the
        lines between are split and numbered."""
        got = self.ids.get(blob)
        if got is not None:
            return got
        data = self.blob(blob)
        head, tail, start, end = same_lines(data, child_data)
        if head + tail < 64:
            ids = split_ids(data, self.lines, self.indents, self.next_id)
        else:
            middle = split_ids(data[start:end], self.lines, self.indents, self.next_id)
            ids = child[:head]
            ids.extend(middle)
            ids.extend(child[len(child) - tail :])
        self.next_id += len(ids)
        got = self.ids[blob] = (ids, data)
        return got

    # --- Bloom filters --------------------------------------------------------------------

    def bloom_unchanged(self, oid: bytes, path: bytes) -> bool:
        """True when the commit's changed-path filter (against its first
        parent) says ``path`` certainly did not change (the walk source's
        predicate: compiled when built)."""
        if self.source is None:
            return False
        if path not in self._bloom:
            self._bloom[path] = self.source.first_parent_unchanged([path])
        check = self._bloom[path]
        return check is not None and check(oid)

    # --- origins ---------------------------------------------------------------------------

    def origin(self, commit: bytes, path: bytes, blob: bytes, mode: int) -> Origin:
        c = self.commit(commit)
        o = c.origins.get(path)
        if o is None:
            o = c.origins[path] = Origin(commit, path, blob, mode)
        return o

    def parent_origin(self, child: Origin, nth: int, parent: bytes) -> Origin | None:
        """The file's origin in ``parent`` (git's: same path, else the path a
        rename came from); None when the parent has no version of it."""
        pc = self.commit(parent)
        known = pc.origins.get(child.path)
        if known is not None and S_IFMT(known.mode) == S_IFMT(child.mode):
            return known
        if nth == 0 and self.bloom_unchanged(child.commit, child.path):
            return self.origin(parent, child.path, child.blob, child.mode)
        got = self.entry_at(pc.tree, child.path)
        if got is not None:
            if S_IFMT(got[1]) != S_IFMT(child.mode):
                return None  # a type change (file <-> symlink): git follows no further
            return self.origin(parent, child.path, *got)
        source = self.rename_source(pc.tree, self.commit(child.commit).tree, child)
        if source is None:
            return None
        return self.origin(parent, *source)

    def rename_source(self, old_tree: bytes, new_tree: bytes, child: Origin) -> tuple[bytes, bytes, int] | None:
        """(path, blob, mode) in ``old_tree`` that git's rename detection
        pairs with ``child``'s path in ``new_tree``."""
        deleted: list[tuple[bytes, bytes, int]] = []
        added: list[tuple[bytes, bytes, int]] = []
        for ch in diff_trees(self.store, old_tree, new_tree, reader=TreeReader(self.store)):
            if ch.status == "D" and ch.old_oid is not None and S_IFMT(ch.old_mode) != S_IFGITLINK:
                deleted.append((ch.path, ch.old_oid, ch.old_mode))
            elif ch.status == "A" and ch.new_oid is not None and S_IFMT(ch.new_mode) != S_IFGITLINK:
                added.append((ch.path, ch.new_oid, ch.new_mode))
        if not deleted or not any(p == child.path for p, _, _ in added):
            return None
        # git blame's rename detection: the whole diff's, exact renames first,
        # then by similarity at -M's default 50% (core/history/renames.py)
        for fc in file_changes(self.store, old_tree, new_tree, minimum=DEFAULT_SCORE):
            if fc.status == "R" and fc.path == child.path and fc.old_path is not None and fc.old_oid is not None:
                return fc.old_path, fc.old_oid, fc.old_mode
        return None

    # --- the walk ---------------------------------------------------------------------------

    def start(self, rev: bytes, path: bytes) -> Origin:
        commit = self.peel(rev)
        c = self.commit(commit)
        got = self.entry_at(c.tree, path)
        if got is None:
            raise BadRevisionError(
                f"no such path {path.decode('utf-8', 'replace')!r} in {commit.hex()}",
                remedy="Name a file of that revision (git ls-tree -r REV shows them).",
            )
        final = self.origin(commit, path, *got)
        self.data = self.blob(final.blob)
        self.final = final
        ids = split_ids(self.data, self.lines, self.indents, self.next_id)
        self.next_id += len(ids)
        self.ids[final.blob] = (ids, self.data)
        if len(ids):
            final.entries.append([0, 0, len(ids)])
        return final

    def run(self, rev: bytes, path: bytes) -> Iterator[BlameGroup]:
        """Groups as they are found (not in file order, not joined); the
        file is read (and a missing one refused) before this returns."""
        self.start(rev, path)
        return self.run_started()

    def run_started(self) -> Iterator[BlameGroup]:
        """:meth:`run` after :meth:`start`."""
        final = self.final
        assert final is not None
        heap: list[tuple[int, int, int, bytes]] = []
        queued: set[bytes] = set()
        counter = 0

        def queue(o: Origin) -> None:
            nonlocal counter
            if o.commit not in queued:
                c = self.commit(o.commit)
                queued.add(o.commit)
                heappush(heap, (-c.generation, -c.date, counter, o.commit))
                counter += 1

        if final.entries:
            queue(final)
        while heap:
            oid = heappop(heap)[3]
            queued.discard(oid)
            self.examined += 1
            if self.examined % CHECK_EVERY == 0:
                self.check()
            c = self.commits[oid]
            for o in list(c.origins.values()):
                if not o.entries:
                    continue
                yield from self.take_up(o, c, queue)

    def take_up(self, o: Origin, c: _Commit, queue: Callable[[Origin], None]) -> Iterator[BlameGroup]:
        entries, o.entries = o.entries, []
        o.taken = True
        if not c.parents:
            if not self.show_root:
                self.boundaries.add(o.commit)
        else:
            kept: list[Origin] = []
            for nth, p in enumerate(c.parents):
                po = self.parent_origin(o, nth, p)
                if po is None:
                    continue
                if po.blob == o.blob:
                    po.entries.extend(entries)
                    queue(po)
                    return  # (the blob's lines go on with the parent's origin)
                if any(k.blob == po.blob for k in kept):
                    continue
                kept.append(po)
            for po in kept:
                if o.previous is None:
                    o.previous = po
                moved, entries = self.split(po, o, entries)
                if moved:
                    po.entries.extend(moved)
                    queue(po)
                if not entries:
                    break
        self._done_with(o)
        if entries:
            if not o.guilty:
                o.guilty = True
                self.guilty.append(o)
            for final, orig, count in entries:
                yield BlameGroup(final, orig, count, o.commit, o.path)

    def _done_with(self, o: Origin) -> None:
        # The blob's lines are wanted again only by another origin of the same blob.
        if o is not self.final:
            self.ids.pop(o.blob, None)

    def split(self, parent: Origin, o: Origin, entries: list[list[int]]) -> tuple[list[list[int]], list[list[int]]]:
        """(entries moved to ``parent``, in its line numbers; entries that
        stay): lines the diff parent → o leaves unchanged move."""
        b, b_data = self.line_ids(o.blob)
        a, a_data = self.parent_ids(parent.blob, b, b_data)
        # git's blame diffs without context, and so cuts the common tail
        # first (whole lines, found in blocks of bytes): its pre-pass then
        # counts lines in what is left.
        cut = common_tail_lines(a_data, b_data)
        if cut:
            a, b = a[: len(a) - cut], b[: len(b) - cut]
        deleted, inserted = git_diff_flags(a, b, self.check, self.indents)
        if cut:
            deleted[-1:] = bytes(cut + 1)
            inserted[-1:] = bytes(cut + 1)
        return moves(entries, deleted, inserted)

    # --- the answer ----------------------------------------------------------------------

    def previous_of(self, commit: bytes, path: bytes) -> tuple[bytes, bytes] | None:
        """(commit, path) the lines of ``commit``'s ``path`` were compared
        with (porcelain's ``previous``; where "blame the parent" goes)."""
        c = self.commits.get(commit)
        o = c.origins.get(path) if c is not None else None
        if o is None or o.previous is None:
            return None
        return o.previous.commit, o.previous.path

    def result(self, groups: list[BlameGroup]) -> BlameResult:
        assert self.final is not None
        previous = {}
        paths_of: dict[bytes, set[bytes]] = {}
        for o in self.guilty:
            paths_of.setdefault(o.commit, set()).add(o.path)
            if o.previous is not None:
                previous[(o.commit, o.path)] = (o.previous.commit, o.previous.path)
        return BlameResult(self.final, self.data, coalesce(groups), set(self.boundaries), previous, paths_of)


def split_ids(data: bytes, table: dict[bytes, int], indents: dict[int, int], base: int = 0) -> array[int]:
    """The blob's lines as numbers (equal lines, equal numbers, in one
    table shared by the blobs of one blame; ``indents`` gets each new
    line's indentation); a last line without a newline differs from the
    same text with one.  Numbers of new lines come from the table's size
    ``base`` plus their place (unique, not consecutive: the look-ups run at
    C speed); the caller moves ``base`` past ``len(ids)`` for the next blob."""
    compiled = native.backend
    if compiled is not None:  # the same numbers, in C
        got = compiled.split_ids(data, table, indents, base)
        if got is not None:
            return got
    parts = data.split(b"\n")
    last = parts.pop()
    if last:
        parts.append(last + NO_EOL)
    known = len(table)
    ids = array("i", map(table.setdefault, parts, counting(base)))
    grown = len(table) - known
    if grown:
        for p in islice(reversed(table), grown):
            indents[table[p]] = line_indent(p.removesuffix(NO_EOL))
    return ids


def moves(entries: list[list[int]], deleted: bytearray, inserted: bytearray) -> tuple[list[list[int]], list[list[int]]]:
    """(entries that move to the parent, in its line numbers; entries that
    stay) of an origin's ``entries`` after the diff parent -> origin
    (``deleted``/``inserted``): the lines the diff leaves unchanged move.
    The entries are taken in order of their lines, neighbours joined."""
    compiled = native.backend
    if compiled is not None:  # the same cuts, in C
        got = compiled.blame_moves(entries, deleted, inserted)
        if got is not None:
            return got
    # Runs of unchanged lines: (start in o, start in parent, length).
    same = unchanged_runs(deleted, inserted)
    moved: list[list[int]] = []
    stay: list[list[int]] = []
    entries = _joined(entries)
    k = 0
    nruns = len(same)
    for final, orig, count in entries:
        end = orig + count
        while k < nruns and same[k][0] + same[k][2] <= orig:
            k += 1
        pos = orig
        j = k
        while pos < end:
            if j >= nruns or same[j][0] >= end:
                stay.append([final + pos - orig, pos, end - pos])
                break
            rs, ps, rn = same[j]
            if rs > pos:
                stay.append([final + pos - orig, pos, rs - pos])
                pos = rs
            stop = rs + rn if rs + rn < end else end
            moved.append([final + pos - orig, ps + pos - rs, stop - pos])
            pos = stop
            if stop == rs + rn:
                j += 1
    return moved, stay


def _joined(entries: list[list[int]]) -> list[list[int]]:
    """Entries in order of their lines in the origin, neighbours whose
    final lines follow on joined (a diff upstream cut them apart)."""
    entries.sort(key=_orig)
    out = [entries[0]] if entries else []
    for e in entries[1:]:
        last = out[-1]
        if last[1] + last[2] == e[1] and last[0] + last[2] == e[0]:
            out[-1] = [last[0], last[1], last[2] + e[2]]
        else:
            out.append(e)
    return out


def _orig(e: list[int]) -> int:
    return e[1]


def same_lines(a: bytes, b: bytes) -> tuple[int, int, int, int]:
    """(whole lines equal at the start, at the end, and where the lines
    between start and end in ``a``) of texts ``a`` and ``b``; the two runs
    never overlap."""
    compiled = native.backend
    if compiled is not None:
        got = compiled.same_lines(a, b)
        if got is not None:
            return got
    p = same_head(a, 0, b, 0, min(len(a), len(b)))
    head = a.count(b"\n", 0, p)
    head_off = a.rfind(b"\n", 0, p) + 1  # (0 when head is 0)
    s = min(same_tail(a, len(a), b, len(b), min(len(a), len(b))), len(a) - head_off, len(b) - head_off)
    if s == 0:
        return head, 0, head_off, len(a)
    start = len(b) - s
    a_start = len(a) - s
    if not ((start == 0 or b[start - 1] == 10) and (a_start == 0 or a[a_start - 1] == 10)):
        nl = b.find(b"\n", start)  # a newline inside the common part: the same in both
        if nl < 0:
            return head, 0, head_off, len(a)
        a_start += nl + 1 - start
        start = nl + 1
    tail = b.count(b"\n", start) + (1 if start < len(b) and not b.endswith(b"\n") else 0)
    return head, tail, head_off, a_start


TAIL_BLOCK = 1024


def common_tail_lines(a: bytes, b: bytes) -> int:
    """How many whole lines git's context-free diff cuts from the end of
    both texts before diffing: the common tail in blocks of 1024 bytes,
    given back up to the first newline in it."""
    compiled = native.backend
    if compiled is not None:
        cut = compiled.common_tail_lines(a, b)
        if cut is not None:
            return cut
    smaller = min(len(a), len(b))
    trimmed = 0
    la, lb = len(a), len(b)
    step = TAIL_BLOCK
    while trimmed + step <= smaller and a[la - trimmed - step : la - trimmed] == b[lb - trimmed - step : lb - trimmed]:
        trimmed += step
    if not trimmed:
        return 0
    nl = a.find(b"\n", la - trimmed, la)
    if nl < 0:
        return 0
    # kept: a[: nl + 1]; the lines after it are cut
    return a.count(b"\n", nl + 1) + (0 if a.endswith(b"\n") else 1)


def unchanged_runs(deleted: bytearray, inserted: bytearray) -> list[tuple[int, int, int]]:
    """(start in the new side, start in the old side, length) of each run of
    lines the diff leaves unchanged, in order."""
    n, m = len(deleted) - 1, len(inserted) - 1
    runs = []
    i = j = 0
    while i < n and j < m:
        di = deleted.find(1, i)
        dj = inserted.find(1, j)
        k = min((n if di < 0 else di) - i, (m if dj < 0 else dj) - j)
        if k > 0:
            runs.append((j, i, k))
            i += k
            j += k
        i = deleted.find(0, i)
        j = inserted.find(0, j)
        if i < 0:
            i = n
        if j < 0:
            j = m
    return runs


def coalesce(groups: list[BlameGroup]) -> list[BlameGroup]:
    """In file order, neighbours from the same origin whose lines follow on
    there joined into one group (git's output groups)."""
    out: list[BlameGroup] = []
    for g in sorted(groups):
        if out:
            last = out[-1]
            if (
                last.commit == g.commit
                and last.path == g.path
                and last.final_start + last.length == g.final_start
                and last.orig_start + last.length == g.orig_start
            ):
                out[-1] = last._replace(length=last.length + g.length)
                continue
        out.append(g)
    return out


def line_starts(data: bytes) -> list[int]:
    """Where each line of ``data`` starts, and where one after the last would."""
    starts = [0]
    pos = data.find(b"\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = data.find(b"\n", pos + 1)
    if starts[-1] != len(data):
        starts.append(len(data))
    return starts


def blame(
    store: StoreView,
    rev: bytes,
    path: bytes,
    *,
    source: WalkSource | None = None,
    check: Check = _no_check,
    show_root: bool = False,
) -> BlameResult:
    """The whole blame of ``path`` at ``rev`` (see :class:`Blame` for one
    that hands out groups as they are found)."""
    b = Blame(store, source=source, check=check, show_root=show_root)
    groups = list(b.run(rev, path))
    return b.result(groups)
