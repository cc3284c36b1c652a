"""Commands of the packscope CLI, one module each."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from packscope.inspector.collector import collector_paused


def without_cycle_collector(run: Callable[[Any], int]) -> Callable[[Any], int]:
    """A history-walking command's ``run`` with the cyclic collector off: a
    walk allocates a node per commit and never makes reference cycles, so
    the collector would only rescan them (about 7% of a long log)."""

    @functools.wraps(run)
    def walking(args: Any) -> int:
        # What the command made is frozen at the end: the interpreter's last
        # collection at exit would rescan all of it (~7 ms after dulwich's log --all).
        with collector_paused(freeze_after=True):
            return run(args)

    return walking


def command_parser(sub: Any, name: str, doc: str | None, help: str, **options: Any) -> Any:
    """The subcommand's parser: ``help`` in the list of commands, the
    module's docstring after its first paragraph as the description."""
    return sub.add_parser(name, help=help, description=(doc or "").split("\n\n", 1)[1], **options)
