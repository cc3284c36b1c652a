"""The packscope terminal UI.

Screens are listed once, in ``SCREEN_TABLE`` (name, key, title, class):
each becomes a Textual *mode* (its own stack: Enter pushes, Esc pops) and a
number key.  Keys 5–8 are left for the screens still to come (Fanout,
Lookup lab, History, Health): adding one is one line in the table.

The app owns the live plumbing: the core session (opened in a worker, so the
first screen paints at once), the event pump drained ~30 times a second, the
counters sampled once a second, and the watcher that notices other
processes writing to the object directories.  It tells the screen on top
with messages (packscope.inspector.screens.base: CoreOpened, CoreDrained,
Tick, …); the live panels' toggles and the status line are reactive
attributes the screens watch.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.reactive import var
from textual.screen import Screen

from packscope.core.face import PackscopeError, trace
from packscope.inspector.core_access import CoreAccess
from packscope.inspector.events import EventDigest, EventPump, LogBook, RateHistory
from packscope.inspector.palette import PackscopeCommands
from packscope.inspector.safe_text import visible
from packscope.inspector.screens.base import (
    CoreDrained,
    CoreFailed,
    CoreOpened,
    DataChanged,
    OutsideChanged,
    PackscopeScreen,
    RatesSampled,
    TabsLabel,
    Tick,
)
from packscope.inspector.screens.overview import OverviewScreen
from packscope.inspector.watcher import DirWatcher
from packscope.inspector.widgets.event_log import EventLogList

if TYPE_CHECKING:
    from packscope.core.face import LookupFinished, Repository


@dataclass(frozen=True)
class ScreenSpec:
    name: str
    key: str
    title: str
    factory: Callable[[], Screen]


# The screens after the first are imported when first shown: loading every
# screen module (with the history, fsck and lab code behind them) before the
# first paint cost about a third of it.


def _packs() -> Screen:
    from packscope.inspector.screens.pack_list import PacksScreen

    return PacksScreen()


def _loose() -> Screen:
    from packscope.inspector.screens.loose import LooseScreen

    return LooseScreen()


def _object() -> Screen:
    from packscope.inspector.screens.object import ObjectScreen

    return ObjectScreen(follows_last=True)


def _fanout() -> Screen:
    from packscope.inspector.screens.fanout import FanoutScreen

    return FanoutScreen()


def _lab() -> Screen:
    from packscope.inspector.screens.lab import LabScreen

    return LabScreen()


def _history() -> Screen:
    from packscope.inspector.screens.history import HistoryScreen

    return HistoryScreen()


def _advice() -> Screen:
    from packscope.inspector.screens.advice import AdviceScreen

    return AdviceScreen()


def _refs() -> Screen:
    from packscope.inspector.screens.refs import RefsScreen

    return RefsScreen()


def _health() -> Screen:
    from packscope.inspector.screens.health import HealthScreen

    return HealthScreen()


SCREEN_TABLE: tuple[ScreenSpec, ...] = (
    ScreenSpec("overview", "1", "Overview", OverviewScreen),
    ScreenSpec("packs", "2", "Packs", _packs),
    ScreenSpec("loose", "3", "Loose", _loose),
    ScreenSpec("object", "4", "Object", _object),
    ScreenSpec("fanout", "5", "Fanout", _fanout),
    ScreenSpec("lab", "6", "Lookup lab", _lab),
    ScreenSpec("history", "7", "History", _history),
    ScreenSpec("health", "8", "Health", _health),
    ScreenSpec("advice", "9", "Advice", _advice),
    ScreenSpec("refs", "0", "Refs", _refs),
)

DRAIN_HZ = 30
TICK_SECONDS = 0.25
POLL_SECONDS = 1.0


class PackscopeApp(App):
    CSS_PATH = "styles/app.tcss"
    TITLE = "packscope"
    COMMANDS = App.COMMANDS | {PackscopeCommands}
    MODES = {spec.name: spec.factory for spec in SCREEN_TABLE}

    BINDINGS = [
        *(Binding(spec.key, f"switch('{spec.name}')", spec.title, id=f"screen.{spec.name}") for spec in SCREEN_TABLE),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("e", "toggle_log", "Event log", id="app.toggle-log"),
        Binding("s", "toggle_rates", "Rates", id="app.toggle-rates"),
        Binding("colon", "goto", "Go to object", id="app.goto"),
        Binding("q", "close_view", "Close view (quit at the top)", id="app.quit"),
        Binding("Q", "quit", "Quit now", id="app.quit-now"),
    ]

    # The live panels (e, s) and the status line: every screen watches these.
    show_log: var[bool] = var(True)
    show_rates: var[bool] = var(True)
    unfolded: var[frozenset[str]] = var(frozenset())  # panels e / s unfolded where they are folded away
    present: var[bool] = var(False)  # presentation mode: no live panels (the Lab draws larger)
    status_text: var[str] = var("")

    def __init__(
        self,
        repository: Repository | str | None = None,
        *,
        poll_seconds: float = POLL_SECONDS,
        present: bool = False,
        start: str | None = None,
        absent: str | None = None,
    ) -> None:
        """``repository``: the one the UI opens, as the command line found it
        (packscope.inspector.launch), or a path to find it at (None: the
        current directory); ``absent``: why there is none on purpose."""
        super().__init__()
        self.screen_table = SCREEN_TABLE
        self.core = CoreAccess(repository, absent=absent)
        self.pump = EventPump(self.core.tracer)  # before opening: the startup scan is logged too
        self.digest = EventDigest()
        self.logbook = LogBook()
        self.rates = RateHistory()
        self.last_object: tuple | None = None
        self.copied: str | None = None
        self.watcher: DirWatcher | None = None
        self.poll_seconds = poll_seconds
        self.outside_changes = 0
        self.last_lookup: LookupFinished | None = None  # the latest, whichever screen (or worker) made it
        self.lab_replay: str | None = None  # packscope lab --replay FILE, for the Lab to open
        self.present = present
        self.start = start  # the screen shown first (default: the first of the table)
        self.return_mode: str | None = None  # the tab `:` left for the Object tab (Esc/q go back)

    # --- start-up -------------------------------------------------------------

    def on_mount(self) -> None:
        self.switch_mode(self.start or SCREEN_TABLE[0].name)
        self.set_interval(1 / DRAIN_HZ, self.drain_events)
        self.set_interval(TICK_SECONDS, self.tick)
        self.set_interval(1.0, self.sample_rates)
        self.set_interval(self.poll_seconds, self.poll_outside)
        # Opened once the first frame is drawn: the worker would share the
        # interpreter with the first paint, and the screen shows "opening…".
        self.call_after_refresh(self.open_core)

    @work(thread=True, exclusive=True, group="open")
    def open_core(self) -> None:
        if self.core.absent:
            self.call_from_thread(self.set_status, self.core.absent)
            return
        self.call_from_thread(self.set_status, "opening the object store…")
        try:
            self.core.open()
        except PackscopeError as e:
            self.core.error = e
            self.call_from_thread(self._core_failed, e)
            return
        self.watcher = DirWatcher(self.core.store.object_dirs)
        self.call_from_thread(self._core_ready)

    def _core_ready(self) -> None:
        self.set_status("")
        self.sample_rates()  # the baseline the first rates are measured from
        # Screens not on top refresh when they are shown again (on_screen_resume).
        self._tell_top(CoreOpened())

    def _core_failed(self, e: PackscopeError) -> None:
        self.set_status("cannot open the repository")
        self.notify(visible(f"{e.message} — {e.remedy}"), severity="error", timeout=10)
        self._tell_top(CoreFailed(e))

    def _tell_top(self, message) -> None:
        """Post ``message`` to the packscope screen on top, if one is shown."""
        screen = self.top_screen
        if screen is not None:
            screen.post_message(message)

    @property
    def top_screen(self) -> PackscopeScreen | None:
        """The packscope screen being shown (under any modal), once mounted."""
        for s in reversed(self.screen_stack):
            if isinstance(s, PackscopeScreen):
                return s if s.is_mounted and s.ready else None
        return None

    def set_status(self, text: str) -> None:
        self.status_text = text  # (screens watch it)

    # --- the live plumbing ---------------------------------------------------------

    def drain_events(self) -> None:
        batch = self.pump.drain()
        if batch:
            self.logbook.extend(self.digest.digest(batch))
            finished = trace.LookupFinished  # (the event classes loaded with the first event)
            self.last_lookup = next((e for e in reversed(batch) if type(e) is finished), self.last_lookup)
        if batch or self.show_log:
            self._tell_top(CoreDrained(batch))

    def tick(self) -> None:
        if self.core.ready:
            self._tell_top(Tick())

    def sample_rates(self) -> None:
        if not self.core.ready:
            return
        self.rates.sample(self.core.counters(), self.core.delta_stats())
        if self.show_rates:
            self._tell_top(RatesSampled())

    def poll_outside(self) -> None:
        if self.watcher is not None:
            self._poll_worker()

    @work(thread=True, exclusive=True, group="watch")
    def _poll_worker(self) -> None:
        watcher = self.watcher
        changes = watcher.poll() if watcher is not None else None
        if not changes:
            return
        self.core.rescan("outside-change")
        self.call_from_thread(self._outside_changed, changes)

    def _outside_changed(self, changes) -> None:
        self.outside_changes += 1
        for c in changes:
            self.logbook.add("outside", f"outside change: {c.describe()} in {c.objects_dir} — rescanned")
        self._tell_top(OutsideChanged(changes))

    # --- actions ------------------------------------------------------------------

    def action_switch(self, name: str) -> None:
        if self.current_mode != name:
            self.return_mode = None  # a tab picked by hand: no way back to offer
            self.switch_mode(name)

    def action_close_view(self) -> None:
        """tig's q: close the view on top (back to the one below, or to the
        tab `:` came from); on a tab's first view (a top-level screen), quit."""
        screen = self.screen
        if not isinstance(screen, PackscopeScreen):
            return
        if screen.can_go_back():
            screen.action_back()
            return
        self.exit()

    def action_help(self) -> None:
        from packscope.inspector.screens.help import HelpScreen, binding_rows

        screen = self.top_screen
        if screen is None or not isinstance(self.screen, PackscopeScreen):
            return
        title = f"{type(screen).__name__.removesuffix('Screen')} — help"
        self.push_screen(HelpScreen(title, screen.HELP, binding_rows(screen)))

    def action_toggle_log(self) -> None:
        self._toggle_panel("log")

    def action_toggle_rates(self) -> None:
        self._toggle_panel("rates")

    def _toggle_panel(self, name: str) -> None:
        """e / s: show or hide a live panel.  Where the panels are folded
        away (under 32 rows, presentation mode) the key unfolds that one
        panel, and folds it again."""
        from packscope.inspector.screens.base import panels_folded

        attr = f"show_{name}"
        if panels_folded(self):
            shown = getattr(self, attr) and name in self.unfolded
            self.unfolded = self.unfolded - {name} if shown else self.unfolded | {name}
            setattr(self, attr, True)
        else:
            setattr(self, attr, not getattr(self, attr))
        # (the screens watch show_log, show_rates and unfolded)

    def action_toggle_pause(self) -> None:
        self.logbook.set_paused(not self.logbook.paused)

    def action_clear_log(self) -> None:
        self.logbook.clear()

    @on(EventLogList.FilterAsked)
    def _log_filter_asked(self) -> None:
        self.action_filter_log()

    @on(TabsLabel.Picked)
    def _tab_picked(self, message: TabsLabel.Picked) -> None:
        self.action_switch(message.name)

    def action_filter_log(self) -> None:
        from packscope.inspector.widgets.event_log import KindFilter

        def chosen(kinds) -> None:
            if kinds is not None:
                self.logbook.set_kinds(kinds)

        self.push_screen(KindFilter(set(self.logbook.enabled)), chosen)

    def action_rescan(self) -> None:
        if self.core.ready:
            self.core.rescan("request")
            self.notify("rescanned the pack directories", timeout=2)
            self._tell_top(DataChanged())

    def set_store_setting(self, name: str, value) -> None:
        if not self.core.ready:
            return
        store = self.core.store
        setter = {
            "algorithm": store.set_algorithm,
            "policy": store.set_policy,
            "loose_strategy": store.set_loose_strategy,
            "quick": store.set_quick,
        }[name]
        with self.core.lock:
            setter(value)
        self.notify(f"{name.replace('_', ' ')}: {value}", timeout=2)
        self._tell_top(DataChanged())

    def action_goto(self) -> None:
        from packscope.inspector.widgets.prompt import Prompt

        def go(text: str | None) -> None:
            if text:
                self.goto_object(text)

        self.push_screen(Prompt("object:", "id, abbreviation or revision"), go)

    def goto_object(self, text: str) -> None:
        self._resolve_and_open(text)

    @work(thread=True, group="goto")
    def _resolve_and_open(self, text: str) -> None:
        from packscope.core.face import PackscopeError as Err

        try:
            oid = self.resolve(text)
        except Err as e:
            self.call_from_thread(self.notify, visible(f"{text}: {e.message}"), severity="error", timeout=5)
            return
        self.call_from_thread(self.open_object_tab, oid)

    def open_object_tab(self, oid: bytes) -> None:
        """``:``'s answer: shown in the Object tab, with a way back (Esc, q) to
        the tab it was asked from."""
        if self.current_mode == "object":
            self.open_object(oid)
            return
        self.last_object = (oid, None, None)
        came_from = self.current_mode
        self.switch_mode("object")  # its first view follows last_object when shown
        self.return_mode = came_from
        screen = self.screen
        from packscope.inspector.screens.object import ObjectScreen

        if not (isinstance(screen, ObjectScreen) and screen.follows_last):
            self.open_object(oid)  # views were open in the Object tab: this one on top

    def resolve(self, text: str) -> bytes:
        """The object id ``text`` names, by core's one revision resolver
        (git's order: full id, refs in dwim order, then abbreviations)."""
        from packscope.core.face import BadRevisionError

        core = self.core
        session = core.session
        if session is None:
            raise BadRevisionError("the repository is still opening")
        with core.lock:
            return session.resolve(text)

    def open_object(self, oid: bytes, pack=None, offset: int | None = None) -> None:
        from packscope.inspector.screens.object import ObjectScreen

        self.last_object = (oid, pack, offset)
        self.push_screen(ObjectScreen(oid, pack, offset))

    def action_workload(self) -> None:
        if self.core.ready:
            self.run_workload()

    @work(thread=True, exclusive=True, group="workload")
    def run_workload(self, lookups: int = 3000, seed: int | None = None) -> int:
        """Look up ids sampled from the packs and loose cache, some missing,
        and read some of them, so the counters and panels have work to show."""
        core = self.core
        store = core.store
        rnd = random.Random(seed)
        ids: list[bytes] = []
        with core.lock:
            handles = store.packs
        chosen = rnd.sample(handles, min(len(handles), 40))
        missing = max(1, lookups // 20)
        per_pack = max(1, (lookups - missing) // max(1, len(chosen)))
        for h in chosen:
            with core.lock:
                try:
                    idx = h.index.open()
                    n = idx.num_objects
                    ids += [idx.name_at(rnd.randrange(n)) for _ in range(per_pack)] if n else []
                except PackscopeError:
                    continue
        ids += [rnd.randbytes(store.fmt.rawsz) for _ in range(missing)]
        rnd.shuffle(ids)
        self.call_from_thread(self.set_status, f"workload: {len(ids)} lookups")
        done = 0
        for i, oid in enumerate(ids):
            with core.lock:
                try:
                    loc = store.locate(oid)
                    if loc is not None and i % 7 == 0:
                        store.read(oid)
                except (PackscopeError, OSError):
                    pass
            done += 1
            if i % 50 == 0:
                time.sleep(0.001)  # spread it out: the sparklines show a rate, not a spike
        self.call_from_thread(self.set_status, "")
        return done

    def on_unmount(self) -> None:
        self.pump.close()
        self.core.close()
