"""Presentation mode's corner: the last keys pressed, so an audience sees
what the presenter typed (space, →, p …) as the screen changes."""

from __future__ import annotations

import time
from collections import deque

from rich.text import Text
from textual.widget import Widget

# How keys are shown: Textual's names where a symbol says it better.
SYMBOLS = {
    "space": "␣ space",
    "right": "→",
    "left": "←",
    "up": "↑",
    "down": "↓",
    "enter": "⏎ Enter",
    "escape": "Esc",
    "home": "Home",
    "end": "End",
    "plus": "+",
    "minus": "-",
    "equals_sign": "=",
    "question_mark": "?",
    "colon": ":",
    "tab": "Tab",
}
SHOWN = 5  # keys kept
FADE_SECONDS = 4.0  # a key older than this is dropped


class KeysOverlay(Widget):
    DEFAULT_CSS = """
    KeysOverlay {
        position: absolute;
        width: auto;
        height: 3;
        padding: 0 1;
        border: round $accent;
        background: $surface;
        display: none;
    }
    """

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.keys: deque[tuple[float, str]] = deque(maxlen=SHOWN)

    @staticmethod
    def label(key: str) -> str:
        if key in SYMBOLS:
            return SYMBOLS[key]
        if key.startswith("ctrl+"):
            return "Ctrl-" + key[5:].upper()
        return key

    def add(self, key: str) -> None:
        self.keys.append((time.monotonic(), self.label(key)))
        self.refresh(layout=True)

    @property
    def shown(self) -> list[str]:
        now = time.monotonic()
        return [k for t, k in self.keys if now - t < FADE_SECONDS]

    def render(self) -> Text:
        t = Text(end="", no_wrap=True)
        shown = self.shown
        for i, k in enumerate(shown):
            t.append(f" {k} ", style="bold reverse" if i == len(shown) - 1 else "bold")
            t.append(" ")
        return t or Text("keys", style="dim")

    def get_content_width(self, container, viewport) -> int:
        return max(4, self.render().cell_len)

    def place(self, width: int, height: int) -> None:
        """Bottom-right corner of a region ``width`` × ``height``."""
        w = self.get_content_width(None, None) + 4
        self.styles.offset = (max(0, width - w - 1), max(0, height - 3))
