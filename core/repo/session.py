"""Opening a repository for a command or the UI: repository, store, refs."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from packscope.core.repo.repository import Repository
from packscope.core.store.odb import ObjectStore
from packscope.core.store.promisor import is_partial_clone
from packscope.core.trace import Tracer


@dataclass
class Session:
    repo: Repository
    store: ObjectStore
    _refs: object = field(default=None, repr=False)

    @property
    def fmt(self):
        return self.store.fmt

    @property
    def refs(self):
        if self._refs is None:
            from packscope.core.repo.refs import RefStore

            self._refs = RefStore(self.repo)
        return self._refs

    def resolve(self, text: str, *, verify: bool = True) -> bytes:
        """An object id for a revision, full id or abbreviation (core's rules);
        ``verify=False`` does not check that the final object exists."""
        from packscope.core.repo.revision import resolve_revision

        return resolve_revision(text, repo=self.repo, refs=self.refs, store=self.store, verify=verify)

    def close(self) -> None:
        self.store.close()


def open_session(
    path: str | None = None,
    *,
    tracer: Tracer | None = None,
    policy: str = "gated",
    quick: bool = False,
    loose_strategy: str = "per-subdir",
    algorithm: str = "binary",
) -> Session:
    if path is None:
        repo = Repository.discover()
    else:
        # An explicit path is not discovered from the environment, but
        # GIT_ALTERNATE_OBJECT_DIRECTORIES still applies to it, as it does to git -C.
        name = "GIT_ALTERNATE_OBJECT_DIRECTORIES"
        repo = Repository.open(path, env={name: os.environ[name]} if os.environ.get(name) else None)
    store = ObjectStore(
        repo.objects_dir,
        repo.object_format,
        tracer=tracer,
        policy=policy,
        quick=quick,
        loose_strategy=loose_strategy,
        algorithm=algorithm,
        env_alternates=[str(p) for p in repo.env_alternates] or None,
        partial_clone=is_partial_clone(repo),
    )
    return Session(repo, store)


def add_store_options(parser) -> None:
    """The store settings every command that looks things up accepts."""
    parser.add_argument(
        "--policy",
        choices=("git", "gated"),
        default="gated",
        help="miss policy: git rescans the pack directory on every miss; gated only when it changed",
    )
    parser.add_argument(
        "--quick", action="store_true", help="expect misses: never rescan, check loose objects through the cache"
    )
    parser.add_argument(
        "--loose-cache",
        dest="loose_strategy",
        choices=("per-subdir", "global-resort"),
        default="per-subdir",
        help="loose name cache strategy",
    )
