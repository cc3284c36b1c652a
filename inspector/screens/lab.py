"""Screen 6: the Lookup lab — one lookup drawn step by step, three search
algorithms side by side, and batches of lookups as distributions."""

from __future__ import annotations

import contextlib
import os
import time

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.timer import Timer
from textual.widgets import ContentSwitcher, Digits, Label, Static

from packscope.core.face import ALGORITHMS, PackscopeError
from packscope.inspector import lab_batch
from packscope.inspector import lab_model as lab
from packscope.inspector.safe_text import literal
from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.screens.lab_batches import LabBatches
from packscope.inspector.screens.lab_replay import LabReplay
from packscope.inspector.widgets.keys_overlay import KeysOverlay
from packscope.inspector.widgets.lab_views import (
    SearchView,
    folded_runs,
    rendered_height,
    stage_list,
)

HELP = """
Type an id, an abbreviation or a revision (l or Enter) and the lab looks it
up through the store with tracing on, then draws what happened, in order:
the multi-pack-index and the packs searched (search order), the loose
object check (stat, or the loose name cache when *quick*), cache fills,
rescans of the pack directories with their reason (or why none happened),
MRU moves, and the result.  A long run of packs searched in vain (a
repository with hundreds of packs) shows its first few, then "… N packs
searched, not found", then the rest; Enter lists them all (and folds them
again).

Inside each bucket searched, the same bucket of the same index is searched
by all three algorithms (packscope.core.store.search.traced_search; the one the store used
is bold, and its probes are exactly the store's trace):
  binary — always the middle (git's);
  interpolation — guess from the id's next two bytes;
  hedged — interpolation pulled slightly towards the middle.
Each bar is the bucket; ━ is the window [lo, hi) still possible, ▼ the slot
probed (red: the name there is greater than the target, blue: smaller,
green: equal); each probe is labelled `mi [lo,hi) cmp page` (page = the
4 KiB page of the index file that name sits in).

Step with space/→ (← back, Home/End), or play (p) at a speed set with +/-.
PageUp/PageDown scroll the view (a long stage list, a batch's runs).

Batch (b): K lookups (k cycles K; m chooses present, absent or mixed ids;
f reads ids from a file, e.g. the output of `git rev-list --objects --all`),
then per algorithm the distributions of probes, names read (interpolation
and hedged also read the names at the window's ends to make a guess),
pages and µs per lookup — mean, median (p50), p99 and max, since one slow
outlier can pull a mean above the p99 — and the rescans and loose-cache
fills.  r runs the same ids again: switch a
setting first (P miss policy git/gated, U quick, C loose-cache strategy,
a the store's algorithm) and compare the runs.  Each run starts from a
fresh store (empty negative cache, loose cache and MRU order) unless W
makes runs warm (the live store, its caches as the runs before left them);
the runs table shows every setting of every run.  v switches between the
lookup and the batch views.

o replays recorded lookups (`packscope lookup --json --algorithm all
OBJECT… > FILE`, on any machine; also `packscope lab --replay FILE`):
stepped exactly as a live lookup; [ and ] move between the lookups of
the file.  Without --algorithm all, the other algorithms are searched
again here when this repository has the same index, else only the
store's own search is drawn.

z (or `packscope --present`) is presentation mode: the event log and
rates hidden, the bucket bars three rows tall, the frame and the speed in
large digits, and the keys pressed shown in the bottom-right corner.
"""

SHORT_ROWS = 32  # below this, the compact layout
SPEEDS = (1, 2, 4, 8, 15, 30)  # frames per second


class LabScreen(LabBatches, LabReplay, PackscopeScreen):
    HELP = HELP
    TAB = "lab"

    BINDINGS = [
        Binding("l", "ask", "Look up…", id="lab.lookup"),
        Binding("enter", "enter", "All stages/look up", id="lab.expand"),
        Binding("space,right", "step(1)", "Step", id="lab.step"),
        Binding("left", "step(-1)", "Back", id="lab.step-back"),
        Binding("home", "frame(0)", "First", id="lab.first"),
        Binding("end", "frame(-1)", "Last", id="lab.last"),
        Binding("p", "play", "Play/pause", id="lab.play"),
        Binding("plus,equals_sign", "speed(1)", "Faster", id="lab.faster"),
        Binding("minus", "speed(-1)", "Slower", id="lab.slower"),
        Binding("b", "batch", "Batch", id="lab.batch"),
        Binding("k", "batch_size", "K", id="lab.batch-size"),
        Binding("m", "batch_mode", "Ids", id="lab.batch-mode"),
        Binding("f", "batch_file", "Ids from file", id="lab.batch-file"),
        Binding("r", "rerun", "Same ids again", id="lab.rerun"),
        Binding("P", "next_setting('policy')", "Policy", id="lab.policy"),
        # (not Q: Q quits, on every screen)
        Binding("U", "next_setting('quick')", "Quick", id="lab.quick"),
        Binding("C", "next_setting('loose_strategy')", "Loose cache", id="lab.loose-strategy"),
        Binding("a", "next_setting('algorithm')", "Store algorithm", id="lab.algorithm"),
        Binding("W", "warm", "Warm/cold runs", id="lab.warm"),
        Binding("z", "present", "Present", id="lab.present"),
        Binding("o", "open_trace", "Replay trace…", id="lab.replay"),
        Binding("left_square_bracket", "recorded(-1)", "Prev recorded", id="lab.replay-prev"),
        Binding("right_square_bracket", "recorded(1)", "Next recorded", id="lab.replay-next"),
        Binding("v", "view", "Lookup/batch view", id="lab.view"),
        Binding("pagedown", "page(1)", "Page down", id="lab.page-down"),
        Binding("pageup", "page(-1)", "Page up", id="lab.page-up"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.run: lab.LookupRun | None = None
        self.frames: list[tuple[int, int]] = [(0, 0)]
        self.frame = 0
        self.speed = 2  # index into SPEEDS
        self.playing = False
        self._timer: Timer | None = None
        self.batch_k = 1000
        self.batch_mode = "mixed"
        self.batch_ids: list[bytes] | None = None
        self.batch_source = ""
        self.last_batch: lab_batch.BatchResult | None = None
        self.runs: list[lab_batch.BatchResult] = []
        self.batch_progress: str = ""
        self.draw_ms: float | None = None  # submit → fully drawn, for the last lookup
        self._asked_at = 0.0
        self._warm = False
        self.expanded = False  # every stage listed, long runs of misses unfolded
        self.replay: tuple[str, list, int] | None = None  # (file, recordings, which) when replaying
        self.warm_runs = False  # batches keep the live store's caches (else: a fresh store per run)

    def compose_body(self) -> ComposeResult:
        yield Label("", id="lab-settings", markup=False)
        with Horizontal(id="lab-big"):  # presentation mode: frame and speed, large
            yield Label("frame", classes="lab-big-label")
            yield Digits("", id="lab-big-frame")
            yield Label("", id="lab-big-of", classes="lab-big-label")
            yield Label("speed", classes="lab-big-label")
            yield Digits("", id="lab-big-speed")
            yield Label("", id="lab-big-state", classes="lab-big-label")
        with ContentSwitcher(initial="lab-lookup", id="lab-views"):
            with VerticalScroll(id="lab-lookup"):
                yield Static("", id="lab-head")
                yield Static("", id="lab-stages")
                yield SearchView(id="lab-search")
                yield Static("", id="lab-frame")
            with VerticalScroll(id="lab-batch"):
                yield Static("", id="lab-batch-summary")
                yield Static("", id="lab-batch-chart")
                yield Static("", id="lab-batch-runs")
        yield Label("", id="lab-batch-status", markup=False)
        yield KeysOverlay(id="lab-keys")

    def on_mount(self) -> None:
        super().on_mount()
        for scroll in self.query(VerticalScroll):
            scroll.can_focus = False  # arrows, Home and End step the lab, not the scroll
        # The lab's main widget: focusable but without keys of its own, so
        # focus has a home in the body (Tab leaves the event log for it).
        views = self.query_one("#lab-views", ContentSwitcher)
        views.can_focus = True
        views.focus()
        self.show_settings()
        self.draw()
        self.show_batch()
        self._batch_status("")
        replay = self.app.lab_replay  # packscope lab --replay FILE
        if replay:
            self.app.lab_replay = None
            self.open_trace(replay)

    # --- settings ---------------------------------------------------------------

    def refresh_data(self) -> None:
        self.show_settings()
        if not self._warm:
            self._warm = True
            self._warm_up()

    @work(thread=True, exclusive=True, group="lab-warm")
    def _warm_up(self) -> None:
        """Import what resolving a revision needs and read the refs once, so
        the first lookup is drawn as fast as the next ones."""
        from packscope.core.face import resolve_revision  # noqa: F401 (loads the resolver)

        session = self.app.core.session  # refresh_data runs once the store is open
        if session is None:
            return
        with self.app.core.lock, contextlib.suppress(PackscopeError):
            session.refs.head()

    def show_settings(self) -> None:
        store = self.app.core.store
        t = Text(no_wrap=True, overflow="ellipsis", end="")
        if store is None:
            t.append(self.app.core.absent or "opening…", style="italic")
        else:
            s = store.settings
            for label, value, key in (
                ("policy", s.policy, "P"),
                ("quick", "on" if s.quick else "off", "U"),
                ("loose cache", s.loose_strategy, "C"),
                ("store algorithm", s.algorithm, "a"),
            ):
                t.append(f"{label} ", style="dim")
                t.append(value, style="bold")
                t.append(f" ({key})   ", style="dim")
            t.append("batch ", style="dim")
            t.append(f"K={self.batch_k:,} {self.batch_mode}", style="bold")
            t.append(" (k, m)   ", style="dim")
            t.append("runs ", style="dim")
            t.append("warm" if self.warm_runs else "cold", style="bold")
            t.append(" (W)", style="dim")
        self.query_one("#lab-settings", Label).update(t)

    def action_next_setting(self, name: str) -> None:
        core = self.app.core
        if not core.ready:
            return
        s = core.store.settings
        value = {
            "policy": "git" if s.policy == "gated" else "gated",
            "quick": not s.quick,
            "loose_strategy": "global-resort" if s.loose_strategy == "per-subdir" else "per-subdir",
            "algorithm": ALGORITHMS[(ALGORITHMS.index(s.algorithm) + 1) % len(ALGORITHMS)],
        }[name]
        self.app.set_store_setting(name, value)  # also what the command palette does
        self.show_settings()
        if self.run is not None and self.run.oid is not None:
            self.lookup(self.run.text)  # the same lookup under the new setting, at once

    # --- one lookup ---------------------------------------------------------------

    def action_enter(self) -> None:
        """Enter unfolds (and folds again) a long list of packs searched;
        with nothing to unfold it asks for a lookup, as l does."""
        if folded_runs(self.run) and self.query_one(ContentSwitcher).current == "lab-lookup":
            self.expanded = not self.expanded
            self.draw()
        else:
            self.action_ask()

    def action_ask(self) -> None:
        from packscope.inspector.widgets.prompt import Prompt

        last = self.run.text if self.run is not None else ""

        def chosen(text: str | None) -> None:
            if text:
                self.lookup(text)

        self.app.push_screen(Prompt("look up:", "id, abbreviation or revision", last), chosen)

    def lookup(self, text: str) -> None:
        if not self.app.core.ready:
            self.notify("the repository is still opening", timeout=2)
            return
        self._asked_at = time.perf_counter()
        core = self.app.core
        # Usually the lock is free and a lookup takes a millisecond: do it
        # here, so it is drawn at once; behind a batch, wait in a worker.
        if core.lock.acquire(blocking=False):
            try:
                run = self._traced(text)
            finally:
                core.lock.release()
            self.show_run(run)
        else:
            self._lookup_worker(text)

    def _traced(self, text: str) -> lab.LookupRun:
        core = self.app.core
        try:
            return lab.traced_lookup(core.session, core.lock, text)
        except PackscopeError as e:
            return lab.LookupRun(text, None, e.message, [], [], False, None, None, 0.0, "")

    @work(thread=True, exclusive=True, group="lab-lookup")
    def _lookup_worker(self, text: str) -> None:
        self.app.call_from_thread(self.show_run, self._traced(text))

    def show_run(self, run: lab.LookupRun, replay: bool = False) -> None:
        self.stop()
        self.run = run
        self.expanded = False
        if not replay:
            self.replay = None
        self.frames = run.frames()
        self.frame = len(self.frames) - 1  # the whole lookup first; Home replays it
        self.query_one(ContentSwitcher).current = "lab-lookup"
        self.draw()
        asked = self._asked_at

        def drawn() -> None:
            if asked:
                self.draw_ms = (time.perf_counter() - asked) * 1e3
                self._asked_at = 0.0
                self.draw_head()

        self.call_after_refresh(drawn)

    def on_resize(self, event) -> None:
        super().on_resize(event)
        if self.ready:
            self.draw()

    # --- presentation mode ----------------------------------------------------------

    @property
    def presenting(self) -> bool:
        return bool(getattr(self.app, "present", False))

    def action_present(self) -> None:
        """Presentation mode (also ``--present``): no event log or rates,
        taller bucket bars, the keys pressed shown in a corner, the frame
        and the speed in large digits."""
        self.app.present = not self.presenting  # (every screen watches it: the panels fold)
        if self.presenting:
            self.query_one(KeysOverlay).add("z")  # the key that started it, too
        self.draw()

    def on_key(self, event) -> None:
        # Keys reach the screen before the bindings run (they bubble up
        # from the focused widget): note them, do not stop them.
        if self.presenting:
            overlay = self.query_one(KeysOverlay)
            overlay.add(event.key)
            self._place_keys()

    def _place_keys(self) -> None:
        overlay = self.query_one(KeysOverlay)
        overlay.display = self.presenting
        if self.presenting:
            body = self.query_one("#body")
            overlay.place(body.size.width, body.size.height)

    def tick(self) -> None:
        if self.presenting:
            self.query_one(KeysOverlay).refresh(layout=True)  # old keys fade out
            self._place_keys()

    def draw_big(self) -> None:
        big = self.query_one("#lab-big")
        big.display = self.presenting and not self.short
        if not big.display:
            return
        self.query_one("#lab-big-frame", Digits).update(str(self.frame + 1) if self.run is not None else "0")
        self.query_one("#lab-big-of", Label).update(f"of {len(self.frames)}")
        self.query_one("#lab-big-speed", Digits).update(str(SPEEDS[self.speed]))
        state = "frames/s  ▶ playing" if self.playing else "frames/s  ⏸ paused"
        self.query_one("#lab-big-state", Label).update(state)

    @property
    def short(self) -> bool:
        """A terminal too short for the roomy layout (80×24): one line of
        probes per algorithm, no spacing."""
        return self.app.size.height < SHORT_ROWS

    def draw_head(self) -> None:
        run = self.run
        t = Text(end="", no_wrap=True, overflow="ellipsis")
        if self.replay is not None and run is not None:
            path, recordings, i = self.replay
            t.append(f"replay {i + 1}/{len(recordings)}", style="bold reverse")
            t.append_text(literal(f" {os.path.basename(path)} ", "dim"))
        if run is None:
            t.append("no lookup yet", style="dim")
        elif run.oid is None:
            t.append_text(literal(run.text, "bold"))
            t.append(f": {run.error}", style="red")
        else:
            t.append_text(literal(run.text, "bold"))
            if run.text != run.oid.hex():
                t.append(f" → {run.oid.hex()}")
            t.append("  ")
            if run.found:
                t.append("found", style="bold green")
                t.append_text(literal(f" in {run.source} {run.where}"))
            else:
                t.append("missing", style="bold red")
            t.append(f"  {run.seconds * 1e6:.0f} µs in the store", style="dim")
            if self.replay is not None:
                t.append(" (recorded)", style="dim")
            if self.draw_ms is not None:
                t.append(f", drawn in {self.draw_ms:.0f} ms", style="dim")
        self.query_one("#lab-head", Static).update(t)

    def draw(self) -> None:
        run = self.run
        stage_i, step = self.frames[self.frame] if run is not None else (0, 0)
        self.draw_head()
        stages_text = stage_list(run, stage_i, self.expanded)
        self.query_one("#lab-stages", Static).update(stages_text)
        # The bucket search drawn: this stage's, or (past it) the last one, finished.
        stage = None
        if run is not None:
            for j in range(min(stage_i, len(run.stages) - 1), -1, -1):
                if run.stages[j].is_search:
                    stage = run.stages[j]
                    step = step if j == stage_i else stage.steps
                    break
        note = "No bucket was searched." if run is not None and run.oid is not None else ""
        view = self.query_one(SearchView)
        view.bar_rows = 3 if self.presenting and not self.short else 1
        self.draw_big()
        self._place_keys()
        self.set_class(self.short, "-short")
        f = self._frame_line(run, stage_i, step)
        view.probe_lines = self._probe_lines(view, stages_text, f)
        view.show(stage, step, note)
        self.query_one("#lab-frame", Static).update(f)

    def _probe_lines(self, view: SearchView, stages_text: Text, frame_text: Text) -> int:
        """Lines each algorithm's probes may take: what the lookup view has
        left once everything else is drawn (1 to 3)."""
        scroll = self.query_one("#lab-lookup")
        height, width = scroll.content_region.height, scroll.content_region.width
        if not height or not width:
            return 1 if self.short else 2
        console = self.app.console
        margins = 0 if self.short else 2
        used = 1 + stages_text.plain.count("\n") + 1 + rendered_height(console, frame_text, width) + margins
        free = height - used - view.fixed_height(width)
        return max(1, min(3, free // len(ALGORITHMS)))

    def _frame_line(self, run, stage_i: int, step: int) -> Text:
        f = Text(end="")
        if run is not None and run.stages:
            f.append(f"frame {self.frame + 1}/{len(self.frames)}", style="bold")
            f.append(f"   stage {stage_i + 1}/{len(run.stages)}")
            here = run.stages[stage_i]
            if here.is_search:
                f.append(f"   step {step}/{here.steps}")
            f.append("   ")
            f.append("▶ playing" if self.playing else "⏸ paused", style="bold green" if self.playing else "dim")
            f.append(f" at {SPEEDS[self.speed]} frames/s", style="dim")
            if not self.short:
                f.append("   space/→ step  ← back  Home/End  p play  +/- speed", style="dim")
        return f

    # --- stepping and playing --------------------------------------------------------

    def action_page(self, d: int) -> None:
        """PageUp/PageDown scroll the view shown (the views take no focus:
        arrows, Home and End step the lab) — a long stage list unfolded, or
        a batch's runs table on a short terminal."""
        view = self.query_one(f"#{self.query_one(ContentSwitcher).current}", VerticalScroll)
        view.scroll_page_down(animate=False) if d > 0 else view.scroll_page_up(animate=False)

    def set_frame(self, n: int) -> None:
        self.frame = max(0, min(n, len(self.frames) - 1))
        self.draw()

    def action_step(self, d: int) -> None:
        if self.run is None:
            return
        self.stop()
        if d > 0 and self.frame == len(self.frames) - 1:
            self.set_frame(0)  # from the end, start over
        else:
            self.set_frame(self.frame + d)

    def action_frame(self, n: int) -> None:
        self.stop()
        self.set_frame(n if n >= 0 else len(self.frames) - 1)

    def action_play(self) -> None:
        if self.run is None:
            return
        if self.playing:
            self.stop()
            self.draw()
            return
        if self.frame == len(self.frames) - 1:
            self.frame = 0
        self.playing = True
        self._timer = self.set_interval(1 / SPEEDS[self.speed], self._play_tick)
        self.draw()

    def _play_tick(self) -> None:
        if self.frame >= len(self.frames) - 1:
            self.stop()
            self.draw()
            return
        self.set_frame(self.frame + 1)
        if self.frame >= len(self.frames) - 1:
            self.stop()
            self.draw()

    def stop(self) -> None:
        self.playing = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def action_speed(self, d: int) -> None:
        self.speed = max(0, min(len(SPEEDS) - 1, self.speed + d))
        if self.playing:
            if self._timer is not None:
                self._timer.stop()
            self._timer = self.set_interval(1 / SPEEDS[self.speed], self._play_tick)
        self.draw()

    def current_id(self) -> str | None:
        return self.run.oid.hex() if self.run is not None and self.run.oid is not None else None

    def on_unmount(self) -> None:
        self.stop()
