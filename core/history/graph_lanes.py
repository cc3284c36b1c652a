"""The graph column of a log: which lane each commit sits in, as
``git log --graph`` places it.

A *lane* is a column that expects one commit: the next commit of that line
of history.  Commits arrive in the walk's order (``--graph`` implies
``--topo-order``: a commit comes before its parents).  For each commit:

1. its lane is the one that expects it; a commit no lane expects (a branch
   tip) opens a new lane at the right;
2. the lanes after it are rebuilt left to right: every other lane keeps its
   commit, and the commit's own lane is replaced by its parents, in order —
   except a parent some lane to the left already expects (the lines join)
   and, later, a lane expecting a parent already placed (it joins too);
3. a root commit's lane simply ends.

This is git's ``graph_update`` column rule (new columns built from the old
ones, a commit already present is not inserted twice); git then spends
extra output lines drawing the transition, where a one-line-per-commit list
(tig's, packscope's) draws it in the row itself.  ``GraphRow`` keeps what a
row needs to be drawn later, so rows are drawn lazily for the visible part
of a long history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GraphRow:
    """One commit's row: ``lane`` is its column in ``before`` (the lanes as
    the row starts); ``after`` the lanes once its parents took its place.
    Lanes hold commit ids (the commit each lane waits for)."""

    lane: int
    before: tuple[bytes, ...]
    after: tuple[bytes, ...]
    parents: tuple[bytes, ...]

    def parent_lanes(self) -> tuple[int, ...]:
        """Where each parent continues in ``after``."""
        return tuple(self.after.index(p) for p in self.parents)


class GraphLanes:
    """Lane assignment, one commit at a time, in the log's order."""

    __slots__ = ("lanes",)

    def __init__(self) -> None:
        self.lanes: list[bytes] = []

    def add(self, oid: bytes, parents: Sequence[bytes]) -> GraphRow:
        lanes = self.lanes
        if oid in lanes:
            lane = lanes.index(oid)
        else:
            lane = len(lanes)
            lanes.append(oid)
        before = tuple(lanes)
        after: list[bytes] = []
        placed: set[bytes] = set()
        for expected in before:
            for c in parents if expected == oid else (expected,):
                if c not in placed:
                    placed.add(c)
                    after.append(c)
        self.lanes = after
        return GraphRow(lane, before, tuple(after), tuple(parents))


def draw_row(row: GraphRow) -> str:
    """A one-line drawing of ``row``, two cells per lane: ``*`` for the
    commit, ``|`` for a lane passing by, ``\\`` where a merge's edge enters a
    lane to the right (``-`` across the lanes it reaches over), and ``/``
    where the commit's line joins a lane to its left."""
    width = max(len(row.before), len(row.after))
    cells = [" "] * (2 * width)
    for i in range(len(row.before)):
        if i != row.lane:
            cells[2 * i] = "|"
    cells[2 * row.lane] = "*"
    targets = row.parent_lanes()
    for t in targets[1:]:
        if t > row.lane:  # a merge's other parent: an edge over to its lane
            for k in range(2 * row.lane + 1, 2 * t - 1):
                if cells[k] == " ":
                    cells[k] = "-"
            cells[2 * t - 1] = "\\"
    if targets and targets[0] < row.lane:
        cells[2 * row.lane - 1] = "/"
    return "".join(cells).rstrip()
