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


def _own_ids(cls: type) -> set[str | None]:
    """Ids of the bindings a screen class declares itself (its own class
    and the classes between it and the shared base), not the base's.  The
    shared base marks itself with ``SHARED_KEYS_BASE = True`` (the key bar
    knows no screen class: screens import widgets, never the reverse)."""
    ids: set[str | None] = set()
    for c in cls.__mro__:
        if c.__dict__.get("SHARED_KEYS_BASE"):
            break
        ids.update(getattr(b, "id", None) for b in c.__dict__.get("BINDINGS", ()))
    return ids


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

    @staticmethod
    def _rank(screen, node, binding) -> int:
        """Order in the bar: the screen's own keys, then the focused
        widget's (a list's cursor keys), then the keys every screen shares
        (back, copy, refresh), then the app's (screens, panels, quit)."""
        if node is screen:
            return 0 if binding.id in _own_ids(type(screen)) else 2
        if node is screen.app:
            return 3
        return 1

    def _bindings_changed(self, screen) -> None:
        seen: set[tuple] = set()
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        # Help and the palette are pinned at the right end: on a narrow
        # terminal the middle is cut, never the way to see every key.
        tail = Text(no_wrap=True, end="")
        spans: list[tuple[int, int, str]] = []
        tail_spans: list[tuple[int, int, str]] = []
        active = list(screen.active_bindings.values())
        active.sort(key=lambda a: self._rank(screen, a[0], a[1]))  # stable: each level keeps its order
        for _node, binding, enabled, _tooltip in active:
            if not binding.show or not binding.description:
                continue
            ident = (binding.action, binding.description)
            if ident in seen:
                continue
            seen.add(ident)
            into, where = (tail, tail_spans) if binding.action == "help" else (text, spans)
            start = len(into)
            into.append(self.app.get_key_display(binding), style="bold reverse" if enabled else "dim reverse")
            into.append(f" {binding.description}  ", style="" if enabled else "dim")
            where.append((start, len(into), binding.key))
        tail.append("^p", style="bold reverse")
        tail.append(" palette")
        self._main, self._tail, self._main_spans, self._tail_spans = text, tail, spans, tail_spans
        self._layout(self.size.width)
        self.refresh()

    def _layout(self, width: int) -> None:
        main, tail = self._main.copy(), self._tail
        if width and len(main) + len(tail) > width:
            main.truncate(max(0, width - len(tail) - 1), overflow="ellipsis")
            main.append(" ")
        cut = len(main)
        self._text = main + tail
        self._spans = [s for s in self._main_spans if s[1] <= cut] + [
            (a + cut, b + cut, key) for a, b, key in self._tail_spans
        ]

    def on_resize(self, event: events.Resize) -> None:
        if hasattr(self, "_main"):
            self._layout(event.size.width)
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
