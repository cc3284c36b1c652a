"""Ctrl-P: commands that take an argument (go to object …) and the store's
settings, offered through Textual's command palette."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from packscope.core.store.search import ALGORITHMS

if TYPE_CHECKING:
    from packscope.inspector.app import PackscopeApp

POLICIES = ("git", "gated")
LOOSE_STRATEGIES = ("per-subdir", "global-resort")


def palette_commands(app: PackscopeApp) -> list[tuple[str, str, Callable[[], object]]]:
    """(title, help, callback) of every fixed command."""
    cmds: list[tuple[str, str, Callable[[], object]]] = [
        ("Rescan now", "re-read every pack directory (reason: request) and flush the loose caches", app.action_rescan),
        ("Toggle event log", "show or hide the event-log panel", app.action_toggle_log),
        ("Toggle rates", "show or hide the sparklines", app.action_toggle_rates),
        ("Pause / resume event log", "freeze the log; events are held, not lost", app.action_toggle_pause),
        ("Clear event log", "empty the event log", app.action_clear_log),
        ("Filter event kinds", "choose which kinds of events the log shows", app.action_filter_log),
        (
            "Run a lookup workload",
            "look up a few thousand ids (present and missing) to watch the store work",
            app.action_workload,
        ),
    ]
    for spec in app.screen_table:
        cmds.append(
            (
                f"Screen: {spec.title}",
                f"switch to the {spec.title} screen (key {spec.key})",
                partial(app.action_switch, spec.name),
            )
        )
    for a in ALGORITHMS:
        cmds.append(
            (
                f"Search algorithm: {a}",
                "how lookups search inside a fanout bucket",
                partial(app.set_store_setting, "algorithm", a),
            )
        )
    for p in POLICIES:
        cmds.append(
            (
                f"Miss policy: {p}",
                "git rescans on every miss; gated only when a pack directory changed",
                partial(app.set_store_setting, "policy", p),
            )
        )
    for s in LOOSE_STRATEGIES:
        cmds.append(
            (
                f"Loose cache strategy: {s}",
                "how the loose name cache keeps its names",
                partial(app.set_store_setting, "loose_strategy", s),
            )
        )
    for q in (True, False):
        cmds.append(
            (
                f"Quick lookups: {'on' if q else 'off'}",
                "quick: expect misses, never rescan, check loose objects through the cache",
                partial(app.set_store_setting, "quick", q),
            )
        )
    return cmds


class PackscopeCommands(Provider):
    if TYPE_CHECKING:  # the packscope app, for the type checker (Textual types it as App)

        @property
        def app(self) -> PackscopeApp: ...

    async def discover(self) -> Hits:
        yield DiscoveryHit("Go to object…", self.app.action_goto, help="type an id, abbreviation or revision")
        for title, help_text, cb in palette_commands(self.app):
            yield DiscoveryHit(title, cb, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        q = query.strip()
        # Anything that could name an object: offer to open it.
        if q and " " not in q:
            yield Hit(
                100,
                f"Go to object {q}",
                partial(self.app.goto_object, q),
                help="resolve it (id, abbreviation or revision) and open the Object screen",
            )
        for word in ("go ", "goto ", "object "):
            if q.lower().startswith(word) and len(q) > len(word):
                arg = q[len(word) :].strip()
                yield Hit(100, f"Go to object {arg}", partial(self.app.goto_object, arg))
        score = matcher.match("Go to object…")
        if score > 0:
            yield Hit(score, matcher.highlight("Go to object…"), self.app.action_goto)
        for title, help_text, cb in palette_commands(self.app):
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), cb, help=help_text)
