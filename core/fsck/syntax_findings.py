"""fsck's findings about objects' content: git's fsck messages from the
syntax check (packscope.core.fsck.syntax) of each object read, and from the
.gitmodules/.gitattributes blobs once every object has been read
(packscope.core.fsck.special_blobs)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Unpack

from packscope.core import native
from packscope.core.errors import CorruptObjectError, MissingObjectError
from packscope.core.fsck.findings import (
    ERROR,
    ERROR_OBJECT,
    REMEDIES,
    WARNING,
    Finding,
    FindingPlace,
)
from packscope.core.fsck.objects import ObjectTable, Unreadable
from packscope.core.fsck.syntax import SyntaxProblem, check_object, check_tree, check_tree_closely

if TYPE_CHECKING:
    from packscope.core.fsck.reach import Promised
    from packscope.core.store.odb import ObjectStore


class _SyntaxFields(FindingPlace, total=False):
    path: str | None


def _syntax_finding(msg_id: str, severity: str, message: str, remedy: str, **fields: Unpack[_SyntaxFields]) -> Finding:
    """One of git's fsck messages about an object's content (``msg_id: message``)."""
    return Finding(
        msg_id,
        severity,
        f"{msg_id}: {message}",
        "objects",
        ERROR_OBJECT if severity == ERROR else 0,
        remedy=remedy,
        msg_id=msg_id,
        **fields,
    )


def _severity(msg_severity: str) -> str:
    """How git reports a message of this level: a fatal one as an error, an
    info one (badFilemode, missingTaggerEntry, ...) as a warning ("warning
    in tree ID: badFilemode: ..."), though neither an info nor a warning
    fails fsck."""
    return ERROR if msg_severity in ("fatal", "error") else WARNING


def syntax_findings(
    type_name: str,
    data: bytes,
    oid: bytes,
    table: ObjectTable,
    *,
    path: str,
    offset: int | None = None,
    pack: str | None = None,
    idx: str | None = None,
    severities: dict[str, str] | None = None,
    promisor: bool = False,
) -> Iterator[Finding]:
    clean_ids: list[tuple[bytes, ...]] = []
    if type_name == "tree":
        problems = _tree_problems(data, table, severities, promisor, clean_ids)
    else:
        problems = check_object(type_name, data, table.fmt, severities)
    for p in problems:
        yield _syntax_finding(
            p.msg_id,
            _severity(p.severity),
            p.message,
            REMEDIES["syntax"],
            path=path,
            offset=offset,
            pack=pack,
            idx=idx,
            oid=oid.hex(),
            object_type=type_name,
            details={} if p.offset is None else {"content_offset": p.offset},
        )
    if table.referenced is not None:  # what it names, for the dangling phase
        if clean_ids:
            table.referenced.update(clean_ids[0])  # the syntax check's own parse
        else:
            table.note_references(type_name, data, oid)


def _tree_problems(
    data: bytes,
    table: ObjectTable,
    severities: dict[str, str] | None,
    promisor: bool,
    clean_ids: list[tuple[bytes, ...]],
) -> list[SyntaxProblem]:
    """A tree's syntax problems, and what it names: its .gitmodules /
    .gitattributes candidates (table.special_blobs) and, when clean, its ids
    (``clean_ids``).  The compiled check answers all three in one pass over
    the tree (a history's trees hold most of a repository's bytes: git.git's
    5.8 GB of them dominated the object pass in Python)."""
    fmt = table.fmt
    compiled = native.backend
    if compiled is None:
        table.special_blobs.add_tree(data, fmt.rawsz, promisor)
        return check_tree(data, fmt, severities, clean_ids)
    flags, ids, candidates = compiled.fsck_tree(data, fmt.rawsz)
    if candidates is None:  # not every entry parsed: the pure scan finds what it can
        table.special_blobs.add_tree(data, fmt.rawsz, promisor)
    elif candidates:
        table.special_blobs.add_candidates(candidates, promisor)
    if flags:
        return check_tree_closely(data, fmt, severities)
    if ids is not None:
        clean_ids.append(ids)
    return []


# --- .gitmodules and .gitattributes ---------------------------------------------------------


def check_special_blobs(
    table: ObjectTable, store: ObjectStore, promised: Promised | None, severities: dict[str, str] | None = None
) -> Iterator[Finding]:
    """The blobs the trees name .gitmodules/.gitattributes, read and checked
    once every object has been (packscope.core.fsck.special_blobs)."""
    from packscope.core.fsck.special_blobs import SEVERITIES

    overrides = severities or {}
    special = table.special_blobs
    if promised:  # a partial clone
        named_by_promisor = special.named_by_promisor

        def is_promised(oid: bytes) -> bool:
            # named by a tree of a promisor pack: promised without listing the promised set
            return oid in named_by_promisor or promised.is_promised(oid)
    else:

        def is_promised(oid: bytes) -> bool:
            return False

    def read(oid: bytes) -> tuple[str, bytes]:
        # fsck's own view (good copies, refused packs left out), not the
        # store's: in a partial clone its reads would list the promised set
        # a second time just to say "promised"
        try:
            type_name, data, _ = table.read(oid)
        except Unreadable as u:
            if not table.copies(oid, include_rejected=True):
                raise MissingObjectError("no copy of the object", oid=oid.hex()) from None
            raise u.errors[0] if u.errors else CorruptObjectError("no readable copy", oid=oid.hex()) from None
        return type_name, data

    for p in special.finish(read, is_promised, overrides):
        yield _syntax_finding(
            p.msg_id,
            _severity(overrides.get(p.msg_id) or SEVERITIES[p.msg_id]),
            p.message,
            REMEDIES["special-blob"],
            oid=p.oid.hex(),
            object_type=p.object_type,
            details={"named": p.which},
        )
