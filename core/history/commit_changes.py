"""What a commit changed: its files with status and line counts, and each
file's patch — what ``git diff -M --numstat`` and ``git diff -M`` show
between a commit and one of its parents.

* :func:`file_changes` — the changed files in ``git diff --name-status -M``
  order: added, deleted, modified, type-changed (``T``: file ↔ symlink ↔
  gitlink), renamed and copied (``R087``, ``C100``: found as
  :mod:`packscope.core.history.renames` finds them, exact renames only
  unless a lower ``minimum`` is given).
* :func:`line_counts` — ``--numstat``'s (added, deleted) for one change, or
  None for a binary file (git's rule: a NUL byte in the first 8000 bytes).
* :func:`patch_lines` — the change as ``git diff`` prints it: the
  ``diff --git`` header, mode lines, ``index`` line, hunks; "Binary files …
  differ" for binary content; a note instead of hunks past ``max_lines``.
  Lines are paired as git's default diff pairs them
  (:func:`~packscope.core.history.line_diff.git_diff_flags`: xdiff's
  pre-pass, its search that gives up on minimality past a cost, its indent
  heuristic), so hunks and counts are git's, not a minimal diff's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from stat import S_IFMT
from typing import TYPE_CHECKING

from packscope.core.history.line_diff import NO_EOL, Check, count_lines, iter_hunks
from packscope.core.history.renames import DEFAULT_RENAME_LIMIT, MAX_SCORE, BlobSizes, find_renames, percent
from packscope.core.history.tree_diff import TreeReader, diff_trees
from packscope.core.objects import S_IFGITLINK, canonical_mode
from packscope.core.oid import ObjectFormat

if TYPE_CHECKING:
    from packscope.core.history.commit_reader import StoreView
    from packscope.core.objects import ObjectReader

BINARY_PROBE = 8000  # git looks for a NUL byte in this many leading bytes


class BlobSource:
    """What the diff needs from a store: blob contents by id."""

    fmt: ObjectFormat

    def read(self, oid: bytes) -> tuple[str, bytes]:  # pragma: no cover - a protocol
        raise NotImplementedError

    def read_header(self, oid: bytes) -> tuple[str, int]:  # pragma: no cover - a protocol
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class FileChange:
    status: str  # "A", "D", "M", "T", "R" (renamed) or "C" (copied)
    path: bytes  # the new path (the old one for a deletion)
    old_path: bytes | None  # set for renames and copies (and equal to path otherwise)
    old_mode: int  # 0 when added
    new_mode: int  # 0 when deleted
    old_oid: bytes | None
    new_oid: bytes | None
    score: int = 0  # a rename's or copy's similarity, 0..MAX_SCORE

    @property
    def similarity(self) -> int:
        """The similarity in percent (``R087``'s 87)."""
        return percent(self.score)

    @property
    def name_status(self) -> str:
        """The ``--name-status`` line's status column."""
        if self.status in ("R", "C"):
            return f"{self.status}{self.similarity:03d}"
        return self.status


class RenameReport:
    """What :func:`file_changes` says about its pairing: ``limit_needed``
    > 0 when the similarity search was skipped (too many files for the
    rename limit: git's warning names this value)."""

    limit_needed = 0


def file_changes(
    store: StoreView,
    old_tree: bytes | None,
    new_tree: bytes | None,
    *,
    minimum: int | None = MAX_SCORE,
    copies: bool = False,
    limit: int = DEFAULT_RENAME_LIMIT,
    check: Check | None = None,
    report: RenameReport | None = None,
) -> list[FileChange]:
    """The files changed from ``old_tree`` to ``new_tree`` (None: the empty
    tree, as for a root commit), in git's order: renames (and with
    ``copies`` copies) paired at ``minimum`` similarity (0..60000; the
    default pairs exact renames only — ``-M100%``; None: no pairing,
    ``--no-renames``), ``limit`` as ``diff.renameLimit``."""
    reader = TreeReader(store)
    changes = list(diff_trees(store, old_tree, new_tree, reader=reader))
    if minimum is None:
        return [FileChange(c.status, c.path, c.path, c.old_mode, c.new_mode, c.old_oid, c.new_oid) for c in changes]
    blobs = BlobSizes(lambda oid: store.read_header(oid)[1], lambda oid: store.read(oid)[1])
    found = find_renames(changes, blobs, minimum=minimum, copies=copies, limit=limit, check=check)
    if report is not None:
        report.limit_needed = found.limit_needed
    out = []
    for p in found.pairs:
        c, src = p.change, p.source
        if src is None:
            out.append(FileChange(c.status, c.path, c.path, c.old_mode, c.new_mode, c.old_oid, c.new_oid))
        else:
            out.append(
                FileChange(p.status, c.path, src.path, src.old_mode, c.new_mode, src.old_oid, c.new_oid, p.score)
            )
    return out


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_PROBE]


def side_content(store: ObjectReader, oid: bytes | None, mode: int) -> bytes:
    """One side of a change as a diff reads it: the blob, a gitlink's line, or nothing."""
    if oid is None or S_IFMT(mode) == S_IFGITLINK:
        # A gitlink's "content" in a diff is its commit id line.
        return b"Subproject commit %s\n" % oid.hex().encode() if oid is not None else b""
    return store.read(oid)[1]


def _no_check() -> None:
    return None


def change_size(store: BlobSource, change: FileChange) -> int:
    """The larger side's size in bytes (from the objects' headers: no
    content is read), what a diff budget is measured against."""
    sizes = [0]
    for oid, mode in ((change.old_oid, change.old_mode), (change.new_oid, change.new_mode)):
        if oid is not None and S_IFMT(mode) != S_IFGITLINK:
            sizes.append(store.read_header(oid)[1])
    return max(sizes)


def line_counts(store: BlobSource, change: FileChange, check: Check = _no_check) -> tuple[int, int] | None:
    """``--numstat``'s (added, deleted) lines; None for binary content.
    ``check`` is called now and then during the diff and may raise to stop."""
    old = side_content(store, change.old_oid, change.old_mode)
    new = side_content(store, change.new_oid, change.new_mode)
    return text_counts(old, new, check)


def text_counts(old: bytes, new: bytes, check: Check = _no_check) -> tuple[int, int] | None:
    """``--numstat``'s counts for two contents (None: binary)."""
    if is_binary(old) or is_binary(new):
        return None
    return count_lines(old, new, check)


def utf8_prefix(line: bytes) -> bytes:
    """``line`` up to its first byte that does not start a whole UTF-8
    character, as git cuts a hunk header (its function name is cut at 80
    bytes, maybe inside a character).  git's reading of UTF-8 also refuses
    U+FFFE and U+FFFF."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        text = line[: e.start].decode("utf-8")
        line = line[: e.start]
    for bad in ("\ufffe", "\uffff"):
        k = text.find(bad)
        if k >= 0:
            text = text[:k]
            line = text.encode("utf-8")
    return line


def _seven(oid: bytes) -> str:
    return oid.hex()[:7]


def patch_lines(
    store: BlobSource,
    change: FileChange,
    *,
    max_lines: int = 5000,
    context: int = 3,
    abbrev: Callable[[bytes], str] | None = None,
    check: Check = _no_check,
) -> list[bytes]:
    """The change as ``git diff -M`` prints it, one line per element.  A
    type change is printed as git prints it: a deletion, then an addition.
    ``abbrev(oid) -> hex`` abbreviates the ``index`` line's ids as git does
    in that repository (history.abbrev.StoreAbbreviator; its ``min_len``
    zeros for an absent side); without it, 7 digits."""
    if change.status == "T":
        deletion = FileChange("D", change.path, change.path, change.old_mode, 0, change.old_oid, None)
        addition = FileChange("A", change.path, change.path, 0, change.new_mode, None, change.new_oid)
        return patch_lines(
            store, deletion, max_lines=max_lines, context=context, abbrev=abbrev, check=check
        ) + patch_lines(store, addition, max_lines=max_lines, context=context, abbrev=abbrev, check=check)
    old_path = change.old_path or change.path
    out = [b"diff --git a/%s b/%s" % (old_path, change.path)]
    old_mode, new_mode = canonical_mode(change.old_mode), canonical_mode(change.new_mode)
    if change.status == "A":
        out.append(b"new file mode %o" % new_mode)
    elif change.status == "D":
        out.append(b"deleted file mode %o" % old_mode)
    elif old_mode != new_mode:
        out += [b"old mode %o" % old_mode, b"new mode %o" % new_mode]
        if change.old_oid == change.new_oid and change.status == "M":
            return out  # the mode alone changed: no index line, no hunks
    if change.status in ("R", "C"):
        word = b"rename" if change.status == "R" else b"copy"
        out += [
            b"similarity index %d%%" % change.similarity,
            b"%s from %s" % (word, old_path),
            b"%s to %s" % (word, change.path),
        ]
        if change.old_oid == change.new_oid:
            return out
    if abbrev is None:
        abbrev = _seven
    null = b"0" * getattr(abbrev, "min_len", 7)
    old_id = abbrev(change.old_oid).encode() if change.old_oid else null
    new_id = abbrev(change.new_oid).encode() if change.new_oid else null
    index = b"index %s..%s" % (old_id, new_id)
    if change.status in ("M", "R", "C") and old_mode == new_mode:
        index += b" %o" % new_mode
    out.append(index)
    old = side_content(store, change.old_oid, change.old_mode)
    new = side_content(store, change.new_oid, change.new_mode)
    a_name = b"a/" + old_path if change.status != "A" else b"/dev/null"
    b_name = b"b/" + change.path if change.status != "D" else b"/dev/null"
    if is_binary(old) or is_binary(new):
        out.append(b"Binary files %s and %s differ" % (a_name, b_name))
        return out
    emitted = 0
    named = False
    for hunk in iter_hunks(old, new, context, check):
        if not named:  # as in git: no hunk (an empty file added or deleted), no file names
            out += [b"--- " + a_name, b"+++ " + b_name]
            named = True
        out.append(utf8_prefix(hunk.header))
        for line in hunk.lines:
            if emitted >= max_lines:
                out.append(b"[... the rest of this diff is not shown: over %d lines]" % max_lines)
                return out
            if line.endswith(NO_EOL):
                out += [line[: -len(NO_EOL)], b"\\ No newline at end of file"]
            else:
                out.append(line)
            emitted += 1
    return out
