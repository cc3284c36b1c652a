"""git's diff heuristics around the edit script: which lines xdiff leaves
out before its search, and where each group of changes is placed after it.

* xdiff's pre-pass (:func:`xdiff_pre_pass`): lines with no copy anywhere in
  the other side, and lines with very many copies there that sit among such
  lines, are changed in every script git would make; they are marked and
  left out of the search (:func:`packscope.core.history.line_diff.git_diff_flags`).
* the placement (:func:`place_groups`): each group of changes is slid along
  runs of equal lines to where git puts it — facing a change on the other
  side when it can, else where git's indent heuristic
  (``diff.indentHeuristic``, on by default) scores the two splits it makes
  best: blank lines and indentation around each split, weighed as git weighs
  them (:func:`_split_score`).

The edit script itself (interning, Myers' middle snakes, git's early splits,
hunks) is :mod:`packscope.core.history.line_diff`, which calls these.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from packscope.core.history.line_diff import Check, Side

# --- where a group of changes goes: sliding and the indent heuristic ---

MAX_INDENT = 200
MAX_BLANKS = 20
MAX_SLIDING = 100  # the heuristic looks at most this many positions up
_CHECK_GROUPS = 4096  # groups placed between two calls of ``check``


def line_indents(side: Side | None) -> Callable[[int], int] | None:
    """Line i's indent as git measures it (a tab to the next multiple of 8,
    at most 200; -1 for a line of blanks), remembered per line."""
    if side is None or side.starts is None:
        return None
    memo: dict[int, int] = {}

    def indent(i: int) -> int:
        got = memo.get(i)
        if got is None:
            got = memo[i] = line_indent(side.line(i))
        return got

    return indent


def line_indent(line: bytes) -> int:
    """A line's indentation as the heuristic counts it (a tab to the next
    multiple of 8, capped at 200); -1 for a line of white space only."""
    n = 0
    for c in line:
        if c == 0x20:
            n += 1
        elif c == 0x09:
            n += 8 - n % 8
        elif c not in (0x0A, 0x0B, 0x0C, 0x0D):
            return n
        if n >= MAX_INDENT:
            return MAX_INDENT
    return -1


class SideIndents(dict[int, int]):
    """Each interned line's indent (:func:`line_indent`) for two sides
    interned together with their line starts kept, read from their text
    when first asked for (the heuristic asks only around groups that
    slide): ``indents`` for
    :func:`packscope.core.history.line_diff.git_diff_flags`."""

    def __init__(self, a: Side, b: Side) -> None:
        super().__init__()
        self.a, self.b = a, b
        self.where: tuple[dict[int, int], dict[int, int]] | None = None

    def __missing__(self, key: int) -> int:
        if self.where is None:  # a line of each number, on either side (C-speed dicts)
            a, b = self.a, self.b
            self.where = (dict(zip(a.ids, range(len(a)), strict=True)), dict(zip(b.ids, range(len(b)), strict=True)))
        i = self.where[0].get(key)
        got = line_indent(self.a.line(i) if i is not None else self.b.line(self.where[1][key]))
        self[key] = got
        return got


def _split_score(indent: Callable[[int], int], nrec: int, split: int) -> tuple[int, int]:
    """(effective indent, penalty) of splitting before line ``split``."""
    end_of_file = split >= nrec
    here = -1 if end_of_file else indent(split)
    pre_blank, pre_indent = 0, -1
    for i in range(split - 1, -1, -1):
        pre_indent = indent(i)
        if pre_indent != -1:
            break
        pre_blank += 1
        if pre_blank == MAX_BLANKS:
            pre_indent = 0
            break
    post_blank, post_indent = 0, -1
    for i in range(split + 1, nrec):
        post_indent = indent(i)
        if post_indent != -1:
            break
        post_blank += 1
        if post_blank == MAX_BLANKS:
            post_indent = 0
            break
    penalty = 0
    if pre_indent == -1 and pre_blank == 0:
        penalty += 1  # at the start of the file
    if end_of_file:
        penalty += 21
    blanks_after = 1 + post_blank if here == -1 else 0
    blanks = pre_blank + blanks_after
    penalty += -30 * blanks + 6 * blanks_after
    level = here if here != -1 else post_indent
    if level != -1 and pre_indent != -1:
        if level > pre_indent:  # indented more than the line before
            penalty += 10 if blanks else -4
        elif level < pre_indent:
            if post_indent != -1 and post_indent > level:  # a block starts here
                penalty += 17 if blanks else 24
            else:  # a block ended
                penalty += 17 if blanks else 23
    return level, penalty


def _best_shift(indent: Callable[[int], int], nrec: int, earliest_end: int, end: int, size: int) -> int:
    """Where the group [end - size, end) reads best, between ``earliest_end``
    and ``end``: the lowest of the two splits' summed scores (indent
    compared first, weighing 60), the lowest position on a tie."""
    _best_shift = -1
    best = (0, 0)
    for shift in range(max(earliest_end, end - size - 1, end - MAX_SLIDING), end + 1):
        i1, p1 = _split_score(indent, nrec, shift)
        i2, p2 = _split_score(indent, nrec, shift - size)
        score = (i1 + i2, p1 + p2)
        if _best_shift == -1 or 60 * ((score[0] > best[0]) - (score[0] < best[0])) + score[1] - best[1] <= 0:
            best, _best_shift = score, shift
    return _best_shift


class _Group:
    """A run of changed lines [start, end) of one side, possibly empty,
    between two unchanged lines; the k-th group of one side faces the k-th
    of the other (the unchanged lines pair up in order)."""

    __slots__ = ("changed", "end", "lines", "n", "start")

    def __init__(self, lines: Sequence[int] | None, n: int, changed: bytearray) -> None:
        self.lines, self.n, self.changed = lines, n, changed
        self.start = 0
        self.end = 0
        while changed[self.end]:
            self.end += 1

    def next(self) -> bool:
        if self.end == self.n:
            return False
        self.start = self.end = self.end + 1
        while self.changed[self.end]:
            self.end += 1
        return True

    def previous(self) -> bool:
        if self.start == 0:
            return False
        self.end = self.start = self.start - 1
        while self.start > 0 and self.changed[self.start - 1]:
            self.start -= 1
        return True

    def slide_down(self) -> bool:
        lines, changed = self.lines, self.changed
        assert lines is not None
        if self.end < self.n and lines[self.start] == lines[self.end]:
            changed[self.start], changed[self.end] = 0, 1
            self.start += 1
            self.end += 1
            while changed[self.end]:  # joined the next group
                self.end += 1
            return True
        return False

    def slide_up(self) -> bool:
        lines, changed = self.lines, self.changed
        assert lines is not None
        if self.start > 0 and lines[self.start - 1] == lines[self.end - 1]:
            self.start -= 1
            self.end -= 1
            changed[self.start], changed[self.end] = 1, 0
            while self.start > 0 and changed[self.start - 1]:  # joined the previous group
                self.start -= 1
            return True
        return False


def place_groups(
    lines: Sequence[int],
    changed: bytearray,
    other_changed: bytearray,
    check: Check,
    indent: Callable[[int], int] | None = None,
) -> None:
    """Slide each group of changed lines along runs of equal lines to where
    git puts it: facing a change on the other side when it can (a
    replacement reads as one), else where the indent heuristic puts it
    (without ``indent``: as far down as it goes)."""
    g = _Group(lines, len(lines), changed)
    go = _Group(None, len(other_changed) - 1, other_changed)
    groups = 0
    while True:
        if g.end != g.start:
            groups += 1
            if groups % _CHECK_GROUPS == 0:
                check()
            while True:
                size = g.end - g.start
                end_facing_change = -1
                while g.slide_up():
                    go.previous()
                earliest_end = g.end
                if go.end > go.start:
                    end_facing_change = g.end
                while g.slide_down():
                    go.next()
                    if go.end > go.start:
                        end_facing_change = g.end
                if size == g.end - g.start:
                    break
            if g.end != earliest_end and end_facing_change != -1:
                while go.end == go.start:
                    g.slide_up()
                    go.previous()
            elif g.end != earliest_end and indent is not None:
                best = _best_shift(indent, g.n, earliest_end, g.end, g.end - g.start)
                while g.end > best:
                    g.slide_up()
                    go.previous()
        # Jump over lines unchanged on both sides: each is an empty group on
        # each side, and nothing slides there.
        ea, eb = changed.find(1, g.end + 1), other_changed.find(1, go.end + 1)
        k = min((g.n if ea < 0 else ea) - g.end - 1, (go.n if eb < 0 else eb) - go.end - 1)
        if k > 0:
            g.start = g.end = g.end + k
            go.start = go.end = go.end + k
        if not g.next():
            break
        go.next()


# --- xdiff's pre-pass: lines left out of the search ---


def rough_sqrt(n: int) -> int:
    # xdiff's rough square root (a power of two), used for its limits
    r = 1
    while n > 0:
        r <<= 1
        n >>= 2
    return r


KEEP_TO_CHANGED = bytes([1, 0]) + bytes(254)  # keep-mask -> changed flags


_SCAN_WINDOW = 100  # lines looked at each way around a much-repeated line
_CHECK_LOOKS = 4096 // (2 * _SCAN_WINDOW)  # much-repeated lines looked at between two calls of ``check``
_KEEP_RUN = 4


def xdiff_pre_pass(
    a: Sequence[int], start: int, end: int, other: Counter[int], changed: bytearray, check: Check
) -> tuple[array[int], array[int]]:
    """xdiff's pre-pass over a[start:end]: lines with no copy anywhere in the
    other side, and lines with very many copies there (at least about
    sqrt(len(a))) that sit among such lines, are changed whatever the
    script; they are marked and left out of the search.  The lines kept and
    their positions."""
    from itertools import compress, repeat
    from operator import add

    limit = min(rough_sqrt(len(a)), 1024)
    middle = a[start:end]
    copies = list(map(other.get, middle, repeat(0)))  # C-speed passes from here on
    # 0: no copy, 1: keep, 2: many copies
    kind = bytearray(map(add, map(bool, copies), map(limit.__le__, copies)))
    keep = bytearray(kind.translate(_KEEP))
    last = len(kind) - 1
    # A much-copied line right beside a kept one stays: only those between
    # two lines that are dropped or much-copied need the closer look.
    for n, m in enumerate(_MANY_AMONG_DROPPED.finditer(kind)):
        k = m.start()
        if _among_dropped(kind, k, 0, last):
            keep[k] = 0
        if n % _CHECK_LOOKS == _CHECK_LOOKS - 1:  # each look is up to 2 * _SCAN_WINDOW steps
            check()
    changed[start:end] = keep.translate(KEEP_TO_CHANGED)
    return array("i", compress(middle, keep)), array("i", compress(range(start, end), keep))


_KEEP = bytes([0, 1, 1]) + bytes(253)
_MANY_AMONG_DROPPED = re.compile(rb"(?<=[\x00\x02])\x02(?=[\x00\x02])")


def _among_dropped(kind: bytearray, i: int, s: int, e: int) -> bool:
    """Whether a much-repeated line at ``i`` lies in a run made mostly of
    lines with no copy (then xdiff leaves it out)."""
    s = max(s, i - _SCAN_WINDOW)
    e = min(e, i + _SCAN_WINDOW)
    none_before, many_before = 0, 1
    r = i - 1
    while r >= s:
        if kind[r] == 0:
            none_before += 1
        elif kind[r] == 2:
            many_before += 1
        else:
            break
        r -= 1
    if none_before == 0:
        return False
    none_after, many_after = 0, 1
    r = i + 1
    while r <= e:
        if kind[r] == 0:
            none_after += 1
        elif kind[r] == 2:
            many_after += 1
        else:
            break
        r += 1
    if none_after == 0:
        return False
    none = none_before + none_after
    many = many_before + many_after
    return many * _KEEP_RUN < many + none
