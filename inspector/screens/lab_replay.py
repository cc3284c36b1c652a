"""The Lookup lab's recorded traces (part of ``LabScreen``): a file of
``packscope lookup --json`` output opened (o, or ``packscope lab --replay``)
and its lookups shown one by one ([ and ]), stepped as live ones."""

from __future__ import annotations

from packscope.core.errors import PackscopeError


class LabReplay:
    """Mixed into ``LabScreen``: its actions o, [ and ]."""

    def action_open_trace(self) -> None:
        from packscope.inspector.widgets.prompt import Prompt

        self.app.push_screen(
            Prompt("replay:", "a file of `packscope lookup --json` output"),
            lambda path: path and self.open_trace(path),
        )

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

        _path, recordings, i = self.replay
        core = self.app.core
        try:
            run = replayed_run(recordings[i], core.store, core.lock)
        except PackscopeError as e:
            self.notify(f"{e.message} — {e.remedy}", severity="error", timeout=6)
            return
        self._asked_at = 0.0
        self.show_run(run, replay=True)
