"""A merge's combined diff: ``git show``'s default for a merge (``--cc``),
and ``-c``'s raw form, as git-diff(1) ("COMBINED DIFF FORMAT") describes.

Which files: those the merge changed against *every* parent (a file equal
to one parent's is not shown).  For each, the merge's lines are diffed
against each parent in turn (the line diff of
:mod:`packscope.core.history.line_diff` as git's default diff runs it —
xdiff's pre-pass, the indent heuristic — after cutting the common tail, as
git's diff without context does):

* each result line carries one column per parent: ``+`` where the line is
  not in that parent, a space where it is;
* the lines a parent had and the result lost hang before the result line
  they were lost before, with ``-`` in that parent's column; where several
  parents lost lines at one place their lists are merged along a longest
  common subsequence (a line lost by two parents is shown once, with two
  ``-``), the merged list's lines first between two matches;
* interesting lines (added against some parent, or with lost lines before
  them) get 3 lines of context; groups whose context touches join;
* ``--cc`` then drops a hunk in which the parents had only two versions
  and the result took one of them unchanged: every change in it is against
  the same set of parents, and that set is not all of them;
* a file whose every hunk was dropped is not shown (unless its mode
  changed).

The hunk header has one ``@`` more than there are parents on each side,
each parent's range (always ``start,count``), then the result's; after it,
up to 40 bytes of the nearest line before the hunk (since the previous
one) that starts with a letter, ``_`` or ``$``, as git cuts it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from packscope.core.history.blame import common_tail_lines
from packscope.core.history.commit_changes import side_content
from packscope.core.history.git_diff_heuristics import SideIndents
from packscope.core.history.line_diff import NO_EOL, Side, git_diff_flags, intern_sides, iter_runs
from packscope.core.history.tree_diff import TreeChange, TreeReader, diff_trees
from packscope.core.objects import ObjectReader

CONTEXT = 3
BINARY_PROBE = 8000


@dataclass(frozen=True, slots=True)
class ParentSide:
    status: str  # this parent's diff status: "A", "D", "M" or "T"
    mode: int  # 0 when the parent lacks the path
    oid: bytes | None


@dataclass(frozen=True, slots=True)
class CombinedFile:
    path: bytes
    mode: int  # the merge's mode (0: deleted in the merge)
    oid: bytes | None
    parents: tuple[ParentSide, ...]

    @property
    def statuses(self) -> str:
        """``--name-status``'s column: one letter per parent."""
        return "".join(p.status for p in self.parents)


def combined_files(store: ObjectReader, parent_trees: list[bytes | None], tree: bytes | None) -> list[CombinedFile]:
    """The paths the merge changed against every parent, in path order."""
    reader = TreeReader(store)
    per_parent: list[dict[bytes, TreeChange]] = []
    for pt in parent_trees:
        per_parent.append({c.path: c for c in diff_trees(store, pt, tree, reader=reader)})
    if not per_parent:
        return []
    out = []
    for path, first in per_parent[0].items():
        sides = []
        for changes in per_parent:
            c = changes.get(path)
            if c is None:
                break
            sides.append(ParentSide(c.status, c.old_mode, c.old_oid))
        else:
            out.append(CombinedFile(path, first.new_mode, first.new_oid, tuple(sides)))
    return out


# --- the lines ----------------------------------------------------------------------


@dataclass(slots=True)
class _Lost:
    text: bytes  # without its newline
    parents: int  # bit n: lost from parent n


@dataclass(slots=True)
class _Line:
    text: bytes
    flag: int = 0  # bit n: not in parent n; then the mark bits
    lost: list[_Lost] = field(default_factory=list)
    p_lno: list[int] = field(default_factory=list)


def _split(data: bytes) -> list[bytes]:
    """Lines without their newlines (a last line without one kept)."""
    if not data:
        return []
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def _merge_lost(base: list[_Lost], new: list[bytes], bit: int) -> list[_Lost]:
    """``new`` (one parent's lost lines at one place) merged into ``base``
    along their longest common subsequence: matched lines gain ``bit``."""
    if not base:
        return [_Lost(t, bit) for t in new]
    nb, nn = len(base), len(new)
    # lcs[i][j]: over base[:i] and new[:j]; ties go to the new list's side
    lcs = [[0] * (nn + 1) for _ in range(nb + 1)]
    how = [[2] * (nn + 1) for _ in range(nb + 1)]  # 0 match, 1 new, 2 base
    for j in range(1, nn + 1):
        how[0][j] = 1
    for i in range(1, nb + 1):
        row, prev = lcs[i], lcs[i - 1]
        bt = base[i - 1].text
        for j in range(1, nn + 1):
            if bt == new[j - 1]:
                row[j] = prev[j - 1] + 1
                how[i][j] = 0
            elif row[j - 1] >= prev[j]:
                row[j] = row[j - 1]
                how[i][j] = 1
            else:
                row[j] = prev[j]
                how[i][j] = 2
    out: list[_Lost] = []
    i, j = nb, nn
    while i or j:
        h = how[i][j]
        if h == 0:
            base[i - 1].parents |= bit
            out.append(base[i - 1])
            i -= 1
            j -= 1
        elif h == 1:
            out.append(_Lost(new[j - 1], bit))
            j -= 1
        else:
            out.append(base[i - 1])
            i -= 1
    out.reverse()
    return out


def _lines_against_parents(result: bytes, parents: list[bytes]) -> list[_Line]:
    lines = [_Line(t) for t in _split(result)]
    cnt = len(lines)
    lines.append(_Line(b""))  # lost lines at the very end hang here
    lines.append(_Line(b""))  # the line numbers' trailer
    for n, parent in enumerate(parents):
        bit = 1 << n
        a, b = intern_sides(parent, result, keep_starts=True)
        # git diffs each parent without context, so it cuts the common
        # tail first (as blame's diff does); its pre-pass counts what is left
        cut = common_tail_lines(parent, result)
        a_ids, b_ids = (a.ids[: len(a) - cut], b.ids[: len(b) - cut]) if cut else (a.ids, b.ids)
        deleted, inserted = git_diff_flags(a_ids, b_ids, indents=SideIndents(a, b))
        if cut:
            deleted[-1:] = bytes(cut + 1)
            inserted[-1:] = bytes(cut + 1)
        plost: dict[int, list[bytes]] = {}
        at = -1
        for op, i, j, k in iter_runs(deleted, inserted):
            if op == "=":
                at = -1
                continue
            if at < 0:
                at = j  # a group's lost lines hang before its first result line
            if op == "-":
                plost.setdefault(at, []).extend(_text(a, x) for x in range(i, i + k))
            else:
                for y in range(j, j + k):
                    lines[y].flag |= bit
        p_lno = 1
        for lno in range(cnt + 1):
            line = lines[lno]
            line.p_lno.append(p_lno)
            lost = plost.get(lno)
            if lost:
                line.lost = _merge_lost(line.lost, lost, bit)
            p_lno += sum(1 for ll in line.lost if ll.parents & bit)
            if lno < cnt and not line.flag & bit:
                p_lno += 1
        lines[cnt + 1].p_lno.append(p_lno)
    return lines


def _text(side: Side, i: int) -> bytes:
    return side.line(i)


# --- hunks --------------------------------------------------------------------------


def _find(lines: list[_Line], mark: int, i: int, cnt: int, uninteresting: bool) -> int:
    while i <= cnt:
        if bool(lines[i].flag & mark) != uninteresting:
            return i
        i += 1
    return i


def _tail(lines: list[_Line], all_mask: int, begin: int, i: int) -> int:
    # a hunk whose last interesting line has only lost lines before it
    # shows that line itself: one context line fewer is needed after it
    if begin + 1 <= i and not lines[i - 1].flag & all_mask:
        i -= 1
    return i


def _context(lines: list[_Line], cnt: int, nparents: int, context: int) -> bool:
    all_mask = (1 << nparents) - 1
    mark = 1 << nparents
    no_pre_delete = 2 << nparents
    i = _find(lines, mark, 0, cnt, False)
    if i > cnt:
        return False
    while i <= cnt:
        j = max(0, i - context)
        while j < i:
            if not lines[j].flag & mark:
                lines[j].flag |= no_pre_delete
            lines[j].flag |= mark
            j += 1
        while True:
            j = _find(lines, mark, i, cnt, True)
            if j > cnt:
                return True  # the rest is interesting
            k = _find(lines, mark, j, cnt, False)
            j = _tail(lines, all_mask, i, j)
            if k < j + context:  # a short gap: joined
                while j < k:
                    lines[j].flag |= mark
                    j += 1
                i = k
                continue
            break
        i = k
        end = min(j + context, cnt + 1)
        while j < end:
            lines[j].flag |= mark
            j += 1
    return True


def _make_hunks(lines: list[_Line], cnt: int, nparents: int, dense: bool, context: int) -> bool:
    all_mask = (1 << nparents) - 1
    mark = 1 << nparents
    for i in range(cnt + 1):
        line = lines[i]
        if line.flag & all_mask or line.lost:
            line.flag |= mark
        else:
            line.flag &= ~mark
    if not dense:
        return _context(lines, cnt, nparents, context)
    # the lost lines at the end (hanging at cnt) belong to the hunks too
    i = 0
    while i <= cnt:
        while i <= cnt and not lines[i].flag & mark:
            i += 1
        if i > cnt:
            break
        begin = i
        j = i + 1
        while j <= cnt:
            if not lines[j].flag & mark:
                # is there an interesting line within reach after this one?
                la = min(_tail(lines, all_mask, begin, j) + context, cnt + 1)
                joined = False
                while la and j <= la - 1:
                    la -= 1
                    if lines[la].flag & mark:
                        joined = True
                        break
                if not joined:
                    break
                j = la
            j += 1
        end = j
        # two versions only, the result one of them: not interesting
        same = 0
        varied = False
        for x in range(begin, end):
            diff = lines[x].flag & all_mask
            if diff:
                if not same:
                    same = diff
                elif same != diff:
                    varied = True
                    break
            for ll in lines[x].lost:
                if not same:
                    same = ll.parents
                elif same != ll.parents:
                    varied = True
                    break
            if varied:
                break
        if not varied and same != all_mask:
            for x in range(begin, end):
                lines[x].flag &= ~mark
        i = end
    return _context(lines, cnt, nparents, context)


def _is_funcname(text: bytes) -> bool:
    c = text[:1]
    return c.isalpha() or c in (b"_", b"$")


def _hunk_lines(lines: list[_Line], cnt: int, nparents: int) -> list[bytes]:
    mark = 1 << nparents
    no_pre_delete = 2 << nparents
    at = b"@" * (nparents + 1)
    out: list[bytes] = []
    lno = 0
    while True:
        comment = None
        while lno <= cnt and not lines[lno].flag & mark:
            if lno < cnt and _is_funcname(lines[lno].text):
                comment = lines[lno].text
            lno += 1
        if lno > cnt:
            break
        end = lno + 1
        while end <= cnt and lines[end].flag & mark:
            end += 1
        rlines = end - lno - (1 if end > cnt else 0)
        head = at
        for n in range(nparents):
            p0, p1 = lines[lno].p_lno[n], lines[end].p_lno[n]
            head += b" -%d,%d" % (p0, p1 - p0)
        head += b" +%d,%d " % (lno + 1, rlines) + at
        if comment is not None:
            cut = comment[:40]
            last = 0
            for k, ch in enumerate(cut):
                if ch not in b" \t\n\v\f\r":
                    last = k
            if last:
                head += b" " + cut[:last]
        out.append(head)
        while lno < end:
            line = lines[lno]
            lno += 1
            if not line.flag & no_pre_delete:
                for ll in line.lost:
                    cols = bytes(0x2D if ll.parents & (1 << n) else 0x20 for n in range(nparents))
                    out.append(cols + ll.text)
            if lno > cnt:
                break
            cols = bytes(0x2B if line.flag & (1 << n) else 0x20 for n in range(nparents))
            out.append(cols + line.text)
    return out


def combined_patch(
    store: ObjectReader,
    f: CombinedFile,
    *,
    dense: bool = True,
    context: int = CONTEXT,
    abbrev: Callable[[bytes], str] | None = None,
) -> list[bytes]:
    """One file's ``diff --cc`` (or ``--combined``) text, one element a
    line; empty when ``--cc`` finds nothing interesting to show."""
    nparents = len(f.parents)
    if abbrev is None:
        abbrev = _seven
    null = b"0" * getattr(abbrev, "min_len", 7)
    result = side_content(store, f.oid, f.mode)
    contents = [side_content(store, p.oid, p.mode) for p in f.parents]
    binary = any(b"\0" in c[:BINARY_PROBE] for c in [result, *contents])
    deleted = f.mode == 0
    mode_differs = any(p.mode != f.mode for p in f.parents)
    show_hunks = False
    body: list[bytes] = []
    if not binary and not deleted:
        lines = _lines_against_parents(result, contents)
        cnt = len(lines) - 2
        show_hunks = _make_hunks(lines, cnt, nparents, dense, context)
        if show_hunks:
            body = _hunk_lines(lines, cnt, nparents)
    if binary:
        show_hunks = True
        body = [b"Binary files differ"]
    if not (show_hunks or mode_differs):
        return []
    out = [(b"diff --cc " if dense else b"diff --combined ") + f.path]
    ids = b",".join(abbrev(p.oid).encode() if p.oid else null for p in f.parents)
    out.append(b"index %s..%s" % (ids, abbrev(f.oid).encode() if f.oid else null))
    added = not deleted and all(p.status == "A" for p in f.parents)
    if mode_differs:
        if added:
            out.append(b"new file mode %06o" % f.mode)
        else:
            line = (b"deleted file " if deleted else b"") + b"mode "
            line += b",".join(b"%06o" % p.mode for p in f.parents)
            if f.mode:
                line += b"..%06o" % f.mode
            out.append(line)
    if binary:
        return out + body
    out.append(b"--- /dev/null" if added else b"--- a/" + f.path)
    out.append(b"+++ /dev/null" if deleted else b"+++ b/" + f.path)
    return out + body


def _seven(oid: bytes) -> str:
    return oid.hex()[:7]


__all__ = ["NO_EOL", "CombinedFile", "ParentSide", "combined_files", "combined_patch"]
