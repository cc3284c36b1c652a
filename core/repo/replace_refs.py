"""Replace refs: ``refs/replace/<id>`` names an object to read instead of <id>.

git reads the replacement wherever it reads an object by name — ``cat-file``
(type, size, contents), revisions (``X^``, ``X:path``), walks — while ids
themselves stay as named (``rev-parse X`` and ``log``'s ``commit`` line
show the original).  It does not when ``GIT_NO_REPLACE_OBJECTS`` is set (to
anything) or ``core.useReplaceRefs`` is false, nor for ``cat-file
--batch-all-objects``.  ``GIT_REPLACE_REF_BASE`` moves the refs elsewhere
(default ``refs/replace/``).  A replacement may itself be replaced: git
follows at most four steps and stops with "replace depth too high" when a
fifth is needed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from packscope.core.errors import LookupFailedError, PackscopeError
from packscope.core.oid import is_hex

if TYPE_CHECKING:
    from packscope.core.repo.refs import RefStore
    from packscope.core.repo.repository import Repository

DEFAULT_BASE = "refs/replace/"
MAX_DEPTH = 5  # lookups git makes before it gives up


class ReplaceDepthError(LookupFailedError):
    kind = "replace-depth"


class ReplaceRefs:
    """The replace map, ``{original: replacement}``, and whether git reads it."""

    def __init__(
        self, mapping: dict[bytes, bytes] | None = None, *, base: str = DEFAULT_BASE, enabled: bool = True
    ) -> None:
        self.mapping = dict(mapping or {})
        self.base = base
        self.enabled = enabled
        self.complaints: list[str] = []  # refs git warns about and skips

    @classmethod
    def load(
        cls,
        repo: Repository | None,
        refs: RefStore | Callable[[], RefStore] | None,
        env: Mapping[str, str] = os.environ,
    ) -> ReplaceRefs:
        """Read the refs (``refs``: a packscope.core.repo.refs.RefStore, or a
        function returning one, called only when replace refs may exist)."""
        base = env.get("GIT_REPLACE_REF_BASE") or DEFAULT_BASE  # as given: git adds no "/"
        enabled = env.get("GIT_NO_REPLACE_OBJECTS") is None
        if enabled and repo is not None:
            enabled = repo.config.get_bool("core", "usereplacerefs", default=True) is not False
        out = cls(base=base, enabled=enabled)
        if refs is None or not _may_have_refs(repo, base):
            return out
        if callable(refs):  # a RefStore is not: only the function that opens one is
            refs = refs()
        hexsz = repo.object_format.hexsz if repo is not None else 40
        try:
            found = list(refs.iter_refs(base))
        except PackscopeError as e:
            out.complaints.append(f"replace refs unreadable: {e.message}")
            return out
        for ref in found:
            name = ref.name[len(base) :]
            # git reads the first hexsz characters as the id (and ignores the rest)
            if len(name) < hexsz or not is_hex(name[:hexsz]):
                out.complaints.append(f"bad replace ref name: {name}")
                continue
            target = ref.oid
            if target is None:
                try:
                    target = refs.resolve(ref.name)
                except PackscopeError:
                    continue
            out.mapping[bytes.fromhex(name[:hexsz])] = target
        return out

    def __bool__(self) -> bool:
        """True when reads are redirected at all."""
        return self.enabled and bool(self.mapping)

    def __len__(self) -> int:
        return len(self.mapping)

    def resolve(self, oid: bytes) -> bytes:
        """The object git reads for ``oid``."""
        if not self.enabled:
            return oid
        mapping = self.mapping
        cur = oid
        for _ in range(MAX_DEPTH):
            nxt = mapping.get(cur)
            if nxt is None:
                return cur
            cur = nxt
        raise ReplaceDepthError(
            f"replace depth too high for object {oid.hex()}",
            oid=oid.hex(),
            remedy="Replace refs form a loop or a chain longer than four; fix them with git replace -d.",
        )


def _may_have_refs(repo: Repository | None, base: str) -> bool:
    """False only when the files backend surely holds no ref under ``base``:
    no loose directory and no packed-refs line naming it — every command
    that reads objects asks, and parsing a large packed-refs file for
    nothing would cost more than the command."""
    if repo is None or (repo.extension("refstorage") or "files") != "files":
        return True
    common = Path(repo.common_dir)
    head, _, _ = base.rpartition("/")
    if (common / head).exists() if head else True:
        return True
    try:
        data = (common / "packed-refs").read_bytes()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return (" " + base).encode("utf-8", "surrogateescape") in data
