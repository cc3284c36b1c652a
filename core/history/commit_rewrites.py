"""Commits as git reads them when something rewrites them: shallow
boundaries, grafts and replace refs.

:class:`RewrittenReader` stands where a walk's commit reader stands
(``reader(oid) -> (tree, parents, time)`` and the store-like ``fmt``,
``read``, ``read_header``): it reads the replacement of every object a
replace ref redirects, and gives a shallow or grafted commit the parents
the table says (keyed by the commit's own id, as git keys them).  Walks,
path-limited walks and last-modified all read through it, so they end at a
shallow boundary and follow grafts as git's do.  The commit-graph is never
used together with it: git turns the graph off in all three cases.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packscope.core.errors import PackscopeError
from packscope.core.objects import commit_header_fast

if TYPE_CHECKING:
    from packscope.core.history.commit_reader import CommitHeader, CommitReader
    from packscope.core.repo.replace_refs import ReplaceRefs
    from packscope.core.store.odb import ObjectStore


class RewrittenReader:
    def __init__(
        self,
        reader: CommitReader | None,
        store: ObjectStore,
        parents: dict[bytes, tuple[bytes, ...]],
        replace: ReplaceRefs | None = None,
    ) -> None:
        # None for reader: every read through ``store``
        self.reader = reader
        self.store = store  # the object store, unreplaced
        self.fmt = store.fmt
        self.parents = parents
        self.replace = replace if replace else None
        self.declined = 0

    def _target(self, oid: bytes) -> bytes:
        return self.replace.resolve(oid) if self.replace is not None else oid

    def __call__(self, oid: bytes) -> CommitHeader | None:
        """``(tree, parents, commit_time)``, or None for anything that is not
        a readable commit (the walk's own read then says what it is)."""
        try:
            target = self._target(oid)
            got = self.reader(target) if self.reader is not None else None
            if got is None:
                typ, data = self.store.read(target)
                if typ != "commit":
                    return None
                got = commit_header_fast(data, self.fmt, target)
        except PackscopeError:
            return None
        parents = self.parents.get(oid)
        if parents is not None:
            return got[0], parents, got[2]
        return got

    def read(self, oid: bytes) -> tuple[str, bytes]:
        return (self.reader or self.store).read(self._target(oid))

    def read_header(self, oid: bytes) -> tuple[str, int]:
        return (self.reader or self.store).read_header(self._target(oid))
