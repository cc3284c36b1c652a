"""Topological orders, as git produces them (``--topo-order``, ``--date-order``).

Two algorithms, because git has two and their answers differ:

* :func:`sort_in_topological_order` — git's sort of a *limited* walk's
  list: indegrees count every parent in the list, tips are the commits no
  listed commit names as a parent.
* :func:`incremental_topo_walk` — git's streaming walk, used when generation
  numbers exist (a commit-graph) and the walk is not limited.  It computes
  indegrees only as deep as the generations it has reached, and with
  ``--first-parent`` counts first parents only — so a branch tip merged as
  a second parent is not held back behind its merge, as it is in the sort.

Ready commits wait in a stack (graph order: a merge's last parent
continues first) or in a heap on commit date (date order); equal dates come
out in insertion order, as from git's prio_queue.

The walk's node objects come from packscope.core.history.walk (``flags``, ``parents``,
``date``, ``generation``); this module only orders them.  It is also the
reference of the compiled incremental walk over commit-graph positions
(core/native_c/graph_plain.c), which the walk runs instead when it has no
paths and every tip is in a sound graph.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from heapq import heappop, heappush
from typing import Any, Protocol, TypeVar

from packscope.core.history.walk_flags import EXPLORED, GENERATION_INFINITY, INDEGREE, UNINTERESTING


class TopoNode(Protocol):
    """What the orders need of a walk's commit node."""

    flags: int
    date: int
    generation: int

    @property
    def parents(self) -> Sequence[TopoNode] | None: ...


N = TypeVar("N", bound=TopoNode)


class TopoWalker(Protocol):
    """What the incremental order needs of the walk (packscope.core.history.walk)."""

    first_parent: bool

    def parse_gently(self, node: Any) -> bool: ...
    def process_parents(self, node: Any, queue: bool = True) -> None: ...
    def shown(self, node: Any) -> bool: ...
    def record(self, node: Any) -> Any: ...


def sort_in_topological_order(nodes: Sequence[N], by_date: bool) -> list[N]:
    """git's sort_in_topological_order: a parent comes out only after all
    its children in the list; ready commits wait in a stack (graph order,
    so a merge's last parent continues first) or a date heap (date order)."""
    indegree: dict[Any, int] = {n: 1 for n in nodes}  # parents are nodes of the same walk
    for n in nodes:
        for p in n.parents or ():
            d = indegree.get(p)
            if d:
                indegree[p] = d + 1
    tips: list[Any] = [n for n in nodes if indegree[n] == 1]
    push: Callable[[Any], None]
    pop: Callable[[], Any]
    if by_date:
        ready: list[Any] = []
        seq = itertools.count()  # equal dates leave in the order they came

        def push(n: Any) -> None:
            heappush(ready, (-n.date, next(seq), n))

        def pop() -> Any:
            return heappop(ready)[2]

        for n in tips:
            push(n)
    else:
        ready = tips[::-1]  # the first tip on top: tips come out in walk order
        push, pop = ready.append, ready.pop
    out: list[N] = []
    while ready:
        node: N = pop()
        for p in node.parents or ():
            d = indegree.get(p)
            if not d:
                continue
            indegree[p] = d - 1
            if d - 1 == 1:
                push(p)
        indegree[node] = 0
        out.append(node)
    return out


class _Incremental:
    """git's topo_walk_info: an explore queue (simplify commits before their
    parents are counted), an indegree queue (count children down to a
    generation) and the topo queue of commits whose children are all out."""

    def __init__(self, w: TopoWalker, by_date: bool) -> None:
        self.uninteresting = UNINTERESTING
        self.w = w
        self.by_date = by_date
        self.first_parent = w.first_parent
        self.explore: list[tuple[int, int, int, TopoNode]] = []  # heaps of (-generation, -date, insertion, node)
        self.indegree_queue: list[tuple[int, int, int, TopoNode]] = []
        self.topo: list[Any] = []  # stack of nodes, or heap of (-date, insertion, node)
        self.indegree: dict[TopoNode, int] = {}
        self.counter = 0
        self.min_generation = GENERATION_INFINITY

    def insert(self, queue: list[tuple[int, int, int, TopoNode]], node: TopoNode, flag: int) -> None:
        if node.flags & flag:
            return
        node.flags |= flag
        heappush(queue, (-node.generation, -node.date, self.counter, node))
        self.counter += 1

    def put_topo(self, node: TopoNode) -> None:
        if self.by_date:
            heappush(self.topo, (-node.date, self.counter, node))
            self.counter += 1
        else:
            self.topo.append(node)

    def explore_to_depth(self, cutoff: int) -> None:
        q = self.explore
        while q and -q[0][0] >= cutoff:
            c = heappop(q)[3]
            if not self.w.parse_gently(c):
                continue
            self.w.process_parents(c, queue=False)
            for p in c.parents or ():
                self.insert(q, p, EXPLORED)

    def compute_indegrees_to_depth(self, cutoff: int) -> None:
        q = self.indegree_queue
        indegree = self.indegree
        while q and -q[0][0] >= cutoff:
            c = heappop(q)[3]
            if not self.w.parse_gently(c):
                continue
            self.explore_to_depth(c.generation)
            for p in c.parents or ():
                if not self.w.parse_gently(p):
                    break
                indegree[p] = indegree.get(p, 0) + 1 if indegree.get(p) else 2
                self.insert(q, p, INDEGREE)
                if self.first_parent:
                    break

    def start(self, tips: Sequence[TopoNode]) -> None:
        for c in tips:
            if not self.w.parse_gently(c):
                continue
            self.insert(self.explore, c, EXPLORED)
            self.insert(self.indegree_queue, c, INDEGREE)
            self.min_generation = min(self.min_generation, c.generation)
            self.indegree[c] = 1
        self.compute_indegrees_to_depth(self.min_generation)
        for c in tips:
            if self.indegree.get(c) == 1:
                self.put_topo(c)
        if not self.by_date:
            self.topo.reverse()  # the tips come out in the walk's order

    def expand(self, c: TopoNode) -> None:
        self.w.process_parents(c, queue=False)
        indegree = self.indegree
        for p in c.parents or ():
            if p.flags & self.uninteresting:
                continue
            if not self.w.parse_gently(p):
                continue
            if p.generation < self.min_generation:
                self.min_generation = p.generation
                self.compute_indegrees_to_depth(self.min_generation)
            d = indegree.get(p, 0) - 1
            indegree[p] = d
            if d == 1:
                self.put_topo(p)
            if self.first_parent:
                break

    def run(self) -> Iterator[Any]:
        topo = self.topo
        w = self.w
        while topo:
            c = heappop(topo)[2] if self.by_date else topo.pop()
            self.indegree[c] = 0
            self.expand(c)
            if w.shown(c):
                yield w.record(c)


def incremental_topo_walk(w: TopoWalker, tips: Sequence[TopoNode], by_date: bool) -> Iterator[Any]:
    """Commits of an unlimited walk in topological (``by_date``: date) order,
    as git's init_topo_walk / next_topo_commit / expand_topo_walk give them.
    ``w`` is packscope.core.history.walk's walk (parse, process_parents, shown, record);
    ``tips`` its start commits, sorted by date."""
    walk = _Incremental(w, by_date)

    def run() -> Iterator[Any]:
        walk.start(tips)  # lazily, so that nothing is read before the first next()
        yield from walk.run()

    return run()
