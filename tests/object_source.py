"""Core's own object store for a repository path, as tests use it."""

from __future__ import annotations

from packscope.core.repo.repository import Repository
from packscope.core.store.odb import ObjectStore


def core_store(repo) -> ObjectStore:
    r = Repository.open(str(repo))
    return ObjectStore(r.objects_dir, r.object_format)
