"""256 cells under a cursor, one per value of an id's first byte: what the
Fanout chart (buckets) and the Loose grid (subdirectories) share.  The
cursor moving posts ``Moved``, Enter or a double click posts ``Opened``."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget


class CellMessage(Message):
    """About one cell (0-255) of a ByteCells widget."""

    def __init__(self, cell: int) -> None:
        super().__init__()
        self.cell = cell


class ByteCells(Widget, can_focus=True):
    """Subclasses define their ``Moved`` and ``Opened`` (CellMessage
    subclasses, so that handlers are named for the widget) and ``cell_at``."""

    Moved: type[CellMessage]
    Opened: type[CellMessage]

    cursor: reactive[int] = reactive(0)

    def cell_at(self, x: int, y: int) -> int | None:
        """The cell drawn at (x, y), or None outside every cell."""
        raise NotImplementedError

    def watch_cursor(self, value: int) -> None:
        self.post_message(self.Moved(value))

    def action_jump(self, n: int) -> None:
        self.cursor = n

    def action_open(self) -> None:
        self.post_message(self.Opened(self.cursor))

    def on_click(self, event: events.Click) -> None:
        cell = self.cell_at(event.x, event.y)
        if cell is not None:
            self.cursor = cell
            if event.chain >= 2:
                self.post_message(self.Opened(cell))
