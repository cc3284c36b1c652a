"""``git show`` for one commit: its log entry, then what it changed, as
``--name-status``, ``--numstat``, ``--stat`` or a patch (``-p``, the
default), with renames and copies found as ``-M[n]``/``-C[n]`` say.  The
other objects as git shows them: an annotated tag's header block
(:func:`tag_block`; the tagged object follows it), a tree's top-level
names (:func:`tree_listing`); a blob is its bytes.

A merge is shown as git shows it: its patch is the combined diff
(``--cc``, :mod:`packscope.core.history.combined_diff`), ``--name-status``
gives one letter per parent, and ``--stat``/``--numstat`` count against
the first parent.

``--stat`` is git's diffstat: names cut to fit (``...`` and the part from
the next ``/``), renames written ``dir/{old => new}``, the bar scaled to the
width (80 columns, or ``COLUMNS``), then the summary line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from stat import S_IFMT, S_ISDIR
from typing import TYPE_CHECKING

from packscope.core.history.combined_diff import combined_files, combined_patch
from packscope.core.history.commit_changes import (
    BlobSource,
    FileChange,
    file_changes,
    is_binary,
    patch_lines,
    side_content,
    text_counts,
)
from packscope.core.history.log_format import UserFormat, format_date, format_medium
from packscope.core.history.renames import DEFAULT_RENAME_LIMIT, DEFAULT_SCORE
from packscope.core.objects import S_IFGITLINK, Commit, parse_ident, parse_tag, tree_items
from packscope.core.oid import ObjectFormat

if TYPE_CHECKING:
    from packscope.core.repo.mailmap import Mailmap

Abbrev = Callable[[bytes], str]


@dataclass(slots=True)
class ShowOptions:
    formats: tuple[str, ...] = ("patch",)  # of "patch", "stat", "numstat", "name-status", "name-only"
    minimum: int | None = DEFAULT_SCORE  # None: --no-renames
    copies: bool = False
    limit: int = DEFAULT_RENAME_LIMIT
    combined: str = "cc"  # a merge's patch: "cc" (dense), "c", or "first" (-m: first parent only)
    pretty: str | None = None  # None: medium
    stat_width: int = 80


def show_commit(
    store: BlobSource,
    oid: bytes,
    commit: Commit,
    parents: tuple[bytes, ...],
    parent_trees: list[bytes | None],
    opts: ShowOptions,
    *,
    abbrev: Abbrev,
    index_abbrev: Abbrev,
    warn: Callable[[str], None] | None = None,
    mailmap: Mailmap | None = None,
    map_authors: bool = False,
) -> Iterator[bytes]:
    """The bytes of ``git show`` for ``commit`` (``parent_trees``: its
    parents' trees, in order), one chunk per part.  ``mailmap`` maps
    ``%aN``-style placeholders, and with ``map_authors`` (git's
    ``log.mailmap``) the default format's Author lines.  A ``format:``
    entry has no newline of its own (git puts one between entries)."""
    if opts.pretty is None or opts.pretty == "medium":
        head = format_medium(oid, commit, abbrev, parents, mailmap if map_authors else None)
        sep = True
    else:
        user = UserFormat(opts.pretty, mailmap)
        head = b"" if user.empty else user.format(oid, commit, abbrev, parents) + (b"\n" if user.terminator else b"")
        sep = not user.empty
    yield head
    formats = opts.formats
    if not formats:
        return
    merge = len(parent_trees) > 1
    body: list[bytes] = []
    if merge:
        body = list(_merge_parts(store, commit, parent_trees, opts, index_abbrev))
    else:
        old_tree = parent_trees[0] if parent_trees else None
        from packscope.core.history.commit_changes import RenameReport

        report = RenameReport()
        changes = file_changes(
            store, old_tree, commit.tree, minimum=opts.minimum, copies=opts.copies, limit=opts.limit, report=report
        )
        if report.limit_needed and warn is not None:
            warn("exhaustive rename detection was skipped due to too many files.")
            warn(
                "you may want to set your diff.renameLimit variable to at least "
                f"{report.limit_needed} and retry the command."
            )
        body = list(_parts(store, changes, formats, opts, index_abbrev))
    if body:
        if sep:
            # git's separator: "---" when a diffstat precedes a patch
            sep_line = b"---\n" if "stat" in formats and "patch" in formats and not merge else b"\n"
            body.insert(0, sep_line)
        yield b"".join(body)


def _parts(
    store: BlobSource, changes: list[FileChange], formats: tuple[str, ...], opts: ShowOptions, abbrev: Abbrev
) -> Iterator[bytes]:
    if not changes:
        return
    counts: dict[int, tuple[int, int] | None] | None = None
    wrote = False
    for fmt in ("name-only", "name-status"):
        if fmt in formats:
            for c in changes:
                if fmt == "name-only":
                    yield c.path + b"\n"
                elif c.status in ("R", "C"):
                    assert c.old_path is not None
                    yield c.name_status.encode() + b"\t" + c.old_path + b"\t" + c.path + b"\n"
                else:
                    yield c.status.encode() + b"\t" + c.path + b"\n"
            wrote = True
            break  # (git shows one of the two: the last given)
    if "numstat" in formats or "stat" in formats:
        counts = {i: _counts(store, c) for i, c in enumerate(changes)}
    if "numstat" in formats:
        assert counts is not None
        for i, c in enumerate(changes):
            n = counts[i]
            name = _print_name(c)
            yield (b"-\t-\t" if n is None else b"%d\t%d\t" % n) + name + b"\n"
        wrote = True
    if "stat" in formats:
        assert counts is not None
        yield from diffstat(store, changes, counts, opts.stat_width)
        wrote = True
    if "patch" in formats:
        if wrote:
            yield b"\n"
        for c in changes:
            lines = patch_lines(store, c, max_lines=1 << 62, abbrev=abbrev)
            yield b"".join(line + b"\n" for line in lines)


def _counts(store: BlobSource, c: FileChange) -> tuple[int, int] | None:
    old = side_content(store, c.old_oid, c.old_mode)
    new = side_content(store, c.new_oid, c.new_mode)
    return text_counts(old, new)


def _print_name(c: FileChange) -> bytes:
    if c.status in ("R", "C") and c.old_path is not None and c.old_path != c.path:
        return rename_name(c.old_path, c.path)
    return c.path


def rename_name(a: bytes, b: bytes) -> bytes:
    """``old => new`` with the common leading directories and trailing
    path written once: ``dir/{old => new}/file``."""
    pfx = 0
    k = 0
    while k < len(a) and k < len(b) and a[k] == b[k]:
        if a[k] == 0x2F:
            pfx = k + 1
        k += 1
    # compare from the ends (the terminators first), not into the prefix
    # but for its final slash
    sfx = 0
    ia, ib = len(a), len(b)
    floor = pfx - (1 if pfx else 0)
    while ia >= floor and ib >= floor:
        ca = a[ia] if ia < len(a) else -1
        cb = b[ib] if ib < len(b) else -1
        if ca != cb:
            break
        if ca == 0x2F:
            sfx = len(a) - ia
        ia -= 1
        ib -= 1
    a_mid = max(0, len(a) - pfx - sfx)
    b_mid = max(0, len(b) - pfx - sfx)
    if pfx + sfx:
        return a[:pfx] + b"{" + a[pfx : pfx + a_mid] + b" => " + b[pfx : pfx + b_mid] + b"}" + a[len(a) - sfx :]
    return a[pfx : pfx + a_mid] + b" => " + b[pfx : pfx + b_mid]


def _size(store: BlobSource, oid: bytes | None, mode: int) -> int:
    if oid is None:
        return 0
    if S_IFMT(mode) == S_IFGITLINK:
        return len(b"Subproject commit %s\n" % oid.hex().encode())
    return store.read_header(oid)[1]


def _width(text: bytes) -> int:
    return len(text.decode("utf-8", "replace"))


def diffstat(
    store: BlobSource, changes: list[FileChange], counts: dict[int, tuple[int, int] | None], width: int = 80
) -> Iterator[bytes]:
    """git's ``--stat`` lines and summary for ``changes``."""
    rows = []
    max_len = 0
    max_change = 0
    number_width = 0
    bin_width = 0
    for i, c in enumerate(changes):
        name = _print_name(c)
        n = counts[i]
        if n is None:
            added = _size(store, c.new_oid, c.new_mode)
            deleted = _size(store, c.old_oid, c.old_mode)
            binary = True
        else:
            added, deleted = n
            binary = False
        rows.append((name, added, deleted, binary))
        max_len = max(max_len, _width(name))
        if binary:
            bin_width = max(bin_width, 14 + len(str(added)) + len(str(deleted)))
            number_width = 3
            continue
        max_change = max(max_change, added + deleted)
    number_width = max(number_width, len(str(max_change)))
    width = max(width, 16 + 6 + number_width)
    graph_width = max_change if max_change + 4 > bin_width else bin_width - 4
    name_width = max_len
    if name_width + number_width + 6 + graph_width > width:
        if graph_width > width * 3 // 8 - number_width - 6:
            graph_width = max(6, width * 3 // 8 - number_width - 6)
        if name_width > width - number_width - 6 - graph_width:
            name_width = width - number_width - 6 - graph_width
        else:
            graph_width = width - number_width - 6 - name_width
    total_add = total_del = 0
    for name, added, deleted, binary in rows:
        prefix = b""
        length = name_width
        shown = name
        if name_width < _width(name):
            prefix = b"..."
            length = max(0, length - 3)
            text = name.decode("utf-8", "replace")
            text = text[len(text) - length :] if length else ""
            slash = text.find("/")
            if slash >= 0:
                text = text[slash:]
            shown = text.encode()
        pad = b" " * max(0, length - _width(shown))
        line = b" " + prefix + shown + pad + b" |"
        if binary:
            line += b" %*s" % (number_width, b"Bin")
            if added or deleted:
                line += b" %d -> %d bytes" % (deleted, added)
            yield line + b"\n"
            continue
        total_add += added
        total_del += deleted
        add, dele = added, deleted
        if graph_width <= max_change:
            total = _scale(add + dele, graph_width, max_change)
            if total < 2 and add and dele:
                total = 2
            if add < dele:
                add = _scale(add, graph_width, max_change)
                dele = total - add
            else:
                dele = _scale(dele, graph_width, max_change)
                add = total - dele
        line += b" %*d" % (number_width, added + deleted)
        if added + deleted:
            line += b" "
        yield line + b"+" * add + b"-" * dele + b"\n"
    yield summary_line(len(rows), total_add, total_del)


def _scale(it: int, width: int, max_change: int) -> int:
    return 0 if not it else 1 + it * (width - 1) // max_change


def summary_line(files: int, ins: int, dels: int) -> bytes:
    if not files:
        return b" 0 files changed\n"
    out = b" %d file%s changed" % (files, b"" if files == 1 else b"s")
    if ins or not dels:
        out += b", %d insertion%s(+)" % (ins, b"" if ins == 1 else b"s")
    if dels or not ins:
        out += b", %d deletion%s(-)" % (dels, b"" if dels == 1 else b"s")
    return out + b"\n"


def _merge_parts(
    store: BlobSource, commit: Commit, parent_trees: list[bytes | None], opts: ShowOptions, abbrev: Abbrev
) -> Iterator[bytes]:
    formats = opts.formats
    wrote = False
    files = combined_files(store, parent_trees, commit.tree)
    yield b""  # git prints the separator after a merge's entry even when nothing follows
    if "name-only" in formats or "name-status" in formats:
        for f in files:
            if "name-only" in formats:
                yield f.path + b"\n"
            else:
                yield f.statuses.encode() + b"\t" + f.path + b"\n"
            wrote = True
    if "numstat" in formats or "stat" in formats:
        # counted against the first parent, as git does for a merge
        changes = file_changes(store, parent_trees[0], commit.tree, minimum=opts.minimum, copies=opts.copies)
        sub = tuple(f for f in formats if f in ("numstat", "stat"))
        yield from _parts(store, changes, sub, opts, abbrev)
        wrote = wrote or bool(changes)
    if "patch" in formats:
        if files and wrote:  # (even when --cc then shows no file)
            yield b"\n"
        for f in files:
            lines = combined_patch(store, f, dense=opts.combined == "cc", abbrev=abbrev)
            yield b"".join(line + b"\n" for line in lines)


__all__ = ["ShowOptions", "diffstat", "is_binary", "rename_name", "show_commit", "summary_line"]


def tag_block(data: bytes, fmt: ObjectFormat, oid: bytes, pretty: str | None = None) -> tuple[bytes, bytes]:
    """(the bytes ``git show`` prints for an annotated tag, the id of the
    object it tags): ``tag NAME``, the tagger as a ``Tagger:`` line (with
    its ``Date:`` in the default format; ``pretty`` as in
    :class:`ShowOptions`), then everything from the blank line after the
    headers (the message, a signature) as stored."""
    tag = parse_tag(data, fmt, oid)
    out = [b"tag " + tag.tag + b"\n"]
    end = data.find(b"\n\n")
    headers = data if end < 0 else data[: end + 1]
    for line in headers.split(b"\n"):
        if line.startswith(b"tagger "):
            ident, _ = parse_ident(line[7:])
            if ident is None:
                continue
            out.append(b"Tagger: %s <%s>\n" % (ident.name, ident.email))
            if pretty in (None, "medium"):
                out.append(b"Date:   " + format_date(ident.time, ident.tz).encode() + b"\n")
    if end >= 0:
        out.append(data[end + 1 :])
    return b"".join(out), tag.object


def tree_listing(name: bytes, data: bytes, fmt: ObjectFormat, oid: bytes | None = None) -> bytes:
    """``git show``'s listing of a tree named ``name`` (as the user wrote
    it): ``tree NAME``, a blank line, each entry's name (a directory's with
    a ``/``), in the tree's order, not recursing."""
    out = [b"tree " + name + b"\n\n"]
    out += [entry + (b"/\n" if S_ISDIR(mode) else b"\n") for mode, entry, _ in tree_items(data, fmt, oid)]
    return b"".join(out)
