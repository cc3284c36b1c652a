"""Starting the UI: the one place that finds the repository the UI opens.

However the UI is started — ``packscope`` in the repository or one of its
subdirectories, ``packscope -C PATH``, ``packscope PATH`` (``.`` too),
``packscope --present``, ``packscope demo``, ``packscope lab [--replay
FILE]`` — the command line ends here: the repository is found once, before
the terminal is taken (an error is reported as any command's, exit status
128), and handed to the app, which opens every session on that one value
(``CoreAccess.repository``).  Nothing later finds it again from a path or
the current directory.

``packscope lab --replay FILE`` outside any repository is not an error: a
recorded trace replays on any machine, so the app starts with no repository
(``absent`` says why) and the Lab shows the recording.

The tests build their apps with ``packscope.inspector.cli.ui_app`` (the
command line's own parsing, then this), so they start the UI as a user does.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import TYPE_CHECKING

from packscope.inspector.collector import collector_paused

if TYPE_CHECKING:
    from packscope.inspector.app import PackscopeApp


def build_app(
    path: str | None = None,
    *,
    present: bool = False,
    start: str | None = None,
    replay: str | None = None,
) -> PackscopeApp:
    """The app ``packscope`` runs: on the repository at ``path`` (None:
    discovered from the current directory and the environment, as git does)."""
    from packscope.core.errors import NotARepositoryError
    from packscope.core.repo.session import find_repository

    if replay:
        from packscope.inspector.replay import read_recordings

        read_recordings(replay)  # a bad file is a command-line error, before the screen is taken
    absent = None
    repository = None
    try:
        # Cheap (a few stat calls): fail before taking over the terminal.
        repository = find_repository(os.path.abspath(path) if path is not None else None)
    except NotARepositoryError:
        if not (replay and path is None):
            raise
        absent = "no repository here: replaying a recorded trace"
    app: PackscopeApp = import_ui().PackscopeApp(repository, present=present, start=start, absent=absent)
    app.lab_replay = os.path.abspath(os.path.expanduser(replay)) if replay else None
    return app


def import_ui() -> ModuleType:
    """packscope.inspector.app: Textual is imported only to draw.  Its
    imports make tens of thousands of long-lived objects and no garbage: the
    collector would only rescan them (~3% of the first paint), so it waits,
    and then leaves them be.  (bench ui-startup starts the UI this way too.)"""
    with collector_paused(freeze_after=True):
        from packscope.inspector import app
    return app


def run(app: PackscopeApp) -> int:
    """Run ``app`` in the terminal until it quits; its exit status."""
    app.run()
    return app.return_code or 0
