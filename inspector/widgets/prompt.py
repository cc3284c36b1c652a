"""A one-line prompt at the bottom of the screen (search, go to object)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class Prompt(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel")]

    def __init__(self, label: str, placeholder: str = "", value: str = "") -> None:
        super().__init__(classes="prompt-screen")
        self.label = label
        self.placeholder = placeholder
        self.value = value

    def compose(self) -> ComposeResult:
        with Horizontal(id="prompt-bar"):
            yield Label(self.label, id="prompt-label", markup=False)
            yield Input(self.value, placeholder=self.placeholder, id="prompt-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
