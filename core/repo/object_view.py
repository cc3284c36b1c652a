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

from packscope.core.repo.grafts import parent_overrides


class GitView:
    def __init__(self, store, replace=None, repo=None) -> None:
        self.store = store
        self.replace = replace if replace else None  # packscope.core.repo.replace_refs.ReplaceRefs
        self.repo = repo
        self.fmt = store.fmt
        self._parents: dict[bytes, tuple[bytes, ...]] | None = None

    def target(self, oid: bytes) -> bytes:
        """The object git reads for ``oid``."""
        return self.replace.resolve(oid) if self.replace is not None else oid

    def read(self, oid: bytes, *args, **kw):
        return self.store.read(self.target(oid), *args, **kw)

    def read_header(self, oid: bytes, *args, **kw):
        return self.store.read_header(self.target(oid), *args, **kw)

    @property
    def parent_table(self) -> dict[bytes, tuple[bytes, ...]]:
        """{commit id: parents} for shallow and grafted commits."""
        if self._parents is None:
            self._parents = parent_overrides(self.repo, self.fmt)[0] if self.repo is not None else {}
        return self._parents

    def __getattr__(self, name: str):
        return getattr(self.store, name)
