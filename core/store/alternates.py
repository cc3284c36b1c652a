"""``objects/info/alternates``: other object directories this one borrows from.

Read recursively like git (an alternate's own alternates count too), with a
depth bound and loop detection; problems are collected, never fatal.
"""

from __future__ import annotations

import os

from packscope.core.errors import RepositoryError

MAX_DEPTH = 5  # git's limit for nested alternates


def read_alternates_file(objects_dir: str) -> list[str]:
    path = os.path.join(objects_dir, "info", "alternates")
    try:
        with open(path, "rb") as f:
            raw = f.read(1 << 20)
    except OSError:
        return []
    # git reads the file as one C string: a NUL byte ends it, and whatever
    # follows is not read at all (a path cut there is looked for as it is).
    raw = raw.split(b"\0", 1)[0]
    out = []
    for line in raw.decode("utf-8", "surrogateescape").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith('"') and line.endswith('"') and len(line) > 1:
            line = line[1:-1]
        out.append(line if os.path.isabs(line) else os.path.normpath(os.path.join(objects_dir, line)))
    return out


def _real_path(path: str) -> str | None:
    """``path`` with its links resolved, or None when the system cannot take
    it as a path at all (a NUL byte, a name too long)."""
    try:
        return os.path.realpath(path)
    except (ValueError, OSError):
        return None


def resolve_alternates(objects_dir: str, env_dirs: list[str] | None = None) -> tuple[list[str], list[RepositoryError]]:
    """Every alternate object directory reachable from ``objects_dir``,
    breadth first, without the directory itself; plus the problems met."""
    seen = {_real_path(objects_dir) or objects_dir}
    result: list[str] = []
    problems: list[RepositoryError] = []
    frontier = [(d, 1) for d in (env_dirs or [])] + [(d, 1) for d in read_alternates_file(objects_dir)]
    while frontier:
        path, depth = frontier.pop(0)
        real = _real_path(path)
        if real is None:
            problems.append(
                RepositoryError(
                    "alternate object directory is not a usable path",
                    path=path,
                    kind="alternates-missing",
                    remedy="Fix or remove the line in objects/info/alternates.",
                )
            )
            continue
        if real in seen:
            problems.append(
                RepositoryError(
                    "alternate object directory listed twice or loops back",
                    path=path,
                    kind="alternates-loop",
                    remedy="Remove the duplicate line from objects/info/alternates.",
                )
            )
            continue
        if depth > MAX_DEPTH:
            problems.append(
                RepositoryError(
                    f"alternates nested deeper than {MAX_DEPTH}",
                    path=path,
                    kind="alternates-too-deep",
                    remedy="Point objects/info/alternates directly at the object directory you need.",
                )
            )
            continue
        if not os.path.isdir(path):
            problems.append(
                RepositoryError(
                    "alternate object directory does not exist",
                    path=path,
                    kind="alternates-missing",
                    remedy="Fix or remove the line in objects/info/alternates.",
                )
            )
            continue
        seen.add(real)
        result.append(path)
        frontier.extend((d, depth + 1) for d in read_alternates_file(path))
    return result, problems
