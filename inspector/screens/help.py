"""``?``: what the current screen shows, and every key that works there."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static


def binding_rows(screen: Screen) -> list[tuple[str, str, str]]:
    """(keys, description, binding id) of every binding active on ``screen``
    (focused widget, screen, app), one row per binding id."""
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
    rows = []
    for ident in order:
        bid, desc = ident
        rows.append((" / ".join(grouped[ident]), desc or bid, bid))
    return rows


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,q,question_mark", "close", "Close help", id="help.close"),
    ]

    def __init__(self, title: str, text: str, rows: list[tuple[str, str, str]]) -> None:
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
            table.add_column("binding id", style="dim")
            for keys, desc, bid in self.rows:
                table.add_row(Text(keys, style="bold cyan"), Text(desc), Text(bid))
            yield Static(table, id="help-keys")

    def action_close(self) -> None:
        self.dismiss(None)
