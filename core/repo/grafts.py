"""Grafts: ``$GIT_DIR/info/grafts`` (deprecated in git, still honoured).

Each line is ``commit [parent ...]`` — hex ids separated by one character
(git does not check which) — and gives that commit those parents instead of
the ones it records; empty lines and lines starting with ``#`` are skipped.
A line of another shape is ignored with git's "bad graft data" complaint;
for a commit listed twice the first line wins ("duplicate graft data").
The file lives in the common directory (``GIT_GRAFT_FILE`` names another).

git stores shallow commits as grafts without parents, registered after the
grafts file (a shallow entry wins over a graft line): :func:`parent_overrides`
gives that combined table, the one walks consult by the commit's own id —
also when a replace ref gives the commit other contents.  Grafts apply with
or without replace refs and ``GIT_NO_REPLACE_OBJECTS`` (as git 2.39 does).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from packscope.core.oid import ObjectFormat, is_hex
from packscope.core.repo.shallow import read_shallow

if TYPE_CHECKING:
    from packscope.core.repo.repository import Repository


class Grafts:
    """The grafts file's table: replaced parents by commit, and git's
    messages for the lines it ignores."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.parents: dict[bytes, tuple[bytes, ...]] = {}
        self.complaints: list[str] = []

    def __repr__(self) -> str:
        return f"Grafts(path={self.path!r}, parents={self.parents!r}, complaints={self.complaints!r})"


def grafts_path(repo: Repository, env: Mapping[str, str] = os.environ) -> Path:
    named = env.get("GIT_GRAFT_FILE")
    if named:
        return Path(named)
    return Path(repo.common_dir) / "info" / "grafts"


def read_grafts(repo: Repository, fmt: ObjectFormat | None = None, env: Mapping[str, str] = os.environ) -> Grafts:
    """The grafts file's table (empty when there is no file)."""
    path = grafts_path(repo, env)
    out = Grafts(path)
    try:
        data = path.read_bytes()
    except OSError:
        return out
    hexsz = (fmt or repo.object_format).hexsz
    for raw in data.split(b"\n"):
        line = raw.rstrip(b" \t\r\v\f")
        if not line or line.startswith(b"#"):
            continue
        ids = _graft_ids(line, hexsz)
        text = line.decode("utf-8", "replace")
        if ids is None:
            out.complaints.append(f"bad graft data: {text}")
        elif ids[0] in out.parents:
            out.complaints.append(f"duplicate graft data: {text}")
        else:
            out.parents[ids[0]] = tuple(ids[1:])
    return out


def _graft_ids(line: bytes, hexsz: int) -> list[bytes] | None:
    # Ids at every (hexsz + 1)th position; the separators are not checked.
    if (len(line) + 1) % (hexsz + 1):
        return None
    ids = []
    for at in range(0, len(line), hexsz + 1):
        text = line[at : at + hexsz].decode("ascii", "replace")
        if not is_hex(text):
            return None
        ids.append(bytes.fromhex(text))
    return ids


def parent_overrides(
    repo: Repository | None, fmt: ObjectFormat | None = None, env: Mapping[str, str] = os.environ
) -> tuple[dict[bytes, tuple[bytes, ...]], Grafts | None]:
    """``({commit: parents}, grafts)``: the grafts file's table with every
    shallow commit mapped to no parents, as git's commit reading sees it."""
    if repo is None:
        return {}, None
    grafts = read_grafts(repo, fmt, env)
    table = dict(grafts.parents)
    for oid in read_shallow(repo, fmt):
        table[oid] = ()
    return table, grafts
