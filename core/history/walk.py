"""History walks in git's orders, as lazy iterators.

This reproduces what ``git log`` (git 2.39) lists and in which order, including
the places where git's answer depends on *when* it learns things:

* The default order is a queue on committer date where equal dates keep
  insertion order (git's ``commit_list_insert_by_date``).  A parent newer than
  its child (clock skew) simply jumps the queue, as in git.
* Start commits enter the queue sorted by date, stably in the order given:
  the caller passes them in git's argument order (for ``--all``: refs sorted
  by name, then HEAD; for ``A..B``: A first).
* Exclusions make the walk *limited* (git's ``limit_list``): commits are
  marked UNINTERESTING as the walk meets them, marking spreads only through
  commits already parsed, and the walk stops once everything queued is
  uninteresting and five more (git's SLOP) commits confirm it — so with
  clock skew the same commits leak through as in git.
* ``--date-order`` and ``--topo-order`` also walk limited and then sort
  (git's ``sort_in_topological_order``: a date heap or a LIFO stack) —
  unless there are generation numbers (``generation_numbers=True``: a
  commit-graph feeds ``commit_info``) and no exclusions: then git's
  incremental topological walk (packscope.core.history.topo_walk) streams them, and its order
  can differ from the sort's (with ``--first-parent`` it counts first
  parents only).
* Path limiting uses git's default simplification: a commit TREESAME to a
  parent is hidden, a merge TREESAME to some relevant parent keeps only that
  parent (so only that side is walked), a root commit with nothing under the
  paths is hidden.

Unlimited walks stream: their first commits come out after reading a
handful of objects, however long the history.  Limited walks (as in git)
must see every interesting commit before the first is shown.

Commit data comes from ``commit_info(oid)`` when given (a commit-graph or
packscope.core.history.commit_reader: ``(tree, parents, commit_time[, generation])``, or None
when it does not know the commit), else from the object store via
:func:`commit_header_fast`.  A commit without a generation has git's
GENERATION_NUMBER_INFINITY.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from heapq import heappop, heappush
from itertools import islice
from typing import TYPE_CHECKING, Any, NamedTuple

from packscope.core import native
from packscope.core.errors import CorruptObjectError, LookupFailedError
from packscope.core.history.plain_walk import PlainWalk
from packscope.core.history.topo_walk import incremental_topo_walk, sort_in_topological_order
from packscope.core.history.walk_flags import (
    ADDED,
    BOTTOM,
    GENERATION_INFINITY,
    QUEUED,
    SEEN,
    SHOWN,
    TREESAME,
    UNINTERESTING,
)
from packscope.core.history.walked import CommitFacts, CommitInfo, WalkedCommit, tuple_new
from packscope.core.objects import ObjectReader, commit_header_fast, parse_tag

if TYPE_CHECKING:
    from packscope.core.history.tree_entries import EntryPathLimiter

# git's incremental topological walk over commit-graph positions is the
# backend's graph_topo_start / graph_topo_next (core/native_c/graph_plain.c).

# Object flags, named after git's: the semantics follow revision.c.
SLOP = 5  # git's: commits to look at after everything seems uninteresting
ORDERS = ("default", "date", "topo")


class Excluded(bytes):
    """An exclusion (``^oid``) placed among the starts, for callers that must
    reproduce a command line's order exactly (e.g. ``B ^A``)."""

    __slots__ = ()


class _Node:
    __slots__ = ("date", "flags", "generation", "oid", "parents", "poids", "tree")

    def __init__(self, oid: bytes) -> None:
        self.oid = oid
        self.flags = 0
        self.parents: list[_Node] | None = None  # None until parsed, as in git
        self.poids: tuple[bytes, ...] = ()  # the parents' ids, kept in step with parents
        self.date = 0
        self.tree: bytes | None = None
        # git reads 0 for a commit named by a parsed graph commit but not
        # parsed itself; parsing sets the real one (or infinity).
        self.generation = 0


def walk(
    store: ObjectReader,
    starts: Iterable[bytes],
    *,
    exclude: Iterable[bytes] = (),
    order: str = "default",
    first_parent: bool = False,
    max_count: int | None = None,
    paths: Iterable[bytes | str] | None = None,
    commit_info: CommitInfo | None = None,
    first_parent_unchanged: Callable[[bytes], bool] | None = None,
    generation_numbers: bool = False,
) -> Iterator[WalkedCommit]:
    """Commits as ``git log`` lists them.

    ``starts`` are commit (or tag) ids; an :class:`Excluded` item among them
    is an exclusion at that position.  ``exclude`` ids are exclusions placed
    before all starts, as ``git log A..B`` and ``git log ^A B`` order them.
    ``order`` is "default", "date" (``--date-order``) or "topo"
    (``--topo-order``); ``paths`` limits history to literal paths.
    ``first_parent_unchanged(oid)`` may answer True when a changed-path
    filter proves the commit changed none of ``paths`` against its first
    parent (git's Bloom-filter shortcut; False means "unknown").
    ``generation_numbers`` says that ``commit_info`` gives generations for
    the commits it knows (git's generation_numbers_enabled()).
    """
    return _started(
        store,
        starts,
        exclude=exclude,
        order=order,
        first_parent=first_parent,
        max_count=max_count,
        paths=paths,
        commit_info=commit_info,
        first_parent_unchanged=first_parent_unchanged,
        generation_numbers=generation_numbers,
    )[1]


def walk_ids(
    store: ObjectReader,
    starts: Iterable[bytes],
    *,
    exclude: Iterable[bytes] = (),
    order: str = "default",
    first_parent: bool = False,
    max_count: int | None = None,
    paths: Iterable[bytes | str] | None = None,
    commit_info: CommitInfo | None = None,
    first_parent_unchanged: Callable[[bytes], bool] | None = None,
    generation_numbers: bool = False,
) -> Iterator[bytes]:
    """:func:`walk`'s commit ids alone (``log --format=%H``), in runs: each
    item the raw ids of one or more walked commits concatenated, in the
    walk's order; arguments as :func:`walk`'s.  The plain walk (the default
    order without paths or exclusions) hands out a batch per compiled call,
    over a commit-graph without an object per commit; other walks one id
    per run."""
    w, it = _started(
        store,
        starts,
        exclude=exclude,
        order=order,
        first_parent=first_parent,
        max_count=None,
        paths=paths,
        commit_info=commit_info,
        first_parent_unchanged=first_parent_unchanged,
        generation_numbers=generation_numbers,
        ids=True,
    )
    runs = it if w.plain else map(_oid_of, it)
    if max_count is not None and max_count >= 0:
        return _first_ids(runs, max_count, w.fmt.rawsz)
    return runs


def _oid_of(entry: WalkedCommit) -> bytes:
    return entry.oid


def _first_ids(runs: Iterator[bytes], count: int, rawsz: int) -> Iterator[bytes]:
    """The runs of ids cut after ``count`` ids."""
    if count == 0:
        return
    left = count * rawsz
    for run in runs:
        if len(run) >= left:
            yield run[:left]
            return
        left -= len(run)
        yield run


class GraphWalk(NamedTuple):
    """A walk for ``git log --graph``: ``commits`` in git's order with their
    parents *rewritten* (under a path limit, each parent is the nearest
    ancestor the log shows, as git's parent rewriting makes it), and
    ``shows(oid)``: whether the log shows that commit (git draws an edge
    only to a parent it shows; an excluded side ends)."""

    commits: Iterator[WalkedCommit]
    shows: Callable[[bytes], bool]


def graph_walk(
    store: ObjectReader,
    starts: Iterable[bytes],
    *,
    exclude: Iterable[bytes] = (),
    order: str = "topo",
    first_parent: bool = False,
    max_count: int | None = None,
    paths: Iterable[bytes | str] | None = None,
    commit_info: CommitInfo | None = None,
    first_parent_unchanged: Callable[[bytes], bool] | None = None,
    generation_numbers: bool = False,
) -> GraphWalk:
    """:func:`walk` as ``git log --graph`` walks (``--graph`` implies
    ``--topo-order``; ``--date-order`` may be asked for instead): parents
    rewritten, and a merge that changed nothing under the paths still shown
    when two of its parents are walked (it ties the lines together)."""
    if order == "default":
        order = "topo"
    w, it = _started(
        store,
        starts,
        exclude=exclude,
        order=order,
        first_parent=first_parent,
        max_count=max_count,
        paths=paths,
        commit_info=commit_info,
        first_parent_unchanged=first_parent_unchanged,
        generation_numbers=generation_numbers,
        rewrite=True,
    )
    w.graphed = True  # (before the first row: the walk's generator has not started)
    return GraphWalk(it, w.shows)


def _started(
    store: ObjectReader,
    starts: Iterable[bytes],
    *,
    exclude: Iterable[bytes],
    order: str,
    first_parent: bool,
    max_count: int | None,
    paths: Iterable[bytes | str] | None,
    commit_info: CommitInfo | None,
    first_parent_unchanged: Callable[[bytes], bool] | None,
    generation_numbers: bool,
    rewrite: bool = False,
    ids: bool = False,
) -> tuple[_RevWalk, Iterator[Any]]:
    """The walk and its iterator (``ids``: of runs of ids when the walk is
    plain, ``w.plain``; of walked commits otherwise)."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, not {order!r}")
    tips: list[tuple[bytes, bool]] = [(bytes(o), True) for o in exclude]
    tips += [(bytes(o), isinstance(o, Excluded)) for o in starts]
    w = _RevWalk(store, commit_info, first_parent, paths, first_parent_unchanged)
    w.rewrite = rewrite and w.limiter is not None  # (without paths no parent is rewritten)
    it: Iterator[Any]  # (WalkedCommit, or runs of ids: bytes)
    if order == "default" and w.limiter is None and not any(excluded for _, excluded in tips):
        w.plain = True
        it = w.run_plain_ids(tips) if ids else w.run_plain(tips)  # (log --all's walk, and every plain log's)
    else:
        it = w.run(tips, order, generation_numbers and commit_info is not None)
    if max_count is not None and max_count >= 0:
        it = islice(it, max_count)
    return w, it


class _RevWalk(PlainWalk):
    def __init__(
        self,
        store: ObjectReader,
        commit_info: CommitInfo | None,
        first_parent: bool,
        paths: Iterable[bytes | str] | None,
        hint: Callable[[bytes], bool] | None,
    ) -> None:
        self.store = store
        self.fmt = store.fmt
        self.commit_info = commit_info
        self.first_parent = first_parent
        self.limiter: EntryPathLimiter | None = None
        if paths:
            from packscope.core.history.tree_entries import EntryPathLimiter  # (only path-limited walks compare trees)

            self.limiter = EntryPathLimiter(store.read, store.fmt, paths)
        self.hint = hint if self.limiter is not None else None
        self.nodes: dict[bytes, _Node] = {}
        self.queue: list[tuple[int, int, _Node]] = []  # heap of (-date, insertion number, node)
        self.inserted = 0
        self.interesting_queued = 0  # non-UNINTERESTING nodes in the queue
        self.tag_data: dict[bytes, bytes] = {}  # tips read as tags, waiting to be peeled
        self.declined: set[bytes] = set()  # ids the hook did not answer (run_plain asks it once)
        self.rewrite = False  # parents rewritten to the nearest shown ancestors (log --graph with paths)
        self.graphed = False  # log --graph's walk: ``shows`` is asked of any node until the end
        self.is_limited = False  # every commit processed before the first is shown (git's revs->limited)
        self.plain = False  # run by run_plain (the default order without paths or exclusions)

    # --- commits ------------------------------------------------------------

    def lookup(self, oid: bytes) -> _Node:
        node = self.nodes.get(oid)
        if node is None:
            node = self.nodes[oid] = _Node(oid)
        return node

    def parse(self, node: _Node, data: bytes | None = None, info: CommitFacts | None = None) -> None:
        """Fill in the commit (``data``: its content, or ``info``: the
        commit_info hook's answer, when already read)."""
        if node.parents is not None:
            return
        if info is None and data is None and self.commit_info is not None:
            info = self.commit_info(node.oid)
        if info is None:
            if data is None:
                typ, data = self.store.read(node.oid)
                if typ != "commit":
                    raise CorruptObjectError(f"expected a commit, found a {typ}", oid=node.oid.hex())
            node.tree, parents, node.date = commit_header_fast(data, self.fmt, node.oid)
            node.generation = GENERATION_INFINITY
        else:
            node.tree, parents, node.date = info[0], info[1], info[2]
            node.generation = info[3] if len(info) > 3 else GENERATION_INFINITY
        node.poids = parents if type(parents) is tuple else tuple(parents)
        nodes = self.nodes
        out = []
        for p in parents:  # lookup() inlined: this runs for every parent of every commit
            n = nodes.get(p)
            if n is None:
                n = nodes[p] = _Node(p)
            out.append(n)
        node.parents = out

    def parse_gently(self, node: _Node) -> bool:
        try:
            self.parse(node)
            return True
        except (LookupFailedError, CorruptObjectError):
            return False

    # --- the queue ------------------------------------------------------------

    def push(self, node: _Node) -> None:
        heappush(self.queue, (-node.date, self.inserted, node))
        self.inserted += 1
        node.flags |= QUEUED
        if not node.flags & UNINTERESTING:
            self.interesting_queued += 1

    def pop(self) -> _Node:
        node = heappop(self.queue)[2]
        node.flags &= ~QUEUED
        if not node.flags & UNINTERESTING:
            self.interesting_queued -= 1
        return node

    def mark_uninteresting(self, node: _Node) -> None:
        if not node.flags & UNINTERESTING:
            node.flags |= UNINTERESTING
            if node.flags & QUEUED:
                self.interesting_queued -= 1

    def mark_parents_uninteresting(self, node: _Node) -> None:
        # Spreads only through parsed commits: an unparsed one is marked and
        # its own parents wait until the walk parses it (git does the same,
        # and the stopping point depends on it).
        stack = list(node.parents or ())
        while stack:
            p = stack.pop()
            if p.flags & UNINTERESTING:
                continue
            self.mark_uninteresting(p)
            if p.parents:
                stack.extend(p.parents)

    # --- setup ------------------------------------------------------------------

    def run(self, tips: Sequence[tuple[bytes, bool]], order: str, generations: bool) -> Iterator[WalkedCommit]:
        # git parses every argument before it peels or marks anything ...
        pending = []
        for oid, excluded in tips:
            node = self.lookup(oid)
            typ = self.tip_type(node)
            if typ == "commit":
                self.parse(node)
                if excluded:
                    node.flags |= UNINTERESTING | BOTTOM
            pending.append((node, typ, excluded))
        # ... then, in argument order, peels tags and spreads exclusions.
        start: list[_Node] = []
        # git limits --topo-order/--date-order walks unless generation
        # numbers allow the incremental walk.
        limited = order != "default" and not generations
        for node, typ, excluded in pending:
            if typ == "tag":
                peeled = self.peel(node.oid, excluded)
                if peeled is None:
                    continue
                node = peeled
                # git tests the flags of the argument (the tag), not of the commit
                spread = excluded
            elif typ == "commit":
                spread = bool(node.flags & UNINTERESTING)
            else:
                continue  # trees and blobs have no history
            if spread:
                self.mark_parents_uninteresting(node)
                limited = True
            if not node.flags & SEEN:
                node.flags |= SEEN
                start.append(node)
        start.sort(key=lambda n: -n.date)  # stable, like git's merge sort
        self.is_limited = limited
        if not limited and order != "default":
            return self.topo_stream(start, by_date=order == "date")
        for node in start:
            self.push(node)
        if not limited:
            return self.stream() if self.limiter is None else self.stream_paths()
        return self.limited(order)

    def stream_paths(self) -> Iterator[WalkedCommit]:
        """:meth:`stream` with a path limiter, compiled over the commit-graph's
        positions when the backend is built, the graph is sound and holds
        every queued commit (core/native_c/graph_plain.c, graph_walk_paths:
        the Bloom shortcut asked by position, ``limiter.changed`` and
        ``limiter.touches`` called back only where it cannot answer); else,
        or traced, :meth:`stream` (the reference). Nothing is read before
        the first commit is asked for."""
        b = native.backend
        info = self.commit_info
        limiter = self.limiter
        on_graph = getattr(info, "walk_graph", None) if b is not None else None
        packs_of = getattr(info, "walk_packs", None)
        # the hint's filters by position (a hint without them: the reference asks it)
        blooms = () if self.hint is None else getattr(self.hint, "blooms", None)
        if b is None or on_graph is None or packs_of is None or limiter is None or blooms is None:
            return self.stream()

        def run() -> Iterator[WalkedCommit]:
            edges = on_graph()
            packs = packs_of() if edges is not None else None
            graph = packs[3] if packs is not None else None
            heap, bits = bytearray(), bytearray()
            if packs is None or graph is None or edges is None:
                yield from self.stream()
                return
            hexsz = packs[1]
            # (the queue is a heap of (-date, number, node): the same order of entries)
            queue = [(key, number, node.oid, node.tree or b"", node.poids) for key, number, node in self.queue]
            if any(not e[3] for e in queue) or not b.graph_walk_enter(
                queue, {e[2] for e in queue}, graph, heap, bits, hexsz
            ):
                yield from self.stream()
                return
            counter, batch = self.inserted, 16
            changed, touches = limiter.changed, limiter.touches
            while heap:
                walked, counter, answers, error = b.graph_walk_paths(
                    heap,
                    bits,
                    counter,
                    graph,
                    edges,
                    self.first_parent,
                    WalkedCommit,
                    hexsz,
                    batch,
                    blooms,
                    changed,
                    touches,
                )
                self._count_graph_answers(answers)
                yield from walked
                if error is not None:
                    raise error
                batch = min(2 * batch, 1024)

        return run()

    def topo_stream(self, start: list[_Node], by_date: bool) -> Iterator[WalkedCommit]:
        """git's incremental topological walk (packscope.core.history.topo_walk,
        the reference), compiled over the commit-graph's positions when the
        walk has no paths, the graph is sound and holds every start
        (core/native_c/graph_plain.c); nothing is read before the first
        commit is asked for."""
        info = self.commit_info
        b = native.backend
        on_graph = getattr(info, "walk_graph", None) if b is not None else None
        packs_of = getattr(info, "walk_packs", None)
        if on_graph is None or packs_of is None or self.limiter is not None:
            return incremental_topo_walk(self, start, by_date=by_date)

        def run() -> Iterator[WalkedCommit]:
            edges = on_graph()
            packs = packs_of() if edges is not None else None
            got = None
            if packs is not None and packs[3] is not None and edges is not None and b is not None:
                graph, hexsz = packs[3], packs[1]
                got = b.graph_topo_start(graph, edges, hexsz, [n.oid for n in start], by_date, self.first_parent)
            if got is None or b is None:
                yield from incremental_topo_walk(self, start, by_date=by_date)
                return
            state, answers = got
            self._count_graph_answers(answers)
            batch = 16
            while True:
                walked, answers = b.graph_topo_next(
                    graph, edges, hexsz, state, by_date, self.first_parent, WalkedCommit, batch
                )
                self._count_graph_answers(answers)
                if not walked:
                    return
                yield from walked
                batch = min(2 * batch, 1024)

        return run()

    def tip_type(self, node: _Node) -> str:
        if node.parents is not None:
            return "commit"
        info = self.commit_info(node.oid) if self.commit_info is not None else None
        if info is not None:
            self.parse(node, info=info)  # one read, not two
            return "commit"
        typ, data = self.store.read(node.oid)
        if typ == "commit":
            self.parse(node, data)  # one read, not two
        elif typ == "tag":
            self.tag_data[node.oid] = data  # peel() needs it next
        return typ

    def peel(self, oid: bytes, excluded: bool) -> _Node | None:
        flags = UNINTERESTING | BOTTOM if excluded else 0
        for _ in range(64):
            data = self.tag_data.pop(oid, None)
            try:
                typ, data = ("tag", data) if data is not None else self.store.read(oid)
            except LookupFailedError:
                if excluded:
                    return None
                raise
            if typ == "tag":
                oid = parse_tag(data, self.fmt, oid).object
                continue
            if typ != "commit":
                return None
            node = self.lookup(oid)
            self.parse(node)
            if flags:
                self.mark_uninteresting(node)
                node.flags |= BOTTOM
            return node
        raise CorruptObjectError("tag chain too long (a loop?)", oid=oid.hex())

    # --- walking ---------------------------------------------------------------

    def process_parents(self, node: _Node, queue: bool = True) -> None:
        """git's process_parents: simplify, parse the parents, queue the new
        ones (``queue=False``: only mark them seen, for the topo walk)."""
        if node.flags & ADDED:
            return
        node.flags |= ADDED
        parents = node.parents
        if parents is None:
            raise _unread(node)
        if node.flags & UNINTERESTING:
            # Keep the uninteresting set maximal: no simplification here.
            for p in parents:
                self.mark_uninteresting(p)
                if not self.parse_gently(p):
                    continue
                if p.parents:
                    self.mark_parents_uninteresting(p)
                if p.flags & SEEN:
                    continue
                p.flags |= SEEN
                self.push(p)
            return
        if self.limiter is not None:
            self.simplify(node)
            if node.parents is not None:  # simplify may keep just one
                parents = node.parents
        for p in parents:
            self.parse(p)
            if not p.flags & SEEN:
                p.flags |= SEEN
                if queue:
                    self.push(p)
            if self.first_parent:
                break

    def simplify(self, node: _Node) -> None:
        """git's try_to_simplify_commit with default history simplification."""
        limiter = self.limiter
        if limiter is None or node.tree is None:
            return
        if not node.parents:
            if not limiter.touches(node.tree):
                node.flags |= TREESAME
            return
        relevant_parents = 0
        relevant_change = irrelevant_change = False
        for nth, p in enumerate(node.parents):
            relevant = (p.flags & (UNINTERESTING | BOTTOM)) != UNINTERESTING
            if relevant:
                relevant_parents += 1
            if nth == 1 and self.first_parent:
                break  # compare only with the first parent (and count the second, as git does)
            self.parse(p)
            if nth == 0 and self.hint is not None and self.hint(node.oid):
                same = True
            else:
                same = not limiter.changed(p.tree, node.tree)
            if same:
                if not relevant:
                    continue  # an uninteresting side must not hide the other sides
                node.parents = [p]
                node.poids = (p.oid,)
                node.flags |= TREESAME
                return
            if relevant:
                relevant_change = True
            else:
                irrelevant_change = True
        if relevant_change if relevant_parents else irrelevant_change:
            node.flags &= ~TREESAME
        else:
            node.flags |= TREESAME

    def shown(self, node: _Node) -> bool:
        if node.flags & (SHOWN | UNINTERESTING):
            return False
        if self.limiter is not None and node.flags & TREESAME:
            # with rewritten parents a merge between two walked lines stays, to tie them
            return self.rewrite and sum(1 for p in node.parents or () if _relevant(p)) >= 2
        return True

    def shows(self, oid: bytes) -> bool:
        """Whether the log shows ``oid`` when its turn comes (git's
        get_commit_action, asked by the graph of each parent)."""
        node = self.nodes.get(oid)
        if node is None:
            return True  # never met: nothing excludes it (an unlimited walk without paths)
        return self.shown(node) or bool(node.flags & SHOWN)

    def record(self, node: _Node) -> WalkedCommit:
        node.flags |= SHOWN
        if node.tree is None:
            raise _unread(node)
        if self.rewrite and node.parents:
            self.rewrite_parents(node)
        return WalkedCommit(node.oid, node.tree, node.poids, node.date)

    def rewrite_parents(self, node: _Node) -> None:
        """git's rewrite_parents: each parent becomes its nearest ancestor
        that is shown (or excluded); a line that ends in a commit not shown
        is dropped, and a parent reached twice kept once."""
        out: list[_Node] = []
        for p in node.parents or ():
            q = self.rewrite_one(p)
            if q is not None and q not in out:
                out.append(q)
        node.parents = out
        node.poids = tuple(q.oid for q in out)

    def rewrite_one(self, p: _Node) -> _Node | None:
        while True:
            if not self.is_limited:
                if not self.parse_gently(p):
                    return p
                self.process_parents(p, queue=False)
            if p.flags & UNINTERESTING or not p.flags & TREESAME:
                return p
            if not p.parents:
                return None
            nxt = self.one_relevant_parent(p.parents)
            if nxt is None:
                return p
            p = nxt

    def one_relevant_parent(self, parents: list[_Node]) -> _Node | None:
        """The parent a TREESAME commit stands for: its only one (or the
        first, with --first-parent), else its one relevant parent, if
        exactly one is relevant."""
        if self.first_parent or len(parents) == 1:
            return parents[0]
        relevant = [p for p in parents if _relevant(p)]
        return relevant[0] if len(relevant) == 1 else None

    def stream(self) -> Iterator[WalkedCommit]:
        """The unlimited walk: nothing is uninteresting here (exclusions make
        a walk limited), so the queue needs no bookkeeping beyond the heap,
        and process_parents is spelled out — this loop runs once per commit
        of the history."""
        queue = self.queue
        parse = self.parse
        simplify = self.simplify if self.limiter is not None else None
        first_parent = self.first_parent
        counter = self.inserted
        info = self.commit_info
        nodes = self.nodes
        while queue:
            node = heappop(queue)[2]
            flags = node.flags
            if not flags & ADDED:
                node.flags = flags = flags | ADDED
                if simplify is not None:
                    simplify(node)
                    flags = node.flags
                parents = node.parents
                if parents is None:
                    raise _unread(node)
                for p in parents:
                    if p.parents is None:
                        # parse(p), inlined for the common case: the hook knows the commit
                        got = info(p.oid) if info is not None else None
                        if got is None:
                            parse(p)
                        else:
                            # (the stream never looks at generations)
                            p.tree = got[0]
                            grand = got[1]
                            p.poids = grand if type(grand) is tuple else tuple(grand)
                            p.date = got[2]
                            ps = []
                            for g in grand:
                                n = nodes.get(g)
                                if n is None:
                                    n = nodes[g] = _Node(g)
                                ps.append(n)
                            p.parents = ps
                    if not p.flags & SEEN:
                        p.flags |= SEEN
                        heappush(queue, (-p.date, counter, p))
                        counter += 1
                    if first_parent:
                        break
            if flags & SHOWN or (simplify is not None and flags & TREESAME):
                continue
            node.flags = flags | SHOWN
            yield tuple_new(WalkedCommit, (node.oid, node.tree, node.poids, node.date))

    def parsed(self, oid: bytes) -> tuple[bytes, tuple[bytes, ...], int]:
        """(tree, parents, date) of a commit the hook did not answer."""
        node = self.lookup(oid)
        self.parse(node)
        if node.tree is None:
            raise _unread(node)
        return node.tree, node.poids, node.date

    def limited(self, order: str) -> Iterator[WalkedCommit]:
        out = self.limit(order)
        # Walked and sorted: the list holds every node now.  Each is let go
        # once shown (a node is held after that only by children already
        # let go), so a long history's nodes leave as its rows are taken —
        # unless the graph asks ``shows`` of any node until the end.
        if not self.graphed:
            self.nodes = {}
        out.reverse()
        pop = out.pop
        while out:
            node = pop()
            if self.shown(node):
                yield self.record(node)

    def limit(self, order: str) -> list[_Node]:
        """git's limit_list, then the sort the order asks for."""
        slop = SLOP
        last_date = None  # date of the last interesting commit kept
        kept: list[_Node] = []
        while self.queue:
            node = self.pop()
            self.process_parents(node)
            if node.flags & UNINTERESTING:
                self.mark_parents_uninteresting(node)
                slop = self.still_interesting(last_date, slop)
                if slop:
                    continue
                break
            last_date = node.date
            kept.append(node)
        if order == "topo":
            return sort_in_topological_order(kept, by_date=False)
        if order == "date":
            return sort_in_topological_order(kept, by_date=True)
        return kept

    def still_interesting(self, last_date: int | None, slop: int) -> int:
        if not self.queue:
            return 0
        if last_date is not None and last_date <= -self.queue[0][0]:
            return SLOP  # something queued is newer than what we kept
        if self.interesting_queued:
            return SLOP
        return slop - 1


def _relevant(node: _Node) -> bool:
    """git's relevant_commit: walked, or an excluded bottom (a range's edge)."""
    return (node.flags & (UNINTERESTING | BOTTOM)) != UNINTERESTING


def _unread(node: _Node) -> CorruptObjectError:
    """A commit the walk uses before it read it: every commit is parsed
    before it is queued or shown, so this is a walk bug, named as such."""
    return CorruptObjectError(
        f"commit {node.oid.hex()} was used before it was read (a walk error)",
        oid=node.oid.hex(),
        remedy="Report this with the command that hit it: git log gives the same history.",
    )


if TYPE_CHECKING:
    from packscope.core.history.plain_walk import PlainWalkHost

    def _mixin_hosted(walk: _RevWalk) -> None:
        """The walk checked against what PlainWalk's methods use of it (never runs)."""
        plain: PlainWalkHost = walk  # noqa: F841
