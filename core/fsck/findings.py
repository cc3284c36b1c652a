"""What ``fsck`` reports: one :class:`Finding` per defect, and git's exit bits.

A finding says what is wrong (``kind``, ``message``, for object syntax also
git's message id), how bad it is (``severity``), where (file, byte offset,
the pack/idx pair, the object id), whether the object exists elsewhere
(another pack, loose, an alternate, promised by a promisor remote) and what
to do about it (``remedy``).  ``exit_bit`` is the bit git fsck sets for the
same defect, so that ``packscope fsck`` exits as ``git fsck`` does:

==  ===================================================================
 1  an object is corrupt or has bad syntax (loose objects, syntax)
 2  reachability: a missing or unreadable object, a ref/reflog/index
    entry pointing at nothing
 4  packs: checksums, CRCs, entries that cannot be read
 8  refs: HEAD pointing somewhere odd, a branch that is not a commit
16  the commit-graph
32  the multi-pack-index
==  ===================================================================

Where git does not report and go on but dies (an index file it cannot
read, a ``packed-refs`` line it cannot parse), the finding's bit is
``ERROR_FATAL`` (128): fsck still reports everything else, and exits 128
as git does.  Warnings and infos never set a bit; dangling objects are
infos.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypedDict, Unpack

from packscope.core.errors import PackscopeError

ERROR_OBJECT = 1
ERROR_REACHABLE = 2
ERROR_PACK = 4
ERROR_REFS = 8
ERROR_COMMIT_GRAPH = 16
ERROR_MULTI_PACK_INDEX = 32
ERROR_FATAL = 128  # git dies here: the exit status is 128, whatever else was found

ERROR, WARNING, INFO = "error", "warning", "info"

# A finding's details: small facts for the UI and --json (counts, offsets, names).
Details = dict[str, int | str | None]

REMEDIES = {
    "missing": "Fetch it from a remote that has it (git fetch), or copy it from another clone "
    "(git cat-file -p ID there, git hash-object -w here).",
    "unreadable": "Every stored copy is damaged: restore the object from another clone or a backup.",
    "unavailable": "Its only copy is in a pack fsck refused: restore that pack from a good copy, "
    "or fetch the objects again (git fetch) and repack.",
    "wrong-type": "The object id names an object of another type: the referring object was built wrongly; "
    "rewrite the history that holds it, or restore both from a good clone.",
    "dangling": "Nothing needs it; git gc (git prune) removes it once it is old enough.",
    "promised": "A partial clone: git fetches it from the promisor remote when needed.",
    "syntax": "git keeps working with it, but other tools (and fetches with transfer.fsckObjects) may refuse it; "
    "rewriting the history that holds it is the only fix.",
    "special-blob": "Checking out a tree that names this blob .gitmodules or .gitattributes is unsafe or fails "
    "(git refuses such objects on fetch with transfer.fsckObjects); rewrite the history that "
    "holds it, or drop the refs that reach it.",
    "orphan": "git ignores it; delete it (or restore the missing half of the pair and run git index-pack).",
    "ref-target": "Point the ref at an existing commit (git update-ref NAME ID) or delete it (git update-ref -d NAME).",
    "reflog": "Drop the bad entries: git reflog expire --expire-unreachable=now --all, or delete the reflog file.",
    "index": "Rebuild the index from HEAD: git read-tree HEAD (staged but uncommitted changes are lost).",
}

REPACK_REMEDY = (
    "A good copy exists elsewhere ({where}): git repack -a -d rewrites the packs from good copies; "
    "then delete the damaged pack if it remains."
)


def remedy_for_copies(elsewhere: tuple[str, ...]) -> str:
    """The remedy for a damaged copy, given where else the object is (ObjectTable.elsewhere)."""
    good = [w for w in elsewhere if "damaged" not in w and "refused" not in w and w != "promised"]
    if good:
        return REPACK_REMEDY.format(where=", ".join(good))
    if "promised" in elsewhere:
        return "The promisor remote has it: git fetch it again (or re-clone), then repack."
    return REMEDIES["unreadable"]


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    severity: str  # "error", "warning" or "info"
    message: str
    area: str  # objects, packs, loose, refs, reflog, index, reachability, dangling, commit-graph, midx
    exit_bit: int = 0
    path: str | None = None
    offset: int | None = None
    pack: str | None = None  # the .pack of the pack/idx pair concerned
    idx: str | None = None
    oid: str | None = None  # hex
    object_type: str | None = None
    elsewhere: tuple[str, ...] = ()  # other copies: "pack-….pack", "loose", "alternate …", "promised"
    remedy: str | None = None
    msg_id: str | None = None  # git's fsck message id (object syntax)
    details: Details = field(default_factory=dict, compare=False)
    line: int | None = None  # 1-based line of ``path`` (packed-refs)

    def location(self) -> str:
        parts = []
        if self.path:
            parts.append(self.path if self.line is None else f"{self.path}:{self.line}")
        if self.offset is not None:
            parts.append(f"@ {self.offset}")
        if self.oid:
            parts.append(f"({self.oid})")
        return " ".join(parts)

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = {
            "kind": self.kind,
            "severity": self.severity,
            "area": self.area,
            "exit_bit": self.exit_bit,
            "message": self.message,
            "path": self.path,
            "offset": self.offset,
            "pack": self.pack,
            "idx": self.idx,
            "oid": self.oid,
            "object_type": self.object_type,
            "elsewhere": list(self.elsewhere),
            "remedy": self.remedy,
            "msg_id": self.msg_id,
            "line": self.line,
        }
        if self.details:
            d["details"] = self.details
        return d


class ObjectFields(TypedDict, total=False):
    """A :class:`Finding`'s keyword fields about the object and the spot in
    its file (for helpers that set the file, pair, remedy and id themselves)."""

    offset: int | None
    oid: str | None
    object_type: str | None
    elsewhere: tuple[str, ...]
    details: Details
    line: int | None


class FindingPlace(ObjectFields, total=False):
    """The above, and the pack/idx pair."""

    pack: str | None
    idx: str | None


class FindingFields(FindingPlace, total=False):
    """The keyword fields of a :class:`Finding` that :func:`from_error` passes on."""

    path: str | None
    remedy: str | None
    msg_id: str | None


def from_error(
    e: PackscopeError,
    area: str,
    exit_bit: int,
    *,
    severity: str = ERROR,
    message: str | None = None,
    **fields: Unpack[FindingFields],
) -> Finding:
    """A finding for a core error, keeping its kind, location and remedy."""
    fields.setdefault("path", e.path)
    fields.setdefault("offset", e.offset)
    fields.setdefault("oid", e.oid)
    fields.setdefault("remedy", e.remedy)
    return Finding(e.kind, severity, message or e.message, area, exit_bit if severity == ERROR else 0, **fields)


class Ticker:
    """Progress and cancellation for one fsck run.

    ``progress(done, total, phase)`` is called when a phase starts and ends
    and every ``every`` steps in between; ``cancel()`` is asked as often and
    a true answer raises :class:`CancelledError` — so a UI can show a bar
    and stop a long check without threads of its own.
    """

    __slots__ = ("_next", "cancel", "done", "every", "phase", "progress", "total")

    def __init__(
        self,
        progress: Callable[[int, int, str], None] | None = None,
        cancel: Callable[[], bool] | None = None,
        every: int = 512,
    ) -> None:
        self.progress, self.cancel, self.every = progress, cancel, every
        self.phase, self.total, self.done, self._next = "", 0, 0, every

    def start(self, phase: str, total: int) -> None:
        self.phase, self.total, self.done, self._next = phase, total, 0, self.every
        self._report()

    def tick(self, n: int = 1) -> None:
        self.done += n
        if self.done >= self._next:
            self._next = self.done + self.every
            self._report()

    def poll(self) -> None:
        """Honour a cancel request between steps that are not counted."""
        if self.cancel is not None and self.cancel():
            self._report()

    def finish(self) -> None:
        self.done = max(self.done, self.total)
        self._report()

    def _report(self) -> None:
        if self.cancel is not None and self.cancel():
            from packscope.core.errors import CancelledError

            raise CancelledError(
                f"fsck cancelled during {self.phase} ({self.done} of {self.total})",
                remedy="Run fsck again to completion.",
            )
        if self.progress is not None:
            self.progress(self.done, self.total, self.phase)


class Limiter:
    """At most ``limit`` findings of one kind per file: a pack with 10,000
    bad entries gets 100 lines and a count, not 10,000 lines."""

    def __init__(self, limit: int = 100) -> None:
        self.limit = limit
        self.counts: dict[tuple[str, str], int] = {}

    def allow(self, where: str, kind: str) -> bool:
        key = (where, kind)
        n = self.counts.get(key, 0) + 1
        self.counts[key] = n
        return n <= self.limit

    def suppressed(self, area: str, exit_bit: int) -> Iterator[Finding]:
        for (where, kind), n in sorted(self.counts.items()):
            if n > self.limit:
                yield Finding(
                    f"{kind}",
                    WARNING,
                    f"{n - self.limit} more '{kind}' findings in this file not shown",
                    area,
                    0,
                    path=where,
                    details={"suppressed": n - self.limit, "bit": exit_bit},
                )
