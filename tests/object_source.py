"""Core's own object store for a repository path, as tests use it."""

from __future__ import annotations

from packscope.core.repo.repository import Repository
from packscope.core.store.odb import ObjectStore


class CountingStore:
    """Wraps a store and counts reads, to show what a walk or a diff had to look at."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.fmt = inner.fmt
        self.reads: list[bytes] = []

    def read(self, oid):
        self.reads.append(oid)
        return self.inner.read(oid)

    def read_header(self, oid):
        return self.inner.read_header(oid)


def core_store(repo) -> ObjectStore:
    r = Repository.open(str(repo))
    return ObjectStore(r.objects_dir, r.object_format)
