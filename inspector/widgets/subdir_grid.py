"""The 256 loose-object subdirectories (objects/00 … objects/ff) as a 16×16
grid: row = first hex digit, column = second.  Each cell shows how many
objects the directory holds and whether core's loose cache has read it."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual.binding import Binding

from packscope.inspector.widgets.byte_cells import ByteCells, CellMessage

CELL = 6  # characters per cell: 4 + 16 * 6 = 100 columns


@dataclass(slots=True)
class GridState:
    seen: list[bool] = field(default_factory=lambda: [False] * 256)
    cached: list[int | None] = field(default_factory=lambda: [None] * 256)  # names in core's cache
    on_disk: list[int | None] = field(default_factory=lambda: [None] * 256)  # counted by the UI
    changed: set[int] = field(default_factory=set)  # written since core read it (stale cache)
    flashed: set[int] = field(default_factory=set)  # filled in the last moment (highlight)


class SubdirMessage(CellMessage):
    @property
    def subdir(self) -> int:
        return self.cell


class SubdirGrid(ByteCells):
    BINDINGS = [
        Binding("h,left", "move(-1, 0)", "Left", id="grid.left"),
        Binding("l,right", "move(1, 0)", "Right", id="grid.right"),
        Binding("k,up", "move(0, -1)", "Up", id="grid.up"),
        Binding("j,down", "move(0, 1)", "Down", id="grid.down"),
        Binding("g,home", "jump(0)", "First", id="grid.first"),
        Binding("G,end", "jump(255)", "Last", id="grid.last"),
        Binding("enter", "open", "List subdir", id="grid.open"),
    ]

    class Opened(SubdirMessage):
        """Enter or a double click on a subdirectory."""

    class Moved(SubdirMessage):
        """The cursor is on another subdirectory."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.state = GridState()

    def update_state(self, state: GridState) -> None:
        self.state = state
        self.refresh()

    def render(self) -> Text:
        s = self.state
        t = Text(no_wrap=True, end="")
        t.append("    ")
        for col in range(16):
            t.append(f"{'_' + format(col, 'x'):>{CELL}}", style="bold dim")
        t.append("\n")
        for row in range(16):
            t.append(f" {row:x}_ ", style="bold dim")
            for col in range(16):
                n = row * 16 + col
                if s.seen[n]:
                    value = s.cached[n]
                    style = "bold green"
                    if n in s.changed:
                        style = "bold yellow"
                    if n in s.flashed:
                        style = "bold black on green"
                else:
                    value = s.on_disk[n]
                    style = "yellow" if n in s.changed else "dim"
                label = "·" if value is None else str(value)
                cell = f"{label:>{CELL - 1}} "
                if n == self.cursor:
                    style = f"{style} reverse"
                t.append(cell, style=style)
            t.append("\n")
        return t

    def action_move(self, dx: int, dy: int) -> None:
        row, col = divmod(self.cursor, 16)
        self.cursor = ((row + dy) % 16) * 16 + (col + dx) % 16

    def cell_at(self, x: int, y: int) -> int | None:
        row = y - 1
        col = (x - 4) // CELL
        return row * 16 + col if 0 <= row < 16 and 0 <= col < 16 else None

    def get_content_height(self, container, viewport, width) -> int:
        return 17

    def get_content_width(self, container, viewport) -> int:
        return 4 + 16 * CELL
