"""One fsck finding's details, as a pop-up over Health (``i`` on a finding,
or Enter on one that has no pack entry or object to go to): where it is,
whether a good copy exists elsewhere, and the remedy."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual import getters
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from packscope.inspector.commit_text import name_text
from packscope.inspector.safe_text import literal

if TYPE_CHECKING:
    from packscope.inspector.app import PackscopeApp

SEVERITY_STYLE = {"error": "bold white on red", "warning": "bold black on yellow", "info": "bold black on cyan"}


def severity_badge(severity: str) -> Text:
    return Text(f" {severity.upper():<7}", style=SEVERITY_STYLE.get(severity, "reverse"))


def finding_table(f) -> Table:
    t = Table(box=None, show_header=False, pad_edge=False, expand=True)
    t.add_column(style="bold", no_wrap=True)
    t.add_column(overflow="fold")
    t.add_row("severity", severity_badge(f.severity))
    t.add_row("kind", literal(f.kind + (f"  (git: {f.msg_id})" if f.msg_id else "")))
    t.add_row("area", literal(f.area + (f", exit bit {f.exit_bit}" if f.exit_bit else "")))
    t.add_row("message", literal(f.message))
    t.add_row("file", literal(name_text(f.path)) if f.path else Text("–", style="dim"))
    t.add_row("offset", Text(f"{f.offset:,} (0x{f.offset:x})") if f.offset is not None else Text("–", style="dim"))
    if f.pack:
        t.add_row("pack", literal(name_text(f.pack)))
    if f.idx:
        t.add_row("index", literal(name_text(f.idx)))
    t.add_row("object", Text(f.oid, style="cyan") if f.oid else Text("–", style="dim"))
    if f.object_type:
        t.add_row("type", literal(f.object_type))
    if f.elsewhere:
        t.add_row("elsewhere", literal(", ".join(f.elsewhere), "green"))
    elif f.oid:
        t.add_row("elsewhere", Text("no other copy known", style="yellow"))
    t.add_row("remedy", literal(f.remedy) if f.remedy else Text("–", style="dim"))
    for k, v in (f.details or {}).items():
        label, value = detail_words(str(k), v)
        t.add_row(literal(label).plain, literal(value, "dim"))
    return t


# A finding's detail fields as people read them (core names them for programs).
DETAIL_WORDS = {
    "unavailable_objects": "objects it makes unreadable",
    "error_kind": "error",
    "error_offset": "error at offset",
    "expected": "expected",
    "named": "named by",
    "referrer": "referred to by",
    "root": "root",
    "object": "object",
    "bit": "exit-status bit",
    "suppressed": "similar findings not listed",
}


def detail_words(key: str, value) -> tuple[str, str]:
    """(label, value) for one detail field: words, not the field's name; counts with separators."""
    label = DETAIL_WORDS.get(key, key.replace("_", " "))
    shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
    return label, shown


class FindingScreen(ModalScreen[None]):
    """One finding's details (Enter on a finding in Health)."""

    if TYPE_CHECKING:  # the packscope app, for the type checker
        app = getters.app(PackscopeApp)

    BINDINGS = [
        Binding("escape,q,enter", "close", "Close", id="finding.close"),
        Binding("o", "open_object", "Open object", id="finding.object"),
    ]

    def __init__(self, finding) -> None:
        super().__init__(classes="help-screen")
        self.finding = finding

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(Text("Finding", style="bold"), id="help-title")
            yield Static(finding_table(self.finding), id="finding-detail")

    def action_close(self) -> None:
        self.dismiss(None)

    def action_open_object(self) -> None:
        if self.finding.oid:
            oid = bytes.fromhex(self.finding.oid)
            self.dismiss(None)
            self.app.open_object(oid)
