"""History's graph column: lanes kept cheaply, rows drawn on demand.

Core's :class:`~packscope.core.history.graph_lanes.GraphLanes` places each
commit in the lane ``git log --graph`` puts it in.  Keeping a ``GraphRow``
for each of 80,000 commits would cost two tuples a commit, so
:class:`LaneIndex` keeps the lanes only every ``BLOCK`` rows (a checkpoint)
and replays the lane rule from the nearest checkpoint for the rows on
screen — a block of rows at a time, the last few blocks cached.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

from rich.text import Text

from packscope.core.history.graph_lanes import GraphLanes, GraphRow, draw_row

BLOCK = 128  # rows between lane checkpoints
CACHED_BLOCKS = 8
MAX_LANES = 24  # wider graphs are cut (a "…" says so): the subject must stay visible

# git's ASCII drawing, in box-drawing characters (same cells, same lanes).
_BOX = str.maketrans({"|": "│", "-": "─", "\\": "╮", "/": "╱"})
LANE_STYLES = ("red", "green", "yellow", "blue", "magenta", "cyan")


class LaneIndex:
    """Graph rows of a :class:`~packscope.inspector.history_model.HistoryLog`.

    ``feed(commits)`` runs in the walk's worker as commits load (before the
    rows are visible); ``row(i)`` runs in the UI thread."""

    def __init__(self, log) -> None:
        self.log = log
        self._lanes = GraphLanes()
        self._fed = 0
        self.checkpoints: list[tuple[bytes, ...]] = []  # lanes before row k*BLOCK
        self._blocks: OrderedDict[int, list[GraphRow]] = OrderedDict()
        # whether the log shows a commit (the walk's answer; None: every one):
        # git draws no edge to a parent it does not show (an excluded side)
        self.shows: Callable[[bytes], bool] | None = None

    def _parents(self, c) -> Sequence[bytes]:
        shows = self.shows
        return c.parents if shows is None else [p for p in c.parents if shows(p)]

    def feed(self, commits) -> None:
        lanes = self._lanes
        for c in commits:
            if self._fed % BLOCK == 0:
                self.checkpoints.append(tuple(lanes.lanes))
            lanes.add(c.oid, self._parents(c))
            self._fed += 1

    def row(self, i: int) -> GraphRow:
        block = i // BLOCK
        rows = self._blocks.get(block)
        if rows is None or len(rows) <= i - block * BLOCK:
            rows = self._replay(block)
        else:
            self._blocks.move_to_end(block)
        return rows[i - block * BLOCK]

    def _replay(self, block: int) -> list[GraphRow]:
        start = block * BLOCK
        lanes = GraphLanes()
        lanes.lanes = list(self.checkpoints[block])
        loaded = self.log.rows
        end = min(start + BLOCK, len(loaded), self._fed)
        rows = [lanes.add(c.oid, self._parents(c)) for c in loaded[start:end]]
        self._blocks[block] = rows
        while len(self._blocks) > CACHED_BLOCKS:
            self._blocks.popitem(last=False)
        return rows


def graph_text(row: GraphRow) -> Text:
    """The row's graph cells: git's lanes drawn with box characters, each
    lane in its own colour, the commit as ● (a merge as ◉)."""
    cells = draw_row(row)
    cut = len(cells) > 2 * MAX_LANES
    if cut:
        cells = cells[: 2 * MAX_LANES - 1]
    drawn = cells.translate(_BOX)
    t = Text()
    for k, ch in enumerate(drawn):
        if ch == "*":
            t.append("◉" if len(row.parents) > 1 else "●", style="bold " + _lane_style(row.lane))
        elif ch == " ":
            t.append(" ")
        else:
            # a cell belongs to the lane it sits on or enters; edges to the commit's lane
            lane = row.lane if ch in "─╱" else (k + 1) // 2
            t.append(ch, style=_lane_style(lane))
    if cut:
        t.append("…", style="dim")
    return t


def _lane_style(lane: int) -> str:
    return LANE_STYLES[lane % len(LANE_STYLES)]
