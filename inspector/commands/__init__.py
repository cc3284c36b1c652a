"""Commands of the packscope CLI, one module each."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import Any


def without_cycle_collector(run: Callable[[Any], int]) -> Callable[[Any], int]:
    """A history-walking command's ``run`` with the cyclic collector off: a
    walk allocates a node per commit and never makes reference cycles, so
    the collector would only rescan them (about 7% of a long log)."""

    @functools.wraps(run)
    def walking(args: Any) -> int:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return run(args)
        finally:
            # What the command made stays out of the collector's sight:
            # the interpreter's last collection at exit would rescan all of
            # it for nothing (~7 ms after dulwich's log --all).
            gc.freeze()
            if was_enabled:
                gc.enable()

    return walking


def command_parser(sub: Any, name: str, doc: str | None, help: str, **options: Any) -> Any:
    """The subcommand's parser: ``help`` in the list of commands, the
    module's docstring after its first paragraph as the description."""
    return sub.add_parser(name, help=help, description=(doc or "").split("\n\n", 1)[1], **options)
