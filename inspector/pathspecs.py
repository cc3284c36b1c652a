"""Command-line paths as git reads them: relative to where you stand.

Inside a work tree, ``PATH`` names ``PREFIX/PATH`` where PREFIX is the
current directory relative to the top of the work tree (``.`` is PREFIX
itself, ``..`` climbs); in a bare repository the prefix is empty.  core
matches literal paths only (git's ``--literal-pathspecs``), so a path
with glob characters or pathspec magic is refused unless the user asked
for literal matching — printing something git would not is worse than
saying so.
"""

from __future__ import annotations

import os
import posixpath

from packscope.core.errors import BadRevisionError

_GLOB = set("*?[\\")


def cwd_prefix(repo) -> str:
    """The current directory relative to the top of the work tree ("" at
    the top, outside it, or in a bare repository)."""
    top = getattr(repo, "work_tree", None)
    if top is None:
        return ""
    try:
        rel = os.path.relpath(os.getcwd(), str(top))
    except ValueError:
        return ""
    if rel == "." or rel.startswith(".."):
        return ""
    return rel.replace(os.sep, "/")


def repo_paths(repo, args: list[str], *, literal: bool) -> list[str]:
    """``args`` as paths from the top of the repository (``""``: all of it)."""
    prefix = cwd_prefix(repo)
    literal = literal or os.environ.get("GIT_LITERAL_PATHSPECS", "") not in ("", "0")
    out = []
    for arg in args:
        if not literal and (arg.startswith(":") or _GLOB & set(arg)):
            raise BadRevisionError(
                f"pathspec {arg!r} uses wildcards or pathspec magic, which packscope does not match",
                remedy="Name the path literally and add --literal-pathspecs.",
            )
        top = getattr(repo, "work_tree", None)
        if os.path.isabs(arg) and top is not None:
            arg = os.path.relpath(arg, str(top)).replace(os.sep, "/")
            joined = posixpath.normpath(arg)
        else:
            joined = posixpath.normpath(posixpath.join(prefix, arg)) if arg else prefix or "."
        if joined == ".." or joined.startswith(("../", "/")):
            raise BadRevisionError(f"{arg!r} is outside the repository")
        out.append("" if joined == "." else joined)
    return out
