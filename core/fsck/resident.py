"""Keeping a check's resident set down, for every caller of the check.

A full check reads every pack whole: each page it touched would stay
resident (git.git: its whole 500 MB pack) through the later phases.  So the
mapped pages go back to the kernel (they stay in the page cache; a later
read maps them again) at every phase change and every ``RELEASE_EVERY``
progress reports within a phase.  The connectivity walk reads commits and
trees, mostly shallow chains: it gets a smaller delta-base cache than the
pack pass (git's 96 MB).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from packscope.core.store.odb import ObjectStore

RELEASE_EVERY = 64  # progress reports (512 objects each) between releases of mapped pages
WALK_DELTA_CACHE = 32 << 20  # bytes of delta bases kept while walking connectivity

Progress = Callable[[int, int, str], None]


class ResidentSetKeeper:
    """A progress callback that applies the rules above to ``store``, then
    passes the report on to ``progress`` (when given)."""

    __slots__ = ("calls", "phase", "progress", "store")

    def __init__(self, store: ObjectStore, progress: Progress | None = None) -> None:
        self.store, self.progress = store, progress
        self.phase: str | None = None
        self.calls = 0

    def __call__(self, done: int, total: int, phase: str) -> None:
        if phase != self.phase and phase == "connectivity":
            cache = self.store.delta_cache
            cache.budget = min(cache.budget, WALK_DELTA_CACHE)
            cache.clear()
        if phase != self.phase or self.calls % RELEASE_EVERY == 0:
            self.store.release_mapped_pages()
        self.calls += 1
        self.phase = phase
        if self.progress is not None:
            self.progress(done, total, phase)
