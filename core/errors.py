"""packscope's one exception tree.

Every error raised by core is a :class:`PackscopeError`.  Each carries where
the problem is (``path``, byte ``offset``, object id ``oid`` — whichever are
known), a one-line ``message`` and a ``remedy`` a person can act on, plus a
stable ``kind`` string used by JSON output and by fsck's grouping.  The UI and
the CLI catch the base class in exactly one place each.

::

    PackscopeError
    ├── RepositoryError ............... the repository as a whole
    │   ├── NotARepositoryError ....... no git directory found / not valid
    │   ├── UnsupportedRepositoryError  format version or extension refused
    │   └── ConfigError ............... unparseable config / include loop
    ├── BadObjectIdError .............. input is not a (possibly abbreviated) id
    ├── BadRevisionError .............. revision syntax that cannot be resolved
    ├── UsageError .................... a command's words that it does not take
    ├── LookupFailedError ............. the object cannot be produced
    │   ├── MissingObjectError ........ nowhere in the store
    │   ├── PromisedObjectError ....... missing, but a promisor remote has it
    │   └── AmbiguousObjectError ...... an abbreviation matches several ids
    ├── CorruptObjectError ............ zlib / header / size / hash mismatch
    ├── BadPackIndexError ............. .idx: magic, version, fanout, size, checksum
    ├── BadPackError .................. .pack: truncated, checksum, CRC, header
    │   └── DeltaError ................ bad delta, missing base, too large, loop
    ├── BadRefError ................... unparseable, dangling, loop, wrong type
    ├── BadCommitGraphError ........... commit-graph file or chain
    ├── BadMultiPackIndexError ........ multi-pack-index file or chain
    ├── LimitExceededError ............ a declared size beyond a hard bound
    └── CancelledError ................ a long operation stopped on request

Subclasses set a default ``remedy``; raisers may pass a more precise one.
"""

from __future__ import annotations

from typing import Any


class PackscopeError(Exception):
    """Base of every error core raises."""

    kind = "error"
    default_remedy = "Report this with the repository's details."

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        offset: int | None = None,
        oid: str | None = None,
        remedy: str | None = None,
        kind: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = None if path is None else str(path)
        self.offset = offset
        self.line = line  # 1-based line of a text file (config, packed-refs, a reflog), when that is the place
        self.oid = oid
        self.remedy = remedy or self.default_remedy
        if kind is not None:
            self.kind = kind

    def location(self) -> str:
        """`path @ offset (oid)`, with whatever parts are known."""
        parts = []
        if self.path:
            parts.append(self.path)
        if self.offset is not None:
            parts.append(f"@ {self.offset}")
        if self.oid:
            parts.append(f"({self.oid})")
        return " ".join(parts)

    def __str__(self) -> str:
        where = self.location()
        return f"{self.message} [{where}]" if where else self.message

    def to_dict(self) -> dict[str, object]:
        return {
            "error": type(self).__name__,
            "kind": self.kind,
            "message": self.message,
            "path": self.path,
            "offset": self.offset,
            "oid": self.oid,
            "remedy": self.remedy,
        }


class RepositoryError(PackscopeError):
    kind = "repository"
    default_remedy = "Check the path and that it is a git repository."


class NotARepositoryError(RepositoryError):
    kind = "not-a-repository"
    default_remedy = "Run inside a git repository, or pass -C PATH / set GIT_DIR."


class UnsupportedRepositoryError(RepositoryError):
    kind = "unsupported-repository"
    default_remedy = "Use git itself for this repository; packscope cannot read it safely."


class ConfigError(RepositoryError):
    kind = "bad-config"
    default_remedy = "Fix the config line named (git config --edit), or remove the include."


class BadObjectIdError(PackscopeError):
    kind = "bad-object-id"
    default_remedy = "Give a full id or an abbreviation of at least 4 hex digits."


class BadRevisionError(PackscopeError):
    kind = "bad-revision"
    default_remedy = "Check the revision name (git rev-parse REV shows what git makes of it)."


class UsageError(PackscopeError):
    kind = "usage"
    default_remedy = "See the command's --help for the words it takes."


class LookupFailedError(PackscopeError):
    kind = "lookup-failed"


class MissingObjectError(LookupFailedError):
    kind = "missing"
    default_remedy = "Fetch it from a remote that has it, or restore it from a backup or another clone."


class PromisedObjectError(LookupFailedError):
    kind = "promised"
    default_remedy = "This is a partial clone: git fetches it on demand from the promisor remote."


class AmbiguousObjectError(LookupFailedError):
    kind = "ambiguous"
    default_remedy = "Give more hex digits."

    def __init__(self, message: str, *, candidates: tuple[tuple[str, str, str], ...] = (), **kw: Any) -> None:
        super().__init__(message, **kw)
        self.candidates = candidates  # (hex id, type, description), in git's order


class CorruptObjectError(PackscopeError):
    kind = "corrupt-object"
    default_remedy = (
        "Restore the object from another clone (copy the loose file, or fetch and repack); "
        "`packscope fsck` lists whether another copy exists."
    )


class BadPackIndexError(PackscopeError):
    kind = "bad-pack-index"
    default_remedy = "Regenerate the index: git index-pack PACK (writes a new .idx beside the .pack)."


class BadPackError(PackscopeError):
    kind = "bad-pack"
    default_remedy = "Recover objects with git unpack-objects from a good copy, or refetch and repack."


class DeltaError(BadPackError):
    kind = "bad-delta"
    default_remedy = "The delta or its base is damaged: refetch the object or repack from a good copy."


class BadRefError(PackscopeError):
    kind = "bad-ref"
    default_remedy = "Fix or delete the ref (git update-ref -d NAME), or correct the packed-refs line."


class BadCommitGraphError(PackscopeError):
    kind = "bad-commit-graph"
    default_remedy = "Rewrite it: git commit-graph write --reachable (or delete the file; it is only a cache)."


class BadMultiPackIndexError(PackscopeError):
    kind = "bad-multi-pack-index"
    default_remedy = "Rewrite it: git multi-pack-index write (or delete the file; it is only a cache)."


class LimitExceededError(PackscopeError):
    kind = "limit-exceeded"
    default_remedy = "The declared size is implausible (likely corruption); raise the cap only if it is real."


class CancelledError(PackscopeError):
    kind = "cancelled"
    default_remedy = "Run it again to completion."
