"""The Lookup lab's recorded traces (part of ``LabScreen``): a file of
``packscope lookup --json`` output opened (o, or ``packscope lab --replay``)
and its lookups shown one by one ([ and ]), stepped as live ones."""

from __future__ import annotations

from typing import TYPE_CHECKING

from packscope.core.face import PackscopeError

if TYPE_CHECKING:
    # For the type checker this mixin is a packscope screen (it is mixed
    # into LabScreen); at run time it adds only its methods.
    from packscope.inspector.lab_model import LookupRun
    from packscope.inspector.replay import Recording
    from packscope.inspector.screens.base import PackscopeScreen as _Screen
else:
    _Screen = object


class LabReplay(_Screen):
    """Mixed into ``LabScreen``: its actions o, [ and ]."""

    # What LabScreen keeps for these methods (set in its __init__).
    replay: tuple[str, list[Recording], int] | None  # (file, recordings, which) when replaying
    _asked_at: float

    if TYPE_CHECKING:

        def show_run(self, run: LookupRun, replay: bool = False) -> None: ...

    def action_open_trace(self) -> None:
        from packscope.inspector.widgets.prompt import Prompt

        def chosen(path: str | None) -> None:
            if path:
                self.open_trace(path)

        self.app.push_screen(Prompt("replay:", "a file of `packscope lookup --json` output"), chosen)

    def open_trace(self, path: str) -> bool:
        """Replay the lookups recorded in ``path``, the first one now."""
        from packscope.inspector.replay import read_recordings

        try:
            recordings = read_recordings(path)
        except PackscopeError as e:
            self.notify(f"{e.message} — {e.remedy}", severity="error", timeout=6)
            return False
        self.replay = (path, recordings, 0)
        self.show_recorded()
        return True

    def action_recorded(self, d: int) -> None:
        if self.replay is None:
            self.notify("no recorded trace: o opens one", timeout=2)
            return
        path, recordings, i = self.replay
        self.replay = (path, recordings, (i + d) % len(recordings))
        self.show_recorded()

    def show_recorded(self) -> None:
        from packscope.inspector.replay import replayed_run

        if self.replay is None:
            return
        _path, recordings, i = self.replay
        core = self.app.core
        try:
            run = replayed_run(recordings[i], core.store, core.lock)
        except PackscopeError as e:
            self.notify(f"{e.message} — {e.remedy}", severity="error", timeout=6)
            return
        self._asked_at = 0.0
        self.show_run(run, replay=True)
