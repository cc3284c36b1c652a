"""What a commit changed, for the Commit screen: the changed files against
each parent (a root commit: against the empty tree), then their line
counts, read in a worker as they come (core's
:mod:`packscope.core.history.commit_changes` does the diffing, as
``git diff -M100% --numstat`` would).

A merge is shown against each of its parents in turn (git's combined
view is not drawn).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from packscope.core.errors import PackscopeError

COUNT_BATCH_SECONDS = 0.1  # how often counted lines reach the screen
MAX_COUNTED = 5000  # files counted per parent: past this, the list shows no counts


@dataclass
class ParentChanges:
    """The files ``commit`` changed against ``parent`` (None: a root commit,
    against the empty tree); ``counts[i]`` is numstat's (added, deleted) of
    ``changes[i]`` once counted, None for a binary file."""

    parent: bytes | None
    number: int  # 1 for the first parent
    changes: list = field(default_factory=list)
    counts: dict[int, tuple[int, int] | None] = field(default_factory=dict)
    error: str | None = None
    counting_done: bool = False

    def totals(self) -> tuple[int, int]:
        added = sum(c[0] for c in self.counts.values() if c is not None)
        deleted = sum(c[1] for c in self.counts.values() if c is not None)
        return added, deleted


def _message(e: PackscopeError) -> str:
    return e.message + (f" [{e.location()}]" if e.location() else "")


def list_changes(core, commit, oid: bytes | None = None) -> list[ParentChanges]:
    """The changed files against each parent of ``commit`` (a parsed
    commit, ``oid`` its id) as git sees its parents: a shallow clone's
    boundary commit (or a grafted one) has the parents the shallow file
    (or the grafts) give it — none at the boundary, so its changes are
    against the empty tree, as `git show` lists them, not against parents
    that were never fetched."""
    from packscope.core.history.commit_changes import file_changes

    session = core.bulk
    store = session.store
    out = []
    overrides: dict = {}
    if oid is not None:
        try:
            with core.lock:
                overrides = session.objects.parent_table
        except PackscopeError:
            pass  # an unreadable shallow or grafts file: the stored parents
    parents = list(overrides.get(oid, commit.parents) if oid is not None else commit.parents) or [None]
    for number, parent in enumerate(parents, 1):
        pc = ParentChanges(parent, number)
        try:
            with core.lock:
                old_tree = _tree_of(store, parent) if parent is not None else None
                pc.changes = file_changes(store, old_tree, commit.tree)
        except PackscopeError as e:
            pc.error = _message(e)
        out.append(pc)
    return out


def _tree_of(store, oid: bytes) -> bytes:
    from packscope.core.objects import parse_commit

    typ, data = store.read(oid)
    if typ != "commit":
        raise PackscopeError(f"parent {oid.hex()} is a {typ}, not a commit", oid=oid.hex())
    return parse_commit(data, store.fmt, oid).tree


def count_lines(
    core,
    parents: list[ParentChanges],
    *,
    counted: Callable[[], None],
    cancelled: Callable[[], bool],
) -> None:
    """Fill every ``ParentChanges.counts`` (numstat), first parent first;
    ``counted()`` now and then as counts arrive."""
    import time

    from packscope.core.history.commit_changes import line_counts

    store = core.bulk.store
    last = time.monotonic()
    for pc in parents:
        for i, change in enumerate(pc.changes[:MAX_COUNTED]):
            if cancelled():
                return
            try:
                with core.lock:
                    pc.counts[i] = line_counts(store, change)
            except PackscopeError as e:
                pc.error = pc.error or f"{change.path.decode('utf-8', 'replace')}: {_message(e)}"
            if time.monotonic() - last > COUNT_BATCH_SECONDS:
                last = time.monotonic()
                counted()
        pc.counting_done = True
        counted()


def patch_text(core, change, max_lines: int = 5000) -> list[bytes]:
    """The file's patch as ``git diff -M100%`` prints it (long ones cut with a note)."""
    from packscope.core.history.abbrev import StoreAbbreviator, configured_abbrev
    from packscope.core.history.commit_changes import patch_lines

    with core.lock:
        session = core.bulk
        store = session.store
        # the index line's ids as long as git makes them here (core.abbrev, else 10 digits on git.git)
        try:
            min_len = configured_abbrev(session.repo.config, store.fmt.hexsz)
        except ValueError:
            min_len = None
        return patch_lines(store, change, max_lines=max_lines, abbrev=StoreAbbreviator(store, min_len))
