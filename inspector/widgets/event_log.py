"""The event-log panel: the store's recent events, filterable by kind.

Every screen has its own panel, all reading the app's one ``LogBook``; the
visible screen calls ``sync`` on its panel when the app's timer tells it the
pump was drained, and the panel redraws only when the book changed.  Rows are drawn by a ``VirtualList``, so the bounded
book (2000 lines) costs only the visible lines.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Label, SelectionList
from textual.widgets.selection_list import Selection

from packscope.inspector.events import KIND_STYLES, KINDS, LogBook, LogEntry
from packscope.inspector.widgets.virtual_list import VirtualList


class _LogSource:
    search_hint = "text in the log"

    def __init__(self, entries: list[LogEntry]) -> None:
        self.entries = entries

    def row_count(self) -> int:
        return len(self.entries)

    def row_text(self, row: int) -> Text:
        e = self.entries[row]
        t = Text(time.strftime("%H:%M:%S", time.localtime(e.when)) + f".{int(e.when * 1000) % 1000:03d} ", style="dim")
        t.append(f"{e.kind:<7} ", style=KIND_STYLES.get(e.kind, ""))
        t.append_text(e.text)
        return t


class EventLogList(VirtualList):
    """The log's rows.  Focused (Tab), its keys never take one the screen
    binds: ``on_mount`` drops those from this list's own bindings, so the
    key goes on to the screen (in the Lab, p plays after a Tab as before it;
    the palette pauses and clears the log on any screen)."""

    BINDINGS = [
        Binding("p", "app.toggle_pause", "Pause log", id="log.pause"),
        Binding("c", "app.clear_log", "Clear log", id="log.clear"),
        Binding("f", "filter", "Filter kinds", id="log.filter"),
    ]

    class FilterAsked(Message):
        """f: choose the kinds the log shows.  The screen notes that the
        modal is the log's own (when it closes, focus comes back here; any
        other modal or a screen switch sends it to the screen's body), and
        the app opens it."""

    def on_mount(self) -> None:
        screen_keys = set(self.screen._bindings.key_to_bindings)
        for key in [k for k in self._bindings.key_to_bindings if k in screen_keys]:
            del self._bindings.key_to_bindings[key]

    def action_filter(self) -> None:
        self.post_message(self.FilterAsked())


class EventLogPanel(Vertical):
    """Title line plus the log list."""

    def __init__(self, book: LogBook, **kw) -> None:
        super().__init__(**kw)
        self.book = book
        self._version = -1

    def compose(self) -> ComposeResult:
        yield Label("", id="log-title", markup=False)
        lst = EventLogList(_LogSource([]), width=160, id="log-list")
        lst.follow = True
        yield lst

    def on_mount(self) -> None:
        self.sync(force=True)

    def sync(self, force: bool = False) -> None:
        book = self.book
        if not force and book.version == self._version:
            return
        try:
            lst = self.query_one(EventLogList)
        except NoMatches:  # not composed yet (the screen is still mounting)
            return
        self._version = book.version
        follow = lst.follow or lst.cursor >= lst.row_count - 1
        lst.source = _LogSource(book.visible())
        lst.follow = follow
        lst.reset()
        title = Text("Event log ", style="bold")
        for k in KINDS:
            on = k in book.enabled
            title.append(f" {k}", style=KIND_STYLES[k] if on else "dim strike")
        if book.paused:
            title.append(f"   PAUSED ({book.held} held)", style="bold reverse")
        title.append(f"   {len(book.entries)} lines", style="dim")
        self.query_one("#log-title", Label).update(title)


class KindFilter(ModalScreen[set | None]):
    """Choose the kinds the event log shows."""

    BINDINGS = [Binding("escape", "done", "Done", id="filter.done")]

    def __init__(self, enabled: set[str]) -> None:
        super().__init__(classes="filter-screen")
        self.enabled = enabled

    def compose(self) -> ComposeResult:
        with Vertical(id="filter-box"):
            yield Label("Event kinds (space toggles, Esc closes)", markup=False)
            yield SelectionList[str](*(Selection(k, k, k in self.enabled) for k in KINDS), id="filter-list")

    def action_done(self) -> None:
        self.dismiss(set(self.query_one(SelectionList).selected))
