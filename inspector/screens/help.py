"""``?``: what the current screen shows, and every key that works there."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

# Keys that no visible binding lists: Textual's command palette.
PALETTE_ROW = ("Ctrl-P", "Command palette: every action by name, go to an object")


def binding_rows(screen: Screen) -> list[tuple[str, str]]:
    """(keys, description) of every binding active on ``screen`` (focused
    widget, screen, app), one row per action, then the keys of the
    screen's pop-ups (``POPUP_KEYS``) and the command palette."""
    grouped: dict[tuple, list[str]] = {}
    order: list[tuple] = []
    for key, active in screen.active_bindings.items():
        b = active.binding
        if not b.show or not b.description:
            continue  # Textual's own hidden keys (scrolling): not packscope's
        ident = (b.id or b.action, b.description)
        if ident not in grouped:
            grouped[ident] = []
            order.append(ident)
        shown = screen.app.get_key_display(b) if hasattr(screen.app, "get_key_display") else key
        if shown not in grouped[ident]:
            grouped[ident].append(shown)
    rows = [(" / ".join(grouped[ident]), ident[1]) for ident in order]
    rows += log_rows(screen, {ident[0] for ident in order})
    rows += list(getattr(screen, "POPUP_KEYS", ()))
    rows.append(PALETTE_ROW)
    return rows


def log_rows(screen: Screen, listed: set) -> list[tuple[str, str]]:
    """The event log's own keys, when the log is shown but not focused
    (they work once Tab moves there): only those the screen leaves it."""
    from textual.css.query import NoMatches

    from packscope.inspector.widgets.event_log import EventLogList

    try:
        log = screen.query_one(EventLogList)
    except NoMatches:
        return []
    if not log.parent or not getattr(log.parent, "display", False):
        return []
    rows = []
    for b in EventLogList.BINDINGS:
        if not isinstance(b, Binding) or (b.id or b.action) in listed:
            continue
        bound = log._bindings.key_to_bindings
        keys = [k for k in b.key.split(",") if any(x.id == b.id for x in bound.get(k, ()))]
        if keys:
            rows.append((" / ".join(keys), f"{b.description} (in the event log: Tab)"))
    return rows


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,q,question_mark", "close", "Close help", id="help.close"),
        Binding("j,down", "scroll(1)", "Down", id="help.down"),
        Binding("k,up", "scroll(-1)", "Up", id="help.up"),
        Binding("ctrl+d,pagedown,space", "page(1)", "½ page ↓", id="help.page-down"),
        Binding("ctrl+u,pageup", "page(-1)", "½ page ↑", id="help.page-up"),
        Binding("g,home", "edge(0)", "Top", id="help.top"),
        Binding("G,end", "edge(1)", "Bottom", id="help.bottom"),
    ]

    def __init__(self, title: str, text: str, rows: list[tuple[str, str]]) -> None:
        super().__init__(classes="help-screen")
        self.title_text = title
        self.text = text
        self.rows = rows

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(Text(self.title_text, style="bold"), id="help-title")
            yield Static(Text(self.text.strip()), id="help-text")
            table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
            table.add_column("keys")
            table.add_column("does")
            for keys, desc in self.rows:
                table.add_row(Text(keys, style="bold cyan"), Text(desc))
            yield Static(table, id="help-keys")
            yield Static(
                Text(
                    "In this help: j/k scroll, Ctrl-D/Ctrl-U half a page, g/G top/bottom; Esc, q or ? close.",
                    style="dim",
                ),
                id="help-own-keys",
            )

    @property
    def box(self) -> VerticalScroll:
        return self.query_one("#help-box", VerticalScroll)

    def action_scroll(self, lines: int) -> None:
        self.box.scroll_relative(y=lines, animate=False)

    def action_page(self, direction: int) -> None:
        box = self.box
        box.scroll_relative(y=direction * max(1, box.scrollable_content_region.height // 2), animate=False)

    def action_edge(self, end: int) -> None:
        if end:
            self.box.scroll_end(animate=False)
        else:
            self.box.scroll_home(animate=False)

    def action_close(self) -> None:
        self.dismiss(None)
