"""Line diffs in linear space: a minimal edit script, and unified hunks as
git prints them.

Lines are interned first (:func:`intern_sides`): each side becomes an
``array('i')`` of line numbers-by-content, made a chunk of the text at a
time, so no list of every line of both sides ever exists; the table of
distinct lines is dropped once both sides are numbered.  :func:`diff_flags`
then marks which lines are deleted and inserted:

* the common head and tail are stripped;
* lines that occur nowhere in the other side's middle are changed in every
  edit script (no common subsequence can hold them): they are marked and
  left out, as git's xdiff does before its search;
* what remains goes to Myers' O(ND) search in its linear-space form: find
  the *middle snake* of an optimal path by searching from both ends at once,
  split there, and do each half the same way (an explicit stack, no
  recursion).  Memory is O(N + M), not the O(D·(N+M)) of keeping every
  round's furthest-reaching paths to trace back.

:func:`diff_flags`'s script is *minimal*.  git's default diff is not
always, and :func:`git_diff_flags` (what :func:`iter_hunks`,
:func:`count_lines` and blame use) does as it does: before its search,
xdiff also leaves out lines with very many copies on the other side that
sit among unmatched lines (its pre-pass,
:func:`~packscope.core.history.git_diff_heuristics.xdiff_pre_pass`); and
a box whose search runs past a cost (256 rounds and more) is split
early, at a long snake far along or at the furthest point reached
(:func:`_give_up`), its unsearched half then diffed the same way — so on large rewrites of files with many repeated
lines (translation catalogs) git's counts are a few lines over the
minimal ones, and so are these.

Each group of changes is then slid along runs of equal lines to where git
puts it, with git's indent heuristic
(:func:`~packscope.core.history.git_diff_heuristics.place_groups`; git's
heuristics live in that module, the edit script and hunks here).
:func:`iter_hunks` then yields ``@@ -a,b +c,d @@``
hunks with ``context`` lines (git's default 3) and git's default function
name line, one at a time: a caller that shows the first 5,000 lines never
builds the rest.

Long work is cut by ``check``: a callable run every few thousand steps,
which raises (:class:`~packscope.core.errors.CancelledError`, or a budget's
error) to stop.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate

from packscope.core import native
from packscope.core.history.git_diff_heuristics import (
    KEEP_TO_CHANGED,
    SideIndents,
    line_indents,
    place_groups,
    rough_sqrt,
    xdiff_pre_pass,
)

# An edit script as runs: ("=", i, j, n) n equal lines at a[i:], b[j:];
# ("-", i, j, n) n lines of a deleted at a[i:]; ("+", i, j, n) n lines of b
# inserted before a[i] (at b[j:]).
Run = tuple[str, int, int, int]
Check = Callable[[], None]

NO_EOL = b"\0no-eol"  # a last line without a newline differs from the same text with one, as in git
CHUNK = 1 << 16  # bytes of text split into lines at a time (a check after each)
CHECK_EVERY = 4096  # inner steps between two calls of ``check``


def _no_check() -> None:
    return None


@dataclass(slots=True)
class Side:
    """One side's lines: ``ids[i]`` numbers line i by its content (equal
    lines, equal numbers); ``starts`` (when kept) holds each line's offset in
    ``data`` and where a line after the last would start, for hunks' text."""

    data: bytes
    ids: array[int]
    starts: array[int] | None
    no_eol: bool  # the last line has no newline

    def __len__(self) -> int:
        return len(self.ids)

    def line(self, i: int) -> bytes:
        """Line i's text without its newline (needs ``starts``)."""
        assert self.starts is not None
        return self.data[self.starts[i] : self.starts[i + 1] - 1]


def _intern(data: bytes, table: dict[bytes, int], keep_starts: bool, check: Check) -> Side:
    ids = array("i")
    starts = array("q") if keep_starts else None
    setdefault = table.setdefault
    n = len(data)
    pos = 0
    while pos < n:
        end = data.find(b"\n", pos + CHUNK)
        end = n if end < 0 else end + 1
        parts = data[pos:end].split(b"\n")
        last = parts.pop()  # b"" after a newline; else the text's unterminated last line
        if last:
            parts.append(last + NO_EOL)
        ids.extend([setdefault(p, len(table)) for p in parts])
        if starts is not None:
            starts.extend(accumulate((len(p) + 1 for p in parts[:-1]), initial=pos))
        del parts
        pos = end
        check()
    no_eol = bool(data) and not data.endswith(b"\n")
    if starts is not None:
        starts.append(n + 1 if no_eol else n)  # where a next line would start
    return Side(data, ids, starts, no_eol)


def intern_sides(old: bytes, new: bytes, *, keep_starts: bool = False, check: Check = _no_check) -> tuple[Side, Side]:
    """Both sides as line numbers (one table: equal lines of either side get
    one number).  The table goes when this returns."""
    table: dict[bytes, int] = {}
    a = _intern(old, table, keep_starts, check)
    b = _intern(new, table, keep_starts, check)
    return a, b


def same_head(a: Sequence[int], i: int, b: Sequence[int], j: int, limit: int) -> int:
    """How many items a[i:] and b[j:] have equal at their start (at most
    ``limit``): compared in blocks first, then one by one.  Lines as
    interned ids here, bytes of two texts in blame."""
    k = 0
    step = 4096
    while k + step <= limit and a[i + k : i + k + step] == b[j + k : j + k + step]:
        k += step
    step = 64  # then halving blocks: slices compare at C speed
    while k < limit:
        step = min(step, limit - k)
        if a[i + k : i + k + step] == b[j + k : j + k + step]:
            k += step
        elif step == 1:
            break
        else:
            step >>= 1
    return k


def same_tail(a: Sequence[int], i: int, b: Sequence[int], j: int, limit: int) -> int:
    """How many items a[:i] and b[:j] have equal at their end (at most
    ``limit``), as :func:`same_head` counts them."""
    k = 0
    step = 4096
    while k + step <= limit and a[i - k - step : i - k] == b[j - k - step : j - k]:
        k += step
    step = 64
    while k < limit:
        step = min(step, limit - k)
        if a[i - k - step : i - k] == b[j - k - step : j - k]:
            k += step
        elif step == 1:
            break
        else:
            step >>= 1
    return k


def _common_head(a: Sequence[int], b: Sequence[int]) -> int:
    return same_head(a, 0, b, 0, min(len(a), len(b)))


def _common_tail(a: Sequence[int], b: Sequence[int], head: int) -> int:
    return same_tail(a, len(a), b, len(b), min(len(a), len(b)) - head)


def diff_flags(
    a: Sequence[int],
    b: Sequence[int],
    check: Check = _no_check,
    a_side: Side | None = None,
    b_side: Side | None = None,
) -> tuple[bytearray, bytearray]:
    """(deleted, inserted): ``deleted[i]`` is 1 when a's line i is not in
    the longest common subsequence found, ``inserted[j]`` likewise for b;
    each has one spare 0 at the end.  Groups are placed as git places them
    (the indent heuristic needs the sides' text: ``a_side``/``b_side`` with
    their line starts kept; without, only the counts are git's)."""
    n, m = len(a), len(b)
    deleted = bytearray(n + 1)
    inserted = bytearray(m + 1)
    head = _common_head(a, b)
    tail = _common_tail(a, b, head)
    a_end, b_end = n - tail, m - tail
    # Lines with no partner on the other side are changed whatever the script.
    ra, ra_at = _partnered(a, head, a_end, b[head:b_end], deleted)
    check()
    rb, rb_at = _partnered(b, head, b_end, a[head:a_end], inserted)
    check()
    _mark(ra, ra_at, rb, rb_at, deleted, inserted, check)
    del ra, ra_at, rb, rb_at
    place_groups(a, deleted, inserted, check, line_indents(a_side))
    place_groups(b, inserted, deleted, check, line_indents(b_side))
    return deleted, inserted


def _partnered(
    a: Sequence[int], start: int, end: int, other: Sequence[int], changed: bytearray
) -> tuple[array[int], array[int]]:
    """a[start:end]'s lines that occur in ``other`` and their positions;
    the others are marked in ``changed``.  (C-speed passes: a set, a
    comprehension, compress.)"""
    from itertools import compress

    present = set(other)
    keep = bytes([x in present for x in a[start:end]])
    del present
    changed[start:end] = keep.translate(KEEP_TO_CHANGED)
    return array("i", compress(a[start:end], keep)), array("i", compress(range(start, end), keep))


def _mark(
    a: array[int],
    a_at: array[int],
    b: array[int],
    b_at: array[int],
    deleted: bytearray,
    inserted: bytearray,
    check: Check,
    minimal: bool = True,
) -> None:
    """Mark an edit script from ``a`` to ``b`` (positions mapped through
    ``a_at`` / ``b_at``), splitting at middle snakes: a minimal one, or
    (``minimal`` False) as git's default search does, which gives up on
    minimality in a box past a cost (:func:`_middle`)."""
    max_cost = max(rough_sqrt(len(a) + len(b) + 3), _MAX_COST_MIN)
    stack = [(0, len(a), 0, len(b), minimal)]
    while stack:
        a0, a1, b0, b1, need_min = stack.pop()
        k = same_head(a, a0, b, b0, min(a1 - a0, b1 - b0))
        a0, b0 = a0 + k, b0 + k
        k = same_tail(a, a1, b, b1, min(a1 - a0, b1 - b0))
        a1, b1 = a1 - k, b1 - k
        if a0 == a1 or b0 == b1:
            for x in range(a0, a1):
                deleted[a_at[x]] = 1
            for y in range(b0, b1):
                inserted[b_at[y]] = 1
            continue
        x, y, min_lo, min_hi = _middle(a, a0, a1, b, b0, b1, check, need_min, max_cost)
        stack.append((x, a1, y, b1, min_hi))
        stack.append((a0, x, b0, y, min_lo))


# git's default search (xdiff, without --minimal): past _HEUR_MIN_COST
# rounds a box is split early at a long enough snake that is far along, and
# at max(sqrt-ish of the lines, _MAX_COST_MIN) rounds at the furthest point
# either search reached; the half not searched to the end stays non-minimal.
_MAX_COST_MIN = 256
_HEUR_MIN_COST = 256
_SNAKE_CNT = 20
_K_HEUR = 4


def _middle(
    a: array[int],
    a0: int,
    a1: int,
    b: array[int],
    b0: int,
    b1: int,
    check: Check,
    need_min: bool = True,
    max_cost: int = 0,
) -> tuple[int, int, bool, bool]:
    """A point (x, y) on a minimal path from (a0, b0) to (a1, b1), strictly
    inside it (both ends differ: the caller stripped equal heads and tails),
    and whether each half must be searched minimally: yes and yes, unless
    ``need_min`` is False and git's default search would give up here
    (:func:`_give_up`).

    Diagonal k holds the points with x - y = k (relative to a0, b0).  The
    forward search keeps, per diagonal, the furthest x that a path of at
    most d edits reaches from the start (-1: none yet); the backward one the
    same from the end, on the mirrored sequences (x' = n - x, diagonal
    delta - k).  Only points inside the grid are kept.  Where the two meet
    on a diagonal the point is on a minimal path (the edits still needed
    never grow along a diagonal), and they meet by round (n + m + 1) // 2."""
    n, m = a1 - a0, b1 - b0
    delta = n - m
    odd = delta & 1
    max_d = (n + m + 1) // 2
    off = m + 1  # diagonals -m..n, one spare each side
    vf = [-1] * (n + m + 3)
    vb = [-1] * (n + m + 3)
    vf[off] = 0  # both ends differ: no snake at d = 0
    vb[off] = 0
    steps = 0
    for d in range(1, max_d + 1):
        lo = -d if d <= m else -m + ((m - d) & 1)
        hi = d if d <= n else n - ((n - d) & 1)
        steps += d
        if steps > CHECK_EVERY:
            steps = 0
            check()
        snake = False  # a snake longer than _SNAKE_CNT this round (git's heuristic looks then)
        for k in range(hi, lo - 1, -2):  # high diagonals first, as xdiff does: ties go its way
            at = off + k
            x = vf[at]
            u = vf[at + 1]  # down from diagonal k + 1: an insertion
            if u > x and u - k <= m:
                x = u
            u = vf[at - 1]  # right from diagonal k - 1: a deletion
            if u >= 0 and u >= x and u < n:
                x = u + 1
            if x < 0:
                continue
            y = x - k
            if x < n and y < m and a[a0 + x] == b[b0 + y]:  # a snake: its length by slices
                run = same_head(a, a0 + x, b, b0 + y, min(n - x, m - y))
                x += run
                y += run
                snake = snake or run > _SNAKE_CNT
            vf[at] = x
            if odd:
                xb = vb[off + delta - k]
                if xb >= 0 and x >= n - xb:
                    return a0 + x, b0 + y, True, True
        # backward: the mirrored sequences, on the same diagonals' range
        for k in range(lo, hi + 1, 2):
            at = off + k
            x = vb[at]
            u = vb[at + 1]
            if u > x and u - k <= m:
                x = u
            u = vb[at - 1]
            if u >= 0 and u >= x and u < n:
                x = u + 1
            if x < 0:
                continue
            y = x - k
            if x < n and y < m and a[a1 - 1 - x] == b[b1 - 1 - y]:
                run = same_tail(a, a1 - x, b, b1 - y, min(n - x, m - y))
                x += run
                y += run
                snake = snake or run > _SNAKE_CNT
            vb[at] = x
            if not odd:
                kf = delta - k
                xf = vf[off + kf]
                if xf >= 0 and xf >= n - x:
                    return a1 - x, b1 - y, True, True  # where the backward path's snake starts
        if not need_min and ((snake and d > _HEUR_MIN_COST) or d >= max_cost):
            got = _give_up(a, a0, a1, b, b0, b1, vf, vb, off, lo, hi, d, snake and d > _HEUR_MIN_COST, d >= max_cost)
            if got is not None:
                return got
    raise AssertionError("unreachable: the two searches meet by round (n + m + 1) // 2")


def _give_up(
    a: array[int],
    a0: int,
    a1: int,
    b: array[int],
    b0: int,
    b1: int,
    vf: list[int],
    vb: list[int],
    off: int,
    lo: int,
    hi: int,
    d: int,
    sample: bool,
    enough: bool,
) -> tuple[int, int, bool, bool] | None:
    """Where git's default search splits a box it stops searching, after
    round ``d`` (or None: search on).  With ``sample``: the furthest-along
    point (x + y less its distance from the box's middle diagonal, above
    4·d) just after a forward snake of _SNAKE_CNT equal lines, else just
    before such a backward one.  With ``enough``: the furthest point either
    search reached.  The half on the searched side is then done minimally."""
    n, m = a1 - a0, b1 - b0
    if sample:
        best = 0
        split = (0, 0)
        for k in range(hi, lo - 1, -2):
            x = vf[off + k]
            y = x - k
            v = x + y - abs(k)
            if (
                v > _K_HEUR * d
                and v > best
                and _SNAKE_CNT <= x < n
                and _SNAKE_CNT <= y < m
                and a[a0 + x - _SNAKE_CNT : a0 + x] == b[b0 + y - _SNAKE_CNT : b0 + y]
            ):
                best, split = v, (a0 + x, b0 + y)
        if best > 0:
            return split[0], split[1], True, False
        for k in range(lo, hi + 1, 2):  # (the backward diagonals in xdiff's order)
            x = vb[off + k]
            y = x - k
            v = x + y - abs(k)
            if (
                v > _K_HEUR * d
                and v > best
                and _SNAKE_CNT <= x < n
                and _SNAKE_CNT <= y < m
                and a[a1 - x : a1 - x + _SNAKE_CNT] == b[b1 - y : b1 - y + _SNAKE_CNT]
            ):
                best, split = v, (a1 - x, b1 - y)
        if best > 0:
            return split[0], split[1], False, True
    if not enough:
        return None
    fbest, fx = -1, 0
    for k in range(hi, lo - 1, -2):
        x = min(vf[off + k], n)
        if x < 0:
            continue
        y = x - k
        if y > m:
            x, y = m + k, m
        if x + y > fbest:
            fbest, fx = x + y, x
    bbest, bx = -1, 0
    for k in range(lo, hi + 1, 2):
        x = min(vb[off + k], n)
        if x < 0:
            continue
        y = x - k
        if y > m:
            x, y = m + k, m
        if x + y > bbest:
            bbest, bx = x + y, x
    if bbest < fbest:
        return a0 + fx, b0 + fbest - fx, True, False
    return a1 - bx, b1 - (bbest - bx), False, True


def git_diff_flags(
    a: Sequence[int],
    b: Sequence[int],
    check: Check = _no_check,
    indents: Mapping[int, int] | Sequence[int] | None = None,
) -> tuple[bytearray, bytearray]:
    """:func:`diff_flags` as git's default diff chooses: xdiff's pre-pass
    (:func:`~packscope.core.history.git_diff_heuristics.xdiff_pre_pass`)
    instead of leaving out only unmatched lines, and with ``indents`` (each
    interned line's indent) its indent heuristic.  Not always minimal, as
    git's is not.  (Compiled: the same steps in C, git's early splits
    included, for sides held as ``array('i')``.)"""
    compiled = native.backend
    if compiled is not None:
        got = compiled.git_diff_flags(a, b, indents, check)
        if got is not None:
            return got
    n, m = len(a), len(b)
    deleted = bytearray(n + 1)
    inserted = bytearray(m + 1)
    head = _common_head(a, b)
    tail = _common_tail(a, b, head)
    a_end, b_end = n - tail, m - tail
    if head < a_end and head < b_end:
        ra, ra_at = xdiff_pre_pass(a, head, a_end, Counter(b), deleted, check)
        check()
        rb, rb_at = xdiff_pre_pass(b, head, b_end, Counter(a), inserted, check)
        check()
        _mark(ra, ra_at, rb, rb_at, deleted, inserted, check, minimal=False)
        del ra, ra_at, rb, rb_at
    else:
        deleted[head:a_end] = b"\1" * (a_end - head)
        inserted[head:b_end] = b"\1" * (b_end - head)
    # the heuristic asks by line number; ``indents`` is kept per interned line
    by_a = None if indents is None else lambda i: indents[a[i]]
    by_b = None if indents is None else lambda j: indents[b[j]]
    place_groups(a, deleted, inserted, check, by_a)
    place_groups(b, inserted, deleted, check, by_b)
    return deleted, inserted


def iter_runs(deleted: bytearray, inserted: bytearray) -> Iterator[Run]:
    """The edit script the flags describe, as runs in order (a block's
    deletions before its insertions)."""
    n, m = len(deleted) - 1, len(inserted) - 1
    i = j = 0
    while i < n or j < m:
        if deleted[i]:  # deleted[n] is 0: the scan stops there
            k = deleted.find(0, i) - i
            yield ("-", i, j, k)
            i += k
        elif inserted[j]:
            k = inserted.find(0, j) - j
            yield ("+", i, j, k)
            j += k
        else:
            ei, ej = deleted.find(1, i), inserted.find(1, j)
            k = min((n if ei < 0 else ei) - i, (m if ej < 0 else ej) - j)
            if k <= 0:
                raise AssertionError("unchanged lines left on one side only")
            yield ("=", i, j, k)
            i += k
            j += k


def edit_script(a: Sequence[bytes], b: Sequence[bytes]) -> list[Run]:
    """A minimal edit script from ``a`` to ``b`` (sequences of lines), as
    runs in order."""
    table: dict[bytes, int] = {}
    ia = array("i", [table.setdefault(x, len(table)) for x in a])
    ib = array("i", [table.setdefault(x, len(table)) for x in b])
    deleted, inserted = diff_flags(ia, ib)
    return list(iter_runs(deleted, inserted))


def count_changes(runs: list[Run]) -> tuple[int, int]:
    """(lines added, lines deleted), as ``--numstat`` counts them."""
    added = sum(k for op, _, _, k in runs if op == "+")
    deleted = sum(k for op, _, _, k in runs if op == "-")
    return added, deleted


def count_lines(old: bytes, new: bytes, check: Check = _no_check) -> tuple[int, int]:
    """``--numstat``'s (added, deleted) between two texts."""
    a, b = intern_sides(old, new, check=check)
    deleted, inserted = git_diff_flags(a.ids, b.ids, check)
    return inserted.count(1), deleted.count(1)


@dataclass(frozen=True, slots=True)
class Hunk:
    header: bytes  # "@@ -a,b +c,d @@ funcname"
    lines: tuple[bytes, ...]  # each with its " ", "-" or "+" and no newline (NO_EOL kept on a last line)


def iter_hunks(old: bytes, new: bytes, context: int = 3, check: Check = _no_check) -> Iterator[Hunk]:
    """The hunks ``git diff`` prints for ``old`` → ``new``, one at a time.
    A line that ends its text without a newline ends with :data:`NO_EOL`
    (the caller prints git's "\\ No newline at end of file" after it)."""
    a, b = intern_sides(old, new, keep_starts=True, check=check)
    deleted, inserted = git_diff_flags(a.ids, b.ids, check, SideIndents(a, b))
    return _hunks(a, b, deleted, inserted, context)


def _text(side: Side, i: int) -> bytes:
    line = side.line(i)
    return line + NO_EOL if side.no_eol and i == len(side) - 1 else line


def _hunks(a: Side, b: Side, deleted: bytearray, inserted: bytearray, context: int) -> Iterator[Hunk]:
    n, m = len(a), len(b)
    # Blocks of changes: (a_start, a_end, b_start, b_end), in order; a hunk
    # holds the blocks whose gaps of equal lines are at most 2 * context.
    fn = _FunctionNames(a)
    hunk: list[tuple[int, int, int, int]] = []
    for block in _blocks(deleted, inserted, n, m):
        if hunk and block[0] - hunk[-1][1] > 2 * context:
            yield _hunk(a, b, hunk, context, fn)
            hunk = []
        hunk.append(block)
    if hunk:
        yield _hunk(a, b, hunk, context, fn)


def _blocks(deleted: bytearray, inserted: bytearray, n: int, m: int) -> Iterator[tuple[int, int, int, int]]:
    start: tuple[int, int] | None = None
    for op, ri, rj, _k in iter_runs(deleted, inserted):
        if op == "=":
            if start is not None:
                yield (start[0], ri, start[1], rj)
                start = None
        elif start is None:
            start = (ri, rj)
    if start is not None:
        yield (start[0], n, start[1], m)


def _hunk(a: Side, b: Side, blocks: list[tuple[int, int, int, int]], context: int, fn: _FunctionNames) -> Hunk:
    a_start = max(0, blocks[0][0] - context)
    b_start = blocks[0][2] - (blocks[0][0] - a_start)
    a_end = min(len(a), blocks[-1][1] + context)
    b_end = blocks[-1][3] + (a_end - blocks[-1][1])
    lines: list[bytes] = []
    i = a_start
    for a0, a1, b0, b1 in blocks:
        lines += [b" " + _text(a, x) for x in range(i, a0)]
        lines += [b"-" + _text(a, x) for x in range(a0, a1)]
        lines += [b"+" + _text(b, y) for y in range(b0, b1)]
        i = a1
    lines += [b" " + _text(a, x) for x in range(i, a_end)]
    header = b"@@ -%s +%s @@" % (_range(a_start, a_end - a_start), _range(b_start, b_end - b_start))
    name = fn.before(a_start)
    if name:
        header += b" " + name
    return Hunk(header, tuple(lines))


def unified_hunks(a: Sequence[bytes], b: Sequence[bytes], context: int = 3) -> list[Hunk]:
    """The hunks for two lists of lines (without newlines; a line ending
    with :data:`NO_EOL` had none)."""

    def text(lines: Sequence[bytes]) -> bytes:
        if lines and lines[-1].endswith(NO_EOL):
            return b"\n".join([*lines[:-1], lines[-1][: -len(NO_EOL)]])
        return b"".join(x + b"\n" for x in lines)

    return list(iter_hunks(text(a), text(b), context))


def _range(start: int, length: int) -> bytes:
    # git's form: "start,len", "start" alone when len is 1, and the line
    # before an empty range ("0,0" at the very top).
    if length == 0:
        return b"%d,0" % start
    if length == 1:
        return b"%d" % (start + 1)
    return b"%d,%d" % (start + 1, length)


class _FunctionNames:
    """git's default funcname: the nearest line above a hunk starting with a
    letter, '_' or '$', cut at 80 bytes without trailing blanks.  Hunks come
    in order, so one forward scan serves them all."""

    def __init__(self, a: Side) -> None:
        self.a = a
        self.scanned = 0
        self.found = -1

    def before(self, start: int) -> bytes:
        a = self.a
        for x in range(self.scanned, start):
            c = a.data[a.starts[x] : a.starts[x] + 1] if a.starts is not None else b""
            if c.isalpha() or c in (b"_", b"$"):
                self.found = x
        self.scanned = max(self.scanned, start)
        if self.found < 0:
            return b""
        return a.line(self.found)[:80].rstrip()
