"""The cyclic garbage collector paused around work that makes many
long-lived objects and no reference cycles (a walk's commits, Textual's
imports): the collector would only rescan them.  ``freeze_after`` also
moves what exists at the end out of its sight for good (the interpreter's
last collection at exit, or every later pass, would rescan it for nothing)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(*, freeze_after: bool = False) -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze_after:
            gc.freeze()
        if was_enabled:
            gc.enable()
