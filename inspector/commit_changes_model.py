"""What a commit changed, for the Commit screen: the changed files against
each parent (a root commit: against the empty tree), then their line
counts, read in a worker as they come (core's
:mod:`packscope.core.history.commit_changes` does the diffing, as
``git diff -M --numstat`` would: renames found as ``diff.renames`` says,
by similarity at 50% by default, within :data:`RENAME_BUDGET_SECONDS` —
past it, exact renames only).

A merge is shown against each of its parents in turn, and on request as
git's combined diff (``--cc``, :func:`combined_text`).

Every diff has a budget: a file larger than :data:`FILE_BUDGET_BYTES` (either
side) is not counted nor diffed unless asked, and a count or a diff that
runs past its time budget is stopped; the file is then marked *skipped*
with the reason, and the Diff screen offers to compute it anyway.  The
diffs run without the store's lock (only the blob reads take it) and stop
within a few milliseconds of their ``cancelled()`` turning true.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from packscope.core.errors import PackscopeError
from packscope.core.history.commit_changes import BlobSource

COUNT_BATCH_SECONDS = 0.1  # how often counted lines reach the screen
MAX_COUNTED = 5000  # files counted per parent: past this, the list shows no counts
FILE_BUDGET_BYTES = 512 * 1024  # a side larger than this is not diffed unless asked
COUNT_BUDGET_SECONDS = 1.0  # one file's line count, before it is skipped
DIFF_BUDGET_SECONDS = 3.0  # one file's diff on the Diff screen, before it is stopped
RENAME_BUDGET_SECONDS = 5.0  # the similarity search per parent, before exact renames only
COMBINED_BUDGET_SECONDS = 5.0  # a merge's combined diff


@dataclass
class ParentChanges:
    """The files ``commit`` changed against ``parent`` (None: a root commit,
    against the empty tree); ``counts[i]`` is numstat's (added, deleted) of
    ``changes[i]`` once counted, None for a binary file."""

    parent: bytes | None
    number: int  # 1 for the first parent
    changes: list = field(default_factory=list)
    counts: dict[int, tuple[int, int] | None] = field(default_factory=dict)
    skipped: dict[int, str] = field(default_factory=dict)  # index -> why it was not counted
    error: str | None = None
    counting_done: bool = False
    renames_note: str | None = None  # why similarity renames were not searched

    def totals(self) -> tuple[int, int]:
        added = sum(c[0] for c in self.counts.values() if c is not None)
        deleted = sum(c[1] for c in self.counts.values() if c is not None)
        return added, deleted


def size_text(n: int) -> str:
    """Bytes as the budget notes say them: 942 KB, 20.1 MB."""
    if n >= 10 * 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB"
    return f"{max(1, round(n / 1024)):,} KB"


BUDGET_TEXT = size_text(FILE_BUDGET_BYTES)


class _Running:
    """How many counts and diffs are computing now, in any thread: a view's
    worker is cancelled at once when the view goes, but its thread runs
    until its diff next checks — this says when it has actually stopped."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self.count = 0

    def __enter__(self) -> None:
        with self._lock:
            self.count += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.count -= 1


running = _Running()


class OverBudget(Exception):
    """A count or diff ran past its time budget (internal: never leaves this module)."""


def budget_check(cancelled: Callable[[], bool], seconds: float | None) -> Callable[[], None]:
    """The ``check`` a diff calls now and then: CancelledError once
    ``cancelled()``, OverBudget past ``seconds`` (None: no time limit)."""
    import time

    from packscope.core.errors import CancelledError

    deadline = None if seconds is None else time.monotonic() + seconds

    def check() -> None:
        if cancelled():
            raise CancelledError("the diff was cancelled: its view was left")
        if deadline is not None and time.monotonic() > deadline:
            raise OverBudget()

    return check


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
    minimum, copies, limit = rename_settings(session)
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
            try:
                pc.changes = file_changes(
                    _Locked(core, store),
                    old_tree,
                    commit.tree,
                    minimum=minimum,
                    copies=copies,
                    limit=limit,
                    check=budget_check(lambda: False, RENAME_BUDGET_SECONDS),
                )
            except OverBudget:
                pc.renames_note = f"renames by similarity not searched: over the {RENAME_BUDGET_SECONDS:g} s budget"
                with core.lock:
                    pc.changes = file_changes(store, old_tree, commit.tree)
        except PackscopeError as e:
            pc.error = _message(e)
        out.append(pc)
    return out


def rename_settings(session) -> tuple[int | None, bool, int]:
    """(minimum score or None, copies?, limit) as ``diff.renames`` and
    ``diff.renameLimit`` ask (git's defaults: -M at 50%, 1000)."""
    from packscope.core.history.renames import DEFAULT_RENAME_LIMIT, DEFAULT_SCORE

    config = session.repo.config
    value = ((config.get("diff", "renames") if config else None) or "true").strip().lower()
    limit = DEFAULT_RENAME_LIMIT
    with contextlib.suppress(ValueError):
        limit = int(config.get("diff", "renameLimit") or limit) if config else limit
    if value in ("false", "no", "off", "0"):
        return None, False, limit
    return DEFAULT_SCORE, value in ("copies", "copy"), limit


def combined_text(core, commit, oid: bytes, *, cancelled: Callable[[], bool]) -> tuple[list[bytes], int]:
    """A merge's ``git show --cc`` patch lines (as git prints them after
    the log entry) and how many files it names.  Raises OverBudget past
    :data:`COMBINED_BUDGET_SECONDS`, CancelledError once ``cancelled()``."""
    from packscope.core.history.abbrev import StoreAbbreviator, configured_abbrev
    from packscope.core.history.combined_diff import combined_files, combined_patch

    session = core.bulk
    store = session.store
    check = budget_check(cancelled, COMBINED_BUDGET_SECONDS)
    with core.lock:
        overrides = {}
        with contextlib.suppress(PackscopeError):
            overrides = session.objects.parent_table
        parents = list(overrides.get(oid, commit.parents))
        trees: list[bytes | None] = [_tree_of(store, p) for p in parents]
        files = combined_files(store, trees, commit.tree)
        try:
            min_len = configured_abbrev(session.repo.config, store.fmt.hexsz)
        except ValueError:
            min_len = None
        abbrev = _LockedAbbrev(core, StoreAbbreviator(store, min_len))
    out: list[bytes] = []
    shown = 0
    with running:
        for f in files:
            check()
            lines = combined_patch(_Locked(core, store), f, abbrev=abbrev)
            if lines:
                shown += 1
                out += lines
    return out, shown


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
    ``counted()`` now and then as counts arrive.  A file over the size
    budget, or whose count runs past the time budget, goes to ``skipped``."""
    with running:
        _count(core, parents, counted, cancelled)


def _count(core, parents: list[ParentChanges], counted: Callable[[], None], cancelled: Callable[[], bool]) -> None:
    import time

    from packscope.core.errors import CancelledError
    from packscope.core.history.commit_changes import change_size, side_content, text_counts

    store = core.bulk.store
    last = time.monotonic()
    for pc in parents:
        for i, change in enumerate(pc.changes[:MAX_COUNTED]):
            if cancelled():
                return
            try:
                with core.lock:
                    size = change_size(store, change)
                    if size > FILE_BUDGET_BYTES:
                        pc.skipped[i] = f"{size_text(size)}, over the {BUDGET_TEXT} budget"
                        continue
                    old = side_content(store, change.old_oid, change.old_mode)
                    new = side_content(store, change.new_oid, change.new_mode)
                # the diff itself runs without the lock: the UI thread may read meanwhile
                pc.counts[i] = text_counts(old, new, budget_check(cancelled, COUNT_BUDGET_SECONDS))
            except OverBudget:
                pc.skipped[i] = f"over the {COUNT_BUDGET_SECONDS:g} s budget"
            except CancelledError:
                return
            except PackscopeError as e:
                pc.error = pc.error or f"{change.path.decode('utf-8', 'replace')}: {_message(e)}"
            finally:
                old = new = b""  # the contents go with the file, not with the loop
            if time.monotonic() - last > COUNT_BATCH_SECONDS:
                last = time.monotonic()
                counted()
        pc.counting_done = True
        counted()


def over_budget(core, change) -> str | None:
    """Why the file's diff is not computed unasked ("942 KB, over the
    512 KB budget"), or None when it is within the budget."""
    from packscope.core.history.commit_changes import change_size

    with core.lock:
        size = change_size(core.bulk.store, change)
    return f"{size_text(size)}, over the {BUDGET_TEXT} budget" if size > FILE_BUDGET_BYTES else None


def patch_text(
    core,
    change,
    max_lines: int = 5000,
    *,
    cancelled: Callable[[], bool] = lambda: False,
    seconds: float | None = None,
) -> list[bytes]:
    """The file's patch as ``git diff -M100%`` prints it (long ones cut with
    a note).  Raises CancelledError once ``cancelled()``, OverBudget past
    ``seconds``."""
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
        abbrev = _LockedAbbrev(core, StoreAbbreviator(store, min_len))
    with running:
        return patch_lines(
            _Locked(core, store), change, max_lines=max_lines, abbrev=abbrev, check=budget_check(cancelled, seconds)
        )


class _Locked(BlobSource):
    """The store, each read taken under the core lock (the diff between
    reads runs without it)."""

    def __init__(self, core, store) -> None:
        self.core, self.store, self.fmt = core, store, store.fmt

    def read(self, oid: bytes) -> tuple[str, bytes]:
        with self.core.lock:
            return self.store.read(oid)

    def read_header(self, oid: bytes) -> tuple[str, int]:
        with self.core.lock:
            return self.store.read_header(oid)


class _LockedAbbrev:
    """An abbreviator whose store lookups take the core lock."""

    def __init__(self, core, inner) -> None:
        self.core, self.inner = core, inner
        self.min_len = inner.min_len

    def __call__(self, oid: bytes) -> str:
        with self.core.lock:
            return self.inner(oid)
