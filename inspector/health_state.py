"""One health state for the whole UI: what opening the repository found
(the problems ``packscope info`` reports) and what the last Health run
found.  The Overview's Health panel and the Health screen read and write
this one record, so they cannot disagree.

Kept on the app object (``health_state(app)``), created on first use.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass(slots=True)
class LastRun:
    mode: str  # "full" or "connectivity"
    ended: float  # wall clock
    counts: dict[str, int]  # by severity: error, warning, info
    exit: int | None  # git fsck's exit bits; None when cancelled or failed
    cancelled: bool = False
    error: str | None = None
    changed: str | None = None  # the repository changed during the run: what ("a repack at 14:02")


@dataclass(slots=True)
class HealthState:
    opening: list[dict] | None = None  # info's problems; None until gathered
    opened: float = 0.0
    last_run: LastRun | None = None
    runs: int = 0
    listeners: list = field(default_factory=list)  # callables: the state changed

    def set_opening(self, problems: list[dict]) -> None:
        self.opening = problems
        self.opened = time.time()
        self._changed()

    def record_run(self, run: LastRun) -> None:
        self.last_run = run
        self.runs += 1
        self._changed()

    def _changed(self) -> None:
        for fn in list(self.listeners):
            fn()


def health_state(app) -> HealthState:
    state = getattr(app, "_packscope_health", None)
    if state is None:
        state = HealthState()
        app._packscope_health = state
    return state


def age_text(seconds: float) -> str:
    s = max(0, int(seconds))
    if s < 60:
        return f"{s} s ago"
    if s < 3600:
        return f"{s // 60} min ago"
    if s < 86400:
        return f"{s // 3600} h ago"
    return f"{s // 86400} d ago"


def describe_run(run: LastRun, now: float | None = None) -> str:
    """ "last Health run (full check) at 12:40, 3 min ago: 2 errors, …"."""
    now = time.time() if now is None else now
    when = time.strftime("%H:%M", time.localtime(run.ended))
    head = f"last Health run ({'full check' if run.mode == 'full' else 'connectivity only'}) at {when}, "
    head += age_text(now - run.ended)
    moved = f"; the repository changed during the run ({run.changed}): 8 then r runs it again" if run.changed else ""
    if run.error:
        return f"{head}: the check failed ({run.error}){moved}"
    c = run.counts
    body = f"{c.get('error', 0)} errors, {c.get('warning', 0)} warnings, {c.get('info', 0)} infos"
    if run.cancelled:
        return f"{head}: cancelled after {body}{moved}"
    return f"{head}: {body}, exit status {run.exit}{moved}"
