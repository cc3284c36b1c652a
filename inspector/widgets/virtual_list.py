"""A list that renders only the rows on screen.

A ``VirtualList`` asks its ``RowSource`` for a row's text when that row is
drawn (``render_line``), keeping the finished strips in an LRU line cache, so
a list of a million rows costs what its visible window costs.  It has a
cursor, tig/lazygit keys (j/k, g/G, Ctrl-D/Ctrl-U, Enter), and search
(``/`` then n/N) that asks the source for matching rows: a pack can answer
an id prefix with a binary search instead of a scan.
"""

from __future__ import annotations

from typing import Protocol

from rich.segment import Segment
from rich.text import Span, Text
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


class SearchRefused(ValueError):
    """Raised by a source's ``find`` for a query that names no row and is
    wrong rather than unmatched (an offset outside the pack): the list shows
    the message as an error and the cursor stays where it is."""


class RowSource(Protocol):
    def row_count(self) -> int: ...

    def row_text(self, row: int) -> Text: ...


class ListSource:
    """A RowSource over a list of Text (small lists: refs, tree entries)."""

    def __init__(self, rows: list[Text] | None = None) -> None:
        self.rows = rows or []

    def row_count(self) -> int:
        return len(self.rows)

    def row_text(self, row: int) -> Text:
        return self.rows[row]


class RowMessage(Message):
    """About one row of a VirtualList: the list is the message's control."""

    def __init__(self, vlist: VirtualList, row: int) -> None:
        super().__init__()
        self.vlist = vlist
        self.row = row

    @property
    def control(self) -> VirtualList:
        return self.vlist


class VirtualList(ScrollView, can_focus=True):
    COMPONENT_CLASSES = {"virtual-list--cursor", "virtual-list--cursor-blurred"}

    BINDINGS = [
        Binding("j,down", "cursor_down", "Down", id="list.down"),
        Binding("k,up", "cursor_up", "Up", id="list.up"),
        Binding("g,home", "first", "Top", id="list.top"),
        Binding("G,end", "last", "Bottom", id="list.bottom"),
        Binding("ctrl+d,pagedown", "half_page(1)", "½ page ↓", id="list.half-page-down"),
        Binding("ctrl+u,pageup", "half_page(-1)", "½ page ↑", id="list.half-page-up"),
        Binding("enter", "open", "Open", id="list.open"),
        Binding("slash", "search", "Search", id="list.search"),
        Binding("n", "next_match(1)", "Next match", id="list.next-match"),
        Binding("N", "next_match(-1)", "Prev match", id="list.prev-match"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    class Opened(RowMessage):
        """Enter (or a double click) on a row."""

    class Moved(RowMessage):
        """The cursor is on another row."""

    def __init__(
        self,
        source: RowSource | None = None,
        *,
        width: int = 200,
        searchable: bool = True,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.source: RowSource = source or ListSource()
        self.line_width = width
        self.searchable = searchable
        self._cache: LRUCache[tuple, Strip] = LRUCache(1024)
        self._generation = 0
        self.matches: list[int] = []
        self.search_query = ""
        self.follow = False  # keep the cursor on the last row as rows are added (logs)

    # --- data ------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return self.source.row_count()

    def set_source(self, source: RowSource, cursor: int = 0) -> None:
        self.source = source
        self.matches = []
        self.reset(cursor)

    def reset(self, cursor: int | None = None) -> None:
        """Rows changed: drop the line cache and re-measure."""
        self._generation += 1
        self._cache.clear()
        n = self.row_count
        self.virtual_size = Size(self.line_width, n)
        if cursor is not None:
            self.set_reactive(VirtualList.cursor, max(0, min(cursor, n - 1)) if n else 0)
        elif self.cursor >= n:
            self.set_reactive(VirtualList.cursor, max(0, n - 1))
        if self.follow and n:
            self.set_reactive(VirtualList.cursor, n - 1)
            self.scroll_end(animate=False, immediate=True)
        self.refresh()

    def refresh_rows(self) -> None:
        """Row contents changed (same rows): redraw without moving."""
        self._generation += 1
        self._cache.clear()
        self.refresh()

    # --- rendering -----------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.size.width
        base = self.rich_style
        if row >= self.row_count:
            return Strip.blank(width, base)
        is_cursor = row == self.cursor
        key = (row, is_cursor, self.has_focus, self._generation)
        strip = self._cache.get(key)
        if strip is None:
            try:
                text = self.source.row_text(row)
            except Exception as e:  # a row that cannot be read must not take the list down
                text = Text(f"<row {row}: {type(e).__name__}: {e}>", style="red")
            text = text.copy()
            text.no_wrap = True
            text.end = ""
            if text.style:  # Text.render drops a whole-row style when the row has no spans: make it one, under the rest
                text.spans.insert(0, Span(0, len(text), text.style))
                text.style = ""
            style = base
            if is_cursor:
                style = base + self.get_component_rich_style(
                    "virtual-list--cursor" if self.has_focus else "virtual-list--cursor-blurred"
                )
            segments = [
                Segment(s.text, style + s.style if s.style else style, s.control) for s in text.render(self.app.console)
            ]
            strip = Strip(segments)
            # Pad the whole virtual width so the cursor bar spans the line.
            strip = strip.extend_cell_length(max(self.line_width, width), style)
            self._cache[key] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, base).apply_offsets(scroll_x, row)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # --- cursor --------------------------------------------------------------

    def watch_cursor(self, old: int, new: int) -> None:
        n = self.row_count
        if n and not 0 <= new < n:
            self.cursor = max(0, min(new, n - 1))
            return
        self.follow = False if new < n - 1 else self.follow
        self._scroll_cursor_into_view()
        self.refresh()
        self.post_message(self.Moved(self, new))

    def _scroll_cursor_into_view(self) -> None:
        height = max(1, self.scrollable_content_region.height)
        top = int(self.scroll_y)
        c = self.cursor
        if c < top:
            self.scroll_to(y=c, animate=False, immediate=True)
        elif c >= top + height:
            self.scroll_to(y=c - height + 1, animate=False, immediate=True)

    def move_to(self, row: int) -> None:
        n = self.row_count
        if n:
            self.cursor = max(0, min(row, n - 1))

    def action_cursor_down(self) -> None:
        self.move_to(self.cursor + 1)

    def action_cursor_up(self) -> None:
        self.move_to(self.cursor - 1)

    def action_first(self) -> None:
        self.move_to(0)

    def action_last(self) -> None:
        self.move_to(self.row_count - 1)

    def action_half_page(self, direction: int) -> None:
        step = max(1, self.scrollable_content_region.height // 2)
        self.move_to(self.cursor + direction * step)

    def action_open(self) -> None:
        if self.row_count:
            self.post_message(self.Opened(self, self.cursor))

    async def _on_click(self, event: events.Click) -> None:
        row = int(self.scroll_y) + event.y
        if 0 <= row < self.row_count:
            self.move_to(row)
            if event.chain >= 2:
                self.post_message(self.Opened(self, row))

    # --- search ----------------------------------------------------------------

    def action_search(self) -> None:
        if not self.searchable:
            return
        from packscope.inspector.widgets.prompt import Prompt

        hint = getattr(self.source, "search_hint", "text to find")
        self.app.push_screen(Prompt("/", hint, self.search_query), self._search_entered)

    def _search_entered(self, query: str | None) -> None:
        if query:
            self.search(query)

    def search(self, query: str) -> int:
        """Find rows matching ``query``; move to the first at or after the
        cursor.  Returns the number of matches."""
        self.search_query = query
        finder = getattr(self.source, "find", None)
        if finder is not None:
            try:
                self.matches = list(finder(query))
            except SearchRefused as e:
                self.matches = []
                self.notify(str(e), severity="error", timeout=6)
                return 0
        else:
            self.matches = self._scan(query)
        if not self.matches:
            self.notify(f"no match for {query!r}", severity="warning", timeout=3)
            return 0
        after = [m for m in self.matches if m >= self.cursor]
        self.move_to(after[0] if after else self.matches[0])
        return len(self.matches)

    def clear_search(self) -> None:
        """Forget the query and its matches (n / N then do nothing)."""
        self.search_query, self.matches = "", []

    def _scan(self, query: str, limit: int = 200_000) -> list[int]:
        q = query.lower()
        n = min(self.row_count, limit)
        return [i for i in range(n) if q in self.source.row_text(i).plain.lower()]

    def action_next_match(self, direction: int) -> None:
        if not self.matches:
            if self.search_query:
                self.search(self.search_query)
            return
        c = self.cursor
        if direction > 0:
            nxt = [m for m in self.matches if m > c]
            self.move_to(nxt[0] if nxt else self.matches[0])
        else:
            prv = [m for m in self.matches if m < c]
            self.move_to(prv[-1] if prv else self.matches[-1])
