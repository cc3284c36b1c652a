"""The footer: every active binding as "key description", drawn as one
line of text.

Textual's Footer makes a widget per key and recomposes them all whenever
focus moves; with two dozen bindings that made switching screens visibly
slow.  One text line costs one widget.  A click runs the binding under it.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.widget import Widget


class KeyBar(Widget):
    DEFAULT_CSS = """
    KeyBar {
        height: 1;
        dock: bottom;
        background: $panel;
    }
    """

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._spans: list[tuple[int, int, str]] = []  # (start, end, key) for clicks
        self._text = Text()

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen) -> None:
        seen: set[tuple] = set()
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        spans = []
        for _node, binding, enabled, _tooltip in screen.active_bindings.values():
            if not binding.show or not binding.description:
                continue
            ident = (binding.action, binding.description)
            if ident in seen:
                continue
            seen.add(ident)
            start = len(text)
            text.append(self.app.get_key_display(binding), style="bold reverse" if enabled else "dim reverse")
            text.append(f" {binding.description}  ", style="" if enabled else "dim")
            spans.append((start, len(text), binding.key))
        palette = Text("^p", style="bold reverse")
        palette.append(" palette")
        text.append_text(palette)
        self._text, self._spans = text, spans
        self.refresh()

    @property
    def plain(self) -> str:
        return self._text.plain

    def render(self) -> Text:
        return self._text

    def on_click(self, event: events.Click) -> None:
        for start, end, key in self._spans:
            if start <= event.x < end:
                self.app.simulate_key(key)  # as if typed: focus and bindings decide
                return
