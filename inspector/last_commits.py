"""The last commit of every entry of a directory, as answers arrive.

The answer comes from core's last-commit-per-entry walk
(``packscope.core.history.last_modified``), advanced in short holds of the
core lock. :func:`last_commits` calls ``found(batch)`` with
``[(name, commit_id)]`` as entries are answered, ``progress(walked)`` now
and then, and stops when ``cancelled()`` is true.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

HOLD_SECONDS = 0.03  # longest hold of the core lock: the UI draws rows with it
# Answers are handed over at most this often (the first at once): each hand-over
# redraws the listing, and a redraw per hold cost the walk as much CPU as it used.
FOUND_SECONDS = 0.25
SHED_EVERY = 2048  # commits walked between two releases of the packs' mapped pages


def last_commits(
    core,
    commit: bytes,
    path: bytes,
    names: set[bytes],
    *,
    found: Callable[[list[tuple[bytes, bytes]]], None],
    progress: Callable[[int], None] = lambda n: None,
    cancelled: Callable[[], bool] = lambda: False,
) -> None:
    """core's walk, advanced in short holds of the core lock."""
    from packscope.core.errors import CancelledError
    from packscope.core.history.graph_walk import WalkSource
    from packscope.core.history.last_modified import last_modified

    session = core.bulk
    lock = core.lock

    shed_at = [SHED_EVERY]
    batch: list[tuple[bytes, bytes]] = []  # answers not handed over yet
    handed = [-math.inf]  # when answers were last handed over (-inf: never, so the first go at once)

    def hand_over(now: bool) -> None:
        if batch and (now or time.monotonic() - handed[0] >= FOUND_SECONDS):
            found(batch[:])
            batch.clear()
            handed[0] = time.monotonic()

    def tick(p) -> None:
        # Called every few dozen commits from inside the walk, where this
        # thread holds the lock once: let the UI thread draw a row meanwhile
        # (and see answers found a while ago when the next is long in coming).
        progress(p.commits)
        if p.commits >= shed_at[0]:  # the pack pages read so far need not stay resident
            shed_at[0] = p.commits + SHED_EVERY
            session.store.release_mapped_pages()
        lock.release()
        hand_over(False)
        time.sleep(0)
        lock.acquire()

    with lock:
        source = WalkSource.open(session.repo, session.store, refs=session.refs)
        it = last_modified(session.store, commit, path.rstrip(b"/"), source=source, progress=tick, cancelled=cancelled)
    done = False
    try:
        while True:
            until = time.monotonic() + HOLD_SECONDS
            with core.lock:
                try:
                    for name, oid in it:
                        if oid is not None:
                            batch.append((name, oid))
                        if time.monotonic() > until:
                            break
                    else:
                        done = True
                except CancelledError:
                    done = True
            hand_over(done)
            if done or cancelled():
                return
    finally:
        source.close()
