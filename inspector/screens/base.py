"""What every packscope screen shares: the top bar (screen tabs, repository,
background work), the live panels (event log, rates) and the footer.

The app tells the screen on top what happened with the messages below
(posted to that screen, handled here); a screen overrides
``compose_body`` and the hooks those handlers call:

* ``core_ready()`` — the session opened (screens paint before that);
* ``core_failed(error)`` — it could not be opened;
* ``core_events(batch)`` — a drained batch of core's trace events (~30 Hz);
* ``tick()`` — a few times a second, for live numbers;
* ``refresh_data()`` — ``R``, an outside change, a rescan or a store setting;
* ``outside_changed(changes)`` — another process wrote the object directories.

The app's panel toggles (``show_log``, ``show_rates``, ``unfolded``,
``present``) and its ``status_text`` are reactive: every screen watches
them and redraws its chrome when they change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Label

from packscope.inspector.safe_text import literal
from packscope.inspector.widgets.event_log import EventLogList, EventLogPanel
from packscope.inspector.widgets.key_bar import KeyBar
from packscope.inspector.widgets.rates import RatesPanel

if TYPE_CHECKING:
    from packscope.core.face import PackscopeError
    from packscope.inspector.app import PackscopeApp


# --- what the app tells the screen on top ---------------------------------------


class AppNews(Message, bubble=False):
    """What the app posts to the screen on top (for that screen only: none
    bubbles back to the app; Textual wants bubble=False on each class)."""


class CoreOpened(AppNews, bubble=False):
    """The core session opened."""


class CoreFailed(AppNews, bubble=False):
    """The repository could not be opened."""

    def __init__(self, error: PackscopeError) -> None:
        super().__init__()
        self.error = error


class CoreDrained(AppNews, bubble=False):
    """The event pump was drained (~30 Hz): ``batch`` is core's trace events
    since the last one (possibly none); the event log may have grown."""

    def __init__(self, batch: list) -> None:
        super().__init__()
        self.batch = batch


class Tick(AppNews, bubble=False):
    """A few times a second, once the core is open: live numbers."""


class RatesSampled(AppNews, bubble=False):
    """The counters were sampled (once a second): the rates panel may redraw."""


class DataChanged(AppNews, bubble=False):
    """The store was rescanned or a setting changed: the screen's data is stale."""


class OutsideChanged(AppNews, bubble=False):
    """Another process changed the object directories (after the rescan)."""

    def __init__(self, changes: list) -> None:
        super().__init__()
        self.changes = changes


class TabsLabel(Label):
    """The tab bar: a click on a tab asks the app for it (``spans``: the cells of each tab)."""

    class Picked(Message):
        """A tab was clicked: ``name`` is its screen-table name."""

        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    spans: list[tuple[int, int, str]] = []

    def on_click(self, event: events.Click) -> None:
        for start, end, name in self.spans:
            if start <= event.x < end:
                event.stop()
                self.post_message(self.Picked(name))
                return


class TopBar(Horizontal):
    def compose(self) -> ComposeResult:
        yield TabsLabel("", id="tabs", markup=False)
        yield Label("", id="where", markup=False)
        yield Label("", id="status", markup=False)


# Below this many rows the live panels (12 rows) are folded away, so the
# screen's own content keeps the room (80×24 must stay usable).
PANELS_BELOW_ROWS = 32


def panels_folded(app) -> bool:
    """The live panels are folded away unless asked for (e, s): a small
    terminal, or presentation mode."""
    return app.size.height < PANELS_BELOW_ROWS or bool(getattr(app, "present", False))


class PackscopeScreen(Screen):
    """Base of every screen; subclasses set HELP (shown by ``?``)."""

    if TYPE_CHECKING:
        # ``self.app`` as the packscope app for the type checker. Only then:
        # at run time getters.app needs the app class as this class is
        # built (app.py imports every screen) and asserts at each access.
        app = getters.app(PackscopeApp)

    HELP = ""
    TAB = ""  # the screen-table name this screen belongs to (for the tab bar)
    SHARED_KEYS_BASE = True  # the key bar lists subclasses' own keys first, these after
    # Focus starts in the screen's own body, never in a live panel: a
    # focused event log would take k, p, f, Home and End from the screen.
    AUTO_FOCUS = "#body *"

    BINDINGS = [
        Binding("escape,backspace", "back", "Back", id="nav.back"),
        Binding("y", "copy_id", "Copy id", id="nav.copy-id"),
        Binding("R", "refresh_data", "Refresh", id="nav.refresh"),
    ]

    ready = False  # set once mounted: the app's timers skip a screen still mounting
    panel_modal = False  # a panel opened a modal of its own (focus returns to the panel)

    def compose(self) -> ComposeResult:
        yield TopBar(id="topbar")
        with Vertical(id="body"):
            yield from self.compose_body()
        self.log_panel = EventLogPanel(self.app.logbook, id="event-log")
        self.rates_panel = RatesPanel(self.app.rates, id="rates")
        yield self.log_panel
        yield self.rates_panel
        yield KeyBar(id="keys")

    def compose_body(self) -> ComposeResult:
        yield from ()

    # --- shared chrome --------------------------------------------------------

    def on_mount(self) -> None:
        self.ready = True
        app = self.app
        # (on_mount runs once per class in the MRO; watch() keeps one of each)
        for name in ("show_log", "show_rates", "unfolded", "present"):
            self.watch(app, name, self._panels_changed, init=False)
        self.watch(app, "status_text", self.update_status, init=False)
        self.update_chrome()

    def _panels_changed(self) -> None:
        """e / s toggled a live panel (the app's reactive panel state)."""
        if not self.is_mounted:
            return
        self.update_chrome()
        if self.app.show_log:
            self.log_panel.sync(force=True)
        if self.app.show_rates:
            self.rates_panel.sync()

    # --- the app's messages ------------------------------------------------------
    # Posted to the screen on top (under any modal) once it is mounted; a
    # screen popped meanwhile is no longer in the stack and lets them pass.

    def _on_top(self) -> bool:
        return self.is_mounted and self in self.app.screen_stack

    def on_core_opened(self, message: CoreOpened) -> None:
        if self._on_top():
            self.core_ready()

    def on_core_failed(self, message: CoreFailed) -> None:
        if self._on_top():
            self.core_failed(message.error)

    def on_core_drained(self, message: CoreDrained) -> None:
        if not self._on_top():
            return
        if message.batch:
            self.core_events(message.batch)
        if self.app.show_log:
            self.log_panel.sync()

    def on_tick(self, message: Tick) -> None:
        if self._on_top() and self.app.core.ready:
            self.tick()

    def on_rates_sampled(self, message: RatesSampled) -> None:
        if self._on_top() and self.app.show_rates:
            self.rates_panel.sync()

    def on_data_changed(self, message: DataChanged) -> None:
        if self._on_top():
            self.refresh_data()

    def on_outside_changed(self, message: OutsideChanged) -> None:
        if self._on_top():
            self.outside_changed(message.changes)

    @on(EventLogList.FilterAsked)
    def _log_filter_asked(self) -> None:
        # The log's own modal (the app opens it: the message bubbles on):
        # when it closes, focus comes back to the log.
        self.panel_modal = True

    def on_screen_resume(self) -> None:
        # Shown again (a switch, a modal closed): the panels give focus back.
        self.focus_body()
        self.update_chrome()
        self.log_panel.sync(force=True)
        self.rates_panel.sync()
        if self.app.core.ready:
            self.refresh_data()

    def focus_body(self) -> None:
        """Move focus out of the live panels to the body's first focusable
        widget (or to nothing: then the screen's own keys apply)."""
        if self.panel_modal:  # a panel's own modal (the log's filter) closed: back to the panel
            self.panel_modal = False
            return
        focused = self.focused
        if focused is not None and not any(p in focused.ancestors_with_self for p in self._panels()):
            return
        for widget in self.query("#body *"):
            if widget.focusable:
                self.set_focus(widget)
                return
        self.set_focus(None)

    def _panels(self) -> tuple:
        return (getattr(self, "log_panel", None), getattr(self, "rates_panel", None))

    def on_resize(self, event: events.Resize) -> None:
        if self.ready:
            self.update_chrome()

    def update_chrome(self) -> None:
        app = self.app
        room = not panels_folded(app)
        # Folded (a small terminal, presentation mode), a panel shows only when e / s asked for it.
        self.log_panel.display = app.show_log and (room or "log" in app.unfolded)
        self.rates_panel.display = app.show_rates and (room or "rates" in app.unfolded)
        tabs = Text()
        spans = []
        narrow = app.size.width < 100  # 80 columns: other screens by number only, this one by name
        for spec in app.screen_table:
            active = spec.name == app.current_mode
            label = f" {spec.key} {spec.title} " if active or not narrow else f" {spec.key} "
            spans.append((tabs.cell_len, tabs.cell_len + len(label), spec.name))
            tabs.append(label, style="bold reverse" if active else "dim")
        back = self.return_mode()
        if back is not None:  # the breadcrumb of `:`
            title = next((spec.title for spec in app.screen_table if spec.name == back), back)
            tabs.append(f"  ← Esc: back to {title}", style="bold yellow")
        bar = self.query_one("#tabs", TabsLabel)
        bar.spans = spans
        bar.update(tabs)
        where = (
            app.core.repo.git_dir
            if app.core.ready
            else (app.core.path or ("(no repository)" if app.core.absent else "."))
        )
        self.query_one("#where", Label).update(literal(elide_left(str(where), app.size.width - tabs.cell_len - 14)))
        self.update_status()

    def update_status(self) -> None:
        self.query_one("#status", Label).update(Text(self.app.status_text, style="italic"))

    # --- hooks ------------------------------------------------------------------

    def core_ready(self) -> None:
        self.update_chrome()
        self.refresh_data()

    def core_failed(self, error: PackscopeError) -> None:
        pass

    def core_events(self, batch: list) -> None:
        pass

    def tick(self) -> None:
        pass

    def refresh_data(self) -> None:
        pass

    def outside_changed(self, changes: list) -> None:
        """Another process changed the object directories (after the rescan)."""
        self.refresh_data()

    def current_id(self) -> str | None:
        """The object id under the cursor, for ``y``."""
        return None

    # --- actions ----------------------------------------------------------------

    def return_mode(self) -> str | None:
        """The tab `:` came from, while its object is shown at the Object tab's bottom."""
        app = self.app
        if getattr(app, "current_mode", None) != "object" or not app.screen_stack or app.screen_stack[0] is not self:
            return None
        return getattr(app, "return_mode", None)

    def can_go_back(self) -> bool:
        stack = self.app.screen_stack
        return bool(stack) and (stack[0] is not self or self.return_mode() is not None)

    def check_action(self, action: str, parameters) -> bool | None:
        # Back means nothing at the bottom of a screen's stack: hide it there.
        return not (action == "back" and not self.can_go_back())

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1 and self.app.screen_stack[-1] is not self.app.screen_stack[0]:
            self.app.pop_screen()
        elif (mode := self.return_mode()) is not None:
            self.app.action_switch(mode)

    def action_copy_id(self) -> None:
        oid = self.current_id()
        if oid is None:
            self.notify("nothing to copy here", severity="warning", timeout=2)
            return
        from packscope.inspector.clipboard import copy_text

        how = copy_text(self.app, oid)
        self.app.copied = oid
        # The id stays on screen long enough to select it by hand, whatever the terminal did.
        self.notify(f"{oid}\n{how}", title="Copied", timeout=8)

    def action_refresh_data(self) -> None:
        if self.app.core.ready:
            self.refresh_data()
            self.notify("refreshed", timeout=1)


def elide_left(path: str, room: int) -> str:
    """``path`` in ``room`` cells, its start given up first: the repository's
    own name is what tells one window from another."""
    room = max(room, 12)
    return path if len(path) <= room else "…" + path[-(room - 1) :]
