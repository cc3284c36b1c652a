"""The Refs screen's rows as data: every ref `git for-each-ref` lists, then
the stash list, each with its commit's facts; and the ahead/behind counts
against HEAD, found one ref at a time (each commit read under the core
lock, so the UI keeps drawing while a long count runs)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from packscope.core.errors import PackscopeError

MAX_PEEL = 16


@dataclass
class RefEntry:
    """One row: a ref (``kind`` branch, remote, tag, other) or a stash entry."""

    name: str  # full ref name, or "stash@{n}"
    short: str  # what the row shows
    kind: str
    oid: bytes  # what the ref names (a tag object for an annotated tag)
    commit: bytes | None  # the commit it peels to (None: not a commit)
    date: str = ""
    subject: str = ""
    ahead: int | None = None  # commits HEAD has that this ref lacks
    behind: int | None = None  # commits this ref has that HEAD lacks
    ahead_exact: bool = True
    behind_exact: bool = True
    error: str = ""
    reflog: str | None = None  # the reflog this row opens with `l` (full ref name), if any
    extra: dict = field(default_factory=dict)


@dataclass
class RefsSnapshot:
    head: bytes | None
    head_name: str  # "main", or "HEAD (detached)"
    entries: list[RefEntry]


def _kind(name: str) -> tuple[str, str]:
    for prefix, kind in (("refs/heads/", "branch"), ("refs/remotes/", "remote"), ("refs/tags/", "tag")):
        if name.startswith(prefix):
            return kind, name[len(prefix) :]
    return "other", name[len("refs/") :]


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def load_refs(session, lock) -> RefsSnapshot:
    """Rows for every ref (for-each-ref's order) and stash entry, read with ``lock`` held."""
    from packscope.core.history.log_format import format_date_short
    from packscope.core.history.ref_list import list_refs
    from packscope.core.objects import parse_commit, parse_tag
    from packscope.core.repo.reflog import has_reflog, reflog_rows

    refs, store, repo = session.refs, session.objects, session.repo
    with lock:
        rows = list_refs(refs, store)
        try:
            chain = refs.follow("HEAD")
            head = refs.resolve("HEAD")
            head_name = _kind(chain[-1].name)[1] if len(chain) > 1 else "HEAD (detached)"
        except PackscopeError:
            head, head_name = None, "HEAD (unborn or broken)"
        stash = reflog_rows(repo, "refs/stash") if any(r.name == "refs/stash" for r in rows) else []
    entries = []

    def commit_facts(oid: bytes) -> tuple[bytes | None, str, str]:
        with lock:
            for _ in range(MAX_PEEL):
                kind, data = store.read(oid)
                if kind != "tag":
                    break
                oid = parse_tag(data, store.fmt, oid).object
            if kind != "commit":
                return None, "", f"({kind})"
            c = parse_commit(data, store.fmt, oid)
        date = format_date_short(c.committer.time, c.committer.tz) if c.committer else ""
        from packscope.core.history.ref_list import ref_subject

        return oid, date, _text(ref_subject(c.message))

    for r in rows:
        kind, short = _kind(r.name)
        e = RefEntry(r.name, short, kind, r.oid, None)
        try:
            e.commit, e.date, e.subject = commit_facts(r.oid)
        except PackscopeError as err:
            e.error = err.message
        with lock:
            e.reflog = r.name if has_reflog(repo, r.name) else None
        entries.append(e)
    for n, line in enumerate(stash):
        # shown as `git stash list` starts its lines: "stash@{0}: WIP on main: …"
        e = RefEntry(f"stash@{{{n}}}", f"stash@{{{n}}}:", "stash", line.new, None, reflog=None)
        try:
            e.commit, e.date, _ = commit_facts(line.new)
        except PackscopeError as err:
            e.error = err.message
        e.subject = _text(line.message)
        entries.append(e)
    return RefsSnapshot(head, head_name, entries)


def count_all(
    session,
    lock,
    head: bytes,
    entries: list[RefEntry],
    found: Callable[[int, int, int, bool, bool], None],
    cancelled: Callable[[], bool],
    limit: int,
    next_row: Callable[[], int | None] | None = None,
) -> None:
    """``found(row, ahead, behind, ahead_exact, behind_exact)`` for each row with a commit, in
    the order ``next_row()`` picks (default: row order); stops when
    ``cancelled()``.  Each commit is read under ``lock``."""
    from packscope.core.errors import CancelledError
    from packscope.core.history.ahead_behind import ahead_behind, with_store_fallback
    from packscope.core.history.graph_walk import WalkSource

    with lock:
        source = WalkSource.open(session.repo, session.store, refs=session.refs)

    facts = with_store_fallback(source.commit_info, session.objects)

    def info(oid: bytes):
        with lock:
            return facts(oid)

    try:
        order = iter(range(len(entries)))
        pick = next_row or (lambda: next(order, None))
        while (row := pick()) is not None:
            e = entries[row]
            if cancelled():
                return
            if e.commit is None:
                continue
            try:
                counts = ahead_behind(info, head, e.commit, limit=limit, cancelled=cancelled)
            except CancelledError:
                return
            except PackscopeError:
                continue
            found(row, counts.left, counts.right, counts.left_exact, counts.right_exact)
    finally:
        with lock:
            source.close()
