"""Opening a repository for a command or the UI: repository, store, refs,
and the one revision resolver every entry point asks (``Session.resolve``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from packscope.core.errors import ConfigError
from packscope.core.repo.repository import Repository
from packscope.core.store.odb import ObjectStore
from packscope.core.trace import Tracer

if TYPE_CHECKING:  # imported when first used, so that one-shot commands start fast
    from packscope.core.oid import ObjectFormat
    from packscope.core.repo.object_view import GitView
    from packscope.core.repo.refs import RefStore
    from packscope.core.repo.replace_refs import ReplaceRefs


def is_partial_clone(repo: Repository) -> bool:
    """git's test (``repo_has_promisor_remote``): a promisor remote is
    configured.  A promisor setting that is not a boolean (git refuses the
    repository) counts as none here: reading goes on, nothing is promised."""
    try:
        return bool(repo.promisor_remotes())
    except ConfigError:
        return False


class Session:
    """A repository and its object store; refs, replace refs and the git
    view of objects are opened on first use.  (A plain class: a dataclass
    costs a one-shot command about 1 ms to create.)"""

    def __init__(self, repo: Repository, store: ObjectStore) -> None:
        self.repo = repo
        self.store = store
        self._refs: RefStore | None = None
        self._replace: ReplaceRefs | None = None
        self._objects: GitView | None = None

    def __repr__(self) -> str:
        return f"Session(repo={self.repo!r}, store={self.store!r})"

    @property
    def fmt(self) -> ObjectFormat:
        return self.store.fmt

    @property
    def refs(self) -> RefStore:
        if self._refs is None:
            from packscope.core.repo.refs import RefStore

            self._refs = RefStore(self.repo)
        return self._refs

    @property
    def replace_refs(self) -> ReplaceRefs:
        """The replace refs (packscope.core.repo.replace_refs.ReplaceRefs); false
        when git would read no replacement (none, or turned off)."""
        if self._replace is None:
            from packscope.core.repo.replace_refs import ReplaceRefs

            # (refs are opened only if replace refs may exist: cat-file of an id needs none)
            self._replace = ReplaceRefs.load(self.repo, lambda: self.refs)
        return self._replace

    @property
    def objects(self) -> GitView:
        """The store as git reads objects by name: through replace refs, with
        grafted and shallow commits' parents (packscope.core.repo.object_view)."""
        if self._objects is None:
            from packscope.core.repo.object_view import GitView

            self._objects = GitView(self.store, self.replace_refs, self.repo)
        return self._objects

    def resolve(self, text: str, *, verify: bool = True) -> bytes:
        """An object id for a revision, full id or abbreviation (core's rules);
        ``verify=False`` does not check that the final object exists.
        Steps read objects through replace refs, as git's do."""
        from packscope.core.repo.revision import resolve_revision

        return resolve_revision(text, repo=self.repo, refs=self.refs, store=self.objects, verify=verify)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def find_repository(path: str | None = None) -> Repository:
    """The repository a command means: discovered from the current directory
    and the environment (``GIT_DIR``, …) as git does, or at exactly ``path``."""
    if path is None:
        return Repository.discover()
    # An explicit path is not discovered from the environment, but
    # GIT_ALTERNATE_OBJECT_DIRECTORIES still applies to it, as it does to git -C.
    name = "GIT_ALTERNATE_OBJECT_DIRECTORIES"
    return Repository.open(path, env={name: os.environ[name]} if os.environ.get(name) else None)


def open_session(
    path: str | None = None,
    *,
    repo: Repository | None = None,
    tracer: Tracer | None = None,
    policy: str = "gated",
    quick: bool = False,
    loose_strategy: str = "per-subdir",
    algorithm: str = "binary",
    reads: str = "git",
) -> Session:
    """``reads``: what the store does with a pack git refuses to open
    (packscope.core.store.store_state.READ_MODES): "git" for every
    command's reads, "triage" for views that show such a pack's entries."""
    if repo is None:  # (the UI finds its repository once, and opens every session on that one)
        repo = find_repository(path)
    store = ObjectStore(
        str(repo.objects_dir),
        repo.object_format,
        tracer=tracer,
        policy=policy,
        quick=quick,
        loose_strategy=loose_strategy,
        algorithm=algorithm,
        env_alternates=[str(p) for p in repo.env_alternates] or None,
        partial_clone=is_partial_clone(repo),
        reads=reads,
    )
    return Session(repo, store)
