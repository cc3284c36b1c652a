"""A yes/no question on one line at the bottom of the screen (quit?)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import ModalScreen
from textual.widgets import Label


class Confirm(ModalScreen[bool]):
    """``question`` with y / n: dismisses with True for y (or ``yes_keys``)."""

    BINDINGS = [
        Binding("y,enter", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str, yes_keys: str = "") -> None:
        super().__init__(classes="prompt-screen")
        self.question = question
        if yes_keys:  # e.g. q: "q" again confirms a quit, as in tig's habit of pressing q twice
            self._bindings.bind(yes_keys, "answer(True)", "Yes", show=False)

    def compose(self) -> ComposeResult:
        with Horizontal(id="prompt-bar"):
            yield Label(self.question, id="confirm-question", markup=False)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
