"""fsck's roots, checked where they are found, as git fsck checks them.

The roots are HEAD of every worktree, every ref and every reflog entry
(every worktree's), and, as git 2.39 reads them, the refs and the index of
the current worktree only (entries, intent-to-add entries, cache tree,
resolve-undo): a blob staged in another worktree, or its refs/bisect/, keep
nothing alive.
Each is handed to the walk (packscope.core.fsck.reach.Connectivity.root),
which reports one that names nothing usable.  What git says and which exit
bit it sets, for each form of ref (git 2.39, compared in tests):

* a ref holding the null id, in a loose file or a ``packed-refs`` line; a
  loose file that is not a ref (garbage, empty, a symref to a bad name); a
  file or packed line whose name check-ref-format rejects; a symref that
  loops, dangles or nests too deep: ``REF: invalid sha1 pointer 0000…``
  (git reads all of them as the null id), bit 2;
* a ref naming an absent object: ``REF: invalid sha1 pointer ID``, bit 2;
  a reflog entry naming one: ``REF: invalid reflog entry ID``, bit 2;
* files under ``refs/`` that start with ``.`` or end in ``.lock`` (stale
  locks, editor dotfiles): not refs, ignored (git skips them);
* a ``packed-refs`` line git cannot parse: git dies (128); a duplicate
  line: git takes it silently (a warning here);
* HEAD: detached at the null id or pointing outside ``refs/heads/``, or
  unreadable: bit 8; a symref to a branch that does not exist or holds
  the null id: unborn (a notice);
* the index git reads (the current worktree's) when it cannot be read at
  all: git dies (128); a cache-tree or resolve-undo record naming an
  absent object: ``ID: invalid sha1 pointer in cache-tree`` (or
  ``resolve-undo``), bit 8, and the subtrees of a failed cache-tree node
  are not visited; an index entry naming an absent blob: bit 2 (the walk's
  "missing"); intent-to-add entries keep the empty blob alive.

Every finding carries the file it comes from; ``packed-refs`` findings
also the byte offset and line.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, TypedDict

from packscope.core.errors import BadRefError, RepositoryError
from packscope.core.fsck.findings import (
    ERROR,
    ERROR_FATAL,
    ERROR_REACHABLE,
    ERROR_REFS,
    INFO,
    REMEDIES,
    WARNING,
    Finding,
    from_error,
)
from packscope.core.repo.index_file import IndexFile, index_objects
from packscope.core.repo.ref_syntax import Ref, ref_oid
from packscope.core.repo.reflog import read_reflog, reflogs

if TYPE_CHECKING:
    from packscope.core.fsck.reach import Connectivity

PACKED_REMEDY = "Correct or delete the line (git pack-refs --all rewrites the file from the refs git can read)."


def pointer_message(name: str, oid_hex: str, why: str) -> str:
    """git's line for a ref that names nothing usable, and why."""
    return f"{name}: invalid sha1 pointer {oid_hex} ({why})"


def ignored_ref_name(name: str) -> bool:
    """A path under refs/ git's loose-ref scan skips: a component that
    starts with '.' or ends in '.lock'."""
    return any(part.startswith(".") or part.endswith(".lock") for part in name.split("/"))


class Place(TypedDict, total=False):
    """Where a ref is stored, as a finding names it: its loose file, or a packed-refs line."""

    path: str | None
    offset: int | None
    line: int | None


class Roots:
    """The root phases of one fsck run, feeding ``walk`` (a Connectivity)."""

    def __init__(self, walk: Connectivity) -> None:
        self.walk = walk
        self.repo, self.refs = walk.repo, walk.refs
        self.null_hex = walk.null.hex()
        self._packed_lines: dict[str, tuple[int, int]] | None = None
        self._packed_data: bytes | None = None

    # --- packed-refs lines ---------------------------------------------------------------

    def _packed(self) -> bytes:
        if self._packed_data is None:
            try:
                self._packed_data = self.refs.packed_path.read_bytes()
            except OSError:
                self._packed_data = b""
        return self._packed_data

    def packed_line(self, name: str) -> tuple[int, int] | None:
        """(line, byte offset) of ``name``'s line in packed-refs."""
        if self._packed_lines is None:
            self._packed_lines = {}
            at = 0
            for n, line in enumerate(self._packed().split(b"\n"), 1):
                head, sp, rest = line.partition(b" ")
                if sp and not head.startswith((b"#", b"^")):
                    self._packed_lines.setdefault(os.fsdecode(rest), (n, at))
                at += len(line) + 1
        return self._packed_lines.get(name)

    def _where(self, ref: Ref) -> Place:
        if ref.source == "loose":
            return {"path": str(self.refs.ref_path(ref.name))}
        place: Place = {"path": str(self.refs.packed_path)}
        hit = self.packed_line(ref.name)
        if hit is not None:
            place["line"], place["offset"] = hit
        return place

    # --- HEADs -------------------------------------------------------------------------

    def heads(self) -> Iterator[Finding]:
        refs, walk = self.refs, self.walk
        # git's names: the current worktree's is "HEAD", the others' say whose it is
        current = os.path.realpath(str(self.repo.git_dir))
        names = [("main-worktree/HEAD", "main-worktree/HEAD") if refs.linked else ("HEAD", "HEAD")]
        for wt in self.repo.worktrees():
            if os.path.realpath(str(wt.git_dir)) == current:
                names.append(("HEAD", "HEAD"))
            else:
                names.append((f"worktrees/{wt.name}/HEAD", f"worktrees/{wt.name}/HEAD"))
        for label, name in names:
            path = str(refs.ref_path(name))
            try:
                head = refs.read(name)
                if head is None:
                    raise BadRefError(f"{label} does not exist", kind="ref-not-found")
                if head.symref is not None:
                    if not head.symref.startswith("refs/heads/"):
                        yield Finding(
                            "head-strange",
                            ERROR,
                            f"{label} points to something strange ({head.symref})",
                            "refs",
                            ERROR_REFS,
                            path=path,
                            remedy=f"Point it at a branch: git symbolic-ref {label} refs/heads/BRANCH.",
                        )
                        continue
                    target = refs.read(head.symref)
                    # a branch holding the null id does not exist for git either
                    if target is None or (target.symref is None and target.oid == walk.null):
                        yield Finding(
                            "head-unborn",
                            INFO,
                            f"{label} points to an unborn branch ({head.symref[len('refs/heads/') :]})",
                            "refs",
                            0,
                            path=path,
                            remedy="Nothing to do: the first commit creates the branch.",
                        )
                        continue
                chain = refs.follow(name)
            except BadRefError as e:
                yield from_error(e, "refs", ERROR_REFS, message=f"invalid {label}: {e.message}", path=path)
                continue
            oid = ref_oid(chain[-1])
            if oid == walk.null:
                if head.symref is None:
                    yield Finding(
                        "head-null",
                        ERROR,
                        f"{label}: detached HEAD points at nothing (the null id)",
                        "refs",
                        ERROR_REFS,
                        path=path,
                        remedy="Check out a branch or commit: git checkout BRANCH.",
                    )
                continue  # a chain ending at the null id: the ref scan reports it
            f = walk.root(oid, label, "branch", path=path)
            if f is not None:
                yield f

    # --- refs/ ---------------------------------------------------------------------------

    def all_refs(self) -> Iterator[Finding]:
        refs, walk = self.refs, self.walk
        for ref in refs.iter_refs("refs/"):
            place = self._where(ref)
            if ref.symref is None:
                oid = ref_oid(ref)
            else:
                try:
                    oid = refs.resolve(ref.name)
                except BadRefError as e:
                    yield self._null_ref(ref.name, e.kind, e.message, place, e.remedy)
                    continue
            if oid == walk.null:
                why = "the null id names no object" if ref.symref is None else f"{ref.symref} holds the null id"
                yield self._null_ref(ref.name, "ref-null", why, place, REMEDIES["ref-target"])
                continue
            role = "branch" if ref.name.startswith("refs/heads/") else "ref"
            f = walk.root(oid, ref.name, role, **place)
            if f is not None:
                yield f
        if not walk.rooted:
            yield Finding(
                "no-refs",
                INFO,
                "No default references (every object is dangling)",
                "refs",
                0,
                remedy="Nothing to check history from: create a branch, or fetch one.",
            )
        for problem in refs.problems:
            f = self._problem(problem)
            if f is not None:
                yield f

    def _null_ref(self, name: str, kind: str, why: str, place: Place, remedy: str | None) -> Finding:
        return Finding(
            kind,
            ERROR,
            pointer_message(name, self.null_hex, why),
            "refs",
            ERROR_REACHABLE,
            oid=self.null_hex,
            remedy=remedy,
            details={"root": name},
            **place,
        )

    def _problem(self, e: BadRefError) -> Finding | None:
        """A loose file or packed-refs line the ref store could not take."""
        if e.path != str(self.refs.packed_path):
            name = self._loose_name(e.path)
            if name is None or ignored_ref_name(name):
                return None  # a stale lock, a dotfile: git does not look at them
            return self._null_ref(name, e.kind, e.message, {"path": e.path}, e.remedy)
        place: Place = {"path": e.path, "offset": e.offset, "line": getattr(e, "line", None)}
        verdict = self.refs.packed_problem_class(e)
        if verdict == "duplicate":  # git keeps one of the two and says nothing
            return from_error(e, "refs", 0, severity=WARNING, line=place["line"], remedy=PACKED_REMEDY)
        if verdict == "outside":  # a name outside refs/: git's listing never sees it
            return from_error(e, "refs", 0, severity=WARNING, line=place["line"], remedy=PACKED_REMEDY)
        if verdict == "bad-name":
            name = os.fsdecode(self._line_at(e.offset).partition(b" ")[2])
            return self._null_ref(name, "ref-bad-name", e.message, place, PACKED_REMEDY)
        # git dies on any other line it cannot parse ("unexpected line in packed-refs")
        return from_error(
            e, "refs", ERROR_FATAL, message=f"{e.message} (git stops here)", line=place["line"], remedy=PACKED_REMEDY
        )

    def _line_at(self, offset: int | None) -> bytes:
        data = self._packed()
        if offset is None or offset >= len(data):
            return b""
        end = data.find(b"\n", offset)
        return data[offset : len(data) if end < 0 else end]

    def _loose_name(self, path: str | None) -> str | None:
        if not path:
            return None
        for base in (self.refs.git_dir, self.refs.common_dir):
            try:
                rel = os.path.relpath(path, base)
            except ValueError:
                continue
            if rel.startswith("refs" + os.sep):
                return rel.replace(os.sep, "/")
        return None

    # --- reflogs ----------------------------------------------------------------------------

    def reflogs(self) -> Iterator[Finding]:
        walk = self.walk
        for log in reflogs(self.repo):
            problems: list[BadRefError] = []
            label = log.ref  # git names the ref: "REF: invalid reflog entry ID"
            for n, entry in enumerate(read_reflog(log, walk.fmt, problems)):
                if not n & 4095:
                    walk.ticker.poll()
                for oid in (entry.old, entry.new):
                    f = walk.root(oid, label, "reflog", path=log.path, offset=entry.offset)
                    if f is not None:
                        yield f
            for problem in problems:
                yield from_error(problem, "reflog", 0, severity=WARNING)

    # --- indexes ----------------------------------------------------------------------------

    def indexes(self) -> Iterator[Finding]:
        walk = self.walk
        # git 2.39 reads one index, the current worktree's: a blob staged only
        # in another worktree is dangling for it (2.41 reads every worktree's)
        git_dir = str(self.repo.git_dir)
        path = os.path.join(git_dir, "index")
        label = "index"
        if os.path.isfile(path):
            unreadable_bit = ERROR_FATAL  # git dies on the index it reads
            try:
                index = IndexFile.open(path, walk.fmt)
                checksum_ok = index.checksum_ok()
                if checksum_ok is not True:
                    # git 2.39 knows no index.skipHash (2.40 does): a zero
                    # trailer fails its check as any wrong one, and it dies
                    why = (
                        "checksum does not match its contents"
                        if checksum_ok is False
                        else "no checksum (written with index.skipHash, which git 2.39 does not read)"
                    )
                    yield Finding(
                        "index-checksum",
                        ERROR,
                        f"{label}: {why}",
                        "index",
                        unreadable_bit,
                        path=path,
                        offset=index.trailer_at,
                        remedy=REMEDIES["index"],
                    )
                for ref in index_objects(index, git_dir):
                    if ref.source == "cache-tree":
                        continue  # below, node by node
                    role = "resolve-undo" if ref.source == "resolve-undo" else "index"
                    where = f"{label} {ref.source} {ref.path.decode('utf-8', 'replace')!r}"
                    f = walk.root(ref.oid, where, role, expected=ref.type, path=path, offset=ref.offset)
                    if f is not None:
                        yield f
                yield from self._cache_tree(index, label, path)
            except RepositoryError as e:
                yield from_error(e, "index", unreadable_bit)
                return
            for problem in index.problems:
                yield from_error(problem, "index", ERROR_REACHABLE)

    def _cache_tree(self, index: IndexFile, label: str, path: str) -> Iterator[Finding]:
        """git's order: a node, then its subtrees — unless the node's tree
        cannot be read, when its subtrees are not looked at."""
        walk = self.walk
        skip = 0  # nodes still to skip below a failed node (the file lists a node, then its subtrees)
        for name, oid, offset, subtrees in index.cache_tree_nodes():
            if skip:
                skip += subtrees - 1
                continue
            failed = False
            if oid is not None:
                failed = walk.usable(oid) is None
                where = f"{label} cache-tree {name.decode('utf-8', 'replace')!r}"
                f = walk.root(oid, where, "cache-tree", expected="tree", path=path, offset=offset)
                if f is not None:
                    yield f
            if failed:
                skip = subtrees


def root_finding_message(role: str, label: str, oid_hex: str, what: str, why: str) -> str:
    """The message of a root that names nothing usable, in git's words
    where git has some."""
    if role in ("ref", "branch"):
        return pointer_message(label, oid_hex, f"the {what} {why}")
    if role == "reflog":
        return f"{label}: invalid reflog entry {oid_hex} (the {what} {why})"
    if role in ("cache-tree", "resolve-undo"):
        return f"{oid_hex}: invalid sha1 pointer in {role} ({label}: the {what} {why})"
    return f"{label}: points to {what} {oid_hex}, which {why}"
