"""What a ref is, as stored, and the rules for its name.

``Ref`` is one ref as a backend stores it (loose file, ``packed-refs`` line
or reftable record); :func:`check_refname` is ``git check-ref-format``'s
rule set; per-worktree names (``git help git-worktree``) are HEAD-like
all-caps root refs and the ``refs/bisect/``, ``refs/worktree/`` and
``refs/rewritten/`` hierarchies; :data:`DWIM_RULES` is the order in which a
short name is tried as a full one.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

from packscope.core.errors import BadRefError

PER_WORKTREE_PREFIXES = ("refs/bisect/", "refs/worktree/", "refs/rewritten/")
# git's ref_rev_parse_rules, in order.
DWIM_RULES = ("{}", "refs/{}", "refs/tags/{}", "refs/heads/{}", "refs/remotes/{}", "refs/remotes/{}/HEAD")

_BAD_CHARS = frozenset(" ~^:?*[\\\x7f") | frozenset(chr(c) for c in range(32))
# Two or more components of letters, digits, "_", "-" and ".", none empty
# or starting with ".": such a name breaks no rule of check_refname but
# "..", a "." at the end and ".lock" at a component's end, tested after the
# match.  Nearly every name is one, and the match decides it at once.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_-][A-Za-z0-9_.-]*)+\Z")


class Ref(NamedTuple):
    """One ref as stored.  Exactly one of ``oid`` / ``symref`` is set.
    ``peeled`` is the packed-refs ``^`` line (the object an annotated tag
    finally points at), known only for packed refs."""

    name: str
    oid: bytes | None
    symref: str | None = None
    peeled: bytes | None = None
    source: str = "loose"  # "loose", "packed" or "reftable"


def is_skipped_ref_file(basename: str) -> bool:
    """Whether a file or directory under ``refs/`` (or ``logs/refs/``) is
    none of git's business: a dotfile, or a ``*.lock`` left by a writer
    (git's loose-ref and reflog listings skip both without a word, so a
    stale lock is not a bad ref name)."""
    return basename.startswith(".") or basename.endswith(".lock")


def check_refname(name: str, *, allow_onelevel: bool = False) -> bool:
    """git check-ref-format's rules (without --refspec-pattern)."""
    if (
        _PLAIN_NAME.match(name) is not None
        and ".." not in name
        and not name.endswith((".", ".lock"))
        and ".lock/" not in name
    ):
        return True
    return refname_rules(name, allow_onelevel=allow_onelevel)


def refname_rules(name: str, *, allow_onelevel: bool = False) -> bool:
    """check_refname's rules one by one (what its quick match stands for)."""
    if not name or name == "@" or name.startswith("/") or name.endswith(("/", ".")):
        return False
    if ".." in name or "@{" in name or "//" in name:
        return False
    if any(c in _BAD_CHARS for c in name):
        return False
    parts = name.split("/")
    if len(parts) < 2 and not allow_onelevel:
        return False
    return not any(p.startswith(".") or p.endswith(".lock") for p in parts)


def refname_is_safe(name: str) -> bool:
    """git's test before it keeps a badly formed name as a broken ref: under
    ``refs/`` a path that stays there as written (no empty, ``.`` or ``..``
    component, no leading or trailing ``/``), else all capitals and ``_``.
    git dies on an unsafe name in packed-refs ("packed refname is dangerous")."""
    if name.startswith("refs/"):
        rest = name[5:]
        return bool(rest) and all(part not in ("", ".", "..") for part in rest.split("/"))
    return bool(name) and all(c == "_" or "A" <= c <= "Z" for c in name)


def is_pseudoref_syntax(name: str) -> bool:
    """All capitals and underscores: HEAD, ORIG_HEAD, FETCH_HEAD, …"""
    return bool(name) and all("A" <= c <= "Z" or c == "_" for c in name)


def is_per_worktree(name: str) -> bool:
    return is_pseudoref_syntax(name) or name.startswith(PER_WORKTREE_PREFIXES)


def ref_problem(
    message: str, *, path: str | os.PathLike[str], offset: int | None, line: int | None, kind: str
) -> BadRefError:
    err = BadRefError(message, path=str(path), offset=offset, kind=kind)
    err.line = line
    return err


def ref_oid(ref: Ref) -> bytes:
    """The id a ref that is not symbolic holds (the end of :meth:`RefStore.follow`)."""
    if ref.oid is None:  # every reader sets exactly one of oid and symref
        raise BadRefError(f"ref {ref.name} holds no object id", kind="ref-unparseable")
    return ref.oid
