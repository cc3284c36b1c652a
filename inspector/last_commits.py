"""The last commit of every entry of a directory, as answers arrive.

The answer comes from core's last-commit-per-entry walk
(``packscope.core.history.last_modified``); without it (an older core) a walk built from
core's public pieces answers the same question here: one
history walk from the commit (limited to the directory), comparing the
directory's entries with the parents' — an entry is answered by the first
commit (in walk order) in which it differs from every parent.

Either way :func:`last_commits` calls ``found(batch)`` with
``[(name, commit_id)]`` as entries are answered, ``progress(walked)`` now
and then, and stops when ``cancelled()`` is true.  Store access happens in
short holds of the core lock.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from packscope.core.errors import PackscopeError

HOLD_SECONDS = 0.03  # longest hold of the core lock: the UI draws rows with it


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
    impl = _core_impl()
    if impl is not None:
        impl(core, commit, path, names, found=found, progress=progress, cancelled=cancelled)
        return
    _walk_impl(core, commit, path, names, found=found, progress=progress, cancelled=cancelled)


def _core_impl():
    """packscope.core.history.last_modified (one walk for all entries) when it is there."""
    try:
        import packscope.core.history.last_modified as lm
    except ImportError:
        return None
    return _via_core if hasattr(lm, "last_modified") else None


def _via_core(core, commit, path, names, *, found, progress, cancelled):
    """core's walk, advanced in short holds of the core lock."""
    from packscope.core.errors import CancelledError
    from packscope.core.history.graph_walk import WalkSource
    from packscope.core.history.last_modified import last_modified

    session = core.bulk
    lock = core.lock

    def tick(p) -> None:
        # Called every few dozen commits from inside the walk, where this
        # thread holds the lock once: let the UI thread draw a row meanwhile.
        progress(p.commits)
        lock.release()
        time.sleep(0)
        lock.acquire()

    with lock:
        source = WalkSource.open(session.repo, session.store, refs=session.refs)
        it = last_modified(session.store, commit, path.rstrip(b"/"), source=source, progress=tick, cancelled=cancelled)
    try:
        while True:
            batch: list = []
            until = time.monotonic() + HOLD_SECONDS
            with core.lock:
                try:
                    for name, oid in it:
                        if oid is not None:
                            batch.append((name, oid))
                        if time.monotonic() > until:
                            break
                    else:
                        it = None
                except CancelledError:
                    it = None
            if batch:
                found(batch)
            if it is None or cancelled():
                return
    finally:
        source.close()


def _walk_impl(core, commit, path, names, *, found, progress, cancelled) -> None:
    from packscope.core.history.graph_walk import WalkSource
    from packscope.core.history.tree_diff import TreeReader
    from packscope.core.history.walk import walk
    from packscope.core.objects import commit_header_fast, mode_is_tree

    session = core.bulk
    store = session.store
    remaining = set(names)
    if not remaining:
        return
    parts = [p for p in path.split(b"/") if p]
    with core.lock:
        source = WalkSource.open(session.repo, store, refs=session.refs)
        # Small: a tree's parsed entries cost ~200 bytes each (git.git's root
        # has 561), and a walk only needs a commit's and its parents' trees.
        reader = TreeReader(store, cache_size=16)
        paths = [path.decode("utf-8", "surrogateescape").rstrip("/")] if parts else None
        # The pack header reader is for graph-less repositories a memory hog
        # (a map of every packed object): read commits through the store then.
        graph = source.graph is not None
        it = walk(store, [commit], paths=paths, **(source.walk_options(paths) if graph else {}))

    def dir_entries(tree: bytes | None) -> dict:
        for p in parts:
            if tree is None:
                return {}
            entry = reader.by_name(tree).get(p)
            if entry is None or not mode_is_tree(entry[0]):
                return {}
            tree = entry[1]
        return reader.by_name(tree) if tree is not None else {}

    def tree_of(oid: bytes) -> bytes | None:
        info = source.commit_info(oid) if graph else None
        if info is not None:
            return info[0]
        typ, data = store.read(oid)
        if typ != "commit":
            return None
        return commit_header_fast(data, store.fmt, oid)[0]

    walked = 0
    try:
        while remaining and not cancelled():
            batch: list[tuple[bytes, bytes]] = []
            exhausted = True
            until = time.monotonic() + HOLD_SECONDS
            with core.lock:
                for c in it:
                    walked += 1
                    mine = dir_entries(c.tree)
                    theirs = []
                    for p in c.parents:
                        try:
                            theirs.append(dir_entries(tree_of(p)))
                        except PackscopeError:
                            theirs.append({})  # a missing parent: everything looks new here
                    for name in list(remaining):
                        now = mine.get(name)
                        if now is None:
                            continue  # not in this commit's directory (removed later, added back?)
                        if all(t.get(name) != now for t in theirs):
                            remaining.discard(name)
                            batch.append((name, c.oid))
                    if batch or time.monotonic() > until:
                        exhausted = False
                        break
            if batch:
                found(batch)
            progress(walked)
            if exhausted:
                break
    finally:
        source.close()
