"""Objects as git reads them by name: replace refs, and commits' parents
after grafts and shallow boundaries.

:class:`GitView` is a store-like object (``fmt``, ``read``, ``read_header``,
and the store's own attributes for everything else) for revision parsing,
``cat-file`` and log formatting: ``read``/``read_header`` answer the
replacement a replace ref names, while existence, abbreviations and scans
stay the store's (git checks existence and disambiguates on the objects
themselves).  ``parent_table`` holds the parents git gives shallow and
grafted commits (revision steps like ``X~2`` follow them); it is read on
first use, so a command that never looks at a commit's parents never reads
the shallow or grafts file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from packscope.core.repo.grafts import parent_overrides

if TYPE_CHECKING:
    from packscope.core.repo.replace_refs import ReplaceRefs
    from packscope.core.repo.repository import Repository
    from packscope.core.store.location import Location
    from packscope.core.store.odb import ObjectStore


class GitView:
    def __init__(self, store: ObjectStore, replace: ReplaceRefs | None = None, repo: Repository | None = None) -> None:
        self.store = store
        self.replace = replace if replace else None
        self.repo = repo
        self.fmt = store.fmt
        self._parents: dict[bytes, tuple[bytes, ...]] | None = None

    def target(self, oid: bytes) -> bytes:
        """The object git reads for ``oid``."""
        return self.replace.resolve(oid) if self.replace is not None else oid

    def read(self, oid: bytes, loc: Location | None = None) -> tuple[str, bytes]:
        return self.store.read(self.target(oid), loc)

    def read_header(self, oid: bytes) -> tuple[str, int]:
        return self.store.read_header(self.target(oid))

    @property
    def parent_table(self) -> dict[bytes, tuple[bytes, ...]]:
        """{commit id: parents} for shallow and grafted commits."""
        if self._parents is None:
            self._parents = parent_overrides(self.repo, self.fmt)[0] if self.repo is not None else {}
        return self._parents

    def __getattr__(self, name: str) -> Any:
        # Every other attribute is the store's, each of its own type: Any is
        # what a delegation of any name can say.
        return getattr(self.store, name)
