"""Reflogs (``logs/HEAD``, ``logs/refs/…``) as reachability roots.

A reflog line is ``<old id> SP <new id> SP <ident> TAB <message> LF``; git
keeps both ids alive (``git fsck`` and ``git gc`` count them as roots).
Per-worktree refs (HEAD, ``refs/bisect/…``) keep their logs in each
worktree's git dir, the rest in the common dir.

In a reftable repository (``extensions.refStorage = reftable``) the
reflogs are the log records of the reftable stacks (core.repo.reftable):
the common stack's, and each linked worktree's for its per-worktree refs.

Lines that do not parse are reported as problems and skipped, as git's
reflog reader skips them; nothing here limits how many entries a reflog
has, but each line is read by itself (a reflog can be large).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from packscope.core.errors import BadRefError
from packscope.core.oid import ObjectFormat, is_hex
from packscope.core.repo.ref_syntax import is_skipped_ref_file
from packscope.core.repo.repository import Repository

if TYPE_CHECKING:
    from packscope.core.repo.refs import RefStore

MAX_LINE = 1 << 20  # a longer "line" is not a reflog entry


@dataclass(frozen=True, slots=True)
class ReflogEntry:
    old: bytes
    new: bytes
    line: int
    offset: int


@dataclass(frozen=True, slots=True)
class Reflog:
    ref: str  # "HEAD", "refs/heads/main", "worktrees/NAME/HEAD", …
    path: str  # the log file (reftable: the stack's tables.list)
    entries: tuple[ReflogEntry, ...] | None = None  # read already (reftable)


def _reftable_reflogs(repo: Repository) -> list[Reflog]:
    from packscope.core.repo.reftable import ReftableStack

    fmt = repo.object_format
    out = []
    stacks = [("", Path(repo.common_dir) / "reftable")]
    stacks += [(f"worktrees/{wt.name}/", Path(wt.git_dir) / "reftable") for wt in repo.worktrees()]
    for prefix, directory in stacks:
        stack = ReftableStack(directory, fmt.name, fmt.rawsz)
        for name, logs in stack.logs.items():
            entries = tuple(ReflogEntry(r.old or b"", r.new or b"", n, 0) for n, r in enumerate(logs, 1))
            out.append(Reflog(prefix + name, str(stack.list_path), entries))
    return out


def reflogs(repo: Repository) -> list[Reflog]:
    """Every reflog of the repository, all worktrees included, by ref name."""
    if getattr(repo, "ref_storage", "files") == "reftable":
        return sorted(_reftable_reflogs(repo), key=lambda r: r.ref)
    out = _logs_under(Path(repo.common_dir) / "logs", "")
    for wt in repo.worktrees():
        out += _logs_under(Path(wt.git_dir) / "logs", f"worktrees/{wt.name}/")
    return sorted(out, key=lambda r: r.ref)


def _logs_under(log_dir: Path, prefix: str) -> list[Reflog]:
    """The reflogs of one ``logs`` directory (HEAD's, then every file below
    ``logs/refs``), named ``prefix`` + their path below ``log_dir``."""
    out = []
    head = log_dir / "HEAD"
    if head.is_file():
        out.append(Reflog(f"{prefix}HEAD", str(head)))
    stack = [log_dir / "refs"]
    while stack:
        d = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            if is_skipped_ref_file(e.name):
                continue
            if e.is_dir(follow_symlinks=False):
                stack.append(Path(e.path))
            elif e.is_file(follow_symlinks=False):
                out.append(Reflog(prefix + Path(e.path).relative_to(log_dir).as_posix(), e.path))
    return out


def read_reflog(log: Reflog, fmt: ObjectFormat, problems: list[BadRefError] | None = None) -> Iterator[ReflogEntry]:
    """The entries of one reflog, in file order; unparseable lines go to
    ``problems`` (kind ``reflog-unparseable``) and are skipped."""
    if log.entries is not None:
        yield from log.entries
        return
    hexsz = fmt.hexsz
    try:
        f = open(log.path, "rb")  # noqa: SIM115 -- opening fails apart from reading; `with f` below closes it
    except OSError as e:
        if problems is not None:
            problems.append(
                BadRefError(
                    f"cannot read the reflog of {log.ref}: {e.strerror}", path=log.path, kind="reflog-unreadable"
                )
            )
        return
    with f:
        offset = 0
        line_no = 0
        while True:
            line = f.readline(MAX_LINE)
            if not line:
                return
            line_no += 1
            start = offset
            offset += len(line)
            ok = (
                len(line) > 2 * hexsz + 2
                and line[hexsz : hexsz + 1] == b" "
                and line[2 * hexsz + 1 : 2 * hexsz + 2] == b" "
            )
            old_hex = line[:hexsz].decode("ascii", "replace")
            new_hex = line[hexsz + 1 : 2 * hexsz + 1].decode("ascii", "replace")
            if ok and is_hex(old_hex) and is_hex(new_hex):
                yield ReflogEntry(bytes.fromhex(old_hex), bytes.fromhex(new_hex), line_no, start)
            elif problems is not None and len(problems) < 1000:
                err = BadRefError(
                    f"reflog of {log.ref}, line {line_no}: not '<old id> <new id> <ident>'",
                    path=log.path,
                    offset=start,
                    kind="reflog-unparseable",
                    remedy="git skips such lines; delete the line or the reflog file to silence this.",
                )
                err.line = line_no
                problems.append(err)


# --- one ref's reflog with its messages (git reflog show) -------------------------------


class ReflogLine(NamedTuple):
    """One entry of a ref's reflog as ``git reflog`` shows it."""

    old: bytes
    new: bytes
    ident: bytes  # "name <email> time tz"
    message: bytes  # without the newline


def reflog_path(repo: Repository, ref: str) -> Path:
    """The file that holds ``ref``'s reflog in the files backend: a
    per-worktree ref's in the worktree's git dir, the others in the common dir."""
    from packscope.core.repo.ref_syntax import is_per_worktree

    base = Path(repo.git_dir) if is_per_worktree(ref) else Path(repo.common_dir)
    return base.joinpath("logs", *ref.split("/"))


def has_reflog(repo: Repository, ref: str) -> bool:
    """Whether ``ref`` has a reflog (git's ``reflog_exists``)."""
    if getattr(repo, "ref_storage", "files") == "reftable":
        return bool(_reftable_lines(repo, ref))
    return reflog_path(repo, ref).is_file()


def _reftable_lines(repo: Repository, ref: str) -> list[ReflogLine]:
    from packscope.core.repo.ref_syntax import is_per_worktree
    from packscope.core.repo.reftable import ReftableStack

    fmt = repo.object_format
    linked = Path(repo.git_dir) != Path(repo.common_dir)
    directory = Path(repo.git_dir if linked and is_per_worktree(ref) else repo.common_dir) / "reftable"
    stack = ReftableStack(directory, fmt.name, fmt.rawsz)
    return [ReflogLine(r.old or fmt.null, r.new or fmt.null, r.ident, r.message) for r in stack.logs.get(ref, ())]


def reflog_lines(repo: Repository, ref: str) -> list[ReflogLine]:
    """``ref``'s reflog, oldest entry first (``git reflog`` prints it newest
    first); lines that do not parse are skipped, as git skips them.  An
    absent reflog is an empty list."""
    if getattr(repo, "ref_storage", "files") == "reftable":
        return _reftable_lines(repo, ref)
    hexsz = repo.object_format.hexsz
    out = []
    try:
        data = reflog_path(repo, ref).read_bytes()
    except OSError:
        return []
    for line in data.split(b"\n"):
        if len(line) < 2 * hexsz + 2 or line[hexsz : hexsz + 1] != b" " or line[2 * hexsz + 1 : 2 * hexsz + 2] != b" ":
            continue
        old_hex, new_hex = (
            line[:hexsz].decode("ascii", "replace"),
            line[hexsz + 1 : 2 * hexsz + 1].decode("ascii", "replace"),
        )
        if not (is_hex(old_hex) and is_hex(new_hex)):
            continue
        ident, _, message = line[2 * hexsz + 2 :].partition(b"\t")
        out.append(ReflogLine(bytes.fromhex(old_hex), bytes.fromhex(new_hex), ident, message))
    return out


def find_reflog(repo: Repository, refs: RefStore, name: str) -> tuple[str | None, str]:
    """The reflog ``git reflog show NAME`` reads and the name it shows
    before ``@{n}``: NAME's own reflog, then that of the ref NAME resolves
    to, then ``refs/NAME``'s and ``refs/heads/NAME``'s — all shown as NAME —
    then git's name rules (the first ref that has a reflog), shown by its
    full name.  (None, NAME) when NAME names no reflog."""
    from packscope.core.errors import PackscopeError
    from packscope.core.repo.ref_syntax import DWIM_RULES, check_refname

    def has(ref: str) -> bool:
        return check_refname(ref, allow_onelevel=True) and has_reflog(repo, ref)

    if has(name):
        return name, name
    try:
        chain = refs.follow(name)
        if len(chain) > 1 and has(chain[-1].name):
            return chain[-1].name, name
    except PackscopeError:
        pass
    for prefix in ("refs/", "refs/heads/"):
        if has(prefix + name):
            return prefix + name, name
    for rule in DWIM_RULES:
        full = rule.format(name)
        if has(full):
            return full, full
    return None, name


def reflog_rows(repo: Repository, ref: str) -> list[ReflogLine]:
    """``ref``'s reflog newest first: entry n is ``ref@{n}``."""
    return reflog_lines(repo, ref)[::-1]
