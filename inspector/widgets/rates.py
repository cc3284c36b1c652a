"""Sparklines of the store's rates (lookups/s, hit rates, rescans), one
sample a second from ``packscope.inspector.events.RateHistory``."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Label, Sparkline

from packscope.inspector.events import RATE_SERIES, RateHistory


class RatesPanel(Horizontal):
    def __init__(self, history: RateHistory, **kw) -> None:
        super().__init__(**kw)
        self.history = history

    def compose(self) -> ComposeResult:
        for key, title in RATE_SERIES:
            with Vertical(classes="rate"):
                yield Label(title, id=f"rate-label-{key}", classes="rate-label", markup=False)
                yield Sparkline(list(self.history.series[key]), id=f"rate-{key}")

    def on_mount(self) -> None:
        self.sync()

    def sync(self) -> None:
        for key, title in RATE_SERIES:
            values = list(self.history.series[key])
            try:
                self.query_one(f"#rate-{key}", Sparkline).data = values
            except NoMatches:  # not composed yet (the screen is still mounting)
                return
            last = values[-1] if values else 0.0
            peak = max(values) if values else 0.0
            shown = f"{last:.0f}" if last >= 10 or last == 0 else f"{last:.1f}"
            self.query_one(f"#rate-label-{key}", Label).update(f"{title} {shown} (max {peak:.0f})")
