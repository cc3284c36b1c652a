"""Command-line revisions as a history walk's starts, in git's order.

``git log`` turns its arguments into a list of start commits and
exclusions, in argument order, and the order matters (equal dates come out
in that order).  :func:`walk_starts` does the same for:

* ``REV`` — anything packscope.core.repo.revision resolves (a tag stays a tag: the walk
  peels it, as git does);
* ``^REV`` — an exclusion (packscope.core.history.walk.Excluded);
* ``A..B`` — ``^A`` then ``B``; an empty side means HEAD (``A..``, ``..B``);
* :data:`ALL` (``--all``) — every ref under ``refs/`` in name order
  (symbolic ones followed, dangling ones skipped), then HEAD, then the HEADs
  of the other worktrees (git's handle_revision_pseudo_opt).  With
  ``strict_all`` (``log``), a ref git cannot use — a loose file that holds
  no id, or an id of an absent object — is git's fatal "bad object REF",
  the first in name order; else such refs are skipped.

``A...B`` (a symmetric difference needs merge bases) is refused with a
clear error.  With no revision at all, HEAD is the start; an unborn HEAD
is git's "does not have any commits yet" error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import Enum
from typing import TYPE_CHECKING, Final, Literal, Protocol

from packscope.core.errors import BadRevisionError, PackscopeError
from packscope.core.history.walk import Excluded
from packscope.core.repo.revision import ObjectSource, resolve_revision

if TYPE_CHECKING:
    from packscope.core.repo.ref_syntax import Ref
    from packscope.core.repo.refs import RefStore
    from packscope.core.repo.repository import Repository


class _All(Enum):
    ALL = "--all"


ALL: Final = _All.ALL  # the --all marker among revision arguments
RevArg = str | Literal[_All.ALL]  # one revision argument: a revision, or the --all marker


class RevisionStore(ObjectSource, Protocol):
    """What the starts need of the objects: revision parsing's reads, and
    existence (``--all`` checks every ref's object)."""

    def contains(self, oid: bytes) -> bool: ...


def walk_starts(
    args: Iterable[RevArg],
    *,
    repo: Repository | None,
    refs: RefStore,
    store: RevisionStore,
    cwd_prefix: str = "",
    strict_all: bool = False,
) -> list[bytes]:
    """Starts (and :class:`Excluded` exclusions) for ``args``: revision
    strings and :data:`ALL` markers, in command-line order."""

    def resolve(text: str) -> bytes:
        return resolve_revision(text, repo=repo, refs=refs, store=store, cwd_prefix=cwd_prefix)

    out: list[bytes] = []
    if not args:
        return [_head(refs, resolve)]
    for arg in args:
        if arg is ALL:
            listed = list(refs.iter_refs("refs/"))  # listed once for the check and the tips
            if strict_all:
                _check_all_refs(refs, store, listed)
            out += all_tips(repo, refs, listed)
        elif "..." in arg:
            raise BadRevisionError(
                f"{arg!r}: symmetric differences (A...B) are not supported",
                remedy="List both sides with A..B and B..A.",
            )
        elif ".." in arg and not arg.startswith("^"):
            a, _, b = arg.partition("..")
            out.append(Excluded(resolve(a or "HEAD")))
            out.append(resolve(b or "HEAD"))
        elif arg.startswith("^"):
            out.append(Excluded(resolve(arg[1:])))
        else:
            out.append(resolve(arg))
    return out


def all_tips(repo: Repository | None, refs: RefStore, listed: Iterable[Ref] | None = None) -> list[bytes]:
    """``--all``: refs by name, HEAD, then the other worktrees' HEADs
    (``listed``: what ``refs.iter_refs("refs/")`` just gave, if at hand)."""
    out = []
    for ref in refs.iter_refs("refs/") if listed is None else listed:
        oid = ref.oid if ref.symref is None else _resolve_or_none(refs, ref.name)
        if oid is not None:
            out.append(oid)
    head = _resolve_or_none(refs, "HEAD")
    if head is not None:
        out.append(head)
    for name in _other_worktree_heads(repo):
        oid = _resolve_or_none(refs, name)
        if oid is not None:
            out.append(oid)
    return out


def _check_all_refs(refs: RefStore, store: RevisionStore, listed: list[Ref]) -> None:
    """git's --all adds every ref, broken ones included, and dies at the
    first it cannot read as an object (``listed``: the refs
    ``refs.iter_refs("refs/")`` just gave, whose broken files it noted)."""
    fatal = refs.fatal_packed_problem()
    if fatal is not None:  # git dies reading packed-refs, before any ref is looked at
        raise fatal
    broken = refs.broken_refs("refs/", relist=False) + refs.packed_bad_names()
    direct = [r for r in listed if r.symref is None]
    absent = _absent(store, [r.oid for r in direct if r.oid is not None])
    if not broken and not absent and all(r.oid is not None for r in direct):
        return  # the usual case: nothing to name
    names: list[tuple[str, Ref | None]] = sorted(
        [(r.name, r) for r in direct] + [(n, None) for n in broken],
        key=lambda item: item[0].encode("utf-8", "surrogateescape"),
    )
    for name, ref in names:
        if ref is None or ref.oid is None or ref.oid in absent:
            raise BadRevisionError(
                f"bad object {name}",
                remedy="Point the ref at an existing commit (git update-ref), or delete it (git update-ref -d).",
            )


def _absent(store: RevisionStore, oids: list[bytes]) -> set[bytes]:
    """The ids of ``oids`` that ``store.contains`` denies.  A store with
    ``locate_many`` (packscope.core.store.batch_lookup) finds them all in
    one batch first, and only what it did not find is asked one by one."""
    locate_many: Callable[[list[bytes]], list[object]] | None = getattr(store, "locate_many", None)
    maybe = oids
    if locate_many is not None:
        maybe = [oid for oid, loc in zip(oids, locate_many(oids), strict=True) if loc is None]
    return {oid for oid in maybe if not store.contains(oid)}


def _other_worktree_heads(repo: Repository | None) -> list[str]:
    if repo is None:
        return []
    current = repo.worktree_name
    names = [] if current is None else ["main-worktree/HEAD"]
    try:
        worktrees = repo.worktrees()
    except OSError:
        return names
    return names + [f"worktrees/{wt.name}/HEAD" for wt in worktrees if wt.name != current]


def _resolve_or_none(refs: RefStore, name: str) -> bytes | None:
    try:
        return refs.resolve(name)
    except PackscopeError:
        return None


def _head(refs: RefStore, resolve: Callable[[str], bytes]) -> bytes:
    head = refs.read("HEAD")
    if head is not None and head.symref is not None:
        try:
            return refs.resolve("HEAD")
        except PackscopeError as e:
            if e.kind == "ref-dangling" and refs.read(head.symref) is None:
                branch = head.symref.removeprefix("refs/heads/")
                raise BadRevisionError(
                    f"your current branch '{branch}' does not have any commits yet",
                    remedy="Commit something first, or name a revision.",
                ) from None
            raise
    return resolve("HEAD")
